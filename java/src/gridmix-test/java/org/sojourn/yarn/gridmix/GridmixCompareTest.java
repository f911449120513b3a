package org.sojourn.yarn.gridmix;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.Test;

/**
 * GridMix end to end (issue #19): integration/gridmix/compare.sh replays a 3-job Rumen trace
 * (integration/gridmix/tiny-rumen.json, 2 maps a job) with Hadoop's GridMix in SLEEPJOB mode
 * on a MiniMRYarnCluster of 2 real NodeManagers, under Sojourn fifo and the
 * CapacityScheduler, each in its own JVM. Every job must succeed under both, and
 * `sojourn real-compare` must produce a row per scheduler. Run with {@code gradle gridmixTest}.
 */
public class GridmixCompareTest {
  private static final List<String> SCHEDULERS = Arrays.asList("sojourn:fifo", "capacity");
  private static final int JOBS = 3; // integration/gridmix/tiny-rumen.json

  @Test
  public void everyJobSucceedsUnderEveryScheduler() throws Exception {
    File out = new File(System.getProperty("sojourn.test.dir"), "compare");
    Map<String, String> caps = new HashMap<>();
    caps.put("MAX_MAP_MS", "3000");
    caps.put("MAX_REDUCE_MS", "3000");
    CompareScript.run("integration/gridmix/compare.sh", "integration/gridmix/tiny-rumen.json", SCHEDULERS, out, caps);

    for (String s : SCHEDULERS) {
      File csv = new File(out, s.replace(':', '-') + "/jobs.csv");
      assertTrue(s + ": no " + csv, csv.isFile());
      List<String> lines = Files.readAllLines(csv.toPath(), StandardCharsets.UTF_8);
      assertEquals(GridmixRunner.JOBS_HEADER, lines.get(0));
      assertEquals(s + ": applications in " + csv + ": " + lines, JOBS + 1, lines.size());
      for (String line : lines.subList(1, lines.size())) {
        String[] f = line.split(",", -1);
        assertTrue(s + ": " + line, f[1].startsWith("GRIDMIX"));
        assertEquals(s + ": " + line, "SUCCEEDED", f[5]);
        assertTrue(s + ": " + line, Long.parseLong(f[9]) > 0);
      }
      String run = new String(Files.readAllBytes(new File(out, s.replace(':', '-') + "/run.json").toPath()),
          StandardCharsets.UTF_8);
      assertTrue(run, run.contains("\"ok\":true"));
    }

    // sojourn real-compare: comparison.csv has a row per scheduler, a column per metric.
    List<String> summary = Files.readAllLines(new File(out, "comparison.csv").toPath(),
        StandardCharsets.UTF_8);
    assertEquals("comparison.csv: header + one row per scheduler: " + summary,
        1 + SCHEDULERS.size(), summary.size());
    List<String> columns = Arrays.asList(summary.get(0).split(",", -1));
    int succeeded = columns.indexOf("succeeded");
    int mean = columns.indexOf("all.response_s.mean");
    assertTrue(summary.get(0), succeeded > 0 && mean > 0);
    for (int i = 0; i < SCHEDULERS.size(); i++) {
      String[] f = summary.get(i + 1).split(",", -1);
      assertEquals(SCHEDULERS.get(i), f[0]);
      assertEquals(summary.get(i + 1), String.valueOf(JOBS), f[succeeded]);
      assertTrue(summary.get(i + 1), Double.parseDouble(f[mean]) > 0);
    }
    String table = new String(Files.readAllBytes(new File(out, "comparison.txt").toPath()),
        StandardCharsets.UTF_8);
    assertTrue(table, table.contains("vs " + SCHEDULERS.get(0)));
    for (String s : SCHEDULERS) {
      assertTrue(table, table.contains(s));
    }
    String html = new String(Files.readAllBytes(new File(out, "index.html").toPath()),
        StandardCharsets.UTF_8);
    assertEquals(html, 2, html.split("<svg ", -1).length - 1);
  }
}
