package org.sojourn.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.log4j.AppenderSkeleton;
import org.apache.log4j.Level;
import org.apache.log4j.Logger;
import org.apache.log4j.spi.LoggingEvent;
import org.junit.Test;

/** The flight recorder writes the core's input stream; native logs reach log4j. */
public class RecorderAndLogsTest extends SojournTestBase {

  @Test(timeout = 60000)
  public void aRecordedMockRmRunReplaysToIdenticalDecisions() throws Exception {
    File dir = new File(System.getProperty("sojourn.test.dir", System.getProperty("java.io.tmpdir")));
    dir.mkdirs();
    File rec = new File(dir, "recorder-" + System.nanoTime() + ".jsonl");
    YarnConfiguration conf = conf();
    conf.set("yarn.scheduler.sojourn.record.path", rec.getAbsolutePath());
    start(conf);
    MockNM nm = rm.registerNode("127.0.0.1:1234", 4 * GB, 4);
    RMApp app = submit(GB);
    MockAM am = MockRM.launchAndRegisterAM(app, rm, nm);
    assertEquals(2, allocateAndWait(am, nm, GB, 1, 2).size());
    rm.stop();
    rm = null;

    List<String> types = new ArrayList<>();
    for (String line : Files.readAllLines(rec.toPath(), StandardCharsets.UTF_8)) {
      JsonNode r = Protocol.JSON.readTree(line);
      assertTrue(line, r.has("now"));
      for (JsonNode e : r.path("events")) { // one line per step of the core
        types.add(e.path("type").asText());
      }
    }
    assertEquals("node_added", types.get(0));
    assertTrue(types.toString(), types.contains("app_added"));
    assertTrue(types.contains("asks_updated"));
    assertTrue(types.contains("node_heartbeat"));
    assertTrue(types.contains("container_started"));

    // The recorded stream, replayed by a fresh core, gives the same decisions.
    JsonNode replay = Protocol.JSON.readTree(Native.replay(rec.getAbsolutePath()));
    assertTrue(replay.toString(), replay.path("identical").asBoolean());
    assertTrue(replay.toString(), replay.path("decisions").asInt() >= 3);
    assertEquals(replay.path("recorded_decisions").asInt(), replay.path("decisions").asInt());

    // The simulator's `sojourn replay` reads the same files (events, .meta,
    // .decisions) and agrees: the RM run replays offline to identical decisions.
    File bin = new File(System.getProperty("sojourn.bin", "target/release/sojourn"));
    assertTrue("no sojourn binary at " + bin + " (gradle builds it; with -PnativeLib pass -PsojournBin)",
        bin.canExecute());
    Process p = new ProcessBuilder(bin.getAbsolutePath(), "replay", rec.getAbsolutePath())
        .redirectErrorStream(true).start();
    String out = new String(readAll(p.getInputStream()), StandardCharsets.UTF_8);
    assertEquals(out, 0, p.waitFor());
    assertTrue(out, out.contains("with policy fifo (seed 0)"));
    assertTrue(out, out.contains("identical to the " + replay.path("recorded_decisions").asInt() + " recorded"));
  }

  private static byte[] readAll(java.io.InputStream in) throws java.io.IOException {
    java.io.ByteArrayOutputStream buf = new java.io.ByteArrayOutputStream();
    byte[] b = new byte[8192];
    for (int n; (n = in.read(b)) > 0; ) {
      buf.write(b, 0, n);
    }
    return buf.toByteArray();
  }

  @Test(timeout = 60000)
  public void nativeLogLinesGoThroughLog4j() throws Exception {
    final List<String> seen = new ArrayList<>();
    AppenderSkeleton capture = new AppenderSkeleton() {
      @Override
      protected void append(LoggingEvent e) {
        synchronized (seen) {
          seen.add(e.getLoggerName() + " " + e.getLevel() + " " + e.getRenderedMessage());
        }
      }

      @Override
      public void close() {}

      @Override
      public boolean requiresLayout() {
        return false;
      }
    };
    Logger sojourn = Logger.getLogger("sojourn");
    sojourn.setLevel(Level.INFO);
    sojourn.addAppender(capture);
    try {
      start(conf());
      synchronized (seen) {
        boolean found = false;
        for (String s : seen) {
          found |= s.startsWith("sojourn.sojourn_jni.session INFO sojourn core started: policy fifo");
        }
        assertTrue(seen.toString(), found);
      }
    } finally {
      sojourn.removeAppender(capture);
    }
  }
}
