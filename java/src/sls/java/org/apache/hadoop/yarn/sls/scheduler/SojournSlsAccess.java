package org.apache.hadoop.yarn.sls.scheduler;

import com.codahale.metrics.Timer;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEventType;

/**
 * Sojourn's door into SLS's package-private metrics API (Hadoop 3.3.x).
 *
 * <p>SLS's own wrappers (SLSFairScheduler, SLSCapacityScheduler) live in this package and
 * call {@link SchedulerMetrics}'s package-private methods (init, timers, counters,
 * tearDown). {@code org.sojourn.yarn.sls.SLSSojournScheduler} cannot, so this class, in
 * Sojourn's own jar but in SLS's package, forwards to them. It adds no behaviour.
 */
public final class SojournSlsAccess {
  private SojournSlsAccess() {
  }

  public static SchedulerMetrics newMetrics(Configuration conf, Class<?> schedulerClass)
      throws ClassNotFoundException {
    return SchedulerMetrics.getInstance(conf, schedulerClass);
  }

  public static void init(SchedulerMetrics m, ResourceScheduler scheduler, Configuration conf)
      throws Exception {
    m.init(scheduler, conf);
  }

  public static void tearDown(SchedulerMetrics m) throws Exception {
    m.tearDown();
  }

  public static void markRunning(SchedulerMetrics m) {
    if (!m.isRunning()) {
      m.setRunning(true);
    }
  }

  public static Timer allocateTimer(SchedulerMetrics m) {
    return m.getSchedulerAllocateTimer();
  }

  public static void countAllocate(SchedulerMetrics m) {
    m.increaseSchedulerAllocationCounter();
  }

  public static Timer handleTimer(SchedulerMetrics m) {
    return m.getSchedulerHandleTimer();
  }

  public static Timer handleTimer(SchedulerMetrics m, SchedulerEventType type) {
    return m.getSchedulerHandleTimer(type);
  }

  public static void countHandle(SchedulerMetrics m, SchedulerEventType type) {
    m.increaseSchedulerHandleCounter(type);
  }

  public static void queueUpdate(SchedulerMetrics m, Resource pending, Resource allocated,
      String queue) {
    m.updateQueueMetrics(pending, allocated, queue);
  }

  /** The container updates a NODE_UPDATE wrapper pulled once from the node. */
  public static java.util.List<org.apache.hadoop.yarn.server.resourcemanager.rmnode.UpdatedContainerInfo>
      containerUpdates(NodeUpdateSchedulerEventWrapper e) {
    return ((RMNodeWrapper) e.getRMNode()).getContainerUpdates();
  }

  public static void queueRelease(SchedulerMetrics m, Resource released, String queue) {
    m.updateQueueMetricsByRelease(released, queue);
  }
}
