package org.sojourn.yarn;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceInformation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The protocol of {@code sojourn_core::protocol} in its JSON form: builders
 * for the events the shim sends, and the decoded response of a native call.
 * Field names and tags follow the Rust serde attributes exactly.
 */
final class Protocol {
  static final ObjectMapper JSON = new ObjectMapper();
  private static final JsonNodeFactory F = JsonNodeFactory.instance;
  static final String GPU = "yarn.io/gpu";

  private Protocol() {}

  static ObjectNode resources(Resource r) {
    ObjectNode o = F.objectNode();
    o.put("memory_mb", Math.max(0L, r.getMemorySize()));
    o.put("vcores", Math.max(0, r.getVirtualCores()));
    long gpus = gpus(r);
    if (gpus > 0) {
      o.put("gpus", gpus);
    }
    return o;
  }

  static long gpus(Resource r) {
    for (ResourceInformation ri : r.getResources()) {
      if (GPU.equals(ri.getName())) {
        return Math.max(0L, ri.getValue());
      }
    }
    return 0;
  }

  // ---- events: what the shim tells the core ------------------------------------------

  private static ObjectNode event(String type) {
    ObjectNode o = F.objectNode();
    o.put("type", type);
    return o;
  }

  static ObjectNode nodeAdded(int node, String name, String rack,
      Collection<String> labels, Resource capacity) {
    ObjectNode o = event("node_added");
    o.put("node", node);
    o.put("name", name);
    o.put("rack", rack);
    ArrayNode l = o.putArray("labels");
    if (labels != null) {
      for (String s : labels) {
        l.add(s);
      }
    }
    o.set("capacity", resources(capacity));
    return o;
  }

  static ObjectNode nodeRemoved(int node) {
    return event("node_removed").put("node", node);
  }

  static ObjectNode nodeResourceUpdated(int node, Resource capacity) {
    ObjectNode o = event("node_resource_updated").put("node", node);
    o.set("capacity", resources(capacity));
    return o;
  }

  static ObjectNode nodeHeartbeat(int node) {
    return event("node_heartbeat").put("node", node);
  }

  /** {@code deadline} (core time, ms) and {@code value} are left out when null. */
  static ObjectNode appAdded(int app, String name, String queue, String user, int priority, Long deadline,
      Double value) {
    ObjectNode o = event("app_added");
    o.put("app", app);
    o.put("name", name == null ? "" : name);
    o.put("queue", queue);
    o.put("user", user);
    o.put("priority", priority);
    if (deadline != null) {
      o.put("deadline", deadline);
    }
    if (value != null) {
      o.put("value", value);
    }
    return o;
  }

  static ObjectNode appRemoved(int app) {
    return event("app_removed").put("app", app);
  }

  static ObjectNode asksUpdated(int app, ArrayNode asks) {
    ObjectNode o = event("asks_updated").put("app", app);
    o.set("asks", asks);
    return o;
  }

  /**
   * One {@code Ask}; {@code locality} holds {@link #nodeLocality}/{@link #rackLocality} entries;
   * {@code estTaskMs}, each container's estimated run time, is left out when null.
   */
  static ObjectNode ask(int priority, Resource capability, int count, String phase,
      ArrayNode locality, boolean relaxLocality, String label, Long estTaskMs) {
    ObjectNode o = F.objectNode();
    o.put("priority", priority);
    o.set("capability", resources(capability));
    o.put("count", count);
    o.put("phase", phase);
    o.set("locality", locality == null ? F.arrayNode() : locality);
    o.put("relax_locality", relaxLocality);
    if (label != null && !label.isEmpty()) {
      o.put("label", label);
    }
    if (estTaskMs != null) {
      o.put("est_task_ms", estTaskMs);
    }
    return o;
  }

  static ObjectNode nodeLocality(int node, int count) {
    ObjectNode o = F.objectNode();
    o.putArray("Node").add(node).add(count);
    return o;
  }

  static ObjectNode rackLocality(String rack, int count) {
    ObjectNode o = F.objectNode();
    o.putArray("Rack").add(rack).add(count);
    return o;
  }

  static ArrayNode array() {
    return F.arrayNode();
  }

  static ObjectNode containerStarted(long container) {
    return event("container_started").put("container", container);
  }

  /** {@code outcome}: finished, released, preempted, lost, expired, killed. */
  static ObjectNode containerCompleted(long container, String outcome) {
    return event("container_completed").put("container", container).put("outcome", outcome);
  }

  /**
   * A running container's progress, in [0, 1], and when a reduce finished its
   * shuffle and sort (the core's clock, ms), or null when unknown.
   */
  static ObjectNode containerProgress(long container, double progress, Long sortFinished) {
    ObjectNode o = event("container_progress").put("container", container).put("progress", progress);
    if (sortFinished != null) {
      o.put("sort_finished", sortFinished);
    }
    return o;
  }

  /** How a refusal should be treated: the core's RefusalKind. */
  enum Refusal {
    /** It may succeed later. */
    RETRY,
    /** It can never succeed as given: the core stops deciding it. */
    NEVER,
    /** It shows a bug on the side that produced it. */
    ERROR;

    String wire() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }

    static Refusal of(String wire) {
      for (Refusal r : values()) {
        if (r.wire().equals(wire)) {
          return r;
        }
      }
      return ERROR;
    }
  }

  /**
   * A decision the shim could not apply: why, and whether it could succeed
   * later. A suspension under suspend=reject never will (the core then stops
   * offering that container as a victim), nor will anything about an
   * application, node or container that is gone; an unknown decision or an
   * exception shows a bug; the rest (no room yet, a request withdrawn
   * meanwhile) may succeed later.
   */
  static final class Refused {
    final String why;
    final Refusal kind;

    private Refused(String why, Refusal kind) {
      this.why = why;
      this.kind = kind;
    }

    static Refused retry(String why) {
      return new Refused(why, Refusal.RETRY);
    }

    static Refused never(String why) {
      return new Refused(why, Refusal.NEVER);
    }

    static Refused error(String why) {
      return new Refused(why, Refusal.ERROR);
    }
  }

  /** Sends {@code decision} back as the core made it, with why and how to treat the refusal. */
  static ObjectNode rejected(Decision decision, String reason, Refusal kind) {
    ObjectNode o = event("rejected");
    o.set("decision", decision.json);
    o.put("reason", reason);
    o.put("kind", kind.wire());
    return o;
  }

  /** A container YARN has and the core does not (recovered, kept, or re-sent on a rebuild). */
  static ObjectNode containerRecovered(long container, int app, int node, int priority, Resource r,
      String phase, boolean suspended) {
    ObjectNode o = event("container_recovered").put("container", container).put("app", app)
        .put("node", node).put("priority", priority);
    o.set("resources", resources(r));
    return o.put("phase", phase).put("suspended", suspended);
  }

  static String encode(List<ObjectNode> events) {
    ArrayNode a = F.arrayNode();
    a.addAll(events);
    return a.toString();
  }

  /** An event the core refused. */
  static final class EventError {
    final int index;
    final Refusal kind;
    final String message;

    EventError(int index, Refusal kind, String message) {
      this.index = index;
      this.kind = kind;
      this.message = message;
    }
  }

  // ---- decisions: what the core tells the shim ------------------------------------

  /** Resources as a decision carries them ({@code sojourn_core::Resources}). */
  static final class Amount {
    static final List<String> FIELDS = list("memory_mb", "vcores", "gpus");
    final long memoryMb;
    final int vcores;
    final long gpus;
    private final String json;

    Amount(JsonNode r) {
      memoryMb = r.path("memory_mb").asLong();
      vcores = r.path("vcores").asInt();
      gpus = r.path("gpus").asLong(0); // skipped when 0
      json = r.toString();
    }

    /** Whether YARN's {@code r} is this size (memory, vcores and GPUs). */
    boolean sameAs(Resource r) {
      return r.getMemorySize() == memoryMb && r.getVirtualCores() == vcores && gpus(r) == gpus;
    }

    @Override
    public String toString() {
      return json;
    }
  }

  /**
   * A decision of the core as the shim reads it ({@code sojourn_core::Decision}):
   * one class per variant, each reading its fields by their serde names and
   * listing them in {@code FIELDS} (ProtocolSchemaTest holds both to the Rust
   * schema). {@link #json} is the decision as received: a Rejected sends it
   * back whole.
   */
  abstract static class Decision {
    final JsonNode json;

    Decision(JsonNode json) {
      this.json = json;
    }

    /** The variant's serde tag. */
    final String type() {
      return json.path("type").asText();
    }

    @Override
    public String toString() {
      return json.toString();
    }
  }

  /** What Allocate, Reserve and Unreserve share: {@code app}'s ask at {@code priority}, on {@code node}. */
  abstract static class Placement extends Decision {
    final int app;
    final int priority;
    final int node;

    Placement(JsonNode d) {
      super(d);
      app = d.path("app").asInt();
      priority = d.path("priority").asInt();
      node = d.path("node").asInt();
    }
  }

  /**
   * Start a container of {@code resources} for {@code app}'s ask at {@code priority} on {@code node}.
   * With a {@code gang}, it is one member of an atomic group: the decisions of one response with the
   * same gang are applied all together or refused all together ({@link DecisionApplier}).
   */
  static final class Allocate extends Placement {
    static final String TYPE = "allocate";
    static final List<String> FIELDS = list("container", "app", "priority", "node", "resources", "gang");
    final long container;
    final Amount resources;
    /** The gang, or -1 for a lone allocation (serde leaves the field out). */
    final long gang;

    Allocate(JsonNode d) {
      super(d);
      container = d.path("container").asLong();
      resources = new Amount(d.path("resources"));
      gang = d.has("gang") ? d.path("gang").asLong() : -1L;
    }

    boolean inGang() {
      return gang >= 0;
    }
  }

  /** Hold {@code node} for {@code app}'s large ask at {@code priority}. */
  static final class Reserve extends Placement {
    static final String TYPE = "reserve";
    static final List<String> FIELDS = list("app", "priority", "node", "resources");
    final Amount resources;

    Reserve(JsonNode d) {
      super(d);
      resources = new Amount(d.path("resources"));
    }
  }

  /** Drop the reservation on {@code node}. */
  static final class Unreserve extends Placement {
    static final String TYPE = "unreserve";
    static final List<String> FIELDS = list("app", "priority", "node");

    Unreserve(JsonNode d) {
      super(d);
    }
  }

  /** Take {@code container} away: {@code mode} kill or suspend. */
  static final class Preempt extends Decision {
    static final String TYPE = "preempt";
    static final List<String> FIELDS = list("container", "mode");
    static final String KILL = "kill";
    static final String SUSPEND = "suspend";
    final long container;
    final String mode;

    Preempt(JsonNode d) {
      super(d);
      container = d.path("container").asLong();
      mode = d.path("mode").asText();
    }

    boolean isSuspend() {
      return SUSPEND.equals(mode);
    }

    boolean isKill() {
      return KILL.equals(mode);
    }
  }

  /** Resume a suspended container. */
  static final class Resume extends Decision {
    static final String TYPE = "resume";
    static final List<String> FIELDS = list("container");
    final long container;

    Resume(JsonNode d) {
      super(d);
      container = d.path("container").asLong();
    }
  }

  /** A variant this shim does not know: refused as an error. */
  static final class Unknown extends Decision {
    Unknown(JsonNode d) {
      super(d);
    }
  }

  /** Reads one decision by its tag. */
  static Decision decision(JsonNode d) {
    switch (d.path("type").asText()) {
      case Allocate.TYPE:
        return new Allocate(d);
      case Reserve.TYPE:
        return new Reserve(d);
      case Unreserve.TYPE:
        return new Unreserve(d);
      case Preempt.TYPE:
        return new Preempt(d);
      case Resume.TYPE:
        return new Resume(d);
      default:
        return new Unknown(d);
    }
  }

  /** Reads a JSON array of decisions. */
  static List<Decision> decisions(JsonNode array) {
    List<Decision> out = new ArrayList<>();
    if (array != null) {
      for (JsonNode d : array) {
        out.add(decision(d));
      }
    }
    return out;
  }

  /** A decoded response of a native call. */
  static final class Response {
    final List<Decision> decisions = new ArrayList<>();
    final List<EventError> errors = new ArrayList<>();
    long nextTimeout = -1;

    static final Response EMPTY = new Response();
  }

  /**
   * Decodes a response, logging its native log lines through slf4j at their
   * own level (logger {@code sojourn.<rust target>}).
   */
  static Response decode(String json) {
    if (json == null) {
      return Response.EMPTY;
    }
    JsonNode root;
    try {
      root = JSON.readTree(json);
    } catch (IOException e) {
      throw new IllegalStateException("sojourn: cannot decode a native response: " + e, e);
    }
    logLines(root.get("logs"));
    Response r = new Response();
    r.decisions.addAll(decisions(root.get("decisions")));
    JsonNode e = root.get("errors");
    if (e != null) {
      for (JsonNode x : e) {
        r.errors.add(new EventError(x.path("index").asInt(-1), Refusal.of(x.path("kind").asText()),
            x.path("message").asText()));
      }
    }
    JsonNode t = root.get("next_timeout");
    r.nextTimeout = (t == null || t.isNull()) ? -1 : t.asLong();
    return r;
  }

  /** Logs a JSON array of native log lines. */
  static void logLines(JsonNode lines) {
    if (lines == null) {
      return;
    }
    for (JsonNode l : lines) {
      logLine(l.path("level").asText("INFO"), l.path("target").asText("native"), l.path("message").asText());
    }
  }

  /** Logs one native log line at its level, to logger {@code sojourn.<rust target>}. */
  static void logLine(String level, String rustTarget, String msg) {
    Logger log = LoggerFactory.getLogger("sojourn." + rustTarget.replace("::", "."));
    switch (level) {
      case "ERROR":
        log.error(msg);
        break;
      case "WARN":
        log.warn(msg);
        break;
      case "DEBUG":
        log.debug(msg);
        break;
      case "TRACE":
        log.trace(msg);
        break;
      default:
        log.info(msg);
    }
  }

  /** Logs the native lines buffered on this thread outside a call. */
  static void drainNativeLogs() {
    try {
      logLines(JSON.readTree(Native.drainLogs()));
    } catch (IOException | RuntimeException e) {
      LoggerFactory.getLogger(Protocol.class).debug("cannot read native log lines", e);
    }
  }

  /** The native log level matching what the {@code sojourn} logger has enabled. */
  static int nativeLogLevel() {
    Logger log = LoggerFactory.getLogger("sojourn");
    if (log.isTraceEnabled()) {
      return 5;
    } else if (log.isDebugEnabled()) {
      return 4;
    } else if (log.isInfoEnabled()) {
      return 3;
    } else if (log.isWarnEnabled()) {
      return 2;
    } else if (log.isErrorEnabled()) {
      return 1;
    }
    return 0;
  }

  static List<String> list(String... xs) {
    List<String> l = new ArrayList<>();
    Collections.addAll(l, xs);
    return l;
  }
}
