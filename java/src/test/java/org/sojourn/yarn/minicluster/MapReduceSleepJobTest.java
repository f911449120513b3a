package org.sojourn.yarn.minicluster;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.JobStatus;
import org.apache.hadoop.mapreduce.SleepJob;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;
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

  /** Java 17 flags for the AM and task JVMs (yarn.md section 4). */
  private static final String OPENS = "--add-opens java.base/java.lang=ALL-UNNAMED "
      + "--add-opens java.base/java.util=ALL-UNNAMED --add-opens java.base/java.lang.reflect=ALL-UNNAMED "
      + "--add-opens java.base/java.net=ALL-UNNAMED --add-opens java.base/java.io=ALL-UNNAMED "
      + "--add-opens java.base/java.util.concurrent=ALL-UNNAMED --add-opens java.base/sun.nio.ch=ALL-UNNAMED "
      + "--add-exports java.base/sun.net.dns=ALL-UNNAMED --add-exports java.base/sun.net.util=ALL-UNNAMED";

  @Test(timeout = 600000)
  public void theSleepJobCompletesUnderSojourn() throws Exception {
    Configuration conf = new YarnConfiguration();
    conf.set(YarnConfiguration.RM_SCHEDULER, SojournScheduler.class.getName());
    conf.set("yarn.scheduler.sojourn.policy", policy);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, 256);
    conf.setInt(YarnConfiguration.NM_PMEM_MB, 3072);
    conf.setBoolean(YarnConfiguration.NM_VMEM_CHECK_ENABLED, false);
    conf.setBoolean(YarnConfiguration.NM_PMEM_CHECK_ENABLED, false);
    conf.setInt("yarn.app.mapreduce.am.resource.mb", 512);
    conf.set("yarn.app.mapreduce.am.command-opts", "-Xmx384m " + OPENS);
    conf.setInt("mapreduce.map.memory.mb", 384);
    conf.setInt("mapreduce.reduce.memory.mb", 384);
    conf.set("mapreduce.map.java.opts", "-Xmx256m " + OPENS);
    conf.set("mapreduce.reduce.java.opts", "-Xmx256m " + OPENS);

    MiniMRYarnCluster cluster = new MiniMRYarnCluster("sojourn-sleep", 1);
    cluster.init(conf);
    cluster.start();
    try {
      ResourceScheduler s = cluster.getResourceManager().getResourceScheduler();
      assertTrue(s.getClass().getName(), s instanceof SojournScheduler);
      SleepJob sleep = new SleepJob();
      sleep.setConf(new Configuration(cluster.getConfig()));
      Job job = sleep.createJob(2, 1, 500, 1, 500, 1);
      job.setJobName("sojourn-sleep");
      boolean ok = job.waitForCompletion(true);
      assertTrue("the sleep job failed: " + job.getStatus().getFailureInfo(), ok);
      assertEquals(JobStatus.State.SUCCEEDED, job.getJobState());
      String d = ((SojournScheduler) s).describe();
      assertTrue(d, d.contains("\"policy\":\"" + policy + "\""));
      // the AM, 2 maps and a reduce were placed by the core
      int allocations = Integer.parseInt(d.replaceAll(".*\"allocations\":(\\d+).*", "$1"));
      assertTrue(d, allocations >= 4);
    } finally {
      cluster.stop();
    }
  }
}
