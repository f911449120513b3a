package org.sojourn.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerState;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.api.protocolrecords.NMContainerStatus;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmissionData;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmitter;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.MemoryRMStateStore;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.junit.Test;

/**
 * The reliability issue's findings, each against a real ResourceManager
 * (MockRM): what a hostile or unlucky AM, an RM restart, an AM restart and a
 * native panic used to do to the core's mirror, and that the mirror now
 * agrees with YARN's books afterwards.
 */
public class ReliabilityTest extends SojournTestBase {

  /** The core's containers and memory, beside YARN's, on the one node. */
  private void assertMirrorMatches(MockNM nm, String when) throws Exception {
    rm.drainEvents();
    nm.nodeHeartbeat(true); // one more entry, so every queued delta reached the core
    rm.drainEvents();
    JsonNode cluster = describe().path("core").path("cluster");
    long yarnMb = usedMb(nm);
    int yarnContainers = rm.getResourceScheduler().getNodeReport(nm.getNodeId()).getNumContainers();
    assertEquals(when + ": memory " + cluster, yarnMb, cluster.path("allocated").path("memory_mb").asLong());
    assertEquals(when + ": containers " + cluster, yarnContainers, cluster.path("containers").asInt());
  }

  private static ResourceRequest request(int priority, long requestId, int mb, int count) {
    return ResourceRequest.newBuilder().priority(Priority.newInstance(priority)).resourceName("*")
        .capability(Resource.newInstance(mb, 1)).numContainers(count).allocationRequestId(requestId)
        .build();
  }

  private List<Container> allocate(MockAM am, MockNM nm, List<ResourceRequest> asks, int want)
      throws Exception {
    List<Container> got = new ArrayList<>(
        am.allocate(asks, Collections.<ContainerId>emptyList()).getAllocatedContainers());
    for (int i = 0; i < 40 && got.size() < want; i++) {
      nm.nodeHeartbeat(true);
      rm.drainEvents();
      got.addAll(am.schedule().getAllocatedContainers());
    }
    return got;
  }

  @Test
  public void aNegativePriorityIsRefusedToTheAmAndNothingElseIsLost() throws Exception {
    start(conf());
    MockNM nm = rm.registerNode("127.0.0.1:1234", 8 * GB, 8);
    RMApp app = submit(GB);
    MockAM am = MockRM.launchAndRegisterAM(app, rm, nm);
    try {
      am.allocate(Arrays.asList(request(-1, 0, GB, 1)), Collections.<ContainerId>emptyList());
      fail("an ask at priority -1 is refused");
    } catch (Exception e) {
      assertTrue(String.valueOf(e), String.valueOf(e).contains("priority -1"));
    }
    List<Container> got = allocateAndWait(am, nm, GB, 1, 2);
    assertEquals(2, got.size());
    assertMirrorMatches(nm, "after the refused ask");
    assertEquals(0, scheduler().getRejections());
  }

  /**
   * Two requests at one priority whose counts sum past Integer.MAX_VALUE:
   * the sum used to wrap negative, the whole batch failed to decode, and the
   * completions in it were lost for good.
   */
  @Test
  public void countsSummingPastIntDoNotWrapAndCompletionsStillArrive() throws Exception {
    start(conf());
    MockNM nm = rm.registerNode("127.0.0.1:1234", 8 * GB, 8);
    RMApp app = submit(GB);
    MockAM am = MockRM.launchAndRegisterAM(app, rm, nm);
    int huge = Integer.MAX_VALUE - 1;
    List<Container> got = allocate(am, nm, Arrays.asList(request(1, 1, GB, huge), request(1, 2, GB, huge)), 7);
    assertEquals("the node fills: 7 tasks beside the AM", 7, got.size());
    nm.nodeHeartbeat(Arrays.asList(
        org.apache.hadoop.yarn.api.records.ContainerStatus.newInstance(got.get(0).getId(), ContainerState.COMPLETE,
            "", 0)), true);
    rm.drainEvents();
    assertMirrorMatches(nm, "after a completion");
    assertEquals(0, scheduler().getRejections());
  }

  /**
   * Core v2's cycle: a decision YARN keeps refusing (here a node the AM
   * blacklisted, which the core does not model) costs one rejection per
   * step, and the follow-up waits for the next step instead of a round loop
   * inside the heartbeat. The ask is served as soon as a usable node comes.
   */
  @Test
  public void aDecisionYarnKeepsRefusingCostsOneRejectionPerStep() throws Exception {
    start(conf());
    MockNM usable = rm.registerNode("127.0.0.1:1234", 2 * GB, 2);
    RMApp app = submit(GB);
    MockAM am = MockRM.launchAndRegisterAM(app, rm, usable); // the AM fills half of it
    MockNM refused = rm.registerNode("127.0.0.2:1235", 8 * GB, 8); // blacklists are by host
    rm.drainEvents();
    am.allocate(org.apache.hadoop.yarn.api.protocolrecords.AllocateRequest.newInstance(0, 0f,
        Arrays.asList(request(1, 0, GB, 1)), Collections.<ContainerId>emptyList(),
        org.apache.hadoop.yarn.api.records.ResourceBlacklistRequest.newInstance(
            Arrays.asList(refused.getNodeId().getHost()), Collections.<String>emptyList())));
    int beats = 5;
    for (int i = 0; i < beats; i++) {
      refused.nodeHeartbeat(true);
      rm.drainEvents();
    }
    Thread.sleep(500); // ticks step the core with the last rejection
    long rejections = scheduler().getRejections();
    assertTrue("the blacklisted node was tried: " + rejections, rejections >= 1);
    assertTrue("at most one rejection per step: " + rejections + " for " + beats + " heartbeats",
        rejections <= beats);
    Thread.sleep(500);
    assertEquals("ticks alone do not retry", rejections, scheduler().getRejections());
    assertTrue("nothing was placed on the blacklisted node", am.schedule().getAllocatedContainers().isEmpty());
    List<Container> got = new ArrayList<>();
    for (int i = 0; i < 20 && got.isEmpty(); i++) {
      usable.nodeHeartbeat(true);
      rm.drainEvents();
      got.addAll(am.schedule().getAllocatedContainers());
    }
    assertEquals(1, got.size());
    assertEquals(usable.getNodeId(), got.get(0).getNodeId());
    assertMirrorMatches(usable, "after the refusals");
  }

  /** Reliability finding 5: the larger size at a shared priority used to wait forever. */
  @Test
  public void twoSizesAtOnePriorityAreBothServed() throws Exception {
    start(conf());
    MockNM nm = rm.registerNode("127.0.0.1:1234", 8 * GB, 8);
    RMApp app = submit(GB);
    MockAM am = MockRM.launchAndRegisterAM(app, rm, nm);
    List<Container> got = allocate(am, nm, Arrays.asList(request(1, 1, GB, 1), request(1, 2, 2 * GB, 1)), 2);
    List<Long> sizes = new ArrayList<>();
    for (Container c : got) {
      sizes.add(c.getResource().getMemorySize());
    }
    Collections.sort(sizes);
    assertEquals(Arrays.asList((long) GB, 2L * GB), sizes);
    assertMirrorMatches(nm, "after both sizes");
  }

  /** Reliability finding 10: a core that panicked is rebuilt from YARN's books, not reused. */
  @Test
  public void aCoreThatPanickedIsRebuiltFromYarnsBooks() throws Exception {
    start(conf());
    MockNM nm = rm.registerNode("127.0.0.1:1234", 8 * GB, 8);
    RMApp app = submit(GB);
    MockAM am = MockRM.launchAndRegisterAM(app, rm, nm);
    assertEquals(3, allocateAndWait(am, nm, GB, 1, 3).size());
    scheduler().panicInCoreForTest();
    assertMirrorMatches(nm, "after the rebuild");
    assertEquals(1, scheduler().getCoreRebuilds());
    // The rebuilt core serves new asks and knows the old containers.
    assertEquals(2, allocateAndWait(am, nm, GB, 1, 2).size());
    assertMirrorMatches(nm, "after new allocations");
    assertEquals(0, scheduler().getRejections());
  }

  /** A mirror that lost a container YARN still has is found at two checks in a row and rebuilt. */
  @Test
  public void aDriftedMirrorIsResynchronisedFromYarn() throws Exception {
    start(conf());
    MockNM nm = rm.registerNode("127.0.0.1:1234", 8 * GB, 8);
    RMApp app = submit(GB);
    MockAM am = MockRM.launchAndRegisterAM(app, rm, nm);
    List<Container> got = allocateAndWait(am, nm, GB, 1, 2);
    assertEquals(2, got.size());
    assertTrue("no drift yet", !scheduler().checkDriftForTest() && !scheduler().checkDriftForTest());
    scheduler().forgetInCoreForTest(got.get(0).getId());
    assertTrue("first sight: maybe in flight", !scheduler().checkDriftForTest());
    assertTrue("second sight: drift", scheduler().checkDriftForTest());
    assertEquals(1, scheduler().getDriftResyncs());
    assertMirrorMatches(nm, "after the resync");
  }

  static YarnConfiguration recoveryConf(String policy) {
    YarnConfiguration conf = conf();
    conf.set("yarn.scheduler.sojourn.policy", policy);
    conf.setBoolean(YarnConfiguration.RECOVERY_ENABLED, true);
    conf.setBoolean(YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_ENABLED, true);
    conf.setLong(YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_SCHEDULING_WAIT_MS, 0);
    conf.set(YarnConfiguration.RM_STORE, MemoryRMStateStore.class.getName());
    return conf;
  }

  /**
   * Work-preserving RM restart: the containers the NodeManager reports on
   * re-registering reach the core, which then agrees with YARN at every
   * heartbeat, and serves new asks without a rejection.
   */
  private void rmRestartKeepsTheMirror(String policy) throws Exception {
    YarnConfiguration conf = recoveryConf(policy);
    MockRM rm1 = start(conf);
    MemoryRMStateStore store = (MemoryRMStateStore) rm1.getRMStateStore();
    MockNM nm = rm1.registerNode("127.0.0.1:1234", 8 * GB, 8);
    RMApp app = submit(GB);
    MockAM am = MockRM.launchAndRegisterAM(app, rm1, nm);
    List<Container> tasks = allocateAndWait(am, nm, GB, 1, 2);
    assertEquals(2, tasks.size());
    List<NMContainerStatus> running = new ArrayList<>();
    ContainerId amId = app.getCurrentAppAttempt().getMasterContainer().getId();
    running.add(status(amId, GB, 0));
    for (Container c : tasks) {
      running.add(status(c.getId(), GB, 1));
    }

    rm = new MockRM(conf, store);
    rm.start();
    rm1.stop();
    nm.setResourceTrackerService(rm.getResourceTrackerService());
    nm.registerNode(running, null);
    rm.waitForState(am.getApplicationAttemptId(), RMAppAttemptState.LAUNCHED);
    rm.drainEvents();
    assertEquals(policy, 3, scheduler().getRecoveredContainers());
    assertMirrorMatches(nm, policy + " after the restart");
    am.setAMRMProtocol(rm.getApplicationMasterService(), rm.getRMContext());
    am.registerAppAttempt(true);
    rm.waitForState(app.getApplicationId(), org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState.RUNNING);
    assertEquals(policy, 1, allocateAndWait(am, nm, GB, 1, 1).size());
    assertMirrorMatches(nm, policy + " after a new allocation");
    assertEquals(policy, 0, scheduler().getRejections());
  }

  private static NMContainerStatus status(ContainerId id, int mb, int priority) {
    return NMContainerStatus.newInstance(id, 0, ContainerState.RUNNING, Resource.newInstance(mb, 1), "", 0,
        Priority.newInstance(priority), 0);
  }

  @Test
  public void rmRestartRecoversContainersIntoTheCoreFifo() throws Exception {
    rmRestartKeepsTheMirror("fifo");
  }

  @Test
  public void rmRestartRecoversContainersIntoTheCoreFair() throws Exception {
    rmRestartKeepsTheMirror("fair");
  }

  @Test
  public void rmRestartRecoversContainersIntoTheCoreHfsp() throws Exception {
    rmRestartKeepsTheMirror("hfsp");
  }

  @Test
  public void rmRestartRecoversContainersIntoTheCoreKairos() throws Exception {
    rmRestartKeepsTheMirror("kairos");
  }

  /**
   * A NodeManager that re-registers with more running containers than its
   * vcores: YARN books them all, and so must the core. With suspend=agent
   * this is what an RM restart does when a task was placed on the vcore a
   * suspension freed, as the agent then continues the suspended task (the new
   * RM's list is empty): minicluster/RmRestartMiniClusterTest shows it with a
   * real NodeManager. Here the node comes back with fewer vcores than its
   * containers hold. The core used to refuse the third ContainerRecovered
   * ("does not fit") and drift from YARN's books at every heartbeat.
   */
  @Test
  public void anRmRestartThatOverCommitsANodeKeepsTheMirrorAndPlacesNothingThereUntilItFits() throws Exception {
    YarnConfiguration conf = recoveryConf("kairos");
    MockRM rm1 = start(conf);
    MemoryRMStateStore store = (MemoryRMStateStore) rm1.getRMStateStore();
    MockNM nm = rm1.registerNode("127.0.0.1:1234", 8 * GB, 3);
    RMApp app = submit(GB);
    MockAM am = MockRM.launchAndRegisterAM(app, rm1, nm);
    List<Container> tasks = allocateAndWait(am, nm, GB, 1, 2);
    assertEquals(2, tasks.size());
    List<NMContainerStatus> running = new ArrayList<>();
    running.add(status(app.getCurrentAppAttempt().getMasterContainer().getId(), GB, 0));
    for (Container c : tasks) {
      running.add(status(c.getId(), GB, 1));
    }

    rm = new MockRM(conf, store);
    rm.start();
    rm1.stop();
    MockNM smaller = new MockNM("127.0.0.1:1234", 8 * GB, 2, rm.getResourceTrackerService());
    smaller.registerNode(running, null);
    rm.waitForState(am.getApplicationAttemptId(), RMAppAttemptState.LAUNCHED);
    rm.drainEvents();
    assertEquals(3, scheduler().getRecoveredContainers());
    assertEquals("YARN books 3 vcores on 2", 3,
        rm.getResourceScheduler().getNodeReport(smaller.getNodeId()).getUsedResource().getVirtualCores());
    assertMirrorMatches(smaller, "after the restart");

    am.setAMRMProtocol(rm.getApplicationMasterService(), rm.getRMContext());
    am.registerAppAttempt(true);
    rm.waitForState(app.getApplicationId(), org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState.RUNNING);
    am.addRequests(new String[] {"*"}, GB, 1, 1);
    am.schedule();
    for (int i = 0; i < 5; i++) {
      smaller.nodeHeartbeat(true);
      rm.drainEvents();
      assertTrue("placed on a node with no vcore free", am.schedule().getAllocatedContainers().isEmpty());
    }
    assertMirrorMatches(smaller, "over-committed");
    // Two tasks end: one vcore is free, and the ask is served.
    for (Container c : tasks) {
      smaller.nodeHeartbeat(am.getApplicationAttemptId(), c.getId().getContainerId(), ContainerState.COMPLETE);
      rm.drainEvents();
    }
    List<Container> got = new ArrayList<>();
    for (int i = 0; i < 40 && got.isEmpty(); i++) {
      smaller.nodeHeartbeat(true);
      rm.drainEvents();
      got.addAll(am.schedule().getAllocatedContainers());
    }
    assertEquals(1, got.size());
    assertMirrorMatches(smaller, "after the tasks ended and a new one was placed");
    assertEquals(0, scheduler().getRejections());
    assertTrue("drift", !scheduler().checkDriftForTest() && !scheduler().checkDriftForTest());
  }

  /** AM restart with keep-containers-across-application-attempts: kept containers stay in the core. */
  @Test
  public void anAmRestartKeepsItsContainersInTheCore() throws Exception {
    YarnConfiguration conf = conf();
    conf.setInt(YarnConfiguration.RM_AM_MAX_ATTEMPTS, 2);
    start(conf);
    MockNM nm = rm.registerNode("127.0.0.1:1234", 8 * GB, 8);
    RMApp app = MockRMAppSubmitter.submit(rm, MockRMAppSubmissionData.Builder.createWithMemory(GB, rm)
        .withKeepContainers(true).withMaxAppAttempts(2).withAppName("keeper").build());
    MockAM am = MockRM.launchAndRegisterAM(app, rm, nm);
    List<Container> tasks = allocateAndWait(am, nm, GB, 1, 2);
    assertEquals(2, tasks.size());
    for (Container c : tasks) {
      nm.nodeHeartbeat(am.getApplicationAttemptId(), c.getId().getContainerId(), ContainerState.RUNNING);
    }
    // The AM's container exits: a new attempt takes over the two tasks.
    nm.nodeHeartbeat(am.getApplicationAttemptId(), 1, ContainerState.COMPLETE);
    rm.waitForState(am.getApplicationAttemptId(), RMAppAttemptState.FAILED);
    rm.drainEvents();
    MockAM am2 = MockRM.launchAndRegisterAM(app, rm, nm);
    assertEquals(2, scheduler().getRecoveredContainers());
    assertMirrorMatches(nm, "after the AM restart");
    assertEquals(1, allocateAndWait(am2, nm, GB, 1, 1).size());
    assertMirrorMatches(nm, "after a new allocation");
    assertEquals(0, scheduler().getRejections());
  }
}
