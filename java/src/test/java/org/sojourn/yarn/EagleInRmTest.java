package org.sojourn.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.util.List;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.junit.Test;

/**
 * Eagle inside a real ResourceManager (MockRM; shared/research/delgado.md
 * §2): two NodeManagers of 8 vcores, half the nodes (the lowest core id,
 * nm1, registered first) in the short partition, the short/long bit from
 * the queue (short_queues=short). A very wide long job (100 tasks, in
 * `default`) is placed by the central LWL scheduler on the general
 * partition (nm2) only, and keeps most of its asks pending. Two short jobs
 * submitted after it (AM + 2 tasks each, in `short`) are turned away from
 * nm2 by Succinct State Sharing (it runs long tasks) and get all their
 * containers on nm1, and finish, while the wide job waits; the wide job
 * never gets a container on nm1, even once it is idle. Without the bit
 * every task is short and the wide job probes nm1 too.
 */
public class EagleInRmTest extends ShortBehindWideTestBase {
  private YarnConfiguration eagle(boolean shortBit) {
    YarnConfiguration conf = conf();
    conf.set("yarn.scheduler.sojourn.policy", "eagle");
    conf.set("yarn.scheduler.sojourn.queue.root.queues", "default,short");
    if (shortBit) {
      conf.set("yarn.scheduler.sojourn.eagle.short_queues", "short");
    }
    conf.set("yarn.scheduler.sojourn.eagle.short_partition_pct", "50");
    conf.set("yarn.scheduler.sojourn.eagle.network_delay_us", "0");
    return conf;
  }

  private boolean wideAmOnNm2(RMApp wide) {
    return wide.getCurrentAppAttempt().getMasterContainer().getNodeId().equals(nm2.getNodeId());
  }

  @Test(timeout = 90000)
  public void shortJobsBehindAVeryWideLongJobAreNotBlockedAndLongJobsStayOutOfTheShortPartition()
      throws Exception {
    start(eagle(true));
    MockAM[] wideAm = new MockAM[1];
    List<Container> wide = startWide(wideAm);
    RMApp wideApp = rm.getRMContext().getRMApps().get(wideAm[0].getApplicationAttemptId().getApplicationId());
    // long tasks by LWL on the general partition (nm2) only, as many as
    // its free slots
    assertEquals("long tasks never on the short partition", 0, on(wide, nm1));
    assertEquals("long tasks fill the general partition", wideAmOnNm2(wideApp) ? 7 : 8, on(wide, nm2));

    for (String user : new String[] {"bob", "carol"}) {
      RMApp app = submit(GB, "short", user);
      MockAM am = MockRM.launchAndRegisterAM(app, rm, nm1);
      NodeId amNode = app.getCurrentAppAttempt().getMasterContainer().getNodeId();
      assertEquals(user + "'s AM is turned away from the node running long tasks (SSS)", nm1.getNodeId(), amNode);
      List<Container> got = allocateAndWait(am, nm1, GB, 1, 2);
      assertEquals(user + "'s short tasks start while the wide job waits", 2, got.size());
      assertEquals(user + "'s short tasks run beside no long task", 2, on(got, nm1));
      finishShortJob(app, am, got);
    }
    // nm1 is now nearly idle, and the wide job still has 90-odd tasks
    // asked: none of them goes to the short partition
    for (int i = 0; i < 5; i++) {
      heartbeatBoth();
      assertEquals(0, wideAm[0].schedule().getAllocatedContainers().size());
    }
  }

  @Test(timeout = 90000)
  public void withoutTheShortBitTheWideJobSpreadsOverTheShortPartition() throws Exception {
    start(eagle(false));
    MockAM[] wideAm = new MockAM[1];
    List<Container> wide = startWide(wideAm);
    // every task short: probes over the whole cluster, the short partition
    // included, so the wide job holds every free slot
    assertEquals("all 15 other slots", 15, wide.size());
    assertTrue("the wide job runs on the short partition", on(wide, nm1) > 0);
  }
}
