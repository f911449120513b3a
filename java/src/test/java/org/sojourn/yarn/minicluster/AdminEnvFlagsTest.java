package org.sojourn.yarn.minicluster;

import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.SleepJob;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.junit.Test;

/**
 * The README's other way to give MapReduce's JVMs their Java 17 flags: not in
 * the job's java opts but once, for every container, through the
 * NodeManager's {@code yarn.nodemanager.admin-env} as
 * {@code JDK_JAVA_OPTIONS}, which the java launcher reads (and announces on
 * stderr). The sleep job must succeed with no flag in any java opts, and the
 * AM's and the tasks' stderr must show the launcher picked the flags up.
 * Slow: run with -PwithMiniCluster.
 */
public class AdminEnvFlagsTest {

  @Test(timeout = 600000)
  public void theFlagsReachEveryContainerThroughAdminEnv() throws Exception {
    Configuration conf = MapReduceOnSojourn.conf("fifo", 256);
    conf.set("yarn.app.mapreduce.am.command-opts", "-Xmx384m");
    conf.set("mapreduce.map.java.opts", "-Xmx256m");
    conf.set("mapreduce.reduce.java.opts", "-Xmx256m");
    conf.set(YarnConfiguration.NM_ADMIN_USER_ENV, "JDK_JAVA_OPTIONS=" + MapReduceOnSojourn.OPENS);
    conf.setInt(YarnConfiguration.NM_PMEM_MB, 3072);

    MiniMRYarnCluster cluster = MapReduceOnSojourn.start("sojourn-admin-env", conf);
    try {
      SleepJob sleep = new SleepJob();
      sleep.setConf(new Configuration(cluster.getConfig()));
      Job job = sleep.createJob(1, 1, 200, 1, 200, 1);
      job.setJobName("sojourn-admin-env");
      boolean ok = job.waitForCompletion(true);
      assertTrue("the sleep job failed with the flags in admin-env: " + job.getStatus().getFailureInfo(), ok);
      List<Path> stderrs = new ArrayList<>();
      for (String dir : cluster.getNodeManager(0).getConfig().getTrimmedStrings(YarnConfiguration.NM_LOG_DIRS)) {
        Path root = Paths.get(dir.startsWith("file:") ? dir.substring("file:".length()) : dir);
        if (Files.isDirectory(root)) {
          try (Stream<Path> s = Files.walk(root)) {
            stderrs.addAll(s.filter(p -> p.getFileName().toString().equals("stderr")).collect(Collectors.toList()));
          }
        }
      }
      // The AM, a map and a reduce: three containers, each announcing the flags.
      long picked = stderrs.stream().filter(AdminEnvFlagsTest::announcesTheFlags).count();
      assertTrue("containers whose JVM picked up JDK_JAVA_OPTIONS: " + picked + " of " + stderrs,
          picked >= 3);
    } finally {
      cluster.stop();
    }
  }

  private static boolean announcesTheFlags(Path stderr) {
    try {
      String text = new String(Files.readAllBytes(stderr), StandardCharsets.UTF_8);
      return text.contains("Picked up JDK_JAVA_OPTIONS") && text.contains("java.base/java.lang=ALL-UNNAMED");
    } catch (IOException e) {
      return false;
    }
  }
}
