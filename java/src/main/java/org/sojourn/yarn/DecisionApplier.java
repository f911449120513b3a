package org.sojourn.yarn;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.NodeType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerAppUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.PendingAsk;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;
import org.apache.hadoop.yarn.server.utils.BuilderUtils;
import org.apache.hadoop.yarn.util.resource.Resources;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Carries the core's decisions out in YARN's books, each after checking it
 * against them: the application is alive, the node exists, YARN still has
 * the request, the container fits, the node is not blacklisted. A decision
 * that fails a check goes back to the core as a {@code Rejected} with the
 * reason and a {@link Protocol.Refusal} kind (never: an app, node or
 * container that is gone, a suspension under suspend=reject; retry: the
 * rest; error: an unknown decision or an exception), so the core's mirror
 * never holds what YARN does not.
 *
 * <p>{@link #apply} returns the follow-ups (a {@code ContainerStarted} for each
 * allocation made, a {@code Rejected} for each refusal): they go to the core
 * in its next step, never into the one that decided.
 *
 * <p>Locking: runs under {@link CoreChannel#lock}; an allocation also takes the
 * attempt's monitor (see {@link #allocate}).
 */
final class DecisionApplier {
  private static final Logger LOG = LoggerFactory.getLogger(SojournScheduler.class);

  private final SojournScheduler yarn;
  private final CoreIds ids;
  private final AskTranslator asks;
  private final Suspensions suspensions;
  private final KillPreemption kills;
  private final AtomicLong allocations = new AtomicLong();
  private final AtomicLong rejections = new AtomicLong();

  DecisionApplier(SojournScheduler yarn, CoreIds ids, AskTranslator asks, Suspensions suspensions,
      KillPreemption kills) {
    this.yarn = yarn;
    this.ids = ids;
    this.asks = asks;
    this.suspensions = suspensions;
    this.kills = kills;
  }

  /** Applies decisions in order; returns the follow-up events (confirmations, rejections). */
  List<ObjectNode> apply(List<Protocol.Decision> decisions, long now) {
    List<ObjectNode> out = new ArrayList<>();
    for (int i = 0; i < decisions.size(); i++) {
      Protocol.Decision d = decisions.get(i);
      if (d instanceof Protocol.Allocate && ((Protocol.Allocate) d).inGang()) {
        // The core emits a gang's members one after another.
        List<Protocol.Allocate> gang = new ArrayList<>();
        long g = ((Protocol.Allocate) d).gang;
        while (i < decisions.size() && decisions.get(i) instanceof Protocol.Allocate
            && ((Protocol.Allocate) decisions.get(i)).gang == g) {
          gang.add((Protocol.Allocate) decisions.get(i++));
        }
        i--;
        allocateGang(gang, out);
        continue;
      }
      Protocol.Refused refused;
      try {
        if (d instanceof Protocol.Allocate) {
          refused = allocate((Protocol.Allocate) d, out);
        } else if (d instanceof Protocol.Preempt) {
          refused = preempt((Protocol.Preempt) d, now);
        } else if (d instanceof Protocol.Reserve || d instanceof Protocol.Unreserve) {
          // The core holds the node for the app; YARN needs no reserved container
          // because nothing but the core places containers.
          LOG.debug("sojourn: {}", d);
          refused = null;
        } else if (d instanceof Protocol.Resume) {
          refused = resume((Protocol.Resume) d);
        } else {
          refused = Protocol.Refused.error("unknown decision type '" + d.type() + "'");
        }
      } catch (RuntimeException e) {
        LOG.warn("sojourn: error applying " + d, e);
        refused = Protocol.Refused.error("error applying the decision: " + e);
      }
      if (refused != null) {
        reject(d, refused, out);
      }
    }
    return out;
  }

  private void reject(Protocol.Decision d, Protocol.Refused refused, List<ObjectNode> out) {
    rejections.incrementAndGet();
    rejected(d, refused, out);
  }

  /** The follow-up event for {@code d}'s refusal; the caller counts it. */
  private static void rejected(Protocol.Decision d, Protocol.Refused refused, List<ObjectNode> out) {
    LOG.debug("sojourn: rejected {} ({}): {}", d, refused.kind, refused.why);
    out.add(Protocol.rejected(d, refused.why, refused.kind));
  }

  /**
   * A gang, all or nothing: every member is checked against YARN's books first (together: the
   * request must still want all of them, and each node must hold all of its members), and only
   * then are they allocated, under the attempt's monitor throughout, so the AM sees all of them or
   * none. If one is refused anyway, it and the rest are rejected; the core then kills the members
   * started here (its rollback of a gang carried out in part).
   */
  private void allocateGang(List<Protocol.Allocate> gang, List<ObjectNode> out) {
    Protocol.Allocate first = gang.get(0);
    SojournAppAttempt a = ids.app(first.app);
    Protocol.Refused refused;
    if (a == null || a.isStopped()) {
      refused = Protocol.Refused.never("application " + first.app + " is gone");
    } else {
      synchronized (a) {
        try {
          refused = gangRefusal(a, gang);
          for (int i = 0; refused == null && i < gang.size(); i++) {
            refused = allocate(gang.get(i), out);
            if (refused != null) {
              gang = gang.subList(i, gang.size());
            }
          }
        } catch (RuntimeException e) {
          LOG.warn("sojourn: error applying gang " + first.gang, e);
          refused = Protocol.Refused.error("error applying the gang: " + e);
        }
      }
    }
    if (refused == null) {
      return;
    }
    String why = "gang " + first.gang + " refused: " + refused.why;
    Protocol.Refused whole = refused.kind == Protocol.Refusal.NEVER ? Protocol.Refused.never(why)
        : refused.kind == Protocol.Refusal.ERROR ? Protocol.Refused.error(why) : Protocol.Refused.retry(why);
    // Counted at once: the timer thread's steps run while the MXBean is read,
    // and a reader must never see a gang refused in part.
    rejections.addAndGet(gang.size());
    for (Protocol.Allocate m : gang) {
      rejected(m, whole, out);
    }
  }

  /** Why YARN's books cannot take all of {@code gang} now, or null when they can. */
  private Protocol.Refused gangRefusal(SojournAppAttempt a, List<Protocol.Allocate> gang) {
    Map<NodeId, Resource> taken = new HashMap<>();
    Map<SchedulerRequestKey, Integer> wanted = new HashMap<>();
    for (Protocol.Allocate m : gang) {
      FiCaSchedulerNode node = nodeOf(m);
      if (node == null) {
        return Protocol.Refused.never("node " + m.node + " is gone");
      }
      SchedulerRequestKey key = requestKey(a, m);
      if (key == null) {
        return noRequest(a, m);
      }
      int n = wanted.merge(key, 1, Integer::sum);
      if (n > a.getPendingAsk(key, ResourceRequest.ANY).getCount()) {
        return Protocol.Refused.retry("YARN's request of " + a.getApplicationAttemptId() + " at priority "
            + m.priority + " wants fewer than the gang's " + gang.size());
      }
      Resource need = Resources.add(taken.getOrDefault(node.getNodeID(), Resources.none()),
          a.getPendingAsk(key, ResourceRequest.ANY).getPerAllocationResource());
      Protocol.Refused refused = roomRefusal(a, node, need);
      if (refused != null) {
        return refused;
      }
      taken.put(node.getNodeID(), need);
    }
    return null;
  }

  /** {@code d}'s node in YARN's books, or null when it is gone. */
  private FiCaSchedulerNode nodeOf(Protocol.Allocate d) {
    NodeId nid = ids.node(d.node);
    return nid == null ? null : yarn.getSchedulerNode(nid);
  }

  /** Why {@code need} cannot go on {@code node} for {@code a} now (no room, or blacklisted), or null. */
  private Protocol.Refused roomRefusal(SojournAppAttempt a, FiCaSchedulerNode node, Resource need) {
    Resource room = suspensions.roomFor(node);
    if (!Resources.fitsIn(need, room)) {
      return Protocol.Refused.retry(need + " does not fit on " + node.getNodeID() + " (unallocated "
          + node.getUnallocatedResource()
          + (room == node.getUnallocatedResource() ? "" : ", with suspended containers' vcores " + room) + ")");
    }
    if (SchedulerAppUtils.isPlaceBlacklisted(a, node, LOG)) {
      return Protocol.Refused.retry(node.getNodeID() + " is blacklisted for " + a.getApplicationAttemptId());
    }
    return null;
  }

  /** The key of {@code a}'s outstanding request that {@code d} serves, or null. */
  private static SchedulerRequestKey requestKey(SojournAppAttempt a, Protocol.Allocate d) {
    for (SchedulerRequestKey k : a.getSchedulerKeys()) {
      if (k.getPriority().getPriority() != d.priority) {
        continue;
      }
      PendingAsk pa = a.getPendingAsk(k, ResourceRequest.ANY);
      if (pa.getCount() > 0 && d.resources.sameAs(pa.getPerAllocationResource())) {
        return k;
      }
    }
    return null;
  }

  private static Protocol.Refused noRequest(SojournAppAttempt a, Protocol.Allocate d) {
    return Protocol.Refused.retry("YARN has no outstanding request of " + a.getApplicationAttemptId()
        + " at priority " + d.priority + " for " + d.resources);
  }

  /** Returns null when applied, else why not and whether it could succeed later. */
  private Protocol.Refused allocate(Protocol.Allocate d, List<ObjectNode> out) {
    SojournAppAttempt a = ids.app(d.app);
    if (a == null || a.isStopped()) {
      return Protocol.Refused.never("application " + d.app + " is gone");
    }
    FiCaSchedulerNode node = nodeOf(d);
    if (node == null) {
      return Protocol.Refused.never("node " + d.node + " is gone");
    }
    NodeId nid = node.getNodeID();
    SchedulerRequestKey key = requestKey(a, d);
    if (key == null) {
      return noRequest(a, d);
    }
    Resource cap = a.getPendingAsk(key, ResourceRequest.ANY).getPerAllocationResource();
    Protocol.Refused refused = roomRefusal(a, node, cap);
    if (refused != null) {
      return refused;
    }
    NodeType type = localityOf(a, key, node);
    ContainerId id = BuilderUtils.newContainerId(a.getApplicationAttemptId(), a.getNewContainerId());
    Container c = BuilderUtils.newContainer(id, nid, node.getRMNode().getHttpAddress(), cap,
        key.getPriority(), null, key.getAllocationRequestId());
    RMContainer rmc;
    // Under the attempt's monitor (taken before its write lock, the order
    // allocate() uses): the AM pulls new containers under the same monitor, so
    // it cannot see, and release, this one before the node and the id maps
    // know it.
    synchronized (a) {
      ids.bindId(id, d.container);
      rmc = a.allocate(type, node, key, c);
      if (rmc == null) {
        ids.forget(id);
        return Protocol.Refused.retry("the attempt stopped or withdrew its request meanwhile");
      }
      node.allocateContainer(rmc);
      ids.bound(d.container, rmc);
    }
    allocations.incrementAndGet();
    out.add(Protocol.containerStarted(d.container));
    if (AskTranslator.otherSizeWaits(a, d.priority, cap)) {
      asks.markDirty(a.getApplicationAttemptId(), d.priority);
    }
    LOG.debug("sojourn: allocated {} (core {}) on {} for {} at priority {}", id, d.container, nid,
        a.getApplicationAttemptId(), d.priority);
    return null;
  }

  /** NODE_LOCAL, RACK_LOCAL or OFF_SWITCH as YARN books it for this node. */
  private static NodeType localityOf(SojournAppAttempt a, SchedulerRequestKey key, FiCaSchedulerNode node) {
    boolean rack = a.getOutstandingAsksCount(key, node.getRackName()) > 0;
    if (rack && a.getOutstandingAsksCount(key, node.getNodeName()) > 0) {
      return NodeType.NODE_LOCAL;
    }
    return rack ? NodeType.RACK_LOCAL : NodeType.OFF_SWITCH;
  }

  /** Returns null when applied, else why not and whether it could succeed later. */
  private Protocol.Refused preempt(Protocol.Preempt d, long now) {
    if (!d.isKill() && !d.isSuspend()) {
      return Protocol.Refused.retry("unknown preemption mode '" + d.mode + "'");
    }
    if (d.isSuspend()) {
      Protocol.Refused off = suspensions.refuseIfRejecting(yarn.getPolicy());
      if (off != null) {
        return off;
      }
    }
    RMContainer rmc = ids.container(d.container);
    if (rmc == null) {
      return Protocol.Refused.never("container " + d.container + " is gone");
    }
    SojournAppAttempt a = yarn.getCurrentAttemptForContainer(rmc.getContainerId());
    if (a == null) {
      return Protocol.Refused.never("the application of container " + d.container + " is gone");
    }
    if (d.isSuspend() && suspensions.byAgent()) {
      return suspensions.suspend(rmc, a, d.container, now);
    }
    Protocol.Refused refused = kills.preempt(rmc, a, d.isSuspend(), now);
    if (refused == null && d.isSuspend()) {
      suspensions.countKilled(); // suspend=kill
    }
    return refused;
  }

  /** Returns null when applied, else why not and whether it could succeed later. */
  private Protocol.Refused resume(Protocol.Resume d) {
    RMContainer rmc = ids.container(d.container);
    if (rmc == null) {
      return Protocol.Refused.never("container " + d.container + " is gone");
    }
    return suspensions.resume(rmc, d.container, kills);
  }

  long allocations() {
    return allocations.get();
  }

  long rejections() {
    return rejections.get();
  }
}
