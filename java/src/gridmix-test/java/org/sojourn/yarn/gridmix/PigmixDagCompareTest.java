package org.sojourn.yarn.gridmix;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.Test;

/**
 * PigMix's query DAGs as real jobs (issue #19): integration/gridmix/pigmix-compare.sh runs
 * integration/gridmix/tiny-dag.csv (query 0: one job; query 1: a diamond, two map-only jobs
 * then a join that reads both, every job submitted at time 0) with PigmixDagRunner on a
 * MiniMRYarnCluster of 2 real NodeManagers, under Sojourn fifo and the CapacityScheduler.
 * Every job must succeed, and the join must start only after both its parents finished:
 * were the parents ignored, it would be submitted at 0 with the others.
 * Run with {@code gradle gridmixTest --tests '*Pigmix*'}.
 */
public class PigmixDagCompareTest {
  private static final List<String> SCHEDULERS = Arrays.asList("sojourn:fifo", "capacity");
  private static final List<String> JOBS = Arrays.asList("q0-L1-0", "q1-L3-0", "q1-L3-1", "q1-L3-2-join");

  @Test
  public void joinsWaitForTheirParentsUnderEveryScheduler() throws Exception {
    File out = new File(System.getProperty("sojourn.test.dir"), "pigmix");
    CompareScript.run("integration/gridmix/pigmix-compare.sh", "integration/gridmix/tiny-dag.csv", SCHEDULERS, out,
        Collections.emptyMap());

    for (String s : SCHEDULERS) {
      File dir = new File(out, s.replace(':', '-'));
      List<String> lines = Files.readAllLines(new File(dir, "jobs.csv").toPath(), StandardCharsets.UTF_8);
      assertEquals(GridmixRunner.JOBS_HEADER, lines.get(0));
      assertEquals(s + ": applications: " + lines, JOBS.size() + 1, lines.size());
      Map<String, String[]> byName = new HashMap<>();
      for (String line : lines.subList(1, lines.size())) {
        String[] f = line.split(",", -1);
        assertEquals(s + ": " + line, "SUCCEEDED", f[5]);
        byName.put(f[1], f);
      }
      assertEquals(s + ": " + lines, JOBS.size(), byName.size());
      String[] join = byName.get("q1-L3-2-join");
      String[] left = byName.get("q1-L3-0");
      String[] right = byName.get("q1-L3-1");
      assertTrue(s + ": " + lines, join != null && left != null && right != null);
      long parentsDone = Math.max(Long.parseLong(left[8]), Long.parseLong(right[8]));
      assertTrue(s + ": the join was submitted before its parents finished: " + lines,
          Long.parseLong(join[6]) >= parentsDone);
      assertTrue(s + ": the join's AM launched before its parents finished: " + lines,
          Long.parseLong(join[7]) >= parentsDone);
      // The independent job did not wait for the diamond.
      assertTrue(s + ": " + lines, Long.parseLong(byName.get("q0-L1-0")[6]) < parentsDone);

      List<String> queries = Files.readAllLines(new File(dir, "queries.csv").toPath(), StandardCharsets.UTF_8);
      assertEquals(PigmixDagRunner.QUERIES_HEADER, queries.get(0));
      assertEquals(s + ": " + queries, 3, queries.size());
      String[] q1 = queries.get(2).split(",", -1);
      assertEquals(s + ": " + queries, "1", q1[0]);
      assertEquals(s + ": " + queries, "3", q1[2]);
      // The diamond's response spans its first submission to the join's finish.
      assertEquals(s + ": " + queries, Long.parseLong(join[8]), Long.parseLong(q1[4]));
      String run = new String(Files.readAllBytes(new File(dir, "run.json").toPath()), StandardCharsets.UTF_8);
      assertTrue(run, run.contains("\"ok\":true"));
    }

    // sojourn real-compare reads queries.csv: a queries section with a response per scheduler.
    List<String> summary = Files.readAllLines(new File(out, "comparison.csv").toPath(), StandardCharsets.UTF_8);
    assertEquals("comparison.csv: " + summary, 1 + SCHEDULERS.size(), summary.size());
    List<String> columns = Arrays.asList(summary.get(0).split(",", -1));
    int finished = columns.indexOf("query.finished");
    int mean = columns.indexOf("query.response_s.mean");
    assertTrue(summary.get(0), finished > 0 && mean > 0);
    for (int i = 0; i < SCHEDULERS.size(); i++) {
      String[] f = summary.get(i + 1).split(",", -1);
      assertEquals(summary.get(i + 1), "2", f[finished]);
      assertTrue(summary.get(i + 1), Double.parseDouble(f[mean]) > 0);
    }
    String table = new String(Files.readAllBytes(new File(out, "comparison.txt").toPath()),
        StandardCharsets.UTF_8);
    assertTrue(table, table.contains("query response max (s)") && table.contains("Response time per query"));
  }
}
