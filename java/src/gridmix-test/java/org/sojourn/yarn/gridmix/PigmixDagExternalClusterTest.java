package org.sojourn.yarn.gridmix;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.io.FileOutputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.SleepJob;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;
import org.junit.Test;

/**
 * The PigMix DAG against a cluster the runner did not start (issue #19: "how an administrator
 * runs each benchmark against their own cluster"). The test starts a MiniMRYarnCluster of 2
 * NodeManagers (YARN's CapacityScheduler) standing for the administrator's cluster, writes its
 * client configuration to a directory, runs an unrelated job on it (someone else's), then
 * runs PigmixDagRunner with {@code --cluster-conf DIR}: the DAG's jobs must run there, in
 * parent order, and jobs.csv must hold exactly the DAG's applications, not the other job.
 */
public class PigmixDagExternalClusterTest {
  private static final String DAG = PigmixDagRunner.DAG_HEADER + "\n"
      + "0,0,q0-L1-0,0,,1,0,500,0\n"
      + "0,1,q0-L1-1,0,0,1,1,500,500\n";

  @Test
  public void runsOnAClusterItDidNotStartAndReportsOnlyItsOwnJobs() throws Exception {
    File work = new File(System.getProperty("sojourn.test.dir"), "pigmix-external");
    deleteTree(work);
    File confDir = new File(work, "conf");
    assertTrue(confDir.mkdirs());
    File dagFile = new File(work, "dag.csv");
    Files.write(dagFile.toPath(), DAG.getBytes(StandardCharsets.UTF_8));

    RealCluster.Options shape = new RealCluster.Options();
    shape.nodes = 2;
    shape.nmMb = 2048;
    MiniMRYarnCluster cluster = RealCluster.create("admin", shape);
    try {
      cluster.init(RealCluster.conf(shape));
      cluster.start();
      try (OutputStream out = new FileOutputStream(new File(confDir, "yarn-site.xml"))) {
        cluster.getConfig().writeXml(out);
      }

      // Someone else's job on the shared cluster.
      SleepJob other = new SleepJob();
      other.setConf(new Configuration(cluster.getConfig()));
      Job job = other.createJob(1, 0, 1, 1, 1, 1);
      job.setJobName("someone-elses-job");
      assertTrue("the unrelated job failed", job.waitForCompletion(false));

      PigmixDagRunner.Options o = PigmixDagRunner.Options.parse(new String[] {
          "--dag", dagFile.getPath(), "--out", new File(work, "run").getPath(), "--name", "capacity",
          "--cluster-conf", confDir.getPath()});
      List<PigmixDagRunner.DagJob> dag =
          PigmixDagRunner.parseDag(Arrays.asList(DAG.split("\n")), dagFile.getPath());
      assertEquals("the runner's exit status", 0, PigmixDagRunner.run(o, dag));
    } finally {
      RealCluster.stop(cluster);
    }

    File run = new File(work, "run");
    List<String> lines = Files.readAllLines(new File(run, "jobs.csv").toPath(), StandardCharsets.UTF_8);
    assertEquals(RealCluster.JOBS_HEADER, lines.get(0));
    assertEquals("only the DAG's applications: " + lines, 3, lines.size());
    Map<String, String[]> byName = new HashMap<>();
    for (String line : lines.subList(1, lines.size())) {
      String[] f = line.split(",", -1);
      assertEquals(line, "SUCCEEDED", f[5]);
      byName.put(f[1], f);
    }
    assertFalse(lines.toString(), byName.containsKey("someone-elses-job"));
    String[] parent = byName.get("q0-L1-0");
    String[] child = byName.get("q0-L1-1");
    assertTrue(lines.toString(), parent != null && child != null);
    assertTrue("the child was submitted before its parent finished: " + lines,
        Long.parseLong(child[6]) >= Long.parseLong(parent[8]));
    String runJson = new String(Files.readAllBytes(new File(run, "run.json").toPath()), StandardCharsets.UTF_8);
    assertTrue(runJson, runJson.contains("\"ok\":true"));
    // The NodeManagers are the cluster's, as its RM counts them.
    assertTrue(runJson, runJson.contains("\"nodes\":2,"));
  }

  private static void deleteTree(File f) {
    File[] kids = f.listFiles();
    if (kids != null) {
      for (File k : kids) {
        deleteTree(k);
      }
    }
    f.delete();
  }
}
