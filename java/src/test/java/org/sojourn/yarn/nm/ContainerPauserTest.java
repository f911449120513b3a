package org.sojourn.yarn.nm;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.Before;
import org.junit.Test;

/**
 * Which signals the agent sends: only to a process group that is still the
 * container's. A fake /proc stands for the kernel's, so a pid can be "reused".
 */
public class ContainerPauserTest {
  private static final String C1 = "container_1_0001_01_000002";
  private static final String C2 = "container_1_0001_01_000003";

  private File proc;
  private final List<String> sent = new ArrayList<>();
  private ContainerPauser pauser;

  @Before
  public void fakeProc() throws IOException {
    proc = Files.createTempDirectory("fake-proc").toFile();
    pauser = new ContainerPauser(proc, (signal, pid) -> sent.add(signal + " " + pid));
  }

  /** A process {@code pid} in group {@code pgrp}, started at {@code start} ticks after boot. */
  private void process(String pid, String pgrp, long start) throws IOException {
    File d = new File(proc, pid);
    d.mkdirs();
    Files.write(new File(d, "stat").toPath(), (pid + " (bash) S 1 " + pgrp + " " + pgrp
        + " 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 " + start + " 1000 200 18446744073709551615\n")
        .getBytes(StandardCharsets.US_ASCII));
  }

  private void ended(String pid) {
    new File(proc, pid + "/stat").delete();
  }

  private static Set<String> listed(String... ids) {
    return new HashSet<>(Arrays.asList(ids));
  }

  private static List<ContainerPauser.View> running(String id, String pid) {
    return Collections.singletonList(new ContainerPauser.View(id, true, pid));
  }

  @Test
  public void aListedContainerIsStoppedOnceAndContinuedWhenUnlisted() throws Exception {
    process("4242", "4242", 100);
    pauser.reconcile(listed(C1), running(C1, "4242"));
    pauser.reconcile(listed(C1), running(C1, "4242"));
    assertEquals(Collections.singletonList("STOP 4242"), sent);
    assertEquals(Collections.singleton(C1), pauser.paused());
    pauser.reconcile(listed(), running(C1, "4242"));
    assertEquals(Arrays.asList("STOP 4242", "CONT 4242"), sent);
    assertTrue(pauser.paused().isEmpty());
  }

  /**
   * The container ended while stopped and its pid now belongs to another
   * process (another start time): no SIGCONT goes to it, and the container is
   * forgotten. The same when the pid is free and when the NodeManager no
   * longer has the container at all.
   */
  @Test
  public void aGroupThatIsNoLongerTheContainersGetsNoSignal() throws Exception {
    process("4242", "4242", 100);
    process("5151", "5151", 300);
    List<ContainerPauser.View> both = Arrays.asList(
        new ContainerPauser.View(C1, true, "4242"), new ContainerPauser.View(C2, true, "5151"));
    pauser.reconcile(listed(C1, C2), both);
    assertEquals(Arrays.asList("STOP 4242", "STOP 5151"), sent);
    sent.clear();

    // C1 ended; its pid was handed to an unrelated process. C2's processes are gone.
    process("4242", "4242", 900);
    ended("5151");
    pauser.reconcile(listed(), Arrays.asList(
        new ContainerPauser.View(C1, false, null), new ContainerPauser.View(C2, false, null)));
    assertEquals(Collections.emptyList(), sent);
    assertTrue(pauser.paused().isEmpty());

    // Stopped, then dropped by the NodeManager: forgotten without a signal.
    process("6000", "6000", 1000);
    pauser.reconcile(listed(C1), running(C1, "6000"));
    pauser.reconcile(listed(), Collections.emptyList());
    assertEquals(Collections.singletonList("STOP 6000"), sent);
    assertTrue(pauser.paused().isEmpty());
  }

  /** A pid that does not lead its own group is not a container's setsid leader: not signalled. */
  @Test
  public void aPidThatLeadsNoGroupIsNotStopped() throws Exception {
    process("7000", "1", 100);
    pauser.reconcile(listed(C1), running(C1, "7000"));
    pauser.reconcile(listed(C1), running(C1, "7999")); // no such process
    assertEquals(Collections.emptyList(), sent);
    assertTrue(pauser.paused().isEmpty());
  }

  /** Relaunched while stopped: the new group is stopped, the old pid never continued. */
  @Test
  public void aRelaunchedContainerIsStoppedAgainUnderItsNewPid() throws Exception {
    process("4242", "4242", 100);
    pauser.reconcile(listed(C1), running(C1, "4242"));
    process("4300", "4300", 150);
    pauser.reconcile(listed(C1), running(C1, "4300"));
    pauser.reconcile(listed(C1), running(C1, "4300"));
    assertEquals(Arrays.asList("STOP 4242", "STOP 4300"), sent);
    pauser.reconcile(listed(), running(C1, "4300"));
    assertEquals(Arrays.asList("STOP 4242", "STOP 4300", "CONT 4300"), sent);
  }

  /** The real /proc: a setsid process leads its group, and its start time is read. */
  @Test
  public void theRealProcShowsASetsidLeader() throws Exception {
    Process p = new ProcessBuilder("bash", "-c", "echo $$; exec setsid sleep 30").start();
    try {
      String pid = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.US_ASCII)).readLine();
      ContainerPauser real = new ContainerPauser(new File("/proc"), (s, x) -> { });
      ContainerPauser.Leader l = null;
      for (int i = 0; i < 100 && (l = real.leader(pid)) == null; i++) {
        Thread.sleep(20); // until setsid has run
      }
      assertNotNull("pid " + pid + " leads no group", l);
      assertTrue(l.startTicks > 0);
      assertEquals(l, real.leader(pid));
      assertNull(real.leader("1" + pid + "0000")); // no such pid
    } finally {
      p.destroyForcibly();
    }
  }
}
