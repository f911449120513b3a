package org.sojourn.yarn.minicluster;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.lang.management.ManagementFactory;
import javax.management.ObjectName;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.JobStatus;
import org.apache.hadoop.mapreduce.SleepJob;
import org.apache.hadoop.mapreduce.TaskReport;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.TypeConverter;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.junit.Test;
import org.sojourn.yarn.SojournScheduler;

/**
 * Task progress from a real MapReduce AM reaches hfsp while the tasks run
 * ({@code yarn.scheduler.sojourn.am-progress.interval-ms}), and hfsp's Δ rule
 * sizes the map phase from it before any map has finished.
 *
 * <p>One NodeManager of 1792 MB: the MR AM (512 MB) and the job's three maps
 * (384 MB each) all run at once. Each map sleeps 16 s in 16 records, so its
 * progress grows by 1/16 a second (no reduces: the map is the whole task);
 * the task tells its AM every second ({@code mapreduce.task.progress-report.interval}).
 * The RM reads the AM every second; hfsp has t = 2 training tasks, Δ = 2 s,
 * and 3 maps are not tiny ({@code tiny_threshold=3}). So both training maps
 * have run Δ with progress above 0 a few seconds after they start, and the
 * phase's final size S_f is set then, about 10 s before the first map ends.
 * Without progress readings, training would wait for two maps to complete.
 * Slow (about a minute): run with -PwithMiniCluster.
 */
public class AmProgressMiniClusterTest {
  private static final long MAP_MS = 16000;

  private static long firstMapFinish(Job job) throws Exception {
    long first = Long.MAX_VALUE;
    for (TaskReport r : job.getTaskReports(TaskType.MAP)) {
      if (r.getFinishTime() > 0) {
        first = Math.min(first, r.getFinishTime());
      }
    }
    return first;
  }

  /** hfsp's map phase of the job (3 tasks), from the scheduler's state; null before it appears. */
  private static JsonNode mapPhase(SojournScheduler s) throws Exception {
    JsonNode state = new ObjectMapper().readTree(s.describe());
    for (JsonNode p : state.path("core").path("state").path("phases")) {
      if ("map".equals(p.path("phase").asText()) && p.path("tasks").asInt() == 3) {
        return p;
      }
    }
    return null;
  }

  @Test(timeout = 150000)
  public void mapReduceTaskProgressReachesHfspBeforeTheMapsFinish() throws Exception {
    Configuration conf = MapReduceOnSojourn.conf("hfsp", 128);
    MapReduceOnSojourn.hfsp(conf, 2, 3);
    MapReduceOnSojourn.nodeMemory(conf, 1792);
    conf.setLong("yarn.scheduler.sojourn.hfsp.delta_ms", 2000);
    conf.setLong("yarn.scheduler.sojourn.am-progress.interval-ms", 1000);
    conf.setLong(YarnConfiguration.RM_NM_HEARTBEAT_INTERVAL_MS, 200);
    conf.setLong("mapreduce.task.progress-report.interval", 1000);

    MiniMRYarnCluster cluster = MapReduceOnSojourn.start("sojourn-am-progress", conf);
    try {
      SojournScheduler s = MapReduceOnSojourn.scheduler(cluster);
      ObjectName bean = new ObjectName("Hadoop:service=ResourceManager,name=SojournScheduler");
      SleepJob sleep = new SleepJob();
      sleep.setConf(new Configuration(cluster.getConfig()));
      Job job = sleep.createJob(3, 0, MAP_MS, 16, 1, 1);
      job.setJobName("am-progress");
      job.submit();

      RMApp app = cluster.getResourceManager().getRMContext().getRMApps()
          .get(TypeConverter.toYarn(job.getJobID()).getAppId());
      String trackingUrl = null;
      String amHost = null;
      long firstReport = -1;
      long sized = -1;
      JsonNode sizedPhase = null;
      while (!job.isComplete()) {
        long now = System.currentTimeMillis();
        RMAppAttempt attempt = app.getCurrentAppAttempt();
        if (trackingUrl == null && attempt != null && attempt.getAppAttemptState() == RMAppAttemptState.RUNNING) {
          // Where the poller reads the AM: what MRAppMaster registered as its tracking URL.
          trackingUrl = attempt.getOriginalTrackingUrl();
          amHost = attempt.getHost();
        }
        // As an administrator sees it: the MXBean's attribute over JMX.
        long reports = (Long) ManagementFactory.getPlatformMBeanServer().getAttribute(bean, "ProgressReports");
        if (firstReport < 0 && reports > 0) {
          firstReport = now;
        }
        JsonNode p = mapPhase(s);
        if (sized < 0 && p != null && !p.path("final_size_ms").isNull() && !p.path("final_size_ms").isMissingNode()) {
          sized = now;
          sizedPhase = p;
        }
        Thread.sleep(200);
      }
      assertTrue("the job failed: " + job.getStatus().getFailureInfo(), job.isSuccessful());
      assertEquals(JobStatus.State.SUCCEEDED, job.getJobState());

      long firstDone = firstMapFinish(job);
      String d = s.describe();
      String times = "AM web app at " + trackingUrl + "; first progress report seen at " + firstReport + ", map phase sized at " + sized
          + " (" + sizedPhase + "), first map finished at " + firstDone + "; " + d;
      System.out.println("AmProgressMiniClusterTest: " + times);
      assertTrue("no map finished? " + times, firstDone < Long.MAX_VALUE);
      assertTrue("the MR AM registered " + trackingUrl + " (host " + amHost + ")",
          trackingUrl != null && trackingUrl.matches("http://" + java.util.regex.Pattern.quote(amHost) + ":\\d+"));
      assertTrue("no progress report reached the core while the maps ran: " + times,
          firstReport > 0 && firstReport < firstDone);
      assertTrue("hfsp did not size the map phase before a map finished: " + times,
          sized > 0 && sized < firstDone);
      assertTrue(times, sizedPhase.path("final_size_ms").asDouble() > 0);
      JsonNode j = new ObjectMapper().readTree(d);
      assertTrue(d, j.path("progress_reports").asLong() > 0);
    } finally {
      cluster.stop();
    }
  }
}
