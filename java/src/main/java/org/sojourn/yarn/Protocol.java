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

  static ObjectNode appAdded(int app, String name, String queue, String user, int priority) {
    ObjectNode o = event("app_added");
    o.put("app", app);
    o.put("name", name == null ? "" : name);
    o.put("queue", queue);
    o.put("user", user);
    o.put("priority", priority);
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

  /** One {@code Ask}; {@code locality} holds {@link #nodeLocality}/{@link #rackLocality} entries. */
  static ObjectNode ask(int priority, Resource capability, int count, String phase,
      ArrayNode locality, boolean relaxLocality, String label) {
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

  static ObjectNode rejected(JsonNode decision, String reason, Refusal kind) {
    ObjectNode o = event("rejected");
    o.set("decision", decision);
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

  /** A decoded response of a native call. */
  static final class Response {
    final List<JsonNode> decisions = new ArrayList<>();
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
    JsonNode d = root.get("decisions");
    if (d != null) {
      for (JsonNode x : d) {
        r.decisions.add(x);
      }
    }
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
      String target = l.path("target").asText("native").replace("::", ".");
      Logger log = LoggerFactory.getLogger("sojourn." + target);
      String msg = l.path("message").asText();
      switch (l.path("level").asText("INFO")) {
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
