package org.sojourn.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.security.PrivilegedExceptionAction;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.protocolrecords.RegisterApplicationMasterRequest;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerState;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmissionData;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmitter;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.junit.After;
import org.junit.Test;

/**
 * The MapReduce AM REST answers read by {@link MapReduceProgress}: canned
 * JSON in the shapes of Hadoop's "MapReduce Application Master REST APIs"
 * (jobs, tasks, task attempts), and a fake AM over HTTP.
 */
public class MapReduceProgressTest extends SojournTestBase {
  private static final String JOB = "job_1700000000000_0001";
  private static final String C1 = "container_1700000000000_0001_01_000002";
  private static final String C2 = "container_1700000000000_0001_01_000003";
  private static final String C3 = "container_1700000000000_0001_01_000004";

  private HttpServer server;
  private final List<String> requested = Collections.synchronizedList(new ArrayList<>());

  @After
  public void stopServer() {
    if (server != null) {
      server.stop(0);
      server = null;
    }
  }

  private static String q(String s) {
    return s.replace('\'', '"');
  }

  private static final String JOBS = q("{'jobs': {'job': ["
      + "{'id': '" + JOB + "', 'name': 'Sleep job', 'state': 'RUNNING', 'mapsTotal': 3, 'mapProgress': 40.0},"
      + "{'id': 'job_1700000000000_0009', 'name': 'old', 'state': 'SUCCEEDED'}]}}");

  private static final String TASKS = q("{'tasks': {'task': ["
      + "{'id': 'task_1700000000000_0001_m_000000', 'state': 'RUNNING', 'type': 'MAP', 'progress': 42.5},"
      + "{'id': 'task_1700000000000_0001_m_000001', 'state': 'SUCCEEDED', 'type': 'MAP', 'progress': 100.0},"
      + "{'id': 'task_1700000000000_0001_r_000000', 'state': 'RUNNING', 'type': 'REDUCE', 'progress': 70.0},"
      + "{'id': 'task_1700000000000_0001_m_000002', 'state': 'SCHEDULED', 'type': 'MAP', 'progress': 0.0}]}}");

  /** A map's attempts: a failed first one, a running retry. */
  private static final String MAP_ATTEMPTS = q("{'taskAttempts': {'taskAttempt': ["
      + "{'id': 'attempt_1700000000000_0001_m_000000_0', 'state': 'FAILED', 'type': 'MAP', 'progress': 10.0,"
      + " 'assignedContainerId': '" + C3 + "', 'rack': '/default-rack', 'nodeHttpAddress': 'host:8042'},"
      + "{'id': 'attempt_1700000000000_0001_m_000000_1', 'state': 'RUNNING', 'type': 'MAP', 'progress': 42.5,"
      + " 'startTime': 1700000001000, 'finishTime': 0, 'elapsedTime': 9000, 'status': 'map > map',"
      + " 'assignedContainerId': '" + C1 + "', 'rack': '/default-rack', 'nodeHttpAddress': 'host:8042',"
      + " 'diagnostics': ''}]}}");

  /** A reduce's one attempt, as an object rather than a one-element array, with the reduce fields. */
  private static final String REDUCE_ATTEMPTS = q("{'taskAttempts': {'taskAttempt': "
      + "{'id': 'attempt_1700000000000_0001_r_000000_0', 'state': 'COMMIT_PENDING', 'type': 'REDUCE',"
      + " 'progress': 100.0, 'shuffleFinishTime': 1700000005000, 'mergeFinishTime': 1700000006000,"
      + " 'elapsedShuffleTime': 4000, 'elapsedMergeTime': 1000, 'elapsedReduceTime': 2000,"
      + " 'assignedContainerId': '" + C2 + "'}}}");

  @Test
  public void runningJobsAndTasksAreTheOnesRead() throws Exception {
    assertEquals(Collections.singletonList(JOB),
        MapReduceProgress.runningIds(Protocol.JSON.readTree(JOBS), "jobs", "job"));
    assertEquals(Arrays.asList("task_1700000000000_0001_m_000000", "task_1700000000000_0001_r_000000"),
        MapReduceProgress.runningIds(Protocol.JSON.readTree(TASKS), "tasks", "task"));
    // A job list with no jobs (Jersey may write null or an empty object).
    assertTrue(MapReduceProgress.runningIds(Protocol.JSON.readTree("{\"jobs\": null}"), "jobs", "job").isEmpty());
    assertTrue(MapReduceProgress.runningIds(Protocol.JSON.readTree("{\"jobs\": {}}"), "jobs", "job").isEmpty());
  }

  @Test
  public void runningAttemptsGiveTheirContainerAndProgressAsAFraction() throws Exception {
    Map<String, Double> map = MapReduceProgress.attemptProgress(Protocol.JSON.readTree(MAP_ATTEMPTS));
    assertEquals(Collections.singletonMap(C1, 0.425), map);
    Map<String, Double> reduce = MapReduceProgress.attemptProgress(Protocol.JSON.readTree(REDUCE_ATTEMPTS));
    assertEquals(Collections.singletonMap(C2, 1.0), reduce);
  }

  @Test
  public void runningReducesPastTheirSortGiveTheMergeFinish() throws Exception {
    assertEquals(Collections.singletonMap(C2, 1700000006000L),
        MapReduceProgress.attemptSortFinish(Protocol.JSON.readTree(REDUCE_ATTEMPTS)));
    // Maps have no sort finish; a reduce still shuffling reports 0.
    assertTrue(MapReduceProgress.attemptSortFinish(Protocol.JSON.readTree(MAP_ATTEMPTS)).isEmpty());
    String shuffling = q("{'taskAttempts': {'taskAttempt': {'id': 'a', 'state': 'RUNNING', 'type': 'REDUCE',"
        + " 'progress': 20.0, 'shuffleFinishTime': 0, 'mergeFinishTime': 0, 'assignedContainerId': '" + C2 + "'}}}");
    assertTrue(MapReduceProgress.attemptSortFinish(Protocol.JSON.readTree(shuffling)).isEmpty());
    // The core is told as sort_finished, and only when known.
    assertEquals(1500L, Protocol.containerProgress(5, 0.9, 1500L).path("sort_finished").asLong());
    assertFalse(Protocol.containerProgress(5, 0.4, null).has("sort_finished"));
  }

  @Test
  public void attemptsWithoutAContainerOrAProgressAreSkippedAndProgressIsClamped() throws Exception {
    String json = q("{'taskAttempts': {'taskAttempt': ["
        + "{'id': 'a0', 'state': 'RUNNING', 'progress': 5.0},"
        + "{'id': 'a1', 'state': 'RUNNING', 'progress': 5.0, 'assignedContainerId': ''},"
        + "{'id': 'a2', 'state': 'RUNNING', 'progress': 'lots', 'assignedContainerId': '" + C1 + "'},"
        + "{'id': 'a3', 'state': 'RUNNING', 'progress': 130.0, 'assignedContainerId': '" + C2 + "'},"
        + "{'id': 'a4', 'state': 'STARTING', 'progress': 0.0, 'assignedContainerId': '" + C3 + "'}]}}");
    assertEquals(Collections.singletonMap(C2, 1.0),
        MapReduceProgress.attemptProgress(Protocol.JSON.readTree(json)));
  }

  @Test
  public void theTrackingUrlBecomesABaseUrl() {
    assertEquals("http://host:41234", MapReduceProgress.baseUrl("http://host:41234/"));
    assertEquals("http://host:41234", MapReduceProgress.baseUrl("host:41234"));
    assertEquals("https://host:41234", MapReduceProgress.baseUrl(" https://host:41234 "));
    assertNull(MapReduceProgress.baseUrl("N/A"));
    assertNull(MapReduceProgress.baseUrl(""));
    assertNull(MapReduceProgress.baseUrl(null));
  }

  /** A fake AM: path to answer (read at each request); anything else is a 404. */
  private String serve(Map<String, String> answers, int status) throws IOException {
    server = fakeAm(answers, status, requested);
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  private static HttpServer fakeAm(Map<String, String> answers, int status, List<String> requested)
      throws IOException {
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/", ex -> {
      String path = ex.getRequestURI().getPath();
      requested.add(path);
      String body = answers.get(path);
      byte[] b = (body == null ? "<html>Not found</html>" : body).getBytes(StandardCharsets.UTF_8);
      ex.sendResponseHeaders(body == null ? 404 : status, b.length);
      try (OutputStream out = ex.getResponseBody()) {
        out.write(b);
      }
    });
    server.start();
    return server;
  }

  private static Map<String, String> fakeMapReduceAm() {
    String base = "/ws/v1/mapreduce/jobs";
    Map<String, String> m = new HashMap<>();
    m.put(base, JOBS);
    m.put(base + "/" + JOB + "/tasks", TASKS);
    m.put(base + "/" + JOB + "/tasks/task_1700000000000_0001_m_000000/attempts", MAP_ATTEMPTS);
    m.put(base + "/" + JOB + "/tasks/task_1700000000000_0001_r_000000/attempts", REDUCE_ATTEMPTS);
    return m;
  }

  @Test
  public void aMapReduceAmIsReadJobThenTasksThenTheAttemptsOfRunningTasks() throws Exception {
    String base = serve(fakeMapReduceAm(), 200);
    Map<String, Long> sorted = new HashMap<>();
    Map<String, Double> got = MapReduceProgress.read(base, 2000, sorted);
    Map<String, Double> want = new HashMap<>();
    want.put(C1, 0.425);
    want.put(C2, 1.0);
    assertEquals(want, got);
    assertEquals(Collections.singletonMap(C2, 1700000006000L), sorted);
    // Finished and unscheduled tasks' attempts are not asked for; nor the finished job's tasks.
    assertEquals(requested.toString(), 4, requested.size());
    for (String p : requested) {
      assertFalse(p, p.contains("m_000001") || p.contains("m_000002") || p.contains("0009"));
    }
  }

  @Test
  public void aTaskThatWentAwayMeanwhileIsSkippedNotTheWholeAm() throws Exception {
    Map<String, String> am = fakeMapReduceAm();
    am.remove("/ws/v1/mapreduce/jobs/" + JOB + "/tasks/task_1700000000000_0001_r_000000/attempts");
    String base = serve(am, 200);
    assertEquals(Collections.singletonMap(C1, 0.425), MapReduceProgress.read(base, 2000));
  }

  /** Why a fake AM serving {@code answers} is not read as a MapReduce AM. */
  private String notMapReduce(Map<String, String> answers) throws IOException {
    stopServer();
    String base = serve(answers, 200);
    try {
      MapReduceProgress.read(base, 2000);
      throw new AssertionError("read as a MapReduce AM: " + answers);
    } catch (MapReduceProgress.NotMapReduce e) {
      assertTrue(e.getMessage(), e.getMessage().contains(base + "/ws/v1/mapreduce/jobs"));
      return e.getMessage();
    }
  }

  @Test
  public void anAmThatIsNotMapReduceIsToldApart() throws Exception {
    String why = notMapReduce(Collections.emptyMap());
    assertTrue(why, why.contains("404"));
    why = notMapReduce(Collections.singletonMap("/ws/v1/mapreduce/jobs", "<html>a Spark UI</html>"));
    assertTrue(why, why.contains("not JSON"));
    why = notMapReduce(Collections.singletonMap("/ws/v1/mapreduce/jobs", "{\"apps\": []}"));
    assertTrue(why, why.contains("\"jobs\""));
  }

  /** The error of reading the AM at {@code base}, which must fail as an I/O error, not as a non-MapReduce AM. */
  private static IOException failure(String base) {
    try {
      MapReduceProgress.read(base, 2000);
    } catch (MapReduceProgress.NotMapReduce e) {
      throw new AssertionError("a failing AM taken for a non-MapReduce AM: " + e, e);
    } catch (IOException e) {
      return e;
    }
    throw new AssertionError("a failing AM read at " + base);
  }

  @Test
  public void anAmThatFailsIsAnIoErrorNamingTheUrl() throws Exception {
    String base = serve(fakeMapReduceAm(), 500);
    String why = failure(base).getMessage();
    assertTrue(why, why.contains("500") && why.contains(base));
    stopServer();
    // Nothing listens there any more: refused, quickly.
    long t0 = System.nanoTime();
    failure(base);
    assertTrue((System.nanoTime() - t0) / 1_000_000 < 2500);
  }

  /** The poller's own checks: only an application's own containers are passed on. */
  @Test
  public void anAmSpeaksOnlyForItsOwnApplicationsContainers() throws Exception {
    Map<String, String> am = fakeMapReduceAm();
    String other = "container_1700000000000_0002_01_000002";
    String path = "/ws/v1/mapreduce/jobs/" + JOB + "/tasks/task_1700000000000_0001_m_000000/attempts";
    am.put(path, am.get(path).replace(C1, other));
    String base = serve(am, 200);
    Map<String, Double> passed = new HashMap<>();
    Map<String, Long> sorted = new HashMap<>();
    MapReduceProgress p = new MapReduceProgress(null, (id, progress, sortFinished) -> {
      passed.put(id.toString(), progress);
      sorted.put(id.toString(), sortFinished);
    }, 1000);
    p.poll(org.apache.hadoop.yarn.api.records.ApplicationId.newInstance(1700000000000L, 1), base);
    assertEquals(Collections.singletonMap(C2, 1.0), passed);
    // The reduce's sort finish goes along with its progress.
    assertEquals(Collections.singletonMap(C2, 1700000006000L), sorted);
  }

  /** Registers an attempt as its AM would, with the tracking URL MRAppMaster gives (its web app). */
  private void register(ApplicationAttemptId id, String trackingUrl) throws Exception {
    RegisterApplicationMasterRequest req =
        RegisterApplicationMasterRequest.newInstance("127.0.0.1", 1, trackingUrl);
    UserGroupInformation ugi = UserGroupInformation.createRemoteUser(id.toString());
    ugi.addTokenIdentifier(rm.getRMContext().getRMApps().get(id.getApplicationId())
        .getRMAppAttempt(id).getAMRMToken().decodeIdentifier());
    ugi.doAs((PrivilegedExceptionAction<Object>) () ->
        rm.getApplicationMasterService().registerApplicationMaster(req));
    MockRM.waitForState(rm.getRMContext().getRMApps().get(id.getApplicationId()).getRMAppAttempt(id),
        RMAppAttemptState.RUNNING);
  }

  private RMApp submitTyped(String type, String user) throws Exception {
    return MockRMAppSubmitter.submit(rm, MockRMAppSubmissionData.Builder.createWithMemory(GB, rm)
        .withAppType(type).withQueue("default").withUser(user).withAppName(type + "-" + user).build());
  }

  private long waitForReports(long atLeast) throws InterruptedException {
    long end = System.currentTimeMillis() + 10000;
    while (scheduler().getProgressReports() < atLeast && System.currentTimeMillis() < end) {
      Thread.sleep(20);
    }
    return scheduler().getProgressReports();
  }

  /**
   * In the RM (MockRM, policy fifo): a MapReduce app's AM is read at the
   * tracking URL it registered; its running containers' progress reaches the
   * core (counted by the MXBean's ProgressReports), an unchanged reading is
   * not sent again, a reading of a container that completed meanwhile is
   * dropped, and an app of another type is never asked.
   */
  @Test(timeout = 60000)
  public void progressOfAMapReduceAmsRunningContainersReachesTheCore() throws Exception {
    YarnConfiguration conf = conf();
    conf.setLong(SojournConfig.AM_PROGRESS_MS, 50);
    conf.setLong("yarn.scheduler.sojourn.tick-ms", 20);
    start(conf);
    MockNM nm = rm.registerNode("127.0.0.1:1234", 8 * GB, 8);
    RMApp mr = submitTyped("MAPREDUCE", "alice");
    MockAM am = MockRM.launchAM(mr, rm, nm);
    RMApp other = submitTyped("YARN", "bob");
    MockAM otherAm = MockRM.launchAM(other, rm, nm);
    Map<String, String> answers = new java.util.concurrent.ConcurrentHashMap<>();
    HttpServer mrAm = fakeAm(answers, 200, requested);
    List<String> otherRequests = Collections.synchronizedList(new ArrayList<>());
    HttpServer yarnAm = fakeAm(answers, 200, otherRequests);
    try {
      register(am.getApplicationAttemptId(), "http://127.0.0.1:" + mrAm.getAddress().getPort());
      register(otherAm.getApplicationAttemptId(), "127.0.0.1:" + yarnAm.getAddress().getPort());
      List<Container> cs = allocateAndWait(am, nm, GB, 20, 2);
      assertEquals(2, cs.size());

      String jobs = "/ws/v1/mapreduce/jobs";
      String job = "job_" + mr.getApplicationId().getClusterTimestamp() + "_000" + mr.getApplicationId().getId();
      String attempts = jobs + "/" + job + "/tasks/task_1_m_000000/attempts";
      String running = "{'taskAttempts': {'taskAttempt': ["
          + "{'id': 'a0', 'state': 'RUNNING', 'progress': P0, 'assignedContainerId': '" + cs.get(0).getId() + "'},"
          + "{'id': 'a1', 'state': 'RUNNING', 'progress': P1, 'assignedContainerId': '" + cs.get(1).getId() + "'}]}}";
      answers.put(attempts, q(running.replace("P0", "40.0").replace("P1", "60.0")));
      answers.put(jobs + "/" + job + "/tasks", q("{'tasks': {'task': [{'id': 'task_1_m_000000', 'state': 'RUNNING'}]}}"));
      answers.put(jobs, q("{'jobs': {'job': [{'id': '" + job + "', 'state': 'RUNNING'}]}}"));

      assertEquals(2, waitForReports(2));
      Thread.sleep(300); // several rounds: the same readings are not sent again
      assertEquals(2, scheduler().getProgressReports());
      assertEquals(2, describe().path("progress_reports").asLong());

      // The first container completes; the AM, a round behind, still reports it.
      nm.nodeHeartbeat(am.getApplicationAttemptId(), cs.get(0).getId().getContainerId(), ContainerState.COMPLETE);
      waitCompleted(am, 1);
      assertEquals(null, scheduler().coreIdOf(cs.get(0).getId()));
      answers.put(attempts, q(running.replace("P0", "50.0").replace("P1", "70.0")));
      assertEquals(3, waitForReports(3));
      Thread.sleep(300);
      assertEquals("only the live container's new reading is sent", 3, scheduler().getProgressReports());
      assertTrue(requested.toString(), requested.contains(attempts));
      assertTrue("an AM of type YARN was asked: " + otherRequests, otherRequests.isEmpty());
    } finally {
      mrAm.stop(0);
      yarnAm.stop(0);
    }
  }
}
