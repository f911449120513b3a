package org.sojourn.yarn;

/**
 * Sojourn's state over JMX, registered as
 * {@code Hadoop:service=ResourceManager,name=SojournScheduler}; the RM's
 * {@code /jmx?qry=Hadoop:service=ResourceManager,name=SojournScheduler}
 * serves it as JSON (REST {@code /ws/v1/cluster/scheduler} answers only for
 * Hadoop's own schedulers).
 */
public interface SojournSchedulerMXBean {
  /** The running policy. */
  String getPolicy();

  /** The policy's and the mirror's state, with the shim's counters (JSON). */
  String getState();

  /** Leaf queues, by full path. */
  String[] getLeafQueues();

  long getAllocations();

  long getRejections();

  long getPreemptionKills();
}
