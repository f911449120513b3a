package org.sojourn.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmissionData;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmitter;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Allocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ContainerUpdates;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeUpdateSchedulerEvent;
import org.junit.Test;

/**
 * Load and soak: AM threads calling allocate() (asking, then releasing what
 * they got) while NODE_UPDATEs go round every node, a million of them by
 * default. Checks that nothing deadlocks, nothing is lost (YARN's books and
 * the core's mirror agree at the end, with no drift seen), memory stays flat
 * (heap after a GC at each quarter), and prints the figures. Sizes:
 * {@code -PsoakNodes=10000 -PsoakHeartbeats=1000000 -PsoakThreads=50}.
 */
public class SoakTest extends SojournTestBase {
  private static int prop(String name, int dflt) {
    return Integer.getInteger("sojourn." + name, dflt);
  }

  private static java.nio.file.Path out() throws java.io.IOException {
    java.nio.file.Path dir = java.nio.file.Paths.get(System.getProperty("sojourn.test.dir", "build/test-work"));
    java.nio.file.Files.createDirectories(dir);
    return dir;
  }

  /** Appends a progress line to soak-progress.txt (watch it with tail -f). */
  private static void progress(java.nio.file.Path dir, String line) throws java.io.IOException {
    java.nio.file.Files.write(dir.resolve("soak-progress.txt"), line.getBytes(java.nio.charset.StandardCharsets.UTF_8),
        java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
  }

  private static long heapMb() {
    Runtime rt = Runtime.getRuntime();
    for (int i = 0; i < 2; i++) {
      System.gc();
    }
    return (rt.totalMemory() - rt.freeMemory()) >> 20;
  }

  /** The test JVM logs at DEBUG, and Gradle ships every line: a soak measures the scheduler, not that. */
  @org.junit.Before
  public void quiet() {
    org.apache.log4j.LogManager.getLoggerRepository().setThreshold(org.apache.log4j.Level.WARN);
  }

  @org.junit.After
  public void loud() {
    org.apache.log4j.LogManager.getLoggerRepository().setThreshold(org.apache.log4j.Level.ALL);
  }

  @Test(timeout = 1_800_000)
  public void manyAllocateThreadsAndAMillionHeartbeats() throws Exception {
    final int nodes = prop("soakNodes", 1000);
    final long heartbeats = prop("soakHeartbeats", 1_000_000);
    final int threads = prop("soakThreads", 50);
    YarnConfiguration conf = conf();
    // The NodeManagers and AMs speak to the scheduler directly here, not over
    // their liveness-tracked protocols: keep YARN from expiring them mid-run.
    conf.setLong(YarnConfiguration.RM_NM_EXPIRY_INTERVAL_MS, 3600_000L);
    conf.setLong(YarnConfiguration.RM_AM_EXPIRY_INTERVAL_MS, 3600_000L);
    // (YARN wants its token keys to roll slower than three expiry intervals.)
    conf.setLong(YarnConfiguration.RM_NMTOKEN_MASTER_KEY_ROLLING_INTERVAL_SECS, 4 * 3600L);
    conf.setLong(YarnConfiguration.RM_CONTAINER_TOKEN_MASTER_KEY_ROLLING_INTERVAL_SECS, 4 * 3600L);
    start(conf);
    List<RMNode> rmNodes = new ArrayList<>();
    List<MockNM> nms = new ArrayList<>();
    for (int i = 0; i < nodes; i++) {
      MockNM nm = rm.registerNode("10." + (i >> 16 & 255) + "." + (i >> 8 & 255) + "." + (i & 255) + ":1234",
          8 * GB, 8);
      nms.add(nm);
      rmNodes.add(rm.getRMContext().getRMNodes().get(nm.getNodeId()));
    }
    SojournScheduler s = scheduler();
    List<ApplicationAttemptId> attempts = new ArrayList<>();
    for (int i = 0; i < threads; i++) {
      RMApp app = MockRMAppSubmitter.submit(rm, MockRMAppSubmissionData.Builder.createWithMemory(GB, rm)
          .withAppName("soak-" + i).build());
      // A running AM, so the RM has taken its container before the threads pull theirs.
      attempts.add(MockRM.launchAndRegisterAM(app, rm, nms.get(i % nodes)).getApplicationAttemptId());
    }
    rm.drainEvents();

    final AtomicBoolean stop = new AtomicBoolean();
    final AtomicReference<Throwable> failure = new AtomicReference<>();
    final AtomicLong allocated = new AtomicLong();
    final AtomicLong calls = new AtomicLong();
    List<Thread> workers = new ArrayList<>();
    for (final ApplicationAttemptId id : attempts) {
      workers.add(new Thread(() -> {
        List<ContainerId> release = new ArrayList<>();
        try {
          while (!stop.get()) {
            List<ResourceRequest> ask = Collections.singletonList(ResourceRequest.newBuilder()
                .priority(Priority.newInstance(1)).resourceName("*").capability(Resource.newInstance(GB, 1))
                .numContainers(4).build());
            Allocation a = s.allocate(id, ask, null, release, null, null, new ContainerUpdates());
            calls.incrementAndGet();
            release = new ArrayList<>();
            for (Container c : a.getContainers()) {
              release.add(c.getId());
              allocated.incrementAndGet();
            }
            Thread.sleep(100); // ten times a second: a busy AM (MapReduce AMs call once a second)
          }
          s.allocate(id, Collections.<ResourceRequest>emptyList(), null, release, null, null, new ContainerUpdates());
        } catch (Throwable t) {
          failure.compareAndSet(null, t);
        }
      }, "soak-am-" + id));
    }
    for (Thread t : workers) {
      t.start();
    }
    long[] heap = new long[4];
    long t0 = System.nanoTime();
    for (long i = 0; i < heartbeats && failure.get() == null; i++) {
      s.handle(new NodeUpdateSchedulerEvent(rmNodes.get((int) (i % nodes))));
      if ((i + 1) % (heartbeats / 10) == 0) {
        progress(out(), String.format("soak: %d of %d heartbeats, %.1f s%n", i + 1, heartbeats,
            (System.nanoTime() - t0) / 1e9));
      }
      if ((i + 1) % (heartbeats / 4) == 0) {
        heap[(int) ((i + 1) / (heartbeats / 4)) - 1] = heapMb();
      }
    }
    double secs = (System.nanoTime() - t0) / 1e9;
    stop.set(true);
    for (Thread t : workers) {
      t.join(60_000);
      assertTrue(t.getName() + " did not finish (deadlock?)", !t.isAlive());
    }
    if (failure.get() != null) {
      throw new AssertionError("a worker failed", failure.get());
    }
    // The last releases reach the core at its next entry.
    s.handle(new NodeUpdateSchedulerEvent(rmNodes.get(0)));
    rm.drainEvents();
    long yarnContainers = 0;
    for (RMNode n : rmNodes) {
      yarnContainers += rm.getResourceScheduler().getNodeReport(n.getNodeID()).getNumContainers();
    }
    assertEquals("every node is still registered", nodes, s.getNumClusterNodes());
    JsonNode cluster = describe().path("core").path("cluster");
    String figures = String.format("soak: %d nodes, %d allocate threads, %d heartbeats in %.1f s (%.0f/s), "
        + "%d allocate calls, %d containers allocated and released, %d rejections; heap after GC at each "
        + "quarter %d/%d/%d/%d MB%n", nodes, threads, heartbeats, secs, heartbeats / secs, calls.get(),
        allocated.get(), s.getRejections(), heap[0], heap[1], heap[2], heap[3]);
    System.out.print(figures);
    // Gradle keeps test output to itself: the figures also go where the test script prints them from.
    java.nio.file.Files.write(out().resolve("soak.txt"), figures.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    assertEquals("containers, YARN vs the core: " + cluster, yarnContainers, cluster.path("containers").asLong());
    assertTrue("no drift", !s.checkDriftForTest() && !s.checkDriftForTest());
    assertEquals(0, s.getDriftResyncs());
    // Each AM asks for 4 containers a call and the heartbeats between its calls
    // place them: on average a call must come back with at least 2 (the first
    // call of each AM gets none). Bounded by calls, not heartbeats: the bridge
    // now serves a million heartbeats in a few seconds, fewer than AM calls at 10/s need.
    assertTrue("allocations happened: " + allocated.get() + " in " + calls.get() + " allocate calls",
        allocated.get() >= 2 * calls.get());
    assertTrue("heap stays flat: " + heap[0] + " then " + heap[3] + " MB", heap[3] <= heap[0] * 2 + 64);
  }
}
