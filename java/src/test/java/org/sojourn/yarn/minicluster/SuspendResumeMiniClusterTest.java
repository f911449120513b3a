package org.sojourn.yarn.minicluster;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.PrivilegedExceptionAction;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateResponse;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.FinalApplicationStatus;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.client.ClientRMProxy;
import org.apache.hadoop.yarn.client.api.AMRMClient;
import org.apache.hadoop.yarn.client.api.AMRMClient.ContainerRequest;
import org.apache.hadoop.yarn.client.api.NMClient;
import org.apache.hadoop.yarn.client.api.NMTokenCache;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.client.api.YarnClientApplication;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.security.AMRMTokenIdentifier;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.junit.Test;
import org.sojourn.yarn.FreePorts;
import org.sojourn.yarn.SojournScheduler;
import org.sojourn.yarn.nm.SuspendListMac;
import org.sojourn.yarn.nm.SuspendingContainerExecutor;

/**
 * A real container paused and resumed on a stock Hadoop NodeManager.
 *
 * <p>A MiniYARNCluster: the RM runs Sojourn with hfsp (preemption=suspend) and
 * {@code yarn.scheduler.sojourn.suspend=agent}; its one NodeManager (2 GB, 2
 * vcores) runs {@link SuspendingContainerExecutor}, which acts on the RM's
 * list signed with a shared secret file. App 1 (an unmanaged AM,
 * this test) runs two containers, each a shell loop that appends 1, 2, ... N
 * to a file every 100 ms and exits 0. App 2, smaller, asks for one container:
 * hfsp suspends app 1's youngest task for it (no vcore is free; memory is).
 * The test checks the victim's processes are stopped ('T' in /proc) and its
 * count does not move for 2.5 s while app 2's task runs; then app 2's task
 * ends, hfsp resumes the victim, and it counts on to N and exits 0 with every
 * number written once, in order.
 *
 * <p>A second case does the same with kairos, whose own decision (a new task
 * on a node whose vcores are all busy suspends the running task with the most
 * attained service) drives the suspension: see
 * {@link #kairosSuspendsTheLongTaskForAShortOneAndResumesItWithItsWorkIntact}.
 * Slow (about 40 s a case): run with -PwithMiniCluster.
 */
public class SuspendResumeMiniClusterTest {
  private static final int N = 60;
  private static final Priority PRIO = Priority.newInstance(1);

  /** An unmanaged AM run by this test: its own UGI, AMRM token and NM tokens. */
  private static final class Am {
    final UserGroupInformation ugi;
    final AMRMClient<ContainerRequest> amrm;
    final NMClient nm;

    Am(UserGroupInformation ugi, AMRMClient<ContainerRequest> amrm, NMClient nm) {
      this.ugi = ugi;
      this.amrm = amrm;
      this.nm = nm;
    }

    <T> T as(PrivilegedExceptionAction<T> a) throws Exception {
      return ugi.doAs(a);
    }

    List<Container> ask(int n, long timeoutMs) throws Exception {
      for (int i = 0; i < n; i++) {
        amrm.addContainerRequest(new ContainerRequest(Resource.newInstance(256, 1), null, null, PRIO));
      }
      List<Container> got = new ArrayList<>();
      long end = System.currentTimeMillis() + timeoutMs;
      while (got.size() < n && System.currentTimeMillis() < end) {
        AllocateResponse r = as(() -> amrm.allocate(0.1f));
        got.addAll(r.getAllocatedContainers());
        Thread.sleep(100);
      }
      for (Container c : got) {
        amrm.removeContainerRequest(new ContainerRequest(Resource.newInstance(256, 1), null, null, PRIO));
      }
      return got;
    }

    void launch(Container c, String command) throws Exception {
      ContainerLaunchContext clc = ContainerLaunchContext.newInstance(Collections.emptyMap(),
          Collections.emptyMap(), Collections.singletonList(command), null, null, null);
      nm.startContainer(c, clc);
    }

    List<ContainerStatus> completed(int n, long timeoutMs) throws Exception {
      List<ContainerStatus> out = new ArrayList<>();
      long end = System.currentTimeMillis() + timeoutMs;
      while (out.size() < n && System.currentTimeMillis() < end) {
        out.addAll(as(() -> amrm.allocate(0.5f)).getCompletedContainersStatuses());
        Thread.sleep(200);
      }
      return out;
    }

    void finish() throws Exception {
      as(() -> {
        amrm.unregisterApplicationMaster(FinalApplicationStatus.SUCCEEDED, "", "");
        return null;
      });
      nm.stop();
      amrm.stop();
    }
  }

  private static Am unmanagedAm(MiniYARNCluster cluster, YarnClient yc, String name, Configuration conf)
      throws Exception {
    YarnClientApplication app = yc.createApplication();
    ApplicationSubmissionContext ctx = app.getApplicationSubmissionContext();
    ApplicationId appId = ctx.getApplicationId();
    ctx.setApplicationName(name);
    ctx.setQueue("default");
    ctx.setUnmanagedAM(true);
    ctx.setAMContainerSpec(ContainerLaunchContext.newInstance(null, null, null, null, null, null));
    ctx.setResource(Resource.newInstance(256, 1));
    yc.submitApplication(ctx);
    RMAppAttempt attempt = null;
    for (int i = 0; i < 200; i++) {
      RMApp rmApp = cluster.getResourceManager().getRMContext().getRMApps().get(appId);
      attempt = rmApp == null ? null : rmApp.getCurrentAppAttempt();
      if (attempt != null && attempt.getAppAttemptState() == RMAppAttemptState.LAUNCHED) {
        break;
      }
      Thread.sleep(100);
    }
    assertTrue("the unmanaged AM of " + name + " was not launched",
        attempt != null && attempt.getAppAttemptState() == RMAppAttemptState.LAUNCHED);
    Token<AMRMTokenIdentifier> token = attempt.getAMRMToken();
    token.setService(ClientRMProxy.getAMRMTokenService(conf));
    UserGroupInformation ugi = UserGroupInformation.createRemoteUser(attempt.getAppAttemptId().toString());
    ugi.addToken(token);
    NMTokenCache tokens = new NMTokenCache();
    AMRMClient<ContainerRequest> amrm = ugi.doAs((PrivilegedExceptionAction<AMRMClient<ContainerRequest>>) () -> {
      AMRMClient<ContainerRequest> c = AMRMClient.createAMRMClient();
      c.setNMTokenCache(tokens);
      c.init(conf);
      c.start();
      c.registerApplicationMaster("", 0, "");
      return c;
    });
    NMClient nm = NMClient.createNMClient();
    nm.setNMTokenCache(tokens);
    nm.init(conf);
    nm.start();
    return new Am(ugi, amrm, nm);
  }

  private static int count(File f) throws IOException {
    return f.exists() ? Files.readAllLines(f.toPath()).size() : 0;
  }

  /** The state letter of /proc/<pid>/stat ('T': stopped). */
  private static char procState(String pid) throws IOException {
    String stat = new String(Files.readAllBytes(new File("/proc/" + pid + "/stat").toPath()),
        StandardCharsets.US_ASCII);
    return stat.charAt(stat.lastIndexOf(')') + 2);
  }

  private static String read(File f) throws IOException {
    return new String(Files.readAllBytes(f.toPath()), StandardCharsets.US_ASCII).trim();
  }

  /** A fresh directory with the counting loop: {@code loop.sh DIR N} appends 1..N to DIR/$CONTAINER_ID.count. */
  private static File workDir(String prefix) throws IOException {
    File work = new File(System.getProperty("sojourn.test.dir", "/tmp")).getAbsoluteFile();
    work.mkdirs();
    File dir = Files.createTempDirectory(work.toPath(), prefix).toFile();
    Files.write(new File(dir, "loop.sh").toPath(), ("#!/bin/bash\n"
        + "echo $$ > \"$1/$CONTAINER_ID.pid\"\n"
        + "i=0\n"
        + "while [ $i -lt $2 ]; do i=$((i+1)); echo $i >> \"$1/$CONTAINER_ID.count\"; sleep 0.1; done\n")
        .getBytes(StandardCharsets.US_ASCII));
    return dir;
  }

  /**
   * The cluster's settings apart from the policy: one NodeManager of 2 GB and
   * {@code vcores} vcores running the agent, suspend=agent on the RM.
   */
  private static YarnConfiguration clusterConf(int vcores) throws IOException {
    YarnConfiguration conf = new YarnConfiguration();
    conf.set(YarnConfiguration.RM_SCHEDULER, SojournScheduler.class.getName());
    conf.set("yarn.scheduler.sojourn.suspend", "agent");
    conf.setLong("yarn.scheduler.sojourn.tick-ms", 50);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, 128);
    conf.setInt("yarn.minicluster.yarn.nodemanager.resource.memory-mb", 2048);
    conf.setInt(YarnConfiguration.NM_VCORES, vcores);
    conf.setBoolean(YarnConfiguration.NM_VMEM_CHECK_ENABLED, false);
    conf.setBoolean(YarnConfiguration.NM_PMEM_CHECK_ENABLED, false);
    conf.setLong(YarnConfiguration.RM_NM_HEARTBEAT_INTERVAL_MS, 200);
    conf.set(YarnConfiguration.NM_CONTAINER_EXECUTOR, SuspendingContainerExecutor.class.getName());
    conf.setLong(SuspendingContainerExecutor.POLL_MS, 200);
    // The shared secret the RM signs the list with and the agent checks it with
    // (one file here: the RM and the NodeManager share the machine).
    File secret = new File(workDir("secret"), "suspend.secret");
    Files.write(secret.toPath(), "0123456789abcdef0123456789abcdef-minicluster".getBytes(StandardCharsets.US_ASCII));
    Files.setPosixFilePermissions(secret.toPath(), PosixFilePermissions.fromString("rw-------"));
    conf.set(SuspendListMac.SECRET_FILE, secret.getPath());
    // Fixed RM ports, so the NodeManager's agent knows the RM's web address
    // before the RM starts (MiniYARNCluster's ephemeral ports are bound later).
    conf.setBoolean(YarnConfiguration.YARN_MINICLUSTER_FIXED_PORTS, true);
    conf.set(YarnConfiguration.RM_ADDRESS, "127.0.0.1:" + FreePorts.next());
    conf.set(YarnConfiguration.RM_SCHEDULER_ADDRESS, "127.0.0.1:" + FreePorts.next());
    conf.set(YarnConfiguration.RM_RESOURCE_TRACKER_ADDRESS, "127.0.0.1:" + FreePorts.next());
    conf.set(YarnConfiguration.RM_ADMIN_ADDRESS, "127.0.0.1:" + FreePorts.next());
    conf.set(YarnConfiguration.RM_WEBAPP_ADDRESS, "127.0.0.1:" + FreePorts.next());
    return conf;
  }

  @Test(timeout = 180000)
  public void aRealContainerIsPausedByTheAgentAndResumesWithItsWorkIntact() throws Exception {
    File dir = workDir("suspend");
    File loop = new File(dir, "loop.sh");
    YarnConfiguration conf = clusterConf(2);
    conf.set("yarn.scheduler.sojourn.policy", "hfsp");
    conf.set("yarn.scheduler.sojourn.hfsp.preemption", "suspend");
    conf.set("yarn.scheduler.sojourn.hfsp.training_tasks", "0");
    conf.set("yarn.scheduler.sojourn.hfsp.tiny_threshold", "1");
    conf.set("yarn.scheduler.sojourn.hfsp.initial_task_ms", "600000");

    MiniYARNCluster cluster = new MiniYARNCluster("sojourn-suspend", 1, 1, 1);
    cluster.init(conf);
    cluster.start();
    YarnClient yc = YarnClient.createYarnClient();
    try {
      assertTrue(cluster.waitForNodeManagersToConnect(20000));
      Configuration c = cluster.getConfig();
      SojournScheduler s = (SojournScheduler) cluster.getResourceManager().getResourceScheduler();
      yc.init(c);
      yc.start();

      // App 1: two counting loops fill the node's 2 vcores.
      Am app1 = unmanagedAm(cluster, yc, "app1", c);
      List<Container> tasks = app1.ask(2, 30000);
      assertEquals("app 1 got " + tasks + ": " + s.describe(), 2, tasks.size());
      String cmd = "/bin/bash " + loop + " " + dir + " " + N;
      for (Container t : tasks) {
        app1.launch(t, cmd);
      }
      for (Container t : tasks) {
        File f = new File(dir, t.getId() + ".count");
        for (int i = 0; i < 100 && count(f) < 3; i++) {
          Thread.sleep(100);
        }
        assertTrue(t.getId() + " does not count", count(f) >= 3);
      }

      // App 2 asks for one container: hfsp suspends one of app 1's.
      Am app2 = unmanagedAm(cluster, yc, "app2", c);
      List<Container> got2 = app2.ask(1, 30000);
      assertEquals("app 2 got no container: " + s.describe(), 1, got2.size());
      String[] listed = s.getSuspendedContainers();
      assertEquals(Arrays.toString(listed) + " " + s.describe(), 1, listed.length);
      ContainerId victim = ContainerId.fromString(listed[0]);
      Container other = tasks.get(0).getId().equals(victim) ? tasks.get(1) : tasks.get(0);
      assertTrue(victim + " is not app 1's", tasks.get(0).getId().equals(victim)
          || tasks.get(1).getId().equals(victim));
      app2.launch(got2.get(0), "sleep 5");

      File vCount = new File(dir, victim + ".count");
      File oCount = new File(dir, other.getId() + ".count");
      String pid = read(new File(dir, victim + ".pid"));
      char st = 0;
      for (int i = 0; i < 100 && (st = procState(pid)) != 'T'; i++) {
        Thread.sleep(100);
      }
      assertEquals("the victim's shell (pid " + pid + ") is not stopped", 'T', st);
      SuspendingContainerExecutor exec = (SuspendingContainerExecutor) cluster.getNodeManager(0)
          .getNMContext().getContainerExecutor();
      assertEquals(Collections.singleton(victim), exec.pausedContainers());
      int paused = count(vCount);
      int otherBefore = count(oCount);
      Thread.sleep(2500);
      assertEquals("the suspended container kept counting", paused, count(vCount));
      assertEquals('T', procState(pid));
      assertTrue("the other container stopped too", count(oCount) > otherBefore || count(oCount) == N);
      assertTrue("the victim finished before it was paused", paused < N);

      // App 2's task ends; hfsp resumes the victim; the agent continues it.
      List<ContainerStatus> done2 = app2.completed(1, 30000);
      assertEquals(1, done2.size());
      assertEquals(0, done2.get(0).getExitStatus());
      for (int i = 0; i < 100 && count(vCount) == paused; i++) {
        Thread.sleep(100);
      }
      assertTrue("the victim did not resume: " + s.describe(), count(vCount) > paused);
      assertEquals(0, s.getSuspendedContainers().length);

      List<ContainerStatus> done1 = app1.completed(2, 60000);
      assertEquals(2, done1.size());
      for (ContainerStatus cs : done1) {
        assertEquals(cs.toString(), 0, cs.getExitStatus());
      }
      List<String> lines = Files.readAllLines(vCount.toPath());
      List<String> expected = new ArrayList<>();
      for (int i = 1; i <= N; i++) {
        expected.add(Integer.toString(i));
      }
      assertEquals("the victim's work is not intact", expected, lines);
      String d = s.describe();
      assertTrue(d, d.contains("\"suspensions\":1") && d.contains("\"resumes\":1"));
      app2.finish();
      app1.finish();
    } finally {
      yc.stop();
      cluster.stop();
    }
  }

  /**
   * Issue #5: the same path driven by kairos's own decision. The NodeManager
   * has 1 vcore and 2 GB: memory for two 256 MB containers, a core for one
   * (kairos's N is the node's vcores). App 1's long loop (1..LONG) runs alone;
   * app 2's short loop (1..SHORT) arrives: kairos starts it at once and
   * suspends the running task with the most attained service, app 1's. The
   * short one runs to completion while the long one is stopped; then kairos
   * resumes the long one (the least-served suspended task, the only one), and
   * it completes with 1..LONG, each number once and in order. The quantum
   * (W = 50 s by default) is longer than the test, so no swap at a quantum's
   * end interferes; N = 1 and Q = 4 let the one node hold both.
   */
  @Test(timeout = 180000)
  public void kairosSuspendsTheLongTaskForAShortOneAndResumesItWithItsWorkIntact() throws Exception {
    final int longN = 100;
    final int shortN = 30;
    File dir = workDir("kairos");
    File loop = new File(dir, "loop.sh");
    YarnConfiguration conf = clusterConf(1);
    conf.set("yarn.scheduler.sojourn.policy", "kairos");
    conf.set("yarn.scheduler.sojourn.kairos.quantum_ms", "50000");

    MiniYARNCluster cluster = new MiniYARNCluster("sojourn-kairos", 1, 1, 1);
    cluster.init(conf);
    cluster.start();
    YarnClient yc = YarnClient.createYarnClient();
    try {
      assertTrue(cluster.waitForNodeManagersToConnect(20000));
      Configuration c = cluster.getConfig();
      SojournScheduler s = (SojournScheduler) cluster.getResourceManager().getResourceScheduler();
      assertEquals("kairos", s.getPolicy());
      yc.init(c);
      yc.start();

      // App 1: the long loop takes the node's only vcore.
      Am app1 = unmanagedAm(cluster, yc, "long", c);
      List<Container> got1 = app1.ask(1, 30000);
      assertEquals("app 1 got " + got1 + ": " + s.describe(), 1, got1.size());
      ContainerId longId = got1.get(0).getId();
      app1.launch(got1.get(0), "/bin/bash " + loop + " " + dir + " " + longN);
      File lCount = new File(dir, longId + ".count");
      for (int i = 0; i < 100 && count(lCount) < 3; i++) {
        Thread.sleep(100);
      }
      assertTrue(longId + " does not count", count(lCount) >= 3);

      // App 2's short task arrives: kairos suspends the long one for it.
      Am app2 = unmanagedAm(cluster, yc, "short", c);
      List<Container> got2 = app2.ask(1, 30000);
      assertEquals("app 2 got no container: " + s.describe(), 1, got2.size());
      ContainerId shortId = got2.get(0).getId();
      assertEquals(s.describe(), Collections.singletonList(longId.toString()),
          Arrays.asList(s.getSuspendedContainers()));
      app2.launch(got2.get(0), "/bin/bash " + loop + " " + dir + " " + shortN);

      String pid = read(new File(dir, longId + ".pid"));
      char st = 0;
      for (int i = 0; i < 100 && (st = procState(pid)) != 'T'; i++) {
        Thread.sleep(100);
      }
      assertEquals("the long task's shell (pid " + pid + ") is not stopped", 'T', st);
      int paused = count(lCount);
      assertTrue("the long task finished before it was paused", paused < longN);

      // The short one runs to completion while the long one stays stopped
      // (sampled until the short one's last number: kairos can only resume
      // the long one once the short container has ended).
      File sCount = new File(dir, shortId + ".count");
      int shortSeen = count(sCount);
      for (int i = 0; i < 300 && count(sCount) < shortN; i++) {
        assertEquals("the long task counted while the short one ran", paused, count(lCount));
        Thread.sleep(50);
      }
      assertEquals(shortN, count(sCount));
      assertTrue("the short task did not run while the long one was stopped", shortSeen < shortN);
      List<ContainerStatus> done2 = app2.completed(1, 30000);
      assertEquals(1, done2.size());
      assertEquals(done2.get(0).toString(), 0, done2.get(0).getExitStatus());

      // Kairos resumes the long one; it completes with its work intact.
      for (int i = 0; i < 100 && count(lCount) == paused; i++) {
        Thread.sleep(100);
      }
      assertTrue("the long task did not resume: " + s.describe(), count(lCount) > paused);
      assertEquals(0, s.getSuspendedContainers().length);
      List<ContainerStatus> done1 = app1.completed(1, 60000);
      assertEquals(1, done1.size());
      assertEquals(done1.get(0).toString(), 0, done1.get(0).getExitStatus());
      List<String> expected = new ArrayList<>();
      for (int i = 1; i <= longN; i++) {
        expected.add(Integer.toString(i));
      }
      assertEquals("the long task's work is not intact", expected, Files.readAllLines(lCount.toPath()));
      String d = s.describe();
      assertTrue(d, d.contains("\"suspensions\":1") && d.contains("\"resumes\":1")
          && d.contains("\"preemption_kills\":0"));
      app2.finish();
      app1.finish();
    } finally {
      yc.stop();
      cluster.stop();
    }
  }
}
