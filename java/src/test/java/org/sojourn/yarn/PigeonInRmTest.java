package org.sojourn.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.util.List;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.junit.Test;

/**
 * Pigeon inside a real ResourceManager (MockRM; shared/research/pigeon.md
 * §6.2): two NodeManagers of 8 vcores, groups of 8 (one per node), half of
 * each group's slots reserved for short tasks, the short/long bit from the
 * queue (short_queues=short). A very wide long job (100 tasks, in
 * `default`) takes the unreserved slots and keeps most of its asks pending;
 * two short jobs submitted after it (AM + 2 tasks each, in `short`) still
 * get all their containers and finish while it waits. Without the bit
 * every task is short, the wide job's tasks fill the reserved slots too and
 * wait ahead of the short jobs' AMs at the masters: those get nothing.
 */
public class PigeonInRmTest extends ShortBehindWideTestBase {
  private YarnConfiguration pigeon(boolean shortBit) {
    YarnConfiguration conf = conf();
    conf.set("yarn.scheduler.sojourn.policy", "pigeon");
    conf.set("yarn.scheduler.sojourn.queue.root.queues", "default,short");
    if (shortBit) {
      conf.set("yarn.scheduler.sojourn.pigeon.short_queues", "short");
    }
    conf.set("yarn.scheduler.sojourn.pigeon.workers_per_group", "8");
    conf.set("yarn.scheduler.sojourn.pigeon.reserved_pct", "50");
    conf.set("yarn.scheduler.sojourn.pigeon.network_delay_us", "0");
    return conf;
  }

  @Test(timeout = 90000)
  public void shortJobsBehindAVeryWideJobAreNotBlockedByIt() throws Exception {
    start(pigeon(true));
    shortJobsGetThroughBehindTheWideJob(false);
  }

  /**
   * The same scene with the bit from the jobs' own tags (AppTags) instead of queues: the
   * wide job says its tasks run 10 minutes, the short ones 5 s; the cutoff is Yahoo's
   * 90.6 s (the default trace).
   */
  @Test(timeout = 90000)
  public void theShortLongBitFromTheJobsTaskDurationTag() throws Exception {
    start(pigeon(false));
    shortJobsGetThroughBehindTheWideJob(true);
  }

  /** {@code tagged}: the jobs carry sojourn.task-duration (10 min wide, 5 s short). */
  private void shortJobsGetThroughBehindTheWideJob(boolean tagged) throws Exception {
    MockAM[] wideAm = new MockAM[1];
    List<Container> wide = tagged ? startWide(wideAm, "sojourn.task-duration=10m") : startWide(wideAm);
    // 16 slots, 8 reserved: the wide AM (short, unreserved first) and 7
    // long tasks on the 8 unreserved slots; 93 tasks wait at the masters
    assertEquals("long tasks on the unreserved slots only", 7, wide.size());

    for (String user : new String[] {"bob", "carol"}) {
      RMApp app = tagged ? submitTagged(true, "short", user, "sojourn.task-duration=5s") : submit(GB, "short", user);
      MockAM am = MockRM.launchAndRegisterAM(app, rm, nm1);
      List<Container> got = allocateAndWait(am, nm1, GB, 1, 2);
      assertEquals(user + "'s short tasks start while the wide job waits", 2, got.size());
      // the short job has all it asked for: what is pending is the wide job's
      assertEquals("the wide job still has pending asks", WIDE - wide.size(), pendingContainers());
      // the short job's tasks and AM complete: it finishes
      finishShortJob(app, am, got);
    }
    // the wide job never gained a reserved slot: still 7 tasks running,
    // 93 asked
    for (int i = 0; i < 5; i++) {
      heartbeatBoth();
      assertEquals(0, wideAm[0].schedule().getAllocatedContainers().size());
    }
    assertEquals(WIDE - wide.size(), pendingContainers());
  }

  @Test(timeout = 90000)
  public void withoutTheShortBitTheWideJobBlocksThem() throws Exception {
    start(pigeon(false));
    MockAM[] wideAm = new MockAM[1];
    List<Container> wide = startWide(wideAm);
    assertEquals("every task short: all 15 other slots, reserved ones too", 15, wide.size());
    RMApp app = submit(GB, "short", "bob");
    for (int i = 0; i < 10; i++) {
      heartbeatBoth();
      Thread.sleep(20);
    }
    assertTrue("the short job's AM waits behind the wide job's tasks",
        app.getCurrentAppAttempt() == null || app.getCurrentAppAttempt().getMasterContainer() == null);
  }

  /** Containers asked for and not yet given, over all apps, as the core sees them. */
  private int pendingContainers() throws Exception {
    return describe().path("core").path("cluster").path("pending_containers").asInt();
  }
}
