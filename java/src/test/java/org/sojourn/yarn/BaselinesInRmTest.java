package org.sojourn.yarn;

import static org.junit.Assert.assertEquals;

import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.junit.Test;

/**
 * The fair and capacity baselines inside a real ResourceManager (MockRM): two
 * queues compete for one node and each ends with the share YARN's own
 * scheduler would give it. The expected splits are computed by hand in each
 * test; they are the only fixed points of the policies' greedy choices.
 */
public class BaselinesInRmTest extends SojournTestBase {

  /** Two queues, each with one app (AM of 1 GB) asking {@code ask} containers of 1 GB. */
  private int[] compete(YarnConfiguration conf, int nodeGb, String q1, String q2, int ask)
      throws Exception {
    start(conf);
    MockNM nm = rm.registerNode("127.0.0.1:1234", nodeGb * GB, nodeGb);
    MockAM am1 = MockRM.launchAndRegisterAM(submit(GB, q1, "alice"), rm, nm);
    MockAM am2 = MockRM.launchAndRegisterAM(submit(GB, q2, "bob"), rm, nm);
    am1.addRequests(new String[] {"*"}, GB, 1, ask);
    am1.schedule();
    am2.addRequests(new String[] {"*"}, GB, 1, ask);
    am2.schedule();
    int got1 = 0;
    int got2 = 0;
    // Enough heartbeats for one container each, then a few more to show
    // nothing moves once the node is full.
    for (int i = 0; i < nodeGb + 4; i++) {
      nm.nodeHeartbeat(true);
      rm.drainEvents();
      got1 += am1.schedule().getAllocatedContainers().size();
      got2 += am2.schedule().getAllocatedContainers().size();
    }
    assertEquals("the node is full, never over-committed", nodeGb * GB, usedMb(nm));
    return new int[] {got1, got2};
  }

  /**
   * fair, weights 2:1 on a 12 GB node: the fair shares are 8 and 4 GB. The
   * next container always goes to the queue with the least usage/weight, so
   * usage ends at (8, 4): with the AMs counted, 7 and 3 task containers.
   */
  @Test(timeout = 60000)
  public void fairSplitsTheNodeByQueueWeight() throws Exception {
    YarnConfiguration conf = conf();
    conf.set("yarn.scheduler.sojourn.policy", "fair");
    conf.set("yarn.scheduler.sojourn.queue.root.queues", "prod,dev");
    conf.set("yarn.scheduler.sojourn.fair.queue.root.prod.weight", "2");
    conf.set("yarn.scheduler.sojourn.fair.queue.root.dev.weight", "1");
    int[] got = compete(conf, 12, "prod", "dev", 20);
    assertEquals("prod (weight 2)", 7, got[0]);
    assertEquals("dev (weight 1)", 3, got[1]);
    assertEquals("fair", scheduler().getPolicyName());
  }

  /**
   * capacity, 30/70 on a 10 GB node: the most under-served queue (least
   * used/guaranteed) gets the next container, so usage ends at (3, 7): with
   * the AMs counted, 2 and 6 task containers. The user limit (factor 1) would
   * stop each user at the queue's capacity anyway.
   */
  @Test(timeout = 60000)
  public void capacityServesTheMostUnderservedQueue() throws Exception {
    YarnConfiguration conf = conf();
    conf.set("yarn.scheduler.sojourn.policy", "capacity");
    conf.set("yarn.scheduler.sojourn.queue.root.queues", "a,b");
    conf.set("yarn.scheduler.sojourn.capacity.queue.root.queues", "a,b");
    conf.set("yarn.scheduler.sojourn.capacity.queue.root.a.capacity", "30");
    conf.set("yarn.scheduler.sojourn.capacity.queue.root.b.capacity", "70");
    int[] got = compete(conf, 10, "a", "b", 20);
    assertEquals("a (30%)", 2, got[0]);
    assertEquals("b (70%)", 6, got[1]);
    assertEquals("capacity", scheduler().getPolicyName());
  }
}
