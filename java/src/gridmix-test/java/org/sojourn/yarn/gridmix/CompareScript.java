package org.sojourn.yarn.gridmix;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs one of integration/gridmix's comparison scripts as the gridmix tests do: on 2
 * NodeManagers of 2048 MB / 4 vcores, a 300 s limit per scheduler, each scheduler in its
 * own JVM; asserts it exits 0 within 12 minutes, and prints its log.
 */
final class CompareScript {
  private CompareScript() {}

  /**
   * {@code bash SCRIPT INPUT SCHEDULERS} from the repository, writing under {@code out}
   * (emptied first), with {@code env} added to the test's settings.
   */
  static void run(String script, String input, List<String> schedulers, File out, Map<String, String> env)
      throws Exception {
    File repo = new File(System.getProperty("sojourn.repo.dir"));
    deleteTree(out);
    assertTrue(out.mkdirs());
    ProcessBuilder pb = new ProcessBuilder("bash", script, input, String.join(",", schedulers));
    pb.directory(repo);
    Map<String, String> e = pb.environment();
    e.put("OUT", out.getAbsolutePath());
    e.put("GRIDMIX_CLASSPATH", System.getProperty("sojourn.gridmix.classpath"));
    e.put("NATIVE_DIR", System.getProperty("sojourn.native.dir"));
    e.put("NODES", "2");
    e.put("NM_MB", "2048");
    e.put("NM_VCORES", "4");
    e.put("RUN_TIMEOUT_S", "300");
    e.put("RUNNER_HEAP", "768m");
    e.putAll(env);
    pb.redirectErrorStream(true);
    File log = new File(out, "compare.log");
    pb.redirectOutput(log);
    String name = new File(script).getName();
    long t0 = System.nanoTime();
    Process p = pb.start();
    assertTrue(name + " took over 12 minutes", p.waitFor(12, TimeUnit.MINUTES));
    String text = new String(Files.readAllBytes(log.toPath()), StandardCharsets.UTF_8);
    System.out.println(text);
    System.out.printf("%s: %.0f s%n", name, (System.nanoTime() - t0) / 1e9);
    assertEquals(name + " exit status; log:\n" + text, 0, p.exitValue());
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
