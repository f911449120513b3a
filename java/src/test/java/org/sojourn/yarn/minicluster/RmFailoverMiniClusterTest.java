package org.sojourn.yarn.minicluster;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.sojourn.yarn.minicluster.RecoveryCluster.await;

import java.io.File;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.ha.HAServiceProtocol.HAServiceState;
import org.apache.hadoop.ha.HAServiceProtocol.RequestSource;
import org.apache.hadoop.ha.HAServiceProtocol.StateChangeRequestInfo;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.HAUtil;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.junit.Test;
import org.sojourn.yarn.FreePorts;
import org.sojourn.yarn.MirrorCheckingScheduler;
import org.sojourn.yarn.nm.RmSuspendList;

/**
 * RM HA fail-over with real NodeManager processes (issue 13): a
 * MiniYARNCluster with two RMs, both running Sojourn (hfsp with
 * preemption=suspend), HA on with manual transitions through each RM's admin
 * service (automatic fail-over off: no ZooKeeper), and one
 * FileSystemRMStateStore both read. The NodeManager, the AMs and the client
 * reach the RMs through YARN's fail-over proxies; the suspend agent polls
 * both RMs' web addresses.
 *
 * <p>Two rounds ({@link SuspendedAcrossAnRm#round}): with containers running
 * and one of them suspended by hfsp and paused by the agent, rm0 hands over
 * to rm1, then rm1 back to rm0 (whose scheduler is a new one, made when it
 * went to standby). Each time the new active RM's core holds the three
 * containers the NodeManager reports, matches YARN's books at every
 * heartbeat, serves a new ask with no rejection, and every container and app
 * finishes.
 */
public class RmFailoverMiniClusterTest {
  private static final String[] IDS = {"rm0", "rm1"};

  @Test(timeout = 300000)
  public void theNewActiveRmsCoreHoldsTheRunningContainersAndServesAsks() throws Exception {
    File dir = RecoveryCluster.workDir("rm-ha");
    YarnConfiguration conf = RecoveryCluster.conf(dir, 2);
    conf.set("yarn.scheduler.sojourn.policy", "hfsp");
    conf.setBoolean(YarnConfiguration.RM_HA_ENABLED, true);
    conf.set(YarnConfiguration.RM_HA_IDS, String.join(",", IDS));
    conf.setBoolean(YarnConfiguration.AUTO_FAILOVER_ENABLED, false);
    // Fixed ports for each RM (MiniYARNCluster only picks them with ephemeral ports).
    for (String id : IDS) {
      conf.set(HAUtil.addSuffix(YarnConfiguration.RM_HOSTNAME, id), "127.0.0.1");
      for (String key : YarnConfiguration.getServiceAddressConfKeys(conf)) {
        conf.set(HAUtil.addSuffix(key, id), "127.0.0.1:" + FreePorts.next());
      }
    }
    MiniYARNCluster cluster = new MiniYARNCluster("sojourn-rm-ha", 2, 1, 1, 1);
    cluster.init(conf);
    cluster.start(); // rm0 is made active, rm1 stays standby
    YarnClient yc = YarnClient.createYarnClient();
    try {
      assertEquals(0, cluster.getActiveRMIndex());
      assertTrue(cluster.waitForNodeManagersToConnect(30000));
      Configuration c = cluster.getConfig();
      assertEquals("the agent polls both RMs", 2,
          new RmSuspendList(cluster.getNodeManager(0).getConfig(), 1000, new byte[32]).urls().size());
      yc.init(c);
      yc.start();
      SuspendedAcrossAnRm.round(cluster, yc, c, "hfsp", "hfsp", () -> failover(cluster, 0, 1));
      SuspendedAcrossAnRm.round(cluster, yc, c, "hfsp", "hfsp", () -> failover(cluster, 1, 0));
    } finally {
      yc.stop();
      cluster.stop();
    }
  }

  /** rm{from} goes to standby and rm{to} becomes active, as `yarn rmadmin -transitionTo...` does. */
  private static MirrorCheckingScheduler failover(MiniYARNCluster cluster, int from, int to) throws Exception {
    StateChangeRequestInfo req = new StateChangeRequestInfo(RequestSource.REQUEST_BY_USER);
    long t0 = System.currentTimeMillis();
    cluster.getResourceManager(from).getRMContext().getRMAdminService().transitionToStandby(req);
    ResourceManager active = cluster.getResourceManager(to);
    active.getRMContext().getRMAdminService().transitionToActive(req);
    assertEquals(HAServiceState.STANDBY, cluster.getResourceManager(from).getRMContext().getHAServiceState());
    assertEquals(HAServiceState.ACTIVE, active.getRMContext().getHAServiceState());
    assertEquals(to, cluster.getActiveRMIndex());
    MirrorCheckingScheduler s = (MirrorCheckingScheduler) active.getResourceScheduler();
    await("the NodeManager registers with rm" + to, 60000, () -> s.getNumClusterNodes() == 1);
    System.out.println("ha: rm" + from + " -> rm" + to + " in " + (System.currentTimeMillis() - t0) + " ms");
    return s;
  }
}
