package org.sojourn.yarn.sls;

import org.apache.hadoop.yarn.sls.scheduler.SchedulerMetrics;

/**
 * SLS metrics for Sojourn: SLS's common set (cluster, JVM, allocate/handle timers and
 * counters, per-queue allocated/pending). SLS picks the metrics class from its
 * configuration key {@code org.sojourn.yarn.SojournScheduler}; SLSSojournScheduler sets
 * that key to this class when it is absent.
 */
public class SojournSchedulerMetrics extends SchedulerMetrics {
  public SojournSchedulerMetrics() {
    super();
  }
}
