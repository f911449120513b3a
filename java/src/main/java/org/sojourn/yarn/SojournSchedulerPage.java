package org.sojourn.yarn;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.inject.Inject;
import java.util.Locale;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.webapp.MetricsOverviewTable;
import org.apache.hadoop.yarn.server.resourcemanager.webapp.RmView;
import org.apache.hadoop.yarn.webapp.SubView;
import org.apache.hadoop.yarn.webapp.hamlet2.Hamlet;
import org.apache.hadoop.yarn.webapp.view.HtmlBlock;

/**
 * The RM web UI's scheduler page for Sojourn ({@code /cluster/scheduler}).
 * Enable with {@code yarn.http.rmwebapp.scheduler.page.class =
 * org.sojourn.yarn.SojournSchedulerPage}; without it the RM falls back to a
 * page that assumes FifoScheduler.
 *
 * <p>As CapacityScheduler's page: the queue tree, one row per queue with a bar
 * (used in orange over the policy's share, capacity's guarantee or fair's fair
 * share, in blue, over the maximum in grey; all as percent of the cluster)
 * and its applications; then the placement rules, the counters and the
 * policy's {@code describe} as JSON. The same data is served as JSON at
 * {@code /ws/v1/cluster/scheduler} ({@link SojournWebServices}).
 */
public class SojournSchedulerPage extends RmView {
  @Override
  protected void preHead(Page.HTML<__> html) {
    super.preHead(html);
    // The RM's controller titles unknown schedulers' pages after FifoScheduler.
    set(TITLE, "Sojourn Scheduler");
  }

  @Override
  protected Class<? extends SubView> content() {
    return SojournBlock.class;
  }

  /** Cluster metrics, the queue tree, then the policy's state. */
  public static class SojournBlock extends HtmlBlock {
    private static final int BAR_PX = 400;
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
      JsonNode info = SchedulerView.build(sj).path("scheduler").path("schedulerInfo");
      html.h3().__("Sojourn scheduler: policy " + sj.getPolicy()).__();
      html.p().__("Placement: " + info.path("placement").asText()).__();
      html.p().__("Bars, as percent of the cluster: used (orange), "
          + ("capacity".equals(sj.getPolicy()) ? "guaranteed capacity" : "fair".equals(sj.getPolicy())
              ? "fair share" : "share") + " (blue outline), maximum (grey).").__();
      Hamlet.TBODY<Hamlet.TABLE<Hamlet>> rows = html.table("#sojourn-queues")
          .thead().tr().th("Queue").th("Used / share / max").th("Used").th("Share").th("Max").th("Apps")
          .th("Resources used").__().__()
          .tbody();
      row(rows, info.path("rootQueue"), 0);
      rows.__().__();
      html.p().__("Allocations " + sj.getAllocations() + ", rejections " + sj.getRejections()
          + ", preemption kills " + sj.getPreemptionKills()).__();
      html.h3().__("Policy state (describe)").__();
      html.p().__("core.state is the policy's describe; core.cluster the core's mirror of the cluster; "
          + "the rest the shim's counters.").__();
      String pretty;
      try {
        pretty = Protocol.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(info.path("describe"));
      } catch (java.io.IOException e) {
        pretty = e.toString();
      }
      html.pre("#sojourn-describe").__(pretty).__();
    }

    private static void row(Hamlet.TBODY<Hamlet.TABLE<Hamlet>> rows, JsonNode q, int depth) {
      if (!q.isObject()) {
        return;
      }
      double used = clamp(q.path("absoluteUsedCapacity").asDouble(0));
      boolean hasShare = q.has("absoluteCapacity");
      double share = clamp(q.path("absoluteCapacity").asDouble(0));
      double max = clamp(q.path("absoluteMaxCapacity").asDouble(100));
      String name = q.path("queuePath").asText();
      rows.tr().$class("sojourn-queue").$title(name)
          .td().$style("padding-left:" + (4 + 16 * depth) + "px").__(q.path("queueName").asText()).__()
          .td().div().$class("sojourn-bar").$style("position:relative;width:" + BAR_PX
              + "px;height:14px;background:#eee;border:1px solid #ccc")
            .div().$style(bar(0, max, "#c8c8c8", null)).__()
            .div().$style(bar(0, hasShare ? share : 0, null, "#4a7fd4")).__()
            .div().$class("sojourn-used").$style(bar(0, used, "rgba(255,153,0,0.85)", null)).__()
          .__().__()
          .td(pct(used)).td(hasShare ? pct(share) : "-").td(pct(max))
          .td(String.valueOf(q.path("numApplications").asInt()))
          .td("<memory:" + q.path("resourcesUsed").path("memory").asLong() + ", vCores:"
              + q.path("resourcesUsed").path("vCores").asLong() + ">")
          .__();
      for (JsonNode c : q.path("queues").path("queue")) {
        row(rows, c, depth + 1);
      }
    }

    private static String bar(double from, double to, String fill, String outline) {
      StringBuilder b = new StringBuilder("position:absolute;top:0;height:100%;box-sizing:border-box;");
      b.append(String.format(Locale.ROOT, "left:%.2f%%;width:%.2f%%;", from, Math.max(0, to - from)));
      if (fill != null) {
        b.append("background:").append(fill).append(';');
      }
      if (outline != null) {
        b.append("border:2px solid ").append(outline).append(';');
      }
      return b.toString();
    }

    private static double clamp(double v) {
      return Double.isFinite(v) ? Math.max(0, Math.min(100, v)) : 0;
    }

    private static String pct(double v) {
      return String.format(Locale.ROOT, "%.1f%%", v);
    }
  }
}
