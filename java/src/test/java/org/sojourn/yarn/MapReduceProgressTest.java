package org.sojourn.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.security.PrivilegedExceptionAction;
import javax.management.ObjectName;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.protocolrecords.RegisterApplicationMasterRequest;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerState;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmissionData;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmitter;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttempt;
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
  public void theAmIsReadOnlyOnTheNodeYarnPlacedItOnAtAFixedPath() {
    // Scheme and port are the AM's; the host is the node's; path, query and user info are dropped.
    assertEquals("http://node1:41234", MapReduceProgress.address("http://node1:41234/", "node1").base);
    assertEquals("http://node1:41234", MapReduceProgress.address("node1:41234", "node1").base);
    assertEquals("https://node1:41234",
        MapReduceProgress.address(" https://NODE1:41234/steal?x=1#f ", "node1").base);
    assertEquals("http://node1:41234", MapReduceProgress.address("http://eve@node1:41234/a", "node1").base);
    // Another host (here the cloud metadata address) is refused, naming both.
    String why = MapReduceProgress.address("http://169.254.169.254:80/latest/meta-data", "node1").refusal;
    assertTrue(why, why.contains("169.254.169.254") && why.contains("node1"));
    why = MapReduceProgress.address("http://node1.evil.example:80/", "node1").refusal;
    assertTrue(why, why.contains("node1.evil.example"));
    why = MapReduceProgress.address("file:///etc/passwd", "node1").refusal;
    assertTrue(why, why.contains("file:///etc/passwd") && why.contains("http or https"));
    why = MapReduceProgress.address("http://node1/", "node1").refusal;
    assertTrue(why, why.contains("no port"));
    assertNull(MapReduceProgress.address("http://node1:1/", "node1").refusal);
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
    Map<String, Double> got = MapReduceProgress.read(base, 2000, 10000, sorted);
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
    p.poll(ApplicationId.newInstance(1700000000000L, 1), base);
    assertEquals(Collections.singletonMap(C2, 1.0), passed);
    // The reduce's sort finish goes along with its progress.
    assertEquals(Collections.singletonMap(C2, 1700000006000L), sorted);
  }

  /**
   * A RUNNING MapReduce app (id n) whose AM registered {@code trackingUrl},
   * in a container YARN placed on {@code nodeHost}.
   */
  private static RMApp mapReduceApp(int n, String trackingUrl, String nodeHost) {
    RMApp app = mock(RMApp.class);
    when(app.getApplicationId()).thenReturn(ApplicationId.newInstance(1700000000000L, n));
    when(app.getApplicationType()).thenReturn("MAPREDUCE");
    RMAppAttempt attempt = mock(RMAppAttempt.class);
    when(app.getCurrentAppAttempt()).thenReturn(attempt);
    when(attempt.getAppAttemptState()).thenReturn(RMAppAttemptState.RUNNING);
    when(attempt.getOriginalTrackingUrl()).thenReturn(trackingUrl);
    Container master = mock(Container.class);
    when(master.getNodeId()).thenReturn(NodeId.newInstance(nodeHost, 45454));
    when(attempt.getMasterContainer()).thenReturn(master);
    return app;
  }

  /** An RM context holding these apps, in the order of their ids. */
  private static RMContext rmWith(RMApp... apps) {
    ConcurrentMap<ApplicationId, RMApp> m = new ConcurrentSkipListMap<>();
    for (RMApp a : apps) {
      m.put(a.getApplicationId(), a);
    }
    RMContext ctx = mock(RMContext.class);
    when(ctx.getRMApps()).thenReturn(m);
    return ctx;
  }

  private static boolean waitFor(java.util.function.BooleanSupplier done, long ms) throws InterruptedException {
    long end = System.currentTimeMillis() + ms;
    while (!done.getAsBoolean() && System.currentTimeMillis() < end) {
      Thread.sleep(10);
    }
    return done.getAsBoolean();
  }

  /**
   * A tracking URL is the user's to write: one naming a host other than the
   * AM's node (here the RM's own loopback, while the AM runs on node7) is
   * never asked, and each refusal is counted. An AM on its node is read.
   */
  @Test(timeout = 20000)
  public void aTrackingUrlNamingAnotherHostIsNeverAsked() throws Exception {
    String base = serve(fakeMapReduceAm(), 200);
    RMApp foreign = mapReduceApp(1, base + "/ws/v1/cluster/apps?state=RUNNING", "node7.example");
    Map<String, Double> passed = new ConcurrentHashMap<>();
    MapReduceProgress p = new MapReduceProgress(rmWith(foreign),
        (id, progress, sorted) -> passed.put(id.toString(), progress), 60000, 2000, id -> -1);
    try {
      p.pollAll();
      p.pollAll();
      Thread.sleep(200);
      assertEquals(2, p.refusals());
      assertTrue("the RM asked a host the AM does not run on: " + requested, requested.isEmpty());
      assertTrue(passed.isEmpty());
    } finally {
      p.stop();
    }
    // The same server as the AM's own node: read, on the pool.
    MapReduceProgress q = new MapReduceProgress(rmWith(mapReduceApp(1, base + "/ignored", "127.0.0.1")),
        (id, progress, sorted) -> passed.put(id.toString(), progress), 60000, 2000, id -> -1);
    try {
      q.pollAll();
      assertTrue(waitFor(() -> passed.size() == 2, 5000));
      assertEquals(0, q.refusals());
      assertFalse(requested.toString(), requested.toString().contains("cluster"));
    } finally {
      q.stop();
    }
  }

  /** A redirect could lead anywhere: refused and counted, its target never asked. */
  @Test(timeout = 20000)
  public void aRedirectIsRefusedNotFollowed() throws Exception {
    List<String> targetRequests = Collections.synchronizedList(new ArrayList<>());
    HttpServer target = fakeAm(fakeMapReduceAm(), 200, targetRequests);
    String targetBase = "http://127.0.0.1:" + target.getAddress().getPort();
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/", ex -> {
      requested.add(ex.getRequestURI().getPath());
      ex.getResponseHeaders().add("Location", targetBase + ex.getRequestURI().getPath());
      ex.sendResponseHeaders(302, -1);
      ex.close();
    });
    server.start();
    String base = "http://127.0.0.1:" + server.getAddress().getPort();
    try {
      try {
        MapReduceProgress.read(base, 2000);
        throw new AssertionError("a redirect was followed");
      } catch (MapReduceProgress.Refused e) {
        String why = e.getMessage();
        assertTrue(why, why.contains("302") && why.contains(base + "/ws/v1/mapreduce/jobs"));
      }
      Map<String, Double> passed = new HashMap<>();
      MapReduceProgress p = new MapReduceProgress(null,
          (id, progress, sorted) -> passed.put(id.toString(), progress), 60000, 2000, id -> -1);
      p.poll(ApplicationId.newInstance(1700000000000L, 1), base);
      p.stop();
      assertEquals(1, p.refusals());
      assertTrue(passed.isEmpty());
      assertTrue("the redirect's target was asked: " + targetRequests, targetRequests.isEmpty());
    } finally {
      target.stop(0);
    }
  }

  /**
   * A server that answers and then sends one byte every 200 ms (for up to
   * 30 s): within any per-read timeout, so only a deadline ends it. With
   * {@code headers}, the bytes are the response headers; else the body.
   */
  private static ServerSocket dripping(boolean headers, AtomicInteger connections) throws IOException {
    ServerSocket ss = new ServerSocket(0, 50, java.net.InetAddress.getByName("127.0.0.1"));
    Thread t = new Thread(() -> {
      while (!ss.isClosed()) {
        try {
          Socket s = ss.accept();
          connections.incrementAndGet();
          Thread h = new Thread(() -> {
            try (Socket c = s) {
              BufferedReader r =
                  new BufferedReader(new InputStreamReader(c.getInputStream(), StandardCharsets.US_ASCII));
              for (String line; (line = r.readLine()) != null && !line.isEmpty(); ) {
                // the request
              }
              OutputStream o = c.getOutputStream();
              o.write((headers ? "HTTP/1.1 200 OK\r\n" : "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n{")
                  .getBytes(StandardCharsets.US_ASCII));
              for (int i = 0; i < 150; i++) {
                o.write(headers ? 'X' : ' ');
                o.flush();
                Thread.sleep(200);
              }
            } catch (IOException | InterruptedException e) {
              // the client hung up
            }
          });
          h.setDaemon(true);
          h.start();
        } catch (IOException e) {
          return;
        }
      }
    });
    t.setDaemon(true);
    t.start();
    return ss;
  }

  /** App 1's fake AM answers, rewritten as app n's (its job, tasks and containers). */
  private static Map<String, String> fakeMapReduceAmOf(int n) {
    Map<String, String> m = new HashMap<>();
    String app = String.format("_1700000000000_%04d", n);
    for (Map.Entry<String, String> e : fakeMapReduceAm().entrySet()) {
      m.put(e.getKey().replace("_1700000000000_0001", app), e.getValue().replace("_1700000000000_0001", app));
    }
    return m;
  }

  /**
   * An AM that sends a byte every 200 ms is cut off at its deadline (the
   * per-read timeout never fires), and it delays no other AM: in the same
   * round, another AM's readings arrive at once.
   */
  @Test(timeout = 60000)
  public void aDrippingAmIsCutOffAtItsDeadlineWhileAnotherAmsProgressArrives() throws Exception {
    AtomicInteger dripConnections = new AtomicInteger();
    try (ServerSocket body = dripping(false, dripConnections);
         ServerSocket headers = dripping(true, dripConnections)) {
      String bodyBase = "http://127.0.0.1:" + body.getLocalPort();
      long t0 = System.nanoTime();
      try {
        MapReduceProgress.read(bodyBase, 2000, 1000, new HashMap<>());
        throw new AssertionError("a dripping AM was read to the end");
      } catch (MapReduceProgress.Refused e) {
        assertTrue(e.getMessage(), e.getMessage().contains("1000 ms deadline") && e.getMessage().contains(bodyBase));
      }
      long took = (System.nanoTime() - t0) / 1_000_000;
      assertTrue("cut off after " + took + " ms", took >= 900 && took < 2000);

      // App 1's AM drips its headers; app 2's answers. App 1 is queued first.
      String good = serve(fakeMapReduceAmOf(2), 200);
      RMApp slow = mapReduceApp(1, "http://127.0.0.1:" + headers.getLocalPort(), "127.0.0.1");
      RMApp fast = mapReduceApp(2, good, "127.0.0.1");
      CountDownLatch arrived = new CountDownLatch(2);
      MapReduceProgress p = new MapReduceProgress(rmWith(slow, fast),
          (id, progress, sorted) -> arrived.countDown(), 60000, 1500, id -> -1);
      try {
        t0 = System.nanoTime();
        p.pollAll();
        assertTrue("app 2's readings did not arrive while app 1's AM dripped",
            arrived.await(1000, TimeUnit.MILLISECONDS));
        p.pollAll(); // app 1 is still being read: not queued again
        // Cut off at its deadline (refused and counted). On a loaded 2-core machine the
        // watchdog may fire late, so the upper bound is loose; the lower one is the point.
        assertTrue("app 1 was never cut off", waitFor(() -> p.refusals() >= 1, 20000));
        took = (System.nanoTime() - t0) / 1_000_000;
        assertTrue("app 1 cut off after " + took + " ms", took >= 1400 && took < 20000);
        assertEquals("connections to the dripping AMs", 2, dripConnections.get());
      } finally {
        p.stop();
      }
    }
  }

  /**
   * Readings are checked against what the RM knows: progress never goes
   * back, and a reduce cannot have finished its sort before the RM allocated
   * its container.
   */
  @Test(timeout = 20000)
  public void progressGoingBackOrASortBeforeTheContainerExistedIsRefused() throws Exception {
    Map<String, String> am = new ConcurrentHashMap<>(fakeMapReduceAm());
    String base = serve(am, 200);
    Map<String, Double> passed = new ConcurrentHashMap<>();
    // C2's reduce says it sorted at ...06000; the RM allocated C2 at ...20000, beyond the clock slack.
    MapReduceProgress p = new MapReduceProgress(null,
        (id, progress, sorted) -> passed.put(id.toString(), progress), 60000, 5000,
        id -> id.toString().equals(C2) ? 1700000020000L : 1700000000000L);
    ApplicationId app = ApplicationId.newInstance(1700000000000L, 1);
    p.poll(app, base);
    assertEquals(Collections.singletonMap(C1, 0.425), passed);
    assertEquals(1, p.refusals());

    String path = "/ws/v1/mapreduce/jobs/" + JOB + "/tasks/task_1700000000000_0001_m_000000/attempts";
    am.put(path, MAP_ATTEMPTS.replace("42.5", "30.0"));
    passed.clear();
    p.poll(app, base);
    assertTrue("a lower progress was passed on: " + passed, passed.isEmpty());
    assertEquals(3, p.refusals()); // C1 went back, C2 still sorted too early

    am.put(path, MAP_ATTEMPTS.replace("42.5", "55.0"));
    p.poll(app, base);
    assertEquals(Collections.singletonMap(C1, 0.55), passed);
    p.stop();
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
   * In the RM: a MapReduce AM that registers a tracking URL naming another
   * host than its node is never asked; the refusals show on the MXBean
   * ({@code AmProgressRefusals}, read over JMX).
   */
  @Test(timeout = 60000)
  public void aForeignTrackingUrlIsRefusedAndCountedOnTheMXBean() throws Exception {
    YarnConfiguration conf = conf();
    conf.setLong(SojournConfig.AM_PROGRESS_MS, 50);
    start(conf);
    MockNM nm = rm.registerNode("127.0.0.1:1234", 8 * GB, 8);
    RMApp mr = submitTyped("MAPREDUCE", "mallory");
    MockAM am = MockRM.launchAM(mr, rm, nm);
    HttpServer elsewhere = fakeAm(fakeMapReduceAm(), 200, requested);
    try {
      // The AM runs on 127.0.0.1, and names localhost (where the RM's own services may listen).
      register(am.getApplicationAttemptId(), "http://localhost:" + elsewhere.getAddress().getPort() + "/x");
      ObjectName bean = new ObjectName("Hadoop:service=ResourceManager,name=SojournScheduler");
      assertTrue(waitFor(() -> {
        try {
          return (Long) ManagementFactory.getPlatformMBeanServer().getAttribute(bean, "AmProgressRefusals") >= 2;
        } catch (Exception e) {
          throw new AssertionError(e);
        }
      }, 10000));
      assertTrue("a foreign host was asked: " + requested, requested.isEmpty());
      assertEquals(0, scheduler().getProgressReports());
    } finally {
      elsewhere.stop(0);
    }
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
