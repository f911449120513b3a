package org.sojourn.yarn.minicluster;

import java.io.File;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapred.TIPStatus;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.SleepJob;
import org.apache.hadoop.mapreduce.TaskReport;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.TypeConverter;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.sojourn.yarn.SojournScheduler;

/**
 * The setup the MiniYARNCluster tests with real MapReduce jobs share: Sojourn
 * as the RM's scheduler, one NodeManager of a given size, MR AMs of 512 MB
 * and tasks of 384 MB, with the Java 17 flags their JVMs need.
 */
final class MapReduceOnSojourn {
  /** Java 17 flags for the AM and task JVMs (yarn.md section 4). */
  static final String OPENS = "--add-opens java.base/java.lang=ALL-UNNAMED "
      + "--add-opens java.base/java.util=ALL-UNNAMED --add-opens java.base/java.lang.reflect=ALL-UNNAMED "
      + "--add-opens java.base/java.net=ALL-UNNAMED --add-opens java.base/java.io=ALL-UNNAMED "
      + "--add-opens java.base/java.util.concurrent=ALL-UNNAMED --add-opens java.base/sun.nio.ch=ALL-UNNAMED "
      + "--add-exports java.base/sun.net.dns=ALL-UNNAMED --add-exports java.base/sun.net.util=ALL-UNNAMED";

  private MapReduceOnSojourn() {}

  /**
   * Sojourn running {@code policy}; MR AMs of 512 MB, maps and reduces of
   * 384 MB, no speculation.
   */
  static Configuration conf(String policy, int minAllocationMb) {
    Configuration conf = new YarnConfiguration();
    conf.set(YarnConfiguration.RM_SCHEDULER, SojournScheduler.class.getName());
    conf.set("yarn.scheduler.sojourn.policy", policy);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, minAllocationMb);
    conf.setBoolean(YarnConfiguration.NM_VMEM_CHECK_ENABLED, false);
    conf.setBoolean(YarnConfiguration.NM_PMEM_CHECK_ENABLED, false);
    conf.setInt("yarn.app.mapreduce.am.resource.mb", 512);
    conf.set("yarn.app.mapreduce.am.command-opts", "-Xmx384m " + OPENS);
    conf.setInt("mapreduce.map.memory.mb", 384);
    conf.setInt("mapreduce.reduce.memory.mb", 384);
    conf.set("mapreduce.map.java.opts", "-Xmx256m " + OPENS);
    conf.set("mapreduce.reduce.java.opts", "-Xmx256m " + OPENS);
    conf.setBoolean("mapreduce.map.speculative", false);
    conf.setBoolean("mapreduce.reduce.speculative", false);
    return conf;
  }

  /**
   * A shipped {@code hadoop-conf/} file (e.g. {@code sojourn-eagle.xml}) merged into
   * {@link #conf}'s settings, as an administrator merges it into yarn-site.xml: the
   * file decides the scheduler and the policy.
   */
  static Configuration shipped(File xml, int minAllocationMb) {
    if (!xml.isFile()) {
      throw new AssertionError("no shipped configuration " + xml.getAbsolutePath());
    }
    Configuration conf = conf("fifo", minAllocationMb);
    conf.unset(YarnConfiguration.RM_SCHEDULER);
    conf.unset("yarn.scheduler.sojourn.policy");
    conf.addResource(new Path(xml.getAbsolutePath()));
    return conf;
  }

  /** {@link #shipped(File, int)} for {@code hadoop-conf/NAME} of this repository. */
  static Configuration shipped(String name, int minAllocationMb) {
    return shipped(new File(System.getProperty("sojourn.repo.dir", "."), "hadoop-conf/" + name), minAllocationMb);
  }

  /**
   * Submits a map-only sleep job of {@code maps} maps of {@code mapMs} to {@code queue},
   * with the application tags {@code tags} (comma-separated, as
   * {@code mapreduce.job.tags}; empty for none).
   */
  static Job submitSleep(MiniMRYarnCluster cluster, String queue, String name, String tags, int maps, long mapMs)
      throws Exception {
    Configuration conf = new Configuration(cluster.getConfig());
    conf.set("mapreduce.job.queuename", queue);
    if (!tags.isEmpty()) {
      conf.set("mapreduce.job.tags", tags);
    }
    SleepJob sleep = new SleepJob();
    sleep.setConf(conf);
    Job job = sleep.createJob(maps, 0, mapMs, 1, 1, 1);
    job.setJobName(name);
    job.submit();
    return job;
  }

  /** Waits up to {@code waitMs} until one of {@code job}'s maps runs or has run; returns how many have. */
  static int awaitFirstMap(Job job, long waitMs) throws Exception {
    long end = System.currentTimeMillis() + waitMs;
    while (runningMaps(job) < 1 && !job.isComplete() && System.currentTimeMillis() < end) {
      Thread.sleep(250);
    }
    return runningMaps(job);
  }

  /** Each NodeManager of a MiniYARNCluster gets {@code mb} of memory. */
  static void nodeMemory(Configuration conf, int mb) {
    // MiniYARNCluster sets each NodeManager's memory from the first key.
    conf.setInt(YarnConfiguration.YARN_MINICLUSTER_NM_PMEM_MB, mb);
    conf.setInt(YarnConfiguration.NM_PMEM_MB, mb);
  }

  /**
   * hfsp with a virtual cluster small enough for one small NodeManager
   * ({@code map_slot_mb}/{@code reduce_slot_mb} of 256/512 give it at least
   * one slot per pool; with the 1 GB defaults the MAP pool would have none
   * and nothing would age), nothing preempted, {@code t} training tasks, and
   * phases of fewer than {@code tiny} tasks tiny.
   */
  static void hfsp(Configuration conf, int trainingTasks, int tiny) {
    conf.set("yarn.scheduler.sojourn.hfsp.preemption", "wait");
    conf.set("yarn.scheduler.sojourn.hfsp.tiny_threshold", Integer.toString(tiny));
    conf.set("yarn.scheduler.sojourn.hfsp.training_tasks", Integer.toString(trainingTasks));
    conf.set("yarn.scheduler.sojourn.hfsp.map_slot_mb", "256");
    conf.set("yarn.scheduler.sojourn.hfsp.reduce_slot_mb", "512");
  }

  /** A started MiniMRYarnCluster of one NodeManager; the caller stops it. */
  static MiniMRYarnCluster start(String name, Configuration conf) {
    MiniMRYarnCluster cluster = new MiniMRYarnCluster(name, 1);
    cluster.init(conf);
    cluster.start();
    return cluster;
  }

  /** The cluster's RM scheduler, which must be Sojourn. */
  /** Maps of {@code job} running or done. */
  static int runningMaps(Job job) throws Exception {
    int n = 0;
    for (TaskReport r : job.getTaskReports(TaskType.MAP)) {
      if (r.getCurrentStatus() == TIPStatus.RUNNING || r.getCurrentStatus() == TIPStatus.COMPLETE) {
        n++;
      }
    }
    return n;
  }

  /** The RM's record of {@code job}. */
  static RMApp rmApp(ResourceManager rm, Job job) {
    ApplicationId id = TypeConverter.toYarn(job.getJobID()).getAppId();
    return rm.getRMContext().getRMApps().get(id);
  }

  static SojournScheduler scheduler(MiniMRYarnCluster cluster) {
    Object s = cluster.getResourceManager().getResourceScheduler();
    if (!(s instanceof SojournScheduler)) {
      throw new AssertionError("the RM runs " + s.getClass().getName() + ", not Sojourn");
    }
    return (SojournScheduler) s;
  }
}
