package org.sojourn.yarn;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerState;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kill preemption, on YARN's own path: the container is marked, its AM sees
 * it in a PreemptionMessage at its next allocate, and it is killed
 * {@code yarn.scheduler.sojourn.preemption.grace-ms} later, ending PREEMPTED
 * (the core's mirror drops it when the completion reaches it). The same path
 * carries out a suspension under {@code suspend=kill}; a resume before the
 * kill cancels it ({@link #cancelSuspendKill}).
 *
 * <p>The kills are made by {@link #killExpired}, at every NODE_UPDATE and timer
 * tick. Kills YARN itself asks for (MARK_CONTAINER_FOR_KILLABLE, node
 * over-commit) come through {@link #kill} too, so that they are counted the
 * same way.
 *
 * <p>Locking: everything runs under {@link CoreChannel#lock}; the maps are
 * concurrent only so that JMX may count them without it.
 */
final class KillPreemption {
  private static final Logger LOG = LoggerFactory.getLogger(SojournScheduler.class);

  private final SojournScheduler yarn;
  private final LongSupplier graceMs;
  /** Containers marked for preemption, with the time (ms) they are killed at. */
  private final ConcurrentHashMap<ContainerId, Long> killAt = new ConcurrentHashMap<>();
  /** suspend=kill: containers whose kill carries out a suspend (a resume before the kill cancels it). */
  private final Set<ContainerId> suspendKills = ConcurrentHashMap.newKeySet();
  private final AtomicLong kills = new AtomicLong();

  /** {@code graceMs}: the current grace (a refresh may change it). */
  KillPreemption(SojournScheduler yarn, LongSupplier graceMs) {
    this.yarn = yarn;
    this.graceMs = graceMs;
  }

  /**
   * Marks {@code rmc} of {@code a} for preemption at {@code now}: the AM is
   * asked now, the kill follows after the grace ({@code carriesSuspend}: it
   * carries out a suspension, suspend=kill). Returns null when applied.
   */
  Protocol.Refused preempt(RMContainer rmc, SojournAppAttempt a, boolean carriesSuspend, long now) {
    ContainerId id = rmc.getContainerId();
    if (killAt.containsKey(id)) {
      return Protocol.Refused.retry("container " + id + " is already being preempted");
    }
    if (carriesSuspend) {
      // Accepted as the core sent it: its mirror now holds the container
      // suspended (memory kept, vcores free), and the kill ends it with
      // ContainerCompleted(preempted), which drops it from the mirror. Until
      // the kill YARN's books still count its vcores, so an allocation that
      // needs them is rejected and retried (as with any kill preemption, the
      // room comes with the kill).
      suspendKills.add(id);
    }
    long grace = graceMs.getAsLong();
    a.markContainerForPreemption(id);
    killAt.put(id, now + grace);
    LOG.info("sojourn: preempting {} of {}: the AM is asked now, the kill follows in {} ms",
        id, a.getApplicationAttemptId(), grace);
    if (grace == 0) {
      killExpired(now);
    }
    return null;
  }

  /** Kills every marked container whose grace has passed by {@code now}. */
  void killExpired(long now) {
    if (killAt.isEmpty()) {
      return;
    }
    for (Map.Entry<ContainerId, Long> e : killAt.entrySet()) {
      if (e.getValue() <= now && killAt.remove(e.getKey(), e.getValue())) {
        suspendKills.remove(e.getKey());
        RMContainer rmc = yarn.getRMContainer(e.getKey());
        if (rmc != null) {
          kill(rmc);
        }
      }
    }
  }

  /** Kills {@code rmc} as preempted (unless it ended already), counting it in its queue's metrics. */
  void kill(RMContainer rmc) {
    if (rmc == null || rmc.getState() == RMContainerState.COMPLETED
        || rmc.getState() == RMContainerState.KILLED || rmc.getState() == RMContainerState.RELEASED) {
      return;
    }
    SojournAppAttempt a = yarn.getCurrentAttemptForContainer(rmc.getContainerId());
    if (a != null) {
      QueueMetrics m = a.getQueue().getMetrics();
      m.preemptContainer();
      m.updatePreemptedResources(rmc.getAllocatedResource());
    }
    kills.incrementAndGet();
    LOG.info("sojourn: killing preempted container {}", rmc.getContainerId());
    yarn.completedContainer(rmc, SchedulerUtils.createPreemptedContainerStatus(rmc.getContainerId(),
        SchedulerUtils.PREEMPTED_CONTAINER), RMContainerEventType.KILL);
  }

  /** Cancels the kill that carries out {@code id}'s suspension, if one is pending; returns whether. */
  boolean cancelSuspendKill(ContainerId id) {
    if (!suspendKills.remove(id)) {
      return false;
    }
    killAt.remove(id);
    return true;
  }

  /** A container ended: nothing is pending for it any more. */
  void completed(ContainerId id) {
    killAt.remove(id);
    suspendKills.remove(id);
  }

  /** Marked containers not killed yet. */
  int pending() {
    return killAt.size();
  }

  /** Containers killed as preempted. */
  long kills() {
    return kills.get();
  }
}
