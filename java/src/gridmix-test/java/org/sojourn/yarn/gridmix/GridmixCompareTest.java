package org.sojourn.yarn.gridmix;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
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
    File repo = new File(System.getProperty("sojourn.repo.dir"));
    File out = new File(System.getProperty("sojourn.test.dir"), "compare");
    deleteTree(out);
    assertTrue(out.mkdirs());
    ProcessBuilder pb = new ProcessBuilder("bash", "integration/gridmix/compare.sh",
        "integration/gridmix/tiny-rumen.json", String.join(",", SCHEDULERS));
    pb.directory(repo);
    pb.environment().put("OUT", out.getAbsolutePath());
    pb.environment().put("GRIDMIX_CLASSPATH", System.getProperty("sojourn.gridmix.classpath"));
    pb.environment().put("NATIVE_DIR", System.getProperty("sojourn.native.dir"));
    pb.environment().put("NODES", "2");
    pb.environment().put("NM_MB", "2048");
    pb.environment().put("NM_VCORES", "4");
    pb.environment().put("MAX_MAP_MS", "3000");
    pb.environment().put("MAX_REDUCE_MS", "3000");
    pb.environment().put("RUN_TIMEOUT_S", "300");
    pb.environment().put("RUNNER_HEAP", "768m");
    pb.redirectErrorStream(true);
    File log = new File(out, "compare.log");
    pb.redirectOutput(log);
    long t0 = System.nanoTime();
    Process p = pb.start();
    assertTrue("compare.sh took over 12 minutes", p.waitFor(12, TimeUnit.MINUTES));
    String text = new String(Files.readAllBytes(log.toPath()), StandardCharsets.UTF_8);
    System.out.println(text);
    System.out.printf("compare.sh: %.0f s%n", (System.nanoTime() - t0) / 1e9);
    assertEquals("compare.sh exit status; log:\n" + text, 0, p.exitValue());

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

  private static void deleteTree(File f) throws IOException {
    File[] kids = f.listFiles();
    if (kids != null) {
      for (File k : kids) {
        deleteTree(k);
      }
    }
    if (f.exists() && !f.delete()) {
      throw new IOException("cannot delete " + f);
    }
  }
}
