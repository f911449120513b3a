package org.sojourn.yarn.sls;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.Test;

/**
 * SLS end to end (issue #6): integration/sls/compare.sh runs a tiny SLS trace (3 jobs of a
 * few seconds, 2 nodes of 4 GB) through Hadoop's Scheduler Load Simulator under Sojourn fifo,
 * Sojourn fair, CapacityScheduler and FairScheduler, each in its own JVM. Every job must
 * finish under every scheduler, and the comparison must have one row per scheduler.
 * Run with {@code gradle slsTest} (~2 min).
 */
public class SlsCompareTest {
  private static final List<String> SCHEDULERS =
      Arrays.asList("sojourn:fifo", "sojourn:fair", "capacity", "fair");
  private static final int JOBS = 3; // integration/sls/tiny-trace.json

  @Test
  public void everyJobFinishesUnderEveryScheduler() throws Exception {
    File repo = new File(System.getProperty("sojourn.repo.dir"));
    File out = new File(System.getProperty("sojourn.test.dir"), "compare");
    deleteTree(out);
    assertTrue(out.mkdirs());
    ProcessBuilder pb = new ProcessBuilder("bash", "integration/sls/compare.sh",
        "integration/sls/tiny-trace.json", "integration/sls/tiny-nodes.json",
        String.join(",", SCHEDULERS));
    pb.directory(repo);
    pb.environment().put("OUT", out.getAbsolutePath());
    pb.environment().put("SLS_CLASSPATH", System.getProperty("sojourn.sls.classpath"));
    pb.environment().put("NATIVE_DIR", System.getProperty("sojourn.native.dir"));
    pb.environment().put("NM_MB", "4096");
    pb.environment().put("NM_VCORES", "4");
    pb.environment().put("RUN_TIMEOUT_S", "120");
    pb.environment().put("SLS_HEAP", "512m");
    pb.redirectErrorStream(true);
    File log = new File(out, "compare.log");
    pb.redirectOutput(log);
    long t0 = System.nanoTime();
    Process p = pb.start();
    assertTrue("compare.sh took over 5 minutes", p.waitFor(5, TimeUnit.MINUTES));
    String text = new String(Files.readAllBytes(log.toPath()), StandardCharsets.UTF_8);
    System.out.println(text);
    System.out.printf("compare.sh: %.0f s%n", (System.nanoTime() - t0) / 1e9);
    assertEquals("compare.sh exit status; log:\n" + text, 0, p.exitValue());

    for (String s : SCHEDULERS) {
      File csv = new File(out, s.replace(':', '-') + "/out/jobruntime.csv");
      assertTrue(s + ": no " + csv, csv.isFile());
      Set<String> apps = new HashSet<>();
      List<String> lines = Files.readAllLines(csv.toPath(), StandardCharsets.UTF_8);
      assertTrue(lines.get(0).startsWith("JobID,"));
      for (String line : lines.subList(1, lines.size())) {
        if (!line.trim().isEmpty()) {
          apps.add(line.split(",")[0]);
        }
      }
      assertEquals(s + ": finished jobs in " + csv + ": " + apps, JOBS, apps.size());
    }

    // sojourn sls-compare: comparison.csv has a row per scheduler, a column per metric.
    List<String> summary = Files.readAllLines(new File(out, "comparison.csv").toPath(),
        StandardCharsets.UTF_8);
    assertEquals("comparison.csv: header + one row per scheduler: " + summary,
        1 + SCHEDULERS.size(), summary.size());
    List<String> columns = Arrays.asList(summary.get(0).split(",", -1));
    int finished = columns.indexOf("finished");
    int mean = columns.indexOf("all.response_s.mean");
    int containers = columns.indexOf("containers.allocated");
    assertTrue(summary.get(0), finished > 0 && mean > 0 && containers > 0);
    for (int i = 0; i < SCHEDULERS.size(); i++) {
      String[] f = summary.get(i + 1).split(",", -1);
      assertEquals(SCHEDULERS.get(i), f[0]);
      assertEquals(summary.get(i + 1), String.valueOf(JOBS), f[finished]);
      assertTrue(summary.get(i + 1), Double.parseDouble(f[mean]) > 0);
      // 9 tasks + one AM per job
      assertEquals(summary.get(i + 1), String.valueOf(9 + JOBS), f[containers]);
    }
    String table = new String(Files.readAllBytes(new File(out, "comparison.txt").toPath()),
        StandardCharsets.UTF_8);
    assertTrue(table, table.contains("vs " + SCHEDULERS.get(0)));
    for (String s : SCHEDULERS) {
      assertTrue(table, table.contains(s));
    }
    String html = new String(Files.readAllBytes(new File(out, "index.html").toPath()),
        StandardCharsets.UTF_8);
    assertEquals(html, 3, html.split("<svg ", -1).length - 1);
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
