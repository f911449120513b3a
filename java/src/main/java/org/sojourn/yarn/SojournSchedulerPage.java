package org.sojourn.yarn;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.inject.Inject;
import java.io.IOException;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.webapp.MetricsOverviewTable;
import org.apache.hadoop.yarn.server.resourcemanager.webapp.RmView;
import org.apache.hadoop.yarn.webapp.SubView;
import org.apache.hadoop.yarn.webapp.view.HtmlBlock;

/**
 * The RM web UI's scheduler page for Sojourn ({@code /cluster/scheduler}).
 * Enable with {@code yarn.http.rmwebapp.scheduler.page.class =
 * org.sojourn.yarn.SojournSchedulerPage}; without it the RM falls back to a
 * page that assumes FifoScheduler.
 */
public class SojournSchedulerPage extends RmView {
  @Override
  protected Class<? extends SubView> content() {
    return SojournBlock.class;
  }

  /** Cluster metrics, then the policy, its queues and the core's state. */
  public static class SojournBlock extends HtmlBlock {
    private final ResourceManager rm;

    @Inject
    public SojournBlock(ViewContext ctx, ResourceManager rm) {
      super(ctx);
      this.rm = rm;
    }

    @Override
    protected void render(Block html) {
      html.__(MetricsOverviewTable.class);
      ResourceScheduler s = rm.getResourceScheduler();
      if (!(s instanceof SojournScheduler)) {
        html.p().__("The scheduler is " + s.getClass().getName() + ", not Sojourn.").__();
        return;
      }
      SojournScheduler sj = (SojournScheduler) s;
      String pretty;
      try {
        JsonNode state = Protocol.JSON.readTree(sj.getState());
        pretty = Protocol.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(state);
      } catch (IOException e) {
        pretty = sj.getState();
      }
      html.h3().__("Sojourn scheduler: policy " + sj.getPolicy()).__();
      html.p().__("Leaf queues: " + String.join(", ", sj.getLeafQueues())).__();
      html.p().__("Allocations " + sj.getAllocations() + ", rejections " + sj.getRejections()
          + ", preemption kills " + sj.getPreemptionKills()).__();
      html.pre().__(pretty).__();
    }
  }
}
