package org.sojourn.yarn;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateResponse;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmissionData;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmitter;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.junit.After;
import org.junit.Before;

/** A MockRM with Sojourn as its scheduler, and helpers the tests share. */
public abstract class SojournTestBase {
  static final int GB = 1024;

  protected MockRM rm;

  @Before
  public void resetMetrics() {
    QueueMetrics.clearQueueMetrics();
    DefaultMetricsSystem.setMiniClusterMode(true);
  }

  @After
  public void stopRm() {
    if (rm != null) {
      rm.stop();
      rm = null;
    }
  }

  /** Starting an RM with this configuration fails with a message containing {@code needle}. */
  void assertStartFails(YarnConfiguration conf, String needle) {
    try {
      rm = new MockRM(conf);
      rm.start();
      org.junit.Assert.fail("the RM started with a bad configuration (" + needle + ")");
    } catch (Exception e) {
      StringBuilder all = new StringBuilder();
      for (Throwable t = e; t != null; t = t.getCause()) {
        all.append(t.getMessage()).append(" | ");
      }
      org.junit.Assert.assertTrue(all.toString(), all.toString().contains(needle));
    } finally {
      rm = null;
    }
  }

  static YarnConfiguration conf() {
    YarnConfiguration conf = new YarnConfiguration();
    conf.set(YarnConfiguration.RM_SCHEDULER, SojournScheduler.class.getName());
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, GB);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_MB, 8 * GB);
    return conf;
  }

  MockRM start(YarnConfiguration conf) {
    rm = new MockRM(conf);
    rm.start();
    return rm;
  }

  SojournScheduler scheduler() {
    return (SojournScheduler) rm.getResourceScheduler();
  }

  /** The core's own view: {"core": {"cluster": ..., "stats": ...}, ...}. */
  JsonNode describe() throws Exception {
    return Protocol.JSON.readTree(scheduler().describe());
  }

  /** Submits as {@code user} to {@code queue}; null: the job names no queue. */
  RMApp submitTo(String queue, String user, int mb) throws Exception {
    MockRMAppSubmissionData.Builder b = MockRMAppSubmissionData.Builder.createWithMemory(mb, rm)
        .withUser(user).withWaitForAppAcceptedState(false);
    if (queue != null) {
      b.withQueue(queue);
    }
    return MockRMAppSubmitter.submit(rm, b.build());
  }

  void assertPlaced(RMApp app, String path) throws Exception {
    rm.waitForState(app.getApplicationId(), RMAppState.ACCEPTED);
    org.junit.Assert.assertEquals(path, app.getQueue());
    org.junit.Assert.assertTrue(rm.getResourceScheduler().getAppsInQueue(path).stream()
        .anyMatch(a -> a.getApplicationId().equals(app.getApplicationId())));
  }

  void assertRejected(RMApp app, String why) throws Exception {
    rm.waitForState(app.getApplicationId(), RMAppState.FAILED);
    String diag = app.getDiagnostics().toString();
    org.junit.Assert.assertTrue(diag, diag.contains(why));
  }

  RMApp submit(int memory, String queue, String user) throws Exception {
    return MockRMAppSubmitter.submit(rm,
        MockRMAppSubmissionData.Builder.createWithMemory(memory, rm)
            .withQueue(queue).withUser(user).withAppName("test-" + user).build());
  }

  /**
   * Submits a 1 GB AM as {@code user} to {@code queue} with application {@code tags}
   * (AppTags); {@code waitAccepted}: return once the RM accepted it.
   */
  RMApp submitTagged(boolean waitAccepted, String queue, String user, String... tags) throws Exception {
    java.util.Set<String> set = new java.util.HashSet<>(java.util.Arrays.asList(tags));
    return MockRMAppSubmitter.submit(rm, MockRMAppSubmissionData.Builder.createWithMemory(GB, rm)
        .withQueue(queue).withUser(user).withAppName("test-" + user).withApplicationTags(set)
        .withWaitForAppAcceptedState(waitAccepted).build());
  }

  RMApp submit(int memory) throws Exception {
    return submit(memory, "default", "alice");
  }

  long usedMb(MockNM nm) {
    return rm.getResourceScheduler().getNodeReport(nm.getNodeId()).getUsedResource().getMemorySize();
  }

  /**
   * {@code nm}'s used memory once it reaches {@code mb}, or what it is after
   * 10 s. An AM can see a killed container completed a moment before the
   * node gives its resources back (YARN updates the attempt first, then the
   * node, and the AM's pull does not take the scheduler's lock).
   */
  long usedMbSettling(MockNM nm, long mb) throws InterruptedException {
    long deadline = System.currentTimeMillis() + 10000;
    long used = usedMb(nm);
    while (used != mb && System.currentTimeMillis() < deadline) {
      Thread.sleep(20);
      rm.drainEvents();
      used = usedMb(nm);
    }
    return used;
  }

  /** Asks, then heartbeats {@code nm} and pulls until {@code n} containers arrive. */
  static List<Container> allocateAndWait(MockAM am, MockNM nm, int memory, int priority, int n)
      throws Exception {
    am.addRequests(new String[] {"*"}, memory, priority, n);
    List<Container> got = new ArrayList<>(am.schedule().getAllocatedContainers());
    for (int i = 0; i < 40 && got.size() < n; i++) {
      nm.nodeHeartbeat(true);
      got.addAll(am.schedule().getAllocatedContainers());
      if (got.size() < n) {
        Thread.sleep(50);
      }
    }
    return got;
  }

  /**
   * Heartbeats {@code nm} until {@code app}'s AM container is placed, then
   * launches and registers the AM; null if it is not placed within
   * {@code waitMs}. For a policy whose decisions come a moment after the
   * heartbeat that asked for them (tetrisched's solve runs on another
   * thread), where MockRM.launchAndRegisterAM expects the AM placed by its
   * own heartbeat.
   */
  public static MockAM launchAmWhenPlaced(MockRM rm, RMApp app, MockNM nm, long waitMs) throws Exception {
    return launchAmWhenPlaced(rm, app, java.util.Collections.singletonList(nm), waitMs);
  }

  /** As above, heartbeating every one of {@code nms} (the AM may be placed on any of them). */
  public static MockAM launchAmWhenPlaced(MockRM rm, RMApp app, List<MockNM> nms, long waitMs) throws Exception {
    long end = System.currentTimeMillis() + waitMs;
    while (System.currentTimeMillis() < end) {
      for (MockNM nm : nms) {
        nm.nodeHeartbeat(true);
      }
      rm.drainEvents();
      RMAppAttempt attempt = app.getCurrentAppAttempt();
      if (attempt != null && attempt.getMasterContainer() != null) {
        for (MockNM nm : nms) {
          nm.nodeHeartbeat(true);
        }
        MockAM am = rm.sendAMLaunched(attempt.getAppAttemptId());
        rm.waitForState(attempt.getAppAttemptId(), RMAppAttemptState.LAUNCHED);
        am.registerAppAttempt();
        return am;
      }
      Thread.sleep(20);
    }
    return null;
  }

  /** Pulls completed container statuses until {@code n} have come. */
  static List<ContainerStatus> waitCompleted(MockAM am, int n) throws Exception {
    List<ContainerStatus> out = new ArrayList<>();
    for (int i = 0; i < 100 && out.size() < n; i++) {
      AllocateResponse r = am.schedule();
      out.addAll(r.getCompletedContainersStatuses());
      if (out.size() < n) {
        Thread.sleep(50);
      }
    }
    return out;
  }

  static List<ContainerId> ids(List<Container> cs) {
    List<ContainerId> ids = new ArrayList<>();
    for (Container c : cs) {
      ids.add(c.getId());
    }
    return ids;
  }
}
