package org.sojourn.yarn;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
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
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.QueueUserACLInfo;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.api.records.SchedulingRequest;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.exceptions.YarnRuntimeException;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.nodelabels.RMNodeLabelsManager;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.RMStateStore.RMState;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerState;
import org.apache.hadoop.yarn.server.api.protocolrecords.NMContainerStatus;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractYarnScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Allocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.NodeType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerAppUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.PendingAsk;
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
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.placement.AppPlacementAllocator;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;
import org.apache.hadoop.yarn.server.utils.BuilderUtils;
import org.apache.hadoop.yarn.util.resource.DominantResourceCalculator;
import org.apache.hadoop.yarn.util.resource.ResourceCalculator;
import org.apache.hadoop.yarn.util.resource.Resources;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ContainerUpdates;

/**
 * Sojourn's YARN scheduler: a thin shim that keeps YARN's books (nodes,
 * attempts, RMContainers, queue metrics, ACLs) and leaves every choice to the
 * Rust core behind {@link Native}.
 *
 * <p>How it runs:
 * <ul>
 *   <li>{@link #allocate} (up to 50 RPC threads) only records: it updates the
 *   attempt's requests in YARN's own {@code AppSchedulingInfo}, marks the
 *   touched priorities dirty, and returns containers placed earlier plus any
 *   preemption request.</li>
 *   <li>{@link #handle} (the dispatcher thread) and the timer thread enter the
 *   core under one lock: pending deltas (nodes, apps, completions), the dirty
 *   asks re-read from YARN, then the heartbeat, in one batch. Each decision is
 *   checked against YARN's state and applied, or sent back as
 *   {@code Rejected} so the core's mirror never drifts.</li>
 *   <li>Kill preemption follows YARN's path: the container is marked, the AM
 *   sees it in a PreemptionMessage on its next allocate, and it is killed after
 *   {@code yarn.scheduler.sojourn.preemption.grace-ms}.</li>
 *   <li>Suspend decisions ({@code yarn.scheduler.sojourn.suspend}): with
 *   {@code agent} the container stays RUNNING in YARN's books and is listed in
 *   the MXBean attribute {@code SuspendedContainers}, which the NodeManagers'
 *   {@code org.sojourn.yarn.nm.SuspendingContainerExecutor} polls and pauses
 *   (SIGSTOP) or resumes (SIGCONT); with {@code kill} a suspend is carried out
 *   as kill preemption; with {@code reject} it goes back to the core.</li>
 * </ul>
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
  private boolean usePortForNodeName;

  /** The one lock the core is entered under. */
  private final Object coreLock = new Object();
  private Native core;
  private volatile long nextTimeout = -1;
  private ScheduledExecutorService ticker;
  private ObjectName mbean;

  /** Protocol events waiting for the next entry into the core. */
  private final ConcurrentLinkedDeque<ObjectNode> pending = new ConcurrentLinkedDeque<>();
  /**
   * The latest task progress read from MapReduce AMs, by core container id,
   * waiting for the next entry into the core (a newer reading replaces one not
   * yet sent).
   */
  private final ConcurrentHashMap<Long, Double> progressPending = new ConcurrentHashMap<>();
  /** With a reading of a reduce past its sort: when that ended (core clock, ms). */
  private final ConcurrentHashMap<Long, Long> sortFinishedPending = new ConcurrentHashMap<>();
  /** Reads task progress from MapReduce AMs; null when off. */
  private MapReduceProgress amProgress;
  /** Attempts whose requests changed, with the request priorities touched. */
  private final ConcurrentHashMap<ApplicationAttemptId, Set<Integer>> dirtyAsks =
      new ConcurrentHashMap<>();

  private final AtomicInteger nextNode = new AtomicInteger(1);
  private final AtomicInteger nextApp = new AtomicInteger(1);
  private final ConcurrentHashMap<NodeId, Integer> nodeIds = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<Integer, NodeId> nodesById = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Set<Integer>> nodesByHost = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<Integer, SojournAppAttempt> appsById = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<Long, RMContainer> containers = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<ContainerId, Long> coreIdOf = new ConcurrentHashMap<>();
  /** Containers marked for preemption, with the time (ms) they are killed at. */
  private final ConcurrentHashMap<ContainerId, Long> killAt = new ConcurrentHashMap<>();
  /**
   * How suspend decisions are carried out, fixed at start-up (a refresh cannot
   * change it: containers already paused by the agents would be orphaned).
   */
  private volatile String suspendMode = SojournConfig.DEFAULT_SUSPEND;
  /**
   * suspend=agent: the containers the core holds suspended. They stay RUNNING
   * in YARN and keep all their resources on their SchedulerNode; the
   * NodeManager agents read this set over JMX and pause their processes.
   */
  private final ConcurrentHashMap<ContainerId, RMContainer> suspended = new ConcurrentHashMap<>();
  /** Signs the suspended list for the NodeManager agents (SignedSuspendedContainers). */
  private volatile SuspendListSigner suspendSigner = new SuspendListSigner(null);
  /** suspend=kill: containers whose kill carries out a suspend (a resume before the kill cancels it). */
  private final Set<ContainerId> suspendKills = ConcurrentHashMap.newKeySet();
  private final AtomicBoolean warnedRejectedSuspend = new AtomicBoolean();
  /** When (ms, {@link #now}) the suspended list was last read, e.g. by a NodeManager agent; -1: never. */
  private volatile long suspendedListReadAt = -1;
  private final AtomicBoolean warnedNoAgent = new AtomicBoolean();
  /** How long after start-up (and since the last read) a suspension with no agent reading is warned about. */
  static final long AGENT_SILENCE_MS = 60_000;
  private static final String NO_SUSPEND =
      SojournConfig.SUSPEND + "=reject: this ResourceManager does not suspend containers";

  /** The largest core container id seen: ids the shim gives recovered containers go past it. */
  private final AtomicLong maxCoreId = new AtomicLong();
  /** Containers handed to the core that it had not placed (recovered, kept, re-sent). */
  private final AtomicLong recoveredContainers = new AtomicLong();
  /** Times the core was rebuilt from YARN's books after it failed. */
  private final AtomicLong rebuilds = new AtomicLong();
  /** How often the timer thread compares YARN's books with the mirror. */
  static final long DRIFT_CHECK_MS = 10_000;
  private long driftCheckedAt;
  /** The difference the last drift check saw, if any. */
  private String driftSeen;
  /** Times the mirror was rebuilt because it drifted from YARN's books. */
  private final AtomicLong driftResyncs = new AtomicLong();
  /** The last native call failed: rebuild the core at the next entry. */
  private boolean coreFailed;
  /** A rebuild is sending YARN's books: a failure now waits for the next entry. */
  private boolean rebuilding;
  private final AtomicLong allocations = new AtomicLong();
  private final AtomicLong rejections = new AtomicLong();
  private final AtomicLong preemptionKills = new AtomicLong();
  private final AtomicLong suspensions = new AtomicLong();
  private final AtomicLong resumes = new AtomicLong();
  private final AtomicLong progressReports = new AtomicLong();

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
    this.usePortForNodeName = configuration.getBoolean(
        YarnConfiguration.RM_SCHEDULER_INCLUDE_PORT_IN_NODE_NAME,
        YarnConfiguration.DEFAULT_RM_SCHEDULER_USE_PORT_FOR_NODE_NAME);
    SojournConfig s = SojournConfig.read(configuration);
    this.queues = QueueTree.build(s.queues, null, configuration, this::getClusterResource);
    synchronized (coreLock) {
      this.core = openCore(s, s.recordPath);
    }
    this.settings = s;
    this.activePolicy = s.policy;
    this.suspendMode = s.suspend;
    this.suspendSigner = SuspendListSigner.fromConf(configuration, s.suspend);
    LOG.info("Sojourn scheduler: policy {} {}, queues {}, preemption grace {} ms, native library from {}",
        s.policy, s.params, queues.leafPaths(), s.graceMs, Native.loadedFrom());
    LOG.info(suspendModeLine(s.suspend, s.graceMs));
    super.serviceInit(configuration);
    schedulingMonitorManager.initialize(rmContext, configuration);
  }

  /** The start-up line that announces how suspend decisions are carried out. */
  static String suspendModeLine(String mode, long graceMs) {
    switch (mode) {
      case "agent":
        return "sojourn: suspend decisions are carried out by the NodeManager agent "
            + "(SuspendingContainerExecutor): the container is paused (SIGSTOP) and keeps its memory "
            + "and node; every NodeManager needs yarn.nodemanager.container-executor.class="
            + "org.sojourn.yarn.nm.SuspendingContainerExecutor (" + SojournConfig.SUSPEND + "=agent)";
      case "reject":
        return "sojourn: suspend decisions are rejected back to the policy (" + SojournConfig.SUSPEND
            + "=reject)";
      default:
        return "sojourn: suspend decisions are carried out as kill preemption (the work is lost; "
            + "the kill follows the AM's " + graceMs + " ms grace; " + SojournConfig.SUSPEND
            + "=kill; set it to agent once the NodeManagers run SuspendingContainerExecutor)";
    }
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

  private Native openCore(SojournConfig s, String recordPath) {
    ObjectNode o = Protocol.JSON.createObjectNode();
    o.put("seed", s.seed);
    o.set("max_allocation", Protocol.resources(getMaximumResourceCapability()));
    if (recordPath != null) {
      o.put("record", recordPath);
      o.put("record_max_mb", s.recordMaxMb);
    }
    try {
      return Native.open(s.policy, s.params, o.toString(), Protocol.nativeLogLevel());
    } finally {
      Protocol.drainNativeLogs();
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
      amProgress = new MapReduceProgress(rmContext, this::containerProgress, every);
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
      if (core != null) {
        core.close();
      }
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
   * {@code ConfigurationProvider} (see {@link #withSiteFile}): the AdminService
   * hands its in-memory configuration, loaded at start-up, so without this an
   * edited yarn-site.xml would change nothing (CapacityScheduler re-reads
   * capacity-scheduler.xml the same way).
   */
  @Override
  public void reinitialize(Configuration handed, RMContext context) throws IOException {
    Configuration configuration = withSiteFile(handed, context != null ? context : rmContext);
    synchronized (coreLock) {
      SojournConfig next;
      try {
        next = SojournConfig.read(configuration);
      } catch (IllegalArgumentException e) {
        throw new IOException(e.getMessage(), e);
      }
      QueueTree tree = QueueTree.build(next.queues, queues, configuration, this::getClusterResource);
      SojournConfig cur = settings;
      if (!next.policy.equals(cur.policy) || !next.params.equals(cur.params) || next.seed != cur.seed) {
        try (Native probe = openCore(next, null)) {
          LOG.warn("sojourn: policy settings changed ({} {} -> {} {}); they are valid and take "
              + "effect when the ResourceManager restarts", cur.policy, cur.params, next.policy, next.params);
        } catch (IllegalArgumentException e) {
          throw new IOException(e.getMessage(), e);
        }
      }
      if (next.amProgressMs != cur.amProgressMs) {
        LOG.warn("sojourn: {} changed ({} -> {} ms); it takes effect when the ResourceManager restarts",
            SojournConfig.AM_PROGRESS_MS, cur.amProgressMs, next.amProgressMs);
      }
      if (!next.suspend.equals(suspendMode)) {
        LOG.warn("sojourn: {} changed ({} -> {}); it takes effect when the ResourceManager restarts",
            SojournConfig.SUSPEND, suspendMode, next.suspend);
      }
      this.queues = tree;
      this.settings = next;
      LOG.info("Sojourn scheduler reinitialized: queues {}, preemption grace {} ms",
          tree.leafPaths(), next.graceMs);
    }
    super.reinitialize(configuration, context);
  }

  /**
   * {@code conf} with the {@code yarn.scheduler.sojourn.*} keys of the
   * current yarn-site.xml, as the RM's ConfigurationProvider gives it
   * (LocalConfigurationProvider: the file on the classpath, i.e. in
   * HADOOP_CONF_DIR; FileSystemBasedConfigurationProvider: the file in
   * {@code yarn.resourcemanager.configuration.file-system-based-store}). The
   * file's Sojourn keys replace {@code conf}'s; a Sojourn key that
   * {@code conf} got from yarn-site.xml and the file no longer has is removed.
   * Keys set another way (programmatically, another resource) stay. Without a
   * provider or a file, {@code conf} itself.
   *
   * @throws IOException the file cannot be read or parsed (naming it)
   */
  static Configuration withSiteFile(Configuration conf, RMContext context) throws IOException {
    if (context == null || context.getConfigurationProvider() == null) {
      return conf;
    }
    String name = YarnConfiguration.YARN_SITE_CONFIGURATION_FILE;
    Configuration site = new Configuration(false);
    try (java.io.InputStream in = context.getConfigurationProvider().getConfigurationInputStream(conf, name)) {
      if (in == null) {
        LOG.info("sojourn: refresh: the configuration provider has no {}; using the RM's configuration", name);
        return conf;
      }
      site.addResource(in, name);
      site.size(); // parse now, while the stream is open
    } catch (IOException | org.apache.hadoop.yarn.exceptions.YarnException | RuntimeException e) {
      throw new IOException("sojourn: refresh: cannot read " + name + " through "
          + context.getConfigurationProvider().getClass().getName() + ": " + e.getMessage(), e);
    }
    Configuration out = new Configuration(conf);
    for (String key : conf.getPropsWithPrefix(SojournConfig.PREFIX).keySet()) {
      String full = SojournConfig.PREFIX + key;
      String[] from = conf.getPropertySources(full);
      if (site.getRaw(full) == null && from != null && Arrays.asList(from).contains(name)) {
        out.unset(full);
      }
    }
    Map<String, String> fresh = site.getPropsWithPrefix(SojournConfig.PREFIX);
    for (Map.Entry<String, String> e : fresh.entrySet()) {
      out.set(SojournConfig.PREFIX + e.getKey(), e.getValue(), name);
    }
    LOG.info("sojourn: refresh reads {} Sojourn key(s) from {} through {}", fresh.size(), name,
        context.getConfigurationProvider().getClass().getSimpleName());
    return out;
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
        addNode(e.getAddedRMNode());
        recoverContainersOnNode(e.getContainerReports(), e.getAddedRMNode());
        flush(-1);
        break;
      }
      case NODE_REMOVED:
        removeNode(((NodeRemovedSchedulerEvent) event).getRemovedRMNode());
        flush(-1);
        break;
      case NODE_RESOURCE_UPDATE: {
        NodeResourceUpdateSchedulerEvent e = (NodeResourceUpdateSchedulerEvent) event;
        updateNodeResource(e.getRMNode(), e.getResourceOption());
        Integer id = nodeIds.get(e.getRMNode().getNodeID());
        FiCaSchedulerNode n = nodeTracker.getNode(e.getRMNode().getNodeID());
        if (id != null && n != null) {
          pending.add(Protocol.nodeResourceUpdated(id, n.getTotalResource()));
        }
        flush(-1);
        break;
      }
      case NODE_UPDATE:
        nodeUpdate(((NodeUpdateSchedulerEvent) event).getRMNode());
        break;
      case APP_ADDED: {
        AppAddedSchedulerEvent e = (AppAddedSchedulerEvent) event;
        addApplication(e.getApplicationId(), e.getQueue(), e.getUser(), e.getIsAppRecovering());
        break;
      }
      case APP_REMOVED: {
        AppRemovedSchedulerEvent e = (AppRemovedSchedulerEvent) event;
        doneApplication(e.getApplicationID(), e.getFinalState());
        break;
      }
      case APP_ATTEMPT_ADDED: {
        AppAttemptAddedSchedulerEvent e = (AppAttemptAddedSchedulerEvent) event;
        addApplicationAttempt(e.getApplicationAttemptId(),
            e.getTransferStateFromPreviousAttempt(), e.getIsAttemptRecovering());
        flush(-1);
        break;
      }
      case APP_ATTEMPT_REMOVED: {
        AppAttemptRemovedSchedulerEvent e = (AppAttemptRemovedSchedulerEvent) event;
        doneApplicationAttempt(e.getApplicationAttemptID(), e.getFinalAttemptState(),
            e.getKeepContainersAcrossAppAttempts());
        flush(-1);
        break;
      }
      case CONTAINER_EXPIRED: {
        ContainerId id = ((ContainerExpiredSchedulerEvent) event).getContainerId();
        completedContainer(getRMContainer(id),
            SchedulerUtils.createAbnormalContainerStatus(id, SchedulerUtils.EXPIRED_CONTAINER),
            RMContainerEventType.EXPIRE);
        flush(-1);
        break;
      }
      case RELEASE_CONTAINER: {
        RMContainer c = ((ReleaseContainerEvent) event).getContainer();
        completedContainer(c, SchedulerUtils.createAbnormalContainerStatus(c.getContainerId(),
            SchedulerUtils.RELEASED_CONTAINER), RMContainerEventType.RELEASED);
        flush(-1);
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
        killPreempted(((ContainerPreemptEvent) event).getContainer());
        flush(-1);
        break;
      default:
        LOG.debug("sojourn: ignoring scheduler event {}", event.getType());
    }
  }

  private long now() {
    return (System.nanoTime() - startNanos) / 1_000_000L;
  }

  // ---- nodes -----------------------------------------------------------------------

  private void addNode(RMNode rmNode) {
    NodeId nid = rmNode.getNodeID();
    if (nodeIds.containsKey(nid)) {
      removeNode(rmNode); // a reconnect: forget the old incarnation first
    }
    FiCaSchedulerNode node = new FiCaSchedulerNode(rmNode, usePortForNodeName);
    nodeTracker.addNode(node);
    int id = nextNode.getAndIncrement();
    nodeIds.put(nid, id);
    nodesById.put(id, nid);
    nodesByHost.computeIfAbsent(node.getNodeName(), h -> new ConcurrentSkipListSet<>()).add(id);
    pending.add(Protocol.nodeAdded(id, nid.toString(), rmNode.getRackName(), rmNode.getNodeLabels(),
        rmNode.getTotalCapability()));
    LOG.info("sojourn: added node {} (core {}), capacity {}, cluster {}", nid, id,
        rmNode.getTotalCapability(), getClusterResource());
    updateAvailable();
  }

  private void removeNode(RMNode rmNode) {
    NodeId nid = rmNode.getNodeID();
    FiCaSchedulerNode node = nodeTracker.getNode(nid);
    if (node != null) {
      for (RMContainer c : node.getCopiedListOfRunningContainers()) {
        completedContainer(c, SchedulerUtils.createAbnormalContainerStatus(c.getContainerId(),
            SchedulerUtils.LOST_CONTAINER), RMContainerEventType.KILL);
      }
      nodeTracker.removeNode(nid);
    }
    Integer id = nodeIds.remove(nid);
    if (id != null) {
      nodesById.remove(id);
      if (node != null) {
        Set<Integer> onHost = nodesByHost.get(node.getNodeName());
        if (onHost != null) {
          onHost.remove(id);
        }
      }
      pending.add(Protocol.nodeRemoved(id));
      LOG.info("sojourn: removed node {} (core {})", nid, id);
    }
    updateAvailable();
  }

  @Override
  protected void nodeUpdate(RMNode nm) {
    synchronized (coreLock) {
      super.nodeUpdate(nm);
      long now = now();
      killExpired(now);
      boolean ready = !rmContext.isWorkPreservingRecoveryEnabled()
          || rmContext.isSchedulerReadyForAllocatingContainers();
      Integer id = nodeIds.get(nm.getNodeID());
      flush(ready && id != null && nodeTracker.getNode(nm.getNodeID()) != null ? id : -1);
      updateAvailable();
    }
  }

  // ---- applications ----------------------------------------------------------------

  private void addApplication(ApplicationId appId, String queueName, String user, boolean recovering) {
    QueueTree tree = queues;
    SojournQueue q = tree.find(queueName);
    String why = null;
    if (q == null) {
      why = "queue '" + queueName + "' does not exist (Sojourn's leaf queues: "
          + String.join(", ", tree.leafPaths()) + ")";
    } else if (!q.isLeaf()) {
      why = "queue '" + queueName + "' is a parent queue; submit to one of its leaves ("
          + String.join(", ", tree.leafPaths()) + ")";
    } else if (!recovering && YarnConfiguration.isAclEnabled(conf)) {
      UserGroupInformation ugi = UserGroupInformation.createRemoteUser(user);
      if (!q.hasAccess(QueueACL.SUBMIT_APPLICATIONS, ugi) && !q.hasAccess(QueueACL.ADMINISTER_QUEUE, ugi)) {
        why = "user " + user + " may not submit applications to queue " + q.getPath();
      }
    }
    if (why != null) {
      LOG.warn("sojourn: rejecting application {}: {}", appId, why);
      rmContext.getDispatcher().getEventHandler().handle(
          new RMAppEvent(appId, RMAppEventType.APP_REJECTED, "Sojourn: " + why));
      return;
    }
    RMApp rmApp = rmContext.getRMApps().get(appId);
    Priority prio = rmApp == null ? null : rmApp.getApplicationPriority();
    boolean unmanaged = isUnmanaged(rmApp);
    SchedulerApplication<SojournAppAttempt> app = Compat.newApplication(q, user, prio, unmanaged);
    applications.put(appId, app);
    q.addApp(appId);
    Compat.submitApp(q.getMetrics(), user, unmanaged);
    LOG.info("sojourn: accepted application {} of {} in queue {} ({} applications)", appId, user,
        q.getPath(), applications.size());
    if (!recovering) {
      rmContext.getDispatcher().getEventHandler().handle(
          new RMAppEvent(appId, RMAppEventType.APP_ACCEPTED));
    }
  }

  private void addApplicationAttempt(ApplicationAttemptId attemptId, boolean transferState,
      boolean recovering) {
    SchedulerApplication<SojournAppAttempt> app = applications.get(attemptId.getApplicationId());
    if (app == null) {
      LOG.warn("sojourn: attempt {} of an unknown application", attemptId);
      return;
    }
    SojournQueue q = (SojournQueue) app.getQueue();
    int coreId = nextApp.getAndIncrement();
    SojournAppAttempt attempt = new SojournAppAttempt(attemptId, app.getUser(), q,
        q.getAbstractUsersManager(), rmContext, coreId);
    if (transferState) {
      attempt.transferStateFromPreviousAttempt(app.getCurrentAppAttempt());
    }
    app.setCurrentAppAttempt(attempt);
    appsById.put(coreId, attempt);
    RMApp rmApp = rmContext.getRMApps().get(attemptId.getApplicationId());
    Compat.submitAppAttempt(q.getMetrics(), app.getUser(), isUnmanaged(rmApp));
    pending.add(appAdded(attempt));
    LOG.info("sojourn: added attempt {} (core app {}) of {}", attemptId, coreId, app.getUser());
    if (transferState) {
      // Work-preserving AM restart: the previous attempt's running containers
      // now belong to this one. The core dropped them with the old attempt.
      for (RMContainer c : attempt.getLiveContainers()) {
        recoverInCore(c, attempt);
      }
    }
    if (!recovering) {
      rmContext.getDispatcher().getEventHandler().handle(
          new RMAppAttemptEvent(attemptId, RMAppAttemptEventType.ATTEMPT_ADDED));
    }
  }

  /** The core's AppAdded for a live attempt: its app's name and priority, queue and user. */
  private ObjectNode appAdded(SojournAppAttempt a) {
    RMApp rmApp = rmContext.getRMApps().get(a.getApplicationId());
    int prio = rmApp != null && rmApp.getApplicationPriority() != null
        ? rmApp.getApplicationPriority().getPriority() : 0;
    return Protocol.appAdded(a.coreId(), rmApp == null ? "" : rmApp.getName(),
        ((SojournQueue) a.getQueue()).getPath(), a.getUser(), prio);
  }

  private static boolean isUnmanaged(RMApp app) {
    return app != null && app.getApplicationSubmissionContext() != null
        && app.getApplicationSubmissionContext().getUnmanagedAM();
  }

  private void doneApplication(ApplicationId appId, RMAppState finalState) {
    SchedulerApplication<SojournAppAttempt> app = applications.get(appId);
    if (app == null) {
      LOG.warn("sojourn: unknown application {} finished", appId);
      return;
    }
    SojournQueue q = (SojournQueue) app.getQueue();
    q.getAbstractUsersManager().deactivateApplication(app.getUser(), appId);
    app.stop(finalState);
    applications.remove(appId);
    q.removeApp(appId);
  }

  private void doneApplicationAttempt(ApplicationAttemptId attemptId, RMAppAttemptState finalState,
      boolean keepContainers) {
    SojournAppAttempt attempt = getApplicationAttempt(attemptId);
    if (attempt == null || !attempt.getApplicationAttemptId().equals(attemptId)) {
      LOG.warn("sojourn: unknown attempt {} finished", attemptId);
      return;
    }
    for (RMContainer c : attempt.getLiveContainers()) {
      if (keepContainers && c.getState() == RMContainerState.RUNNING) {
        continue; // work-preserving AM restart keeps it
      }
      completedContainer(c, SchedulerUtils.createAbnormalContainerStatus(c.getContainerId(),
          SchedulerUtils.COMPLETED_APPLICATION), RMContainerEventType.KILL);
    }
    attempt.stop(finalState);
    appsById.remove(attempt.coreId());
    dirtyAsks.remove(attemptId);
    pending.add(Protocol.appRemoved(attempt.coreId()));
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
      if (a != null && !coreIdOf.containsKey(st.getContainerId())) {
        recoverInCore(rmc, a);
      }
    }
  }

  /**
   * Gives the core a live container of {@code a} it does not hold, under the
   * core id the shim already maps it to or a new one past every id the core
   * has used. Its phase comes from its priority; suspended if the agent holds it so.
   */
  private void recoverInCore(RMContainer rmc, SojournAppAttempt a) {
    ContainerId id = rmc.getContainerId();
    Integer node = nodeIds.get(rmc.getAllocatedNode());
    if (node == null || rmc.getState() == RMContainerState.COMPLETED || rmc.getState() == RMContainerState.KILLED
        || rmc.getState() == RMContainerState.RELEASED) {
      return;
    }
    Long known = coreIdOf.get(id);
    long cid = known != null ? known : maxCoreId.incrementAndGet();
    coreIdOf.put(id, cid);
    containers.put(cid, rmc);
    int prio = rmc.getAllocatedSchedulerKey().getPriority().getPriority();
    String phase = rmc.isAMContainer() ? "am" : phaseOf(a, prio);
    pending.add(Protocol.containerRecovered(cid, a.coreId(), node, prio, rmc.getAllocatedResource(), phase,
        suspended.containsKey(id)));
    recoveredContainers.incrementAndGet();
    LOG.info("sojourn: {} of {} on {} goes to the core as container {} (recovered)", id,
        a.getApplicationAttemptId(), rmc.getAllocatedNode(), cid);
  }

  /**
   * Replaces a core that failed (a native panic leaves it possibly
   * half-applied, and the bridge refuses it from then on) by a fresh one
   * built from YARN's books: every node, every live attempt, every live
   * container and every outstanding ask. Policy state that YARN does not
   * hold (virtual times, attained service before now) starts afresh.
   */
  private void rebuildCore() {
    coreFailed = false;
    rebuilds.incrementAndGet();
    Native old = core;
    try {
      core = openCore(settings, settings.recordPath);
    } catch (RuntimeException e) {
      LOG.error("sojourn: cannot rebuild the core; scheduling stops until the RM restarts", e);
      core = null;
      return;
    } finally {
      if (old != null) {
        try {
          old.close();
        } catch (RuntimeException e) {
          LOG.debug("sojourn: closing the failed core", e);
        }
      }
    }
    pending.clear(); // YARN's books below already hold what these deltas said
    List<ObjectNode> batch = new ArrayList<>();
    for (FiCaSchedulerNode n : nodeTracker.getAllNodes()) {
      Integer id = nodeIds.get(n.getNodeID());
      if (id != null) {
        RMNode rm = n.getRMNode();
        batch.add(Protocol.nodeAdded(id, n.getNodeID().toString(), rm.getRackName(), rm.getNodeLabels(),
            n.getTotalResource()));
      }
    }
    for (SojournAppAttempt a : appsById.values()) {
      if (a.isStopped()) {
        continue;
      }
      batch.add(appAdded(a));
      Set<Integer> prios = new HashSet<>();
      for (SchedulerRequestKey k : a.getSchedulerKeys()) {
        prios.add(k.getPriority().getPriority());
      }
      markDirty(a.getApplicationAttemptId(), prios);
    }
    for (Map.Entry<Long, RMContainer> e : containers.entrySet()) {
      SojournAppAttempt a = getCurrentAttemptForContainer(e.getValue().getContainerId());
      if (a != null && !a.isStopped()) {
        recoverInCore(e.getValue(), a);
      }
    }
    drainPending(batch);
    collectAsks(batch);
    LOG.warn("sojourn: rebuilt the core from YARN's books: {} node(s), {} application(s), {} container(s)",
        nodeIds.size(), appsById.size(), containers.size());
    rebuilding = true;
    try {
      send(batch, now());
    } finally {
      rebuilding = false;
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
    validateAsks(attemptId, ask);
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
        markDirty(attemptId, prios);
      }
      attempt.updateBlacklist(blacklistAdditions, blacklistRemovals);
      // Containers placed since the last call, and any preemption request.
      return attempt.getAllocation(rc, getClusterResource(), minimumAllocation);
    }
  }

  /**
   * Refuses, with a message to the AM, what YARN 3.3 accepts but no scheduler
   * can serve: a negative priority or container count. The whole call is
   * refused before anything of it is recorded, as YARN refuses an invalid
   * resource request.
   */
  static void validateAsks(ApplicationAttemptId attemptId, List<ResourceRequest> ask) {
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

  private void markDirty(ApplicationAttemptId id, Set<Integer> prios) {
    // compute() is atomic with the flush's remove(): no mark is lost.
    dirtyAsks.compute(id, (k, v) -> {
      Set<Integer> s = v == null ? new ConcurrentSkipListSet<>() : v;
      s.addAll(prios);
      return s;
    });
  }

  // ---- entering the core --------------------------------------------------------------

  /** Sends pending deltas, dirty asks and (if {@code heartbeatNode > 0}) a heartbeat. */
  private void flush(int heartbeatNode) {
    List<ObjectNode> batch = new ArrayList<>();
    drainPending(batch);
    collectAsks(batch);
    if (heartbeatNode > 0) {
      batch.add(Protocol.nodeHeartbeat(heartbeatNode));
    }
    send(batch, now());
  }

  private void drainPending(List<ObjectNode> batch) {
    // Progress first, and only of containers still live: a container's
    // completion removes it from `containers` before queueing its
    // ContainerCompleted, so a reading is either dropped here or sent ahead
    // of that completion, never after it.
    for (Long cid : progressPending.keySet()) {
      Double p = progressPending.remove(cid);
      Long sorted = sortFinishedPending.remove(cid);
      if (p != null && containers.containsKey(cid)) {
        batch.add(Protocol.containerProgress(cid, p, sorted));
        progressReports.incrementAndGet();
      }
    }
    sortFinishedPending.keySet().removeIf(cid -> !containers.containsKey(cid));
    for (ObjectNode e; (e = pending.poll()) != null; ) {
      batch.add(e);
    }
  }

  /**
   * A running task's progress in [0, 1], read from its MapReduce AM (any
   * thread): queued for the next entry into the core. Readings of containers
   * the core does not know (any more) are dropped.
   */
  void containerProgress(ContainerId id, double progress, long sortFinishedEpochMs) {
    Long cid = coreIdOf.get(id);
    if (cid != null) {
      if (sortFinishedEpochMs > 0) {
        // The AM's wall clock to the core's: as long ago as it was then.
        long ago = Math.max(0, System.currentTimeMillis() - sortFinishedEpochMs);
        sortFinishedPending.put(cid, Math.max(0, now() - ago));
      }
      progressPending.put(cid, progress);
    }
  }

  /**
   * One step of the core (its cycle, sojourn_core::engine): the policy's
   * timers due by {@code now} fire, the batch applies, and the decisions
   * come back and are applied to YARN. What applying them brings back
   * (confirmations, rejections) goes to the front of the queue for the next
   * step, at the next heartbeat or tick, never into this one: a policy that
   * answers a rejection with the same decision costs one rejection per step,
   * never a loop, and a follow-up is never lost (a lost rejection would leave
   * the core's mirror holding a container YARN never made).
   */
  private void send(List<ObjectNode> batch, long now) {
    if (coreFailed && !rebuilding) {
      rebuildCore(); // sends everything, this batch's news included
      return;
    }
    long wake = nextTimeout;
    if (batch.isEmpty() && (wake < 0 || wake > now)) {
      return;
    }
    final String json = Protocol.encode(batch);
    Protocol.Response r = callCore(() -> core.step(now, json));
    for (Protocol.EventError e : r.errors) {
      LOG.warn("sojourn: the core refused {}: {}",
          e.index >= 0 && e.index < batch.size() ? batch.get(e.index) : "an event", e.message);
    }
    if (coreFailed && !rebuilding) {
      rebuildCore();
      return;
    }
    nextTimeout = r.nextTimeout;
    List<ObjectNode> followUps = apply(r.decisions, now);
    for (int i = followUps.size() - 1; i >= 0; i--) {
      pending.addFirst(followUps.get(i));
    }
  }

  private interface CoreCall {
    String run();
  }

  private Protocol.Response callCore(CoreCall c) {
    if (core == null || !core.isOpen()) {
      return Protocol.Response.EMPTY;
    }
    try {
      // The response carries the native log lines of the call.
      return Protocol.decode(c.run());
    } catch (RuntimeException e) {
      // The bridge refuses a core after a panic in it; the batch is not
      // lost, since the rebuild re-reads everything from YARN's books.
      LOG.error("sojourn: native call failed; the core will be rebuilt from YARN's books", e);
      Protocol.drainNativeLogs();
      coreFailed = true;
      return Protocol.Response.EMPTY;
    }
  }

  /** The timer thread: policy wake-ups, preemption kills, deltas from RPC threads. */
  private void tick() {
    synchronized (coreLock) {
      try {
        if (core == null || !core.isOpen()) {
          return;
        }
        long now = now();
        killExpired(now);
        List<ObjectNode> batch = new ArrayList<>();
        drainPending(batch);
        send(batch, now);
        // Only when nothing is in flight (follow-ups of this step wait for
        // the next one): otherwise the check waits for a quiet tick.
        if (now - driftCheckedAt >= DRIFT_CHECK_MS && pending.isEmpty() && dirtyAsks.isEmpty()) {
          driftCheckedAt = now;
          checkDrift();
        }
      } catch (RuntimeException e) {
        LOG.error("sojourn: timer tick failed", e);
      }
    }
  }

  /**
   * Compares YARN's books with the core's mirror (containers and memory in
   * use over all nodes) when nothing is in flight between them. A difference
   * seen at two checks in a row is drift, whatever its cause (a lost event,
   * a bug): the core is rebuilt from YARN's books and DriftResyncs counts it.
   * Returns whether it resynchronised. Caller holds coreLock.
   */
  boolean checkDrift() {
    if (core == null || !core.isOpen() || !pending.isEmpty() || !dirtyAsks.isEmpty()) {
      return false;
    }
    long yarnContainers = 0;
    long yarnMb = 0;
    for (FiCaSchedulerNode n : nodeTracker.getAllNodes()) {
      yarnContainers += n.getNumContainers();
      yarnMb += n.getAllocatedResource().getMemorySize();
    }
    JsonNode cluster;
    try {
      cluster = Protocol.JSON.readTree(core.describe()).path("cluster");
    } catch (IOException | RuntimeException e) {
      coreFailed = true;
      return false;
    } finally {
      Protocol.drainNativeLogs();
    }
    String seen = yarnContainers + " container(s) / " + yarnMb + " MB in YARN, "
        + cluster.path("containers").asLong() + " / " + cluster.path("allocated").path("memory_mb").asLong()
        + " MB in the core";
    boolean differs = cluster.path("containers").asLong() != yarnContainers
        || cluster.path("allocated").path("memory_mb").asLong() != yarnMb;
    if (!differs) {
      driftSeen = null;
      return false;
    }
    if (!seen.equals(driftSeen)) {
      driftSeen = seen; // maybe in flight: look again at the next check
      return false;
    }
    driftSeen = null;
    driftResyncs.incrementAndGet();
    LOG.warn("sojourn: the core's mirror drifted from YARN's books ({}); rebuilding it from YARN's", seen);
    rebuildCore();
    return true;
  }

  /** Re-reads the dirty asks from YARN's AppSchedulingInfo into AsksUpdated events. */
  private void collectAsks(List<ObjectNode> batch) {
    for (ApplicationAttemptId id : new ArrayList<>(dirtyAsks.keySet())) {
      Set<Integer> prios = dirtyAsks.remove(id);
      SojournAppAttempt a = getApplicationAttempt(id);
      if (prios == null || a == null || !a.getApplicationAttemptId().equals(id) || a.isStopped()
          || appsById.get(a.coreId()) != a) {
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
   * sent, and the next size once those are served ({@link #applyAllocate}
   * marks the priority again). Counts are summed in a long and capped at
   * Integer.MAX_VALUE: two requests near the int limit do not wrap.
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
        Set<Integer> onHost = nodesByHost.get(name);
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
    return Protocol.ask(priority, cap == null ? Resources.none() : cap,
        (int) Math.min(count, Integer.MAX_VALUE), phaseOf(a, priority), loc, relax, label);
  }

  /** MapReduce's phases by request priority; the AM request before the AM runs. */
  private String phaseOf(SojournAppAttempt a, int priority) {
    RMApp app = rmContext.getRMApps().get(a.getApplicationId());
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

  // ---- applying decisions ---------------------------------------------------------------

  /** Applies decisions in order; returns the follow-up events (confirmations, rejections). */
  private List<ObjectNode> apply(List<JsonNode> decisions, long now) {
    List<ObjectNode> out = new ArrayList<>();
    for (JsonNode d : decisions) {
      String type = d.path("type").asText();
      Protocol.Refused refused;
      try {
        switch (type) {
          case "allocate":
            refused = applyAllocate(d, out);
            break;
          case "preempt":
            refused = applyPreempt(d, now);
            break;
          case "reserve":
          case "unreserve":
            // The core holds the node for the app; YARN needs no reserved container
            // because nothing but the core places containers.
            LOG.debug("sojourn: {}", d);
            refused = null;
            break;
          case "resume":
            refused = applyResume(d);
            break;
          default:
            refused = Protocol.Refused.error("unknown decision type '" + type + "'");
        }
      } catch (RuntimeException e) {
        LOG.warn("sojourn: error applying " + d, e);
        refused = Protocol.Refused.error("error applying the decision: " + e);
      }
      if (refused != null) {
        rejections.incrementAndGet();
        LOG.debug("sojourn: rejected {} ({}): {}", d, refused.kind, refused.why);
        out.add(Protocol.rejected(d, refused.why, refused.kind));
      }
    }
    return out;
  }

  /** Returns null when applied, else why not and whether it could succeed later. */
  private Protocol.Refused applyAllocate(JsonNode d, List<ObjectNode> out) {
    long cid = d.path("container").asLong();
    int appId = d.path("app").asInt();
    int priority = d.path("priority").asInt();
    int nodeNum = d.path("node").asInt();
    JsonNode res = d.path("resources");
    SojournAppAttempt a = appsById.get(appId);
    if (a == null || a.isStopped()) {
      return Protocol.Refused.never("application " + appId + " is gone");
    }
    NodeId nid = nodesById.get(nodeNum);
    FiCaSchedulerNode node = nid == null ? null : nodeTracker.getNode(nid);
    if (node == null) {
      return Protocol.Refused.never("node " + nodeNum + " is gone");
    }
    SchedulerRequestKey key = null;
    Resource cap = null;
    for (SchedulerRequestKey k : a.getSchedulerKeys()) {
      if (k.getPriority().getPriority() != priority) {
        continue;
      }
      PendingAsk pa = a.getPendingAsk(k, ResourceRequest.ANY);
      if (pa.getCount() > 0 && sameSize(pa.getPerAllocationResource(), res)) {
        key = k;
        cap = pa.getPerAllocationResource();
        break;
      }
    }
    if (key == null) {
      return Protocol.Refused.retry("YARN has no outstanding request of " + a.getApplicationAttemptId() + " at priority "
          + priority + " for " + res);
    }
    Resource room = roomFor(node);
    if (!Resources.fitsIn(cap, room)) {
      return Protocol.Refused.retry(cap + " does not fit on " + nid + " (unallocated " + node.getUnallocatedResource()
          + (room == node.getUnallocatedResource() ? "" : ", with suspended containers' vcores " + room)
          + ")");
    }
    if (SchedulerAppUtils.isPlaceBlacklisted(a, node, LOG)) {
      return Protocol.Refused.retry(nid + " is blacklisted for " + a.getApplicationAttemptId());
    }
    NodeType type = localityOf(a, key, node);
    ContainerId id = BuilderUtils.newContainerId(a.getApplicationAttemptId(), a.getNewContainerId());
    Container c = BuilderUtils.newContainer(id, nid, node.getRMNode().getHttpAddress(), cap,
        key.getPriority(), null, key.getAllocationRequestId());
    RMContainer rmc;
    // Under the attempt's monitor (taken before its write lock, the order
    // allocate() uses): the AM pulls new containers under the same monitor, so
    // it cannot see, and release, this one before the node and the id maps
    // know it.
    maxCoreId.accumulateAndGet(cid, Math::max);
    synchronized (a) {
      coreIdOf.put(id, cid);
      rmc = a.allocate(type, node, key, c);
      if (rmc == null) {
        coreIdOf.remove(id);
        return Protocol.Refused.retry("the attempt stopped or withdrew its request meanwhile");
      }
      node.allocateContainer(rmc);
      containers.put(cid, rmc);
    }
    allocations.incrementAndGet();
    out.add(Protocol.containerStarted(cid));
    if (otherSizeWaits(a, priority, cap)) {
      markDirty(a.getApplicationAttemptId(), Collections.singleton(priority));
    }
    LOG.debug("sojourn: allocated {} (core {}) on {} for {} at priority {}", id, cid, nid,
        a.getApplicationAttemptId(), priority);
    return null;
  }

  /** Whether {@code a} also asks at {@code priority} for containers of another size than {@code cap}. */
  private static boolean otherSizeWaits(SojournAppAttempt a, int priority, Resource cap) {
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

  /**
   * The room a new container may take on {@code node}. YARN's own books keep a
   * suspended container (suspend=agent) at its full size: it is still RUNNING,
   * its memory is really held, and releasing it would let YARN hand its memory
   * out. But it uses no CPU, and the core's mirror gives its vcores back to
   * the node (a suspended container holds only its memory and GPUs). So a
   * node's vcores count here as YARN's unallocated vcores plus those of the
   * suspended containers on it; memory and other resources are checked
   * against YARN's books unchanged. The node's allocated vcores may then go
   * above its capacity in YARN's books (in the web UI and the queue metrics)
   * while containers are suspended: CPU is what suspension frees.
   */
  private Resource roomFor(FiCaSchedulerNode node) {
    Resource unallocated = node.getUnallocatedResource();
    if (suspended.isEmpty()) {
      return unallocated;
    }
    int vcores = 0;
    for (RMContainer c : suspended.values()) {
      if (c.getAllocatedNode().equals(node.getNodeID())) {
        vcores += c.getAllocatedResource().getVirtualCores();
      }
    }
    if (vcores == 0) {
      return unallocated;
    }
    Resource room = Resources.clone(unallocated);
    room.setVirtualCores(unallocated.getVirtualCores() + vcores);
    return room;
  }

  private static boolean sameSize(Resource r, JsonNode j) {
    return r.getMemorySize() == j.path("memory_mb").asLong()
        && r.getVirtualCores() == j.path("vcores").asInt()
        && Protocol.gpus(r) == j.path("gpus").asLong(0);
  }

  /** NODE_LOCAL, RACK_LOCAL or OFF_SWITCH as YARN books it for this node. */
  private static NodeType localityOf(SojournAppAttempt a, SchedulerRequestKey key, FiCaSchedulerNode node) {
    boolean rack = a.getOutstandingAsksCount(key, node.getRackName()) > 0;
    if (rack && a.getOutstandingAsksCount(key, node.getNodeName()) > 0) {
      return NodeType.NODE_LOCAL;
    }
    return rack ? NodeType.RACK_LOCAL : NodeType.OFF_SWITCH;
  }

  private Protocol.Refused applyPreempt(JsonNode d, long now) {
    long cid = d.path("container").asLong();
    String mode = d.path("mode").asText();
    if (!"kill".equals(mode) && !"suspend".equals(mode)) {
      return Protocol.Refused.retry("unknown preemption mode '" + mode + "'");
    }
    if ("suspend".equals(mode) && "reject".equals(suspendMode)) {
      if (warnedRejectedSuspend.compareAndSet(false, true)) {
        LOG.warn("sojourn: policy {} suspends containers, but {}=reject: its suspend decisions go "
            + "back to it (set agent or kill)", activePolicy, SojournConfig.SUSPEND);
      }
      return Protocol.Refused.never(NO_SUSPEND);
    }
    RMContainer rmc = containers.get(cid);
    if (rmc == null) {
      return Protocol.Refused.never("container " + cid + " is gone");
    }
    SojournAppAttempt a = getCurrentAttemptForContainer(rmc.getContainerId());
    if (a == null) {
      return Protocol.Refused.never("the application of container " + cid + " is gone");
    }
    if ("suspend".equals(mode) && "agent".equals(suspendMode)) {
      // It stays RUNNING and keeps its resources in YARN's books (see
      // roomFor); the NodeManager's agent pauses it at its next poll.
      if (suspended.putIfAbsent(rmc.getContainerId(), rmc) != null) {
        return Protocol.Refused.retry("container " + rmc.getContainerId() + " is already suspended");
      }
      suspensions.incrementAndGet();
      LOG.info("sojourn: suspending {} of {} on {} (core {}): its NodeManager pauses it",
          rmc.getContainerId(), a.getApplicationAttemptId(), rmc.getAllocatedNode(), cid);
      long read = suspendedListReadAt;
      if (now > AGENT_SILENCE_MS && (read < 0 || now - read > AGENT_SILENCE_MS)
          && warnedNoAgent.compareAndSet(false, true)) {
        LOG.warn("sojourn: {}=agent, but nothing has read the suspended containers' list in the last "
            + "{} s: do the NodeManagers run org.sojourn.yarn.nm.SuspendingContainerExecutor? Without "
            + "it, suspended containers keep running", SojournConfig.SUSPEND, AGENT_SILENCE_MS / 1000);
      }
      return null;
    }
    if (killAt.containsKey(rmc.getContainerId())) {
      return Protocol.Refused.retry("container " + rmc.getContainerId() + " is already being preempted");
    }
    if ("suspend".equals(mode)) {
      // suspend=kill. Accepted as the core sent it: its mirror now holds the
      // container suspended (memory kept, vcores free), and the kill below
      // ends it with ContainerCompleted(preempted), which drops it from the
      // mirror. Until the kill YARN's books still count its vcores, so an
      // allocation that needs them is rejected and retried (as with any
      // kill preemption, the room comes with the kill).
      suspendKills.add(rmc.getContainerId());
      suspensions.incrementAndGet();
    }
    a.markContainerForPreemption(rmc.getContainerId());
    killAt.put(rmc.getContainerId(), now + settings.graceMs);
    LOG.info("sojourn: preempting {} of {}: the AM is asked now, the kill follows in {} ms",
        rmc.getContainerId(), a.getApplicationAttemptId(), settings.graceMs);
    if (settings.graceMs == 0) {
      killExpired(now);
    }
    return null;
  }

  /** Returns null when applied, else why not and whether it could succeed later. */
  private Protocol.Refused applyResume(JsonNode d) {
    long cid = d.path("container").asLong();
    RMContainer rmc = containers.get(cid);
    if (rmc == null) {
      return Protocol.Refused.never("container " + cid + " is gone");
    }
    ContainerId id = rmc.getContainerId();
    if (suspended.remove(id) != null) {
      resumes.incrementAndGet();
      LOG.info("sojourn: resuming {} on {} (core {}): its NodeManager continues it", id,
          rmc.getAllocatedNode(), cid);
      return null;
    }
    if (suspendKills.remove(id)) {
      // suspend=kill, before the kill: the container never stopped, so
      // cancelling the kill is exactly a resume. (The AM may still have been
      // told in a PreemptionMessage, which is advisory.)
      killAt.remove(id);
      resumes.incrementAndGet();
      LOG.info("sojourn: resume of {} before its kill: the kill is cancelled", id);
      return null;
    }
    if ("reject".equals(suspendMode)) {
      return Protocol.Refused.retry(NO_SUSPEND);
    }
    return Protocol.Refused.retry("container " + id + " is not suspended");
  }

  private void killExpired(long now) {
    if (killAt.isEmpty()) {
      return;
    }
    for (Map.Entry<ContainerId, Long> e : killAt.entrySet()) {
      if (e.getValue() <= now && killAt.remove(e.getKey(), e.getValue())) {
        suspendKills.remove(e.getKey());
        RMContainer rmc = getRMContainer(e.getKey());
        if (rmc != null) {
          killPreempted(rmc);
        }
      }
    }
  }

  private void killPreempted(RMContainer rmc) {
    if (rmc == null || rmc.getState() == RMContainerState.COMPLETED
        || rmc.getState() == RMContainerState.KILLED || rmc.getState() == RMContainerState.RELEASED) {
      return;
    }
    SojournAppAttempt a = getCurrentAttemptForContainer(rmc.getContainerId());
    if (a != null) {
      QueueMetrics m = a.getQueue().getMetrics();
      m.preemptContainer();
      m.updatePreemptedResources(rmc.getAllocatedResource());
    }
    preemptionKills.incrementAndGet();
    LOG.info("sojourn: killing preempted container {}", rmc.getContainerId());
    completedContainer(rmc, SchedulerUtils.createPreemptedContainerStatus(rmc.getContainerId(),
        SchedulerUtils.PREEMPTED_CONTAINER), RMContainerEventType.KILL);
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
      Set<Integer> p = new ConcurrentSkipListSet<>();
      p.add(rmContainer.getAllocatedSchedulerKey().getPriority().getPriority());
      markDirty(rmContainer.getApplicationAttemptId(), p);
    }
  }

  @Override
  protected void completedContainerInternal(RMContainer rmContainer, ContainerStatus status,
      RMContainerEventType event) {
    Container container = rmContainer.getContainer();
    ContainerId id = container.getId();
    killAt.remove(id);
    suspendKills.remove(id);
    if (suspended.remove(id) != null) {
      LOG.info("sojourn: suspended container {} completed ({})", id, event);
    }
    Long cid = coreIdOf.remove(id);
    if (cid != null) {
      containers.remove(cid);
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

  // ---- headroom and metrics --------------------------------------------------------------

  private void updateAvailable() {
    QueueTree tree = queues;
    if (tree == null) {
      return;
    }
    Resource used = tree.root().getMetrics().getAllocatedResources();
    Resource avail = Resources.componentwiseMax(
        Resources.subtract(getClusterResource(), used), Resources.none());
    for (SchedulerApplication<SojournAppAttempt> app : applications.values()) {
      SojournAppAttempt a = app.getCurrentAppAttempt();
      if (a != null) {
        a.setHeadroom(avail);
      }
    }
    for (SojournQueue q : tree.all()) {
      q.getMetrics().setAvailableResourcesToQueue(avail);
    }
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
    List<ApplicationId> ids = new ArrayList<>();
    q.collectApps(ids);
    List<ApplicationAttemptId> out = new ArrayList<>(ids.size());
    for (ApplicationId id : ids) {
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

  // ---- for operators and tests --------------------------------------------------------------

  /** The policy's and the mirror's state, plus the shim's counters, as JSON. */
  public String describe() {
    synchronized (coreLock) {
      ObjectNode o = Protocol.JSON.createObjectNode();
      try {
        o.set("core", core != null && core.isOpen() ? Protocol.JSON.readTree(core.describe()) : null);
      } catch (IOException e) {
        o.put("core", "unreadable: " + e);
      } catch (RuntimeException e) {
        coreFailed = true; // rebuilt at the next entry
        o.put("core", "failed: " + e.getMessage());
      } finally {
        Protocol.drainNativeLogs();
      }
      o.put("policy", activePolicy);
      o.put("allocations", allocations.get());
      o.put("rejections", rejections.get());
      o.put("preemption_kills", preemptionKills.get());
      o.put("pending_kills", killAt.size());
      o.put("suspend_mode", suspendMode);
      o.put("suspensions", suspensions.get());
      o.put("resumes", resumes.get());
      o.put("progress_reports", progressReports.get());
      o.put("suspended", suspended.size());
      o.put("recovered_containers", recoveredContainers.get());
      o.put("core_rebuilds", rebuilds.get());
      o.put("drift_resyncs", driftResyncs.get());
      return o.toString();
    }
  }

  /**
   * Applies decisions as if the core had made them (JSON array), then sends
   * the follow-ups. For tests of the shim's paths that no current policy
   * exercises (kill preemption).
   */
  void applyForTest(String decisionsJson) throws IOException {
    synchronized (coreLock) {
      List<JsonNode> ds = new ArrayList<>();
      for (JsonNode d : Protocol.JSON.readTree(decisionsJson)) {
        ds.add(d);
      }
      long now = now();
      List<ObjectNode> follow = apply(ds, now);
      drainPending(follow);
      send(follow, now);
    }
  }

  /** The shim's container map (core id -> YARN container and state), for tests. */
  String debugContainers() {
    StringBuilder b = new StringBuilder();
    for (Map.Entry<Long, RMContainer> e : new TreeMap<>(containers).entrySet()) {
      b.append(e.getKey()).append('=').append(e.getValue().getContainerId()).append('/')
          .append(e.getValue().getState()).append(' ');
    }
    return b.toString();
  }

  /** The core's id of a YARN container, or null. */
  Long coreIdOf(ContainerId id) {
    return coreIdOf.get(id);
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
  public String[] getLeafQueues() {
    return queues.leafPaths().toArray(new String[0]);
  }

  @Override
  public long getAllocations() {
    return allocations.get();
  }

  @Override
  public long getRejections() {
    return rejections.get();
  }

  @Override
  public long getRecoveredContainers() {
    return recoveredContainers.get();
  }

  @Override
  public long getCoreRebuilds() {
    return rebuilds.get();
  }

  @Override
  public long getDriftResyncs() {
    return driftResyncs.get();
  }

  /** Sends the core a completion YARN never saw, so its mirror drifts (tests only). */
  void forgetInCoreForTest(ContainerId id) {
    synchronized (coreLock) {
      Long cid = coreIdOf.get(id);
      List<ObjectNode> batch = new ArrayList<>();
      drainPending(batch); // as every entry does
      batch.add(Protocol.containerCompleted(cid, "finished"));
      send(batch, now());
    }
  }

  /** One drift check, as the timer thread makes them (tests only). */
  boolean checkDriftForTest() {
    synchronized (coreLock) {
      return checkDrift();
    }
  }

  /** Panics inside the live core, as a policy bug would (tests only). */
  void panicInCoreForTest() {
    synchronized (coreLock) {
      try {
        core.panicInCoreForTest();
      } catch (RuntimeException e) {
        LOG.error("sojourn: native call failed; the core will be rebuilt from YARN's books", e);
        coreFailed = true;
      }
    }
  }

  @Override
  public long getPreemptionKills() {
    return preemptionKills.get();
  }

  @Override
  public long getProgressReports() {
    return progressReports.get();
  }

  @Override
  public long getAmProgressRefusals() {
    MapReduceProgress p = amProgress;
    return p == null ? 0 : p.refusals();
  }

  @Override
  public String getSuspendMode() {
    return suspendMode;
  }

  /** Read by the NodeManagers' SuspendingContainerExecutor (sorted, YARN container ids). */
  @Override
  public String[] getSuspendedContainers() {
    suspendedListReadAt = now();
    List<String> ids = new ArrayList<>();
    for (ContainerId id : suspended.keySet()) {
      ids.add(id.toString());
    }
    java.util.Collections.sort(ids);
    return ids.toArray(new String[0]);
  }

  /** What the NodeManagers' agents act on: the same list, signed (SuspendListSigner). */
  @Override
  public String getSignedSuspendedContainers() {
    return suspendSigner.sign(getSuspendedContainers());
  }

  long rejectionCount() {
    return rejections.get();
  }

  long allocationCount() {
    return allocations.get();
  }
}
