package org.sojourn.yarn;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import javax.management.ObjectName;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateResponse;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerExitStatus;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerState;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.PreemptionContainer;
import org.apache.hadoop.yarn.api.records.PreemptionMessage;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerState;
import org.apache.log4j.AppenderSkeleton;
import org.apache.log4j.Level;
import org.apache.log4j.Logger;
import org.apache.log4j.spi.LoggingEvent;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/**
 * Suspend decisions made by a real policy (hfsp with preemption=suspend),
 * carried out by each {@code yarn.scheduler.sojourn.suspend} mode.
 *
 * <p>The scene: one node of 8 GB and 4 vcores. Two AMs (2 vcores), then app
 * 1's two tasks fill the other 2 vcores. App 2, smaller (one task), asks for
 * one: hfsp ranks it first and, with no vcore free, suspends app 1's youngest
 * task (the node has memory left for app 2's task, which a suspend needs).
 */
public class SuspendTest extends SojournTestBase {
  private static final ObjectName BEAN = bean();

  private final List<String> logged = new ArrayList<>();
  private AppenderSkeleton capture;

  private static ObjectName bean() {
    try {
      return new ObjectName("Hadoop:service=ResourceManager,name=SojournScheduler");
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  @Before
  public void captureLogs() {
    capture = new AppenderSkeleton() {
      @Override
      protected void append(LoggingEvent e) {
        synchronized (logged) {
          logged.add(e.getLevel() + " " + e.getRenderedMessage());
        }
      }

      @Override
      public void close() {}

      @Override
      public boolean requiresLayout() {
        return false;
      }
    };
    Logger l = Logger.getLogger(SojournScheduler.class);
    l.setLevel(Level.DEBUG); // rejection reasons, for failure messages
    l.addAppender(capture);
  }

  @After
  public void releaseLogs() {
    Logger l = Logger.getLogger(SojournScheduler.class);
    l.removeAppender(capture);
    l.setLevel(null); // back to the inherited level for the other tests
  }

  private boolean loggedLine(String prefix) {
    synchronized (logged) {
      for (String s : logged) {
        if (s.startsWith(prefix)) {
          return true;
        }
      }
      return false;
    }
  }

  private String rejectionsLogged() {
    StringBuilder b = new StringBuilder();
    synchronized (logged) {
      for (String s : logged.subList(Math.max(0, logged.size() - 30), logged.size())) {
        b.append(s).append('\n');
      }
    }
    return b.toString();
  }

  static YarnConfiguration hfspSuspend(String mode) {
    YarnConfiguration conf = conf();
    conf.set("yarn.scheduler.sojourn.policy", "hfsp");
    conf.set("yarn.scheduler.sojourn.hfsp.preemption", "suspend");
    conf.set("yarn.scheduler.sojourn.hfsp.training_tasks", "0"); // no training tasks (never victims)
    conf.set("yarn.scheduler.sojourn.hfsp.tiny_threshold", "1"); // no tiny phases (never victims)
    conf.set("yarn.scheduler.sojourn.hfsp.initial_task_ms", "600000"); // aging cannot reorder the apps
    conf.set("yarn.scheduler.sojourn.suspend", mode);
    conf.setLong("yarn.scheduler.sojourn.preemption.grace-ms", 300);
    conf.setLong("yarn.scheduler.sojourn.tick-ms", 20);
    return conf;
  }

  /** The scene up to app 2's ask; returns app 1's tasks. */
  private List<Container> fillTheNode(MockNM nm, MockAM am1) throws Exception {
    List<Container> tasks = allocateAndWait(am1, nm, GB, 1, 2);
    assertEquals(2, tasks.size());
    for (Container c : tasks) {
      nm.nodeHeartbeat(am1.getApplicationAttemptId(), c.getId().getContainerId(), ContainerState.RUNNING);
      rm.waitForState(nm, c.getId(), RMContainerState.RUNNING);
    }
    assertEquals(4, usedVcores(nm));
    assertEquals(0, scheduler().getSuspendedContainers().length);
    return tasks;
  }

  private int usedVcores(MockNM nm) {
    return rm.getResourceScheduler().getNodeReport(nm.getNodeId()).getUsedResource().getVirtualCores();
  }

  /** App 2 asks for one task; heartbeats until it gets it (or not). */
  private List<Container> askOne(MockAM am2, MockNM nm, int heartbeats) throws Exception {
    am2.addRequests(new String[] {"*"}, GB, 1, 1);
    List<Container> got = new ArrayList<>(am2.schedule().getAllocatedContainers());
    for (int i = 0; i < heartbeats && got.isEmpty(); i++) {
      nm.nodeHeartbeat(true);
      rm.drainEvents();
      got.addAll(am2.schedule().getAllocatedContainers());
      if (got.isEmpty()) {
        Thread.sleep(20);
      }
    }
    return got;
  }

  @Test(timeout = 60000)
  public void agentModeKeepsTheSuspendedContainerRunningAndListsItUntilTheResume() throws Exception {
    start(hfspSuspend("agent"));
    assertTrue(logged.toString(), loggedLine(
        "INFO sojourn: suspend decisions are carried out by the NodeManager agent (SuspendingContainerExecutor)"));
    MockNM nm = rm.registerNode("127.0.0.1:1234", 8 * GB, 4);
    MockAM am1 = MockRM.launchAndRegisterAM(submit(GB, "default", "alice"), rm, nm);
    MockAM am2 = MockRM.launchAndRegisterAM(submit(GB, "default", "bob"), rm, nm);
    List<Container> tasks = fillTheNode(nm, am1);
    Set<ContainerId> app1 = new HashSet<>(ids(tasks));

    List<Container> got = askOne(am2, nm, 50);
    assertEquals("app 2 got no container: " + scheduler().describe(), 1, got.size());

    // One of app 1's tasks is suspended: listed (scheduler and JMX), still RUNNING in YARN.
    String[] listed = scheduler().getSuspendedContainers();
    assertEquals(Arrays.toString(listed), 1, listed.length);
    assertArrayEquals(listed, (String[]) ManagementFactory.getPlatformMBeanServer().getAttribute(BEAN,
        "SuspendedContainers"));
    assertEquals("agent", ManagementFactory.getPlatformMBeanServer().getAttribute(BEAN, "SuspendMode"));
    ContainerId victim = ContainerId.fromString(listed[0]);
    assertTrue(victim + " is not one of app 1's tasks " + app1, app1.contains(victim));
    RMContainer v = scheduler().getRMContainer(victim);
    assertNotNull("YARN released the suspended container", v);
    assertEquals(RMContainerState.RUNNING, v.getState());
    assertTrue(am1.schedule().getCompletedContainersStatuses().isEmpty());
    // YARN's books keep it whole: its memory is held, and its vcore is
    // counted though app 2's task runs on it (5 of 4 vcores).
    assertEquals(5 * GB, usedMb(nm));
    assertEquals(5, usedVcores(nm));
    assertEquals(1, describe().path("suspended").asInt());
    assertEquals(0, describe().path("preemption_kills").asInt());
    assertEquals(5, describe().path("core").path("cluster").path("containers").asInt());

    // App 2's task ends: the node has a vcore again, hfsp resumes app 1's task.
    Container t2 = got.get(0);
    nm.nodeHeartbeat(am2.getApplicationAttemptId(), t2.getId().getContainerId(), ContainerState.RUNNING);
    nm.nodeHeartbeat(am2.getApplicationAttemptId(), t2.getId().getContainerId(), ContainerState.COMPLETE);
    rm.drainEvents();
    for (int i = 0; i < 50 && scheduler().getSuspendedContainers().length > 0; i++) {
      nm.nodeHeartbeat(true);
      rm.drainEvents();
      Thread.sleep(20);
    }
    assertEquals(0, scheduler().getSuspendedContainers().length);
    assertEquals(1, describe().path("resumes").asInt());
    assertEquals(RMContainerState.RUNNING, scheduler().getRMContainer(victim).getState());
    assertEquals(4 * GB, usedMb(nm));
    assertEquals(4, usedVcores(nm));
    assertTrue(loggedLine("INFO sojourn: suspending " + victim));
    assertTrue(loggedLine("INFO sojourn: resuming " + victim));
  }

  /**
   * A core rebuilt (after a panic) while the agent holds a container
   * suspended: the container comes back running (off the list, resumed by
   * the agent), as after an AM or RM restart. Before, it was re-sent to the
   * new core as suspended, and hfsp (as kairos) resumes only containers it
   * placed: with a vcore free again it stayed listed, paused for good.
   */
  @Test(timeout = 60000)
  public void aCoreRebuiltWhileAContainerIsSuspendedRunsItAgain() throws Exception {
    start(hfspSuspend("agent"));
    MockNM nm = rm.registerNode("127.0.0.1:1234", 8 * GB, 4);
    MockAM am1 = MockRM.launchAndRegisterAM(submit(GB, "default", "alice"), rm, nm);
    MockAM am2 = MockRM.launchAndRegisterAM(submit(GB, "default", "bob"), rm, nm);
    List<Container> tasks = fillTheNode(nm, am1);
    List<Container> got = askOne(am2, nm, 50);
    assertEquals("app 2 got no container: " + scheduler().describe(), 1, got.size());
    String[] listed = scheduler().getSuspendedContainers();
    assertEquals(Arrays.toString(listed), 1, listed.length);
    ContainerId victim = ContainerId.fromString(listed[0]);
    assertTrue(victim + " is not one of app 1's tasks", ids(tasks).contains(victim));
    assertEquals("the victim's vcore is free in the core", 4,
        describe().path("core").path("cluster").path("allocated").path("vcores").asInt());

    scheduler().panicInCoreForTest();
    nm.nodeHeartbeat(true);
    rm.drainEvents();
    assertEquals(1, scheduler().getCoreRebuilds());
    // App 2's task ends: the node has a vcore again for the victim.
    Container t2 = got.get(0);
    nm.nodeHeartbeat(am2.getApplicationAttemptId(), t2.getId().getContainerId(), ContainerState.RUNNING);
    nm.nodeHeartbeat(am2.getApplicationAttemptId(), t2.getId().getContainerId(), ContainerState.COMPLETE);
    rm.drainEvents();
    for (int i = 0; i < 50 && scheduler().getSuspendedContainers().length > 0; i++) {
      nm.nodeHeartbeat(true);
      rm.drainEvents();
      Thread.sleep(20);
    }
    assertEquals("still suspended after the rebuild: " + scheduler().describe(), "[]",
        Arrays.toString(scheduler().getSuspendedContainers()));
    assertEquals(RMContainerState.RUNNING, scheduler().getRMContainer(victim).getState());
    assertEquals(4, usedVcores(nm));
    assertEquals("the core runs the victim: " + scheduler().describe(), 4,
        describe().path("core").path("cluster").path("allocated").path("vcores").asInt());
    assertEquals(4, describe().path("core").path("cluster").path("containers").asInt());
    assertEquals(scheduler().describe(), 0, scheduler().getRejections());
    assertEquals(1, scheduler().getCoreRebuilds());
  }

  @Test(timeout = 60000)
  public void killModeCarriesTheSuspendOutAsKillPreemptionAfterTheGrace() throws Exception {
    start(hfspSuspend("kill"));
    assertTrue(logged.toString(), loggedLine("INFO sojourn: suspend decisions are carried out as kill preemption"));
    MockNM nm = rm.registerNode("127.0.0.1:1234", 8 * GB, 4);
    MockAM am1 = MockRM.launchAndRegisterAM(submit(GB, "default", "alice"), rm, nm);
    MockAM am2 = MockRM.launchAndRegisterAM(submit(GB, "default", "bob"), rm, nm);
    Set<ContainerId> app1 = new HashSet<>(ids(fillTheNode(nm, am1)));

    am2.addRequests(new String[] {"*"}, GB, 1, 1);
    am2.schedule();
    PreemptionMessage msg = null;
    for (int i = 0; i < 50 && msg == null; i++) {
      nm.nodeHeartbeat(true);
      rm.drainEvents();
      AllocateResponse r = am1.schedule();
      msg = r.getPreemptionMessage();
      if (msg == null) {
        Thread.sleep(20);
      }
    }
    assertNotNull("app 1's AM got no PreemptionMessage: " + scheduler().describe(), msg);
    ContainerId victim = null;
    for (PreemptionContainer c : msg.getContract().getContainers()) {
      victim = c.getId();
    }
    assertTrue(app1.contains(victim));
    assertEquals(0, scheduler().getSuspendedContainers().length);

    List<ContainerStatus> done = waitCompleted(am1, 1);
    assertEquals(1, done.size());
    assertEquals(victim, done.get(0).getContainerId());
    assertEquals(ContainerExitStatus.PREEMPTED, done.get(0).getExitStatus());
    // The NodeManager kills it and says so: YARN frees a launched container's room then.
    nm.nodeHeartbeat(am1.getApplicationAttemptId(), victim.getContainerId(), ContainerState.COMPLETE);
    List<Container> got = askOne(am2, nm, 50);
    assertEquals("app 2 got no container after the kill: " + rejectionsLogged(), 1, got.size());
    rm.drainEvents();
    assertEquals(4 * GB, usedMbSettling(nm, 4 * GB));
    assertEquals(1, describe().path("preemption_kills").asInt());
    assertEquals(1, describe().path("suspensions").asInt());
    // The core's mirror agrees: 2 AMs, app 1's other task, app 2's task.
    assertEquals(4, describe().path("core").path("cluster").path("containers").asInt());
  }

  @Test(timeout = 60000)
  public void rejectModeIsAnnouncedAndABadModeStopsTheRm() throws Exception {
    YarnConfiguration conf = conf();
    conf.set("yarn.scheduler.sojourn.suspend", "reject");
    start(conf);
    assertTrue(logged.toString(), loggedLine("INFO sojourn: suspend decisions are rejected back to the policy"));
    rm.stop();
    rm = null;
    conf.set("yarn.scheduler.sojourn.suspend", "pause");
    try {
      start(conf);
      throw new AssertionError("the RM started with suspend=pause");
    } catch (Exception e) {
      Throwable t = e;
      while (t.getCause() != null && !String.valueOf(t.getMessage()).contains("yarn.scheduler.sojourn.suspend")) {
        t = t.getCause();
      }
      assertTrue(String.valueOf(t), String.valueOf(t.getMessage()).contains("yarn.scheduler.sojourn.suspend='pause'"));
    }
  }

  /** The base test configuration plus a shipped hadoop-conf file, loaded as a resource. */
  static YarnConfiguration shipped(String file) {
    YarnConfiguration conf = conf();
    java.io.File xml = new java.io.File(System.getProperty("sojourn.repo.dir", "."), "hadoop-conf/" + file);
    assertTrue(xml.toString(), xml.isFile());
    conf.addResource(new org.apache.hadoop.fs.Path(xml.getAbsolutePath()));
    return conf;
  }

  /**
   * Issue #5: the shipped kairos example (hadoop-conf/sojourn-kairos.xml,
   * suspend=agent) suspends on its own decision. One node of 8 GB and 3
   * vcores: two AMs (never suspended by kairos) and app 1's task fill the
   * vcores; app 2's task arrives, and kairos (N = the node's vcores) suspends
   * the running task with the most attained service, app 1's, for it. The
   * suspended container stays RUNNING and is listed over JMX; when app 2's
   * task ends, kairos resumes it.
   */
  @Test(timeout = 60000)
  public void theShippedKairosConfigurationSuspendsWithTheAgent() throws Exception {
    start(shipped("sojourn-kairos.xml"));
    assertEquals("kairos", scheduler().getPolicy());
    assertEquals("agent", ManagementFactory.getPlatformMBeanServer().getAttribute(BEAN, "SuspendMode"));
    MockNM nm = rm.registerNode("127.0.0.1:1234", 8 * GB, 3);
    MockAM am1 = MockRM.launchAndRegisterAM(submit(GB, "default", "alice"), rm, nm);
    MockAM am2 = MockRM.launchAndRegisterAM(submit(GB, "default", "bob"), rm, nm);
    List<Container> t1 = allocateAndWait(am1, nm, GB, 1, 1);
    assertEquals("app 1 got no task: " + scheduler().describe(), 1, t1.size());
    ContainerId long1 = t1.get(0).getId();
    nm.nodeHeartbeat(am1.getApplicationAttemptId(), long1.getContainerId(), ContainerState.RUNNING);
    rm.waitForState(nm, long1, RMContainerState.RUNNING);
    assertEquals(3, usedVcores(nm));
    Thread.sleep(50); // app 1's task attains some service

    List<Container> got = askOne(am2, nm, 50);
    assertEquals("app 2 got no container: " + rejectionsLogged() + scheduler().describe(), 1, got.size());
    String[] listed = (String[]) ManagementFactory.getPlatformMBeanServer().getAttribute(BEAN,
        "SuspendedContainers");
    assertArrayEquals(new String[] {long1.toString()}, listed);
    assertEquals(RMContainerState.RUNNING, scheduler().getRMContainer(long1).getState());
    assertTrue(am1.schedule().getCompletedContainersStatuses().isEmpty());
    assertEquals(4 * GB, usedMb(nm));
    assertEquals(1, describe().path("suspensions").asInt());
    assertEquals(0, describe().path("preemption_kills").asInt());

    Container t2 = got.get(0);
    nm.nodeHeartbeat(am2.getApplicationAttemptId(), t2.getId().getContainerId(), ContainerState.RUNNING);
    nm.nodeHeartbeat(am2.getApplicationAttemptId(), t2.getId().getContainerId(), ContainerState.COMPLETE);
    rm.drainEvents();
    for (int i = 0; i < 50 && scheduler().getSuspendedContainers().length > 0; i++) {
      nm.nodeHeartbeat(true);
      rm.drainEvents();
      Thread.sleep(20);
    }
    assertEquals(0, ((String[]) ManagementFactory.getPlatformMBeanServer().getAttribute(BEAN,
        "SuspendedContainers")).length);
    assertEquals(1, describe().path("resumes").asInt());
    assertEquals(RMContainerState.RUNNING, scheduler().getRMContainer(long1).getState());
    assertTrue(loggedLine("INFO sojourn: suspending " + long1));
    assertTrue(loggedLine("INFO sojourn: resuming " + long1));
  }
}
