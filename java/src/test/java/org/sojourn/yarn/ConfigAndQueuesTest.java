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

  /**
   * Every shipped example (hadoop-conf/yarn-site.sojourn.xml and each
   * hadoop-conf/sojourn-*.xml) starts an RM with the policy it names, and sets
   * Sojourn's web UI page: a test fails if one cannot start, or refuses a job
   * that names no queue.
   */
  @Test(timeout = 120000)
  public void everyShippedConfigurationStartsTheRm() throws Exception {
    java.io.File dir = new java.io.File(System.getProperty("sojourn.repo.dir", "."), "hadoop-conf");
    java.io.File[] files = dir.listFiles((d, n) -> n.equals("yarn-site.sojourn.xml")
        || (n.startsWith("sojourn-") && n.endsWith(".xml")));
    assertTrue(dir.toString(), files != null && files.length >= 6);
    java.util.Arrays.sort(files);
    List<String> started = new java.util.ArrayList<>();
    for (java.io.File xml : files) {
      String f = xml.getName();
      resetMetrics();
      YarnConfiguration conf = conf();
      conf.unset(YarnConfiguration.RM_SCHEDULER);
      conf.addResource(new org.apache.hadoop.fs.Path(xml.getAbsolutePath()));
      try {
        start(conf);
      } catch (Exception e) {
        throw new AssertionError("hadoop-conf/" + f + " does not start an RM: " + e, e);
      }
      String policy = conf.get("yarn.scheduler.sojourn.policy", "fifo");
      assertEquals(f, policy, scheduler().getPolicy());
      if (f.startsWith("sojourn-")) {
        assertEquals(f, "sojourn-" + policy + ".xml", f);
      }
      assertEquals(f, "org.sojourn.yarn.SojournSchedulerPage",
          conf.get("yarn.http.rmwebapp.scheduler.page.class"));
      assertEquals(f, "org.sojourn.yarn.SojournWebServices", conf.get("yarn.http.rmwebapp.external.classes"));
      // Issue 18: a job that names no queue is placed, not refused.
      RMApp noQueue = MockRMAppSubmitter.submit(rm, MockRMAppSubmissionData.Builder.createWithMemory(GB, rm)
          .withUser("alice").withWaitForAppAcceptedState(false).build());
      long deadline = System.currentTimeMillis() + 20000;
      while (noQueue.getState() != RMAppState.ACCEPTED && noQueue.getState() != RMAppState.FAILED
          && System.currentTimeMillis() < deadline) {
        Thread.sleep(20);
      }
      assertEquals("hadoop-conf/" + f + " with a job that names no queue: " + noQueue.getDiagnostics(),
          RMAppState.ACCEPTED, noQueue.getState());
      started.add(f);
      stopRm();
    }
    assertTrue(started.toString(), started.contains("sojourn-kairos.xml") && started.contains("sojourn-hfsp.xml")
        && started.contains("sojourn-eagle.xml") && started.contains("sojourn-hawk.xml")
        && started.contains("sojourn-tetrisched.xml")
        && started.contains("sojourn-fifo.xml") && started.contains("yarn-site.sojourn.xml"));
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

    RMApp ok = submitTo("batch", "alice", GB);
    rm.waitForState(ok.getApplicationId(), RMAppState.ACCEPTED);
    MockRM.launchAndRegisterAM(ok, rm, nm);
    assertEquals(1, rm.getResourceScheduler().getAppsInQueue("root.eng").size());
    assertEquals(1, rm.getResourceScheduler().getAppsInQueue("batch").size());
    assertEquals(GB, rm.getResourceScheduler().getRootQueueMetrics().getAllocatedMB());

    assertRejected(submitTo("nope", "alice", GB), "queue 'nope' does not exist");
    assertRejected(submitTo("eng", "alice", GB), "is a parent queue");
    assertRejected(submitTo("batch", "bob", GB), "user bob may not submit applications to queue root.eng.batch");
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

  /** A yarn-site.xml holding these properties (name, value, name, value, ...). */
  private static void writeSite(java.io.File dir, String... kv) throws IOException {
    StringBuilder b = new StringBuilder("<?xml version=\"1.0\"?>\n<configuration>\n");
    for (int i = 0; i < kv.length; i += 2) {
      b.append("  <property><name>").append(kv[i]).append("</name><value>").append(kv[i + 1])
          .append("</value></property>\n");
    }
    b.append("</configuration>\n");
    java.io.File f = new java.io.File(dir, YarnConfiguration.YARN_SITE_CONFIGURATION_FILE);
    java.io.File tmp = new java.io.File(dir, f.getName() + ".tmp");
    java.nio.file.Files.write(tmp.toPath(), b.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8));
    java.nio.file.Files.move(tmp.toPath(), f.toPath(), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
  }

  private static String messages(Throwable e) {
    StringBuilder all = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause()) {
      all.append(t.getMessage()).append(" | ");
    }
    return all.toString();
  }

  /**
   * Issue #3: {@code yarn rmadmin -refreshQueues} after editing yarn-site.xml.
   * The AdminService hands the scheduler the RM's in-memory configuration;
   * the scheduler re-reads yarn-site.xml through the RM's ConfigurationProvider
   * (here FileSystemBasedConfigurationProvider over a temp dir, which the RM
   * also reads at start-up).
   */
  @Test(timeout = 60000)
  public void refreshQueuesThroughTheAdminServiceRereadsYarnSite() throws Exception {
    java.io.File work = new java.io.File(System.getProperty("sojourn.test.dir", "/tmp")).getAbsoluteFile();
    work.mkdirs();
    java.io.File store = java.nio.file.Files.createTempDirectory(work.toPath(), "rmconf").toFile();
    String[] eng = {"yarn.scheduler.sojourn.queue.root.queues", "eng,ops",
        "yarn.scheduler.sojourn.queue.root.eng.acl_submit_applications", "alice"};
    writeSite(store, eng);
    YarnConfiguration conf = conf();
    conf.set(YarnConfiguration.RM_CONFIGURATION_PROVIDER_CLASS,
        "org.apache.hadoop.yarn.FileSystemBasedConfigurationProvider");
    conf.set(YarnConfiguration.FS_BASED_RM_CONF_STORE, store.toURI().toString());
    start(conf);
    org.apache.hadoop.yarn.server.api.protocolrecords.RefreshQueuesRequest refresh =
        org.apache.hadoop.yarn.server.api.protocolrecords.RefreshQueuesRequest.newInstance();
    assertEquals("ops", rm.getResourceScheduler().getQueueInfo("ops", false, false).getQueueName());
    try {
      rm.getResourceScheduler().getQueueInfo("research", false, false);
      fail("research exists before the refresh");
    } catch (IOException expected) {
      // not yet
    }

    // A new queue in the file: it appears after the refresh.
    writeSite(store, "yarn.scheduler.sojourn.queue.root.queues", "eng,ops,research",
        "yarn.scheduler.sojourn.queue.root.eng.acl_submit_applications", "alice");
    rm.getAdminService().refreshQueues(refresh);
    assertEquals("research", rm.getResourceScheduler().getQueueInfo("research", false, false).getQueueName());
    assertEquals(3, rm.getResourceScheduler().getQueueInfo("root", true, false).getChildQueues().size());

    // A bad value in the file: the refresh fails naming the key; the old tree serves on.
    writeSite(store, "yarn.scheduler.sojourn.queue.root.queues", "eng,ops",
        "yarn.scheduler.sojourn.preemption.grace-ms", "soon");
    try {
      rm.getAdminService().refreshQueues(refresh);
      fail("a bad value in yarn-site.xml was accepted on refresh");
    } catch (Exception e) {
      assertTrue(messages(e), messages(e).contains("yarn.scheduler.sojourn.preemption.grace-ms='soon'"));
    }
    assertEquals(3, rm.getResourceScheduler().getQueueInfo("root", true, false).getChildQueues().size());
    assertEquals(org.apache.hadoop.service.Service.STATE.STARTED, rm.getServiceState());
    MockNM nm = rm.registerNode("127.0.0.1:1234", 4 * GB, 4);
    RMApp app = submit(GB, "research", "alice");
    MockRM.launchAndRegisterAM(app, rm, nm);
    assertEquals(1, rm.getResourceScheduler().getAppsInQueue("research").size());

    // A key removed from the file is removed on refresh: the tree falls back to
    // root.default, except research, which keeps its app (refused, naming it).
    writeSite(store);
    try {
      rm.getAdminService().refreshQueues(refresh);
      fail("a queue with an app was removed");
    } catch (Exception e) {
      assertTrue(messages(e), messages(e).contains("root.research has 1 application"));
    }
    writeSite(store, "yarn.scheduler.sojourn.queue.root.queues", "research");
    rm.getAdminService().refreshQueues(refresh);
    assertEquals(1, rm.getResourceScheduler().getQueueInfo("root", true, false).getChildQueues().size());
    assertTrue(rm.getResourceScheduler().checkAccess(UserGroupInformation.createRemoteUser("bob"),
        QueueACL.SUBMIT_APPLICATIONS, "research"));
  }
}
