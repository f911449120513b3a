package org.sojourn.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.util.resource.ResourceUtils;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * The Java side of the protocol held to the Rust schema ({@code sojourn_core::protocol}).
 *
 * <ul>
 *   <li>Events: each is built with the builder the shim uses ({@link Protocol}),
 *   decoded by serde exactly as a step decodes it and encoded again
 *   ({@code Native.eventsRoundTripForTest}); the re-encoding must equal what
 *   Java sent. Serde drops a field it does not know and defaults one that is
 *   missing, so a field misspelt or renamed on either side comes back
 *   different (or, if required, is refused naming it). Every value here is
 *   away from its default, so a dropped one shows. Rust's own samples
 *   ({@code sojourn_jni::api::event_samples}, one per variant, matched
 *   exhaustively in {@code rust/jni/tests/protocol_samples.rs}) say which
 *   variants exist: each must be tested here or listed as one the shim never
 *   sends.</li>
 *   <li>Decisions: a response as a step returns it, carrying one sample of every
 *   decision variant with every field set ({@code sojourn_jni::api::decision_samples}),
 *   is read by {@link Protocol#decode}, the shim's own path, and every field of
 *   every decision is checked. Each sample must have exactly the fields its
 *   Java class reads ({@code FIELDS}), so a field added in Rust fails here
 *   until Java reads it.</li>
 * </ul>
 */
public class ProtocolSchemaTest {
  /** The event variants the shim sends, by serde tag: each has a test below. */
  private static final List<String> SENT = Arrays.asList("node_added", "node_removed",
      "node_resource_updated", "node_heartbeat", "app_added", "app_removed", "asks_updated",
      "container_started", "container_completed", "container_progress", "rejected", "container_recovered");
  /**
   * Event variants the shim never sends: the simulator's, and the answers to offloaded work,
   * which the Rust session feeds its core itself.
   */
  private static final List<String> NOT_SENT = Arrays.asList("schedule_all", "offload_done");

  @BeforeClass
  public static void withGpus() {
    // GPUs as YARN's extended resource, so the "gpus" field is sent; undone after.
    YarnConfiguration c = new YarnConfiguration();
    c.set(YarnConfiguration.RESOURCE_TYPES, Protocol.GPU);
    ResourceUtils.resetResourceTypes(c);
  }

  @AfterClass
  public static void withoutGpus() {
    ResourceUtils.resetResourceTypes();
  }

  private static Resource res(long mb, int vcores, long gpus) {
    Map<String, Long> others = new HashMap<>();
    others.put(Protocol.GPU, gpus);
    return Resource.newInstance(mb, vcores, others);
  }

  /** What the shim sends, as JSON text parsed back (so numbers compare by value). */
  private static JsonNode sent(ObjectNode event) throws Exception {
    return Protocol.JSON.readTree(Protocol.encode(Collections.singletonList(event))).get(0);
  }

  /** {@code event} through serde and back. */
  private static JsonNode roundTrip(ObjectNode event) throws Exception {
    String back = Native.eventsRoundTripForTest(Protocol.encode(Collections.singletonList(event)));
    return Protocol.JSON.readTree(back).get(0);
  }

  /** Asserts {@code event} comes back from serde exactly as the shim sent it. */
  private static void assertRoundTrip(ObjectNode event) throws Exception {
    assertRoundTrip(event, sent(event));
  }

  /**
   * {@code event} encoded in the binary layout as a step sends it
   * ({@link Wire}), decoded by Rust as a binary step decodes it, as JSON.
   */
  private static JsonNode binaryRoundTrip(ObjectNode event) throws Exception {
    Wire w = new Wire();
    int n = w.encode(Collections.singletonList(event));
    return Protocol.JSON.readTree(Native.wireEventsToJsonForTest(w.events(), n)).get(0);
  }

  /**
   * Asserts {@code event} comes back from serde as {@code expected}, by both
   * paths: as JSON, and in the binary layout a step uses.
   */
  private static void assertRoundTrip(ObjectNode event, JsonNode expected) throws Exception {
    assertTrue(event.path("type").asText(), SENT.contains(event.path("type").asText()));
    assertEquals("sent " + sent(event), expected, roundTrip(event));
    assertEquals("sent in binary " + sent(event), expected, binaryRoundTrip(event));
  }

  /** The tag {@link Wire} gives {@code event}. */
  private static byte binaryTag(ObjectNode event) {
    Wire w = new Wire();
    w.encode(Collections.singletonList(event));
    return w.events().get(5); // after the version byte and the count
  }

  // ---- one test per event variant the shim sends -----------------------------------------

  @Test
  public void nodeAdded() throws Exception {
    assertRoundTrip(Protocol.nodeAdded(5, "h5.example.com:8041", "/rack-b", Arrays.asList("gpu", "ssd"),
        res(16384, 16, 2)));
  }

  @Test
  public void nodeRemoved() throws Exception {
    assertRoundTrip(Protocol.nodeRemoved(6));
  }

  @Test
  public void nodeResourceUpdated() throws Exception {
    assertRoundTrip(Protocol.nodeResourceUpdated(7, res(8192, 8, 1)));
  }

  @Test
  public void nodeHeartbeat() throws Exception {
    assertRoundTrip(Protocol.nodeHeartbeat(8));
  }

  @Test
  public void appAdded() throws Exception {
    ObjectNode e = Protocol.appAdded(42, "wordcount", "root.eng", "alice", 3, null, null);
    // Without SLO tags an application has no deadline or value (TetriSched's): the core's defaults.
    ObjectNode expected = (ObjectNode) sent(e);
    expected.putNull("deadline");
    expected.putNull("value");
    assertRoundTrip(e, expected);
  }

  @Test
  public void appAddedWithItsSloTags() throws Exception {
    assertRoundTrip(Protocol.appAdded(42, "wordcount", "root.eng", "alice", 3, 90_000L, 250.0));
  }

  @Test
  public void appRemoved() throws Exception {
    assertRoundTrip(Protocol.appRemoved(43));
  }

  @Test
  public void asksUpdated() throws Exception {
    ArrayNode asks = Protocol.array();
    // Every phase the shim gives (AskTranslator.phaseOf), both locality kinds, a label.
    String[] phases = {"map", "reduce", "am", "other"};
    for (int i = 0; i < phases.length; i++) {
      ArrayNode loc = Protocol.array();
      loc.add(Protocol.nodeLocality(5, 2 + i));
      loc.add(Protocol.rackLocality("/rack-b", 3 + i));
      asks.add(Protocol.ask(20 + i, res(2048, 2, 1), 9 + i, phases[i], loc, false, "gpu", null));
    }
    asks.add(Protocol.ask(30, res(1024, 1, 0), 4, "map", null, true, null, null));
    // A job tagged sojourn.task-duration=20s (AppTags): its task asks carry the estimate.
    asks.add(Protocol.ask(31, res(1024, 1, 0), 4, "map", null, true, null, 20_000L));
    ObjectNode e = Protocol.asksUpdated(44, asks);
    // Without the tag the shim has no task estimate to give; an ask with no label expression sends none.
    ObjectNode expected = (ObjectNode) sent(e);
    for (JsonNode a : expected.get("asks")) {
      if (!a.has("est_task_ms")) {
        ((ObjectNode) a).putNull("est_task_ms");
      }
      if (!a.has("label")) {
        ((ObjectNode) a).putNull("label");
      }
    }
    assertRoundTrip(e, expected);
  }

  @Test
  public void containerStarted() throws Exception {
    assertRoundTrip(Protocol.containerStarted(7001));
  }

  @Test
  public void containerCompleted() throws Exception {
    // Every outcome SojournScheduler.outcomeOf gives.
    for (String outcome : Arrays.asList("finished", "released", "preempted", "lost", "expired", "killed")) {
      assertRoundTrip(Protocol.containerCompleted(7002, outcome));
    }
  }

  @Test
  public void containerProgress() throws Exception {
    assertRoundTrip(Protocol.containerProgress(7003, 0.75, 1500L));
    assertRoundTrip(Protocol.containerProgress(7003, 0.25, null));
  }

  @Test
  public void rejected() throws Exception {
    // The decision goes back as the core made it: a sample of each variant.
    for (JsonNode d : Protocol.JSON.readTree(Native.responseSampleForTest()).get("decisions")) {
      Protocol.Decision decision = Protocol.decision(d);
      assertRoundTrip(Protocol.rejected(decision, "no room on node 5", Protocol.Refusal.NEVER));
      assertRoundTrip(Protocol.rejected(decision, "a bug", Protocol.Refusal.ERROR));
      // retry is the core's default kind, which it does not write out.
      ObjectNode retry = Protocol.rejected(decision, "not yet", Protocol.Refusal.RETRY);
      ObjectNode expected = (ObjectNode) sent(retry);
      expected.remove("kind");
      assertRoundTrip(retry, expected);
    }
  }

  @Test
  public void containerRecovered() throws Exception {
    assertRoundTrip(Protocol.containerRecovered(7004, 45, 9, 10, res(3072, 3, 1), "reduce", true));
    assertRoundTrip(Protocol.containerRecovered(7005, 46, 10, 11, res(1024, 1, 0), "am", false));
  }

  // ---- the test has teeth, and covers every variant ----------------------------------------

  @Test
  public void aMisspeltFieldComesBackDifferentOrIsRefused() throws Exception {
    ObjectNode app = Protocol.appAdded(42, "wordcount", "root.eng", "alice", 3, null, null);
    app.set("prio", app.remove("priority"));
    assertNotEquals(sent(app), roundTrip(app)); // dropped: the core read priority 0
    ObjectNode removed = Protocol.nodeRemoved(6);
    removed.set("nod", removed.remove("node"));
    try {
      roundTrip(removed);
      fail("a required field misspelt was accepted");
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("node"));
    }
  }

  @Test
  public void theHotEventsGoBinaryTheOthersAsJson() {
    assertEquals(Wire.NODE_HEARTBEAT, binaryTag(Protocol.nodeHeartbeat(8)));
    assertEquals(Wire.CONTAINER_STARTED, binaryTag(Protocol.containerStarted(7001)));
    assertEquals(Wire.CONTAINER_COMPLETED, binaryTag(Protocol.containerCompleted(7002, "lost")));
    assertEquals(Wire.CONTAINER_PROGRESS, binaryTag(Protocol.containerProgress(7003, 0.5, 10L)));
    assertEquals(Wire.NODE_REMOVED, binaryTag(Protocol.nodeRemoved(6)));
    assertEquals(Wire.APP_REMOVED, binaryTag(Protocol.appRemoved(43)));
    assertEquals(Wire.NODE_RESOURCE_UPDATED, binaryTag(Protocol.nodeResourceUpdated(7, res(8192, 8, 1))));
    assertEquals(Wire.JSON, binaryTag(Protocol.appAdded(42, "wordcount", "root.eng", "alice", 3, null, null)));
    // What the layout cannot carry goes as JSON, so the core refuses it as on the JSON path.
    assertEquals(Wire.JSON, binaryTag(Protocol.nodeHeartbeat(-1)));
    assertEquals(Wire.JSON, binaryTag(Protocol.containerCompleted(7002, "vanished")));
  }

  @Test
  public void aBadEventIsRefusedAloneByBothPaths() throws Exception {
    ObjectNode bad = Protocol.containerCompleted(7002, "vanished");
    Wire w = new Wire();
    int n = w.encode(Arrays.asList(bad, Protocol.nodeHeartbeat(8)));
    JsonNode back = Protocol.JSON.readTree(Native.wireEventsToJsonForTest(w.events(), n));
    assertTrue(back.toString(), back.get(0).path("error").asText().contains("vanished"));
    assertEquals(sent(Protocol.nodeHeartbeat(8)), back.get(1));
  }

  @Test
  public void brokenBinaryFramingIsRefusedNamingTheField() {
    Wire w = new Wire();
    int n = w.encode(Arrays.asList(Protocol.nodeHeartbeat(8), Protocol.containerCompleted(7002, "lost")));
    for (int cut = 0; cut < n; cut++) {
      try {
        Native.wireEventsToJsonForTest(w.events(), cut);
        fail("a batch cut at byte " + cut + " of " + n + " was accepted");
      } catch (IllegalArgumentException e) {
        assertTrue(e.getMessage(), e.getMessage().contains("at byte"));
      }
    }
    try {
      Native.wireEventsToJsonForTest(w.events(), w.events().capacity() + 1);
      fail("a length past the buffer was accepted");
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("events length"));
    }
  }

  @Test
  public void everyEventVariantIsTestedOrNeverSent() throws Exception {
    TreeSet<String> rust = new TreeSet<>();
    for (JsonNode e : Protocol.JSON.readTree(Native.eventSamplesForTest())) {
      rust.add(e.path("type").asText());
    }
    TreeSet<String> java = new TreeSet<>(SENT);
    java.addAll(NOT_SENT);
    assertEquals("event variants in Rust vs those tested here (or never sent)", rust, java);
  }

  // ---- decisions: read by the shim's own path ---------------------------------------------

  @Test
  public void everyDecisionOfAStepsResponseIsReadFieldByField() {
    Protocol.Response r = Protocol.decode(Native.responseSampleForTest());
    assertEquals(6, r.decisions.size());

    Protocol.Allocate a = (Protocol.Allocate) r.decisions.get(0);
    assertEquals(Protocol.Allocate.TYPE, a.type());
    assertEquals(7101L, a.container);
    assertEquals(51, a.app);
    assertEquals(20, a.priority);
    assertEquals(11, a.node);
    assertEquals(7100L, a.gang);
    assertTrue(a.inGang());
    assertAmount(a.resources, 3072, 3, 2);
    assertTrue(a.resources.sameAs(res(3072, 3, 2)));
    assertFalse(a.resources.sameAs(res(3072, 3, 0)));

    Protocol.Reserve v = (Protocol.Reserve) r.decisions.get(1);
    assertEquals(52, v.app);
    assertEquals(10, v.priority);
    assertEquals(12, v.node);
    assertAmount(v.resources, 5120, 5, 1);

    Protocol.Unreserve u = (Protocol.Unreserve) r.decisions.get(2);
    assertEquals(53, u.app);
    assertEquals(7, u.priority);
    assertEquals(13, u.node);

    Protocol.Preempt kill = (Protocol.Preempt) r.decisions.get(3);
    assertEquals(7102L, kill.container);
    assertTrue(kill.isKill() && !kill.isSuspend());
    Protocol.Preempt suspend = (Protocol.Preempt) r.decisions.get(4);
    assertEquals(7103L, suspend.container);
    assertTrue(suspend.isSuspend() && !suspend.isKill());

    Protocol.Resume resume = (Protocol.Resume) r.decisions.get(5);
    assertEquals(7104L, resume.container);

    // The rest of the response: refused events of each kind, and the next wake-up.
    assertEquals(3, r.errors.size());
    Protocol.Refusal[] kinds = {Protocol.Refusal.RETRY, Protocol.Refusal.NEVER, Protocol.Refusal.ERROR};
    for (int i = 0; i < 3; i++) {
      assertEquals(3 + i, r.errors.get(i).index);
      assertEquals(kinds[i], r.errors.get(i).kind);
      assertEquals("sample refusal " + (3 + i), r.errors.get(i).message);
    }
    assertEquals(123456L, r.nextTimeout);
  }

  @Test
  public void theBinaryResponseReadsAsTheJsonOne() {
    Protocol.Response json = Protocol.decode(Native.responseSampleForTest());
    Protocol.Response bin = Wire.decode(Native.wireResponseSampleForTest());
    assertEquals(6, bin.decisions.size());
    for (int i = 0; i < json.decisions.size(); i++) {
      // The decision's JSON as serde writes it: a Rejected sends it back whole.
      assertEquals(json.decisions.get(i).toString(), bin.decisions.get(i).toString());
      assertEquals(json.decisions.get(i).getClass(), bin.decisions.get(i).getClass());
    }
    assertEquals(json.errors.size(), bin.errors.size());
    for (int i = 0; i < json.errors.size(); i++) {
      assertEquals(json.errors.get(i).index, bin.errors.get(i).index);
      assertEquals(json.errors.get(i).kind, bin.errors.get(i).kind);
      assertEquals(json.errors.get(i).message, bin.errors.get(i).message);
    }
    assertEquals(123456L, bin.nextTimeout);
  }

  private static void assertAmount(Protocol.Amount a, long mb, int vcores, long gpus) {
    assertEquals(mb, a.memoryMb);
    assertEquals(vcores, a.vcores);
    assertEquals(gpus, a.gpus);
  }

  @Test
  public void everyDecisionFieldIsOneJavaReads() throws Exception {
    Map<String, List<String>> fields = new HashMap<>();
    fields.put(Protocol.Allocate.TYPE, Protocol.Allocate.FIELDS);
    fields.put(Protocol.Reserve.TYPE, Protocol.Reserve.FIELDS);
    fields.put(Protocol.Unreserve.TYPE, Protocol.Unreserve.FIELDS);
    fields.put(Protocol.Preempt.TYPE, Protocol.Preempt.FIELDS);
    fields.put(Protocol.Resume.TYPE, Protocol.Resume.FIELDS);
    TreeSet<String> seen = new TreeSet<>();
    for (JsonNode d : Protocol.JSON.readTree(Native.responseSampleForTest()).get("decisions")) {
      String type = d.path("type").asText();
      seen.add(type);
      assertFalse("a decision Java does not read: " + d, Protocol.decision(d) instanceof Protocol.Unknown);
      TreeSet<String> expected = new TreeSet<>(fields.get(type));
      expected.add("type");
      assertEquals(type + " fields in Rust vs read by Java", expected, names(d));
      if (d.has("resources")) {
        assertEquals("resources fields", new TreeSet<>(Protocol.Amount.FIELDS), names(d.get("resources")));
      }
    }
    assertEquals("decision variants in Rust vs read by Java", new TreeSet<>(fields.keySet()), seen);
    // The modes a Preempt may carry.
    List<String> modes = new ArrayList<>();
    for (JsonNode d : Protocol.JSON.readTree(Native.responseSampleForTest()).get("decisions")) {
      if (Protocol.Preempt.TYPE.equals(d.path("type").asText())) {
        modes.add(d.path("mode").asText());
      }
    }
    assertEquals(Arrays.asList(Protocol.Preempt.KILL, Protocol.Preempt.SUSPEND), modes);
  }

  private static TreeSet<String> names(JsonNode o) {
    TreeSet<String> out = new TreeSet<>();
    for (Iterator<String> it = o.fieldNames(); it.hasNext(); ) {
      out.add(it.next());
    }
    return out;
  }
}
