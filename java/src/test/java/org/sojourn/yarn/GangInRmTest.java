package org.sojourn.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateRequest;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceBlacklistRequest;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.junit.Test;

/**
 * Gangs in a real ResourceManager (MockRM; tetrisched.md §3, "gangs placed all or nothing"):
 * TetriSched with {@code elastic_asks=false} places an ask as one gang, and the shim applies a
 * gang's members together or refuses them together ({@link DecisionApplier}), so the AM never
 * holds part of one.
 *
 * <p>Two NodeManagers of 4 GB / 4 vcores; the AM (1 GB) on one. The AM asks for 6 containers of
 * 1 GB as one ask, which only both nodes together hold (3 + 4 free). The AM blacklists the second
 * node, which the core does not know: each plan puts part of the gang there, the shim refuses the
 * whole gang, and nothing is allocated. Once the AM lifts the blacklist, all 6 come in one
 * allocate response.
 */
public class GangInRmTest extends SojournTestBase {
  private static final int GANG = 6;

  private YarnConfiguration gangs() {
    YarnConfiguration conf = conf();
    conf.set(SojournConfig.POLICY, "tetrisched");
    conf.set("yarn.scheduler.sojourn.tetrisched.elastic_asks", "false");
    conf.set("yarn.scheduler.sojourn.tetrisched.bind_on_heartbeat", "false");
    conf.set("yarn.scheduler.sojourn.tetrisched.cycle_ms", "500");
    conf.set("yarn.scheduler.sojourn.tetrisched.quantum_ms", "1000");
    conf.set("yarn.scheduler.sojourn.tetrisched.default_runtime_ms", "4000");
    return conf;
  }

  private static AllocateRequest request(List<ResourceRequest> asks, List<String> blacklist,
      List<String> unblacklist) {
    return AllocateRequest.newInstance(0, 0f, asks, Collections.emptyList(),
        ResourceBlacklistRequest.newInstance(blacklist, unblacklist));
  }

  @Test(timeout = 120000)
  public void aGangIsAllocatedWholeOrNotAtAll() throws Exception {
    start(gangs());
    MockNM nm1 = rm.registerNode("127.0.0.1:1234", 4 * GB, 4);
    MockNM nm2 = rm.registerNode("127.0.0.2:1234", 4 * GB, 4);
    List<MockNM> nms = Arrays.asList(nm1, nm2);
    RMApp app = submit(GB);
    MockAM am = launchAmWhenPlaced(rm, app, nms, 30000);
    assertNotNull("the AM is placed", am);
    String amHost = app.getCurrentAppAttempt().getMasterContainer().getNodeId().getHost();
    String other = amHost.equals("127.0.0.1") ? "127.0.0.2" : "127.0.0.1";

    ResourceRequest ask = ResourceRequest.newInstance(Priority.newInstance(20), ResourceRequest.ANY,
        Resource.newInstance(GB, 1), GANG);
    List<Container> got = new ArrayList<>(am.allocate(request(Collections.singletonList(ask),
        Collections.singletonList(other), Collections.emptyList())).getAllocatedContainers());

    // Blacklisted: several cycles plan the gang across both nodes; each is refused whole.
    long end = System.currentTimeMillis() + 4000;
    while (System.currentTimeMillis() < end) {
      nm1.nodeHeartbeat(true);
      nm2.nodeHeartbeat(true);
      rm.drainEvents();
      got.addAll(am.schedule().getAllocatedContainers());
      Thread.sleep(100);
    }
    assertEquals("no part of the gang while it cannot be whole", 0, got.size());
    long refused = scheduler().getRejections();
    assertTrue("the shim refused the gang's members: " + refused, refused >= GANG);
    assertEquals("refused whole: a multiple of the gang's size", 0, refused % GANG);
    assertEquals("the RM holds only the AM", 1,
        rm.getResourceScheduler().getRootQueueMetrics().getAllocatedContainers());

    // Lifted: the whole gang, in one response.
    List<Integer> perResponse = new ArrayList<>();
    got.addAll(am.allocate(request(Collections.emptyList(), Collections.emptyList(),
        Collections.singletonList(other))).getAllocatedContainers());
    end = System.currentTimeMillis() + 30000;
    while (got.size() < GANG && System.currentTimeMillis() < end) {
      nm1.nodeHeartbeat(true);
      nm2.nodeHeartbeat(true);
      rm.drainEvents();
      List<Container> now = am.schedule().getAllocatedContainers();
      if (!now.isEmpty()) {
        perResponse.add(now.size());
      }
      got.addAll(now);
      Thread.sleep(50);
    }
    assertEquals("the whole gang once it fits", GANG, got.size());
    assertEquals("in one response", Collections.singletonList(GANG), perResponse);
    long onOther = got.stream().filter(c -> c.getNodeId().getHost().equals(other)).count();
    assertTrue("it spans both nodes: " + onOther + " on " + other, onOther >= 3 && onOther < GANG);
  }
}
