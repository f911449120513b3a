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
 * Issue 16: a real MapReduce job states its SLO in its tags
 * ({@code mapreduce.job.tags=sojourn.deadline=3m,sojourn.value=1000}) and
 * TetriSched, configured from the shipped hadoop-conf/sojourn-tetrisched.xml,
 * keeps it ahead of a newer best-effort job in the same queue.
 *
 * <p>One NodeManager of 2048 MB: an MR AM (512 MB) and four maps (384 MB).
 * The SLO job (16 maps of 3 s) is submitted first; once its maps run, a
 * best-effort job (2 maps of 0.5 s) is submitted to the same queue. Every
 * slot the SLO job's maps free goes to its next map (value 1000 against the
 * best-effort job's about 1), so the best-effort job's AM starts only as the
 * SLO job's last wave is placed and the SLO job finishes first. Untagged,
 * the newer job wins the freed slots (its value has decayed less, A7; the
 * MockRM test {@code withoutTheTagTheNewerBestEffortJobIsServedFirst}) and
 * finishes while the older one has waves left: the check that this test can
 * fail. Slow (about 1.5 min): run with -PwithMiniCluster.
 */
public class TetriSchedMiniClusterTest {
  /** The shipped tetrisched file, as an administrator merges it into yarn-site.xml, on one small node. */
  private static Configuration tetrischedConf() {
    Configuration conf = MapReduceOnSojourn.shipped("sojourn-tetrisched.xml", 128);
    // The shipped 1024 MB slot would make this node two slots; the test's
    // containers are 384 MB.
    conf.set("yarn.scheduler.sojourn.tetrisched.slot_mb", "384");
    MapReduceOnSojourn.nodeMemory(conf, 2048);
    conf.setLong(YarnConfiguration.RM_NM_HEARTBEAT_INTERVAL_MS, 200);
    return conf;
  }

  @Test(timeout = 300000)
  public void aJobTaggedWithADeadlineKeepsAheadOfANewerBestEffortJob() throws Exception {
    MiniMRYarnCluster cluster = MapReduceOnSojourn.start("sojourn-tetrisched", tetrischedConf());
    try {
      assertTrue("one NodeManager", cluster.waitForNodeManagersToConnect(30000));
      ResourceManager rm = cluster.getResourceManager();
      assertEquals("tetrisched", MapReduceOnSojourn.scheduler(cluster).getPolicy());

      Job slo = MapReduceOnSojourn.submitSleep(cluster, "default", "slo", "sojourn.deadline=3m,sojourn.value=1000", 16, 3000);
      assertTrue("the SLO job's maps never ran", MapReduceOnSojourn.awaitFirstMap(slo, 90000) >= 1);

      Job bestEffort = MapReduceOnSojourn.submitSleep(cluster, "default", "best-effort", "", 2, 500);

      assertTrue("the SLO job failed: " + slo.getStatus().getFailureInfo(), slo.waitForCompletion(false));
      assertTrue("the best-effort job failed: " + bestEffort.getStatus().getFailureInfo(),
          bestEffort.waitForCompletion(false));
      assertEquals(JobStatus.State.SUCCEEDED, slo.getJobState());
      assertEquals(JobStatus.State.SUCCEEDED, bestEffort.getJobState());

      RMApp sloApp = MapReduceOnSojourn.rmApp(rm, slo);
      RMApp beApp = MapReduceOnSojourn.rmApp(rm, bestEffort);
      assertTrue("the RM has the job's tags: " + sloApp.getApplicationTags(),
          sloApp.getApplicationTags().contains("sojourn.deadline=3m"));
      String times = "SLO job: submitted " + sloApp.getSubmitTime() + ", finished " + sloApp.getFinishTime()
          + "; best-effort job: submitted " + beApp.getSubmitTime() + ", finished " + beApp.getFinishTime();
      System.out.println("TetriSchedMiniClusterTest: " + times);
      assertTrue(times, beApp.getSubmitTime() > sloApp.getSubmitTime());
      assertTrue("the newer best-effort job passed the SLO job: " + times,
          sloApp.getFinishTime() < beApp.getFinishTime());
      assertTrue("the SLO job met its deadline: " + times,
          sloApp.getFinishTime() - sloApp.getSubmitTime() < 180000);
    } finally {
      cluster.stop();
    }
  }
}
