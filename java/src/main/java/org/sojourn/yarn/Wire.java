package org.sojourn.yarn;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * The bridge's binary layout for a step ({@code rust/jni/src/wire.rs} holds
 * the layout and the Rust side): the batch goes as little-endian bytes in a
 * direct buffer, and the response comes back the same way, so a heartbeat
 * costs a few bytes and no JSON on either side. The hot events (heartbeat,
 * container started, completed, progress, node and app removed, node resized)
 * are binary; the rest (node and app added, asks, rejections, recovered
 * containers) go as their JSON under a tag of their own, as does any event
 * whose fields are not what the layout can carry (so the core refuses it as it
 * would on the JSON path). Decisions, refused events and log lines come back
 * binary.
 *
 * <p>Not thread safe: one per core channel, used under its lock. The buffers
 * are kept and grow as needed, so a step allocates no buffer once warm.
 */
final class Wire {
  static final byte VERSION = 1;

  static final byte NODE_HEARTBEAT = 1;
  static final byte CONTAINER_STARTED = 2;
  static final byte CONTAINER_COMPLETED = 3;
  static final byte CONTAINER_PROGRESS = 4;
  static final byte NODE_REMOVED = 5;
  static final byte APP_REMOVED = 6;
  static final byte NODE_RESOURCE_UPDATED = 7;
  static final byte SCHEDULE_ALL = 8;
  static final byte JSON = 127;

  static final byte ALLOCATE = 1;
  static final byte RESERVE = 2;
  static final byte UNRESERVE = 3;
  static final byte PREEMPT = 4;
  static final byte RESUME = 5;
  /** An allocation in a gang: ALLOCATE's fields, then the gang (u64). */
  static final byte ALLOCATE_GANG = 6;

  /** Container outcomes by their byte. */
  static final List<String> OUTCOMES =
      Arrays.asList("finished", "released", "preempted", "lost", "expired", "killed");
  private static final Protocol.Refusal[] KINDS = Protocol.Refusal.values();
  private static final String[] LEVELS = {"ERROR", "WARN", "INFO", "DEBUG", "TRACE"};
  private static final long U32_MAX = 0xFFFF_FFFFL;

  private ByteBuffer events = direct(4096);
  private ByteBuffer response = direct(4096);

  static ByteBuffer direct(int capacity) {
    return ByteBuffer.allocateDirect(capacity).order(ByteOrder.LITTLE_ENDIAN);
  }

  /** One step of {@code core} with {@code batch} at {@code now}; the response decoded. */
  Protocol.Response step(Native core, long now, List<ObjectNode> batch) {
    int length = encode(batch);
    response = core.step(now, events, length, response);
    return decode(response);
  }

  /** The batch encoded at the start of {@link #events()}; returns its length in bytes. */
  int encode(List<ObjectNode> batch) {
    ByteBuffer b = events;
    b.clear();
    b.put(VERSION).putInt(batch.size());
    for (ObjectNode e : batch) {
      encodeOne(e);
    }
    return events.position();
  }

  /** The buffer {@link #encode} writes. */
  ByteBuffer events() {
    return events;
  }

  /** Makes room for {@code n} more bytes, keeping what is written. */
  private ByteBuffer room(int n) {
    if (events.remaining() < n) {
      ByteBuffer bigger = direct(Math.max(events.capacity() * 2, events.position() + n));
      events.flip();
      bigger.put(events);
      events = bigger;
    }
    return events;
  }

  /** A JSON integer in [0, max], or -1 when the field is anything else. */
  private static long unsigned(JsonNode v, long max) {
    if (v == null || !v.isIntegralNumber() || !v.canConvertToLong()) {
      return -1;
    }
    long x = v.asLong();
    return x >= 0 && x <= max ? x : -1;
  }

  private void encodeOne(ObjectNode e) {
    switch (e.path("type").asText()) {
      case "node_heartbeat": {
        long node = unsigned(e.get("node"), U32_MAX);
        if (node >= 0 && e.size() == 2) {
          room(5).put(NODE_HEARTBEAT).putInt((int) node);
          return;
        }
        break;
      }
      case "container_started": {
        long c = unsigned(e.get("container"), Long.MAX_VALUE);
        if (c >= 0 && e.size() == 2) {
          room(9).put(CONTAINER_STARTED).putLong(c);
          return;
        }
        break;
      }
      case "container_completed": {
        long c = unsigned(e.get("container"), Long.MAX_VALUE);
        int outcome = OUTCOMES.indexOf(e.path("outcome").asText(null));
        if (c >= 0 && outcome >= 0 && e.get("outcome").isTextual() && e.size() == 3) {
          room(10).put(CONTAINER_COMPLETED).putLong(c).put((byte) outcome);
          return;
        }
        break;
      }
      case "container_progress": {
        long c = unsigned(e.get("container"), Long.MAX_VALUE);
        JsonNode p = e.get("progress");
        JsonNode sort = e.get("sort_finished");
        long s = sort == null ? 0 : unsigned(sort, Long.MAX_VALUE);
        if (c >= 0 && p != null && p.isNumber() && Double.isFinite(p.asDouble()) && s >= 0
            && e.size() == (sort == null ? 3 : 4)) {
          room(26).put(CONTAINER_PROGRESS).putLong(c).putDouble(p.asDouble());
          if (sort == null) {
            events.put((byte) 0);
          } else {
            events.put((byte) 1).putLong(s);
          }
          return;
        }
        break;
      }
      case "node_removed": {
        long node = unsigned(e.get("node"), U32_MAX);
        if (node >= 0 && e.size() == 2) {
          room(5).put(NODE_REMOVED).putInt((int) node);
          return;
        }
        break;
      }
      case "app_removed": {
        long app = unsigned(e.get("app"), U32_MAX);
        if (app >= 0 && e.size() == 2) {
          room(5).put(APP_REMOVED).putInt((int) app);
          return;
        }
        break;
      }
      case "node_resource_updated": {
        long node = unsigned(e.get("node"), U32_MAX);
        JsonNode cap = e.get("capacity");
        long mb = cap == null ? -1 : unsigned(cap.get("memory_mb"), Long.MAX_VALUE);
        long vcores = cap == null ? -1 : unsigned(cap.get("vcores"), U32_MAX);
        long gpus = cap == null || cap.get("gpus") == null ? 0 : unsigned(cap.get("gpus"), U32_MAX);
        if (node >= 0 && mb >= 0 && vcores >= 0 && gpus >= 0 && e.size() == 3
            && cap.size() == (cap.has("gpus") ? 3 : 2)) {
          room(21).put(NODE_RESOURCE_UPDATED).putInt((int) node).putLong(mb).putInt((int) vcores)
              .putInt((int) gpus);
          return;
        }
        break;
      }
      case "schedule_all":
        if (e.size() == 1) {
          room(1).put(SCHEDULE_ALL);
          return;
        }
        break;
      default:
        break;
    }
    // Rarer, or not what the layout carries: the event's JSON, decoded by serde.
    byte[] json = e.toString().getBytes(StandardCharsets.UTF_8);
    room(5 + json.length).put(JSON).putInt(json.length).put(json);
  }

  // ---- the response --------------------------------------------------------------------

  /**
   * Reads a response (position 0 to limit), logging its native log lines as
   * {@link Protocol#decode} does. Each decision is built as the JSON object
   * the core's serde would write, field for field, so the shim reads and sends
   * back decisions the same whichever way they came.
   *
   * @throws IllegalStateException for a response that is not in the layout
   */
  static Protocol.Response decode(ByteBuffer b) {
    try {
      byte version = b.get();
      if (version != VERSION) {
        throw new IllegalStateException("sojourn: native response of version " + version + ", expected "
            + VERSION);
      }
      long next = b.getLong();
      int n = count(b, "decisions");
      if (n == 0 && b.remaining() == 8 && b.getInt(b.position()) == 0 && b.getInt(b.position() + 4) == 0) {
        // Nothing decided, refused or logged: the common heartbeat.
        return next < 0 ? Protocol.Response.EMPTY : quiet(next);
      }
      Protocol.Response r = new Protocol.Response();
      r.nextTimeout = next;
      for (int i = 0; i < n; i++) {
        r.decisions.add(Protocol.decision(decision(b, i)));
      }
      int errors = count(b, "errors");
      for (int i = 0; i < errors; i++) {
        int index = b.getInt();
        int kind = b.get();
        String message = string(b);
        r.errors.add(new Protocol.EventError(index, kind >= 0 && kind < KINDS.length ? KINDS[kind]
            : Protocol.Refusal.ERROR, message));
      }
      int logs = count(b, "logs");
      for (int i = 0; i < logs; i++) {
        int level = b.get();
        String target = string(b);
        String message = string(b);
        Protocol.logLine(level >= 1 && level <= LEVELS.length ? LEVELS[level - 1] : "INFO", target, message);
      }
      if (b.hasRemaining()) {
        throw new IllegalStateException("sojourn: " + b.remaining() + " byte(s) left over in a native response");
      }
      return r;
    } catch (java.nio.BufferUnderflowException e) {
      throw new IllegalStateException("sojourn: a native response is truncated at byte " + b.position(), e);
    }
  }

  /** A response with nothing but a next timeout. */
  private static Protocol.Response quiet(long next) {
    Protocol.Response r = new Protocol.Response();
    r.nextTimeout = next;
    return r;
  }

  private static int count(ByteBuffer b, String what) {
    int n = b.getInt();
    if (n < 0 || n > b.remaining()) {
      throw new IllegalStateException("sojourn: a native response counts " + Integer.toUnsignedString(n) + " "
          + what + " in " + b.remaining() + " byte(s)");
    }
    return n;
  }

  private static String string(ByteBuffer b) {
    int n = count(b, "bytes of a string");
    byte[] s = new byte[n];
    b.get(s);
    return new String(s, StandardCharsets.UTF_8);
  }

  private static void resources(ObjectNode o, ByteBuffer b) {
    ObjectNode r = o.putObject("resources");
    r.put("memory_mb", b.getLong());
    r.put("vcores", Integer.toUnsignedLong(b.getInt()));
    long gpus = Integer.toUnsignedLong(b.getInt());
    if (gpus > 0) {
      r.put("gpus", gpus); // as serde: skipped when 0
    }
  }

  private static ObjectNode decision(ByteBuffer b, int index) {
    ObjectNode o = Protocol.JSON.createObjectNode();
    byte tag = b.get();
    switch (tag) {
      case ALLOCATE:
      case ALLOCATE_GANG:
        o.put("type", Protocol.Allocate.TYPE);
        o.put("container", b.getLong());
        placement(o, b);
        resources(o, b);
        if (tag == ALLOCATE_GANG) {
          o.put("gang", b.getLong());
        }
        return o;
      case RESERVE:
        o.put("type", Protocol.Reserve.TYPE);
        placement(o, b);
        resources(o, b);
        return o;
      case UNRESERVE:
        o.put("type", Protocol.Unreserve.TYPE);
        placement(o, b);
        return o;
      case PREEMPT:
        o.put("type", Protocol.Preempt.TYPE);
        o.put("container", b.getLong());
        byte mode = b.get();
        o.put("mode", mode == 0 ? Protocol.Preempt.KILL : mode == 1 ? Protocol.Preempt.SUSPEND : "mode " + mode);
        return o;
      case RESUME:
        o.put("type", Protocol.Resume.TYPE);
        o.put("container", b.getLong());
        return o;
      default:
        throw new IllegalStateException("sojourn: native response: decision " + index + " has the unknown tag "
            + tag);
    }
  }

  private static void placement(ObjectNode o, ByteBuffer b) {
    o.put("app", Integer.toUnsignedLong(b.getInt()));
    o.put("priority", Integer.toUnsignedLong(b.getInt()));
    o.put("node", Integer.toUnsignedLong(b.getInt()));
  }
}
