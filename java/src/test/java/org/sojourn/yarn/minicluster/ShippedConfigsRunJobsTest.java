package org.sojourn.yarn.minicluster;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.examples.QuasiMonteCarlo;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.SleepJob;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;
import org.apache.hadoop.yarn.api.records.FinalApplicationStatus;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.Parameterized;

/**
 * Issue 18: every shipped {@code hadoop-conf/sojourn-*.xml}, as an
 * administrator merges it into yarn-site.xml, runs MapReduce's {@code sleep}
 * and {@code pi} with no queue named: both succeed, in the configuration's
 * default leaf. Only kairos's {@code suspend=agent} is replaced by
 * {@code kill}, as the NodeManager here has no agent. Slow (about a minute a
 * file): run with -PwithMiniCluster.
 */
@RunWith(Parameterized.class)
public class ShippedConfigsRunJobsTest {
  @Parameterized.Parameters(name = "{0}")
  public static Collection<Object[]> files() {
    File dir = new File(System.getProperty("sojourn.repo.dir", "."), "hadoop-conf");
    File[] xml = dir.listFiles((d, n) -> n.startsWith("sojourn-") && n.endsWith(".xml"));
    if (xml == null || xml.length < 5) {
      throw new AssertionError("the shipped configurations are not in " + dir.getAbsolutePath());
    }
    Arrays.sort(xml);
    List<Object[]> out = new ArrayList<>();
    for (File f : xml) {
      out.add(new Object[] {f.getName(), f});
    }
    return out;
  }

  private final File xml;

  public ShippedConfigsRunJobsTest(String name, File xml) {
    this.xml = xml;
  }

  @Test(timeout = 600000)
  public void sleepAndPiRunWithNoQueueNamed() throws Exception {
    // The file decides the scheduler and the policy, as in yarn-site.xml.
    Configuration conf = MapReduceOnSojourn.shipped(xml, 256);
    if ("agent".equals(conf.get("yarn.scheduler.sojourn.suspend"))) {
      conf.set("yarn.scheduler.sojourn.suspend", "kill");
    }
    conf.setInt(YarnConfiguration.NM_PMEM_MB, 4096);
    MiniMRYarnCluster cluster = MapReduceOnSojourn.start("shipped-" + xml.getName().replace(".xml", ""), conf);
    try {
      MapReduceOnSojourn.scheduler(cluster);
      Configuration client = new Configuration(cluster.getConfig());
      client.unset("mapreduce.job.queuename");
      SleepJob sleep = new SleepJob();
      sleep.setConf(new Configuration(client));
      Job job = sleep.createJob(2, 1, 300, 1, 300, 1);
      job.setJobName("shipped-sleep");
      boolean ok = job.waitForCompletion(true);
      assertTrue(xml.getName() + ": sleep failed: " + job.getStatus().getFailureInfo(), ok);
      Path tmp = new Path(new File(System.getProperty("java.io.tmpdir"),
          "sojourn-pi-" + xml.getName() + "-" + System.nanoTime()).getAbsolutePath());
      BigDecimal pi = QuasiMonteCarlo.estimatePi(2, 1000, tmp, new Configuration(client));
      assertEquals(xml.getName() + ": pi = " + pi, 3.1, pi.doubleValue(), 0.2);
      String leaf = "sojourn-capacity.xml".equals(xml.getName()) || "sojourn-fair.xml".equals(xml.getName())
          ? "root.dev" : "root.default";
      List<RMApp> apps = new ArrayList<>(cluster.getResourceManager().getRMContext().getRMApps().values());
      assertEquals(xml.getName(), 2, apps.size());
      for (RMApp app : apps) {
        assertEquals(xml.getName() + " " + app.getName(), leaf, app.getQueue());
        assertEquals(xml.getName() + " " + app.getName(), FinalApplicationStatus.SUCCEEDED,
            app.getFinalApplicationStatus());
      }
    } finally {
      cluster.stop();
    }
  }
}
