package org.sojourn.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateResponse;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerExitStatus;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.PreemptionContainer;
import org.apache.hadoop.yarn.api.records.PreemptionMessage;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.junit.Test;

/**
 * Preemption decided by a real policy (fair, with fair-share preemption on),
 * carried out through YARN's path: the AM of the app over its share is told,
 * its container is killed after the grace, and the starved app gets the room.
 */
public class PolicyPreemptionTest extends SojournTestBase {

  @Test(timeout = 60000)
  public void fairPreemptsTheAppOverItsShareForTheStarvedOne() throws Exception {
    YarnConfiguration conf = conf();
    conf.set("yarn.scheduler.sojourn.policy", "fair");
    conf.set("yarn.scheduler.sojourn.queue.root.queues", "a,b");
    conf.set("yarn.scheduler.sojourn.fair.preemption", "true");
    conf.set("yarn.scheduler.sojourn.fair.fair_share_preemption_timeout_ms", "200");
    conf.set("yarn.scheduler.sojourn.fair.update_interval_ms", "50");
    conf.setLong("yarn.scheduler.sojourn.preemption.grace-ms", 300);
    conf.setLong("yarn.scheduler.sojourn.tick-ms", 20);
    start(conf);
    MockNM nm = rm.registerNode("127.0.0.1:1234", 8 * GB, 8);
    MockAM greedy = MockRM.launchAndRegisterAM(submit(GB, "a", "alice"), rm, nm);
    MockAM starved = MockRM.launchAndRegisterAM(submit(GB, "b", "bob"), rm, nm);
    // a takes the rest of the node: 7 of 8 GB, against a fair share of 4
    List<Container> taken = allocateAndWait(greedy, nm, GB, 1, 6);
    assertEquals(6, taken.size());
    assertEquals(8 * GB, usedMb(nm));
    Set<ContainerId> greedyIds = new HashSet<>(ids(taken));

    // b asks 3 GB and gets nothing until fair preempts from a
    starved.addRequests(new String[] {"*"}, GB, 1, 3);
    starved.schedule();
    PreemptionMessage msg = null;
    for (int i = 0; i < 100 && msg == null; i++) {
      nm.nodeHeartbeat(true);
      rm.drainEvents();
      AllocateResponse r = greedy.schedule();
      msg = r.getPreemptionMessage();
      if (msg == null) {
        Thread.sleep(20);
      }
    }
    assertNotNull("the AM of the app over its share got no PreemptionMessage", msg);
    Set<ContainerId> named = new HashSet<>();
    for (PreemptionContainer c : msg.getContract().getContainers()) {
      named.add(c.getId());
    }
    assertTrue("fair named containers that are not a's tasks: " + named, greedyIds.containsAll(named));

    // after the grace: a's containers are PREEMPTED and b runs on the room
    List<ContainerStatus> done = waitCompleted(greedy, 1);
    assertTrue(done.size() >= 1);
    for (ContainerStatus st : done) {
      assertEquals(ContainerExitStatus.PREEMPTED, st.getExitStatus());
      assertTrue(named.contains(st.getContainerId()));
    }
    int got = 0;
    for (int i = 0; i < 50 && got < 1; i++) {
      nm.nodeHeartbeat(true);
      rm.drainEvents();
      got += starved.schedule().getAllocatedContainers().size();
      Thread.sleep(20);
    }
    assertTrue("the starved app got no container after the preemption", got >= 1);
    assertTrue("the node is over-committed", usedMb(nm) <= 8 * GB);
  }
}
