package org.sojourn.yarn;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;

/**
 * The scheduler's state for people: the shim's queue tree (apps, resources
 * used, from YARN's books) joined by path with the policy's own view of each
 * queue (guarantee or fair share, maximum, AM usage), plus the policy's whole
 * {@code describe}. The web UI page ({@link SojournSchedulerPage}) draws it;
 * the REST resource ({@link SojournWebServices}) serves it as JSON.
 *
 * <p>Field names are YARN's where YARN has one (CapacityScheduler's and
 * FairScheduler's {@code /ws/v1/cluster/scheduler}): {@code queueName},
 * {@code queuePath}, {@code numApplications}, {@code resourcesUsed},
 * {@code absoluteUsedCapacity}, {@code absoluteCapacity},
 * {@code absoluteMaxCapacity} (percent of the cluster), {@code capacity},
 * {@code maxCapacity} (percent of the parent, capacity only),
 * {@code fairResources}, {@code maxResources}, {@code amUsedResources},
 * {@code amMaxResources} (fair), {@code queues.queue} (children).
 * {@code absoluteCapacity} is the policy's share: capacity's guarantee,
 * fair's instantaneous fair share.
 */
final class SchedulerView {
  private SchedulerView() {}

  /** {@code {"scheduler": {"schedulerInfo": {...}}}}, as YARN's REST nests it. */
  static ObjectNode build(SojournScheduler s) {
    ObjectNode info = Protocol.JSON.createObjectNode();
    info.put("type", "sojournScheduler");
    info.put("policy", s.getPolicy());
    SojournConfig settings = s.settings();
    info.put("placement", settings == null ? "" : settings.placement.describe());
    Resource cluster = s.getClusterResource();
    long clusterMb = cluster == null ? 0 : cluster.getMemorySize();
    ObjectNode res = info.putObject("clusterResources");
    res.put("memory", clusterMb);
    res.put("vCores", cluster == null ? 0 : cluster.getVirtualCores());
    JsonNode state;
    try {
      state = Protocol.JSON.readTree(s.describe());
    } catch (IOException e) {
      state = Protocol.JSON.createObjectNode().put("error", e.toString());
    }
    JsonNode policyState = state.path("core").path("state");
    info.set("rootQueue", queue(s.queues().root(), policyState.path("root"), clusterMb));
    info.set("describe", state);
    ObjectNode out = Protocol.JSON.createObjectNode();
    out.putObject("scheduler").set("schedulerInfo", info);
    return out;
  }

  private static ObjectNode queue(SojournQueue q, JsonNode policyRoot, long clusterMb) {
    ObjectNode o = Protocol.JSON.createObjectNode();
    o.put("queueName", q.getQueueName());
    o.put("queuePath", q.getPath());
    o.put("type", q.isLeaf() ? "leaf" : "parent");
    o.put("numApplications", apps(q));
    QueueMetrics m = q.getMetrics();
    long usedMb = m == null ? 0 : m.getAllocatedMB();
    ObjectNode used = o.putObject("resourcesUsed");
    used.put("memory", usedMb);
    used.put("vCores", m == null ? 0 : m.getAllocatedVirtualCores());
    o.put("absoluteUsedCapacity", percent(usedMb, clusterMb));
    JsonNode p = find(policyRoot, q.getPath());
    if (p != null) {
      policyFields(o, p, clusterMb);
      o.set("policy", p.deepCopy());
      ((ObjectNode) o.get("policy")).remove("children");
    }
    if (!q.isLeaf()) {
      ArrayNode kids = o.putObject("queues").putArray("queue");
      for (SojournQueue c : q.getChildren()) {
        kids.add(queue(c, policyRoot, clusterMb));
      }
    }
    return o;
  }

  /** The policy's fields for one queue, under YARN's names. */
  private static void policyFields(ObjectNode o, JsonNode p, long clusterMb) {
    if (p.has("absolute_capacity")) { // capacity: fractions of the cluster and percents of the parent
      o.put("capacity", p.path("capacity").asDouble());
      o.put("maxCapacity", p.path("maximum_capacity").asDouble());
      o.put("absoluteCapacity", 100.0 * p.path("absolute_capacity").asDouble());
      o.put("absoluteMaxCapacity", 100.0 * p.path("absolute_maximum_capacity").asDouble());
      if (p.has("am_used")) {
        o.set("usedAMResource", yarnResource(p.get("am_used")));
      }
    } else if (p.has("fair_share")) { // fair: resources
      o.set("fairResources", yarnResource(p.get("fair_share")));
      o.put("absoluteCapacity", percent(p.path("fair_share").path("memory_mb").asLong(), clusterMb));
      JsonNode max = p.path("max_share");
      if (max.isObject() && max.path("memory_mb").isNumber()) {
        o.set("maxResources", yarnResource(max));
        o.put("absoluteMaxCapacity", Math.min(100.0, percent(max.path("memory_mb").asLong(), clusterMb)));
      } else {
        o.put("absoluteMaxCapacity", 100.0);
      }
      if (p.has("am_usage")) {
        o.set("amUsedResources", yarnResource(p.get("am_usage")));
      }
      if (p.path("max_am_resource").isObject()) {
        o.set("amMaxResources", yarnResource(p.get("max_am_resource")));
      }
    }
  }

  private static ObjectNode yarnResource(JsonNode r) {
    ObjectNode o = Protocol.JSON.createObjectNode();
    o.put("memory", r.path("memory_mb").asLong());
    o.put("vCores", r.path("vcores").asLong());
    return o;
  }

  /** The policy's node for {@code path}: fair names queues by {@code name}, capacity by {@code path}. */
  private static JsonNode find(JsonNode node, String path) {
    if (node == null || !node.isObject()) {
      return null;
    }
    if (path.equals(node.path("name").asText(null)) || path.equals(node.path("path").asText(null))) {
      return node;
    }
    for (JsonNode c : node.path("children")) {
      JsonNode f = find(c, path);
      if (f != null) {
        return f;
      }
    }
    return null;
  }

  private static int apps(SojournQueue q) {
    if (q.isLeaf()) {
      return q.appCount();
    }
    int n = 0;
    for (SojournQueue c : q.getChildren()) {
      n += apps(c);
    }
    return n;
  }

  private static double percent(long part, long whole) {
    return whole <= 0 ? 0.0 : Math.round(10000.0 * part / whole) / 100.0;
  }
}
