package org.sojourn.yarn.minicluster;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.JobStatus;
import org.apache.hadoop.mapreduce.SleepJob;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import java.util.Arrays;
import java.util.Collection;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.Parameterized;
import org.sojourn.yarn.SojournScheduler;

/**
 * A real MapReduce job (the sleep job: 2 maps, 1 reduce) on a MiniYARNCluster
 * whose ResourceManager runs Sojourn with each baseline policy: real
 * NodeManagers launch the MR AM and its tasks as JVMs. Slow (about a minute a
 * policy): run with -PwithMiniCluster.
 */
@RunWith(Parameterized.class)
public class MapReduceSleepJobTest {
  @Parameterized.Parameters(name = "{0}")
  public static Collection<Object[]> policies() {
    return Arrays.asList(new Object[][] {{"fifo"}, {"fair"}, {"capacity"}, {"hfsp"}});
  }

  private final String policy;

  public MapReduceSleepJobTest(String policy) {
    this.policy = policy;
  }

  @Test(timeout = 600000)
  public void theSleepJobCompletesUnderSojourn() throws Exception {
    Configuration conf = MapReduceOnSojourn.conf(policy, 256);
    conf.setInt(YarnConfiguration.NM_PMEM_MB, 3072);

    MiniMRYarnCluster cluster = MapReduceOnSojourn.start("sojourn-sleep", conf);
    try {
      SojournScheduler s = MapReduceOnSojourn.scheduler(cluster);
      SleepJob sleep = new SleepJob();
      sleep.setConf(new Configuration(cluster.getConfig()));
      Job job = sleep.createJob(2, 1, 500, 1, 500, 1);
      job.setJobName("sojourn-sleep");
      boolean ok = job.waitForCompletion(true);
      assertTrue("the sleep job failed: " + job.getStatus().getFailureInfo(), ok);
      assertEquals(JobStatus.State.SUCCEEDED, job.getJobState());
      String d = s.describe();
      assertTrue(d, d.contains("\"policy\":\"" + policy + "\""));
      // the AM, 2 maps and a reduce were placed by the core
      int allocations = Integer.parseInt(d.replaceAll(".*\"allocations\":(\\d+).*", "$1"));
      assertTrue(d, allocations >= 4);
    } finally {
      cluster.stop();
    }
  }
}
