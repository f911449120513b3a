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
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Callable;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateResponse;
import org.apache.hadoop.yarn.api.protocolrecords.RegisterApplicationMasterResponse;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.Container;
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
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.FileSystemRMStateStore;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.sojourn.yarn.FreePorts;
import org.sojourn.yarn.MirrorCheckingScheduler;
import org.sojourn.yarn.nm.SuspendListMac;
import org.sojourn.yarn.nm.SuspendingContainerExecutor;

/**
 * What the recovery tests on a MiniYARNCluster share: a cluster whose RMs run
 * Sojourn (checked against YARN's books at every heartbeat, {@link
 * MirrorCheckingScheduler}) with work-preserving recovery on a state store
 * that outlives an RM (FileSystemRMStateStore on a local directory), whose
 * NodeManagers run the suspend agent and talk to the RM over RPC (so they
 * reconnect to a restarted or newly active RM), and AMs driven by the test
 * through AMRMClient.
 */
final class RecoveryCluster {
  /** Task containers: 256 MB, 1 vcore. */
  static final Resource TASK = Resource.newInstance(256, 1);
  static final Priority PRIO = Priority.newInstance(1);

  private RecoveryCluster() {}

  /** A fresh directory under the test dir, holding the counting loop {@code loop.sh}. */
  static File workDir(String prefix) throws IOException {
    File work = new File(System.getProperty("sojourn.test.dir", "/tmp")).getAbsoluteFile();
    work.mkdirs();
    File dir = Files.createTempDirectory(work.toPath(), prefix).toFile();
    // loop.sh DIR: appends 1, 2, 3 ... to DIR/$CONTAINER_ID.count every 100 ms
    // until DIR/stop exists, then exits 0. Its pid goes to DIR/$CONTAINER_ID.pid.
    Files.write(new File(dir, "loop.sh").toPath(), ("#!/bin/bash\n"
        + "echo $$ > \"$1/$CONTAINER_ID.pid\"\n"
        + "i=0\n"
        + "while [ ! -e \"$1/stop\" ]; do i=$((i+1)); echo $i >> \"$1/$CONTAINER_ID.count\"; sleep 0.1; done\n")
        .getBytes(StandardCharsets.US_ASCII));
    return dir;
  }

  /**
   * A stand-in for an AM's process, for an AM this test drives through
   * AMRMClient: {@code am.sh DIR} waits until DIR/$CONTAINER_ID.exit exists,
   * then exits with the code written in it.
   */
  static String amProcess(File dir) throws IOException {
    File am = new File(dir, "am.sh");
    Files.write(am.toPath(), ("#!/bin/bash\n"
        + "while [ ! -e \"$1/$CONTAINER_ID.exit\" ]; do sleep 0.1; done\n"
        + "exit $(cat \"$1/$CONTAINER_ID.exit\")\n").getBytes(StandardCharsets.US_ASCII));
    return "/bin/bash " + am + " " + dir;
  }

  /** The command that runs the loop in {@code dir}. */
  static String loop(File dir) {
    return "/bin/bash " + new File(dir, "loop.sh") + " " + dir;
  }

  /**
   * Settings for one NodeManager of 2 GB and {@code vcores} vcores running
   * the agent, and RMs running Sojourn with {@code suspend=agent} and
   * work-preserving recovery into a FileSystemRMStateStore under {@code dir}.
   * Ports are fixed (so the agent knows the RM's web address before it
   * starts, and a restarted RM comes back at the same address); the caller
   * sets them (non-HA: {@link #fixPorts}).
   */
  static YarnConfiguration conf(File dir, int vcores) throws IOException {
    YarnConfiguration conf = new YarnConfiguration();
    conf.set(YarnConfiguration.RM_SCHEDULER, MirrorCheckingScheduler.class.getName());
    conf.set("yarn.scheduler.sojourn.suspend", "agent");
    conf.setLong("yarn.scheduler.sojourn.tick-ms", 50);
    // Every policy's settings at once (keys of other policies are ignored):
    // hfsp suspends the bigger job's youngest task for a smaller job; kairos
    // suspends the most-served task when a task comes to a busy node.
    conf.set("yarn.scheduler.sojourn.hfsp.preemption", "suspend");
    conf.set("yarn.scheduler.sojourn.hfsp.training_tasks", "0");
    conf.set("yarn.scheduler.sojourn.hfsp.tiny_threshold", "1");
    conf.set("yarn.scheduler.sojourn.hfsp.initial_task_ms", "600000");
    conf.set("yarn.scheduler.sojourn.kairos.quantum_ms", "50000");
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, 128);
    conf.setInt(YarnConfiguration.YARN_MINICLUSTER_NM_PMEM_MB, 2048);
    conf.setInt(YarnConfiguration.NM_PMEM_MB, 2048);
    conf.setInt(YarnConfiguration.NM_VCORES, vcores);
    conf.setBoolean(YarnConfiguration.NM_VMEM_CHECK_ENABLED, false);
    conf.setBoolean(YarnConfiguration.NM_PMEM_CHECK_ENABLED, false);
    conf.setLong(YarnConfiguration.RM_NM_HEARTBEAT_INTERVAL_MS, 200);
    conf.set(YarnConfiguration.NM_CONTAINER_EXECUTOR, SuspendingContainerExecutor.class.getName());
    conf.setLong(SuspendingContainerExecutor.POLL_MS, 200);
    File secret = new File(dir, "suspend.secret");
    Files.write(secret.toPath(), "0123456789abcdef0123456789abcdef-recovery".getBytes(StandardCharsets.US_ASCII));
    Files.setPosixFilePermissions(secret.toPath(), PosixFilePermissions.fromString("rw-------"));
    conf.set(SuspendListMac.SECRET_FILE, secret.getPath());

    // Work-preserving recovery from a store that outlives the RM.
    conf.setBoolean(YarnConfiguration.RECOVERY_ENABLED, true);
    conf.setBoolean(YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_ENABLED, true);
    conf.setLong(YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_SCHEDULING_WAIT_MS, 500);
    conf.set(YarnConfiguration.RM_STORE, FileSystemRMStateStore.class.getName());
    conf.set(YarnConfiguration.FS_RM_STATE_STORE_URI, new File(dir, "rm-state").toURI().toString());

    // NodeManagers over RPC (the in-process short cut binds to one RM
    // object), and quick reconnects to a restarted or failed-over RM.
    conf.setBoolean(YarnConfiguration.YARN_MINICLUSTER_FIXED_PORTS, true);
    conf.setBoolean(YarnConfiguration.YARN_MINICLUSTER_USE_RPC, true);
    conf.setLong(YarnConfiguration.RESOURCEMANAGER_CONNECT_RETRY_INTERVAL_MS, 100);
    conf.setLong(YarnConfiguration.RESOURCEMANAGER_CONNECT_MAX_WAIT_MS, 60000);
    conf.setLong(YarnConfiguration.NM_RESOURCEMANAGER_CONNECT_RETRY_INTERVAL_MS, 100);
    conf.setLong(YarnConfiguration.NM_RESOURCEMANAGER_CONNECT_MAX_WAIT_MS, 60000);
    conf.setInt("ipc.client.connect.max.retries", 0);
    conf.setInt("ipc.client.connect.max.retries.on.timeouts", 0);
    conf.setLong(YarnConfiguration.CLIENT_FAILOVER_SLEEPTIME_BASE_MS, 100);
    conf.setLong(YarnConfiguration.CLIENT_FAILOVER_SLEEPTIME_MAX_MS, 500);
    return conf;
  }

  /** One RM at fixed ports. */
  static void fixPorts(Configuration conf) throws IOException {
    conf.set(YarnConfiguration.RM_ADDRESS, "127.0.0.1:" + FreePorts.next());
    conf.set(YarnConfiguration.RM_SCHEDULER_ADDRESS, "127.0.0.1:" + FreePorts.next());
    conf.set(YarnConfiguration.RM_RESOURCE_TRACKER_ADDRESS, "127.0.0.1:" + FreePorts.next());
    conf.set(YarnConfiguration.RM_ADMIN_ADDRESS, "127.0.0.1:" + FreePorts.next());
    conf.set(YarnConfiguration.RM_WEBAPP_ADDRESS, "127.0.0.1:" + FreePorts.next());
  }

  /** Restarts the (only) RM in place with {@code policy}; waits for the NodeManager to re-register. */
  static MirrorCheckingScheduler restart(MiniYARNCluster cluster, String policy) throws Exception {
    cluster.getConfig().set("yarn.scheduler.sojourn.policy", policy);
    QueueMetrics.clearQueueMetrics(); // the new RM's queues start their metrics afresh
    long t0 = System.currentTimeMillis();
    cluster.restartResourceManager(0);
    MirrorCheckingScheduler s = scheduler(cluster);
    assertEquals(policy, s.getPolicy());
    await("the NodeManager re-registers with the restarted RM", 60000, () -> s.getNumClusterNodes() == 1);
    System.out.println("rm-restart: RM restarted with " + policy + " in " + (System.currentTimeMillis() - t0)
        + " ms");
    return s;
  }

  /** The active RM's scheduler. */
  static MirrorCheckingScheduler scheduler(MiniYARNCluster cluster) {
    ResourceManager rm = cluster.getResourceManager();
    assertTrue("no active ResourceManager", rm != null);
    return (MirrorCheckingScheduler) rm.getResourceScheduler();
  }

  /** Waits up to {@code ms} for {@code cond}; fails naming {@code what} (with {@code detail}). */
  static void await(String what, long ms, Callable<Boolean> cond, Callable<String> detail) throws Exception {
    long end = System.currentTimeMillis() + ms;
    while (System.currentTimeMillis() < end) {
      if (cond.call()) {
        return;
      }
      Thread.sleep(100);
    }
    if (!cond.call()) {
      throw new AssertionError("timed out after " + ms + " ms waiting for " + what + ": " + detail.call());
    }
  }

  static void await(String what, long ms, Callable<Boolean> cond) throws Exception {
    await(what, ms, cond, () -> "");
  }

  static int count(File f) throws IOException {
    return f.exists() ? Files.readAllLines(f.toPath()).size() : 0;
  }

  /** The state letter of /proc/<pid>/stat ('T': stopped); 'X' if gone. */
  static char procState(String pid) throws IOException {
    File stat = new File("/proc/" + pid + "/stat");
    if (!stat.exists()) {
      return 'X';
    }
    String s = new String(Files.readAllBytes(stat.toPath()), StandardCharsets.US_ASCII);
    return s.charAt(s.lastIndexOf(')') + 2);
  }

  static String read(File f) throws IOException {
    return new String(Files.readAllBytes(f.toPath()), StandardCharsets.US_ASCII).trim();
  }

  /** Asserts {@code f} holds 1, 2, ... n, each once and in order, for some n >= {@code atLeast}. */
  static void assertCountedInOrder(String what, File f, int atLeast) throws IOException {
    List<String> lines = Files.readAllLines(f.toPath());
    List<String> expected = new ArrayList<>();
    for (int i = 1; i <= lines.size(); i++) {
      expected.add(Integer.toString(i));
    }
    assertEquals(what + ": the work is not intact", expected, lines);
    assertTrue(what + " counted only " + lines.size(), lines.size() >= atLeast);
  }

  /** An AM run by this test through AMRMClient: its own UGI, AMRM token and NM tokens. */
  static final class Am {
    final ApplicationAttemptId attemptId;
    final UserGroupInformation ugi;
    final AMRMClient<ContainerRequest> amrm;
    final NMClient nm;
    final RegisterApplicationMasterResponse registration;

    Am(ApplicationAttemptId attemptId, UserGroupInformation ugi, AMRMClient<ContainerRequest> amrm, NMClient nm,
        RegisterApplicationMasterResponse registration) {
      this.attemptId = attemptId;
      this.ugi = ugi;
      this.amrm = amrm;
      this.nm = nm;
      this.registration = registration;
    }

    <T> T as(PrivilegedExceptionAction<T> a) throws Exception {
      return ugi.doAs(a);
    }

    /** Every completed container any pull has brought, in order. */
    private final List<ContainerStatus> done = new ArrayList<>();

    /** One allocate call; its completed containers are kept for {@link #completed}. */
    private synchronized AllocateResponse pull(float progress) throws Exception {
      AllocateResponse r = as(() -> amrm.allocate(progress));
      done.addAll(r.getCompletedContainersStatuses());
      return r;
    }

    /** Asks for {@code n} task containers and pulls until they come (or the time is up). */
    List<Container> ask(int n, long timeoutMs) throws Exception {
      return ask(n, TASK, timeoutMs);
    }

    /** Asks for {@code n} containers of {@code size} and pulls until they come (or the time is up). */
    List<Container> ask(int n, Resource size, long timeoutMs) throws Exception {
      for (int i = 0; i < n; i++) {
        amrm.addContainerRequest(new ContainerRequest(size, null, null, PRIO));
      }
      List<Container> got = new ArrayList<>();
      long end = System.currentTimeMillis() + timeoutMs;
      while (got.size() < n && System.currentTimeMillis() < end) {
        got.addAll(pull(0.1f).getAllocatedContainers());
        if (got.size() < n) {
          Thread.sleep(100);
        }
      }
      for (int i = 0; i < got.size(); i++) {
        amrm.removeContainerRequest(new ContainerRequest(size, null, null, PRIO));
      }
      return got;
    }

    void launch(Container c, String command) throws Exception {
      ContainerLaunchContext clc = ContainerLaunchContext.newInstance(Collections.emptyMap(),
          Collections.emptyMap(), Collections.singletonList(command), null, null, null);
      nm.startContainer(c, clc);
    }

    /** Pulls until {@code n} containers have completed in all (or the time is up); returns them all. */
    List<ContainerStatus> completed(int n, long timeoutMs) throws Exception {
      long end = System.currentTimeMillis() + timeoutMs;
      while (System.currentTimeMillis() < end) {
        pull(0.5f);
        synchronized (this) {
          if (done.size() >= n) {
            break;
          }
        }
        Thread.sleep(200);
      }
      synchronized (this) {
        return new ArrayList<>(done);
      }
    }

    void finish() throws Exception {
      as(() -> {
        amrm.unregisterApplicationMaster(FinalApplicationStatus.SUCCEEDED, "", "");
        return null;
      });
      stop();
    }

    /** Stops the clients without unregistering (the AM "dies"). */
    void stop() {
      nm.stop();
      amrm.stop();
    }
  }

  /** Submits an application and returns its id. */
  static ApplicationId submit(YarnClient yc, String name, boolean unmanaged, ContainerLaunchContext am,
      Resource amResource, int maxAttempts, boolean keepContainers) throws Exception {
    YarnClientApplication app = yc.createApplication();
    ApplicationSubmissionContext ctx = app.getApplicationSubmissionContext();
    ctx.setApplicationName(name);
    ctx.setQueue("default");
    ctx.setUnmanagedAM(unmanaged);
    ctx.setAMContainerSpec(am);
    ctx.setResource(amResource);
    ctx.setMaxAppAttempts(maxAttempts);
    ctx.setKeepContainersAcrossApplicationAttempts(keepContainers);
    yc.submitApplication(ctx);
    return ctx.getApplicationId();
  }

  /** An unmanaged AM for a new application {@code name}: the test is its AM. */
  static Am unmanagedAm(MiniYARNCluster cluster, YarnClient yc, String name, Configuration conf) throws Exception {
    ApplicationId appId = submit(yc, name, true,
        ContainerLaunchContext.newInstance(null, null, null, null, null, null), Resource.newInstance(128, 1), 1,
        false);
    return register(cluster, appId, 1, conf);
  }

  /**
   * Registers as the AM of {@code appId}'s attempt number {@code attempt} once
   * the RM has launched it, with the attempt's own AMRM token.
   */
  static Am register(MiniYARNCluster cluster, ApplicationId appId, int attempt, Configuration conf) throws Exception {
    RMAppAttempt[] found = new RMAppAttempt[1];
    await("attempt " + attempt + " of " + appId + " launched", 30000, () -> {
      RMApp rmApp = cluster.getResourceManager().getRMContext().getRMApps().get(appId);
      RMAppAttempt a = rmApp == null ? null : rmApp.getCurrentAppAttempt();
      found[0] = a;
      return a != null && a.getAppAttemptId().getAttemptId() == attempt
          && a.getAppAttemptState() == RMAppAttemptState.LAUNCHED;
    }, () -> String.valueOf(found[0] == null ? null : found[0].getAppAttemptState()));
    RMAppAttempt a = found[0];
    Token<AMRMTokenIdentifier> token = a.getAMRMToken();
    token.setService(ClientRMProxy.getAMRMTokenService(conf));
    UserGroupInformation ugi = UserGroupInformation.createRemoteUser(a.getAppAttemptId().toString());
    ugi.addToken(token);
    NMTokenCache tokens = new NMTokenCache();
    // The RM proxy takes the UGI it is made under: make it as the AM.
    AMRMClient<ContainerRequest> amrm = ugi.doAs((PrivilegedExceptionAction<AMRMClient<ContainerRequest>>) () -> {
      AMRMClient<ContainerRequest> client = AMRMClient.createAMRMClient();
      client.setNMTokenCache(tokens);
      client.init(conf);
      client.start();
      return client;
    });
    RegisterApplicationMasterResponse reg = ugi.doAs(
        (PrivilegedExceptionAction<RegisterApplicationMasterResponse>) () ->
            amrm.registerApplicationMaster("", 0, ""));
    NMClient nm = NMClient.createNMClient();
    nm.setNMTokenCache(tokens);
    // An AM that dies leaves its containers running (stop() would kill them).
    nm.cleanupRunningContainersOnStop(false);
    nm.init(conf);
    nm.start();
    return new Am(a.getAppAttemptId(), ugi, amrm, nm, reg);
  }
}
