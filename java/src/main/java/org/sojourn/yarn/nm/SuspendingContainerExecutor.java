package org.sojourn.yarn.nm;

import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
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
 *   (500 ms) from its JMX servlet (see {@link RmSuspendList}), signed by the RM
 *   with the shared secret of {@value SuspendListMac#SECRET_FILE}. A RUNNING
 *   container of this node that is listed is stopped; one it stopped that is
 *   no longer listed is continued, if its process group is still its own
 *   ({@link ContainerPauser}). When no RM answers, or the list is refused
 *   (unsigned, badly signed, replayed, oversized), nothing changes (logged
 *   once until a good list arrives). Without a usable secret the agent does
 *   not start: one ERROR at start-up names the key or the file.</li>
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
  /** The containers the agent stopped, and the check that a signal still reaches the right group. */
  private final ContainerPauser pauser = new ContainerPauser(new File("/proc"), SuspendingContainerExecutor::kill);
  /** The last poll's outcome, so each change is logged once: null (a good list), "down" or "refused". */
  private String trouble;

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
    byte[] secret;
    try {
      secret = SuspendListMac.readSecret(conf);
    } catch (IOException e) {
      LOG.error("sojourn: suspend agent not started: {}. Containers the ResourceManager suspends on this node "
          + "keep running", e.getMessage());
      return;
    }
    if (secret == null) {
      LOG.error("sojourn: suspend agent not started: {} is not set. The agent acts only on lists the "
          + "ResourceManager signs with that shared secret (java/README-shim.md, \"Suspend and resume\"); "
          + "containers the ResourceManager suspends on this node keep running", SuspendListMac.SECRET_FILE);
      return;
    }
    final long pollMs = Math.max(10, conf.getLong(POLL_MS, DEFAULT_POLL_MS));
    final RmSuspendList rm = new RmSuspendList(conf, (int) Math.max(1000, Math.min(5000, 2 * pollMs)), secret);
    running = true;
    Thread t = new Thread(() -> loop(rm, pollMs), "SojournSuspendAgent");
    t.setDaemon(true);
    agent = t;
    t.start();
    LOG.info("sojourn: suspend agent started: polls {} every {} ms, acts on lists signed with the secret of {}; "
        + "pauses with SIGSTOP to the container's process group", rm.urls(), pollMs, SuspendListMac.SECRET_FILE);
  }

  /** Whether the agent polls the RM (false without a usable secret). */
  public boolean agentRunning() {
    return agent != null;
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
    while (running) {
      try {
        round(rm);
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

  /** One poll: a good list is acted on; otherwise nothing is stopped or continued. */
  void round(RmSuspendList rm) {
    RmSuspendList.Poll p = rm.poll();
    if (p.containers == null) {
      String now = p.refused ? "refused" : "down";
      if (!now.equals(trouble)) {
        trouble = now;
        if (p.refused) {
          LOG.error("sojourn: suspend agent refuses the ResourceManager's list ({}); nothing is stopped or "
              + "continued until a list signed with the secret of {} arrives", p.problems, SuspendListMac.SECRET_FILE);
        } else {
          LOG.warn("sojourn: suspend agent cannot read the ResourceManager's suspended containers "
              + "({}); paused containers stay paused until it answers", p.problems);
        }
      }
      return;
    }
    if (trouble != null) {
      trouble = null;
      LOG.info("sojourn: suspend agent reads a signed list from the ResourceManager again");
    }
    reconcile(p.containers);
  }

  /** Stops the listed containers this node runs, continues those it stopped that are not listed. */
  void reconcile(Set<String> listed) {
    Context ctx = nmContext;
    if (ctx == null) {
      return;
    }
    List<ContainerPauser.View> views = new ArrayList<>();
    for (Container c : ctx.getContainers().values()) {
      ContainerId id = c.getContainerId();
      views.add(new ContainerPauser.View(id.toString(), c.getContainerState() == ContainerState.RUNNING,
          getProcessId(id)));
    }
    pauser.reconcile(listed, views);
  }

  /** The containers the agent holds stopped (for tests and logs). */
  public Set<ContainerId> pausedContainers() {
    Set<ContainerId> out = new HashSet<>();
    for (String id : pauser.paused()) {
      out.add(ContainerId.fromString(id));
    }
    return Collections.unmodifiableSet(out);
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
        && (pauser.isPaused(c.getContainerId().toString()) || c.getContainerState() == ContainerState.PAUSED)) {
      // The NodeManager just signalled this pid itself, so it is still the container's.
      pauser.forget(c.getContainerId().toString());
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
