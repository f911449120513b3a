package org.sojourn.yarn.minicluster;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.JobStatus;
import org.apache.hadoop.mapreduce.SleepJob;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.junit.Test;
import org.sojourn.yarn.SojournScheduler;

/**
 * Issue #4: hfsp runs real MapReduce jobs of mixed sizes in a MiniYARNCluster,
 * and a small job submitted behind a large one finishes first.
 *
 * <p>The cluster: one NodeManager of 1408 MB (and 8 vcores, never the limit):
 * exactly two MR AMs (512 MB each) and one map or reduce (384 MB), or, while
 * only the large job runs, its AM and two maps (with 128 MB to spare). The
 * minimum allocation is 128 MB, so the asks are not rounded up.
 *
 * <p>The large job (8 maps of 3 s, 1 reduce) starts alone. Once its maps run,
 * the small job (1 map of 0.5 s, no reduce) is submitted. Why the order is
 * deterministic with these hfsp settings (rust/policies/src/hfsp/mod.rs):
 * <ul>
 *   <li>AM asks go first: the small job's AM takes the room of the next large
 *       map to end (its 384 MB plus the 128 MB to spare);
 *   <li>{@code tiny_threshold=5}: the small job's map phase (1 task) is tiny,
 *       size 0, and is served before every non-tiny phase, training or not;
 *       the large job's map phase (8 tasks) is not tiny. So the small job's map
 *       gets the next container that frees after its AM asks, whatever the
 *       large job's virtual size or training state;
 *   <li>{@code preemption=wait}: nothing is killed or suspended, so no task
 *       re-runs and the timing does not depend on a grace period;
 *   <li>the large job's reduce (1 task) would also be tiny, and tiny phases go
 *       in submission order: {@code mapreduce.job.reduce.slowstart.completedmaps=1}
 *       keeps it from asking before all 8 maps are done (MapReduce's own
 *       setting, not hfsp's), so it never competes with the small job;
 *   <li>{@code map_slot_mb}/{@code reduce_slot_mb} of 256/512 give the virtual
 *       cluster of this small node at least one slot per pool (with the 1 GB
 *       defaults the MAP pool would have none and nothing would age).
 * </ul>
 * The large job then still has about five maps to run one at a time, so it
 * ends tens of seconds after the small one. Under fifo the small job's map
 * would wait for all 8. Slow (about 1.5 min): run with -PwithMiniCluster.
 */
public class HfspMapReduceTest {
  @Test(timeout = 240000)
  public void aSmallJobSubmittedBehindALargeOneFinishesFirst() throws Exception {
    Configuration conf = MapReduceOnSojourn.conf("hfsp", 128);
    MapReduceOnSojourn.hfsp(conf, 2, 5);
    MapReduceOnSojourn.nodeMemory(conf, 1408);
    conf.setLong(YarnConfiguration.RM_NM_HEARTBEAT_INTERVAL_MS, 200);
    conf.setFloat("mapreduce.job.reduce.slowstart.completedmaps", 1.0f);

    MiniMRYarnCluster cluster = MapReduceOnSojourn.start("sojourn-hfsp", conf);
    try {
      ResourceManager rm = cluster.getResourceManager();
      SojournScheduler s = MapReduceOnSojourn.scheduler(cluster);

      SleepJob bigSleep = new SleepJob();
      bigSleep.setConf(new Configuration(cluster.getConfig()));
      Job big = bigSleep.createJob(8, 1, 3000, 1, 500, 1);
      big.setJobName("large");
      big.submit();
      assertTrue("the large job's maps never ran: " + s.describe(), MapReduceOnSojourn.awaitFirstMap(big, 90000) >= 1);
      assertTrue("the large job ended before the small one was submitted", !big.isComplete());

      SleepJob smallSleep = new SleepJob();
      smallSleep.setConf(new Configuration(cluster.getConfig()));
      Job small = smallSleep.createJob(1, 0, 500, 1, 1, 1);
      small.setJobName("small");
      small.submit();

      assertTrue("the small job failed: " + small.getStatus().getFailureInfo(),
          small.waitForCompletion(false));
      assertTrue("the large job failed: " + big.getStatus().getFailureInfo(),
          big.waitForCompletion(false));
      assertEquals(JobStatus.State.SUCCEEDED, small.getJobState());
      assertEquals(JobStatus.State.SUCCEEDED, big.getJobState());

      RMApp smallApp = MapReduceOnSojourn.rmApp(rm, small);
      RMApp bigApp = MapReduceOnSojourn.rmApp(rm, big);
      long smallDone = small.getFinishTime();
      long bigDone = big.getFinishTime();
      String times = "small job: submitted " + smallApp.getSubmitTime() + ", finished " + smallDone
          + " (RM " + smallApp.getFinishTime() + "); large job: submitted " + bigApp.getSubmitTime()
          + ", finished " + bigDone + " (RM " + bigApp.getFinishTime() + ")";
      System.out.println("HfspMapReduceTest: " + times);
      assertTrue(times, smallApp.getSubmitTime() > bigApp.getSubmitTime());
      assertTrue("the small job did not finish first: " + times, smallDone < bigDone);
      assertTrue("the small job did not finish first (RM): " + times,
          smallApp.getFinishTime() < bigApp.getFinishTime());
      String d = s.describe();
      JsonNode j = new ObjectMapper().readTree(d);
      assertEquals(d, "hfsp", j.path("policy").asText());
      // 2 AMs, 9 maps, 1 reduce placed by the core; nothing preempted
      assertTrue(d, j.path("allocations").asInt() >= 12);
      assertEquals(d, 0, j.path("preemption_kills").asInt());
      assertEquals(d, 0, j.path("suspensions").asInt());
    } finally {
      cluster.stop();
    }
  }
}
