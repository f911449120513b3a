package org.sojourn.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Collections;
import java.util.List;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerExitStatus;
import org.apache.hadoop.yarn.api.records.ContainerState;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceOption;
import org.apache.hadoop.yarn.server.api.protocolrecords.UpdateNodeResourceRequest;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.server.utils.BuilderUtils;
import org.junit.Test;

/** Sojourn (fifo) inside a real ResourceManager (MockRM): the scheduling life cycle. */
public class SojournSchedulerTest extends SojournTestBase {

  @Test(timeout = 60000)
  public void appsAreServedInSubmissionOrder() throws Exception {
    start(conf());
    MockNM nm1 = rm.registerNode("127.0.0.1:1234", 8 * GB, 8);
    RMApp app1 = submit(GB);
    MockAM am1 = MockRM.launchAndRegisterAM(app1, rm, nm1);
    RMApp app2 = submit(GB);
    MockAM am2 = MockRM.launchAndRegisterAM(app2, rm, nm1);
    assertEquals(2 * GB, usedMb(nm1));

    // 6 GB free: the first app takes 4, the second the 2 left.
    am1.addRequests(new String[] {"*"}, GB, 1, 4);
    am1.schedule();
    am2.addRequests(new String[] {"*"}, GB, 1, 4);
    am2.schedule();
    nm1.nodeHeartbeat(true);
    rm.drainEvents();
    List<Container> got1 = am1.schedule().getAllocatedContainers();
    List<Container> got2 = am2.schedule().getAllocatedContainers();
    assertEquals(4, got1.size());
    assertEquals(2, got2.size());
    assertEquals(8 * GB, usedMb(nm1));

    // A second node serves the rest of app2's ask.
    MockNM nm2 = rm.registerNode("127.0.0.2:1234", 8 * GB, 8);
    nm2.nodeHeartbeat(true);
    rm.drainEvents();
    assertEquals(2, am2.schedule().getAllocatedContainers().size());
    assertEquals(2 * GB, usedMb(nm2));

    JsonNode d = describe();
    assertEquals(2 + 8, d.path("core").path("cluster").path("containers").asInt());
    assertEquals(0, d.path("core").path("cluster").path("pending_containers").asInt());
    assertEquals(0, d.path("rejections").asInt());
    assertEquals("fifo", scheduler().getPolicyName());
  }

  @Test(timeout = 60000)
  public void nodeLocalRequestsLandOnTheirNode() throws Exception {
    start(conf());
    MockNM nm1 = rm.registerNode("127.0.0.1:1234", 4 * GB, 4);
    MockNM nm2 = rm.registerNode("127.0.0.2:1234", 4 * GB, 4);
    RMApp app = submit(GB);
    MockAM am = MockRM.launchAndRegisterAM(app, rm, nm1);
    am.addRequests(new String[] {"127.0.0.2"}, GB, 1, 2);
    am.schedule();
    JsonNode d = describe();
    // the ask reached the core with its locality
    nm2.nodeHeartbeat(true);
    rm.drainEvents();
    List<Container> got = am.schedule().getAllocatedContainers();
    assertEquals(2, got.size());
    for (Container c : got) {
      assertEquals(nm2.getNodeId(), c.getNodeId());
    }
    assertTrue(d.toString(), d.path("core").path("cluster").path("pending_containers").asInt() >= 0);
  }

  @Test(timeout = 60000)
  public void releasedContainersFreeTheirNode() throws Exception {
    start(conf());
    MockNM nm1 = rm.registerNode("127.0.0.1:1234", 4 * GB, 4);
    RMApp app = submit(GB);
    MockAM am = MockRM.launchAndRegisterAM(app, rm, nm1);
    List<Container> got = allocateAndWait(am, nm1, GB, 1, 3);
    assertEquals(3, got.size());
    assertEquals(4 * GB, usedMb(nm1));

    am.addContainerToBeReleased(got.get(0).getId());
    am.addContainerToBeReleased(got.get(1).getId());
    am.schedule();
    rm.drainEvents();
    assertEquals(2 * GB, usedMb(nm1));
    // the core learnt it too: the freed space is given out again
    List<Container> again = allocateAndWait(am, nm1, GB, 2, 2);
    assertEquals(2, again.size());
    assertEquals(4 * GB, usedMb(nm1));
    JsonNode d = describe();
    assertEquals(4, d.path("core").path("cluster").path("containers").asInt());
  }

  @Test(timeout = 60000)
  public void finishedContainersAreReportedToTheCore() throws Exception {
    start(conf());
    MockNM nm1 = rm.registerNode("127.0.0.1:1234", 4 * GB, 4);
    RMApp app = submit(GB);
    MockAM am = MockRM.launchAndRegisterAM(app, rm, nm1);
    List<Container> got = allocateAndWait(am, nm1, GB, 1, 1);
    Container c = got.get(0);
    ContainerStatus done = BuilderUtils.newContainerStatus(c.getId(), ContainerState.COMPLETE, "",
        0, c.getResource());
    nm1.containerStatus(done);
    rm.drainEvents();
    assertEquals(1, waitCompleted(am, 1).size());
    assertEquals(GB, usedMb(nm1));
    assertEquals(1, describe().path("core").path("cluster").path("containers").asInt());
  }

  @Test(timeout = 60000)
  public void aLostNodeLosesItsContainersAndTheCoreForgetsIt() throws Exception {
    start(conf());
    MockNM nm1 = rm.registerNode("127.0.0.1:1234", 4 * GB, 4);
    MockNM nm2 = rm.registerNode("127.0.0.2:1234", 4 * GB, 4);
    RMApp app = submit(GB);
    MockAM am = MockRM.launchAndRegisterAM(app, rm, nm1);
    am.addRequests(new String[] {"127.0.0.2"}, GB, 1, 2);
    am.schedule();
    nm2.nodeHeartbeat(true);
    rm.drainEvents();
    assertEquals(2, am.schedule().getAllocatedContainers().size());
    assertEquals(2, rm.getResourceScheduler().getNumClusterNodes());

    rm.sendNodeLost(nm2);
    rm.drainEvents();
    assertEquals(1, rm.getResourceScheduler().getNumClusterNodes());
    List<ContainerStatus> lost = waitCompleted(am, 2);
    assertEquals(2, lost.size());
    for (ContainerStatus s : lost) {
      assertEquals(ContainerExitStatus.ABORTED, s.getExitStatus());
    }
    JsonNode core = describe().path("core").path("cluster");
    assertEquals(1, core.path("nodes").asInt());
    assertEquals(1, core.path("containers").asInt()); // the AM on h1

    // the app asks again and gets served on the surviving node
    List<Container> again = allocateAndWait(am, nm1, GB, 2, 2);
    assertEquals(2, again.size());
    assertEquals(nm1.getNodeId(), again.get(0).getNodeId());
  }

  @Test(timeout = 60000)
  public void aKilledAppGivesEverythingBack() throws Exception {
    start(conf());
    MockNM nm1 = rm.registerNode("127.0.0.1:1234", 8 * GB, 8);
    RMApp app1 = submit(GB);
    MockAM am1 = MockRM.launchAndRegisterAM(app1, rm, nm1);
    assertEquals(3, allocateAndWait(am1, nm1, GB, 1, 3).size());
    assertEquals(4 * GB, usedMb(nm1));

    rm.killApp(app1.getApplicationId());
    rm.waitForState(app1.getApplicationId(), RMAppState.KILLED);
    rm.drainEvents();
    assertEquals(0, usedMb(nm1));
    JsonNode core = describe().path("core").path("cluster");
    assertEquals(0, core.path("apps").asInt());
    assertEquals(0, core.path("containers").asInt());

    // the next app has the whole node
    RMApp app2 = submit(GB);
    MockAM am2 = MockRM.launchAndRegisterAM(app2, rm, nm1);
    assertEquals(7, allocateAndWait(am2, nm1, GB, 1, 7).size());
    assertEquals(8 * GB, usedMb(nm1));
  }

  @Test(timeout = 60000)
  public void anAskThatFitsOnlyABigNodeWaitsForIt() throws Exception {
    start(conf());
    MockNM small = rm.registerNode("127.0.0.1:1234", 4 * GB, 4);
    MockNM big = rm.registerNode("127.0.0.2:1234", 8 * GB, 8);
    RMApp app = submit(GB);
    MockAM am = MockRM.launchAndRegisterAM(app, rm, small);
    am.addRequests(new String[] {"*"}, 6 * GB, 1, 1);
    am.schedule();
    small.nodeHeartbeat(true);
    rm.drainEvents();
    assertEquals(0, am.schedule().getAllocatedContainers().size());
    big.nodeHeartbeat(true);
    rm.drainEvents();
    List<Container> got = am.schedule().getAllocatedContainers();
    assertEquals(1, got.size());
    assertEquals(big.getNodeId(), got.get(0).getNodeId());
    assertEquals(0, describe().path("rejections").asInt());
  }

  @Test(timeout = 60000)
  public void rootQueueMetricsAreNeverNull() throws Exception {
    start(conf());
    assertNotNull(rm.getResourceScheduler().getRootQueueMetrics());
    MockNM nm1 = rm.registerNode("127.0.0.1:1234", 4 * GB, 4);
    RMApp app = submit(GB);
    MockRM.launchAndRegisterAM(app, rm, nm1);
    assertEquals(GB, rm.getResourceScheduler().getRootQueueMetrics().getAllocatedMB());
    assertEquals(3 * GB, rm.getResourceScheduler().getRootQueueMetrics().getAvailableMB());
    assertEquals(1, rm.getResourceScheduler().getRootQueueMetrics().getAppsRunning());
    assertEquals(Collections.singletonList(app.getCurrentAppAttempt().getAppAttemptId()),
        rm.getResourceScheduler().getAppsInQueue("default"));
  }

  /**
   * An administrator resizes a node ({@code yarn rmadmin -updateNodeResource}):
   * the core hears the new capacity, the part of an ask the smaller node
   * could not hold is served, and the headroom YARN reports follows.
   */
  @Test(timeout = 60000)
  public void aResizedNodeIsResizedInTheCore() throws Exception {
    start(conf());
    MockNM nm1 = rm.registerNode("127.0.0.1:1234", 2 * GB, 2);
    RMApp app = submit(GB);
    MockAM am = MockRM.launchAndRegisterAM(app, rm, nm1);
    am.addRequests(new String[] {"*"}, GB, 1, 3);
    am.schedule();
    nm1.nodeHeartbeat(true);
    rm.drainEvents();
    assertEquals(1, am.schedule().getAllocatedContainers().size()); // the node is full

    rm.getAdminService().updateNodeResource(UpdateNodeResourceRequest.newInstance(
        Collections.singletonMap(nm1.getNodeId(),
            ResourceOption.newInstance(Resource.newInstance(8 * GB, 8), -1))));
    rm.drainEvents();
    nm1.nodeHeartbeat(true);
    rm.drainEvents();
    assertEquals(2, am.schedule().getAllocatedContainers().size());
    assertEquals(8 * GB, describe().path("core").path("cluster").path("total").path("memory_mb").asLong());
    assertEquals(4 * GB, rm.getResourceScheduler().getRootQueueMetrics().getAvailableMB());
    assertEquals(0, describe().path("rejections").asInt());
  }
  /**
   * The headroom is given again only when it changed or an attempt was added
   * (a NODE_UPDATE that changes nothing skips the loop over every
   * application): after idle heartbeats, a new attempt still gets it, and
   * both attempts follow a change.
   */
  @Test(timeout = 60000)
  public void theHeadroomFollowsAfterIdleHeartbeats() throws Exception {
    start(conf());
    MockNM nm1 = rm.registerNode("127.0.0.1:1234", 8 * GB, 8);
    MockAM am1 = MockRM.launchAndRegisterAM(submit(GB), rm, nm1);
    for (int i = 0; i < 3; i++) {
      nm1.nodeHeartbeat(true);
      rm.drainEvents();
    }
    assertEquals(7 * GB, am1.schedule().getAvailableResources().getMemorySize());
    MockAM am2 = MockRM.launchAndRegisterAM(submit(GB), rm, nm1);
    nm1.nodeHeartbeat(true);
    rm.drainEvents();
    assertEquals(6 * GB, am2.schedule().getAvailableResources().getMemorySize());
    assertEquals(6 * GB, am1.schedule().getAvailableResources().getMemorySize());
    assertEquals(6 * GB, rm.getResourceScheduler().getRootQueueMetrics().getAvailableMB());
    allocateAndWait(am1, nm1, GB, 1, 2);
    nm1.nodeHeartbeat(true);
    rm.drainEvents();
    assertEquals(4 * GB, am2.schedule().getAvailableResources().getMemorySize());
  }
}
