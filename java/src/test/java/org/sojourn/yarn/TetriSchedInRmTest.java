package org.sojourn.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerState;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.junit.Test;

/**
 * TetriSched inside a real ResourceManager (MockRM; shared/research/tetrisched.md
 * §4): the MILP is solved on the bridge's offload thread, off the
 * scheduler's lock, and its plan is applied at a later call. The SLO class
 * comes from the queue (tetrisched.slo_queues=slo), the deadline from
 * submit + deadline_slack × the runtime estimate (default_runtime_ms: YARN
 * asks carry none).
 *
 * <p>One NodeManager of 4 slots. A best-effort job in {@code default} runs 3
 * tasks and has 2 more asked; an SLO job (AM + 1 task) is submitted to
 * {@code slo}, due 9 s later (2 × 4.5 s). The test frees one best-effort
 * slot every {@link #ROUND_MS}. Under tetrisched the SLO job's AM and task
 * take the first two freed slots (value 1000 against the best-effort job's
 * ≈ 1) and it finishes in about 2 rounds (6.4 s here), within its deadline;
 * under FIFO the best-effort job's asks come first and the SLO job finishes
 * after about 4 rounds (15.2 s), past its deadline. (The SLO class itself is
 * pinned by the policy's golden test {@code slo_job_first}: here an older
 * best-effort job would lose to a newer job anyway, its value having decayed
 * longer, A7.)
 */
public class TetriSchedInRmTest extends SojournTestBase {
  private static final long ROUND_MS = 3000;
  private static final long DEADLINE_MS = 9000;

  private YarnConfiguration conf(String policy) {
    YarnConfiguration conf = conf();
    conf.set("yarn.scheduler.sojourn.policy", policy);
    conf.set("yarn.scheduler.sojourn.queue.root.queues", "default,slo");
    if (policy.equals("tetrisched")) {
      conf.set("yarn.scheduler.sojourn.tetrisched.slo_queues", "slo");
      conf.set("yarn.scheduler.sojourn.tetrisched.default_runtime_ms", "4500");
      conf.set("yarn.scheduler.sojourn.tetrisched.deadline_slack", "2");
      conf.set("yarn.scheduler.sojourn.tetrisched.quantum_ms", "1000");
      conf.set("yarn.scheduler.sojourn.tetrisched.cycle_ms", "1000");
      conf.set("yarn.scheduler.sojourn.tetrisched.plan_ahead_ms", "30000");
      conf.set("yarn.scheduler.sojourn.tetrisched.bind_on_heartbeat", "true"); // as shipped
    }
    return conf;
  }

  /** Heartbeats and pulls until {@code am} holds {@code n} more containers or {@code waitMs} passes. */
  private List<Container> tasksWhenPlaced(MockAM am, MockNM nm, int n, long waitMs) throws Exception {
    List<Container> got = new ArrayList<>();
    long end = System.currentTimeMillis() + waitMs;
    while (got.size() < n && System.currentTimeMillis() < end) {
      nm.nodeHeartbeat(true);
      rm.drainEvents();
      got.addAll(am.schedule().getAllocatedContainers());
      if (got.size() < n) {
        Thread.sleep(50);
      }
    }
    return got;
  }

  /** Runs the scene; returns the SLO job's response time (ms), or -1 if it never finished. */
  private long sloResponse(String policy) throws Exception {
    start(conf(policy));
    MockNM nm = rm.registerNode("127.0.0.1:1234", 4 * GB, 4);
    nm.nodeHeartbeat(true);
    RMApp be = submit(GB, "default", "alice");
    MockAM beAm = launchAmWhenPlaced(rm, be, nm, 20000);
    assertTrue(policy + ": the best-effort AM starts", beAm != null);
    beAm.addRequests(new String[] {"*"}, GB, 1, 5);
    List<Container> beRunning = tasksWhenPlaced(beAm, nm, 3, 20000);
    assertEquals(policy + ": the best-effort job fills the node", 3, beRunning.size());

    long submitted = System.currentTimeMillis();
    RMApp slo = submit(GB, "slo", "bob");
    MockAM sloAm = null;
    boolean asked = false;
    for (int round = 0; round < 8; round++) {
      Thread.sleep(ROUND_MS);
      // one best-effort task ends
      Container done = beRunning.remove(0);
      nm.nodeHeartbeat(beAm.getApplicationAttemptId(), done.getId().getContainerId(), ContainerState.COMPLETE);
      rm.drainEvents();
      if (sloAm == null) {
        sloAm = launchAmWhenPlaced(rm, slo, nm, 1500);
        if (sloAm != null) {
          continue;
        }
      } else {
        if (!asked) {
          sloAm.addRequests(new String[] {"*"}, GB, 1, 1);
          asked = true;
        }
        List<Container> task = tasksWhenPlaced(sloAm, nm, 1, 1500);
        if (task.size() == 1) {
          // the SLO task runs briefly and ends; then its AM
          nm.nodeHeartbeat(sloAm.getApplicationAttemptId(), task.get(0).getId().getContainerId(),
              ContainerState.COMPLETE);
          assertEquals(1, waitCompleted(sloAm, 1).size());
          MockRM.finishAMAndVerifyAppState(slo, rm, nm, sloAm);
          long response = System.currentTimeMillis() - submitted;
          System.out.println(policy + ": the SLO job finished " + response + " ms after its submission, round " + round);
          return response;
        }
      }
      // whatever else got the freed slot is the best-effort job's
      beRunning.addAll(tasksWhenPlaced(beAm, nm, 1, 1500));
    }
    return -1;
  }

  @Test(timeout = 120000)
  public void anSloJobMeetsItsDeadlineUnderTetrischedByTakingTheFirstFreedSlots() throws Exception {
    long response = sloResponse("tetrisched");
    assertTrue("the SLO job finishes within its deadline: " + response + " ms",
        response > 0 && response < DEADLINE_MS);
    JsonNode m = describe().path("core").path("metrics");
    double offloaded = m.path("tetrisched.offloaded_solves").asDouble();
    assertTrue("solves went to the offload thread: " + m, offloaded >= 2);
    assertEquals("no solve failed: " + m, 0.0, m.path("tetrisched.solver_fallbacks").asDouble(), 0.0);
    // As shipped (offload.isolation=process), every solve ran in the
    // sojourn-offload child extracted from the jar (the last may still be in flight).
    JsonNode offload = describe().path("core").path("offload");
    assertEquals(offload.toString(), "process", offload.path("isolation").asText());
    assertTrue(offload.toString(), offload.path("command").asText().endsWith("/sojourn-offload"));
    JsonNode children = offload.path("children");
    assertTrue("the solves were answered by the child: " + offload + " " + m,
        children.path("answered").asDouble() >= Math.max(2, offloaded - 1));
    assertEquals(offload.toString(), 1, children.path("started").asInt());
    assertEquals(offload.toString(), 0, children.path("failed").asInt());
    long pid = children.path("pid").asLong();
    String cmdline = new String(java.nio.file.Files.readAllBytes(
        java.nio.file.Paths.get("/proc/" + pid + "/cmdline")), java.nio.charset.StandardCharsets.UTF_8);
    assertTrue("the child " + pid + " runs sojourn-offload: " + cmdline, cmdline.contains("sojourn-offload"));
  }

  // ---- the solve in a child process (yarn.scheduler.sojourn.offload.*) ----------------

  /**
   * One job on one node of 4 slots: its AM, then 2 tasks. Returns the
   * describe() JSON once both tasks are placed.
   */
  private JsonNode aJobIsScheduled(YarnConfiguration conf) throws Exception {
    start(conf);
    MockNM nm = rm.registerNode("127.0.0.1:1234", 4 * GB, 4);
    nm.nodeHeartbeat(true);
    MockAM am = launchAmWhenPlaced(rm, submit(GB, "default", "alice"), nm, 20000);
    assertTrue("the AM starts", am != null);
    am.addRequests(new String[] {"*"}, GB, 1, 2);
    assertEquals("both tasks are placed", 2, tasksWhenPlaced(am, nm, 2, 20000).size());
    assertTrue("the RM is up", rm.getServiceState() == org.apache.hadoop.service.Service.STATE.STARTED);
    return describe();
  }

  /** tetrisched with a stand-in offload child: a script that reads one request, then runs {@code then}. */
  private YarnConfiguration withStandInChild(String then) throws Exception {
    java.io.File script = java.io.File.createTempFile("sojourn-offload-stand-in", ".sh");
    script.deleteOnExit();
    java.nio.file.Files.write(script.toPath(),
        ("#!/bin/sh\nread request\n" + then + "\n").getBytes(java.nio.charset.StandardCharsets.UTF_8));
    assertTrue(script.setExecutable(true));
    YarnConfiguration conf = conf("tetrisched");
    conf.set(SojournConfig.OFFLOAD_COMMAND, script.getAbsolutePath());
    return conf;
  }

  @Test(timeout = 120000)
  public void aChildThatAbortsCostsOneSolveNotTheRm() throws Exception {
    // A stand-in for CBC's abort: the child reads the request and aborts.
    YarnConfiguration conf = withStandInChild("kill -ABRT $$");
    JsonNode d = aJobIsScheduled(conf);
    JsonNode m = d.path("core").path("metrics");
    JsonNode children = d.path("core").path("offload").path("children");
    assertTrue("the cycles fell back to the greedy plan: " + m, m.path("tetrisched.solver_fallbacks").asDouble() >= 1);
    assertTrue("each crash cost one solve: " + children, children.path("failed").asInt() >= 1);
    assertTrue("the crash is logged with its signal: " + children,
        children.path("last_failure").asText().contains("SIGABRT"));
    JsonNode last = d.path("core").path("state").path("last_cycle");
    assertTrue(last.toString(), last.path("planner").asText().matches("fallback|idle"));
  }

  /**
   * NODE_UPDATEs are served while a solve is in flight: a stand-in child
   * that takes its request and sleeps holds the first solve outstanding,
   * and twenty heartbeats, each drained before the next, still reach the
   * core. (Were the scheduler to wait for the solve, draining would wait
   * for the child, and by the checks the child would be given up.)
   */
  @Test(timeout = 150000)
  public void nodeUpdatesAreServedWhileASolveIsInFlight() throws Exception {
    YarnConfiguration conf = withStandInChild("sleep 120");
    // a 30 s budget: the child is given up after 2 × 30 s + 5 s, long after the checks
    conf.set("yarn.scheduler.sojourn.tetrisched.time_limit_s", "30");
    start(conf);
    MockNM nm = rm.registerNode("127.0.0.1:1234", 4 * GB, 4);
    nm.nodeHeartbeat(true);
    submit(GB, "default", "alice");
    long until = System.currentTimeMillis() + 20000;
    while (describe().path("core").path("offload").path("outstanding").asInt() == 0
        && System.currentTimeMillis() < until) {
      nm.nodeHeartbeat(true);
      rm.drainEvents();
      Thread.sleep(100);
    }
    JsonNode before = describe().path("core");
    assertEquals("the AM's cycle handed a solve to the child: " + before.path("offload"), 1,
        before.path("offload").path("outstanding").asInt());
    long events = before.path("stats").path("events").asLong();
    for (int i = 0; i < 20; i++) {
      // (one at a time: the RM passes a node's next NODE_UPDATE to the
      // scheduler only once the scheduler has taken the previous one)
      nm.nodeHeartbeat(true);
      rm.drainEvents();
    }
    JsonNode after = describe().path("core");
    assertTrue("the twenty NODE_UPDATEs reached the core: " + before.path("stats") + " -> " + after.path("stats"),
        after.path("stats").path("events").asLong() >= events + 20);
    JsonNode offload = after.path("offload");
    assertEquals("the solve is still in flight: " + offload, 1, offload.path("outstanding").asInt());
    assertEquals(offload.toString(), 0, offload.path("children").path("answered").asInt());
    assertEquals(offload.toString(), 0, offload.path("children").path("failed").asInt());
  }

  @Test(timeout = 120000)
  public void aChildKilledMidRunIsReplacedAndTheMilpPlansAgain() throws Exception {
    YarnConfiguration conf = conf("tetrisched");
    start(conf);
    MockNM nm = rm.registerNode("127.0.0.1:1234", 4 * GB, 4);
    nm.nodeHeartbeat(true);
    MockAM first = launchAmWhenPlaced(rm, submit(GB, "default", "alice"), nm, 20000);
    assertTrue("the first AM starts", first != null);
    JsonNode before = describe().path("core").path("offload").path("children");
    long pid = before.path("pid").asLong();
    assertTrue("a child solved the first cycle: " + before, pid > 0 && before.path("answered").asInt() >= 1);
    Process kill = new ProcessBuilder("kill", "-9", Long.toString(pid)).start();
    assertEquals(0, kill.waitFor());
    // The next solves: the first finds the child dead (one fallback), then a new child plans.
    MockAM second = launchAmWhenPlaced(rm, submit(GB, "default", "bob"), nm, 20000);
    assertTrue("the next job is still scheduled", second != null);
    second.addRequests(new String[] {"*"}, GB, 1, 1);
    assertEquals(1, tasksWhenPlaced(second, nm, 1, 20000).size());
    JsonNode d = describe().path("core");
    JsonNode children = d.path("offload").path("children");
    assertEquals("the killed child cost one solve: " + children, 1, children.path("failed").asInt());
    assertEquals(children.toString(), 2, children.path("started").asInt());
    assertTrue(children.toString(), children.path("pid").asLong() != pid);
    assertTrue("the new child's MILP planned: " + children,
        children.path("answered").asInt() > before.path("answered").asInt());
    assertEquals("one cycle fell back: " + d.path("metrics"), 1.0,
        d.path("metrics").path("tetrisched.solver_fallbacks").asDouble(), 0.0);
  }

  @Test(timeout = 120000)
  public void withThreadIsolationTheSolveStaysInTheRm() throws Exception {
    YarnConfiguration conf = conf("tetrisched");
    conf.set(SojournConfig.OFFLOAD_ISOLATION, "thread");
    JsonNode d = aJobIsScheduled(conf);
    assertEquals(d.path("core").path("offload").toString(), "thread",
        d.path("core").path("offload").path("isolation").asText());
    assertEquals(0.0, d.path("core").path("metrics").path("tetrisched.solver_fallbacks").asDouble(), 0.0);
  }

  @Test(timeout = 60000)
  public void anUnknownIsolationIsRefusedNamingTheKey() throws Exception {
    YarnConfiguration conf = conf("tetrisched");
    conf.set(SojournConfig.OFFLOAD_ISOLATION, "sandbox");
    assertStartFails(conf, SojournConfig.OFFLOAD_ISOLATION + "='sandbox'");
  }

  @Test(timeout = 120000)
  public void underFifoTheSameSloJobMissesItsDeadline() throws Exception {
    long response = sloResponse("fifo");
    assertTrue("under fifo the SLO job waits for the best-effort asks: " + response + " ms",
        response < 0 || response > DEADLINE_MS);
  }

  // ---- the SLO from application tags (AppTags) -----------------------------------------

  /**
   * Both jobs in the best-effort queue {@code default}: {@code first} is submitted, then
   * {@code second}, while a running job fills the node; one slot is freed. Returns whose
   * AM took it: "first", "second" or "none".
   */
  private String whoseAmTakesTheFreedSlot(String... firstTags) throws Exception {
    start(conf("tetrisched"));
    MockNM nm = rm.registerNode("127.0.0.1:1234", 4 * GB, 4);
    nm.nodeHeartbeat(true);
    MockAM beAm = launchAmWhenPlaced(rm, submit(GB, "default", "alice"), nm, 20000);
    assertTrue("the running job's AM starts", beAm != null);
    beAm.addRequests(new String[] {"*"}, GB, 1, 3);
    List<Container> beRunning = tasksWhenPlaced(beAm, nm, 3, 20000);
    assertEquals("the running job fills the node", 3, beRunning.size());
    RMApp first = submitTagged(true, "default", "bob", firstTags);
    Thread.sleep(100); // `second` is the newer submission
    RMApp second = submitTagged(true, "default", "carol");
    Thread.sleep(2500); // a few cycles see both AM asks
    nm.nodeHeartbeat(beAm.getApplicationAttemptId(), beRunning.get(0).getId().getContainerId(),
        ContainerState.COMPLETE);
    rm.drainEvents();
    long end = System.currentTimeMillis() + 6000;
    while (System.currentTimeMillis() < end) {
      nm.nodeHeartbeat(true);
      rm.drainEvents();
      boolean a = first.getCurrentAppAttempt() != null && first.getCurrentAppAttempt().getMasterContainer() != null;
      boolean b = second.getCurrentAppAttempt() != null && second.getCurrentAppAttempt().getMasterContainer() != null;
      assertTrue("one freed slot takes one AM", !(a && b));
      if (a || b) {
        return a ? "first" : "second";
      }
      Thread.sleep(50);
    }
    return "none";
  }

  @Test(timeout = 120000)
  public void aDeadlineTagMakesABestEffortQueuesJobAnSloJob() throws Exception {
    assertEquals("the job tagged with a deadline and value is served first", "first",
        whoseAmTakesTheFreedSlot("sojourn.deadline=9s", "sojourn.value=1000"));
  }

  @Test(timeout = 120000)
  public void withoutTheTagTheNewerBestEffortJobIsServedFirst() throws Exception {
    // The control for the test above: the order it sees comes from the tag.
    assertEquals("untagged, the older job's value has decayed longer (A7)", "second",
        whoseAmTakesTheFreedSlot("unrelated-tag"));
  }

  @Test(timeout = 60000)
  public void aMalformedDeadlineTagIsRejectedNamingTheTag() throws Exception {
    start(conf("tetrisched"));
    assertRejected(submitTagged(false, "default", "bob", "sojourn.deadline=soon"),
        "application tag 'sojourn.deadline=soon': the duration must be a whole number with a unit");
  }
}
