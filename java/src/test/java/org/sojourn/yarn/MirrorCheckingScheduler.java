package org.sojourn.yarn;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;

/**
 * Sojourn, checked against YARN's books after every NodeManager heartbeat:
 * for tests that run a real ResourceManager (MiniYARNCluster), where the
 * test cannot step the RM itself. Set it as {@code yarn.resourcemanager.scheduler.class}
 * and each RM (also one started by a restart or made active by a fail-over)
 * makes its own.
 *
 * <p>After each heartbeat's step (under the scheduler's lock, so nothing
 * else enters the core meanwhile) it compares:
 * <ul>
 *   <li>the nodes: containers and memory in use over all nodes in YARN's
 *   books with the core's mirror ({@code cluster.containers},
 *   {@code cluster.allocated.memory_mb});</li>
 *   <li>the applications: the number of live attempts with the core's
 *   {@code cluster.apps}, and that every live container of every live attempt
 *   is mapped to a core container (the shim sent it to the core and has not
 *   taken it back).</li>
 * </ul>
 * A difference is counted ({@link #mismatches}) with the first one described
 * ({@link #firstMismatch}). After a step the two agree exactly: the core's
 * decisions were applied to YARN's books in the step, and YARN's news reached
 * the core in it; only a decision the shim rejected is in flight, and tests
 * assert there are none.
 */
public class MirrorCheckingScheduler extends SojournScheduler {
  private final AtomicLong checked = new AtomicLong();
  private final AtomicLong mismatches = new AtomicLong();
  private volatile String firstMismatch;

  @Override
  protected void nodeUpdate(RMNode nm) {
    super.nodeUpdate(nm); // under the core lock: handle() holds it
    String seen = compare();
    checked.incrementAndGet();
    if (seen != null) {
      mismatches.incrementAndGet();
      if (firstMismatch == null) {
        firstMismatch = "at the heartbeat of " + nm.getNodeID() + ": " + seen;
      }
    }
  }

  /** What differs between YARN's books and the core's mirror now, or null. */
  public String compare() {
    String state = describe(); // takes the core lock
    JsonNode cluster;
    try {
      cluster = Protocol.JSON.readTree(state).path("core").path("cluster");
    } catch (IOException e) {
      return "unreadable describe: " + e;
    }
    long yarnContainers = 0;
    long yarnMb = 0;
    for (FiCaSchedulerNode n : getNodeTracker().getAllNodes()) {
      yarnContainers += n.getNumContainers();
      yarnMb += n.getAllocatedResource().getMemorySize();
    }
    long coreContainers = cluster.path("containers").asLong(-1);
    long coreMb = cluster.path("allocated").path("memory_mb").asLong(-1);
    long liveAttempts = 0;
    StringBuilder unmapped = new StringBuilder();
    for (SchedulerApplication<SojournAppAttempt> app : getSchedulerApplications().values()) {
      SojournAppAttempt a = app.getCurrentAppAttempt();
      if (a == null || a.isStopped()) {
        continue;
      }
      liveAttempts++;
      for (RMContainer c : a.getLiveContainers()) {
        ContainerId id = c.getContainerId();
        if (coreIdOf(id) == null) {
          unmapped.append(' ').append(id);
        }
      }
    }
    long coreApps = cluster.path("apps").asLong(-1);
    if (yarnContainers == coreContainers && yarnMb == coreMb && liveAttempts == coreApps
        && unmapped.length() == 0) {
      return null;
    }
    return "YARN " + yarnContainers + " container(s) / " + yarnMb + " MB / " + liveAttempts
        + " live attempt(s); core " + coreContainers + " / " + coreMb + " MB / " + coreApps
        + " app(s); live containers the core does not hold:" + (unmapped.length() == 0 ? " none" : unmapped);
  }

  /** Heartbeats checked so far. */
  public long checkedHeartbeats() {
    return checked.get();
  }

  /** Heartbeats after which YARN's books and the core differed. */
  public long mismatches() {
    return mismatches.get();
  }

  /** The first difference seen, or null. */
  public String firstMismatch() {
    return firstMismatch;
  }

  /** One drift check as the timer makes them; true if it rebuilt the core. */
  public boolean driftCheck() {
    return checkDriftForTest();
  }

  /** The core's id of a YARN container, or null if the core does not hold it. */
  public Long coreContainerId(ContainerId id) {
    return coreIdOf(id);
  }
}
