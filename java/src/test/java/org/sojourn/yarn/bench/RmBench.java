package org.sojourn.yarn.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmissionData;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmitter;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeUpdateSchedulerEvent;

/**
 * The full RM: NODE_UPDATE cost and container allocations per second for one
 * scheduler, inside a MockRM with N nodes and A apps each asking C containers.
 * The timed phase hands NODE_UPDATE to the scheduler directly, node after node,
 * until every ask is served; each call is timed. Then five rounds of NODE_UPDATEs
 * that change nothing (for Sojourn, the bridge's round trip with an empty
 * response) are timed apart. Prints figures.
 *
 * <pre>gradle rmbench [-Prmbench.args="all 1000 500 100 [--max-assignments=N] --record"]</pre>
 * (all, or a comma-separated list of sojourn-fifo, sojourn-fair, sojourn-fair-single, sojourn-hfsp,
 * sojourn-kairos, sojourn-tetrisched, capacity, capacity-multi, fair; or "policies", or a list of, the
 * catalog's other policies with their defaults: {@link #OTHER_POLICIES})
 */
public final class RmBench {
  /** Containers the scheduler has placed on the nodes (YARN's own books). */
  private static long containersOn(ResourceScheduler s, List<MockNM> nms) {
    long n = 0;
    for (MockNM nm : nms) {
      n += s.getNodeReport(nm.getNodeId()).getNumContainers();
    }
    return n;
  }

  /** The shim's default containers per node heartbeat ({@code SojournConfig.DEFAULT_MAX_ASSIGNMENTS}). */
  static final String DEFAULT_MAX_ASSIGNMENTS = "8";

  /**
   * {@code --max-assignments=N}: Sojourn's containers per node heartbeat
   * (yarn.scheduler.sojourn.per-node-heartbeat.maximum-container-assignments,
   * -1 no limit); by default the shim's default.
   */
  static String maxAssignments = DEFAULT_MAX_ASSIGNMENTS;

  /** Every scheduler, in the order the figures are printed. */
  static final List<String> ALL =
      Arrays.asList("sojourn-fifo", "sojourn-fair", "sojourn-fair-single", "sojourn-hfsp", "sojourn-kairos",
          "sojourn-tetrisched", "capacity", "capacity-multi", "fair");

  /**
   * The catalog's other policies, with their defaults (not in "all", whose rows the history
   * tracks; "policies" runs these).
   */
  static final List<String> OTHER_POLICIES =
      Arrays.asList("sojourn-capacity", "sojourn-bigc", "sojourn-sparrow", "sojourn-hawk", "sojourn-lwl",
          "sojourn-split", "sojourn-eagle", "sojourn-dlwl_srpt", "sojourn-pigeon", "sojourn-rayon");

  /**
   * Arguments: [schedulers|all|policies] [nodes] [apps] [containers per app] [--record].
   * Schedulers are comma separated; each runs in a fresh MockRM in this JVM,
   * so one run gives figures measured side by side. --record appends them to
   * java/bench/rm-history.csv.
   */
  public static void main(String[] args) throws Exception {
    List<String> rest = new ArrayList<>(Arrays.asList(args));
    boolean record = rest.remove("--record");
    for (java.util.Iterator<String> it = rest.iterator(); it.hasNext(); ) {
      String a = it.next();
      if (a.startsWith("--max-assignments=")) {
        maxAssignments = a.substring("--max-assignments=".length());
        it.remove();
      }
    }
    String which = rest.size() > 0 ? rest.get(0) : "all";
    int nodes = rest.size() > 1 ? Integer.parseInt(rest.get(1)) : 1000;
    int apps = rest.size() > 2 ? Integer.parseInt(rest.get(2)) : 500;
    int perApp = rest.size() > 3 ? Integer.parseInt(rest.get(3)) : 100;
    List<String> schedulers = which.equals("all") ? ALL
        : which.equals("policies") ? OTHER_POLICIES : Arrays.asList(which.split(","));
    for (String sched : schedulers) {
      if (!ALL.contains(sched) && !OTHER_POLICIES.contains(sched)) {
        throw new IllegalArgumentException("unknown scheduler '" + sched + "': one of " + ALL + ", "
            + OTHER_POLICIES + ", all or policies");
      }
    }
    String rev = System.getProperty("bench.rev", "unknown");
    List<String> rows = new ArrayList<>();
    for (String sched : schedulers) {
      rows.add(java.time.LocalDate.now(java.time.ZoneOffset.UTC) + "," + rev + ","
          + run(sched, nodes, apps, perApp));
    }
    if (record) {
      java.nio.file.Path history = java.nio.file.Paths.get("java", "bench", "rm-history.csv");
      String header = "date,rev,scheduler,nodes,apps,containers_per_app,rounds,allocations_per_s,"
          + "node_update_p50_us,node_update_p99_us,node_update_max_us,idle_node_update_p50_us,"
          + "idle_node_update_p99_us";
      if (!java.nio.file.Files.exists(history)) {
        java.nio.file.Files.write(history, java.util.Collections.singletonList(header));
      } else {
        // Rows from before the idle figures keep their fields; only the header grows.
        List<String> lines = java.nio.file.Files.readAllLines(history);
        if (!lines.isEmpty() && !lines.get(0).equals(header)) {
          lines.set(0, header);
          java.nio.file.Files.write(history, lines);
        }
      }
      java.nio.file.Files.write(history, rows, java.nio.file.StandardOpenOption.APPEND);
      System.out.println("recorded in " + history);
    }
  }

  private static long gcCount() {
    long n = 0;
    for (java.lang.management.GarbageCollectorMXBean b : java.lang.management.ManagementFactory
        .getGarbageCollectorMXBeans()) {
      n += Math.max(0, b.getCollectionCount());
    }
    return n;
  }

  private static long gcMillis() {
    long n = 0;
    for (java.lang.management.GarbageCollectorMXBean b : java.lang.management.ManagementFactory
        .getGarbageCollectorMXBeans()) {
      n += Math.max(0, b.getCollectionTime());
    }
    return n;
  }

  /** p50/p99 of {@code ns} (unsorted), in us, as "p50 / p99 (n)". */
  private static String quantiles(List<Long> ns) {
    if (ns.isEmpty()) {
      return "none";
    }
    long[] l = ns.stream().mapToLong(Long::longValue).sorted().toArray();
    return String.format("p50 %.1f / p99 %.1f / max %.1f us (%d)", l[l.length / 2] / 1e3,
        l[(int) (l.length * 0.99)] / 1e3, l[l.length - 1] / 1e3, l.length);
  }

  /**
   * Where the time of the timed NODE_UPDATEs went: by containers placed,
   * with and without a collection during the call, and the slowest calls.
   */
  private static void breakdown(List<Long> lat, List<Integer> placedBy, List<Boolean> gcIn, long gcs, long gcMs,
      int nodes) {
    List<Long> withGc = new ArrayList<>();
    List<Long> noGc = new ArrayList<>();
    java.util.TreeMap<String, List<Long>> byPlaced = new java.util.TreeMap<>();
    int most = 0;
    for (int i = 0; i < lat.size(); i++) {
      (gcIn.get(i) ? withGc : noGc).add(lat.get(i));
      int p = placedBy.get(i);
      most = Math.max(most, p);
      String bucket = p == 0 ? "a: 0" : p == 1 ? "b: 1" : p <= 8 ? "c: 2-8" : p <= 32 ? "d: 9-32" : "e: 33+";
      byPlaced.computeIfAbsent(bucket, k -> new ArrayList<>()).add(lat.get(i));
    }
    System.out.printf("  GC: %d collection(s), %d ms in the timed phase; NODE_UPDATEs with a GC: %s; without: %s%n",
        gcs, gcMs, quantiles(withGc), quantiles(noGc));
    System.out.printf("  containers per NODE_UPDATE: at most %d%n", most);
    for (java.util.Map.Entry<String, List<Long>> e : byPlaced.entrySet()) {
      System.out.printf("    placed %s: %s%n", e.getKey().substring(3), quantiles(e.getValue()));
    }
    Integer[] order = new Integer[lat.size()];
    for (int i = 0; i < order.length; i++) {
      order[i] = i;
    }
    Arrays.sort(order, (x, y) -> Long.compare(lat.get(y), lat.get(x)));
    StringBuilder top = new StringBuilder("  slowest:");
    for (int k = 0; k < Math.min(8, order.length); k++) {
      int i = order[k];
      top.append(String.format(" [round %d node %d: %.1f ms, %d placed%s]", i / nodes, i % nodes,
          lat.get(i) / 1e6, placedBy.get(i), gcIn.get(i) ? ", GC" : ""));
    }
    System.out.println(top);
  }

  /** One scheduler's run; returns its CSV figures. */
  static String run(String which, int nodes, int apps, int perApp) throws Exception {
    YarnConfiguration conf = new YarnConfiguration();
    switch (which) {
      case "sojourn-fifo":
        conf.set(YarnConfiguration.RM_SCHEDULER, "org.sojourn.yarn.SojournScheduler");
        conf.set("yarn.scheduler.sojourn.policy", "fifo");
        break;
      case "sojourn-fair":
        // as FairScheduler below: several containers per heartbeat, with the
        // policy's own maxAssign at the shim's per-heartbeat limit, so that
        // fair stops where the core would stop it
        conf.set(YarnConfiguration.RM_SCHEDULER, "org.sojourn.yarn.SojournScheduler");
        conf.set("yarn.scheduler.sojourn.policy", "fair");
        conf.set("yarn.scheduler.sojourn.fair.assign_multiple", "true");
        conf.set("yarn.scheduler.sojourn.fair.dynamic_max_assign", "false");
        conf.set("yarn.scheduler.sojourn.fair.max_assign", maxAssignments);
        break;
      case "sojourn-fair-single":
        // fair's defaults, as YARN's: one container per heartbeat, the same
        // work per NODE_UPDATE as CapacityScheduler's defaults below
        conf.set(YarnConfiguration.RM_SCHEDULER, "org.sojourn.yarn.SojournScheduler");
        conf.set("yarn.scheduler.sojourn.policy", "fair");
        break;
      case "sojourn-hfsp":
      case "sojourn-kairos":
        // the size-based and LAS policies with their defaults: their per-event
        // cost grows with jobs and nodes, unlike fifo's
        conf.set(YarnConfiguration.RM_SCHEDULER, "org.sojourn.yarn.SojournScheduler");
        conf.set("yarn.scheduler.sojourn.policy", which.substring("sojourn-".length()));
        break;
      case "sojourn-tetrisched":
        // its MILP solves run on the bridge's offload thread while the
        // NODE_UPDATEs are timed: their latency must not carry the solves
        conf.set(YarnConfiguration.RM_SCHEDULER, "org.sojourn.yarn.SojournScheduler");
        conf.set("yarn.scheduler.sojourn.policy", "tetrisched");
        conf.set("yarn.scheduler.sojourn.tetrisched.bind_on_heartbeat", "true"); // as shipped
        break;
      case "capacity":
        conf.set(YarnConfiguration.RM_SCHEDULER,
            "org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler");
        conf.setFloat("yarn.scheduler.capacity.maximum-am-resource-percent", 1.0f);
        conf.setInt("yarn.scheduler.capacity.maximum-applications", 100000);
        break;
      case "capacity-multi":
        // CapacityScheduler allowed to place many off-switch containers per heartbeat
        conf.set(YarnConfiguration.RM_SCHEDULER,
            "org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler");
        conf.setFloat("yarn.scheduler.capacity.maximum-am-resource-percent", 1.0f);
        conf.setInt("yarn.scheduler.capacity.maximum-applications", 100000);
        conf.setInt("yarn.scheduler.capacity.per-node-heartbeat.maximum-offswitch-assignments", 1000);
        break;
      case "fair":
        conf.set(YarnConfiguration.RM_SCHEDULER,
            "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler");
        conf.setBoolean("yarn.scheduler.fair.assignmultiple", true);
        conf.setInt("yarn.scheduler.fair.max.assign", -1);
        break;
      default:
        if (!OTHER_POLICIES.contains(which)) {
          throw new IllegalArgumentException("unknown scheduler '" + which + "': one of " + ALL + " or "
              + OTHER_POLICIES);
        }
        // every other policy of the catalog, with its defaults
        conf.set(YarnConfiguration.RM_SCHEDULER, "org.sojourn.yarn.SojournScheduler");
        conf.set("yarn.scheduler.sojourn.policy", which.substring("sojourn-".length()));
        break;
    }
    if (which.startsWith("sojourn-")) {
      conf.set("yarn.scheduler.sojourn.per-node-heartbeat.maximum-container-assignments", maxAssignments);
    }
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, 1024);
    QueueMetrics.clearQueueMetrics();
    DefaultMetricsSystem.setMiniClusterMode(true);
    MockRM rm = new MockRM(conf);
    // MockRM turns the root logger to DEBUG; a benchmark wants quiet.
    org.apache.log4j.LogManager.getRootLogger().setLevel(org.apache.log4j.Level.WARN);
    rm.start();
    try {
      List<MockNM> nms = new ArrayList<>();
      for (int i = 0; i < nodes; i++) {
        nms.add(rm.registerNode("127.0." + (i / 250) + "." + (1 + i % 250) + ":1234", 64 * 1024, 64));
      }
      long s0 = System.nanoTime();
      List<MockAM> ams = new ArrayList<>();
      for (int a = 0; a < apps; a++) {
        RMApp app = MockRMAppSubmitter.submit(rm, MockRMAppSubmissionData.Builder
            .createWithMemory(1024, rm).withAppName("bench-" + a).withUser("u" + (a % 20)).build());
        MockAM am;
        try {
          // tetrisched's plan comes back a moment after the heartbeat that asked for it,
          // and binds the AM to whichever node its plan chose
          am = which.equals("sojourn-tetrisched")
              ? org.sojourn.yarn.SojournTestBase.launchAmWhenPlaced(rm, app, nms, 30000)
              : MockRM.launchAndRegisterAM(app, rm, nms.get(a % nodes));
          if (am == null) {
            throw new AssertionError("not placed within 30 s");
          }
        } catch (AssertionError e) {
          throw new IllegalStateException("the AM of app " + a + " was not placed: " + e.getMessage(), e);
        }
        ams.add(am);
      }
      // Asks only once every AM runs, so setup heartbeats place none of them.
      for (MockAM am : ams) {
        am.allocate("*", 1024, perApp, new ArrayList<>());
      }
      rm.drainEvents();
      double setup = (System.nanoTime() - s0) / 1e9;

      ResourceScheduler s = rm.getResourceScheduler();
      long before = containersOn(s, nms);
      long target = before + (long) apps * perApp;
      List<RMNode> rmNodes = new ArrayList<>();
      for (MockNM nm : nms) {
        NodeId id = nm.getNodeId();
        rmNodes.add(rm.getRMContext().getRMNodes().get(id));
      }
      List<Long> lat = new ArrayList<>();
      // Read outside the timed calls: what each NODE_UPDATE placed (YARN's
      // own count) and whether a collection ran during it.
      List<Integer> placedBy = new ArrayList<>();
      List<Boolean> gcIn = new ArrayList<>();
      QueueMetrics root = s.getRootQueueMetrics();
      long gcCount0 = gcCount();
      long gcMs0 = gcMillis();
      long t0 = System.nanoTime();
      int rounds = 0;
      // tetrisched's plan comes from a solve on another thread: 100 back-to-back
      // rounds end before it answers, so its rounds go on, 50 ms apart (a paced
      // heartbeat), until everything is placed or 60 s have passed
      boolean offThread = which.equals("sojourn-tetrisched");
      long until = t0 + TimeUnit.SECONDS.toNanos(60);
      while (containersOn(s, nms) < target && (offThread ? System.nanoTime() < until : rounds < 100)) {
        for (RMNode n : rmNodes) {
          int c0 = root.getAllocatedContainers();
          long g0 = gcCount();
          long a = System.nanoTime();
          s.handle(new NodeUpdateSchedulerEvent(n));
          lat.add(System.nanoTime() - a);
          placedBy.add(root.getAllocatedContainers() - c0);
          gcIn.add(gcCount() != g0);
        }
        rounds++;
        if (offThread) {
          Thread.sleep(50);
        }
      }
      double secs = (System.nanoTime() - t0) / 1e9;
      long gcs = gcCount() - gcCount0;
      long gcMs = gcMillis() - gcMs0;
      long allocated = containersOn(s, nms) - before;
      long[] l = new long[lat.size()];
      for (int i = 0; i < l.length; i++) {
        l[i] = lat.get(i);
      }
      Arrays.sort(l);
      System.out.printf("rm %s: %d nodes, %d apps x %d containers (setup %.1f s)%n", which, nodes, apps,
          perApp, setup);
      System.out.printf("  allocated %d in %.2f s over %d NODE_UPDATEs (%d rounds): %.0f allocations/s%n",
          allocated, secs, l.length, rounds, allocated / secs);
      if (s instanceof org.sojourn.yarn.SojournScheduler && allocated < (long) apps * perApp) {
        System.out.println("  state: " + ((org.sojourn.yarn.SojournScheduler) s).describe());
      }
      double p50 = l[l.length / 2] / 1e3;
      double p99 = l[(int) (l.length * 0.99)] / 1e3;
      double max = l[l.length - 1] / 1e3;
      System.out.printf("  NODE_UPDATE: p50 %.1f us, p99 %.1f us, max %.1f us%n", p50, p99, max);
      breakdown(lat, placedBy, gcIn, gcs, gcMs, rmNodes.size());
      // A NODE_UPDATE that changes nothing: every ask served, no container
      // status, nothing pending. One unmeasured round first carries the last
      // round's follow-ups (confirmations) to the scheduler.
      for (RMNode n : rmNodes) {
        s.handle(new NodeUpdateSchedulerEvent(n));
      }
      int idleRounds = 5;
      long[] idle = new long[idleRounds * rmNodes.size()];
      int k = 0;
      for (int r = 0; r < idleRounds; r++) {
        for (RMNode n : rmNodes) {
          long a = System.nanoTime();
          s.handle(new NodeUpdateSchedulerEvent(n));
          idle[k++] = System.nanoTime() - a;
        }
      }
      Arrays.sort(idle);
      double idleP50 = idle[idle.length / 2] / 1e3;
      double idleP99 = idle[(int) (idle.length * 0.99)] / 1e3;
      System.out.printf("  idle NODE_UPDATE (changes nothing; for sojourn, a bridge round trip): p50 %.1f us, "
          + "p99 %.1f us%n", idleP50, idleP99);
      if (allocated < (long) apps * perApp) {
        System.out.printf("  WARNING: only %d of %d containers placed in %d rounds%n", allocated,
            (long) apps * perApp, rounds);
      }
      // A Sojourn row at another limit than the shim's default says so in its name.
      String row = which.startsWith("sojourn-") && !maxAssignments.equals(DEFAULT_MAX_ASSIGNMENTS)
          ? which + "/max" + maxAssignments : which;
      return String.format("%s,%d,%d,%d,%d,%.0f,%.1f,%.1f,%.1f,%.1f,%.1f", row, nodes, apps, perApp, rounds,
          allocated / secs, p50, p99, max, idleP50, idleP99);
    } finally {
      rm.stop();
    }
  }
}
