package org.sojourn.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.junit.Test;

/**
 * Hawk inside a real ResourceManager (MockRM; shared/research/delgado.md
 * §1): two NodeManagers of 8 vcores, half the nodes (the lowest core id,
 * nm1, registered first) in the short partition, the short/long bit from
 * the queue (short_queues=short), as the shipped hadoop-conf/sojourn-hawk.xml.
 * A very wide long job (100 tasks, in `default`) is placed by the central
 * LWL scheduler on the general partition (nm2) only and keeps most of its
 * asks pending. Two short jobs submitted after it (AM + 2 tasks each, in
 * `short`) probe both nodes; Hawk has no Succinct State Sharing, so a probe
 * may queue on nm2 behind the long tasks, but the short partition serves
 * the others (late binding) and stealing moves what is stuck: both jobs get
 * their AMs and tasks and finish while the wide job waits, and the wide job
 * never gets a container on nm1. Without the bit every task is short, the
 * wide job's probes fill both nodes and a short job's AM waits behind them.
 */
public class HawkInRmTest extends ShortBehindWideTestBase {
  private YarnConfiguration hawk(boolean shortBit) {
    YarnConfiguration conf = conf();
    conf.set("yarn.scheduler.sojourn.policy", "hawk");
    conf.set("yarn.scheduler.sojourn.queue.root.queues", "default,short");
    if (shortBit) {
      conf.set("yarn.scheduler.sojourn.hawk.short_queues", "short");
    }
    conf.set("yarn.scheduler.sojourn.hawk.short_partition_pct", "50");
    conf.set("yarn.scheduler.sojourn.hawk.network_delay_us", "0");
    return conf;
  }

  /**
   * Heartbeats both nodes until {@code app}'s AM container is allocated
   * (wherever its probes put it), then launches and registers the AM.
   */
  private MockAM launchWherePlaced(RMApp app) throws Exception {
    for (int i = 0; i < 100 && (app.getCurrentAppAttempt() == null
        || app.getCurrentAppAttempt().getMasterContainer() == null); i++) {
      heartbeatBoth();
      Thread.sleep(20);
    }
    assertNotNull(app.getApplicationId() + "'s AM was never placed", app.getCurrentAppAttempt().getMasterContainer());
    rm.waitForState(app.getCurrentAppAttempt().getAppAttemptId(), RMAppAttemptState.ALLOCATED);
    MockAM am = rm.sendAMLaunched(app.getCurrentAppAttempt().getAppAttemptId());
    am.registerAppAttempt();
    return am;
  }

  /** Asks {@code n} task containers and heartbeats both nodes until they come, or 4 s pass. */
  private List<Container> tasks(MockAM am, int n) throws Exception {
    am.addRequests(new String[] {"*"}, GB, 1, n);
    List<Container> got = new ArrayList<>(am.schedule().getAllocatedContainers());
    for (int i = 0; i < 80 && got.size() < n; i++) {
      heartbeatBoth();
      got.addAll(am.schedule().getAllocatedContainers());
      if (got.size() < n) {
        Thread.sleep(50);
      }
    }
    return got;
  }

  @Test(timeout = 90000)
  public void shortJobsBehindAVeryWideLongJobGetTheirContainersAndFinish() throws Exception {
    start(hawk(true));
    MockAM[] wideAm = new MockAM[1];
    List<Container> wide = startWide(wideAm);
    RMApp wideApp = rm.getRMContext().getRMApps().get(wideAm[0].getApplicationAttemptId().getApplicationId());
    boolean wideAmOnNm2 = wideApp.getCurrentAppAttempt().getMasterContainer().getNodeId().equals(nm2.getNodeId());
    assertEquals("long tasks never on the short partition", 0, on(wide, nm1));
    assertEquals("long tasks fill the general partition", wideAmOnNm2 ? 7 : 8, on(wide, nm2));

    for (String user : new String[] {"bob", "carol"}) {
      RMApp app = submit(GB, "short", user);
      MockAM am = launchWherePlaced(app);
      List<Container> got = tasks(am, 2);
      assertEquals(user + "'s short tasks start while the wide job waits", 2, got.size());
      finishShortJob(app, am, got);
    }
    // the wide job still has 90-odd tasks asked: none of them goes to the
    // short partition, even with nm1 idle
    for (int i = 0; i < 5; i++) {
      heartbeatBoth();
      assertEquals(0, wideAm[0].schedule().getAllocatedContainers().size());
    }
  }

  @Test(timeout = 90000)
  public void withoutTheShortBitTheWideJobBlocksThem() throws Exception {
    start(hawk(false));
    MockAM[] wideAm = new MockAM[1];
    List<Container> wide = startWide(wideAm);
    assertEquals("every task short: all 15 other slots, the short partition's too", 15, wide.size());
    assertTrue("the wide job runs on the short partition", on(wide, nm1) > 0);
    RMApp app = submit(GB, "short", "bob");
    for (int i = 0; i < 10; i++) {
      heartbeatBoth();
      Thread.sleep(20);
    }
    assertTrue("the short job's AM waits behind the wide job's probes",
        app.getCurrentAppAttempt() == null || app.getCurrentAppAttempt().getMasterContainer() == null);
  }
}
