package org.sojourn.yarn.minicluster;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.JobStatus;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.junit.Test;

/**
 * Issue 15: under eagle, real short MapReduce jobs pass long ones in a
 * MiniYARNCluster. The RM is configured from the shipped
 * hadoop-conf/sojourn-eagle.xml (queues default,short; short_queues=short),
 * with the short partition raised to 50 % so that one of the two
 * NodeManagers is in it (the shipped 10 % floors to none below ten nodes).
 *
 * <p>Each NodeManager has 1664 MB: an MR AM (512 MB) and three tasks
 * (384 MB), or four tasks. A long sleep job in {@code default} (14 maps of
 * 4 s, no reduce) could run seven maps at once on the cluster; eagle's
 * central scheduler keeps it on the general node only, three or four at a
 * time. Once its maps run, a short sleep job (1 map of 0.5 s) is submitted to
 * {@code short}: Succinct State Sharing turns its AM and map away from the
 * general node, the short partition runs them, and it finishes while the
 * long job has waves of maps left. Under fifo (the check that this test can
 * fail) the long job takes every container until its last map is placed,
 * and the short job's AM starts only as the long job's last wave ends: it
 * finishes last. Slow (about 1.5 min): run with -PwithMiniCluster.
 */
public class EagleMiniClusterTest {
  /** The shipped eagle file, as an administrator merges it into yarn-site.xml, on a two-node cluster. */
  private static Configuration eagleConf() {
    Configuration conf = MapReduceOnSojourn.shipped("sojourn-eagle.xml", 128);
    conf.set("yarn.scheduler.sojourn.eagle.short_partition_pct", "50");
    MapReduceOnSojourn.nodeMemory(conf, 1664);
    conf.setLong(YarnConfiguration.RM_NM_HEARTBEAT_INTERVAL_MS, 200);
    return conf;
  }

  @Test(timeout = 300000)
  public void aShortJobSubmittedBehindALongOneFinishesFirst() throws Exception {
    Configuration conf = eagleConf();
    MiniMRYarnCluster cluster = new MiniMRYarnCluster("sojourn-eagle", 2);
    cluster.init(conf);
    cluster.start();
    try {
      assertTrue("two NodeManagers", cluster.waitForNodeManagersToConnect(30000));
      ResourceManager rm = cluster.getResourceManager();
      assertEquals("eagle", MapReduceOnSojourn.scheduler(cluster).getPolicy());

      Job longJob = MapReduceOnSojourn.submitSleep(cluster, "default", "long", "", 14, 4000);
      assertTrue("the long job's maps never ran", MapReduceOnSojourn.awaitFirstMap(longJob, 90000) >= 1);

      Job shortJob = MapReduceOnSojourn.submitSleep(cluster, "short", "short", "", 1, 500);

      assertTrue("the short job failed: " + shortJob.getStatus().getFailureInfo(),
          shortJob.waitForCompletion(false));
      assertTrue("the long job failed: " + longJob.getStatus().getFailureInfo(),
          longJob.waitForCompletion(false));
      assertEquals(JobStatus.State.SUCCEEDED, shortJob.getJobState());
      assertEquals(JobStatus.State.SUCCEEDED, longJob.getJobState());

      RMApp shortApp = MapReduceOnSojourn.rmApp(rm, shortJob);
      RMApp longApp = MapReduceOnSojourn.rmApp(rm, longJob);
      assertEquals("root.short", shortApp.getQueue());
      assertEquals("root.default", longApp.getQueue());
      String times = "short job: submitted " + shortApp.getSubmitTime() + ", finished " + shortApp.getFinishTime()
          + "; long job: submitted " + longApp.getSubmitTime() + ", finished " + longApp.getFinishTime();
      System.out.println("EagleMiniClusterTest: " + times);
      assertTrue(times, shortApp.getSubmitTime() > longApp.getSubmitTime());
      assertTrue("the short job did not pass the long one: " + times,
          shortApp.getFinishTime() < longApp.getFinishTime());
    } finally {
      cluster.stop();
    }
  }
}
