package org.sojourn.yarn;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.apache.hadoop.yarn.api.records.ContainerId;

/**
 * The events waiting for the next step of the core: what YARN's events said
 * (nodes, attempts, completions, recovered containers), the follow-ups of the
 * last step (confirmations, rejections: at the front, so they go first), and
 * the latest task progress read from MapReduce AMs.
 *
 * <p>Each entry into the core drains all of it into its batch
 * ({@link #drainInto}); asks are not here, they are re-read from YARN's books
 * when the batch is made ({@link AskTranslator}).
 *
 * <p>Locking: producers add from any thread (the progress poller's threads
 * without any lock, the rest under {@link CoreChannel#lock}); the drain runs
 * under {@link CoreChannel#lock}. The queues are concurrent, so nothing added
 * meanwhile is lost: it waits for the next drain.
 */
final class PendingEvents {
  private final CoreIds ids;
  private final LongSupplier now;
  private final ConcurrentLinkedDeque<ObjectNode> events = new ConcurrentLinkedDeque<>();
  /**
   * The latest task progress, by core container id (a newer reading replaces
   * one not yet sent).
   */
  private final ConcurrentHashMap<Long, Double> progress = new ConcurrentHashMap<>();
  /** With a reading of a reduce past its sort: when that ended (core clock, ms). */
  private final ConcurrentHashMap<Long, Long> sortFinished = new ConcurrentHashMap<>();
  /** Progress readings passed to the core. */
  private final AtomicLong progressReports = new AtomicLong();

  /** {@code now}: the core's clock (ms), to place an AM's sort finish on it. */
  PendingEvents(CoreIds ids, LongSupplier now) {
    this.ids = ids;
    this.now = now;
  }

  void add(ObjectNode event) {
    events.add(event);
  }

  /** Puts a step's follow-ups ahead of everything waiting, in their order. */
  void addFirst(List<ObjectNode> followUps) {
    for (int i = followUps.size() - 1; i >= 0; i--) {
      events.addFirst(followUps.get(i));
    }
  }

  /** Whether no event waits (progress readings aside). */
  boolean isEmpty() {
    return events.isEmpty();
  }

  /** Drops every waiting event (a rebuild re-reads them from YARN's books). */
  void clear() {
    events.clear();
  }

  /**
   * A running task's progress in [0, 1], read from its MapReduce AM (any
   * thread), and when it finished its sort (the AM's epoch ms; 0 when not):
   * queued for the next entry into the core. Readings of containers the core
   * does not know (any more) are dropped.
   */
  void containerProgress(ContainerId id, double p, long sortFinishedEpochMs) {
    Long cid = ids.coreId(id);
    if (cid != null) {
      if (sortFinishedEpochMs > 0) {
        // The AM's wall clock to the core's: as long ago as it was then.
        long ago = Math.max(0, System.currentTimeMillis() - sortFinishedEpochMs);
        sortFinished.put(cid, Math.max(0, now.getAsLong() - ago));
      }
      progress.put(cid, p);
    }
  }

  /** Moves everything waiting into {@code batch}: progress readings first, then the events in order. */
  void drainInto(List<ObjectNode> batch) {
    // Progress first, and only of containers still live: a container's
    // completion forgets its id before queueing its ContainerCompleted, so a
    // reading is either dropped here or sent ahead of that completion, never
    // after it.
    for (Long cid : progress.keySet()) {
      Double p = progress.remove(cid);
      Long sorted = sortFinished.remove(cid);
      if (p != null && ids.isLive(cid)) {
        batch.add(Protocol.containerProgress(cid, p, sorted));
        progressReports.incrementAndGet();
      }
    }
    sortFinished.keySet().removeIf(cid -> !ids.isLive(cid));
    for (ObjectNode e; (e = events.poll()) != null; ) {
      batch.add(e);
    }
  }

  long progressReports() {
    return progressReports.get();
  }
}
