package org.sojourn.yarn;

import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Queue;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;

/** The RM APIs whose signatures differ between Hadoop releases: this is the 3.4 form. */
final class Compat {
  private Compat() {}

  static <T extends SojournAppAttempt> SchedulerApplication<T> newApplication(Queue queue,
      String user, Priority priority, boolean unmanagedAM) {
    return priority == null ? new SchedulerApplication<T>(queue, user, unmanagedAM)
        : new SchedulerApplication<T>(queue, user, priority, unmanagedAM);
  }

  static void submitApp(QueueMetrics m, String user, boolean unmanagedAM) {
    m.submitApp(user, unmanagedAM);
  }

  static void submitAppAttempt(QueueMetrics m, String user, boolean unmanagedAM) {
    m.submitAppAttempt(user, unmanagedAM);
  }
}
