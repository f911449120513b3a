package org.sojourn.yarn.minicluster;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.sojourn.yarn.minicluster.RecoveryCluster.assertCountedInOrder;
import static org.sojourn.yarn.minicluster.RecoveryCluster.await;
import static org.sojourn.yarn.minicluster.RecoveryCluster.count;
import static org.sojourn.yarn.minicluster.RecoveryCluster.loop;
import static org.sojourn.yarn.minicluster.RecoveryCluster.restart;
import static org.sojourn.yarn.minicluster.RecoveryCluster.scheduler;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
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

/**
 * A work-preserving AM restart ({@code keep-containers-across-application-attempts})
 * with a real NodeManager, under fair and then hfsp (issue 13).
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

  @Test(timeout = 300000)
  public void anAmRestartKeepsItsRunningContainersInTheCoreAndItsNewAsksAreServed() throws Exception {
    File dir = RecoveryCluster.workDir("am-restart");
    YarnConfiguration conf = RecoveryCluster.conf(dir, 4);
    RecoveryCluster.fixPorts(conf);
    conf.set("yarn.scheduler.sojourn.policy", "fair");
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
      round(cluster, yc, c, "fair");
      restart(cluster, "hfsp");
      round(cluster, yc, c, "hfsp");
    } finally {
      yc.stop();
      cluster.stop();
    }
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
    List<ContainerStatus> done = am2.completed(3, 30000);
    assertEquals(done.toString(), 3, done.size());
    Set<ContainerId> doneIds = new HashSet<>();
    for (ContainerStatus st : done) {
      assertEquals(st.toString(), 0, st.getExitStatus());
      doneIds.add(st.getContainerId());
    }
    Set<ContainerId> expected = new HashSet<>(taskIds);
    expected.add(more.get(0).getId());
    assertEquals(expected, doneIds);
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

  private static RMApp rmApp(MiniYARNCluster cluster, ApplicationId id) {
    return cluster.getResourceManager().getRMContext().getRMApps().get(id);
  }

  private static SchedulerNodeReport node(MirrorCheckingScheduler s, MiniYARNCluster cluster) {
    return s.getNodeReport(cluster.getNodeManager(0).getNMContext().getNodeId());
  }

  /** The containers the core's mirror holds. */
  private static long coreContainers(MirrorCheckingScheduler s) throws Exception {
    return new ObjectMapper().readTree(s.describe()).path("core").path("cluster").path("containers").asLong(-1);
  }
}
