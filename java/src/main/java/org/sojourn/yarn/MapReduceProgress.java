package org.sojourn.yarn;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UnsupportedEncodingException;
import java.net.HttpURLConnection;
import java.net.URL;
import java.net.URLEncoder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the progress of running MapReduce tasks from their AMs, for policies
 * that estimate task sizes from it (hfsp's Δ rule). The RM never sees task
 * progress: only the MapReduce AM does, and it serves it over its REST API.
 *
 * <p>On its own daemon thread, every {@code interval} ms, for each
 * application of type MAPREDUCE whose current attempt is RUNNING (registered),
 * it reads {@code /ws/v1/mapreduce/jobs}, then the tasks of each running job,
 * then the attempts of each running task, from the address the AM registered
 * as its tracking URL (MRAppMaster registers {@code http://host:port} of its
 * web app; the attempt keeps it as the original tracking URL). Each running
 * attempt's {@code assignedContainerId} and {@code progress} (0–100) go to
 * the {@link Sink} as a YARN container of that application and a progress in
 * [0, 1], when it differs from the last round's. Nothing here takes the
 * scheduler's lock.
 *
 * <p>An AM whose jobs list answers 404 or something other than the jobs JSON
 * is not a MapReduce AM: it is skipped silently (DEBUG); below the jobs list,
 * such an answer skips only that job or task (it may have just gone away). Other failures (refused,
 * timed out, HTTP errors) are logged at DEBUG, and once per application as a
 * WARN after {@value #WARN_AFTER_FAILURES} failed rounds in a row (an AM that
 * is just starting or ending fails a round or two).
 */
final class MapReduceProgress {
  private static final Logger LOG = LoggerFactory.getLogger(MapReduceProgress.class);
  static final int TIMEOUT_MS = 2000;
  static final int WARN_AFTER_FAILURES = 3;
  /** Larger answers are refused: an AM may not fill the RM's heap. */
  static final int MAX_RESPONSE_BYTES = 16 << 20;

  /** Where the readings go. Called on the poller thread. */
  interface Sink {
    /**
     * A running task's progress in [0, 1] and, for a reduce past its shuffle
     * and sort, when that ended (the AM's clock, epoch ms; 0 when unknown).
     */
    void progress(ContainerId container, double progress, long sortFinishedEpochMs);
  }

  /** The AM did not answer as a MapReduce AM (404, or other JSON). */
  static final class NotMapReduce extends IOException {
    NotMapReduce(String message) {
      super(message);
    }
  }

  private final RMContext rmContext;
  private final Sink sink;
  private final long intervalMs;
  private ScheduledExecutorService thread;
  /** Failed rounds in a row, per application (poller thread only). */
  private final Map<ApplicationId, Integer> failures = new HashMap<>();
  private final Set<ApplicationId> warned = new HashSet<>();
  /**
   * The readings passed on in the last round (poller thread only): a reading
   * that has not changed since is not passed on again. Rebuilt every round,
   * so ended containers drop out.
   */
  private Map<ContainerId, List<Object>> passed = new HashMap<>();
  private Map<ContainerId, List<Object>> seen = new HashMap<>();

  MapReduceProgress(RMContext rmContext, Sink sink, long intervalMs) {
    this.rmContext = rmContext;
    this.sink = sink;
    this.intervalMs = intervalMs;
  }

  synchronized void start() {
    thread = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "SojournScheduler-am-progress");
      t.setDaemon(true);
      return t;
    });
    thread.scheduleWithFixedDelay(this::pollAll, intervalMs, intervalMs, TimeUnit.MILLISECONDS);
  }

  synchronized void stop() throws InterruptedException {
    if (thread != null) {
      thread.shutdownNow();
      thread.awaitTermination(2L * TIMEOUT_MS, TimeUnit.MILLISECONDS);
      thread = null;
    }
  }

  /** One round over the running MapReduce AMs. Never throws. */
  void pollAll() {
    try {
      Set<ApplicationId> polled = new HashSet<>();
      for (RMApp app : rmContext.getRMApps().values()) {
        if (Thread.currentThread().isInterrupted()) {
          return;
        }
        String base = amWebAddress(app);
        if (base != null) {
          polled.add(app.getApplicationId());
          poll(app.getApplicationId(), base);
        }
      }
      failures.keySet().retainAll(polled);
      warned.retainAll(polled);
      passed = seen;
      seen = new HashMap<>();
    } catch (RuntimeException e) {
      LOG.warn("sojourn: reading MapReduce task progress failed; the next round tries again", e);
    }
  }

  /**
   * The base URL of a running MapReduce AM's web app ({@code http://host:port}),
   * or null: not MAPREDUCE, not running (unregistered or ended), or no address.
   */
  static String amWebAddress(RMApp app) {
    if (!"MAPREDUCE".equalsIgnoreCase(app.getApplicationType())) {
      return null;
    }
    RMAppAttempt a = app.getCurrentAppAttempt();
    if (a == null || a.getAppAttemptState() != RMAppAttemptState.RUNNING) {
      return null;
    }
    return baseUrl(a.getOriginalTrackingUrl());
  }

  /** A tracking URL as a base to append REST paths to; null if there is none. */
  static String baseUrl(String trackingUrl) {
    if (trackingUrl == null) {
      return null;
    }
    String u = trackingUrl.trim();
    if (u.isEmpty() || "N/A".equals(u)) {
      return null;
    }
    if (!u.contains("://")) {
      u = "http://" + u;
    }
    while (u.endsWith("/")) {
      u = u.substring(0, u.length() - 1);
    }
    return u;
  }

  /** Reads one AM and passes its readings on; failures are logged, never thrown. */
  void poll(ApplicationId app, String base) {
    Map<String, Double> read;
    Map<String, Long> sorted = new HashMap<>();
    try {
      read = read(base, TIMEOUT_MS, sorted);
    } catch (NotMapReduce e) {
      LOG.debug("sojourn: {} at {} is not a MapReduce AM: {}", app, base, e.getMessage());
      failures.remove(app);
      return;
    } catch (IOException | RuntimeException e) {
      int n = failures.merge(app, 1, Integer::sum);
      LOG.debug("sojourn: cannot read task progress of {} from its AM at {}", app, base, e);
      if (n >= WARN_AFTER_FAILURES && warned.add(app)) {
        LOG.warn("sojourn: cannot read task progress of {} from its AM at {} ({} rounds in a row; "
            + "last: {}); its tasks' sizes come from completions only. Logged once per application",
            app, base, n, e.toString());
      }
      return;
    }
    failures.remove(app);
    for (Map.Entry<String, Double> e : read.entrySet()) {
      ContainerId id;
      try {
        id = ContainerId.fromString(e.getKey());
      } catch (IllegalArgumentException ex) {
        LOG.debug("sojourn: the AM of {} names an unreadable container '{}'", app, e.getKey());
        continue;
      }
      if (!app.equals(id.getApplicationAttemptId().getApplicationId())) {
        // An AM speaks for its own containers only.
        LOG.debug("sojourn: the AM of {} reports progress of {}, not its own; ignored", app, id);
        continue;
      }
      long sortFinished = sorted.getOrDefault(e.getKey(), 0L);
      List<Object> reading = Arrays.asList(e.getValue(), sortFinished);
      seen.put(id, reading);
      if (!reading.equals(passed.get(id))) {
        sink.progress(id, e.getValue(), sortFinished);
      }
    }
  }

  /**
   * The running task attempts of the MapReduce AM at {@code base}: assigned
   * container id to progress in [0, 1].
   *
   * @throws NotMapReduce the AM answered 404 or not as a MapReduce AM
   * @throws IOException it could not be read (naming the URL)
   */
  static Map<String, Double> read(String base, int timeoutMs) throws IOException {
    return read(base, timeoutMs, new HashMap<>());
  }

  /**
   * {@link #read(String, int)}, also putting into {@code sortFinished} the
   * running reduces' merge finish times ({@link #attemptSortFinish}).
   */
  static Map<String, Double> read(String base, int timeoutMs, Map<String, Long> sortFinished)
      throws IOException {
    Map<String, Double> out = new LinkedHashMap<>();
    String jobsUrl = base + "/ws/v1/mapreduce/jobs";
    JsonNode jobs = get(jobsUrl, timeoutMs);
    if (!jobs.path("jobs").isObject()) {
      throw new NotMapReduce("no \"jobs\" object in the answer of " + jobsUrl);
    }
    for (String job : runningIds(jobs, "jobs", "job")) {
      String tasksUrl = jobsUrl + "/" + segment(job) + "/tasks";
      JsonNode tasks = getOrSkip(tasksUrl, timeoutMs);
      for (String task : runningIds(tasks, "tasks", "task")) {
        JsonNode attempts = getOrSkip(tasksUrl + "/" + segment(task) + "/attempts", timeoutMs);
        out.putAll(attemptProgress(attempts));
        sortFinished.putAll(attemptSortFinish(attempts));
      }
    }
    return out;
  }

  /**
   * Below the jobs list, an AM already known to be a MapReduce AM: a 404 or
   * an odd answer (e.g. a job or task that just went away) skips that one
   * item (an empty answer); other failures still fail the round.
   */
  private static JsonNode getOrSkip(String url, int timeoutMs) throws IOException {
    try {
      return get(url, timeoutMs);
    } catch (NotMapReduce e) {
      LOG.debug("sojourn: skipping {}: {}", url, e.getMessage());
      return Protocol.JSON.createObjectNode();
    }
  }

  /**
   * The ids of the RUNNING elements of a list answer, e.g. {@code {"jobs":
   * {"job": [{"id": ..., "state": "RUNNING"}, ...]}}}.
   */
  static List<String> runningIds(JsonNode answer, String outer, String inner) {
    List<String> ids = new ArrayList<>();
    for (JsonNode x : elements(answer, outer, inner)) {
      String id = x.path("id").asText("");
      if ("RUNNING".equals(x.path("state").asText()) && !id.isEmpty()) {
        ids.add(id);
      }
    }
    return ids;
  }

  /**
   * A task's attempts answer as assigned container id to progress in [0, 1],
   * for the {@link #runningAttempts running attempts}.
   */
  static Map<String, Double> attemptProgress(JsonNode answer) {
    Map<String, Double> out = new LinkedHashMap<>();
    for (JsonNode a : runningAttempts(answer)) {
      JsonNode p = a.path("progress");
      if (p.isNumber() && !Double.isNaN(p.asDouble())) {
        out.put(a.path("assignedContainerId").asText(), Math.max(0.0, Math.min(1.0, p.asDouble() / 100.0)));
      }
    }
    return out;
  }

  /**
   * A task's attempts answer as assigned container id to the time its
   * shuffle and sort ended ({@code mergeFinishTime}, epoch ms), for the
   * running reduce attempts past it: what HFSP's authors' code times reduces
   * from (hfsp.md D4).
   */
  static Map<String, Long> attemptSortFinish(JsonNode answer) {
    Map<String, Long> out = new LinkedHashMap<>();
    for (JsonNode a : runningAttempts(answer)) {
      long merged = a.path("mergeFinishTime").asLong(0);
      if ("REDUCE".equals(a.path("type").asText()) && merged > 0) {
        out.put(a.path("assignedContainerId").asText(), merged);
      }
    }
    return out;
  }

  /**
   * The attempts of a task's attempts answer ({@code {"taskAttempts":
   * {"taskAttempt": [...]}}}) that run in a container: RUNNING, or
   * COMMIT_PENDING (done, waiting to commit; still in its container).
   */
  private static List<JsonNode> runningAttempts(JsonNode answer) {
    List<JsonNode> out = new ArrayList<>();
    for (JsonNode a : elements(answer, "taskAttempts", "taskAttempt")) {
      String state = a.path("state").asText();
      if (("RUNNING".equals(state) || "COMMIT_PENDING".equals(state))
          && !a.path("assignedContainerId").asText("").isEmpty()) {
        out.add(a);
      }
    }
    return out;
  }

  /** {@code answer.outer.inner} as a list: an array, one object, or nothing. */
  private static List<JsonNode> elements(JsonNode answer, String outer, String inner) {
    JsonNode xs = answer.path(outer).path(inner);
    if (xs.isObject()) {
      return Collections.singletonList(xs);
    }
    List<JsonNode> out = new ArrayList<>();
    if (xs.isArray()) {
      for (JsonNode x : xs) {
        out.add(x);
      }
    }
    return out;
  }

  private static String segment(String id) throws UnsupportedEncodingException {
    return URLEncoder.encode(id, "UTF-8");
  }

  /** GETs {@code url} as JSON, with {@code timeoutMs} to connect and to read. */
  static JsonNode get(String url, int timeoutMs) throws IOException {
    HttpURLConnection c = (HttpURLConnection) new URL(url).openConnection();
    try {
      c.setConnectTimeout(timeoutMs);
      c.setReadTimeout(timeoutMs);
      c.setRequestProperty("Accept", "application/json");
      // A direct request from a host other than the web proxy's is redirected
      // to the proxy by the AM's AmIpFilter; the proxy then asks the AM.
      c.setInstanceFollowRedirects(true);
      int code = c.getResponseCode();
      if (code == HttpURLConnection.HTTP_NOT_FOUND) {
        throw new NotMapReduce("HTTP 404 from " + url);
      }
      if (code != HttpURLConnection.HTTP_OK) {
        throw new IOException("HTTP " + code + " from " + url);
      }
      try (InputStream in = new Bounded(c.getInputStream(), MAX_RESPONSE_BYTES, url)) {
        JsonNode j = Protocol.JSON.readTree(in);
        if (j == null || j.isMissingNode()) {
          throw new NotMapReduce("an empty answer from " + url);
        }
        return j;
      } catch (JsonProcessingException e) {
        throw new NotMapReduce("not JSON from " + url + ": " + e.getOriginalMessage());
      }
    } finally {
      c.disconnect();
    }
  }

  /** Fails a read past {@code max} bytes. */
  private static final class Bounded extends FilterInputStream {
    private final long max;
    private final String url;
    private long n;

    Bounded(InputStream in, long max, String url) {
      super(in);
      this.max = max;
      this.url = url;
    }

    private void count(long k) throws IOException {
      n += Math.max(0, k);
      if (n > max) {
        throw new IOException("the answer of " + url + " is over " + max + " bytes");
      }
    }

    @Override
    public int read() throws IOException {
      int b = super.read();
      count(b < 0 ? 0 : 1);
      return b;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      int k = super.read(b, off, len);
      count(k);
      return k;
    }

    @Override
    public long skip(long k) throws IOException {
      long s = super.skip(k);
      count(s);
      return s;
    }
  }
}
