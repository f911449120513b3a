package org.sojourn.yarn.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.sojourn.yarn.Native;

/**
 * The JNI bridge alone (no RM): what one NODE_UPDATE costs at the boundary
 * (encode the batch, cross JNI, run the policy, decode the decisions) with
 * 1,000 nodes and 500 apps of pending work. Prints figures; asserts nothing.
 *
 * <pre>gradle bench -PcargoTargetDir=...   [-Pbench.args="nodes apps heartbeats policy"]</pre>
 */
public final class BridgeBench {
  private static final ObjectMapper JSON = new ObjectMapper();

  public static void main(String[] args) throws Exception {
    int nodes = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
    int apps = args.length > 1 ? Integer.parseInt(args[1]) : 500;
    int heartbeats = args.length > 2 ? Integer.parseInt(args[2]) : 50000;
    String policy = args.length > 3 ? args[3] : "fifo";
    try (Native core = Native.open(policy, Collections.<String, String>emptyMap(), "{\"seed\":1}", 2)) {
      StringBuilder setup = new StringBuilder("[");
      for (int n = 1; n <= nodes; n++) {
        setup.append(n > 1 ? "," : "").append("{\"type\":\"node_added\",\"node\":").append(n)
            .append(",\"name\":\"h").append(n).append(":8041\",\"rack\":\"/r").append(n % 40)
            .append("\",\"capacity\":{\"memory_mb\":65536,\"vcores\":64}}");
      }
      for (int a = 1; a <= apps; a++) {
        setup.append(",{\"type\":\"app_added\",\"app\":").append(a)
            .append(",\"queue\":\"root.default\",\"user\":\"u").append(a % 20).append("\"}");
        setup.append(",{\"type\":\"asks_updated\",\"app\":").append(a).append(",\"asks\":[{\"priority\":20,")
            .append("\"capability\":{\"memory_mb\":1024,\"vcores\":1},\"count\":1000000,\"phase\":\"map\"}]}");
      }
      setup.append("]");
      core.step(0, setup.toString());

      // Each node keeps its containers; when it comes round again, half finish.
      Map<Integer, ArrayDeque<Long>> running = new TreeMap<>();
      long[] lat = new long[heartbeats];
      long allocations = 0;
      long t0 = System.nanoTime();
      for (int i = 0; i < heartbeats; i++) {
        int node = 1 + (i % nodes);
        ArrayDeque<Long> mine = running.computeIfAbsent(node, k -> new ArrayDeque<>());
        StringBuilder b = new StringBuilder("[");
        int done = mine.size() / 2;
        for (int k = 0; k < done; k++) {
          b.append("{\"type\":\"container_completed\",\"container\":").append(mine.poll())
              .append(",\"outcome\":\"finished\"},");
        }
        b.append("{\"type\":\"node_heartbeat\",\"node\":").append(node).append("}]");
        long s = System.nanoTime();
        JsonNode r = JSON.readTree(core.step(i + 1, b.toString()));
        List<Long> started = new ArrayList<>();
        for (JsonNode d : r.path("decisions")) {
          if ("allocate".equals(d.path("type").asText())) {
            started.add(d.path("container").asLong());
          }
        }
        lat[i] = System.nanoTime() - s;
        allocations += started.size();
        mine.addAll(started);
      }
      double secs = (System.nanoTime() - t0) / 1e9;
      Arrays.sort(lat);
      System.out.printf("bridge %s: %d nodes, %d apps, %d heartbeats in %.2f s%n", policy, nodes, apps,
          heartbeats, secs);
      System.out.printf("  allocations: %d (%.0f/s)%n", allocations, allocations / secs);
      System.out.printf("  heartbeat round trip (encode, JNI, policy, decode): p50 %.1f us, p99 %.1f us, max %.1f us%n",
          lat[heartbeats / 2] / 1e3, lat[(int) (heartbeats * 0.99)] / 1e3, lat[heartbeats - 1] / 1e3);
    }
  }
}
