package org.sojourn.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import java.util.List;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateResponse;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerExitStatus;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.PreemptionContainer;
import org.apache.hadoop.yarn.api.records.PreemptionMessage;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.junit.Test;

/**
 * Kill preemption through YARN's path: the AM is told (PreemptionMessage), the
 * container is killed after the grace period, the AM sees PREEMPTED, and the
 * core learns the container is gone. No policy in the catalog preempts yet
 * (fair and capacity will), so the decision is injected as the core would
 * send it.
 */
public class PreemptionTest extends SojournTestBase {

  @Test(timeout = 60000)
  public void theAmIsAskedThenTheContainerIsKilledAfterTheGrace() throws Exception {
    YarnConfiguration conf = conf();
    conf.setLong("yarn.scheduler.sojourn.preemption.grace-ms", 400);
    conf.setLong("yarn.scheduler.sojourn.tick-ms", 20);
    start(conf);
    MockNM nm = rm.registerNode("127.0.0.1:1234", 4 * GB, 4);
    RMApp app = submit(GB);
    MockAM am = MockRM.launchAndRegisterAM(app, rm, nm);
    List<Container> got = allocateAndWait(am, nm, GB, 1, 2);
    assertEquals(2, got.size());
    Container victim = got.get(0);
    Long coreId = scheduler().coreIdOf(victim.getId());
    assertNotNull(coreId);

    scheduler().applyForTest("[{\"type\":\"preempt\",\"container\":" + coreId + ",\"mode\":\"kill\"}]");
    AllocateResponse r = am.schedule();
    PreemptionMessage msg = r.getPreemptionMessage();
    assertNotNull("the AM got no PreemptionMessage", msg);
    boolean named = false;
    for (PreemptionContainer c : msg.getContract().getContainers()) {
      named |= c.getId().equals(victim.getId());
    }
    assertTrue(msg.toString(), named);
    assertEquals(3 * GB, usedMb(nm)); // not killed yet: the AM has its grace

    List<ContainerStatus> done = waitCompleted(am, 1);
    assertEquals(1, done.size());
    assertEquals(victim.getId(), done.get(0).getContainerId());
    assertEquals(ContainerExitStatus.PREEMPTED, done.get(0).getExitStatus());
    rm.drainEvents();
    assertEquals(2 * GB, usedMbSettling(nm, 2 * GB));
    assertEquals(1, rm.getResourceScheduler().getRootQueueMetrics().getAggregatePreemptedContainers());
    assertEquals(2, describe().path("core").path("cluster").path("containers").asInt());
    assertEquals(1, describe().path("preemption_kills").asInt());
  }

  @Test(timeout = 60000)
  public void suspendAndResumeAreRejectedBackToTheCoreWithSuspendReject() throws Exception {
    YarnConfiguration conf = conf();
    conf.set("yarn.scheduler.sojourn.suspend", "reject");
    start(conf);
    MockNM nm = rm.registerNode("127.0.0.1:1234", 4 * GB, 4);
    RMApp app = submit(GB);
    MockAM am = MockRM.launchAndRegisterAM(app, rm, nm);
    List<Container> got = allocateAndWait(am, nm, GB, 1, 1);
    Long coreId = scheduler().coreIdOf(got.get(0).getId());
    scheduler().applyForTest("[{\"type\":\"preempt\",\"container\":" + coreId
        + ",\"mode\":\"suspend\"},{\"type\":\"resume\",\"container\":" + coreId + "}]");
    assertEquals(2, describe().path("rejections").asInt());
    assertEquals(2, describe().path("core").path("stats").path("rejections").asInt());
    assertEquals(2 * GB, usedMb(nm));
  }
}
