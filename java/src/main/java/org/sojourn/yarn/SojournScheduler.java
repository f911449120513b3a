package org.sojourn.yarn;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import javax.management.ObjectName;
import org.apache.hadoop.conf.Configurable;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.metrics2.util.MBeans;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerExitStatus;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.QueueUserACLInfo;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceOption;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.api.records.SchedulingRequest;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.exceptions.YarnRuntimeException;
import org.apache.hadoop.yarn.server.api.protocolrecords.NMContainerStatus;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.nodelabels.RMNodeLabelsManager;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.RMStateStore.RMState;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractYarnScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Allocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ContainerUpdates;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAttemptAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAttemptRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.ContainerExpiredSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.ContainerPreemptEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeResourceUpdateSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeUpdateSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.ReleaseContainerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEvent;
import org.apache.hadoop.yarn.util.resource.DominantResourceCalculator;
import org.apache.hadoop.yarn.util.resource.ResourceCalculator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sojourn's YARN scheduler: a thin shim that keeps YARN's books (nodes,
 * attempts, RMContainers, queue metrics, ACLs) and leaves every choice to the
 * Rust core behind {@link Native}.
 *
 * <p>How it runs:
 * <ul>
 *   <li>{@link #allocate} (up to 50 RPC threads) only records: it updates the
 *   attempt's requests in YARN's own {@code AppSchedulingInfo}, marks the
 *   touched priorities dirty ({@link AskTranslator}), and returns containers
 *   placed earlier plus any preemption request.</li>
 *   <li>{@link #handle} (the dispatcher thread) and the timer thread enter the
 *   core under one lock, one step per entry ({@link CoreChannel}): what waits
 *   ({@link PendingEvents}), the dirty asks re-read from YARN, then the
 *   heartbeat, in one batch. Each decision is checked against YARN's state
 *   and applied, or sent back as {@code Rejected} so the core's mirror never
 *   drifts ({@link DecisionApplier}).</li>
 *   <li>Kill preemption follows YARN's path ({@link KillPreemption}): the
 *   container is marked, the AM sees it in a PreemptionMessage on its next
 *   allocate, and it is killed after
 *   {@code yarn.scheduler.sojourn.preemption.grace-ms}.</li>
 *   <li>Suspend decisions ({@link Suspensions}, {@code yarn.scheduler.sojourn.suspend}):
 *   with {@code agent} the container stays RUNNING in YARN's books and is
 *   listed in the MXBean attribute {@code SuspendedContainers}, which the
 *   NodeManagers' {@code org.sojourn.yarn.nm.SuspendingContainerExecutor}
 *   polls and pauses (SIGSTOP) or resumes (SIGCONT); with {@code kill} a
 *   suspend is carried out as kill preemption; with {@code reject} it goes
 *   back to the core.</li>
 * </ul>
 *
 * <p>This class is what YARN sees: the AbstractYarnScheduler overrides (the
 * lifecycle, YARN's events, allocate, completions, queues), the MXBean, and
 * the test hooks. It keeps YARN's books and turns what happens in them into
 * events ({@link CoreIds} maps the ids); the classes above do the rest. Every
 * one of them that touches the core or the id maps runs under
 * {@link CoreChannel#lock}, the one lock, as do YARN's events here.
 */
@SuppressWarnings("unchecked")
public class SojournScheduler extends AbstractYarnScheduler<SojournAppAttempt, FiCaSchedulerNode>
    implements Configurable, SojournSchedulerMXBean {
  private static final Logger LOG = LoggerFactory.getLogger(SojournScheduler.class);

  private final ResourceCalculator rc = new DominantResourceCalculator();
  private final long startNanos = System.nanoTime();

  private volatile Configuration conf;
  private volatile SojournConfig settings;
  private volatile QueueTree queues;
  private volatile String activePolicy;

  private final CoreIds ids = new CoreIds();
  private final PendingEvents pending = new PendingEvents(ids, this::now);
  private final AskTranslator asks = new AskTranslator(this, ids);
  private final Suspensions suspensions = new Suspensions(this::now);
  private final KillPreemption kills = new KillPreemption(this, () -> settings.graceMs);
  private final DecisionApplier decisions = new DecisionApplier(this, ids, asks, suspensions, kills);
  private final Applications apps = new Applications(this, ids, pending, asks, suspensions);
  private final CoreChannel channel = new CoreChannel(this, ids, pending, asks, decisions, apps);
  private final ClusterNodes nodes = new ClusterNodes(this, ids, pending);
  /** The one lock the core is entered under ({@link CoreChannel#lock}). */
  private final Object coreLock = channel.lock;

  private ScheduledExecutorService ticker;
  private ObjectName mbean;
  /** Reads task progress from MapReduce AMs; null when off. */
  private MapReduceProgress amProgress;

  public SojournScheduler() {
    super(SojournScheduler.class.getName());
  }

  // ---- lifecycle ------------------------------------------------------------------

  @Override
  public void serviceInit(Configuration configuration) throws Exception {
    setConf(configuration);
    validateAllocationLimits(configuration);
    this.applications = new ConcurrentSkipListMap<>();
    this.minimumAllocation = super.getMinimumAllocation();
    initMaximumResourceCapability(super.getMaximumAllocation());
    nodes.usePortForNodeName(configuration.getBoolean(
        YarnConfiguration.RM_SCHEDULER_INCLUDE_PORT_IN_NODE_NAME,
        YarnConfiguration.DEFAULT_RM_SCHEDULER_USE_PORT_FOR_NODE_NAME));
    SojournConfig s = SojournConfig.read(configuration);
    this.queues = QueueTree.build(s.queues, null, configuration, this::getClusterResource);
    synchronized (coreLock) {
      channel.start(s);
    }
    this.settings = s;
    this.activePolicy = s.policy;
    suspensions.start(s.suspend, configuration);
    LOG.info("Sojourn scheduler: policy {} {}, queues {}, placement {}, preemption grace {} ms, "
        + "at most {} container(s) per node heartbeat, native library from {}", s.policy, s.params,
        queues.leafPaths(), s.placement.describe(), s.graceMs,
        s.maxAssignments < 0 ? "any number of" : s.maxAssignments, Native.loadedFrom());
    LOG.info(Suspensions.modeLine(s.suspend, s.graceMs));
    super.serviceInit(configuration);
    schedulingMonitorManager.initialize(rmContext, configuration);
  }

  private static void validateAllocationLimits(Configuration c) {
    int minMem = c.getInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB,
        YarnConfiguration.DEFAULT_RM_SCHEDULER_MINIMUM_ALLOCATION_MB);
    int maxMem = c.getInt(YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_MB,
        YarnConfiguration.DEFAULT_RM_SCHEDULER_MAXIMUM_ALLOCATION_MB);
    if (minMem <= 0 || minMem > maxMem) {
      throw new YarnRuntimeException("sojourn: invalid allocation limits: "
          + YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB + "=" + minMem + ", "
          + YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_MB + "=" + maxMem
          + " (both positive, min no larger than max)");
    }
  }

  @Override
  public void serviceStart() throws Exception {
    super.serviceStart();
    final long tick = settings.tickMs;
    ticker = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "SojournScheduler-timer");
      t.setDaemon(true);
      return t;
    });
    ticker.scheduleWithFixedDelay(this::tick, tick, tick, TimeUnit.MILLISECONDS);
    long every = settings.amProgressMs;
    if (every > 0) {
      amProgress = new MapReduceProgress(rmContext, pending::containerProgress, every);
      amProgress.start();
      LOG.info("sojourn: reading running MapReduce tasks' progress from their AMs' REST API every {} ms "
          + "for policy {} ({}; the ProgressReports attribute counts the readings passed on)", every,
          activePolicy, SojournConfig.AM_PROGRESS_MS);
    }
    mbean = MBeans.register("ResourceManager", "SojournScheduler", this);
  }

  @Override
  public void serviceStop() throws Exception {
    if (mbean != null) {
      MBeans.unregister(mbean);
      mbean = null;
    }
    if (amProgress != null) {
      amProgress.stop();
      amProgress = null;
    }
    if (ticker != null) {
      ticker.shutdownNow();
      ticker.awaitTermination(5, TimeUnit.SECONDS);
    }
    synchronized (coreLock) {
      channel.close();
    }
    super.serviceStop();
  }

  @Override
  public void setConf(Configuration configuration) {
    this.conf = configuration;
  }

  @Override
  public Configuration getConf() {
    return conf;
  }

  @Override
  public void setRMContext(RMContext context) {
    this.rmContext = context;
  }

  /**
   * {@code yarn rmadmin -refreshQueues}: re-reads the queue tree, ACLs and the
   * shim's settings. A changed policy or parameter set is validated now (an
   * invalid one fails the refresh, naming the key) and takes effect at the next
   * RM start: the running core cannot adopt the containers it did not place.
   *
   * <p>The Sojourn keys are read from yarn-site.xml again, through the RM's
   * {@code ConfigurationProvider} (see {@link SojournConfig#withSiteFile}): the
   * AdminService hands its in-memory configuration, loaded at start-up, so
   * without this an edited yarn-site.xml would change nothing
   * (CapacityScheduler re-reads capacity-scheduler.xml the same way).
   */
  @Override
  public void reinitialize(Configuration handed, RMContext context) throws IOException {
    Configuration configuration = SojournConfig.withSiteFile(handed, context != null ? context : rmContext);
    synchronized (coreLock) {
      SojournConfig next;
      try {
        next = SojournConfig.read(configuration);
      } catch (IllegalArgumentException e) {
        throw new IOException(e.getMessage(), e);
      }
      QueueTree tree = QueueTree.build(next.queues, queues, configuration, this::getClusterResource);
      SojournConfig cur = settings;
      if (!next.policy.equals(cur.policy) || !next.params.equals(cur.params) || next.seed != cur.seed
          || next.maxAssignments != cur.maxAssignments) {
        try (Native probe = channel.open(next, null)) {
          LOG.warn("sojourn: policy settings changed ({} {}, {} {} -> {} {}, {} {}); they are valid and take "
              + "effect when the ResourceManager restarts", cur.policy, cur.params, SojournConfig.MAX_ASSIGNMENTS,
              cur.maxAssignments, next.policy, next.params, SojournConfig.MAX_ASSIGNMENTS, next.maxAssignments);
        } catch (IllegalArgumentException e) {
          throw new IOException(e.getMessage(), e);
        }
      }
      if (next.amProgressMs != cur.amProgressMs) {
        LOG.warn("sojourn: {} changed ({} -> {} ms); it takes effect when the ResourceManager restarts",
            SojournConfig.AM_PROGRESS_MS, cur.amProgressMs, next.amProgressMs);
      }
      if (!next.suspend.equals(suspensions.mode())) {
        LOG.warn("sojourn: {} changed ({} -> {}); it takes effect when the ResourceManager restarts",
            SojournConfig.SUSPEND, suspensions.mode(), next.suspend);
      }
      this.queues = tree;
      this.settings = next;
      LOG.info("Sojourn scheduler reinitialized: queues {}, preemption grace {} ms",
          tree.leafPaths(), next.graceMs);
    }
    super.reinitialize(configuration, context);
  }

  /** The settings in force (a refresh replaces them). */
  SojournConfig settings() {
    return settings;
  }

  RMContext context() {
    return rmContext;
  }

  /** The queue tree in force (a refresh replaces it). */
  QueueTree queues() {
    return queues;
  }

  /**
   * Creates the leaf {@code path} under a parent that creates leaves, for an
   * app being placed (under the core lock, as placement runs).
   *
   * @throws IllegalArgumentException why it cannot be created
   */
  SojournQueue createLeaf(String path) {
    synchronized (coreLock) {
      QueueTree next = queues.withCreatedLeaf(path, getConfig(), this::getClusterResource);
      this.queues = next;
      return next.find(path);
    }
  }

  /** The core's clock: ms since this scheduler was made. */
  long now() {
    return (System.nanoTime() - startNanos) / 1_000_000L;
  }

  // ---- events ----------------------------------------------------------------------

  @Override
  public void handle(SchedulerEvent event) {
    synchronized (coreLock) {
      try {
        dispatch(event);
      } catch (RuntimeException e) {
        // Never let a scheduling error kill the RM's dispatcher.
        LOG.error("sojourn: error handling " + event.getType(), e);
      }
    }
  }

  private void dispatch(SchedulerEvent event) {
    switch (event.getType()) {
      case NODE_ADDED: {
        NodeAddedSchedulerEvent e = (NodeAddedSchedulerEvent) event;
        nodes.add(e.getAddedRMNode());
        recoverContainersOnNode(e.getContainerReports(), e.getAddedRMNode());
        channel.flush(-1);
        break;
      }
      case NODE_REMOVED:
        nodes.remove(((NodeRemovedSchedulerEvent) event).getRemovedRMNode());
        channel.flush(-1);
        break;
      case NODE_RESOURCE_UPDATE: {
        NodeResourceUpdateSchedulerEvent e = (NodeResourceUpdateSchedulerEvent) event;
        nodes.resourceUpdated(e.getRMNode(), e.getResourceOption());
        channel.flush(-1);
        break;
      }
      case NODE_UPDATE:
        nodeUpdate(((NodeUpdateSchedulerEvent) event).getRMNode());
        break;
      case APP_ADDED: {
        AppAddedSchedulerEvent e = (AppAddedSchedulerEvent) event;
        apps.add(e.getApplicationId(), e.getQueue(), e.getUser(), e.getIsAppRecovering());
        break;
      }
      case APP_REMOVED: {
        AppRemovedSchedulerEvent e = (AppRemovedSchedulerEvent) event;
        apps.done(e.getApplicationID(), e.getFinalState());
        break;
      }
      case APP_ATTEMPT_ADDED: {
        AppAttemptAddedSchedulerEvent e = (AppAttemptAddedSchedulerEvent) event;
        apps.addAttempt(e.getApplicationAttemptId(), e.getTransferStateFromPreviousAttempt(),
            e.getIsAttemptRecovering());
        channel.flush(-1);
        break;
      }
      case APP_ATTEMPT_REMOVED: {
        AppAttemptRemovedSchedulerEvent e = (AppAttemptRemovedSchedulerEvent) event;
        apps.doneAttempt(e.getApplicationAttemptID(), e.getFinalAttemptState(),
            e.getKeepContainersAcrossAppAttempts());
        channel.flush(-1);
        break;
      }
      case CONTAINER_EXPIRED: {
        ContainerId id = ((ContainerExpiredSchedulerEvent) event).getContainerId();
        completedContainer(getRMContainer(id),
            SchedulerUtils.createAbnormalContainerStatus(id, SchedulerUtils.EXPIRED_CONTAINER),
            RMContainerEventType.EXPIRE);
        channel.flush(-1);
        break;
      }
      case RELEASE_CONTAINER: {
        RMContainer c = ((ReleaseContainerEvent) event).getContainer();
        completedContainer(c, SchedulerUtils.createAbnormalContainerStatus(c.getContainerId(),
            SchedulerUtils.RELEASED_CONTAINER), RMContainerEventType.RELEASED);
        channel.flush(-1);
        break;
      }
      case MARK_CONTAINER_FOR_PREEMPTION: {
        // From YARN itself (node overcommit): ask the AM; the kill comes as KILLABLE.
        ContainerPreemptEvent e = (ContainerPreemptEvent) event;
        SojournAppAttempt a = getApplicationAttempt(e.getAppId());
        if (a != null) {
          a.markContainerForPreemption(e.getContainer().getContainerId());
        }
        break;
      }
      case MARK_CONTAINER_FOR_KILLABLE:
        kills.kill(((ContainerPreemptEvent) event).getContainer());
        channel.flush(-1);
        break;
      default:
        LOG.debug("sojourn: ignoring scheduler event {}", event.getType());
    }
  }

  /** The timer thread: policy wake-ups, preemption kills, deltas from RPC threads, the drift check. */
  private void tick() {
    synchronized (coreLock) {
      try {
        if (!channel.isOpen()) {
          return;
        }
        long now = now();
        kills.killExpired(now);
        channel.tick(now);
      } catch (RuntimeException e) {
        LOG.error("sojourn: timer tick failed", e);
      }
    }
  }

  // ---- nodes (ClusterNodes keeps them) ------------------------------------------------

  /** What the cluster has free: every attempt's headroom ({@link ClusterNodes#headroom}). */
  Resource headroom() {
    return nodes.headroom();
  }

  /** YARN's own book-keeping of a capacity change, for {@link ClusterNodes}. */
  void updateNodeResourceInBooks(RMNode rmNode, ResourceOption option) {
    updateNodeResource(rmNode, option);
  }

  @Override
  protected void nodeUpdate(RMNode nm) {
    synchronized (coreLock) {
      super.nodeUpdate(nm);
      long now = now();
      kills.killExpired(now);
      boolean ready = !rmContext.isWorkPreservingRecoveryEnabled()
          || rmContext.isSchedulerReadyForAllocatingContainers();
      Integer id = ids.node(nm.getNodeID());
      channel.flush(ready && id != null && nodeTracker.getNode(nm.getNodeID()) != null ? id : -1);
      nodes.updateHeadroom();
    }
  }

  // ---- recovery: containers the core did not place ---------------------------------------

  /**
   * Work-preserving RM restart and HA fail-over: a NodeManager re-registers
   * with its running containers, which YARN recovers into its books; each
   * then goes to the core as a ContainerRecovered.
   */
  @Override
  public void recoverContainersOnNode(List<NMContainerStatus> reports, RMNode nm) {
    super.recoverContainersOnNode(reports, nm);
    if (reports == null) {
      return;
    }
    for (NMContainerStatus st : reports) {
      RMContainer rmc = getRMContainer(st.getContainerId());
      SojournAppAttempt a = rmc == null ? null : getCurrentAttemptForContainer(st.getContainerId());
      if (a != null && ids.coreId(st.getContainerId()) == null) {
        apps.recoverInCore(rmc, a);
      }
    }
  }


  // ---- allocate(): record, never decide -----------------------------------------------

  @Override
  public Allocation allocate(ApplicationAttemptId attemptId, List<ResourceRequest> ask,
      List<SchedulingRequest> schedulingRequests, List<ContainerId> release,
      List<String> blacklistAdditions, List<String> blacklistRemovals,
      ContainerUpdates updateRequests) {
    SojournAppAttempt attempt = getApplicationAttempt(attemptId);
    if (attempt == null || !attempt.getApplicationAttemptId().equals(attemptId)) {
      LOG.error("sojourn: allocate from a removed or unknown attempt {}", attemptId);
      return EMPTY_ALLOCATION;
    }
    AskTranslator.validate(attemptId, ask);
    normalizeResourceRequests(ask);
    releaseContainers(release, attempt);
    synchronized (attempt) {
      if (attempt.isStopped()) {
        return EMPTY_ALLOCATION;
      }
      if (!ask.isEmpty()) {
        attempt.updateResourceRequests(ask);
        // After the update, so a flush that misses this mark reads the new state.
        Set<Integer> prios = new ConcurrentSkipListSet<>();
        for (ResourceRequest r : ask) {
          prios.add(r.getPriority().getPriority());
        }
        asks.markDirty(attemptId, prios);
      }
      attempt.updateBlacklist(blacklistAdditions, blacklistRemovals);
      // Containers placed since the last call, and any preemption request.
      return attempt.getAllocation(rc, getClusterResource(), minimumAllocation);
    }
  }

  // ---- completions ----------------------------------------------------------------------

  @Override
  public void completedContainer(RMContainer rmContainer, ContainerStatus status,
      RMContainerEventType event) {
    // A container killed before the AM pulled it gives its request back to
    // YARN's books; re-send that ask so the core wants it again too.
    boolean requestComesBack = rmContainer != null && rmContainer.getContainerRequest() != null;
    super.completedContainer(rmContainer, status, event);
    if (requestComesBack) {
      asks.markDirty(rmContainer.getApplicationAttemptId(),
          rmContainer.getAllocatedSchedulerKey().getPriority().getPriority());
    }
  }

  @Override
  protected void completedContainerInternal(RMContainer rmContainer, ContainerStatus status,
      RMContainerEventType event) {
    Container container = rmContainer.getContainer();
    ContainerId id = container.getId();
    kills.completed(id);
    suspensions.completed(id, event);
    Long cid = ids.forget(id);
    if (cid != null) {
      pending.add(Protocol.containerCompleted(cid, outcomeOf(status, event)));
    }
    SojournAppAttempt attempt = getCurrentAttemptForContainer(id);
    FiCaSchedulerNode node = nodeTracker.getNode(container.getNodeId());
    if (attempt == null) {
      LOG.info("sojourn: container {} of an unknown application completed ({})", id, event);
      return;
    }
    attempt.containerCompleted(rmContainer, status, event, RMNodeLabelsManager.NO_LABEL);
    if (node != null) {
      node.releaseContainer(id, false);
    }
    LOG.debug("sojourn: {} released {} on {} ({})", attempt.getApplicationAttemptId(), id,
        container.getNodeId(), event);
  }

  static String outcomeOf(ContainerStatus status, RMContainerEventType event) {
    if (status != null && status.getExitStatus() == ContainerExitStatus.PREEMPTED) {
      return "preempted";
    }
    switch (event) {
      case RELEASED:
        return "released";
      case EXPIRE:
        return "expired";
      case FINISHED:
        return "finished";
      default:
        if (status != null && SchedulerUtils.LOST_CONTAINER.equals(status.getDiagnostics())) {
          return "lost";
        }
        return "killed";
    }
  }

  @Override
  public void killContainer(RMContainer container) {
    LOG.info("sojourn: killing container {}", container.getContainerId());
    completedContainer(container, SchedulerUtils.createKilledContainerStatus(
        container.getContainerId(), "Killed by the ResourceManager"), RMContainerEventType.KILL);
  }

  // ---- the rest of YARN's contract ---------------------------------------------------------

  @Override
  public QueueInfo getQueueInfo(String queueName, boolean includeChildQueues, boolean recursive)
      throws IOException {
    QueueTree tree = queues;
    SojournQueue q = queueName == null || queueName.isEmpty() ? tree.root() : tree.find(queueName);
    if (q == null) {
      throw new IOException("sojourn: unknown queue '" + queueName + "' (queues: "
          + String.join(", ", tree.leafPaths()) + ")");
    }
    return q.getQueueInfo(includeChildQueues, recursive);
  }

  @Override
  public List<QueueUserACLInfo> getQueueUserAclInfo() {
    UserGroupInformation user = null;
    try {
      user = UserGroupInformation.getCurrentUser();
    } catch (IOException e) {
      LOG.debug("sojourn: no current user", e);
    }
    return queues.root().getQueueUserAclInfo(user);
  }

  @Override
  public ResourceCalculator getResourceCalculator() {
    return rc;
  }

  @Override
  public int getNumClusterNodes() {
    return nodeTracker.nodeCount();
  }

  @Override
  public QueueMetrics getRootQueueMetrics() {
    return queues.root().getMetrics();
  }

  @Override
  public boolean checkAccess(UserGroupInformation callerUGI, QueueACL acl, String queueName) {
    SojournQueue q = queues.find(queueName);
    return q != null && q.hasAccess(acl, callerUGI);
  }

  @Override
  public List<ApplicationAttemptId> getAppsInQueue(String queueName) {
    SojournQueue q = queues.find(queueName);
    if (q == null) {
      return null;
    }
    List<ApplicationId> appIds = new ArrayList<>();
    q.collectApps(appIds);
    List<ApplicationAttemptId> out = new ArrayList<>(appIds.size());
    for (ApplicationId id : appIds) {
      SchedulerApplication<SojournAppAttempt> app = applications.get(id);
      if (app != null && app.getCurrentAppAttempt() != null) {
        out.add(app.getCurrentAppAttempt().getApplicationAttemptId());
      }
    }
    return out;
  }

  @Override
  public void recover(RMState state) {
    // Applications and attempts come back through APP_ADDED / APP_ATTEMPT_ADDED
    // (recovering), containers as their NodeManagers re-register
    // (recoverContainersOnNode). What YARN does not keep starts afresh in the
    // core: a recovered container's attained service counts from now, and
    // the policy's own state (virtual times, estimates) is rebuilt from the
    // events that follow.
    LOG.info("sojourn: recovering {} application(s); their containers reach the core as their "
        + "NodeManagers re-register", state == null ? 0 : state.getApplicationState().size());
  }

  // ---- for operators (the MXBean) -------------------------------------------------------------

  /** The policy's and the mirror's state, plus the shim's counters, as JSON. */
  public String describe() {
    synchronized (coreLock) {
      ObjectNode o = Protocol.JSON.createObjectNode();
      channel.describeInto(o);
      o.put("policy", activePolicy);
      o.put("allocations", decisions.allocations());
      o.put("rejections", decisions.rejections());
      o.put("preemption_kills", kills.kills());
      o.put("pending_kills", kills.pending());
      o.put("suspend_mode", suspensions.mode());
      o.put("suspensions", suspensions.suspensions());
      o.put("resumes", suspensions.resumes());
      o.put("progress_reports", pending.progressReports());
      o.put("suspended", suspensions.count());
      o.put("recovered_containers", apps.recovered());
      o.put("core_rebuilds", channel.rebuilds());
      o.put("drift_resyncs", channel.driftResyncs());
      return o.toString();
    }
  }

  public String getPolicyName() {
    return activePolicy;
  }

  @Override
  public String getPolicy() {
    return activePolicy;
  }

  @Override
  public String getState() {
    return describe();
  }

  @Override
  public Map<String, Double> getPolicyMetrics() {
    return channel.policyMetrics();
  }

  @Override
  public String[] getLeafQueues() {
    return queues.leafPaths().toArray(new String[0]);
  }

  @Override
  public long getAllocations() {
    return decisions.allocations();
  }

  @Override
  public long getRejections() {
    return decisions.rejections();
  }

  @Override
  public long getRecoveredContainers() {
    return apps.recovered();
  }

  @Override
  public long getCoreRebuilds() {
    return channel.rebuilds();
  }

  @Override
  public long getDriftResyncs() {
    return channel.driftResyncs();
  }

  @Override
  public long getPreemptionKills() {
    return kills.kills();
  }

  @Override
  public long getProgressReports() {
    return pending.progressReports();
  }

  @Override
  public long getAmProgressRefusals() {
    MapReduceProgress p = amProgress;
    return p == null ? 0 : p.refusals();
  }

  @Override
  public String getSuspendMode() {
    return suspensions.mode();
  }

  /** Read by operators; the NodeManagers' agents read the signed form (sorted, YARN container ids). */
  @Override
  public String[] getSuspendedContainers() {
    return suspensions.list();
  }

  /** What the NodeManagers' agents act on: the same list, signed (SuspendListSigner). */
  @Override
  public String getSignedSuspendedContainers() {
    return suspensions.signed();
  }

  // ---- for tests ------------------------------------------------------------------------------

  /**
   * Applies decisions as if the core had made them (JSON array), then sends
   * the follow-ups. For tests of the shim's paths that no current policy
   * exercises (kill preemption).
   */
  void applyForTest(String decisionsJson) throws IOException {
    List<Protocol.Decision> ds = Protocol.decisions(Protocol.JSON.readTree(decisionsJson));
    synchronized (coreLock) {
      channel.applyForTest(ds);
    }
  }

  /** The shim's container map (core id -> YARN container and state), for tests. */
  String debugContainers() {
    return ids.debugContainers();
  }

  /** The core's id of a YARN container, or null. */
  Long coreIdOf(ContainerId id) {
    return ids.coreId(id);
  }

  /** Sends the core a completion YARN never saw, so its mirror drifts (tests only). */
  void forgetInCoreForTest(ContainerId id) {
    synchronized (coreLock) {
      channel.sendWith(Protocol.containerCompleted(ids.coreId(id), "finished"));
    }
  }

  /** One drift check, as the timer thread makes them (tests only). */
  boolean checkDriftForTest() {
    synchronized (coreLock) {
      return channel.checkDrift();
    }
  }

  /** Panics inside the live core, as a policy bug would (tests only). */
  void panicInCoreForTest() {
    synchronized (coreLock) {
      channel.panicInCoreForTest();
    }
  }
}
