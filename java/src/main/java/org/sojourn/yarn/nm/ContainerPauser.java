package org.sojourn.yarn.nm;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent's bookkeeping of the containers it stopped: which process group
 * each one is, and the rule that a signal goes to that group only while it
 * is still the container's. Free of NodeManager classes, so it is tested alone
 * ({@link SuspendingContainerExecutor} feeds it the NodeManager's containers).
 *
 * <p>A container's group is named by the pid in its pid file (its leader,
 * started through {@code setsid}). A pid is a number the kernel hands out
 * again once its process has ended, so the agent records the leader's start
 * time ({@code /proc/<pid>/stat}, field 22) when it stops the group, and
 * before any later signal checks that the pid still leads its own group with
 * that same start time, and that the container's pid file names it still. If
 * not, the container's processes have ended: the agent sends nothing and
 * forgets the container. It also forgets a container the NodeManager no
 * longer has.
 */
final class ContainerPauser {
  private static final Logger LOG = LoggerFactory.getLogger(ContainerPauser.class);

  /** Sends {@code kill -SIG} to a process group. */
  interface Signaller {
    void signal(String signal, String pid) throws IOException;
  }

  /** One container as the NodeManager sees it now. */
  static final class View {
    final String id;
    final boolean running;
    /** The pid in its pid file now; null before it has one, or after. */
    final String pid;

    View(String id, boolean running, String pid) {
      this.id = id;
      this.running = running;
      this.pid = pid;
    }
  }

  /** A process group leader: its pid and its start time (clock ticks after boot). */
  static final class Leader {
    final String pid;
    final long startTicks;

    Leader(String pid, long startTicks) {
      this.pid = pid;
      this.startTicks = startTicks;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Leader && ((Leader) o).pid.equals(pid) && ((Leader) o).startTicks == startTicks;
    }

    @Override
    public int hashCode() {
      return pid.hashCode() * 31 + Long.hashCode(startTicks);
    }

    @Override
    public String toString() {
      return pid + " (started at tick " + startTicks + ")";
    }
  }

  private final File procRoot;
  private final Signaller signaller;
  /** Containers this agent stopped, by id, with their group's leader as it was then. */
  private final Map<String, Leader> paused = new ConcurrentHashMap<>();

  ContainerPauser(File procRoot, Signaller signaller) {
    this.procRoot = procRoot;
    this.signaller = signaller;
  }

  /**
   * The leader of a process group as {@code /proc} shows it now: null if no
   * process has that pid, or if it is not the leader of its own group (then it
   * is not a container's setsid leader).
   */
  Leader leader(String pid) {
    if (pid == null || !pid.matches("[0-9]+")) {
      return null;
    }
    String stat;
    try {
      stat = new String(Files.readAllBytes(new File(procRoot, pid + "/stat").toPath()), StandardCharsets.US_ASCII);
    } catch (IOException e) {
      return null; // gone
    }
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and ')', so fields count from the last ')'.
    int close = stat.lastIndexOf(')');
    String[] f = close < 0 ? new String[0] : stat.substring(close + 1).trim().split("\\s+");
    if (f.length < 20) {
      return null;
    }
    try {
      if (!f[2].equals(pid)) {
        return null; // pgrp (field 5) is not itself
      }
      return new Leader(pid, Long.parseLong(f[19])); // starttime, field 22
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /**
   * Stops the listed RUNNING containers, continues those it stopped that are
   * no longer listed (or no longer running), each only while its group is
   * still its own; forgets the containers that are gone.
   */
  void reconcile(Set<String> listed, Collection<View> containers) {
    Set<String> present = new HashSet<>();
    for (View c : containers) {
      present.add(c.id);
      Leader stopped = paused.get(c.id);
      boolean want = listed.contains(c.id) && c.running;
      if (want && stopped == null) {
        stop(c);
      } else if (want) {
        if (!stillTheContainers(c, stopped)) {
          paused.remove(c.id); // relaunched meanwhile: stopped again next round
        }
      } else if (stopped != null) {
        resume(c, stopped);
      }
    }
    for (String id : paused.keySet()) {
      if (!present.contains(id)) {
        LOG.info("sojourn: forgetting {}: the NodeManager no longer has it (no signal sent)", id);
        paused.remove(id);
      }
    }
  }

  private void stop(View c) {
    Leader l = leader(c.pid);
    if (l == null) {
      if (c.pid != null) {
        LOG.debug("sojourn: {}: pid {} does not lead a process group now; not stopped", c.id, c.pid);
      }
      return; // no pid yet, or its leader is gone: next round
    }
    try {
      signaller.signal("STOP", l.pid);
      paused.put(c.id, l);
      LOG.info("sojourn: paused {} (SIGSTOP to process group {}): the ResourceManager holds it suspended",
          c.id, l.pid);
    } catch (IOException e) {
      LOG.warn("sojourn: SIGSTOP to {} (process group {}) failed; retried next round: {}", c.id, l.pid, e.toString());
    }
  }

  private void resume(View c, Leader stopped) {
    paused.remove(c.id);
    if (!stillTheContainers(c, stopped)) {
      LOG.info("sojourn: not continuing {}: process group {} is no longer its own (ended, or its pid "
          + "was reused); forgotten", c.id, stopped);
      return;
    }
    try {
      signaller.signal("CONT", stopped.pid);
      LOG.info("sojourn: resumed {} (SIGCONT to process group {}): the ResourceManager resumed it",
          c.id, stopped.pid);
    } catch (IOException e) {
      LOG.info("sojourn: SIGCONT to {} (process group {}) failed, it has ended: {}", c.id, stopped.pid, e.toString());
    }
  }

  /** The group stopped is still this container's: same leader, and its pid file (if any) names it. */
  private boolean stillTheContainers(View c, Leader stopped) {
    return (c.pid == null || c.pid.equals(stopped.pid)) && stopped.equals(leader(stopped.pid));
  }

  /**
   * Forgets a container (the NodeManager is ending it); returns whether the
   * agent held it stopped and its group is still the one it stopped.
   */
  boolean forget(String id) {
    Leader l = paused.remove(id);
    return l != null && l.equals(leader(l.pid));
  }

  boolean isPaused(String id) {
    return paused.containsKey(id);
  }

  Set<String> paused() {
    return Collections.unmodifiableSet(paused.keySet());
  }
}
