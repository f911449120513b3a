package org.sojourn.yarn;

import java.util.Map;

/**
 * Sojourn's state over JMX, registered as
 * {@code Hadoop:service=ResourceManager,name=SojournScheduler}; the RM's
 * {@code /jmx?qry=Hadoop:service=ResourceManager,name=SojournScheduler}
 * serves it as JSON (REST {@code /ws/v1/cluster/scheduler} answers only for
 * Hadoop's own schedulers).
 */
public interface SojournSchedulerMXBean {
  /** The running policy. */
  String getPolicy();

  /** The policy's and the mirror's state, with the shim's counters (JSON). */
  String getState();

  /**
   * The policy's own figures, from the core: counters by name (e.g. kairos's
   * {@code quantum_ends}, hfsp's {@code sizes_estimated}), and each
   * distribution as {@code name.count}, {@code .mean}, {@code .p50},
   * {@code .p90}, {@code .p99}, {@code .max}. Read from the core at most once
   * a second; after a rebuild of the core they count from the rebuild. Over
   * JMX, a table of (key, value) rows.
   */
  Map<String, Double> getPolicyMetrics();

  /** Leaf queues, by full path. */
  String[] getLeafQueues();

  long getAllocations();

  long getRejections();

  /**
   * Containers handed to the core that it did not place: recovered after an RM
   * restart, kept by a restarted AM, or re-sent on a rebuild.
   */
  long getRecoveredContainers();

  /** Times the core failed (a native panic) and was rebuilt from YARN's books. */
  long getCoreRebuilds();

  /** Times the mirror drifted from YARN's books (two checks in a row) and was rebuilt from them. */
  long getDriftResyncs();

  long getPreemptionKills();

  /**
   * Task progress readings passed to the policy, read from MapReduce AMs
   * ({@code yarn.scheduler.sojourn.am-progress.interval-ms}); stays 0 when
   * that is off or no AM could be read.
   */
  long getProgressReports();

  /**
   * AM reads and readings the progress poller refused: a tracking URL not on
   * the AM's node, a redirect, answers over the byte budget or past the
   * deadline, progress going back, a sort finish outside the container's life.
   */
  long getAmProgressRefusals();

  /** How suspend decisions are carried out: agent, kill or reject. */
  String getSuspendMode();

  /**
   * The containers the core holds suspended (suspend=agent), as YARN
   * container ids, for operators; the NodeManager agents read the signed
   * form, {@link #getSignedSuspendedContainers()}.
   */
  String[] getSuspendedContainers();

  /**
   * {@link #getSuspendedContainers()} signed with the shared secret of
   * {@code yarn.scheduler.sojourn.suspend.secret-file}, with a sequence number
   * and time against replays ({@code org.sojourn.yarn.nm.SuspendListMac}):
   * what the NodeManager agents read and verify.
   */
  String getSignedSuspendedContainers();
}
