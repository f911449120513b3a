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
 * and its applications; then the placement rules, the counters, a panel of
 * the policy's own state (its {@code describe} as tables: hfsp's virtual
 * cluster and job order, kairos's tasks per node with their attained service
 * and whether they are suspended, and so on for every policy), and the whole
 * {@code describe} as JSON. The same data is served as JSON at
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
      policyPanel(html, sj.getPolicy(), info.path("describe").path("core").path("state"));
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

    /** Rows shown per table of the policy panel; the JSON below has them all. */
    static final int PANEL_ROWS = 200;

    /**
     * The policy's describe as an operator reads it: its scalar settings and
     * counters in one table, then one table per list of records (hfsp's
     * {@code phases} in the real order, kairos's {@code nodes}...), columns
     * named by the records' keys. Nested trees (capacity's and fair's queues)
     * are left to the queue table above.
     */
    static void policyPanel(Block html, String policy, JsonNode state) {
      if (!state.isObject()) {
        return;
      }
      html.h3().__("Policy: " + policy).__();
      Hamlet.TBODY<Hamlet.TABLE<Hamlet>> kv = html.table("#sojourn-policy").tbody();
      java.util.Iterator<java.util.Map.Entry<String, JsonNode>> it = state.fields();
      java.util.List<java.util.Map.Entry<String, JsonNode>> lists = new java.util.ArrayList<>();
      while (it.hasNext()) {
        java.util.Map.Entry<String, JsonNode> e = it.next();
        JsonNode v = e.getValue();
        if (v.isArray() && v.size() > 0 && v.get(0).isObject()) {
          lists.add(e);
        } else if (v.isValueNode() || v.isArray() || (v.isObject() && flat(v))) {
          kv.tr().th(e.getKey()).td(cell(v)).__();
        }
      }
      kv.__().__();
      for (java.util.Map.Entry<String, JsonNode> e : lists) {
        JsonNode rows = e.getValue();
        java.util.LinkedHashSet<String> cols = new java.util.LinkedHashSet<>();
        for (int i = 0; i < Math.min(rows.size(), PANEL_ROWS); i++) {
          rows.get(i).fieldNames().forEachRemaining(cols::add);
        }
        html.h4().__(e.getKey() + " (" + rows.size() + (rows.size() > PANEL_ROWS ? ", the first "
            + PANEL_ROWS + " shown" : "") + ")").__();
        Hamlet.TR<Hamlet.THEAD<Hamlet.TABLE<Hamlet>>> head =
            html.table("#sojourn-policy-" + e.getKey()).$class("sojourn-policy-list").thead().tr();
        for (String c : cols) {
          head.th(c);
        }
        Hamlet.TBODY<Hamlet.TABLE<Hamlet>> body = head.__().__().tbody();
        for (int i = 0; i < Math.min(rows.size(), PANEL_ROWS); i++) {
          Hamlet.TR<Hamlet.TBODY<Hamlet.TABLE<Hamlet>>> tr = body.tr();
          for (String c : cols) {
            tr.td(cell(rows.get(i).path(c)));
          }
          tr.__();
        }
        body.__().__();
      }
    }

    /** An object of scalars only ({@code {"map": 4, "reduce": 2}}). */
    private static boolean flat(JsonNode o) {
      for (JsonNode v : o) {
        if (!v.isValueNode()) {
          return false;
        }
      }
      return true;
    }

    /** A value as text: scalars as they are, records as {@code k=v} lists, lists joined. */
    static String cell(JsonNode v) {
      if (v.isMissingNode() || v.isNull()) {
        return "";
      }
      if (v.isValueNode()) {
        return v.asText();
      }
      StringBuilder b = new StringBuilder();
      if (v.isObject()) {
        v.fields().forEachRemaining(f -> b.append(b.length() > 0 ? " " : "").append(f.getKey()).append('=')
            .append(cell(f.getValue())));
        return b.toString();
      }
      int n = 0;
      for (JsonNode x : v) {
        if (n++ == 50) {
          b.append("; ... (").append(v.size()).append(" in all)");
          break;
        }
        b.append(b.length() > 0 ? (x.isObject() ? "; " : ", ") : "").append(cell(x));
      }
      return b.toString();
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
