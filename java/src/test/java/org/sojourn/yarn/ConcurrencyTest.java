package org.sojourn.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateResponse;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmissionData;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmitter;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.server.api.protocolrecords.NodeHeartbeatResponse;
import org.junit.Test;

/**
 * Many AM threads calling allocate() while every node heartbeats on its own
 * thread and apps come and go: no deadlock (the test ends), no lost ask (every
 * batch is served exactly), no double allocation (container ids unique, no
 * node over its capacity, YARN and the core agree at the end).
 */
public class ConcurrencyTest extends SojournTestBase {
  private static final int NODES = 4;
  private static final int APPS = 6;
  private static final int BATCHES = 5;
  private static final int PER_BATCH = 6;

  /** Three fresh RMs: races are probabilistic, so give them several chances. */
  @Test(timeout = 300000)
  public void allocateAndHeartbeatsRaceSafely() throws Exception {
    for (int round = 0; round < 3; round++) {
      resetMetrics();
      runOnce();
      stopRm();
    }
  }

  private void runOnce() throws Exception {
    start(conf());
    List<MockNM> nms = new ArrayList<>();
    for (int i = 0; i < NODES; i++) {
      nms.add(rm.registerNode("127.0.0." + (i + 1) + ":1234", 6 * GB, 6));
    }
    List<MockAM> ams = new ArrayList<>();
    for (int i = 0; i < APPS; i++) {
      RMApp app = submit(GB);
      ams.add(MockRM.launchAndRegisterAM(app, rm, nms.get(i % NODES)));
    }

    final AtomicBoolean stop = new AtomicBoolean();
    final AtomicReference<Throwable> failure = new AtomicReference<>();
    final Set<ContainerId> seen = Collections.newSetFromMap(new ConcurrentHashMap<>());
    final AtomicInteger duplicates = new AtomicInteger();
    final Map<String, AtomicInteger> perBatch = new ConcurrentHashMap<>();
    List<Thread> threads = new ArrayList<>();

    for (final MockNM nm : nms) {
      threads.add(new Thread(() -> {
        try {
          while (!stop.get()) {
            NodeHeartbeatResponse r = nm.nodeHeartbeat(true);
            if (r == null) {
              throw new AssertionError("no heartbeat response");
            }
            Thread.sleep(5);
          }
        } catch (Throwable t) {
          failure.compareAndSet(null, t);
        }
      }, "hb-" + nm.getNodeId()));
    }

    final CountDownLatch served = new CountDownLatch(APPS);
    for (int i = 0; i < APPS; i++) {
      final MockAM am = ams.get(i);
      final int app = i;
      threads.add(new Thread(() -> {
        try {
          for (int b = 0; b < BATCHES; b++) {
            // each batch at its own priority, asked once: its count must be met exactly
            int prio = 10 + b;
            List<ResourceRequest> ask = am.createReq(new String[] {"*"}, GB, prio, PER_BATCH, 0L);
            List<ContainerId> release = new ArrayList<>();
            AllocateResponse r = am.allocate(ask, release);
            int got = 0;
            long deadline = System.currentTimeMillis() + 60000;
            while (true) {
              for (Container c : r.getAllocatedContainers()) {
                if (!seen.add(c.getId())) {
                  duplicates.incrementAndGet();
                }
                perBatch.computeIfAbsent(app + "/" + c.getPriority().getPriority(),
                    k -> new AtomicInteger()).incrementAndGet();
                release.add(c.getId());
                got++;
              }
              if (got >= PER_BATCH || System.currentTimeMillis() > deadline) {
                break;
              }
              Thread.sleep(3);
              // give back what we hold, racing the heartbeats
              r = am.allocate(new ArrayList<>(), release);
              release = new ArrayList<>();
            }
            am.allocate(new ArrayList<>(), release);
          }
          served.countDown();
        } catch (Throwable t) {
          failure.compareAndSet(null, t);
        }
      }, "am-" + i));
    }

    // apps coming and going meanwhile
    threads.add(new Thread(() -> {
      try {
        for (int k = 0; k < 4 && !stop.get(); k++) {
          RMApp app = MockRMAppSubmitter.submit(rm, MockRMAppSubmissionData.Builder
              .createWithMemory(GB, rm).withWaitForAppAcceptedState(false).build());
          Thread.sleep(20);
          rm.killApp(app.getApplicationId());
          rm.waitForState(app.getApplicationId(), RMAppState.KILLED);
        }
      } catch (Throwable t) {
        failure.compareAndSet(null, t);
      }
    }, "churn"));

    for (Thread t : threads) {
      t.start();
    }
    served.await();
    stop.set(true);
    for (Thread t : threads) {
      t.join(60000);
      assertTrue(t.getName() + " did not finish (deadlock?)", !t.isAlive());
    }
    if (failure.get() != null) {
      throw new AssertionError("a worker failed", failure.get());
    }

    assertEquals(0, duplicates.get());
    for (int i = 0; i < APPS; i++) {
      for (int b = 0; b < BATCHES; b++) {
        AtomicInteger n = perBatch.get(i + "/" + (10 + b));
        assertEquals("app " + i + " batch " + b, PER_BATCH, n == null ? 0 : n.get());
      }
    }
    // Releases queued by the last allocate() calls reach the core on its next
    // entry (a heartbeat, or the timer thread within tick-ms): make one.
    nms.get(0).nodeHeartbeat(true);
    rm.drainEvents();
    // only the AMs are left, in YARN and in the core
    long used = 0;
    for (MockNM nm : nms) {
      long u = usedMb(nm);
      assertTrue(u <= 6 * GB);
      used += u;
    }
    assertEquals(APPS * GB, used);
    assertEquals(describe() + " shim: " + scheduler().debugContainers(), APPS,
        describe().path("core").path("cluster").path("containers").asInt());
    assertTrue(describe().path("allocations").asInt() >= APPS * BATCHES * PER_BATCH + APPS);
  }
}
