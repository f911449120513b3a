package org.sojourn.yarn;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.exceptions.YarnRuntimeException;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.PendingAsk;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.placement.AppPlacementAllocator;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;
import org.apache.hadoop.yarn.util.resource.Resources;

/**
 * YARN's requests as the core's asks. YARN's own {@code AppSchedulingInfo}
 * holds an attempt's requests; the shim never copies them. {@code allocate()}
 * only marks the priorities it touched ({@link #markDirty}), and each entry
 * into the core re-reads the marked ones from YARN's books into
 * {@code AsksUpdated} events ({@link #collectInto}), one {@code Ask} a
 * priority ({@link #askAt}): so the core sees each ask as YARN holds it at
 * that moment, however many allocate() calls came between.
 *
 * <p>Also here: the refusal, before anything is recorded, of what YARN accepts
 * but nothing can serve ({@link #validate}), and the phase (am, map, reduce,
 * other) of a request by its priority ({@link #phaseOf}).
 *
 * <p>Locking: marks come from allocate()'s RPC threads with no scheduler lock
 * ({@code ConcurrentHashMap.compute}, atomic with the collect's
 * {@code remove}, so no mark is lost); {@link #collectInto} runs under
 * {@link CoreChannel#lock}.
 */
final class AskTranslator {
  private final SojournScheduler yarn;
  private final CoreIds ids;
  /** Attempts whose requests changed, with the request priorities touched. */
  private final ConcurrentHashMap<ApplicationAttemptId, Set<Integer>> dirty = new ConcurrentHashMap<>();

  AskTranslator(SojournScheduler yarn, CoreIds ids) {
    this.yarn = yarn;
    this.ids = ids;
  }

  /**
   * Refuses, with a message to the AM, what YARN 3.3 accepts but no scheduler
   * can serve: a negative priority or container count. The whole call is
   * refused before anything of it is recorded, as YARN refuses an invalid
   * resource request.
   */
  static void validate(ApplicationAttemptId attemptId, List<ResourceRequest> ask) {
    for (ResourceRequest r : ask) {
      int prio = r.getPriority() == null ? -1 : r.getPriority().getPriority();
      if (prio < 0) {
        throw new YarnRuntimeException("sojourn: " + attemptId + " asked at priority " + prio
            + " for " + r.getResourceName() + "; request priorities must be 0 or more");
      }
      if (r.getNumContainers() < 0) {
        throw new YarnRuntimeException("sojourn: " + attemptId + " asked for " + r.getNumContainers()
            + " containers at priority " + prio + " on " + r.getResourceName()
            + "; a container count must be 0 or more");
      }
    }
  }

  /** Marks {@code prios} of {@code id} to be re-read at the next entry into the core. */
  void markDirty(ApplicationAttemptId id, Set<Integer> prios) {
    // compute() is atomic with the collect's remove(): no mark is lost.
    dirty.compute(id, (k, v) -> {
      Set<Integer> s = v == null ? new ConcurrentSkipListSet<>() : v;
      s.addAll(prios);
      return s;
    });
  }

  /** Marks one priority of {@code id}. */
  void markDirty(ApplicationAttemptId id, int priority) {
    Set<Integer> p = new ConcurrentSkipListSet<>();
    p.add(priority);
    markDirty(id, p);
  }

  /** Marks every priority {@code a} has asked at (a fresh core must learn them all). */
  void markAll(SojournAppAttempt a) {
    Set<Integer> prios = new HashSet<>();
    for (SchedulerRequestKey k : a.getSchedulerKeys()) {
      prios.add(k.getPriority().getPriority());
    }
    markDirty(a.getApplicationAttemptId(), prios);
  }

  /** Drops the marks of an attempt that ended. */
  void forget(ApplicationAttemptId id) {
    dirty.remove(id);
  }

  /** Whether no ask waits to be re-read. */
  boolean isEmpty() {
    return dirty.isEmpty();
  }

  /** Re-reads the marked asks from YARN's AppSchedulingInfo into AsksUpdated events. */
  void collectInto(List<ObjectNode> batch) {
    for (ApplicationAttemptId id : new ArrayList<>(dirty.keySet())) {
      Set<Integer> prios = dirty.remove(id);
      SojournAppAttempt a = yarn.getApplicationAttempt(id);
      if (prios == null || a == null || !a.getApplicationAttemptId().equals(id) || a.isStopped()
          || ids.app(a.coreId()) != a) {
        continue;
      }
      ArrayNode asks = Protocol.array();
      for (int p : prios) {
        asks.add(askAt(a, p));
      }
      batch.add(Protocol.asksUpdated(a.coreId(), asks));
    }
  }

  /**
   * The core's Ask at one priority: ANY count, node and rack entries, summed
   * over the keys (allocationRequestIds) of one container size. The core
   * keeps one ask per priority, so when an AM asks for two sizes at one
   * priority the keys of the first size (lowest allocationRequestId) are
   * sent, and the next size once those are served (the allocation marks the
   * priority again when {@link #otherSizeWaits}). Counts are summed in a long
   * and capped at Integer.MAX_VALUE: two requests near the int limit do not
   * wrap.
   */
  private ObjectNode askAt(SojournAppAttempt a, int priority) {
    long count = 0;
    Resource cap = null;
    boolean relax = true;
    String label = null;
    Map<Integer, Integer> byNode = new TreeMap<>();
    Map<String, Integer> byRack = new TreeMap<>();
    for (SchedulerRequestKey k : a.getSchedulerKeys()) {
      if (k.getPriority().getPriority() != priority) {
        continue;
      }
      PendingAsk any = a.getPendingAsk(k, ResourceRequest.ANY);
      if (any.getCount() <= 0) {
        continue;
      }
      if (cap == null) {
        cap = any.getPerAllocationResource();
      } else if (!cap.equals(any.getPerAllocationResource())) {
        continue; // another size: sent once this one is served
      }
      count += any.getCount();
      AppPlacementAllocator<FiCaSchedulerNode> pa = a.getAppSchedulingInfo().getAppPlacementAllocator(k);
      if (pa == null) {
        continue;
      }
      for (Map.Entry<String, ResourceRequest> e : pa.getResourceRequests().entrySet()) {
        ResourceRequest rr = e.getValue();
        String name = e.getKey();
        if (ResourceRequest.ANY.equals(name)) {
          relax = rr.getRelaxLocality();
          label = rr.getNodeLabelExpression();
          continue;
        }
        int n = rr.getNumContainers();
        if (n <= 0) {
          continue;
        }
        Set<Integer> onHost = ids.nodesOnHost(name);
        if (onHost != null && !onHost.isEmpty()) {
          for (int id : onHost) {
            byNode.merge(id, n, Integer::sum);
          }
        } else if (name.startsWith("/")) {
          byRack.merge(name, n, Integer::sum);
        }
      }
    }
    ArrayNode loc = Protocol.array();
    for (Map.Entry<Integer, Integer> e : byNode.entrySet()) {
      loc.add(Protocol.nodeLocality(e.getKey(), e.getValue()));
    }
    for (Map.Entry<String, Integer> e : byRack.entrySet()) {
      loc.add(Protocol.rackLocality(e.getKey(), e.getValue()));
    }
    String phase = phaseOf(a, priority);
    // The job's sojourn.task-duration tag (AppTags) describes its tasks, not its AM.
    Long est = "am".equals(phase) ? null : a.taskEstimateMs();
    return Protocol.ask(priority, cap == null ? Resources.none() : cap,
        (int) Math.min(count, Integer.MAX_VALUE), phase, loc, relax, label, est);
  }

  /** Whether {@code a} also asks at {@code priority} for containers of another size than {@code cap}. */
  static boolean otherSizeWaits(SojournAppAttempt a, int priority, Resource cap) {
    for (SchedulerRequestKey k : a.getSchedulerKeys()) {
      if (k.getPriority().getPriority() == priority) {
        PendingAsk pa = a.getPendingAsk(k, ResourceRequest.ANY);
        if (pa.getCount() > 0 && !cap.equals(pa.getPerAllocationResource())) {
          return true;
        }
      }
    }
    return false;
  }

  /** MapReduce's phases by request priority; the AM request before the AM runs. */
  String phaseOf(SojournAppAttempt a, int priority) {
    RMApp app = yarn.context().getRMApps().get(a.getApplicationId());
    if (app == null) {
      return "other";
    }
    RMAppAttempt current = app.getCurrentAppAttempt();
    boolean unmanaged = app.getApplicationSubmissionContext() != null
        && app.getApplicationSubmissionContext().getUnmanagedAM();
    int amPriority = 0;
    if (app.getAMResourceRequests() != null && !app.getAMResourceRequests().isEmpty()) {
      amPriority = app.getAMResourceRequests().get(0).getPriority().getPriority();
    }
    if (!unmanaged && current != null && current.getMasterContainer() == null
        && priority == amPriority) {
      return "am";
    }
    if ("MAPREDUCE".equalsIgnoreCase(app.getApplicationType())) {
      if (priority == 20 || priority == 5) {
        return "map";
      }
      if (priority == 10) {
        return "reduce";
      }
    }
    return "other";
  }
}
