package org.sojourn.yarn.minicluster;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.sojourn.yarn.minicluster.RecoveryCluster.assertCountedInOrder;
import static org.sojourn.yarn.minicluster.RecoveryCluster.await;
import static org.sojourn.yarn.minicluster.RecoveryCluster.count;
import static org.sojourn.yarn.minicluster.RecoveryCluster.loop;
import static org.sojourn.yarn.minicluster.RecoveryCluster.procState;
import static org.sojourn.yarn.minicluster.RecoveryCluster.read;
import static org.sojourn.yarn.minicluster.RecoveryCluster.restart;
import static org.sojourn.yarn.minicluster.RecoveryCluster.scheduler;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.FinalApplicationStatus;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNodeReport;
import org.junit.Test;
import org.sojourn.yarn.MirrorCheckingScheduler;
import org.sojourn.yarn.minicluster.RecoveryCluster.Am;
import org.sojourn.yarn.nm.SuspendingContainerExecutor;

/**
 * A work-preserving AM restart ({@code keep-containers-across-application-attempts})
 * with a real NodeManager (5 vcores), under kairos, fair, hfsp and fifo in
 * turn (one cluster; an RM restart switches the policy), first under kairos
 * with a kept task suspended when the AM dies ({@link #suspendedRound}) (issue 13).
 *
 * <p>The AM: a managed AM, so YARN runs a real AM container and starts a new
 * attempt when it dies (YARN never retries an unmanaged AM). Its process is a
 * stand-in ({@link RecoveryCluster#amProcess}) that exits with the code the
 * test writes; the AM's protocol is spoken by this test through AMRMClient
 * with the attempt's own AMRM token. So the restart is real (the AM
 * container's process exits 7, the NodeManager reports it, YARN fails the
 * attempt and launches attempt 2 in a new container) without a JVM per AM.
 *
 * <p>Each round: attempt 1 runs two counting loops; its AM exits 7; attempt 2
 * registers and gets the two loops back as containers from the previous
 * attempt; they stay in the core's books (under the new attempt) all along;
 * attempt 2 asks for one more container and gets it; everything exits 0 and
 * the app finishes SUCCEEDED. The RMs run {@link MirrorCheckingScheduler}:
 * YARN's books and the core agree after every heartbeat.
 */
public class AmRestartMiniClusterTest {

  @Test(timeout = 400000)
  public void anAmRestartKeepsItsRunningContainersInTheCoreAndItsNewAsksAreServed() throws Exception {
    File dir = RecoveryCluster.workDir("am-restart");
    YarnConfiguration conf = RecoveryCluster.conf(dir, 5);
    RecoveryCluster.fixPorts(conf);
    conf.set("yarn.scheduler.sojourn.policy", "kairos");
    conf.setInt(YarnConfiguration.RM_AM_MAX_ATTEMPTS, 2);
    MiniYARNCluster cluster = new MiniYARNCluster("sojourn-am-restart", 1, 1, 1);
    cluster.init(conf);
    cluster.start();
    YarnClient yc = YarnClient.createYarnClient();
    try {
      assertTrue(cluster.waitForNodeManagersToConnect(30000));
      Configuration c = cluster.getConfig();
      yc.init(c);
      yc.start();
      suspendedRound(cluster, yc, c);
      round(cluster, yc, c, "kairos");
      restart(cluster, "fair");
      round(cluster, yc, c, "fair");
      restart(cluster, "hfsp");
      round(cluster, yc, c, "hfsp");
      restart(cluster, "fifo");
      round(cluster, yc, c, "fifo");
    } finally {
      yc.stop();
      cluster.stop();
    }
  }

  /** Kept tasks of 2 vcores: one suspended cannot resume into the AM's 1 freed vcore. */
  private static final Resource BIG = Resource.newInstance(256, 2);

  /**
   * Under kairos, on a node of 5 vcores: attempt 1 (AM 1 vcore) runs two
   * loops of 2 vcores; app 2 (unmanaged) asks for one of 2 vcores and kairos
   * suspends one of attempt 1's (the victim); the agent stops it. Attempt
   * 1's AM exits 7: its vcore frees, too few for the victim, so kairos cannot
   * resume it before attempt 2 is added. Attempt 2 gets both loops back, and
   * the victim comes back running: the shim takes it off the list and the
   * agent continues it (before the fix it stayed suspended for good: kairos
   * resumes only tasks it placed, and the core had it as a new attempt's
   * recovered container). The node is then over-committed (6 vcores of 5),
   * so kairos suspends app 2's task to start attempt 2's AM. Attempt 2's ask
   * waits until its loops end; then app 2's task resumes and the ask is
   * served; everything exits 0 with its count intact and both apps finish.
   */
  private static void suspendedRound(MiniYARNCluster cluster, YarnClient yc, Configuration c) throws Exception {
    File dir = RecoveryCluster.workDir("am-restart-suspended");
    File dirB = RecoveryCluster.workDir("am-restart-suspended-b");
    MirrorCheckingScheduler s = scheduler(cluster);
    assertEquals("kairos", s.getPolicy());
    SuspendingContainerExecutor exec = (SuspendingContainerExecutor) cluster.getNodeManager(0)
        .getNMContext().getContainerExecutor();
    long recoveredBefore = s.getRecoveredContainers();
    ContainerLaunchContext amSpec = ContainerLaunchContext.newInstance(null, null,
        Collections.singletonList(RecoveryCluster.amProcess(dir)), null, null, null);
    ApplicationId appId = RecoveryCluster.submit(yc, "keeper-suspended", false, amSpec,
        Resource.newInstance(128, 1), 2, true);

    // Attempt 1 runs two loops: with its AM, 5 vcores of 5.
    Am am1 = RecoveryCluster.register(cluster, appId, 1, c);
    ContainerId am1Container = rmApp(cluster, appId).getCurrentAppAttempt().getMasterContainer().getId();
    List<Container> tasks = am1.ask(2, BIG, 30000);
    assertEquals("attempt 1 got " + tasks + ": " + s.describe(), 2, tasks.size());
    for (Container t : tasks) {
      am1.launch(t, loop(dir));
    }
    for (Container t : tasks) {
      File f = new File(dir, t.getId() + ".count");
      await(t.getId() + " counting", 20000, () -> count(f) >= 3);
    }
    Set<ContainerId> taskIds = new HashSet<>();
    for (Container t : tasks) {
      taskIds.add(t.getId());
    }

    // App 2 asks for 2 vcores: kairos suspends one of attempt 1's loops; the agent stops it.
    Am app2 = RecoveryCluster.unmanagedAm(cluster, yc, "suspender", c);
    List<Container> got2 = app2.ask(1, BIG, 30000);
    assertEquals("app 2 got no container: " + s.describe(), 1, got2.size());
    String[] listed = s.getSuspendedContainers();
    assertEquals(Arrays.toString(listed) + " " + s.describe(), 1, listed.length);
    ContainerId victim = ContainerId.fromString(listed[0]);
    assertTrue(victim + " is not attempt 1's", taskIds.contains(victim));
    app2.launch(got2.get(0), loop(dirB));
    String pid = read(new File(dir, victim + ".pid"));
    await("the victim's shell (pid " + pid + ") stopped", 20000, () -> procState(pid) == 'T');
    await("the agent holds the victim paused", 5000,
        () -> Collections.singleton(victim).equals(exec.pausedContainers()), () -> "" + exec.pausedContainers());
    File vCount = new File(dir, victim + ".count");
    File bCount = new File(dirB, got2.get(0).getId() + ".count");
    await("app 2's task counting", 20000, () -> count(bCount) >= 3);
    // The core holds the victim suspended: its 2 vcores are free in the mirror, not in YARN's books.
    assertEquals("YARN's books: the AM, two loops and app 2's", 1 + 3 * 2, node(s, cluster).getUsedResource()
        .getVirtualCores());
    assertEquals("the core's vcores: the victim's are free: " + s.describe(), 5, coreVcores(s));
    int paused = count(vCount);

    // The AM process dies (exit 7) with the victim suspended; attempt 2 starts in the freed vcore.
    am1.stop();
    Files.write(new File(dir, am1Container + ".exit").toPath(), "7".getBytes(StandardCharsets.US_ASCII));
    Am am2 = RecoveryCluster.register(cluster, appId, 2, c);
    assertEquals("attempt 1's AM exit", 2, rmApp(cluster, appId).getAppAttempts().size());
    ContainerId am2Container = rmApp(cluster, appId).getCurrentAppAttempt().getMasterContainer().getId();
    Set<ContainerId> kept = new HashSet<>();
    for (Container k : am2.registration.getContainersFromPreviousAttempts()) {
      kept.add(k.getId());
    }
    assertEquals("attempt 2 got back both loops, the suspended one too", taskIds, kept);
    assertEquals("the kept loops went to the core under attempt 2", recoveredBefore + 2, s.getRecoveredContainers());
    for (ContainerId t : taskIds) {
      assertTrue(t + " is not in the core: " + s.describe(), s.coreContainerId(t) != null);
    }
    // The victim came back running: off the list, continued by the agent,
    // running in the core. Attempt 2's AM then found its node over-committed
    // (the two loops and app 2's task: 6 vcores of 5), so kairos suspended
    // app 2's task, the one task it placed there, to start it.
    ContainerId bTask = got2.get(0).getId();
    assertEquals("the shim's list after the AM restart", "[" + bTask + "]",
        Arrays.toString(s.getSuspendedContainers()));
    await("the agent continues the victim and holds app 2's task paused", 20000,
        () -> Collections.singleton(bTask).equals(exec.pausedContainers()) && count(vCount) > paused + 2,
        () -> exec.pausedContainers() + ", victim's count " + count(vCount) + " (paused at " + paused + ")");
    assertTrue("the victim's shell is still stopped", procState(pid) != 'T');
    String bPid = read(new File(dirB, bTask + ".pid"));
    await("app 2's shell (pid " + bPid + ") stopped", 20000, () -> procState(bPid) == 'T');
    int bPaused = count(bCount);
    await("the new AM, both loops and app 2's task in YARN's books and the core", 20000,
        () -> node(s, cluster).getNumContainers() == 4 && s.compare() == null, s::describe);
    assertEquals("YARN's books", 128 + 3 * 256, node(s, cluster).getUsedResource().getMemorySize());
    assertEquals("YARN's books: everything at full size", 1 + 3 * 2,
        node(s, cluster).getUsedResource().getVirtualCores());
    assertEquals("the core: all but app 2's suspended task hold their vcores: " + s.describe(), 7 - 2,
        coreVcores(s));
    assertEquals(s.firstMismatch(), 0, s.mismatches());

    // Attempt 2 asks for one: 5 vcores of 5 run, so it waits in the core.
    // The loops end: kairos resumes app 2's task and serves the ask.
    CompletableFuture<List<Container>> more = CompletableFuture.supplyAsync(() -> {
      try {
        return am2.ask(1, 60000);
      } catch (Exception e) {
        throw new RuntimeException(e);
      }
    });
    await("attempt 2's ask waiting in the core", 20000, () -> pendingInCore(s) == 1, s::describe);
    assertTrue("served on a full node: " + s.describe(), !more.isDone());
    assertTrue(new File(dirB, "stop").createNewFile());
    assertTrue(new File(dir, "stop").createNewFile());
    List<Container> got = more.get(70, TimeUnit.SECONDS);
    assertEquals("kairos did not serve attempt 2's ask: " + s.describe(), 1, got.size());
    am2.launch(got.get(0), "/bin/true");
    assertAllEndedWell(am2, taskIds, got.get(0).getId());
    assertCountedInOrder("the victim", vCount, paused + 3);
    for (ContainerId t : taskIds) {
      assertCountedInOrder(t.toString(), new File(dir, t + ".count"), 3);
    }
    List<ContainerStatus> done2 = app2.completed(1, 30000);
    assertEquals(done2.toString(), 1, done2.size());
    assertEquals(done2.get(0).toString(), 0, done2.get(0).getExitStatus());
    assertCountedInOrder("app 2's task", bCount, bPaused);
    app2.finish();
    am2.finish();
    Files.write(new File(dir, am2Container + ".exit").toPath(), "0".getBytes(StandardCharsets.US_ASCII));
    await(appId + " finished", 30000, () -> rmApp(cluster, appId).getState() == RMAppState.FINISHED,
        () -> "" + rmApp(cluster, appId).getState());
    assertEquals(FinalApplicationStatus.SUCCEEDED, rmApp(cluster, appId).getFinalApplicationStatus());
    assertEquals(2, rmApp(cluster, appId).getAppAttempts().size());
    await("the node empty in YARN's books and the core", 20000,
        () -> node(s, cluster).getNumContainers() == 0 && s.compare() == null, s::describe);
    assertEquals(s.firstMismatch(), 0, s.mismatches());
    assertEquals(s.describe(), 0, s.getRejections());
    assertEquals(s.describe(), 0, s.getDriftResyncs());
    assertEquals(s.describe(), 0, s.getCoreRebuilds());
    assertTrue("a drift check would rebuild", !s.driftCheck() && !s.driftCheck());
    assertEquals(0, s.getSuspendedContainers().length);
    assertEquals(0, exec.pausedContainers().size());
    System.out.println("am-restart: kairos, suspended: " + s.checkedHeartbeats() + " heartbeats checked, "
        + s.getRecoveredContainers() + " container(s) handed to the core unplaced, allocations "
        + s.getAllocations());
  }

  private static void round(MiniYARNCluster cluster, YarnClient yc, Configuration c, String policy) throws Exception {
    File dir = RecoveryCluster.workDir("am-restart-" + policy);
    MirrorCheckingScheduler s = scheduler(cluster);
    assertEquals(policy, s.getPolicy());
    long recoveredBefore = s.getRecoveredContainers();
    ContainerLaunchContext amSpec = ContainerLaunchContext.newInstance(null, null,
        Collections.singletonList(RecoveryCluster.amProcess(dir)), null, null, null);
    ApplicationId appId = RecoveryCluster.submit(yc, "keeper-" + policy, false, amSpec, Resource.newInstance(128, 1),
        2, true);

    // Attempt 1 runs two loops.
    Am am1 = RecoveryCluster.register(cluster, appId, 1, c);
    ContainerId am1Container = rmApp(cluster, appId).getCurrentAppAttempt().getMasterContainer().getId();
    List<Container> tasks = am1.ask(2, 30000);
    assertEquals("attempt 1 got " + tasks + ": " + s.describe(), 2, tasks.size());
    for (Container t : tasks) {
      am1.launch(t, loop(dir));
    }
    for (Container t : tasks) {
      File f = new File(dir, t.getId() + ".count");
      await(t.getId() + " counting", 20000, () -> count(f) >= 3);
    }
    assertEquals(s.firstMismatch(), 0, s.mismatches());
    assertEquals("the AM and two tasks in the core: " + s.describe(), 3, coreContainers(s));

    // The AM process dies (exit 7): YARN fails attempt 1 and starts attempt 2.
    am1.stop();
    Files.write(new File(dir, am1Container + ".exit").toPath(), "7".getBytes(StandardCharsets.US_ASCII));
    Am am2 = RecoveryCluster.register(cluster, appId, 2, c);
    ContainerId am2Container = rmApp(cluster, appId).getCurrentAppAttempt().getMasterContainer().getId();
    Set<ContainerId> kept = new HashSet<>();
    for (Container k : am2.registration.getContainersFromPreviousAttempts()) {
      kept.add(k.getId());
    }
    Set<ContainerId> taskIds = new HashSet<>();
    for (Container t : tasks) {
      taskIds.add(t.getId());
    }
    assertEquals("attempt 2 got back its running tasks", taskIds, kept);
    assertEquals("the kept tasks went to the core under attempt 2", recoveredBefore + 2, s.getRecoveredContainers());
    for (ContainerId t : taskIds) {
      assertTrue(t + " is not in the core: " + s.describe(), s.coreContainerId(t) != null);
      assertTrue(t + " stopped counting", count(new File(dir, t + ".count")) > 0);
    }
    await("the new AM and the two kept tasks in YARN's books and the core", 20000,
        () -> node(s, cluster).getNumContainers() == 3 && s.compare() == null, s::describe);
    assertEquals("the new AM and the two kept tasks", 128 + 2 * 256, node(s, cluster).getUsedResource().getMemorySize());
    assertEquals(s.firstMismatch(), 0, s.mismatches());

    // Attempt 2's ask is served; then everything ends.
    List<Container> more = am2.ask(1, 30000);
    assertEquals(policy + " did not serve attempt 2's ask: " + s.describe(), 1, more.size());
    am2.launch(more.get(0), "/bin/true");
    assertTrue(new File(dir, "stop").createNewFile());
    assertAllEndedWell(am2, taskIds, more.get(0).getId());
    for (ContainerId t : taskIds) {
      assertCountedInOrder(t.toString(), new File(dir, t + ".count"), 3);
    }
    am2.finish();
    Files.write(new File(dir, am2Container + ".exit").toPath(), "0".getBytes(StandardCharsets.US_ASCII));
    await(appId + " finished", 30000, () -> rmApp(cluster, appId).getState() == RMAppState.FINISHED,
        () -> "" + rmApp(cluster, appId).getState());
    assertEquals(FinalApplicationStatus.SUCCEEDED, rmApp(cluster, appId).getFinalApplicationStatus());
    assertEquals(2, rmApp(cluster, appId).getAppAttempts().size());
    await("the node empty in YARN's books and the core", 20000,
        () -> node(s, cluster).getNumContainers() == 0 && s.compare() == null, s::describe);

    assertEquals(s.firstMismatch(), 0, s.mismatches());
    // A few more heartbeats, each checked, with the node empty.
    long beats = s.checkedHeartbeats();
    await("three more heartbeats", 10000, () -> s.checkedHeartbeats() >= beats + 3);
    assertTrue("heartbeats checked: " + s.checkedHeartbeats(), s.checkedHeartbeats() >= 8);
    assertEquals(s.describe(), 0, s.getRejections());
    assertEquals(s.describe(), 0, s.getDriftResyncs());
    assertEquals(s.describe(), 0, s.getCoreRebuilds());
    assertTrue("a drift check would rebuild", !s.driftCheck() && !s.driftCheck());
    System.out.println("am-restart: " + policy + ": " + s.checkedHeartbeats() + " heartbeats checked, "
        + s.getRecoveredContainers() + " container(s) handed to the core unplaced, allocations "
        + s.getAllocations());
  }

  /** Attempt 2's three containers (the two kept tasks and {@code added}) all end, each with exit 0. */
  private static void assertAllEndedWell(Am am2, Set<ContainerId> taskIds, ContainerId added) throws Exception {
    List<ContainerStatus> done = am2.completed(3, 30000);
    assertEquals(done.toString(), 3, done.size());
    Set<ContainerId> doneIds = new HashSet<>();
    for (ContainerStatus st : done) {
      assertEquals(st.toString(), 0, st.getExitStatus());
      doneIds.add(st.getContainerId());
    }
    Set<ContainerId> expected = new HashSet<>(taskIds);
    expected.add(added);
    assertEquals(expected, doneIds);
  }

  private static RMApp rmApp(MiniYARNCluster cluster, ApplicationId id) {
    return cluster.getResourceManager().getRMContext().getRMApps().get(id);
  }

  private static SchedulerNodeReport node(MirrorCheckingScheduler s, MiniYARNCluster cluster) {
    return s.getNodeReport(cluster.getNodeManager(0).getNMContext().getNodeId());
  }

  /** The vcores the core's mirror has allocated (a suspended container holds none). */
  private static long coreVcores(MirrorCheckingScheduler s) throws Exception {
    return new ObjectMapper().readTree(s.describe()).path("core").path("cluster").path("allocated").path("vcores")
        .asLong(-1);
  }

  /** Containers asked for that the core has not placed. */
  private static long pendingInCore(MirrorCheckingScheduler s) throws Exception {
    return new ObjectMapper().readTree(s.describe()).path("core").path("cluster").path("pending_containers")
        .asLong(-1);
  }

  /** The containers the core's mirror holds. */
  private static long coreContainers(MirrorCheckingScheduler s) throws Exception {
    return new ObjectMapper().readTree(s.describe()).path("core").path("cluster").path("containers").asLong(-1);
  }
}
