package org.sojourn.yarn.minicluster;

import static org.junit.Assert.assertTrue;
import static org.sojourn.yarn.minicluster.RecoveryCluster.restart;

import java.io.File;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.junit.Test;

/**
 * Work-preserving RM restart with real NodeManager processes, under fifo,
 * fair, hfsp and kairos, each time with a container the NodeManager's agent
 * holds paused across the restart (issue 13).
 *
 * <p>One MiniYARNCluster: one NodeManager (2 GB, 2 vcores) running the suspend
 * agent; the RM keeps its state in a FileSystemRMStateStore on a local
 * directory and is restarted in place ({@code restartResourceManager}), at
 * the same ports, with the policy under test. The RMs run {@link
 * MirrorCheckingScheduler}, which compares YARN's books with the core's
 * mirror after every heartbeat.
 *
 * <p>Each round ({@link SuspendedAcrossAnRm#round}): hfsp or kairos suspends
 * one of two running tasks for a third and the agent stops it; the RM
 * restarts with the next policy; the three containers come back into YARN's
 * books and the core, the agent continues the victim, a new ask is served,
 * and everything exits 0 with its work intact.
 *
 * <p>The policies in order: hfsp restarts into hfsp, hfsp into fair, fair
 * (nothing to suspend) into kairos without work, kairos into kairos, and
 * kairos into fifo. So fifo and fair adopt containers another policy placed
 * and suspended, as after a policy change at a restart.
 */
public class RmRestartMiniClusterTest {

  @Test(timeout = 400000)
  public void everyPolicyRecoversTheContainersOfARealNodeManagerAcrossAnRmRestart() throws Exception {
    File dir = RecoveryCluster.workDir("rm-restart");
    YarnConfiguration conf = RecoveryCluster.conf(dir, 2);
    RecoveryCluster.fixPorts(conf);
    conf.set("yarn.scheduler.sojourn.policy", "hfsp");
    MiniYARNCluster cluster = new MiniYARNCluster("sojourn-rm-restart", 1, 1, 1);
    cluster.init(conf);
    cluster.start();
    YarnClient yc = YarnClient.createYarnClient();
    try {
      assertTrue(cluster.waitForNodeManagersToConnect(30000));
      Configuration c = cluster.getConfig();
      yc.init(c);
      yc.start();
      SuspendedAcrossAnRm.round(cluster, yc, c, "hfsp", "hfsp", () -> restart(cluster, "hfsp"));
      SuspendedAcrossAnRm.round(cluster, yc, c, "hfsp", "fair", () -> restart(cluster, "fair"));
      restart(cluster, "kairos");
      SuspendedAcrossAnRm.round(cluster, yc, c, "kairos", "kairos", () -> restart(cluster, "kairos"));
      SuspendedAcrossAnRm.round(cluster, yc, c, "kairos", "fifo", () -> restart(cluster, "fifo"));
    } finally {
      yc.stop();
      cluster.stop();
    }
  }
}
