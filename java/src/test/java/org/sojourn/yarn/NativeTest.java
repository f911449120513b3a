package org.sojourn.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.File;
import java.io.FileInputStream;
import java.util.Collections;
import java.util.TreeMap;
import org.junit.Test;

/** The native boundary itself: errors become exceptions, panics too, the JVM survives. */
public class NativeTest {
  private static final String SETUP = "["
      + "{\"type\":\"node_added\",\"node\":1,\"name\":\"h1:1\",\"rack\":\"/r\","
      + "\"capacity\":{\"memory_mb\":4096,\"vcores\":4}},"
      + "{\"type\":\"app_added\",\"app\":1,\"queue\":\"root.default\",\"user\":\"u\"},"
      + "{\"type\":\"asks_updated\",\"app\":1,\"asks\":[{\"priority\":1,"
      + "\"capability\":{\"memory_mb\":1024,\"vcores\":1},\"count\":2}]},"
      + "{\"type\":\"node_heartbeat\",\"node\":1}]";

  @Test
  public void aBatchComesBackAsDecisions() throws Exception {
    try (Native n = Native.open("fifo", Collections.emptyMap(), "{\"seed\":1}", 3)) {
      Protocol.Response r = Protocol.decode(n.step(5, SETUP));
      assertEquals(2, r.decisions.size());
      assertTrue(r.decisions.get(0) instanceof Protocol.Allocate);
      assertTrue(r.errors.isEmpty());
      JsonNode d = Protocol.JSON.readTree(n.describe());
      assertEquals(2, d.path("cluster").path("containers").asInt());
      assertEquals(-1, n.nextWake());
    }
  }

  @Test
  public void aBinaryStepWhoseResponseOutgrowsItsBufferLosesNothing() throws Exception {
    try (Native n = Native.open("fifo", Collections.emptyMap(), "{\"seed\":1}", 3)) {
      java.util.List<com.fasterxml.jackson.databind.node.ObjectNode> batch = new java.util.ArrayList<>();
      for (JsonNode e : Protocol.JSON.readTree(SETUP)) {
        batch.add((com.fasterxml.jackson.databind.node.ObjectNode) e);
      }
      Wire w = new Wire();
      int length = w.encode(batch);
      java.nio.ByteBuffer small = Wire.direct(16);
      java.nio.ByteBuffer got = n.step(5, w.events(), length, small);
      assertTrue("a larger buffer was made", got != small && got.capacity() > 16);
      Protocol.Response r = Wire.decode(got);
      assertEquals(2, r.decisions.size());
      assertTrue(r.decisions.get(0) instanceof Protocol.Allocate);
      assertEquals(2, Protocol.JSON.readTree(n.describe()).path("cluster").path("containers").asInt());
      // A heartbeat that changes nothing: nothing back, and the small buffer is enough.
      length = w.encode(Collections.singletonList(Protocol.nodeHeartbeat(1)));
      Protocol.Response quiet = Wire.decode(n.step(6, w.events(), length, small));
      assertTrue(quiet.decisions.isEmpty() && quiet.errors.isEmpty());
    }
  }

  @Test
  public void aBinaryStepRefusesBrokenInputNamingIt() {
    try (Native n = Native.open("fifo", Collections.emptyMap(), "{\"seed\":1}", 3)) {
      java.nio.ByteBuffer events = Wire.direct(16);
      events.put((byte) 1).putInt(1).put((byte) 99);
      try {
        n.step(5, events, 6, Wire.direct(64));
        fail("an unknown tag was accepted");
      } catch (IllegalArgumentException e) {
        assertTrue(e.getMessage(), e.getMessage().contains("unknown tag 99"));
      }
      try {
        n.step(5, events, 6, events);
        fail("one buffer for both was accepted");
      } catch (IllegalArgumentException e) {
        assertTrue(e.getMessage(), e.getMessage().contains("share one buffer"));
      }
      try {
        n.step(5, java.nio.ByteBuffer.allocate(16), 6, Wire.direct(64));
        fail("a heap buffer was accepted");
      } catch (IllegalArgumentException e) {
        assertTrue(e.getMessage(), e.getMessage().contains("not a direct ByteBuffer"));
      }
      // Broken input costs the call, not the core.
      events.clear();
      events.put((byte) 1).putInt(0);
      assertTrue(Wire.decode(n.step(5, events, 5, Wire.direct(64))).decisions.isEmpty());
    }
  }

  @Test
  public void unknownPolicyIsAnIllegalArgumentNamingIt() {
    try {
      Native.open("fiffo", Collections.emptyMap(), "", 3).close();
      fail("expected an exception");
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("fiffo"));
    }
  }

  @Test
  public void unknownParameterIsAnIllegalArgumentNamingIt() {
    TreeMap<String, String> p = new TreeMap<>();
    p.put("quantum_ms", "10");
    try {
      Native.open("fifo", p, "", 3).close();
      fail("expected an exception");
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("quantum_ms"));
    }
  }

  @Test
  public void aBatchThatIsNotAnArrayIsAnIllegalArgument() {
    try (Native n = Native.open("fifo", Collections.emptyMap(), "", 3)) {
      n.step(0, "{\"type\":\"node_heartbeat\",\"node\":1}");
      fail("expected an exception");
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("bad input"));
    }
  }

  /** A malformed event inside a batch is refused alone, by index, as an error; the rest applies. */
  @Test
  public void aMalformedEventIsRefusedAloneWithItsKind() {
    try (Native n = Native.open("fifo", Collections.emptyMap(), "", 3)) {
      Protocol.Response r = Protocol.decode(n.step(0, "[{\"type\":\"warp_drive\"},"
          + "{\"type\":\"node_added\",\"node\":1,\"name\":\"h1\",\"rack\":\"/r\","
          + "\"capacity\":{\"memory_mb\":1024,\"vcores\":1}}]"));
      assertEquals(1, r.errors.size());
      assertEquals(0, r.errors.get(0).index);
      assertEquals(Protocol.Refusal.ERROR, r.errors.get(0).kind);
      assertTrue(r.errors.get(0).message, r.errors.get(0).message.contains("warp_drive"));
      assertTrue(n.describe(), n.describe().contains("\"nodes\":1"));
    }
  }

  @Test
  public void aPanicBecomesAnIllegalStateAndTheJvmLives() {
    Native.load();
    try {
      Native.nPanicForTest();
      fail("expected an exception");
    } catch (IllegalStateException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("deliberate panic"));
    }
    // the panic hook logged instead of printing to stderr
    assertTrue(Native.drainLogs().contains("deliberate panic"));
    try (Native n = Native.open("fifo", Collections.emptyMap(), "", 3)) {
      assertTrue(n.isOpen());
    }
  }

  @Test
  public void aClosedHandleIsAnIllegalState() {
    Native n = Native.open("fifo", Collections.emptyMap(), "", 3);
    n.close();
    n.close(); // idempotent on the Java side
    assertFalse(n.isOpen());
    try {
      n.step(0, "[]");
      fail("expected an exception");
    } catch (IllegalStateException e) {
      assertTrue(e.getMessage().contains("closed"));
    }
    try {
      Native.nStep(123456789L, 0, "[]");
      fail("expected an exception");
    } catch (IllegalStateException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("not open"));
    }
  }

  @Test
  public void theCatalogListsFifo() {
    assertTrue(SojournConfig.knownPolicies().contains("fifo"));
  }

  @Test
  public void theJarCarriesTheLibraryForExtraction() throws Exception {
    File f = Native.extract();
    try (FileInputStream in = new FileInputStream(f)) {
      byte[] magic = new byte[4];
      assertEquals(4, in.read(magic));
      assertEquals(0x7f, magic[0]);
      assertEquals('E', magic[1]);
      assertEquals('L', magic[2]);
      assertEquals('F', magic[3]);
    }
    assertTrue(f.length() > 100_000);
    // Issue 18: the same build goes to the same private, content-named
    // directory (no new temp dir per RM start), and old per-start dirs go.
    java.io.File stale = java.nio.file.Files.createTempDirectory("sojourn-jni").toFile();
    assertTrue(new java.io.File(stale, "libsojourn_jni.so").createNewFile());
    File again = Native.extract();
    assertEquals(f, again);
    assertTrue(f.getParentFile().getName(), f.getParentFile().getName().matches("sojourn-jni-.+-[0-9a-f]{16}"));
    assertEquals("rwx------", java.nio.file.attribute.PosixFilePermissions.toString(
        java.nio.file.Files.getPosixFilePermissions(f.getParentFile().toPath())));
    assertTrue(stale + " is still there", !stale.exists());
  }
}
