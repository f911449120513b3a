package org.sojourn.yarn;

import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceOption;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ClusterNodeTracker;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.util.resource.Resources;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * NodeManagers in YARN's books and the core's. A node joins (a reconnect
 * first forgets the old incarnation), leaves with its containers lost, or
 * changes its capacity, and the core hears each as an event. The headroom
 * every attempt and queue sees follows the cluster's free resources
 * ({@link #updateHeadroom}).
 *
 * <p>Locking: runs under {@link CoreChannel#lock} (YARN's events).
 */
final class ClusterNodes {
  private static final Logger LOG = LoggerFactory.getLogger(SojournScheduler.class);

  private final SojournScheduler yarn;
  private final CoreIds ids;
  private final PendingEvents pending;
  /** {@code yarn.scheduler.include-port-in-node-name}, read at service init. */
  private volatile boolean usePortForNodeName;
  /**
   * What the cluster has free as of the last change: every attempt's headroom,
   * read when its AM asks ({@link SojournAppAttempt#getHeadroom}).
   */
  private volatile Resource headroom = Resources.none();
  /** The queue tree the queues' available resources were last set over. */
  private QueueTree headroomTree;

  ClusterNodes(SojournScheduler yarn, CoreIds ids, PendingEvents pending) {
    this.yarn = yarn;
    this.ids = ids;
    this.pending = pending;
  }

  void usePortForNodeName(boolean use) {
    this.usePortForNodeName = use;
  }

  private ClusterNodeTracker<FiCaSchedulerNode> tracker() {
    return yarn.getNodeTracker();
  }

  void add(RMNode rmNode) {
    NodeId nid = rmNode.getNodeID();
    if (ids.node(nid) != null) {
      remove(rmNode); // a reconnect: forget the old incarnation first
    }
    FiCaSchedulerNode node = new FiCaSchedulerNode(rmNode, usePortForNodeName);
    tracker().addNode(node);
    int id = ids.addNode(nid, node.getNodeName());
    pending.add(Protocol.nodeAdded(id, nid.toString(), rmNode.getRackName(), rmNode.getNodeLabels(),
        rmNode.getTotalCapability()));
    LOG.info("sojourn: added node {} (core {}), capacity {}, cluster {}", nid, id,
        rmNode.getTotalCapability(), yarn.getClusterResource());
    updateHeadroom();
  }

  void remove(RMNode rmNode) {
    NodeId nid = rmNode.getNodeID();
    FiCaSchedulerNode node = tracker().getNode(nid);
    if (node != null) {
      for (RMContainer c : node.getCopiedListOfRunningContainers()) {
        yarn.completedContainer(c, SchedulerUtils.createAbnormalContainerStatus(c.getContainerId(),
            SchedulerUtils.LOST_CONTAINER), RMContainerEventType.KILL);
      }
      tracker().removeNode(nid);
    }
    Integer id = ids.removeNode(nid, node == null ? null : node.getNodeName());
    if (id != null) {
      pending.add(Protocol.nodeRemoved(id));
      LOG.info("sojourn: removed node {} (core {})", nid, id);
    }
    updateHeadroom();
  }

  /** An administrator (or the NodeManager) changed the node's capacity. */
  void resourceUpdated(RMNode rmNode, ResourceOption option) {
    yarn.updateNodeResourceInBooks(rmNode, option);
    Integer id = ids.node(rmNode.getNodeID());
    FiCaSchedulerNode n = tracker().getNode(rmNode.getNodeID());
    if (id != null && n != null) {
      pending.add(Protocol.nodeResourceUpdated(id, n.getTotalResource()));
    }
  }

  /** The cluster's free resources as of the last change (shared: do not modify). */
  Resource headroom() {
    return headroom;
  }

  /** Every attempt's headroom and every queue's available resources: what the cluster has free. */
  void updateHeadroom() {
    QueueTree tree = yarn.queues();
    if (tree == null) {
      return;
    }
    Resource used = tree.root().getMetrics().getAllocatedResources();
    Resource avail = Resources.componentwiseMax(
        Resources.subtract(yarn.getClusterResource(), used), Resources.none());
    if (avail.equals(headroom) && tree == headroomTree) {
      return;
    }
    // Published once, not set on every attempt: that loop over every
    // application cost each NODE_UPDATE that placed a container O(apps).
    headroom = avail;
    headroomTree = tree;
    for (SojournQueue q : tree.all()) {
      q.getMetrics().setAvailableResourcesToQueue(avail);
    }
  }
}
