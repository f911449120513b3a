package org.sojourn.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.junit.Test;

/**
 * yarn.scheduler.sojourn.per-node-heartbeat.maximum-container-assignments:
 * a NODE_UPDATE places at most that many containers, whichever node the
 * policy places them on, the rest go at the next heartbeats, every ask is
 * served, and the core's books agree with YARN's throughout (nothing decided
 * and then dropped: no rejection).
 */
public class HeartbeatLimitTest extends SojournTestBase {
  private static final int LIMIT = 3;
  private static final int ASKED = 11;

  /** Containers the scheduler placed per NODE_UPDATE until the AM holds all it asked for. */
  private List<Integer> placeAll(String policy) throws Exception {
    YarnConfiguration conf = conf();
    conf.set(SojournConfig.POLICY, policy);
    conf.setInt(SojournConfig.MAX_ASSIGNMENTS, LIMIT);
    if (policy.equals("fair")) {
      // FairScheduler's assignmultiple with no maxAssign of its own: only the limit stops it
      conf.set("yarn.scheduler.sojourn.fair.assign_multiple", "true");
      conf.set("yarn.scheduler.sojourn.fair.dynamic_max_assign", "false");
    }
    start(conf);
    MockNM nm1 = rm.registerNode("127.0.0.1:1234", 8 * GB, 8);
    MockNM nm2 = rm.registerNode("127.0.0.2:1234", 8 * GB, 8);
    RMApp app = submit(GB);
    MockAM am = MockRM.launchAndRegisterAM(app, rm, nm1);
    am.addRequests(new String[] {"*"}, GB, 1, ASKED);
    am.schedule();
    rm.drainEvents();
    List<Integer> perHeartbeat = new ArrayList<>();
    List<Container> got = new ArrayList<>();
    for (int i = 0; i < 40 && got.size() < ASKED; i++) {
      long before = scheduler().getAllocations();
      (i % 2 == 0 ? nm1 : nm2).nodeHeartbeat(true);
      rm.drainEvents();
      perHeartbeat.add((int) (scheduler().getAllocations() - before));
      got.addAll(am.schedule().getAllocatedContainers());
    }
    assertEquals(policy + ": every container asked for, placed " + perHeartbeat, ASKED, got.size());
    JsonNode d = describe();
    assertEquals(policy, 1 + ASKED, d.path("core").path("cluster").path("containers").asInt());
    assertEquals(policy, 0, d.path("core").path("cluster").path("pending_containers").asInt());
    assertEquals(policy + ": nothing decided and then refused", 0, d.path("rejections").asInt());
    return perHeartbeat;
  }

  private void assertLimited(String policy) throws Exception {
    List<Integer> per = placeAll(policy);
    for (int n : per) {
      assertTrue(policy + ": at most " + LIMIT + " per heartbeat: " + per, n <= LIMIT);
    }
    // 11 containers at 3 per heartbeat need at least 4 heartbeats, and the
    // limit does not starve: the heartbeats that place, place the limit
    // until fewer are left.
    assertTrue(policy + ": " + per, per.size() >= (ASKED + LIMIT - 1) / LIMIT);
    assertEquals(policy + ": " + per, LIMIT, (int) per.get(0));
  }

  @Test(timeout = 60000)
  public void fifoPlacesAtMostTheLimitPerHeartbeat() throws Exception {
    assertLimited("fifo");
  }

  @Test(timeout = 60000)
  public void fairWithAssignMultiplePlacesAtMostTheLimitPerHeartbeat() throws Exception {
    assertLimited("fair");
  }

  @Test(timeout = 60000)
  public void hfspPlacesAtMostTheLimitPerHeartbeat() throws Exception {
    assertLimited("hfsp");
  }

  /** Kairos places on any node from any heartbeat: the limit is per heartbeat, not per node. */
  @Test(timeout = 60000)
  public void kairosPlacesAtMostTheLimitPerHeartbeat() throws Exception {
    assertLimited("kairos");
  }

  @Test(timeout = 60000)
  public void withoutALimitOneHeartbeatFillsTheNode() throws Exception {
    YarnConfiguration conf = conf();
    conf.setInt(SojournConfig.MAX_ASSIGNMENTS, -1);
    start(conf);
    MockNM nm = rm.registerNode("127.0.0.1:1234", 16 * GB, 16);
    RMApp app = submit(GB);
    MockAM am = MockRM.launchAndRegisterAM(app, rm, nm);
    am.addRequests(new String[] {"*"}, GB, 1, ASKED);
    am.schedule();
    long before = scheduler().getAllocations();
    nm.nodeHeartbeat(true);
    rm.drainEvents();
    assertEquals(ASKED, scheduler().getAllocations() - before);
  }

  @Test(timeout = 60000)
  public void aLimitOfZeroIsRefusedNamingTheKey() throws Exception {
    YarnConfiguration conf = conf();
    conf.setInt(SojournConfig.MAX_ASSIGNMENTS, 0);
    assertStartFails(conf, SojournConfig.MAX_ASSIGNMENTS + "=0 is out of range");
  }
}
