package org.sojourn.yarn.sls;

import com.codahale.metrics.Timer;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerExitStatus;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.api.records.SchedulingRequest;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.UpdatedContainerInfo;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Allocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ContainerUpdates;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerAppReport;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAttemptAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAttemptRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeUpdateSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEventType;
import org.apache.hadoop.yarn.sls.SLSRunner;
import org.apache.hadoop.yarn.sls.conf.SLSConfiguration;
import org.apache.hadoop.yarn.sls.scheduler.NodeUpdateSchedulerEventWrapper;
import org.apache.hadoop.yarn.sls.scheduler.SchedulerMetrics;
import org.apache.hadoop.yarn.sls.scheduler.SchedulerWrapper;
import org.apache.hadoop.yarn.sls.scheduler.SojournSlsAccess;
import org.apache.hadoop.yarn.sls.scheduler.Tracker;
import org.apache.hadoop.yarn.util.resource.Resources;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.sojourn.yarn.SojournScheduler;

/**
 * Sojourn inside Hadoop's Scheduler Load Simulator (SLS, Hadoop 3.3.x).
 *
 * <p>SLS runs the real ResourceManager and casts its scheduler to {@link SchedulerWrapper}.
 * It swaps its own wrappers in for the Capacity and Fair schedulers only; any other class
 * is used as configured. So configure this class as {@code yarn.resourcemanager.scheduler.class}
 * in the SLS run's yarn-site.xml. Its decisions are {@link SojournScheduler}'s, unchanged;
 * this class adds what SLSFairScheduler adds to FairScheduler: the allocate/handle timers and
 * counters, queue metrics, and telling SLSRunner when an application attempt is removed
 * (SLS ends the simulation when none remain).
 *
 * <p>Its metrics class comes from the SLS configuration key {@code org.sojourn.yarn.SojournScheduler}
 * (default: {@link SojournSchedulerMetrics}). Metrics follow {@code yarn.sls.metrics.switch}.
 */
public class SLSSojournScheduler extends SojournScheduler implements SchedulerWrapper {
  private static final Logger LOG = LoggerFactory.getLogger(SLSSojournScheduler.class);

  private final Tracker tracker = new Tracker();
  private final Map<ApplicationAttemptId, String> appQueue = new ConcurrentHashMap<>();
  private final Map<ContainerId, Resource> preempted = new ConcurrentHashMap<>();
  private volatile SchedulerMetrics metrics;
  private volatile boolean metricsOn;

  @Override
  public void setConf(Configuration configuration) {
    super.setConf(configuration);
    // The RM calls setConf when it creates the scheduler, and SojournScheduler.serviceInit
    // calls it again: start SLS's metrics once.
    if (metrics != null) {
      return;
    }
    metricsOn = configuration.getBoolean(SLSConfiguration.METRICS_SWITCH, true);
    if (!metricsOn) {
      return;
    }
    try {
      Configuration c = configuration;
      if (c.get(SojournScheduler.class.getName()) == null) {
        c = new Configuration(configuration);
        c.set(SojournScheduler.class.getName(), SojournSchedulerMetrics.class.getName());
      }
      // Published before init: SLS's web app asks this scheduler for its metrics in init.
      metrics = SojournSlsAccess.newMetrics(c, SojournScheduler.class);
      SojournSlsAccess.init(metrics, this, configuration);
    } catch (Exception e) {
      LOG.error("sojourn-sls: SLS metrics could not start; running without them", e);
      metricsOn = false;
      metrics = null;
    }
  }

  @Override
  public Allocation allocate(ApplicationAttemptId attemptId, List<ResourceRequest> ask,
      List<SchedulingRequest> schedulingRequests, List<ContainerId> release,
      List<String> blacklistAdditions, List<String> blacklistRemovals,
      ContainerUpdates updateRequests) {
    SchedulerMetrics m = metrics;
    if (!metricsOn || m == null) {
      return super.allocate(attemptId, ask, schedulingRequests, release, blacklistAdditions,
          blacklistRemovals, updateRequests);
    }
    Timer.Context t = SojournSlsAccess.allocateTimer(m).time();
    Allocation allocation = null;
    try {
      allocation = super.allocate(attemptId, ask, schedulingRequests, release,
          blacklistAdditions, blacklistRemovals, updateRequests);
      return allocation;
    } finally {
      t.stop();
      SojournSlsAccess.countAllocate(m);
      if (allocation != null) {
        try {
          queueMetricsOnAllocate(m, allocation, attemptId, ask, release);
        } catch (RuntimeException e) {
          LOG.warn("sojourn-sls: queue metrics after allocate", e);
        }
      }
    }
  }

  /** Pending and allocated resource of the attempt's queue, as SLS's own wrappers count them. */
  private void queueMetricsOnAllocate(SchedulerMetrics m, Allocation allocation,
      ApplicationAttemptId attemptId, List<ResourceRequest> ask, List<ContainerId> release) {
    String queue = appQueue.get(attemptId);
    if (queue == null) {
      return;
    }
    Resource pending = Resources.createResource(0, 0);
    Resource allocated = Resources.createResource(0, 0);
    if (ask != null) {
      for (ResourceRequest r : ask) {
        if (ResourceRequest.ANY.equals(r.getResourceName())) {
          Resources.addTo(pending, Resources.multiply(r.getCapability(), r.getNumContainers()));
        }
      }
    }
    for (Container c : allocation.getContainers()) {
      Resources.addTo(allocated, c.getResource());
      Resources.subtractFrom(pending, c.getResource());
    }
    SchedulerAppReport report = getSchedulerAppInfo(attemptId);
    if (report != null && release != null) {
      for (ContainerId id : release) {
        Resource r = resourceOf(report.getLiveContainers(), id);
        if (r != null) {
          Resources.subtractFrom(allocated, r);
        } else if ((r = resourceOf(report.getReservedContainers(), id)) != null) {
          Resources.subtractFrom(pending, r);
        }
      }
    }
    if (report != null && allocation.getContainerPreemptions() != null) {
      for (ContainerId id : allocation.getContainerPreemptions()) {
        Resource r = resourceOf(report.getLiveContainers(), id);
        if (r != null) {
          preempted.putIfAbsent(id, r);
        }
      }
    }
    SojournSlsAccess.queueUpdate(m, pending, allocated, queue);
  }

  private static Resource resourceOf(Iterable<RMContainer> containers, ContainerId id) {
    if (containers == null) {
      return null;
    }
    for (RMContainer c : containers) {
      if (c.getContainerId().equals(id)) {
        return c.getContainer().getResource();
      }
    }
    return null;
  }

  @Override
  public void handle(SchedulerEvent event) {
    SchedulerMetrics m = metrics;
    if (!metricsOn || m == null) {
      super.handle(event);
      afterHandle(event);
      return;
    }
    SojournSlsAccess.markRunning(m);
    Timer.Context all = null;
    Timer.Context byType = null;
    try {
      if (event.getType() == SchedulerEventType.NODE_UPDATE
          && event instanceof NodeUpdateSchedulerEvent) {
        // As SLS's own wrappers do: pull the node's container updates once, so that
        // released resource can be counted per queue before the scheduler consumes them.
        NodeUpdateSchedulerEventWrapper w =
            new NodeUpdateSchedulerEventWrapper((NodeUpdateSchedulerEvent) event);
        event = w;
        queueMetricsOnNodeUpdate(m, w);
      } else if (event.getType() == SchedulerEventType.APP_ATTEMPT_REMOVED
          && event instanceof AppAttemptRemovedSchedulerEvent) {
        ApplicationAttemptId id = ((AppAttemptRemovedSchedulerEvent) event).getApplicationAttemptID();
        SchedulerAppReport app = getSchedulerAppInfo(id);
        String queue = appQueue.get(id);
        if (app != null && queue != null && !app.getLiveContainers().isEmpty()) {
          // What is left is the AM container.
          RMContainer am = app.getLiveContainers().iterator().next();
          SojournSlsAccess.queueRelease(m, am.getContainer().getResource(), queue);
        }
      }
      all = SojournSlsAccess.handleTimer(m).time();
      byType = SojournSlsAccess.handleTimer(m, event.getType()).time();
      super.handle(event);
    } finally {
      if (all != null) {
        all.stop();
      }
      if (byType != null) {
        byType.stop();
      }
      SojournSlsAccess.countHandle(m, event.getType());
      afterHandle(event);
    }
  }

  /** Queue bookkeeping, and SLSRunner's count of live applications (it exits at zero). */
  private void afterHandle(SchedulerEvent event) {
    if (event.getType() == SchedulerEventType.APP_ATTEMPT_ADDED
        && event instanceof AppAttemptAddedSchedulerEvent) {
      ApplicationAttemptId id = ((AppAttemptAddedSchedulerEvent) event).getApplicationAttemptId();
      SchedulerApplication<?> app = getSchedulerApplications().get(id.getApplicationId());
      if (app != null && app.getQueue() != null) {
        appQueue.put(id, app.getQueue().getQueueName());
      }
    } else if (event.getType() == SchedulerEventType.APP_ATTEMPT_REMOVED
        && event instanceof AppAttemptRemovedSchedulerEvent) {
      appQueue.remove(((AppAttemptRemovedSchedulerEvent) event).getApplicationAttemptID());
      SLSRunner.decreaseRemainingApps();
    }
  }

  private void queueMetricsOnNodeUpdate(SchedulerMetrics m, NodeUpdateSchedulerEventWrapper w) {
    List<UpdatedContainerInfo> updates = SojournSlsAccess.containerUpdates(w);
    if (updates == null) {
      return;
    }
    for (UpdatedContainerInfo info : updates) {
      for (ContainerStatus status : info.getCompletedContainers()) {
        ContainerId id = status.getContainerId();
        SchedulerAppReport app = getSchedulerAppInfo(id.getApplicationAttemptId());
        String queue = appQueue.get(id.getApplicationAttemptId());
        if (app == null || queue == null) {
          continue; // the AM container, reported after its application left
        }
        Resource released = null;
        if (status.getExitStatus() == ContainerExitStatus.SUCCESS) {
          released = resourceOf(app.getLiveContainers(), id);
        } else if (status.getExitStatus() == ContainerExitStatus.ABORTED) {
          released = preempted.remove(id);
        }
        if (released != null) {
          SojournSlsAccess.queueRelease(m, released, queue);
        }
      }
    }
  }

  @Override
  public void serviceStop() throws Exception {
    SchedulerMetrics m = metrics;
    if (metricsOn && m != null) {
      try {
        SojournSlsAccess.tearDown(m);
      } catch (Exception e) {
        LOG.warn("sojourn-sls: SLS metrics tear-down", e);
      }
    }
    super.serviceStop();
  }

  @Override
  public SchedulerMetrics getSchedulerMetrics() {
    return metrics;
  }

  @Override
  public Tracker getTracker() {
    return tracker;
  }

  /** The queue's name as Sojourn reports it; unknown queues are an error, as in SLSFairScheduler. */
  @Override
  public String getRealQueueName(String queue) throws YarnException {
    try {
      return getQueueInfo(queue, false, false).getQueueName();
    } catch (IOException e) {
      throw new YarnException("Can't find the queue by the given name: " + queue
          + " (configure it under yarn.scheduler.sojourn.queue.root.queues)", e);
    }
  }
}
