package org.sojourn.yarn;

import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerImpl;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractUsersManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.NodeType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.ContainerRequest;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;
import org.apache.hadoop.yarn.util.resource.Resources;

/**
 * An application attempt as Sojourn keeps it in YARN's books. Its one
 * addition: {@link #allocate} turns a decision of the core into an
 * {@link RMContainer} once YARN's state agrees.
 */
final class SojournAppAttempt extends FiCaSchedulerApp {
  private final int coreId;
  /** What the cluster has free, kept by ClusterNodes for every attempt. */
  private final java.util.function.Supplier<Resource> freeInCluster;
  /** Set once when the attempt is added; read when its asks are translated. */
  private volatile Long taskEstimateMs;

  SojournAppAttempt(ApplicationAttemptId id, String user, SojournQueue queue,
      AbstractUsersManager users, RMContext rmContext, int coreId,
      java.util.function.Supplier<Resource> freeInCluster) {
    super(id, user, queue, users, rmContext);
    this.coreId = coreId;
    this.freeInCluster = freeInCluster;
  }

  /**
   * YARN's headroom for this attempt: what the cluster has free (Sojourn's
   * queues set no limits of their own), read when the AM asks rather than
   * set on every attempt at each change.
   */
  @Override
  public Resource getHeadroom() {
    return Resources.clone(freeInCluster.get());
  }

  /** The id the core knows this attempt by. */
  int coreId() {
    return coreId;
  }

  /** Each task's estimated run time from the job's tags ({@link AppTags}), or null. */
  Long taskEstimateMs() {
    return taskEstimateMs;
  }

  void setTaskEstimateMs(Long ms) {
    taskEstimateMs = ms;
  }

  /**
   * Creates the RMContainer for {@code container}, books it against the
   * request at {@code key}, and starts it. Returns null when the attempt is
   * stopped or no longer wants a container at {@code key} (an AM may lower its
   * asks concurrently through allocate()).
   */
  RMContainer allocate(NodeType type, FiCaSchedulerNode node, SchedulerRequestKey key,
      Container container) {
    writeLock.lock();
    try {
      if (isStopped || getOutstandingAsksCount(key) <= 0) {
        return null;
      }
      RMContainerImpl rmContainer = new RMContainerImpl(container, key, getApplicationAttemptId(),
          node.getNodeID(), appSchedulingInfo.getUser(), rmContext, node.getPartition());
      rmContainer.setQueueName(getQueueName());
      updateAMContainerDiagnostics(AMState.ASSIGNED, null);
      addToNewlyAllocatedContainers(node, rmContainer);
      liveContainers.put(container.getId(), rmContainer);
      ContainerRequest request = appSchedulingInfo.allocate(type, node, key, rmContainer);
      attemptResourceUsage.incUsed(node.getPartition(), container.getResource());
      rmContainer.setContainerRequest(request);
      rmContainer.handle(new RMContainerEvent(container.getId(), RMContainerEventType.START));
      return rmContainer;
    } finally {
      writeLock.unlock();
    }
  }
}
