package org.sojourn.yarn.nm;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.util.Shell;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.server.nodemanager.Context;
import org.apache.hadoop.yarn.server.nodemanager.DefaultContainerExecutor;
import org.apache.hadoop.yarn.server.nodemanager.containermanager.container.Container;
import org.apache.hadoop.yarn.server.nodemanager.containermanager.container.ContainerState;
import org.apache.hadoop.yarn.server.nodemanager.executor.ContainerSignalContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link DefaultContainerExecutor} that can pause and resume containers, so
 * Sojourn's suspend decisions work on a stock Hadoop 3.3 NodeManager.
 *
 * <p>Set {@code yarn.nodemanager.container-executor.class} to this class and
 * put the Sojourn jar on the NodeManager's classpath. Two parts:
 * <ul>
 *   <li><b>Mechanism.</b> {@link #pauseContainer} / {@link #resumeContainer},
 *   which Hadoop declares on every executor since YARN-5292 but leaves
 *   unimplemented, send SIGSTOP / SIGCONT to the container's whole process
 *   group. DefaultContainerExecutor starts each container through
 *   {@code exec setsid}, so the pid in its pid file leads a process group
 *   holding the launch script and everything it started
 *   ({@code kill -STOP -- -<pid>}). A stopped process keeps its memory and
 *   uses no CPU; SIGCONT continues it where it stopped.</li>
 *   <li><b>Channel.</b> A daemon thread reads the ResourceManager's list of
 *   suspended containers every {@code yarn.nodemanager.sojourn.suspend.poll-ms}
 *   (500 ms) from its JMX servlet (see {@link RmSuspendList}). A RUNNING
 *   container of this node that is listed is stopped; one it stopped that is
 *   no longer listed is continued. When no RM answers, nothing changes
 *   (logged at WARN once until it answers again).</li>
 * </ul>
 *
 * <p>Why the agent signals the processes itself instead of sending the
 * NodeManager's own PAUSE event (YARN-5292's PAUSING/PAUSED states): on
 * CONTAINER_PAUSED, Hadoop 3.3's ContainerScheduler re-queues a paused
 * GUARANTEED container and starts its queued guaranteed containers at once,
 * which resumes it within milliseconds (seen in the MiniYARNCluster test).
 * That path is built for OPPORTUNISTIC containers only. So the NodeManager
 * keeps seeing the container RUNNING (its memory monitoring goes on, which is
 * right: the memory is held), and only the RM and this agent know it is
 * paused.
 *
 * <p>Limits: DefaultContainerExecutor only (not LinuxContainerExecutor, whose
 * containers run as other users and under cgroups); CPU only (memory stays
 * held); an AM does not learn its container was paused, so its liveness
 * timeouts (MapReduce's {@code mapreduce.task.timeout}) must allow for it.
 */
public class SuspendingContainerExecutor extends DefaultContainerExecutor {
  private static final Logger LOG = LoggerFactory.getLogger(SuspendingContainerExecutor.class);
  public static final String POLL_MS = "yarn.nodemanager.sojourn.suspend.poll-ms";
  public static final long DEFAULT_POLL_MS = 500;

  private volatile Context nmContext;
  private volatile Thread agent;
  private volatile boolean running;
  /** Containers the agent stopped (by id), with the pid of their process group. */
  private final ConcurrentHashMap<ContainerId, String> pausedByUs = new ConcurrentHashMap<>();

  @Override
  public void init(Context context) throws IOException {
    super.init(context);
    this.nmContext = context;
  }

  @Override
  public synchronized void start() {
    super.start();
    if (agent != null) {
      return;
    }
    Configuration conf = getConf();
    final long pollMs = Math.max(10, conf.getLong(POLL_MS, DEFAULT_POLL_MS));
    final RmSuspendList rm = new RmSuspendList(conf, (int) Math.max(1000, Math.min(5000, 2 * pollMs)));
    running = true;
    Thread t = new Thread(() -> loop(rm, pollMs), "SojournSuspendAgent");
    t.setDaemon(true);
    agent = t;
    t.start();
    LOG.info("sojourn: suspend agent started: polls {} every {} ms; pauses with SIGSTOP to the "
        + "container's process group", rm.urls(), pollMs);
  }

  @Override
  public synchronized void stop() {
    running = false;
    Thread t = agent;
    agent = null;
    if (t != null) {
      t.interrupt();
      try {
        t.join(5000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    super.stop();
  }

  // ---- the channel: poll the RM, reconcile ------------------------------------------

  private void loop(RmSuspendList rm, long pollMs) {
    boolean rmDown = false;
    while (running) {
      try {
        List<String> errors = new ArrayList<>();
        Set<String> listed = rm.fetch(errors);
        if (listed == null) {
          if (!rmDown) {
            rmDown = true;
            LOG.warn("sojourn: suspend agent cannot read the ResourceManager's suspended containers "
                + "({}); paused containers stay paused until it answers", errors);
          }
        } else {
          if (rmDown) {
            rmDown = false;
            LOG.info("sojourn: suspend agent reads the ResourceManager again");
          }
          reconcile(listed);
        }
      } catch (RuntimeException e) {
        LOG.warn("sojourn: suspend agent round failed", e);
      }
      try {
        TimeUnit.MILLISECONDS.sleep(pollMs);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  /** Stops the listed containers this node runs, continues those it stopped that are not listed. */
  void reconcile(Set<String> listed) {
    Context ctx = nmContext;
    if (ctx == null) {
      return;
    }
    for (Container c : ctx.getContainers().values()) {
      ContainerId id = c.getContainerId();
      boolean want = listed.contains(id.toString());
      String stoppedPid = pausedByUs.get(id);
      if (want && c.getContainerState() == ContainerState.RUNNING) {
        String pid = getProcessId(id);
        if (pid == null || pid.equals(stoppedPid)) {
          continue; // no pid yet (next round), or already stopped
        }
        try {
          kill("STOP", pid);
          pausedByUs.put(id, pid);
          LOG.info("sojourn: paused {} (SIGSTOP to process group {}): the ResourceManager holds it "
              + "suspended", id, pid);
        } catch (IOException e) {
          LOG.warn("sojourn: SIGSTOP to {} (pid {}) failed; retried next round: {}", id, pid, e.toString());
        }
      } else if (!want && stoppedPid != null) {
        try {
          kill("CONT", stoppedPid);
          LOG.info("sojourn: resumed {} (SIGCONT to process group {}): the ResourceManager resumed it",
              id, stoppedPid);
        } catch (IOException e) {
          LOG.info("sojourn: SIGCONT to {} (pid {}) failed, it has ended: {}", id, stoppedPid, e.toString());
        }
        pausedByUs.remove(id);
      }
    }
    // Forget containers the NodeManager no longer has.
    pausedByUs.keySet().retainAll(ctx.getContainers().keySet());
  }

  /** The containers the agent holds stopped (for tests and logs). */
  public Set<ContainerId> pausedContainers() {
    return java.util.Collections.unmodifiableSet(pausedByUs.keySet());
  }

  // ---- the mechanism: signals to the process group --------------------------------------

  /** Hadoop's hook (used by the NodeManager's own pause path, for OPPORTUNISTIC containers). */
  @Override
  public void pauseContainer(Container container) {
    signalGroup(container, "STOP");
  }

  @Override
  public void resumeContainer(Container container) {
    signalGroup(container, "CONT");
  }

  /**
   * A paused container that the NodeManager terminates (its app ended, the RM
   * killed it) is continued after the signal, so SIGTERM reaches a running
   * process and its shutdown hooks run; SIGKILL needs no help.
   */
  @Override
  public boolean signalContainer(ContainerSignalContext ctx) throws IOException {
    boolean ok = super.signalContainer(ctx);
    Container c = ctx.getContainer();
    if (c != null && ctx.getPid() != null && ctx.getSignal() != Signal.NULL
        && (pausedByUs.containsKey(c.getContainerId()) || c.getContainerState() == ContainerState.PAUSED)) {
      pausedByUs.remove(c.getContainerId());
      try {
        kill("CONT", ctx.getPid());
      } catch (IOException e) {
        LOG.debug("sojourn: SIGCONT after {} to {} failed", ctx.getSignal(), ctx.getPid(), e);
      }
    }
    return ok;
  }

  private void signalGroup(Container container, String signal) {
    ContainerId id = container.getContainerId();
    String pid = getProcessId(id);
    if (pid == null) {
      pid = pausedByUs.get(id);
    }
    if (pid == null) {
      throw new IllegalStateException("sojourn: no pid for " + id + ": cannot send SIG" + signal);
    }
    try {
      kill(signal, pid);
      LOG.info("sojourn: SIG{} sent to {} (process group {})", signal, id, pid);
    } catch (IOException e) {
      throw new IllegalStateException("sojourn: SIG" + signal + " to " + id + " (pid " + pid + ") failed: " + e, e);
    }
  }

  /** {@code kill -SIG -- -pid} (the group) where setsid exists, else the pid alone. */
  static void kill(String signal, String pid) throws IOException {
    if (!pid.matches("[0-9]+")) {
      throw new IOException("not a pid: '" + pid + "'");
    }
    String target = Shell.isSetsidAvailable ? "-- -" + pid : pid;
    new Shell.ShellCommandExecutor(new String[] {"bash", "-c", "kill -" + signal + " " + target}).execute();
  }
}
