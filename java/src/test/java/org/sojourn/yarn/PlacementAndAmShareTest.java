package org.sojourn.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.junit.Test;

/**
 * Issue 18: where apps without a queue (or with an unknown one) go, the
 * check of a policy's queue keys against the tree, and the AM share limits
 * of fair and capacity in a real RM.
 */
public class PlacementAndAmShareTest extends SojournTestBase {

  private static YarnConfiguration prodDev() {
    YarnConfiguration conf = conf();
    conf.set("yarn.scheduler.sojourn.queue.root.queues", "prod,dev");
    return conf;
  }

  @Test(timeout = 60000)
  public void aJobWithoutAQueueGoesToTheDefaultQueue() throws Exception {
    YarnConfiguration conf = prodDev();
    conf.set("yarn.scheduler.sojourn.policy", "fair");
    conf.set("yarn.scheduler.sojourn.placement.default-queue", "dev");
    start(conf);
    assertPlaced(submitTo(null, "alice", GB), "root.dev");
    assertPlaced(submitTo("default", "alice", GB), "root.dev");
    assertPlaced(submitTo("prod", "alice", GB), "root.prod");
    // The core's fair tree runs the apps in the same leaves (fair's own
    // placement would have put 'default' in root.alice).
    String core = describe().toString();
    assertTrue(core, core.contains("\"name\":\"root.dev\"") && core.contains("\"name\":\"root.prod\"")
        && !core.contains("root.alice"));
  }

  @Test(timeout = 60000)
  public void withoutADefaultQueueAJobWithoutAQueueIsRefusedNamingTheKey() throws Exception {
    start(prodDev());
    assertRejected(submitTo(null, "alice", GB), "set yarn.scheduler.sojourn.placement.default-queue");
  }

  @Test(timeout = 60000)
  public void anUnknownQueueIsRefusedOrGoesToTheDefaultQueue() throws Exception {
    YarnConfiguration conf = prodDev();
    conf.set("yarn.scheduler.sojourn.placement.default-queue", "root.dev");
    start(conf);
    assertRejected(submitTo("nope", "alice", GB), "queue 'nope' does not exist");
    stopRm();
    resetMetrics();
    conf.set("yarn.scheduler.sojourn.placement.unknown-queue", "default");
    start(conf);
    assertPlaced(submitTo("nope", "alice", GB), "root.dev");
    // A parent is still refused.
    assertRejected(submitTo("root", "alice", GB), "is a parent queue");
  }

  @Test(timeout = 60000)
  public void userAsDefaultQueuePicksTheUsersLeaf() throws Exception {
    YarnConfiguration conf = conf();
    conf.set("yarn.scheduler.sojourn.queue.root.queues", "alice,john_dot_doe,dev");
    conf.set("yarn.scheduler.sojourn.placement.default-queue", "dev");
    conf.set("yarn.scheduler.sojourn.placement.user-as-default-queue", "true");
    start(conf);
    assertPlaced(submitTo(null, "alice", GB), "root.alice");
    assertPlaced(submitTo(null, "john.doe", GB), "root.john_dot_doe");
    assertPlaced(submitTo(null, "bob", GB), "root.dev");
    // A queue the job names wins over the user's.
    assertPlaced(submitTo("dev", "alice", GB), "root.dev");
  }

  @Test(timeout = 60000)
  public void placementKeysAreValidated() {
    YarnConfiguration conf = prodDev();
    conf.set("yarn.scheduler.sojourn.placement.default-queue", "qa");
    assertStartFails(conf, "yarn.scheduler.sojourn.placement.default-queue='qa' is not a leaf queue");
    resetMetrics();
    conf = prodDev();
    conf.set("yarn.scheduler.sojourn.placement.default-queue", "root");
    assertStartFails(conf, "yarn.scheduler.sojourn.placement.default-queue='root' is not a leaf queue");
    resetMetrics();
    conf = prodDev();
    conf.set("yarn.scheduler.sojourn.placement.unknown-queue", "create");
    assertStartFails(conf, "yarn.scheduler.sojourn.placement.unknown-queue='create' is not one of reject, default");
  }

  @Test(timeout = 60000)
  public void aPolicyKeyForAQueueOutsideTheTreeStopsTheRm() {
    YarnConfiguration conf = prodDev();
    conf.set("yarn.scheduler.sojourn.policy", "fair");
    conf.set("yarn.scheduler.sojourn.fair.queue.root.a.weight", "1");
    assertStartFails(conf, "yarn.scheduler.sojourn.fair.queue.root.a.weight names queue 'root.a', "
        + "which is not in Sojourn's queue tree [root, root.prod, root.dev]");
    resetMetrics();
    conf = prodDev();
    conf.set("yarn.scheduler.sojourn.policy", "fair");
    conf.set("yarn.scheduler.sojourn.fair.queue.qa.weight", "1");
    assertStartFails(conf, "yarn.scheduler.sojourn.fair.queue.qa.weight names queue 'root.qa'");
    resetMetrics();
    conf = prodDev();
    conf.set("yarn.scheduler.sojourn.policy", "capacity");
    conf.set("yarn.scheduler.sojourn.capacity.queue.root.queues", "prod,qa");
    assertStartFails(conf, "yarn.scheduler.sojourn.capacity.queue.root.queues lists queue 'root.qa'");
  }

  /**
   * fair: one 8 GB node, one queue, max_am_share 0.5 (YARN's default): the
   * queue's AMs may hold 4 GB. Two 2 GB AMs run; the third waits on a node
   * with 4 GB free until an app leaves.
   */
  @Test(timeout = 60000)
  public void fairHoldsAFurtherAmBeyondTheAmShare() throws Exception {
    YarnConfiguration conf = conf();
    conf.set("yarn.scheduler.sojourn.policy", "fair");
    start(conf);
    MockNM nm = rm.registerNode("127.0.0.1:1234", 8 * GB, 8);
    RMApp[] apps = new RMApp[3];
    for (int i = 0; i < 3; i++) {
      apps[i] = submitTo("default", "u" + i, 2 * GB);
      rm.waitForState(apps[i].getApplicationId(), RMAppState.ACCEPTED);
    }
    for (int i = 0; i < 6; i++) {
      nm.nodeHeartbeat(true);
      rm.drainEvents();
    }
    assertEquals(4 * GB, usedMb(nm));
    assertAmAllocated(apps[0], true);
    assertAmAllocated(apps[1], true);
    assertAmAllocated(apps[2], false);
    rm.killApp(apps[0].getApplicationId());
    rm.waitForState(apps[0].getApplicationId(), RMAppState.KILLED);
    for (int i = 0; i < 6 && !amAllocated(apps[2]); i++) {
      nm.nodeHeartbeat(true);
      rm.drainEvents();
    }
    assertAmAllocated(apps[2], true);
  }

  /**
   * capacity: maximum-am-resource-percent 0.1 (YARN's default) of 8 GB: the
   * first AM always runs, a second waits although the node has room.
   */
  @Test(timeout = 60000)
  public void capacityHoldsASecondAmBeyondTheAmLimit() throws Exception {
    YarnConfiguration conf = conf();
    conf.set("yarn.scheduler.sojourn.policy", "capacity");
    start(conf);
    MockNM nm = rm.registerNode("127.0.0.1:1234", 8 * GB, 8);
    RMApp a = submitTo("default", "u1", GB);
    RMApp b = submitTo("default", "u2", GB);
    rm.waitForState(a.getApplicationId(), RMAppState.ACCEPTED);
    rm.waitForState(b.getApplicationId(), RMAppState.ACCEPTED);
    for (int i = 0; i < 6; i++) {
      nm.nodeHeartbeat(true);
      rm.drainEvents();
    }
    assertEquals(GB, usedMb(nm));
    assertAmAllocated(a, true);
    assertAmAllocated(b, false);
  }

  private static boolean amAllocated(RMApp app) {
    return app.getCurrentAppAttempt() != null
        && app.getCurrentAppAttempt().getState() != RMAppAttemptState.SCHEDULED
        && app.getCurrentAppAttempt().getMasterContainer() != null;
  }

  private static void assertAmAllocated(RMApp app, boolean yes) {
    assertEquals(app.getApplicationId() + " in " + app.getCurrentAppAttempt().getState(), yes,
        amAllocated(app));
  }
}
