package org.sojourn.yarn;

import java.util.Collection;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;

/**
 * The ids the core knows YARN's objects by: the core speaks in small integers
 * (STYLE.md: ids are newtypes inside Rust, YARN's strings are mapped at the
 * boundary), and this is the boundary.
 *
 * <ul>
 *   <li>Nodes and application attempts get ids from the shim's own counters,
 *   never reused: a reconnecting node or a new attempt is a new id.</li>
 *   <li>Containers get the core's id from its Allocate; one the core did not
 *   place (recovered after an RM restart, kept by a restarted AM, re-sent on a
 *   rebuild) gets one past every id the core has used
 *   ({@link #recoveredId}).</li>
 *   <li>{@link #nodesOnHost} turns a ResourceRequest's host name into core node
 *   ids (several NodeManagers may share a host).</li>
 * </ul>
 *
 * <p>Locking: every write happens under {@link CoreChannel#lock} (YARN's events,
 * the application of decisions). The maps are concurrent so that other threads
 * may read them without it: the AM progress poller maps its readings
 * ({@link #coreId}), and JMX and tests list the containers.
 */
final class CoreIds {
  private final AtomicInteger nextNode = new AtomicInteger(1);
  private final AtomicInteger nextApp = new AtomicInteger(1);
  private final ConcurrentHashMap<NodeId, Integer> nodeIds = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<Integer, NodeId> nodesById = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Set<Integer>> nodesByHost = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<Integer, SojournAppAttempt> appsById = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<Long, RMContainer> containers = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<ContainerId, Long> coreIdOf = new ConcurrentHashMap<>();
  /** The largest core container id seen: ids the shim gives recovered containers go past it. */
  private final AtomicLong maxCoreId = new AtomicLong();

  // ---- nodes ----------------------------------------------------------------------

  /** A new core id for node {@code nid} on {@code host}. */
  int addNode(NodeId nid, String host) {
    int id = nextNode.getAndIncrement();
    nodeIds.put(nid, id);
    nodesById.put(id, nid);
    nodesByHost.computeIfAbsent(host, h -> new ConcurrentSkipListSet<>()).add(id);
    return id;
  }

  /** Forgets node {@code nid} ({@code host}: its host, or null when unknown); returns its core id, or null. */
  Integer removeNode(NodeId nid, String host) {
    Integer id = nodeIds.remove(nid);
    if (id != null) {
      nodesById.remove(id);
      Set<Integer> onHost = host == null ? null : nodesByHost.get(host);
      if (onHost != null) {
        onHost.remove(id);
      }
    }
    return id;
  }

  /** The core id of node {@code nid}, or null. */
  Integer node(NodeId nid) {
    return nodeIds.get(nid);
  }

  /** The YARN node of core node {@code id}, or null. */
  NodeId node(int id) {
    return nodesById.get(id);
  }

  /** The core ids of the nodes on {@code host} (null or empty: none). */
  Set<Integer> nodesOnHost(String host) {
    return nodesByHost.get(host);
  }

  int nodeCount() {
    return nodeIds.size();
  }

  // ---- application attempts ----------------------------------------------------------

  /** A new core id for an application attempt. */
  int newApp() {
    return nextApp.getAndIncrement();
  }

  void addApp(SojournAppAttempt a) {
    appsById.put(a.coreId(), a);
  }

  void removeApp(int coreId) {
    appsById.remove(coreId);
  }

  /** The attempt the core knows as {@code coreId}, or null. */
  SojournAppAttempt app(int coreId) {
    return appsById.get(coreId);
  }

  Collection<SojournAppAttempt> apps() {
    return appsById.values();
  }

  // ---- containers --------------------------------------------------------------------

  /** The core's id of a YARN container, or null. */
  Long coreId(ContainerId id) {
    return coreIdOf.get(id);
  }

  /** The YARN container of core container {@code cid}, or null. */
  RMContainer container(long cid) {
    return containers.get(cid);
  }

  /** Whether core container {@code cid} is live in the shim's books. */
  boolean isLive(long cid) {
    return containers.containsKey(cid);
  }

  /** The live containers by core id. */
  Map<Long, RMContainer> containers() {
    return containers;
  }

  /**
   * Maps YARN's {@code id} to the core's {@code cid} before YARN has the
   * container ({@link #bound} follows once it does; {@link #forget} undoes it).
   */
  void bindId(ContainerId id, long cid) {
    maxCoreId.accumulateAndGet(cid, Math::max);
    coreIdOf.put(id, cid);
  }

  /** Core container {@code cid} is YARN's {@code rmc}. */
  void bound(long cid, RMContainer rmc) {
    containers.put(cid, rmc);
  }

  /**
   * The core id for {@code rmc}, a container the core may not hold: the one it
   * is mapped to already, else a new one past every id the core has used.
   * The container is mapped to it.
   */
  long recoveredId(RMContainer rmc) {
    Long known = coreIdOf.get(rmc.getContainerId());
    long cid = known != null ? known : maxCoreId.incrementAndGet();
    coreIdOf.put(rmc.getContainerId(), cid);
    containers.put(cid, rmc);
    return cid;
  }

  /** Forgets YARN container {@code id}; returns the core id it had, or null. */
  Long forget(ContainerId id) {
    Long cid = coreIdOf.remove(id);
    if (cid != null) {
      containers.remove(cid);
    }
    return cid;
  }

  /** The container map (core id -> YARN container and state), for tests. */
  String debugContainers() {
    StringBuilder b = new StringBuilder();
    for (Map.Entry<Long, RMContainer> e : new TreeMap<>(containers).entrySet()) {
      b.append(e.getKey()).append('=').append(e.getValue().getContainerId()).append('/')
          .append(e.getValue().getState()).append(' ');
    }
    return b.toString();
  }
}
