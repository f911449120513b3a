package org.sojourn.yarn;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerState;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applications and their attempts in YARN's books, and what the core learns
 * of them. An application is admitted to a queue (it exists, is a leaf, and
 * with {@code yarn.acl.enable} the user may submit to it) or rejected with
 * the reason in its diagnostics. Each attempt gets a core id and goes to the
 * core as {@code AppAdded}, and leaves it as {@code AppRemoved} (its
 * containers killed, unless a work-preserving AM restart keeps them).
 *
 * <p>Containers the core did not place reach it here as
 * {@code ContainerRecovered} ({@link #recoverInCore}): those a NodeManager
 * reports after an RM restart or fail-over, those a restarted AM keeps, and
 * every live one when the core is rebuilt.
 *
 * <p>Locking: runs under {@link CoreChannel#lock} (YARN's events, the rebuild).
 */
final class Applications {
  private static final Logger LOG = LoggerFactory.getLogger(SojournScheduler.class);

  private final SojournScheduler yarn;
  private final CoreIds ids;
  private final PendingEvents pending;
  private final AskTranslator asks;
  private final Suspensions suspensions;
  /** Containers handed to the core that it had not placed (recovered, kept, re-sent). */
  private final AtomicLong recovered = new AtomicLong();

  Applications(SojournScheduler yarn, CoreIds ids, PendingEvents pending, AskTranslator asks,
      Suspensions suspensions) {
    this.yarn = yarn;
    this.ids = ids;
    this.pending = pending;
    this.asks = asks;
    this.suspensions = suspensions;
  }

  private Map<ApplicationId, SchedulerApplication<SojournAppAttempt>> applications() {
    return yarn.getSchedulerApplications();
  }

  /** APP_ADDED: admits the application to its queue, or rejects it with the reason. */
  void add(ApplicationId appId, String queueName, String user, boolean recovering) {
    RMContext rmContext = yarn.context();
    QueueTree tree = yarn.queues();
    Placement.Result placed = yarn.settings().placement.place(tree, queueName, user, recovering);
    SojournQueue q = placed.queue;
    String why = placed.why;
    if (placed.create != null) {
      try {
        q = yarn.createLeaf(placed.create);
        LOG.info("sojourn: created leaf queue {} for application {} (rule {})", placed.create, appId,
            placed.rule);
      } catch (IllegalArgumentException e) {
        why = e.getMessage();
      }
    }
    if (q != null && !recovering && YarnConfiguration.isAclEnabled(yarn.getConf())) {
      UserGroupInformation ugi = UserGroupInformation.createRemoteUser(user);
      if (!q.hasAccess(QueueACL.SUBMIT_APPLICATIONS, ugi) && !q.hasAccess(QueueACL.ADMINISTER_QUEUE, ugi)) {
        why = "user " + user + " may not submit applications to queue " + q.getPath();
      }
    }
    RMApp rmApp = rmContext.getRMApps().get(appId);
    if (why == null && !recovering && rmApp != null) {
      try {
        AppTags.parse(rmApp.getApplicationTags());
      } catch (IllegalArgumentException e) {
        why = e.getMessage();
      }
    }
    if (why != null) {
      LOG.warn("sojourn: rejecting application {}: {}", appId, why);
      rmContext.getDispatcher().getEventHandler().handle(
          new RMAppEvent(appId, RMAppEventType.APP_REJECTED, "Sojourn: " + why));
      return;
    }
    if (rmApp != null && !q.getPath().equals(queueName)) {
      // As FairScheduler does: the RM's app (web UI, REST, `yarn application
      // -list`, the state store) shows the queue it runs in.
      rmApp.setQueue(q.getPath());
    }
    Priority prio = rmApp == null ? null : rmApp.getApplicationPriority();
    boolean unmanaged = isUnmanaged(rmApp);
    SchedulerApplication<SojournAppAttempt> app = Compat.newApplication(q, user, prio, unmanaged);
    applications().put(appId, app);
    q.addApp(appId);
    Compat.submitApp(q.getMetrics(), user, unmanaged);
    LOG.info("sojourn: accepted application {} of {} in queue {} (asked for '{}', rule {}; {} applications)",
        appId, user, q.getPath(), queueName, placed.rule, applications().size());
    if (!recovering) {
      rmContext.getDispatcher().getEventHandler().handle(
          new RMAppEvent(appId, RMAppEventType.APP_ACCEPTED));
    }
  }

  /** APP_ATTEMPT_ADDED: a new attempt, under a new core id (with the kept containers on an AM restart). */
  void addAttempt(ApplicationAttemptId attemptId, boolean transferState, boolean recovering) {
    RMContext rmContext = yarn.context();
    SchedulerApplication<SojournAppAttempt> app = applications().get(attemptId.getApplicationId());
    if (app == null) {
      LOG.warn("sojourn: attempt {} of an unknown application", attemptId);
      return;
    }
    SojournQueue q = (SojournQueue) app.getQueue();
    int coreId = ids.newApp();
    SojournAppAttempt attempt = new SojournAppAttempt(attemptId, app.getUser(), q,
        q.getAbstractUsersManager(), rmContext, coreId, yarn::headroom);
    if (transferState) {
      attempt.transferStateFromPreviousAttempt(app.getCurrentAppAttempt());
    }
    app.setCurrentAppAttempt(attempt);
    ids.addApp(attempt);
    RMApp rmApp = rmContext.getRMApps().get(attemptId.getApplicationId());
    attempt.setTaskEstimateMs(tagsOf(rmApp).taskMs);
    Compat.submitAppAttempt(q.getMetrics(), app.getUser(), isUnmanaged(rmApp));
    pending.add(appAdded(attempt));
    LOG.info("sojourn: added attempt {} (core app {}) of {}", attemptId, coreId, app.getUser());
    if (transferState) {
      // Work-preserving AM restart: the previous attempt's running containers
      // now belong to this one. The core dropped them with the old attempt.
      // (One the agent holds suspended comes back running: recoverInCore.)
      for (RMContainer c : attempt.getLiveContainers()) {
        recoverInCore(c, attempt);
      }
    }
    if (!recovering) {
      rmContext.getDispatcher().getEventHandler().handle(
          new RMAppAttemptEvent(attemptId, RMAppAttemptEventType.ATTEMPT_ADDED));
    }
  }

  /**
   * The core's AppAdded for a live attempt: its app's name and priority, queue and user,
   * and the deadline and value of its {@link AppTags}.
   */
  ObjectNode appAdded(SojournAppAttempt a) {
    RMApp rmApp = yarn.context().getRMApps().get(a.getApplicationId());
    int prio = rmApp != null && rmApp.getApplicationPriority() != null
        ? rmApp.getApplicationPriority().getPriority() : 0;
    AppTags tags = tagsOf(rmApp);
    Long deadline = rmApp == null ? null
        : tags.deadlineInCoreTime(rmApp.getSubmitTime(), System.currentTimeMillis(), yarn.now());
    return Protocol.appAdded(a.coreId(), rmApp == null ? "" : rmApp.getName(),
        ((SojournQueue) a.getQueue()).getPath(), a.getUser(), prio, deadline, tags.value);
  }

  /** The app's {@link AppTags}; none if its tags no longer parse (checked at submission). */
  private static AppTags tagsOf(RMApp rmApp) {
    if (rmApp == null) {
      return AppTags.NONE;
    }
    try {
      return AppTags.parse(rmApp.getApplicationTags());
    } catch (IllegalArgumentException e) {
      // Admitted before (a recovered app the RM once took): it runs without them.
      LOG.warn("sojourn: application {} runs without its sojourn tags: {}", rmApp.getApplicationId(),
          e.getMessage());
      return AppTags.NONE;
    }
  }

  private static boolean isUnmanaged(RMApp app) {
    return app != null && app.getApplicationSubmissionContext() != null
        && app.getApplicationSubmissionContext().getUnmanagedAM();
  }

  /** APP_REMOVED: the application leaves its queue. */
  void done(ApplicationId appId, RMAppState finalState) {
    SchedulerApplication<SojournAppAttempt> app = applications().get(appId);
    if (app == null) {
      LOG.warn("sojourn: unknown application {} finished", appId);
      return;
    }
    SojournQueue q = (SojournQueue) app.getQueue();
    q.getAbstractUsersManager().deactivateApplication(app.getUser(), appId);
    app.stop(finalState);
    applications().remove(appId);
    q.removeApp(appId);
  }

  /** APP_ATTEMPT_REMOVED: its containers end (unless kept) and the core forgets it. */
  void doneAttempt(ApplicationAttemptId attemptId, RMAppAttemptState finalState, boolean keepContainers) {
    SojournAppAttempt attempt = yarn.getApplicationAttempt(attemptId);
    if (attempt == null || !attempt.getApplicationAttemptId().equals(attemptId)) {
      LOG.warn("sojourn: unknown attempt {} finished", attemptId);
      return;
    }
    for (RMContainer c : attempt.getLiveContainers()) {
      if (keepContainers && c.getState() == RMContainerState.RUNNING) {
        continue; // work-preserving AM restart keeps it
      }
      yarn.completedContainer(c, SchedulerUtils.createAbnormalContainerStatus(c.getContainerId(),
          SchedulerUtils.COMPLETED_APPLICATION), RMContainerEventType.KILL);
    }
    attempt.stop(finalState);
    ids.removeApp(attempt.coreId());
    asks.forget(attemptId);
    pending.add(Protocol.appRemoved(attempt.coreId()));
  }

  /**
   * Gives the core a live container of {@code a} it does not hold, under the
   * core id the shim already maps it to or a new one past every id the core
   * has used. Its phase comes from its priority.
   *
   * <p>It always goes as running. One the agent holds suspended (kept by a
   * restarted AM, or re-sent to a rebuilt core; after an RM restart the list
   * is empty anyway) is taken off the list, and the agent continues it: the
   * policies that suspend (hfsp, kairos) resume only containers they placed
   * themselves, so one handed to the core as suspended stayed paused for
   * good. Its node may then hold more vcores than it has, in YARN's books and
   * the core, until enough of its containers end (as after an RM restart).
   */
  void recoverInCore(RMContainer rmc, SojournAppAttempt a) {
    ContainerId id = rmc.getContainerId();
    Integer node = ids.node(rmc.getAllocatedNode());
    if (node == null || rmc.getState() == RMContainerState.COMPLETED || rmc.getState() == RMContainerState.KILLED
        || rmc.getState() == RMContainerState.RELEASED) {
      return;
    }
    long cid = ids.recoveredId(rmc);
    int prio = rmc.getAllocatedSchedulerKey().getPriority().getPriority();
    String phase = rmc.isAMContainer() ? "am" : asks.phaseOf(a, prio);
    suspensions.release(rmc);
    pending.add(Protocol.containerRecovered(cid, a.coreId(), node, prio, rmc.getAllocatedResource(), phase,
        false));
    recovered.incrementAndGet();
    LOG.info("sojourn: {} of {} on {} goes to the core as container {} (recovered)", id,
        a.getApplicationAttemptId(), rmc.getAllocatedNode(), cid);
  }

  /** Containers handed to the core that it had not placed. */
  long recovered() {
    return recovered.get();
  }
}
