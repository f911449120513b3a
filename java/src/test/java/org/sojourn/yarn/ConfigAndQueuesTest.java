package org.sojourn.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.IOException;
import java.util.List;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmissionData;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmitter;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.junit.Test;

/** Configuration checked at start-up, and queues: tree, info, ACLs, rejection, refresh. */
public class ConfigAndQueuesTest extends SojournTestBase {

  /** Starting an RM with this configuration fails with a message containing {@code needle}. */
  private void assertStartFails(YarnConfiguration conf, String needle) {
    try {
      rm = new MockRM(conf);
      rm.start();
      fail("the RM started with a bad configuration (" + needle + ")");
    } catch (Exception e) {
      StringBuilder all = new StringBuilder();
      for (Throwable t = e; t != null; t = t.getCause()) {
        all.append(t.getMessage()).append(" | ");
      }
      assertTrue(all.toString(), all.toString().contains(needle));
    } finally {
      rm = null;
    }
  }

  @Test(timeout = 60000)
  public void anUnknownPolicyStopsTheRm() {
    YarnConfiguration conf = conf();
    conf.set("yarn.scheduler.sojourn.policy", "fiffo");
    assertStartFails(conf, "'fiffo' is not a known policy (known: fifo");
  }

  @Test(timeout = 60000)
  public void anUnknownPolicyParameterStopsTheRm() {
    YarnConfiguration conf = conf();
    conf.set("yarn.scheduler.sojourn.fifo.quantum_ms", "100");
    assertStartFails(conf, "unknown parameter 'quantum_ms' for policy 'fifo'");
  }

  @Test(timeout = 60000)
  public void anUnknownSojournKeyStopsTheRm() {
    YarnConfiguration conf = conf();
    conf.set("yarn.scheduler.sojourn.preemption.grace", "100");
    assertStartFails(conf, "yarn.scheduler.sojourn.preemption.grace");
  }

  @Test(timeout = 60000)
  public void aBadShimValueStopsTheRm() {
    YarnConfiguration conf = conf();
    conf.set("yarn.scheduler.sojourn.preemption.grace-ms", "soon");
    assertStartFails(conf, "yarn.scheduler.sojourn.preemption.grace-ms='soon' is not an integer");
  }

  @Test(timeout = 60000)
  public void aBadQueueSettingStopsTheRm() {
    YarnConfiguration conf = conf();
    conf.set("yarn.scheduler.sojourn.queue.root.queues", "a,b");
    conf.set("yarn.scheduler.sojourn.queue.root.c.acl_submit_applications", "bob");
    assertStartFails(conf, "names queue 'root.c', which is not in the tree");
  }

  @Test(timeout = 60000)
  public void anUnwritableFlightRecorderStopsTheRm() {
    YarnConfiguration conf = conf();
    conf.set("yarn.scheduler.sojourn.record.path", "/nonexistent-dir/x/rec.jsonl");
    assertStartFails(conf, "cannot open the flight recorder file '/nonexistent-dir/x/rec.jsonl");
  }

  @Test(timeout = 60000)
  public void theShippedFifoConfigurationStartsTheRm() throws Exception {
    for (String f : new String[] {"yarn-site.sojourn.xml", "sojourn-fifo.xml"}) {
      resetMetrics();
      YarnConfiguration conf = conf();
      conf.unset(YarnConfiguration.RM_SCHEDULER);
      java.io.File xml = new java.io.File(System.getProperty("sojourn.repo.dir", "."), "hadoop-conf/" + f);
      assertTrue(xml.toString(), xml.isFile());
      conf.addResource(new org.apache.hadoop.fs.Path(xml.getAbsolutePath()));
      start(conf);
      assertEquals(f, "fifo", scheduler().getPolicy());
      assertEquals(f, "org.sojourn.yarn.SojournSchedulerPage",
          conf.get("yarn.http.rmwebapp.scheduler.page.class"));
      stopRm();
    }
  }

  private static YarnConfiguration twoTeams() {
    YarnConfiguration conf = conf();
    conf.set("yarn.scheduler.sojourn.queue.root.queues", "eng,ops");
    conf.set("yarn.scheduler.sojourn.queue.root.eng.queues", "batch,adhoc");
    conf.set("yarn.scheduler.sojourn.queue.root.acl_submit_applications", " ");
    conf.set("yarn.scheduler.sojourn.queue.root.acl_administer_queue", "admin");
    conf.set("yarn.scheduler.sojourn.queue.root.eng.acl_submit_applications", "alice");
    conf.set("yarn.scheduler.sojourn.queue.root.ops.acl_submit_applications", "bob");
    return conf;
  }

  @Test(timeout = 60000)
  public void queueInfoDescribesTheTree() throws Exception {
    start(twoTeams());
    QueueInfo root = rm.getResourceScheduler().getQueueInfo("root", true, true);
    assertEquals("root", root.getQueueName());
    assertEquals(2, root.getChildQueues().size());
    QueueInfo eng = rm.getResourceScheduler().getQueueInfo("root.eng", true, false);
    assertEquals(2, eng.getChildQueues().size());
    assertEquals("batch", rm.getResourceScheduler().getQueueInfo("batch", false, false).getQueueName());
    try {
      rm.getResourceScheduler().getQueueInfo("nope", false, false);
      fail("unknown queue");
    } catch (IOException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("unknown queue 'nope'"));
    }
  }

  @Test(timeout = 60000)
  public void aclsAreInheritedDownTheTree() throws Exception {
    start(twoTeams());
    UserGroupInformation alice = UserGroupInformation.createRemoteUser("alice");
    UserGroupInformation bob = UserGroupInformation.createRemoteUser("bob");
    UserGroupInformation admin = UserGroupInformation.createRemoteUser("admin");
    assertTrue(rm.getResourceScheduler().checkAccess(alice, QueueACL.SUBMIT_APPLICATIONS, "batch"));
    assertFalse(rm.getResourceScheduler().checkAccess(bob, QueueACL.SUBMIT_APPLICATIONS, "batch"));
    assertTrue(rm.getResourceScheduler().checkAccess(bob, QueueACL.SUBMIT_APPLICATIONS, "root.ops"));
    assertTrue(rm.getResourceScheduler().checkAccess(admin, QueueACL.ADMINISTER_QUEUE, "adhoc"));
    assertFalse(rm.getResourceScheduler().checkAccess(alice, QueueACL.ADMINISTER_QUEUE, "adhoc"));
    assertFalse(rm.getResourceScheduler().checkAccess(alice, QueueACL.SUBMIT_APPLICATIONS, "nope"));
  }

  @Test(timeout = 60000)
  public void submissionsRespectQueuesAndAcls() throws Exception {
    YarnConfiguration conf = twoTeams();
    conf.setBoolean(YarnConfiguration.YARN_ACL_ENABLE, true);
    conf.set(YarnConfiguration.YARN_ADMIN_ACL, "admin");
    start(conf);
    MockNM nm = rm.registerNode("127.0.0.1:1234", 4 * GB, 4);

    RMApp ok = submitNoWait("batch", "alice");
    rm.waitForState(ok.getApplicationId(), RMAppState.ACCEPTED);
    MockRM.launchAndRegisterAM(ok, rm, nm);
    assertEquals(1, rm.getResourceScheduler().getAppsInQueue("root.eng").size());
    assertEquals(1, rm.getResourceScheduler().getAppsInQueue("batch").size());
    assertEquals(GB, rm.getResourceScheduler().getRootQueueMetrics().getAllocatedMB());

    assertRejected(submitNoWait("nope", "alice"), "queue 'nope' does not exist");
    assertRejected(submitNoWait("eng", "alice"), "is a parent queue");
    assertRejected(submitNoWait("batch", "bob"), "user bob may not submit applications to queue root.eng.batch");
  }

  private RMApp submitNoWait(String queue, String user) throws Exception {
    return MockRMAppSubmitter.submit(rm, MockRMAppSubmissionData.Builder.createWithMemory(GB, rm)
        .withQueue(queue).withUser(user).withWaitForAppAcceptedState(false).build());
  }

  private void assertRejected(RMApp app, String why) throws Exception {
    rm.waitForState(app.getApplicationId(), RMAppState.FAILED);
    String diag = app.getDiagnostics().toString();
    assertTrue(diag, diag.contains(why));
  }

  @Test(timeout = 60000)
  public void refreshQueuesAddsQueuesAndRejectsBadKeys() throws Exception {
    start(twoTeams());
    YarnConfiguration next = twoTeams();
    next.set("yarn.scheduler.sojourn.queue.root.queues", "eng,ops,research");
    rm.getResourceScheduler().reinitialize(next, rm.getRMContext());
    assertEquals("research", rm.getResourceScheduler().getQueueInfo("research", false, false).getQueueName());

    YarnConfiguration bad = twoTeams();
    bad.set("yarn.scheduler.sojourn.fifo.speed", "11");
    try {
      rm.getResourceScheduler().reinitialize(bad, rm.getRMContext());
      fail("a bad key was accepted on refresh");
    } catch (IOException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("speed"));
    }
    // the old tree still serves
    assertEquals("research", rm.getResourceScheduler().getQueueInfo("research", false, false).getQueueName());
  }

  @Test(timeout = 60000)
  public void refreshQueuesKeepsAQueueThatHasApps() throws Exception {
    start(twoTeams());
    MockNM nm = rm.registerNode("127.0.0.1:1234", 4 * GB, 4);
    RMApp app = submit(GB, "ops", "bob");
    MockRM.launchAndRegisterAM(app, rm, nm);
    YarnConfiguration next = twoTeams();
    next.set("yarn.scheduler.sojourn.queue.root.queues", "eng");
    next.unset("yarn.scheduler.sojourn.queue.root.ops.acl_submit_applications");
    try {
      rm.getResourceScheduler().reinitialize(next, rm.getRMContext());
      fail("a queue with an app was removed");
    } catch (IOException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("root.ops has 1 application"));
    }
    List<?> apps = rm.getResourceScheduler().getAppsInQueue("ops");
    assertEquals(1, apps.size());
  }
}
