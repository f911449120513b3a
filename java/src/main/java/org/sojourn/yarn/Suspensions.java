package org.sojourn.yarn;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.util.resource.Resources;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How the core's suspend and resume decisions are carried out
 * ({@code yarn.scheduler.sojourn.suspend}, fixed at start-up: a refresh cannot
 * change it, or containers the agents paused would be orphaned):
 *
 * <ul>
 *   <li>{@code agent}: a suspended container stays RUNNING in YARN and keeps
 *   all its resources on its node; it is listed here, and the NodeManagers'
 *   {@code org.sojourn.yarn.nm.SuspendingContainerExecutor} reads the list
 *   (signed, {@link #signed}) over JMX and pauses its processes. A resume
 *   takes it off the list. {@link #roomFor} counts its vcores as free, as the
 *   core's mirror does.</li>
 *   <li>{@code kill}: carried out as kill preemption ({@link KillPreemption});
 *   a resume before the kill cancels it ({@link #resume}).</li>
 *   <li>{@code reject}: sent back to the core, never to be decided again.</li>
 * </ul>
 *
 * <p>Locking: decisions are applied under {@link CoreChannel#lock}; the list is
 * concurrent because JMX reads it from the web server's threads without the
 * lock (a read sees each container either listed or not).
 */
final class Suspensions {
  private static final Logger LOG = LoggerFactory.getLogger(SojournScheduler.class);
  /** How long after start-up (and since the last read) a suspension with no agent reading is warned about. */
  static final long AGENT_SILENCE_MS = 60_000;
  static final String NO_SUSPEND =
      SojournConfig.SUSPEND + "=reject: this ResourceManager does not suspend containers";

  private final LongSupplier now;
  private volatile String mode = SojournConfig.DEFAULT_SUSPEND;
  /** Signs the list for the NodeManager agents (SignedSuspendedContainers). */
  private volatile SuspendListSigner signer = new SuspendListSigner(null);
  /** suspend=agent: the containers the core holds suspended. */
  private final ConcurrentHashMap<ContainerId, RMContainer> suspended = new ConcurrentHashMap<>();
  /** When (ms, the core's clock) the list was last read, e.g. by a NodeManager agent; -1: never. */
  private volatile long readAt = -1;
  private final AtomicBoolean warnedRejected = new AtomicBoolean();
  private final AtomicBoolean warnedNoAgent = new AtomicBoolean();
  private final AtomicLong suspensions = new AtomicLong();
  private final AtomicLong resumes = new AtomicLong();

  /** {@code now}: the core's clock (ms). */
  Suspensions(LongSupplier now) {
    this.now = now;
  }

  /** Sets the mode and the signer at start-up. */
  void start(String suspendMode, Configuration conf) {
    this.mode = suspendMode;
    this.signer = SuspendListSigner.fromConf(conf, suspendMode);
  }

  String mode() {
    return mode;
  }

  /** The start-up line that announces how suspend decisions are carried out. */
  static String modeLine(String mode, long graceMs) {
    switch (mode) {
      case "agent":
        return "sojourn: suspend decisions are carried out by the NodeManager agent "
            + "(SuspendingContainerExecutor): the container is paused (SIGSTOP) and keeps its memory "
            + "and node; every NodeManager needs yarn.nodemanager.container-executor.class="
            + "org.sojourn.yarn.nm.SuspendingContainerExecutor (" + SojournConfig.SUSPEND + "=agent)";
      case "reject":
        return "sojourn: suspend decisions are rejected back to the policy (" + SojournConfig.SUSPEND
            + "=reject)";
      default:
        return "sojourn: suspend decisions are carried out as kill preemption (the work is lost; "
            + "the kill follows the AM's " + graceMs + " ms grace; " + SojournConfig.SUSPEND
            + "=kill; set it to agent once the NodeManagers run SuspendingContainerExecutor)";
    }
  }

  /** Whether a suspension is carried out by the agent (else as a kill). */
  boolean byAgent() {
    return "agent".equals(mode);
  }

  /** Under suspend=reject, the refusal of a suspension (warned about once); else null. */
  Protocol.Refused refuseIfRejecting(String policy) {
    if (!"reject".equals(mode)) {
      return null;
    }
    if (warnedRejected.compareAndSet(false, true)) {
      LOG.warn("sojourn: policy {} suspends containers, but {}=reject: its suspend decisions go "
          + "back to it (set agent or kill)", policy, SojournConfig.SUSPEND);
    }
    return Protocol.Refused.never(NO_SUSPEND);
  }

  /**
   * suspend=agent: lists {@code rmc} (core container {@code cid}) as
   * suspended. It stays RUNNING and keeps its resources in YARN's books (see
   * {@link #roomFor}); the NodeManager's agent pauses it at its next poll.
   * Returns null when applied.
   */
  Protocol.Refused suspend(RMContainer rmc, SojournAppAttempt a, long cid, long at) {
    if (suspended.putIfAbsent(rmc.getContainerId(), rmc) != null) {
      return Protocol.Refused.retry("container " + rmc.getContainerId() + " is already suspended");
    }
    suspensions.incrementAndGet();
    LOG.info("sojourn: suspending {} of {} on {} (core {}): its NodeManager pauses it",
        rmc.getContainerId(), a.getApplicationAttemptId(), rmc.getAllocatedNode(), cid);
    long read = readAt;
    if (at > AGENT_SILENCE_MS && (read < 0 || at - read > AGENT_SILENCE_MS)
        && warnedNoAgent.compareAndSet(false, true)) {
      LOG.warn("sojourn: {}=agent, but nothing has read the suspended containers' list in the last "
          + "{} s: do the NodeManagers run org.sojourn.yarn.nm.SuspendingContainerExecutor? Without "
          + "it, suspended containers keep running", SojournConfig.SUSPEND, AGENT_SILENCE_MS / 1000);
    }
    return null;
  }

  /** Counts a suspension carried out as a kill (suspend=kill). */
  void countKilled() {
    suspensions.incrementAndGet();
  }

  /**
   * Resumes {@code rmc} (core container {@code cid}): takes it off the list
   * (agent), or cancels the kill that carries out its suspension (kill,
   * before the kill: the container never stopped, so that is exactly a
   * resume; the AM may still have been told in a PreemptionMessage, which is
   * advisory). Returns null when applied.
   */
  Protocol.Refused resume(RMContainer rmc, long cid, KillPreemption kills) {
    ContainerId id = rmc.getContainerId();
    if (suspended.remove(id) != null) {
      resumes.incrementAndGet();
      LOG.info("sojourn: resuming {} on {} (core {}): its NodeManager continues it", id,
          rmc.getAllocatedNode(), cid);
      return null;
    }
    if (kills.cancelSuspendKill(id)) {
      resumes.incrementAndGet();
      LOG.info("sojourn: resume of {} before its kill: the kill is cancelled", id);
      return null;
    }
    if ("reject".equals(mode)) {
      return Protocol.Refused.retry(NO_SUSPEND);
    }
    return Protocol.Refused.retry("container " + id + " is not suspended");
  }

  /**
   * Takes {@code rmc} off the list without a decision of the core, because
   * the core is told of it afresh as running (a work-preserving AM restart
   * keeps it under a new attempt, or the core is rebuilt); the agent
   * continues it at its next poll. Counted as a resume. Returns whether it
   * was listed.
   */
  boolean release(RMContainer rmc) {
    if (suspended.remove(rmc.getContainerId()) == null) {
      return false;
    }
    resumes.incrementAndGet();
    LOG.info("sojourn: {} on {} was suspended and goes to the core afresh (a new attempt keeps it, or the core "
        + "is rebuilt), so it runs again: the agent continues it; its node may hold more vcores than it has "
        + "until containers end",
        rmc.getContainerId(), rmc.getAllocatedNode());
    return true;
  }

  /** A container ended: it leaves the list. */
  void completed(ContainerId id, RMContainerEventType event) {
    if (suspended.remove(id) != null) {
      LOG.info("sojourn: suspended container {} completed ({})", id, event);
    }
  }

  /**
   * The room a new container may take on {@code node}. YARN's own books keep a
   * suspended container (suspend=agent) at its full size: it is still RUNNING,
   * its memory is really held, and releasing it would let YARN hand its memory
   * out. But it uses no CPU, and the core's mirror gives its vcores back to
   * the node (a suspended container holds only its memory and GPUs). So a
   * node's vcores count here as YARN's unallocated vcores plus those of the
   * suspended containers on it; memory and other resources are checked
   * against YARN's books unchanged. The node's allocated vcores may then go
   * above its capacity in YARN's books (in the web UI and the queue metrics)
   * while containers are suspended: CPU is what suspension frees.
   */
  Resource roomFor(FiCaSchedulerNode node) {
    Resource unallocated = node.getUnallocatedResource();
    if (suspended.isEmpty()) {
      return unallocated;
    }
    int vcores = 0;
    for (RMContainer c : suspended.values()) {
      if (c.getAllocatedNode().equals(node.getNodeID())) {
        vcores += c.getAllocatedResource().getVirtualCores();
      }
    }
    if (vcores == 0) {
      return unallocated;
    }
    Resource room = Resources.clone(unallocated);
    room.setVirtualCores(unallocated.getVirtualCores() + vcores);
    return room;
  }

  /** The list, sorted, as YARN container ids; a read counts as the agents' (see {@link #suspend}). */
  String[] list() {
    readAt = now.getAsLong();
    List<String> ids = new ArrayList<>();
    for (ContainerId id : suspended.keySet()) {
      ids.add(id.toString());
    }
    Collections.sort(ids);
    return ids.toArray(new String[0]);
  }

  /** What the NodeManagers' agents act on: the same list, signed (SuspendListSigner). */
  String signed() {
    return signer.sign(list());
  }

  int count() {
    return suspended.size();
  }

  long suspensions() {
    return suspensions.get();
  }

  long resumes() {
    return resumes.get();
  }
}
