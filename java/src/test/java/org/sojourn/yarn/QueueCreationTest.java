package org.sojourn.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.hadoop.security.GroupMappingServiceProvider;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.MemoryRMStateStore;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.junit.Test;

/**
 * Issue 18: leaves created on placement (FairScheduler's create="true" and
 * nestedUserQueue, CapacityScheduler's auto-created leaves), the group
 * rules, and what a refresh and an RM restart do to created leaves.
 */
public class QueueCreationTest extends SojournTestBase {
  private static final String P = "yarn.scheduler.sojourn.";

  /** Hadoop's group mapping for the tests: a fixed table, primary group first. */
  public static final class TableGroups implements GroupMappingServiceProvider {
    static final Map<String, List<String>> TABLE = new TreeMap<>();

    static {
      TABLE.put("alice", Arrays.asList("analysts", "etl"));
      TABLE.put("bob", Arrays.asList("marketing", "etl"));
      TABLE.put("dave", Collections.singletonList("etl"));
    }

    @Override
    public List<String> getGroups(String user) {
      return TABLE.getOrDefault(user, Collections.emptyList());
    }

    @Override
    public void cacheGroupsRefresh() {}

    @Override
    public void cacheGroupsAdd(List<String> groups) {}
  }

  /** fair, with dev and a parent users; root and users create leaves. */
  private static YarnConfiguration fairCreating() {
    YarnConfiguration conf = conf();
    conf.set(P + "policy", "fair");
    conf.set(P + "queue.root.queues", "dev,users");
    conf.set(P + "queue.root.auto_create_child_queue_enabled", "true");
    conf.set(P + "queue.root.users.auto_create_child_queue_enabled", "true");
    conf.set(P + "placement.default-queue", "dev");
    conf.set(P + "placement.rules", "specified,user@root.users,default");
    return conf;
  }

  private List<String> childrenOf(String queue) throws IOException {
    List<String> out = new ArrayList<>();
    for (QueueInfo q : rm.getResourceScheduler().getQueueInfo(queue, true, false).getChildQueues()) {
      out.add(q.getQueueName());
    }
    return out;
  }

  /** Heartbeats until the app's AM container is placed (or 20 rounds). */
  private void assertAmPlaced(MockNM nm, RMApp app) throws Exception {
    for (int i = 0; i < 20 && app.getCurrentAppAttempt().getMasterContainer() == null; i++) {
      nm.nodeHeartbeat(true);
      rm.drainEvents();
    }
    assertTrue(app.getApplicationId() + " got no AM container in " + app.getQueue(),
        app.getCurrentAppAttempt().getMasterContainer() != null);
  }

  /**
   * A named queue that does not exist is created under root, a job naming
   * none goes to its user's leaf under root.users (created), and both get
   * their AM containers from the core, whose fair tree has the same leaves.
   */
  @Test(timeout = 60000)
  public void fairCreatesTheNamedQueueAndTheUsersLeaf() throws Exception {
    start(fairCreating());
    MockNM nm = rm.registerNode("127.0.0.1:1234", 8 * GB, 8);
    RMApp named = submitTo("adhoc", "alice", GB);
    assertPlaced(named, "root.adhoc");
    RMApp unnamed = submitTo(null, "john.doe", GB);
    assertPlaced(unnamed, "root.users.john_dot_doe");
    RMApp again = submitTo(null, "john.doe", GB);
    assertPlaced(again, "root.users.john_dot_doe");
    assertEquals(Collections.singletonList("john_dot_doe"), childrenOf("users"));
    assertTrue(childrenOf("root").contains("adhoc"));
    assertAmPlaced(nm, named);
    assertAmPlaced(nm, unnamed);
    String core = describe().toString();
    assertTrue(core, core.contains("\"name\":\"root.adhoc\"") && core.contains("root.users.john_dot_doe"));
    // The REST and web views read the same tree.
    assertTrue(SchedulerView.build(scheduler()).toString().contains("root.users.john_dot_doe"));
  }

  /** A parent that does not create leaves refuses a missing leaf under it. */
  @Test(timeout = 60000)
  public void aMissingLeafUnderAParentThatDoesNotCreateIsRefused() throws Exception {
    YarnConfiguration conf = fairCreating();
    conf.set(P + "queue.root.queues", "dev,teams");
    conf.set(P + "queue.root.teams.queues", "a");
    conf.unset(P + "queue.root.users.auto_create_child_queue_enabled");
    conf.set(P + "placement.rules", "specified,default");
    start(conf);
    assertRejected(submitTo("root.teams.b", "alice", GB), "queue 'root.teams.b' does not exist");
    // Nor is a leaf made under a leaf.
    assertRejected(submitTo("root.dev.x", "alice", GB), "does not exist");
  }

  /**
   * Groups from Hadoop's group mapping: alice's primary group analysts is a
   * parent that creates (her leaf root.analysts.alice, FairScheduler's
   * nestedUserQueue); bob's primary group marketing has no queue, so his
   * secondary group etl's leaf takes him; carol has no groups and goes to
   * the default queue.
   */
  @Test(timeout = 60000)
  public void groupRulesPlaceByPrimaryAndSecondaryGroup() throws Exception {
    YarnConfiguration conf = conf();
    conf.set("hadoop.security.group.mapping", TableGroups.class.getName());
    conf.set(P + "queue.root.queues", "analysts,etl,dev");
    conf.set(P + "queue.root.analysts.auto_create_child_queue_enabled", "true");
    conf.set(P + "placement.default-queue", "dev");
    conf.set(P + "placement.rules", "specified,user@primaryGroup,secondaryGroupExistingQueue,default");
    start(conf);
    assertPlaced(submitTo(null, "alice", GB), "root.analysts.alice");
    assertPlaced(submitTo(null, "bob", GB), "root.etl");
    assertPlaced(submitTo(null, "carol", GB), "root.dev");
    stopRm();
    resetMetrics();
    conf.set(P + "placement.rules", "primaryGroup,reject");
    start(conf);
    assertPlaced(submitTo(null, "dave", GB), "root.etl");
    assertRejected(submitTo(null, "carol", GB), "the placement rule 'reject' was reached");
  }

  /**
   * capacity: root.users auto-creates leaves with a 40% template; alice's
   * and bob's leaves get 40% of users' 50% each, carol's 0 (the parent's 100
   * is used up), and each AM is placed by the core.
   */
  @Test(timeout = 60000)
  public void capacityCreatesLeavesUnderAManagedParent() throws Exception {
    YarnConfiguration conf = conf();
    conf.set(P + "policy", "capacity");
    conf.set(P + "queue.root.queues", "prod,users");
    conf.set(P + "queue.root.users.auto_create_child_queue_enabled", "true");
    conf.set(P + "capacity.queue.root.queues", "prod,users");
    conf.set(P + "capacity.queue.root.prod.capacity", "50");
    conf.set(P + "capacity.queue.root.users.capacity", "50");
    conf.set(P + "capacity.queue.root.users.auto_create_child_queue_enabled", "true");
    conf.set(P + "capacity.queue.root.users.leaf_queue_template_capacity", "40");
    conf.set(P + "capacity.maximum_am_resource_percent", "1");
    conf.set(P + "placement.rules", "specified,user@users");
    start(conf);
    MockNM nm = rm.registerNode("127.0.0.1:1234", 8 * GB, 8);
    RMApp[] apps = {submitTo(null, "alice", GB), submitTo(null, "bob", GB), submitTo(null, "carol", GB)};
    String[] users = {"alice", "bob", "carol"};
    for (int i = 0; i < 3; i++) {
      assertPlaced(apps[i], "root.users." + users[i]);
    }
    for (RMApp a : apps) {
      assertAmPlaced(nm, a);
    }
    JsonNode users0 = findQueue(describe().path("core").path("state").path("root"), "root.users");
    assertTrue(describe().toString(), users0 != null);
    double[] want = {40, 40, 0};
    for (int i = 0; i < 3; i++) {
      JsonNode leaf = findQueue(users0, "root.users." + users[i]);
      assertTrue(users[i], leaf != null && leaf.path("auto_created").asBoolean());
      assertEquals(users[i], want[i], leaf.path("capacity").asDouble(), 1e-9);
    }
    // prod does not create: a missing leaf under it is refused by the shim.
    assertRejected(submitTo("root.prod.x", "alice", GB), "does not exist");
  }

  private static JsonNode findQueue(JsonNode q, String path) {
    if (q == null || q.isMissingNode()) {
      return null;
    }
    if (path.equals(q.path("path").asText())) {
      return q;
    }
    for (JsonNode c : q.path("children")) {
      JsonNode f = findQueue(c, path);
      if (f != null) {
        return f;
      }
    }
    return null;
  }

  /**
   * A refresh keeps created leaves while their parent still creates; one
   * that would drop a created leaf that has apps is refused, naming it.
   */
  @Test(timeout = 60000)
  public void aRefreshKeepsCreatedLeavesOrRefusesToDropOnesWithApps() throws Exception {
    YarnConfiguration conf = fairCreating();
    start(conf);
    RMApp app = submitTo(null, "alice", GB);
    assertPlaced(app, "root.users.alice");
    scheduler().reinitialize(conf, rm.getRMContext());
    assertTrue(scheduler().queues().isCreated("root.users.alice"));
    assertEquals(Collections.singletonList("alice"), childrenOf("users"));
    YarnConfiguration off = new YarnConfiguration(conf);
    off.unset(P + "queue.root.users.auto_create_child_queue_enabled");
    off.set(P + "queue.root.users.queues", "x");
    try {
      scheduler().reinitialize(off, rm.getRMContext());
      fail("a refresh dropped root.users.alice, which has an application");
    } catch (IOException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("root.users.alice has 1 application(s)")
          && e.getMessage().contains("created on placement"));
    }
    rm.killApp(app.getApplicationId());
    rm.waitForState(app.getApplicationId(), RMAppState.KILLED);
    scheduler().reinitialize(off, rm.getRMContext());
    assertFalse(scheduler().queues().isCreated("root.users.alice"));
    assertEquals(Collections.singletonList("x"), childrenOf("users"));
  }

  /**
   * RM restart: an app running in a created leaf is recovered into the same
   * leaf (created again by the new RM), and its AM keeps being served.
   */
  @Test(timeout = 90000)
  public void anAppInACreatedLeafSurvivesAnRmRestart() throws Exception {
    YarnConfiguration conf = ReliabilityTest.recoveryConf("fair");
    YarnConfiguration creating = fairCreating();
    for (Map.Entry<String, String> e : creating.getPropsWithPrefix(P).entrySet()) {
      conf.set(P + e.getKey(), e.getValue());
    }
    MockRM rm1 = start(conf);
    MemoryRMStateStore store = (MemoryRMStateStore) rm1.getRMStateStore();
    MockNM nm = rm1.registerNode("127.0.0.1:1234", 8 * GB, 8);
    RMApp app = submitTo(null, "alice", GB);
    assertPlaced(app, "root.users.alice");
    MockAM am = MockRM.launchAndRegisterAM(app, rm1, nm);

    rm = new MockRM(conf, store);
    rm.start();
    rm1.stop();
    nm.setResourceTrackerService(rm.getResourceTrackerService());
    nm.registerNode(Collections.singletonList(org.apache.hadoop.yarn.server.api.protocolrecords
        .NMContainerStatus.newInstance(app.getCurrentAppAttempt().getMasterContainer().getId(), 0,
            org.apache.hadoop.yarn.api.records.ContainerState.RUNNING,
            org.apache.hadoop.yarn.api.records.Resource.newInstance(GB, 1), "", 0,
            org.apache.hadoop.yarn.api.records.Priority.newInstance(0), 0)), null);
    rm.waitForState(am.getApplicationAttemptId(), RMAppAttemptState.LAUNCHED);
    rm.drainEvents();
    RMApp recovered = rm.getRMContext().getRMApps().get(app.getApplicationId());
    assertEquals("root.users.alice", recovered.getQueue());
    assertTrue(scheduler().queues().isCreated("root.users.alice"));
    assertEquals(1, scheduler().getAppsInQueue("root.users.alice").size());
    am.setAMRMProtocol(rm.getApplicationMasterService(), rm.getRMContext());
    am.registerAppAttempt(true);
    assertEquals(1, allocateAndWait(am, nm, GB, 1, 1).size());
  }

  @Test(timeout = 60000)
  public void rulesAndCreationAreValidated() {
    YarnConfiguration conf = fairCreating();
    conf.set(P + "placement.rules", "specified,owner");
    assertStartFails(conf, "placement.rules: unknown rule 'owner'");
    resetMetrics();
    conf = fairCreating();
    conf.set(P + "placement.rules", "user@root.nosuch");
    assertStartFails(conf, "'user@root.nosuch' names 'root.nosuch', which is not a parent queue");
    resetMetrics();
    conf = fairCreating();
    conf.set(P + "placement.rules", "default@root.users");
    assertStartFails(conf, "only the user rule nests");
    resetMetrics();
    conf = fairCreating();
    conf.set(P + "placement.user-as-default-queue", "true");
    assertStartFails(conf, "set yarn.scheduler.sojourn.placement.rules or "
        + "yarn.scheduler.sojourn.placement.user-as-default-queue, not both");
    resetMetrics();
    conf = fairCreating();
    conf.set(P + "queue.root.users.auto_create_child_queue_enabled", "yes");
    assertStartFails(conf, "auto_create_child_queue_enabled='yes' is not true or false");
    resetMetrics();
    conf = fairCreating();
    conf.set(P + "fair.allow_undeclared_pools", "false");
    assertStartFails(conf, "fair.allow_undeclared_pools=false forbids");
    resetMetrics();
    conf = fairCreating();
    conf.set(P + "policy", "capacity");
    conf.set(P + "capacity.queue.root.queues", "dev,users");
    conf.set(P + "capacity.queue.root.dev.capacity", "50");
    conf.set(P + "capacity.queue.root.users.capacity", "50");
    assertStartFails(conf, "the shim creates leaves under [root, root.users]");
  }
}
