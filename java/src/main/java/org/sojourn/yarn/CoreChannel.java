package org.sojourn.yarn;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The channel to the core: the one open {@link Native} core, the one lock it
 * is entered under, and the cycle each entry runs.
 *
 * <p>The cycle is the core's own ({@code sojourn_core::engine}, {@code Core::step}):
 * one step per entry. An entry (a YARN event, a NODE_UPDATE, a timer tick)
 * sends in one batch what waits in {@link PendingEvents}, the asks
 * {@link AskTranslator} re-reads, and for a NODE_UPDATE the heartbeat; the
 * core fires its due timers, applies the batch and returns its decisions,
 * which {@link DecisionApplier} carries out. What that brings back
 * (confirmations, rejections) waits at the front of the queue for the next
 * step, at the next heartbeat or tick, never for this one: there is no round
 * cap because there are no rounds. A policy that answers a rejection with the
 * same decision costs one rejection per step, never a loop, and a follow-up is
 * never lost (a lost rejection would leave the core's mirror holding a
 * container YARN never made).
 *
 * <p>When it fails: a native call that throws (a panic in the core: the
 * bridge refuses that core from then on) marks the core failed, and the next
 * entry {@link #rebuild}s it from YARN's books. The timer also compares YARN's
 * books with the mirror every {@link #DRIFT_CHECK_MS} when nothing is in flight
 * ({@link #checkDrift}); a difference seen twice in a row rebuilds it too.
 *
 * <p>Locking: {@link #lock} is the scheduler's one lock. Whatever touches the
 * core, the id maps or the application of decisions holds it: YARN's events
 * ({@code SojournScheduler.handle}, {@code nodeUpdate}), the timer thread,
 * {@code reinitialize}, the MXBean's reads of the core and the test hooks.
 * Every method here expects it held, except {@link #now} and
 * {@link #policyMetrics}, which take it themselves when they must.
 */
final class CoreChannel {
  private static final Logger LOG = LoggerFactory.getLogger(SojournScheduler.class);
  /** How often the timer thread compares YARN's books with the mirror. */
  static final long DRIFT_CHECK_MS = 10_000;
  /** The policy's metrics are read from the core at most this often. */
  static final long METRICS_MAX_AGE_MS = 1_000;

  /** The one lock the core is entered under. */
  final Object lock = new Object();
  private final SojournScheduler yarn;
  private final CoreIds ids;
  private final PendingEvents pending;
  private final AskTranslator asks;
  private final DecisionApplier decisions;
  private final Applications apps;

  private Native core;
  /** The binary layout's buffers for {@link #send}, kept from step to step. */
  private final Wire wire = new Wire();
  /** When the policy next wants a step (ms), or -1. */
  private volatile long nextTimeout = -1;
  /** The last native call failed: rebuild the core at the next entry. */
  private boolean coreFailed;
  /** A rebuild is sending YARN's books: a failure now waits for the next entry. */
  private boolean rebuilding;
  /** Times the core was rebuilt from YARN's books after it failed. */
  private final AtomicLong rebuilds = new AtomicLong();
  private long driftCheckedAt;
  /** The difference the last drift check saw, if any. */
  private String driftSeen;
  /** Times the mirror was rebuilt because it drifted from YARN's books. */
  private final AtomicLong driftResyncs = new AtomicLong();
  /** The policy's metrics as last read from the core's describe, and when (ms). */
  private volatile Map<String, Double> metrics = Collections.emptyMap();
  private volatile long metricsAt = -METRICS_MAX_AGE_MS;

  CoreChannel(SojournScheduler yarn, CoreIds ids, PendingEvents pending, AskTranslator asks,
      DecisionApplier decisions, Applications apps) {
    this.yarn = yarn;
    this.ids = ids;
    this.pending = pending;
    this.asks = asks;
    this.decisions = decisions;
    this.apps = apps;
  }

  // ---- opening and closing ------------------------------------------------------------

  /**
   * Opens a core running {@code s}'s policy, recording to {@code recordPath}
   * (null: no recording). Not this channel's core: {@link #start} makes it
   * so; a refresh opens one only to validate new settings.
   *
   * @throws IllegalArgumentException for an unknown policy, key or bad value, naming it
   */
  Native open(SojournConfig s, String recordPath) {
    ObjectNode o = Protocol.JSON.createObjectNode();
    o.put("seed", s.seed);
    o.set("max_allocation", Protocol.resources(yarn.getMaximumResourceCapability()));
    if (s.maxAssignments > 0) {
      o.put("max_assignments", s.maxAssignments);
    }
    if (recordPath != null) {
      o.put("record", recordPath);
      o.put("record_max_mb", s.recordMaxMb);
    }
    String offload = offloadCommand(s);
    o.put("offload_isolation", offload == null ? "thread" : "process");
    if (offload != null) {
      o.put("offload_command", offload);
    }
    try {
      return Native.open(s.policy, s.params, o.toString(), Protocol.nativeLogLevel());
    } finally {
      Protocol.drainNativeLogs();
    }
  }

  /**
   * The child executable offloaded work runs in ({@link SojournConfig#OFFLOAD_ISOLATION}),
   * or null to run it on the offload thread: asked for, or the jar carries no
   * executable (built with a prebuilt library), which is logged.
   */
  static String offloadCommand(SojournConfig s) {
    if (!s.offloadIsolation.equals("process")) {
      return null;
    }
    if (s.offloadCommand != null) {
      return s.offloadCommand;
    }
    try {
      return Native.offloadExecutable().getAbsolutePath();
    } catch (java.io.IOException e) {
      LOG.warn("sojourn: " + SojournConfig.OFFLOAD_ISOLATION + "=process, but " + e.getMessage()
          + "; offloaded work (TetriSched's solves) runs on the RM's offload thread instead. Set "
          + SojournConfig.OFFLOAD_COMMAND + " to a sojourn-offload executable to isolate it");
      return null;
    }
  }

  /** Opens this channel's core. */
  void start(SojournConfig s) {
    core = open(s, s.recordPath);
  }

  void close() {
    if (core != null) {
      core.close();
    }
  }

  boolean isOpen() {
    return core != null && core.isOpen();
  }

  // ---- the cycle ----------------------------------------------------------------------

  /** One step with what waits, the dirty asks and (if {@code heartbeatNode > 0}) a heartbeat. */
  void flush(int heartbeatNode) {
    List<ObjectNode> batch = new ArrayList<>();
    pending.drainInto(batch);
    asks.collectInto(batch);
    if (heartbeatNode > 0) {
      batch.add(Protocol.nodeHeartbeat(heartbeatNode));
    }
    send(batch, yarn.now());
  }

  /**
   * The timer's step: what waits (the policy's due timers fire in it), then,
   * every {@link #DRIFT_CHECK_MS}, a drift check. The check runs only when
   * nothing is in flight (the follow-ups of this step wait for the next one):
   * otherwise it waits for a quiet tick.
   */
  void tick(long now) {
    List<ObjectNode> batch = new ArrayList<>();
    pending.drainInto(batch);
    send(batch, now);
    if (now - driftCheckedAt >= DRIFT_CHECK_MS && pending.isEmpty() && asks.isEmpty()) {
      driftCheckedAt = now;
      checkDrift();
    }
  }

  /** One step with what waits and then {@code event} (tests only). */
  void sendWith(ObjectNode event) {
    List<ObjectNode> batch = new ArrayList<>();
    pending.drainInto(batch); // as every entry does
    batch.add(event);
    send(batch, yarn.now());
  }

  /** Applies decisions as if the core had made them, then one step with their follow-ups (tests only). */
  void applyForTest(List<Protocol.Decision> ds) {
    long now = yarn.now();
    List<ObjectNode> follow = decisions.apply(ds, now);
    pending.drainInto(follow);
    send(follow, now);
  }

  /**
   * One step of the core (its cycle, see the class comment): the policy's
   * timers due by {@code now} fire, the batch applies, and the decisions come
   * back and are applied to YARN; their follow-ups wait at the front of the
   * queue. An empty batch is sent only when a timer is due.
   */
  void send(List<ObjectNode> batch, long now) {
    if (coreFailed && !rebuilding) {
      rebuild(); // sends everything, this batch's news included
      return;
    }
    long wake = nextTimeout;
    if (batch.isEmpty() && (wake < 0 || wake > now)) {
      return;
    }
    Protocol.Response r = callCore(() -> wire.step(core, now, batch));
    for (Protocol.EventError e : r.errors) {
      LOG.warn("sojourn: the core refused {}: {}",
          e.index >= 0 && e.index < batch.size() ? batch.get(e.index) : "an event", e.message);
    }
    if (coreFailed && !rebuilding) {
      rebuild();
      return;
    }
    nextTimeout = r.nextTimeout;
    pending.addFirst(decisions.apply(r.decisions, now));
  }

  private interface CoreCall {
    Protocol.Response run();
  }

  private Protocol.Response callCore(CoreCall c) {
    if (!isOpen()) {
      return Protocol.Response.EMPTY;
    }
    try {
      // The response carries the native log lines of the call.
      return c.run();
    } catch (RuntimeException e) {
      // The bridge refuses a core after a panic in it; the batch is not
      // lost, since the rebuild re-reads everything from YARN's books.
      LOG.error("sojourn: native call failed; the core will be rebuilt from YARN's books", e);
      Protocol.drainNativeLogs();
      coreFailed = true;
      return Protocol.Response.EMPTY;
    }
  }

  // ---- failures: the rebuild and the drift check -----------------------------------------

  /**
   * Replaces a core that failed (a native panic leaves it possibly
   * half-applied, and the bridge refuses it from then on) by a fresh one
   * built from YARN's books: every node, every live attempt, every live
   * container and every outstanding ask. Policy state that YARN does not
   * hold (virtual times, attained service before now) starts afresh.
   */
  private void rebuild() {
    coreFailed = false;
    rebuilds.incrementAndGet();
    Native old = core;
    try {
      core = open(yarn.settings(), yarn.settings().recordPath);
    } catch (RuntimeException e) {
      LOG.error("sojourn: cannot rebuild the core; scheduling stops until the RM restarts", e);
      core = null;
      return;
    } finally {
      if (old != null) {
        try {
          old.close();
        } catch (RuntimeException e) {
          LOG.debug("sojourn: closing the failed core", e);
        }
      }
    }
    pending.clear(); // YARN's books below already hold what these deltas said
    List<ObjectNode> batch = new ArrayList<>();
    for (FiCaSchedulerNode n : yarn.getNodeTracker().getAllNodes()) {
      Integer id = ids.node(n.getNodeID());
      if (id != null) {
        RMNode rm = n.getRMNode();
        batch.add(Protocol.nodeAdded(id, n.getNodeID().toString(), rm.getRackName(), rm.getNodeLabels(),
            n.getTotalResource()));
      }
    }
    for (SojournAppAttempt a : ids.apps()) {
      if (a.isStopped()) {
        continue;
      }
      batch.add(apps.appAdded(a));
      asks.markAll(a);
    }
    for (RMContainer c : ids.containers().values()) {
      SojournAppAttempt a = yarn.getCurrentAttemptForContainer(c.getContainerId());
      if (a != null && !a.isStopped()) {
        apps.recoverInCore(c, a);
      }
    }
    pending.drainInto(batch);
    asks.collectInto(batch);
    LOG.warn("sojourn: rebuilt the core from YARN's books: {} node(s), {} application(s), {} container(s)",
        ids.nodeCount(), ids.apps().size(), ids.containers().size());
    rebuilding = true;
    try {
      send(batch, yarn.now());
    } finally {
      rebuilding = false;
    }
  }

  /**
   * Compares YARN's books with the core's mirror (containers and memory in
   * use over all nodes) when nothing is in flight between them. A difference
   * seen at two checks in a row is drift, whatever its cause (a lost event,
   * a bug): the core is rebuilt from YARN's books and DriftResyncs counts it.
   * Returns whether it resynchronised.
   */
  boolean checkDrift() {
    if (!isOpen() || !pending.isEmpty() || !asks.isEmpty()) {
      return false;
    }
    long yarnContainers = 0;
    long yarnMb = 0;
    for (FiCaSchedulerNode n : yarn.getNodeTracker().getAllNodes()) {
      yarnContainers += n.getNumContainers();
      yarnMb += n.getAllocatedResource().getMemorySize();
    }
    JsonNode cluster;
    try {
      JsonNode described = Protocol.JSON.readTree(core.describe());
      keepMetrics(described);
      cluster = described.path("cluster");
    } catch (IOException | RuntimeException e) {
      coreFailed = true;
      return false;
    } finally {
      Protocol.drainNativeLogs();
    }
    String seen = yarnContainers + " container(s) / " + yarnMb + " MB in YARN, "
        + cluster.path("containers").asLong() + " / " + cluster.path("allocated").path("memory_mb").asLong()
        + " MB in the core";
    boolean differs = cluster.path("containers").asLong() != yarnContainers
        || cluster.path("allocated").path("memory_mb").asLong() != yarnMb;
    if (!differs) {
      driftSeen = null;
      return false;
    }
    if (!seen.equals(driftSeen)) {
      driftSeen = seen; // maybe in flight: look again at the next check
      return false;
    }
    driftSeen = null;
    driftResyncs.incrementAndGet();
    LOG.warn("sojourn: the core's mirror drifted from YARN's books ({}); rebuilding it from YARN's", seen);
    rebuild();
    return true;
  }

  /** Panics inside the live core, as a policy bug would (tests only). */
  void panicInCoreForTest() {
    try {
      core.panicInCoreForTest();
    } catch (RuntimeException e) {
      LOG.error("sojourn: native call failed; the core will be rebuilt from YARN's books", e);
      coreFailed = true;
    }
  }

  // ---- for operators ------------------------------------------------------------------

  /** Puts the core's describe JSON in {@code o} as "core" (null when closed; a failure is said). */
  void describeInto(ObjectNode o) {
    try {
      JsonNode described = isOpen() ? Protocol.JSON.readTree(core.describe()) : null;
      keepMetrics(described);
      o.set("core", described);
    } catch (IOException e) {
      o.put("core", "unreadable: " + e);
    } catch (RuntimeException e) {
      coreFailed = true; // rebuilt at the next entry
      o.put("core", "failed: " + e.getMessage());
    } finally {
      Protocol.drainNativeLogs();
    }
  }

  /**
   * The policy's metrics (the describe's flat {@code "metrics"}: counters, and
   * distributions as name.count/.mean/.p50/.p90/.p99/.max), as read at most
   * {@link #METRICS_MAX_AGE_MS} ago: a read older than that describes the core
   * again, under {@link #lock}. After a rebuild they count from the rebuild.
   */
  Map<String, Double> policyMetrics() {
    if (yarn.now() - metricsAt >= METRICS_MAX_AGE_MS) {
      synchronized (lock) {
        if (yarn.now() - metricsAt >= METRICS_MAX_AGE_MS && isOpen()) {
          try {
            keepMetrics(Protocol.JSON.readTree(core.describe()));
          } catch (IOException e) {
            LOG.debug("sojourn: unreadable describe", e);
          } catch (RuntimeException e) {
            coreFailed = true; // rebuilt at the next entry
          } finally {
            Protocol.drainNativeLogs();
          }
        }
      }
    }
    return metrics;
  }

  /** Keeps the metrics of a describe just made. */
  private void keepMetrics(JsonNode described) {
    JsonNode m = described == null ? null : described.get("metrics");
    if (m == null || !m.isObject()) {
      return;
    }
    Map<String, Double> out = new TreeMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = m.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      if (e.getValue().isNumber()) {
        out.put(e.getKey(), e.getValue().asDouble());
      }
    }
    metrics = Collections.unmodifiableMap(out);
    metricsAt = yarn.now();
  }

  long rebuilds() {
    return rebuilds.get();
  }

  long driftResyncs() {
    return driftResyncs.get();
  }
}
