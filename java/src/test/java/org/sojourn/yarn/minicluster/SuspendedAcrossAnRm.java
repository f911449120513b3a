package org.sojourn.yarn.minicluster;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.sojourn.yarn.minicluster.RecoveryCluster.assertCountedInOrder;
import static org.sojourn.yarn.minicluster.RecoveryCluster.await;
import static org.sojourn.yarn.minicluster.RecoveryCluster.count;
import static org.sojourn.yarn.minicluster.RecoveryCluster.loop;
import static org.sojourn.yarn.minicluster.RecoveryCluster.procState;
import static org.sojourn.yarn.minicluster.RecoveryCluster.read;
import static org.sojourn.yarn.minicluster.RecoveryCluster.scheduler;

import java.io.File;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Callable;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNodeReport;
import org.sojourn.yarn.MirrorCheckingScheduler;
import org.sojourn.yarn.minicluster.RecoveryCluster.Am;
import org.sojourn.yarn.nm.SuspendingContainerExecutor;

/**
 * The round the RM restart and HA fail-over tests share: on one NodeManager
 * of 2 vcores running the suspend agent, app 1 (an unmanaged AM this test
 * drives) runs two counting loops; app 2 asks for one container and the
 * running policy (hfsp or kairos) suspends one of app 1's for it; the agent
 * stops the victim. Then the RM is replaced (restart or fail-over). The new
 * RM's suspended list is empty, so the agent continues the victim
 * (README-shim, "Recovery, failures and drift"); the three containers come
 * back into YARN's books and the core; app 1, re-registered, asks for one
 * more container, which the new policy serves once a vcore frees; every
 * container exits 0 with its count intact, and both apps finish. The new
 * RM's {@link MirrorCheckingScheduler} saw YARN's books and the core agree at
 * every heartbeat, with 0 rejections, drift resyncs and rebuilds.
 */
final class SuspendedAcrossAnRm {
  private SuspendedAcrossAnRm() {}

  /**
   * One round: {@code suspender} (the running RM's policy) suspends a real
   * container; {@code change} replaces the RM (a restart, a fail-over) by
   * one running {@code next} and returns its scheduler; the new RM holds
   * what the NodeManager reports, the agent continues the victim, new asks
   * are served and everything finishes.
   */
  static void round(MiniYARNCluster cluster, YarnClient yc, Configuration c, String suspender, String next,
      Callable<MirrorCheckingScheduler> change) throws Exception {
    File dir = RecoveryCluster.workDir("round-" + next);
    MirrorCheckingScheduler s = scheduler(cluster);
    assertEquals(suspender, s.getPolicy());

    // App 1's two loops fill the node's 2 vcores.
    Am app1 = RecoveryCluster.unmanagedAm(cluster, yc, "app1-" + next, c);
    List<Container> tasks = app1.ask(2, 30000);
    assertEquals("app 1 got " + tasks + ": " + s.describe(), 2, tasks.size());
    for (Container t : tasks) {
      app1.launch(t, loop(dir));
    }
    for (Container t : tasks) {
      File f = new File(dir, t.getId() + ".count");
      await(t.getId() + " counting", 20000, () -> count(f) >= 3);
    }

    // App 2 asks for one: the policy suspends one of app 1's; the agent stops it.
    Am app2 = RecoveryCluster.unmanagedAm(cluster, yc, "app2-" + next, c);
    List<Container> got2 = app2.ask(1, 30000);
    assertEquals("app 2 got no container: " + s.describe(), 1, got2.size());
    String[] listed = s.getSuspendedContainers();
    assertEquals(suspender + ": " + Arrays.toString(listed) + " " + s.describe(), 1, listed.length);
    ContainerId victim = ContainerId.fromString(listed[0]);
    assertTrue(victim + " is not app 1's", tasks.get(0).getId().equals(victim) || tasks.get(1).getId().equals(victim));
    app2.launch(got2.get(0), loop(dir));
    String pid = read(new File(dir, victim + ".pid"));
    await("the victim's shell (pid " + pid + ") stopped", 20000, () -> procState(pid) == 'T');
    SuspendingContainerExecutor exec = (SuspendingContainerExecutor) cluster.getNodeManager(0)
        .getNMContext().getContainerExecutor();
    // The agent records the container as paused just after its signal.
    await("the agent holds the victim paused", 5000,
        () -> Collections.singleton(victim).equals(exec.pausedContainers()), () -> "" + exec.pausedContainers());
    File vCount = new File(dir, victim + ".count");
    File sCount = new File(dir, got2.get(0).getId() + ".count");
    await("app 2's task counting", 20000, () -> count(sCount) >= 3);
    int paused = count(vCount);
    assertEquals(s.describe(), 0, s.getRejections());
    assertEquals(s.firstMismatch(), 0, s.mismatches());

    // The change of RM: the victim stays stopped meanwhile.
    MirrorCheckingScheduler s2 = change.call();
    assertEquals(next, s2.getPolicy());
    assertTrue("the scheduler is still the old RM's", s2 != s);
    await("the three containers recovered into the core", 30000, () -> s2.getRecoveredContainers() == 3,
        s2::describe);
    // The new RM's list is empty: the agent continues the victim.
    await("the agent continues the victim", 20000, () -> count(vCount) > paused + 2, s2::describe);
    assertTrue("the victim's shell is stopped, but the new RM did not suspend it",
        procState(pid) != 'T' || Arrays.asList(s2.getSuspendedContainers()).contains(victim.toString()));
    assertEquals(s2.firstMismatch(), 0, s2.mismatches());
    SchedulerNodeReport node = s2.getNodeReport(cluster.getNodeManager(0).getNMContext().getNodeId());
    assertEquals("YARN's books after the change of RM", 3, node.getNumContainers());
    assertEquals("YARN's books after the change of RM", 3 * 256, node.getUsedResource().getMemorySize());
    for (Container t : Arrays.asList(tasks.get(0), tasks.get(1), got2.get(0))) {
      assertTrue(t.getId() + " is not in the core: " + s2.describe(), s2.coreContainerId(t.getId()) != null);
    }

    // The re-registered AM asks again; the new policy serves it once a vcore frees.
    List<Container> more = new ArrayList<>();
    Thread asker = new Thread(() -> {
      try {
        more.addAll(app1.ask(1, 60000));
      } catch (Exception e) {
        throw new RuntimeException(e);
      }
    });
    asker.start();
    Thread.sleep(500);
    assertTrue(new File(dir, "stop").createNewFile()); // the loops end
    asker.join(70000);
    assertEquals(next + " did not serve app 1's new ask: " + s2.describe(), 1, more.size());
    app1.launch(more.get(0), "/bin/true");

    List<ContainerStatus> done2 = app2.completed(1, 30000);
    assertEquals(1, done2.size());
    assertEquals(done2.get(0).toString(), 0, done2.get(0).getExitStatus());
    List<ContainerStatus> done1 = app1.completed(3, 30000);
    assertEquals(done1.toString(), 3, done1.size());
    for (ContainerStatus st : done1) {
      assertEquals(st.toString(), 0, st.getExitStatus());
    }
    assertCountedInOrder("the victim", vCount, paused + 3);
    app2.finish();
    app1.finish();
    for (Am a : Arrays.asList(app1, app2)) {
      await(a.attemptId.getApplicationId() + " finished", 20000, () -> cluster.getResourceManager().getRMContext()
          .getRMApps().get(a.attemptId.getApplicationId()).getState() == RMAppState.FINISHED);
    }
    await("the node empty in YARN's books and the core", 20000, () -> node(s2, cluster) == 0
        && s2.compare() == null, s2::describe);

    assertEquals(s2.firstMismatch(), 0, s2.mismatches());
    // A few more heartbeats, each checked, with the node empty.
    long beats = s2.checkedHeartbeats();
    await("three more heartbeats", 10000, () -> s2.checkedHeartbeats() >= beats + 3);
    assertTrue("heartbeats checked: " + s2.checkedHeartbeats(), s2.checkedHeartbeats() >= 8);
    assertEquals(s2.describe(), 0, s2.getRejections());
    assertEquals(s2.describe(), 0, s2.getDriftResyncs());
    assertEquals(s2.describe(), 0, s2.getCoreRebuilds());
    assertTrue("a drift check would rebuild", !s2.driftCheck() && !s2.driftCheck());
    assertEquals(0, exec.pausedContainers().size());
    System.out.println("across-rm: " + suspender + " -> " + next + ": " + s2.checkedHeartbeats()
        + " heartbeats checked, state " + s2.describe());
  }

  private static int node(MirrorCheckingScheduler s, MiniYARNCluster cluster) {
    return s.getNodeReport(cluster.getNodeManager(0).getNMContext().getNodeId()).getNumContainers();
  }
}
