package org.sojourn.yarn;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URL;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import java.util.function.ToLongFunction;
import java.util.regex.Pattern;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the progress of running MapReduce tasks from their AMs, for policies
 * that estimate task sizes from it (hfsp's Δ rule). The RM never sees task
 * progress: only the MapReduce AM does, and it serves it over its REST API.
 *
 * <p>Every {@code interval} ms a round picks the applications of type
 * MAPREDUCE whose current attempt is RUNNING (registered) and reads each on a
 * small fixed pool ({@value #THREADS} threads): {@code /ws/v1/mapreduce/jobs},
 * then the tasks of each running job, then the attempts of each running task.
 * Each running attempt's {@code assignedContainerId} and {@code progress}
 * (0–100) go to the {@link Sink} as a YARN container of that application and a
 * progress in [0, 1], when it differs from the last reading passed on.
 * Nothing here takes the scheduler's lock.
 *
 * <p>The address is the AM's own and no other (the tracking URL is written by
 * the user's AM, so taken as is it would let any user make the RM send GETs
 * anywhere): the tracking URL's host must be the host of the node YARN placed
 * the AM container on, and only its scheme and port are kept; the path is
 * fixed here. Redirects are refused, each AM's whole round has a deadline and
 * a byte budget, and readings are checked ({@link #poll}). Each refusal is
 * counted ({@link #refusals}) and warned about once per application.
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
  /** Per connect and per read. */
  static final int TIMEOUT_MS = 2000;
  /** One AM's whole round (all its requests) ends by then, however its server paces its bytes. */
  static final int DEADLINE_MS = 10000;
  /** AMs read at once: a slow AM holds one thread, up to its deadline. */
  static final int THREADS = 4;
  static final int WARN_AFTER_FAILURES = 3;
  /** An AM's answers in one round, in all: an AM may not fill the RM's heap. */
  static final int MAX_RESPONSE_BYTES = 16 << 20;
  /** How far an AM's clock may be off the RM's, for the sort-finish check. */
  static final long CLOCK_SLACK_MS = 5000;
  static final String JOBS_PATH = "/ws/v1/mapreduce/jobs";
  /** Job and task ids go into the path: word characters only, no '/', '.', '%' or '?'. */
  private static final Pattern ID = Pattern.compile("[A-Za-z0-9_-]+");
  /** Fires the deadlines: closes the connection of an AM that is past its own. */
  private static final ScheduledThreadPoolExecutor WATCHDOG = watchdog();

  /** Where the readings go. Called on the pool's threads. */
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

  /** The poller would not go on: a redirect, an answer over the budget, the deadline passed. */
  static final class Refused extends IOException {
    Refused(String message) {
      super(message);
    }
  }

  /** Where a running MapReduce AM is read ({@code base}), or why it is not ({@code refusal}). */
  static final class Address {
    final String base;
    final String refusal;

    private Address(String base, String refusal) {
      this.base = base;
      this.refusal = refusal;
    }

    static Address refused(String why) {
      return new Address(null, why);
    }
  }

  /** A reading passed on: compared with the next one. */
  private static final class Reading {
    final double progress;
    final long sortFinished;

    Reading(double progress, long sortFinished) {
      this.progress = progress;
      this.sortFinished = sortFinished;
    }

    boolean same(Reading o) {
      return o != null && o.progress == progress && o.sortFinished == sortFinished;
    }
  }

  private final RMContext rmContext;
  private final Sink sink;
  private final long intervalMs;
  private final long deadlineMs;
  /** When the RM allocated a container (epoch ms, RM clock); -1 when it does not know it. */
  private final ToLongFunction<ContainerId> allocatedAt;
  private ScheduledExecutorService rounds;
  private final ExecutorService pool;
  /** Applications being read now: a round does not queue one twice. */
  private final Set<ApplicationId> inFlight = ConcurrentHashMap.newKeySet();
  /** Failed rounds in a row, per application. */
  private final Map<ApplicationId, Integer> failures = new ConcurrentHashMap<>();
  private final Set<ApplicationId> warned = ConcurrentHashMap.newKeySet();
  private final Set<ApplicationId> warnedRefused = ConcurrentHashMap.newKeySet();
  private final AtomicLong refusals = new AtomicLong();
  /**
   * The readings passed on, per application (each written only by the one
   * thread reading that application): an unchanged reading is not passed on
   * again, and progress may not go back. Rebuilt at each read, so ended
   * containers drop out.
   */
  private final Map<ApplicationId, Map<ContainerId, Reading>> passed = new ConcurrentHashMap<>();

  MapReduceProgress(RMContext rmContext, Sink sink, long intervalMs) {
    this(rmContext, sink, intervalMs, DEADLINE_MS, id -> allocatedAt(rmContext, id));
  }

  MapReduceProgress(RMContext rmContext, Sink sink, long intervalMs, long deadlineMs,
      ToLongFunction<ContainerId> allocatedAt) {
    this.rmContext = rmContext;
    this.sink = sink;
    this.intervalMs = intervalMs;
    this.deadlineMs = deadlineMs;
    this.allocatedAt = allocatedAt;
    this.pool = Executors.newFixedThreadPool(THREADS, daemon("SojournScheduler-am-progress-read"));
  }

  private static ThreadFactory daemon(String name) {
    return r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      return t;
    };
  }

  private static ScheduledThreadPoolExecutor watchdog() {
    ScheduledThreadPoolExecutor w = new ScheduledThreadPoolExecutor(1, daemon("SojournScheduler-am-progress-deadline"));
    w.setRemoveOnCancelPolicy(true);
    return w;
  }

  private static long allocatedAt(RMContext rmContext, ContainerId id) {
    ResourceScheduler s = rmContext == null ? null : rmContext.getScheduler();
    RMContainer c = s == null ? null : s.getRMContainer(id);
    return c == null ? -1 : c.getCreationTime();
  }

  synchronized void start() {
    rounds = Executors.newSingleThreadScheduledExecutor(daemon("SojournScheduler-am-progress"));
    rounds.scheduleWithFixedDelay(this::pollAll, intervalMs, intervalMs, TimeUnit.MILLISECONDS);
  }

  synchronized void stop() throws InterruptedException {
    if (rounds != null) {
      rounds.shutdownNow();
      rounds.awaitTermination(2L * TIMEOUT_MS, TimeUnit.MILLISECONDS);
      rounds = null;
    }
    pool.shutdownNow();
    pool.awaitTermination(2L * TIMEOUT_MS, TimeUnit.MILLISECONDS);
  }

  /** AM reads and readings refused since start (see the class comment); the MXBean shows it. */
  long refusals() {
    return refusals.get();
  }

  /**
   * One round: queues a read of each running MapReduce AM not being read
   * already, and returns. Never throws.
   */
  void pollAll() {
    try {
      Set<ApplicationId> live = new HashSet<>();
      for (RMApp app : rmContext.getRMApps().values()) {
        Address a = amWebAddress(app);
        if (a == null) {
          continue;
        }
        ApplicationId id = app.getApplicationId();
        live.add(id);
        if (a.refusal != null) {
          refuse(id, a.refusal);
        } else if (inFlight.add(id)) {
          try {
            pool.execute(() -> {
              try {
                poll(id, a.base);
              } finally {
                inFlight.remove(id);
              }
            });
          } catch (RejectedExecutionException e) {
            inFlight.remove(id);
            return; // stopping
          }
        }
      }
      // Forget ended applications (one still being read is forgotten next round).
      Predicate<ApplicationId> ended = id -> !live.contains(id) && !inFlight.contains(id);
      failures.keySet().removeIf(ended);
      warned.removeIf(ended);
      warnedRefused.removeIf(ended);
      passed.keySet().removeIf(ended);
    } catch (RuntimeException e) {
      LOG.warn("sojourn: reading MapReduce task progress failed; the next round tries again", e);
    }
  }

  private void refuse(ApplicationId app, String why) {
    refusals.incrementAndGet();
    LOG.debug("sojourn: task progress of {} refused: {}", app, why);
    if (warnedRefused.add(app)) {
      LOG.warn("sojourn: task progress of {} refused: {} (logged once per application; the "
          + "AmProgressRefusals attribute counts refusals)", app, why);
    }
  }

  /**
   * Where to read a running MapReduce AM, or why not; null for an application
   * the poller does not read (not MAPREDUCE, not running, no tracking URL).
   */
  static Address amWebAddress(RMApp app) {
    if (!"MAPREDUCE".equalsIgnoreCase(app.getApplicationType())) {
      return null;
    }
    RMAppAttempt a = app.getCurrentAppAttempt();
    if (a == null || a.getAppAttemptState() != RMAppAttemptState.RUNNING) {
      return null;
    }
    String tracking = a.getOriginalTrackingUrl();
    if (tracking == null || tracking.trim().isEmpty() || "N/A".equals(tracking.trim())) {
      return null;
    }
    Container master = a.getMasterContainer();
    if (master == null || master.getNodeId() == null) {
      // An unmanaged AM runs wherever its user started it: YARN knows no host for it.
      return Address.refused("the AM runs in no container YARN placed (unmanaged), so its tracking URL '"
          + tracking + "' cannot be checked against a node");
    }
    return address(tracking, master.getNodeId().getHost());
  }

  /**
   * The base URL ({@code scheme://host:port}) to read an AM at, from the
   * tracking URL it registered, or a refusal naming it. The URL's host must
   * be {@code amNodeHost}, the node YARN placed the AM container on (MRAppMaster
   * registers that node's host name); its scheme (http or https) and port are
   * kept, anything else (user info, path, query) is dropped.
   */
  static Address address(String trackingUrl, String amNodeHost) {
    String u = trackingUrl.trim();
    if (!u.contains("://")) {
      u = "http://" + u;
    }
    URI uri;
    try {
      uri = new URI(u);
    } catch (URISyntaxException e) {
      return Address.refused("the tracking URL '" + trackingUrl + "' is not a URL: " + e.getMessage());
    }
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    if (!scheme.equals("http") && !scheme.equals("https")) {
      return Address.refused("the tracking URL '" + trackingUrl + "' is not http or https");
    }
    String host = uri.getHost();
    if (host != null && host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    if (host == null || !host.equalsIgnoreCase(amNodeHost)) {
      return Address.refused("the tracking URL '" + trackingUrl + "' names host " + host
          + ", not " + amNodeHost + ", the node YARN placed the AM on");
    }
    if (uri.getPort() <= 0) {
      return Address.refused("the tracking URL '" + trackingUrl + "' has no port");
    }
    String h = amNodeHost.contains(":") ? "[" + amNodeHost + "]" : amNodeHost;
    return new Address(scheme + "://" + h + ":" + uri.getPort(), null);
  }

  /**
   * Reads one AM and passes its checked readings on; failures are logged and
   * refusals counted, never thrown. The checks on a reading, beyond clamping
   * progress to [0, 1] ({@link #attemptProgress}):
   * <ul>
   *   <li>an AM speaks for its own application's containers only;</li>
   *   <li>progress does not go back: a reading below the last one passed on
   *   for the container is refused (the last one stands);</li>
   *   <li>a reduce's sort finish (the AM's clock) lies between the container's
   *   allocation (the RM's clock) and now, give or take {@value #CLOCK_SLACK_MS}
   *   ms: a task cannot have sorted before it existed, or in the future. Within
   *   the slack it is clamped into that span; beyond, the reading is refused.</li>
   * </ul>
   * Elapsed time is never taken from the AM: the core times a task from its
   * own start, so no reading can move it.
   */
  void poll(ApplicationId app, String base) {
    Map<String, Double> read;
    Map<String, Long> sorted = new HashMap<>();
    try {
      read = read(base, TIMEOUT_MS, deadlineMs, sorted);
    } catch (NotMapReduce e) {
      LOG.debug("sojourn: {} at {} is not a MapReduce AM: {}", app, base, e.getMessage());
      failures.remove(app);
      return;
    } catch (Refused e) {
      refuse(app, e.getMessage());
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
    Map<ContainerId, Reading> before = passed.getOrDefault(app, Collections.emptyMap());
    Map<ContainerId, Reading> now = new HashMap<>();
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
      Reading last = before.get(id);
      double p = e.getValue();
      long sortFinished = sorted.getOrDefault(e.getKey(), 0L);
      String wrong = null;
      if (last != null && p < last.progress) {
        wrong = "progress of " + id + " went back from " + last.progress + " to " + p;
      } else if (sortFinished > 0) {
        long created = allocatedAt.applyAsLong(id);
        long wall = System.currentTimeMillis();
        if (created >= 0 && (sortFinished < created - CLOCK_SLACK_MS || sortFinished > wall + CLOCK_SLACK_MS)) {
          wrong = id + " finished its sort at " + sortFinished + " (epoch ms), outside its life on the RM ("
              + created + " to " + wall + ")";
        } else if (created >= 0) {
          sortFinished = Math.max(created, Math.min(wall, sortFinished));
        }
      }
      if (wrong != null) {
        refuse(app, wrong);
        if (last != null) {
          now.put(id, last);
        }
        continue;
      }
      Reading r = new Reading(p, sortFinished);
      now.put(id, r);
      if (!r.same(last)) {
        sink.progress(id, p, sortFinished);
      }
    }
    passed.put(app, now);
  }

  /**
   * The running task attempts of the MapReduce AM at {@code base}: assigned
   * container id to progress in [0, 1].
   *
   * @throws NotMapReduce the AM answered 404 or not as a MapReduce AM
   * @throws Refused a redirect, over the byte budget or past the deadline
   * @throws IOException it could not be read (naming the URL)
   */
  static Map<String, Double> read(String base, int timeoutMs) throws IOException {
    return read(base, timeoutMs, DEADLINE_MS, new HashMap<>());
  }

  /**
   * {@link #read(String, int)} within {@code deadlineMs} in all, also putting
   * into {@code sortFinished} the running reduces' merge finish times
   * ({@link #attemptSortFinish}).
   */
  static Map<String, Double> read(String base, int timeoutMs, long deadlineMs, Map<String, Long> sortFinished)
      throws IOException {
    Map<String, Double> out = new LinkedHashMap<>();
    String jobsUrl = base + JOBS_PATH;
    try (Budget budget = new Budget(deadlineMs, MAX_RESPONSE_BYTES)) {
      JsonNode jobs = get(jobsUrl, timeoutMs, budget);
      if (!jobs.path("jobs").isObject()) {
        throw new NotMapReduce("no \"jobs\" object in the answer of " + jobsUrl);
      }
      for (String job : runningIds(jobs, "jobs", "job")) {
        String tasksUrl = jobsUrl + "/" + job + "/tasks";
        JsonNode tasks = getOrSkip(tasksUrl, timeoutMs, budget);
        for (String task : runningIds(tasks, "tasks", "task")) {
          JsonNode attempts = getOrSkip(tasksUrl + "/" + task + "/attempts", timeoutMs, budget);
          out.putAll(attemptProgress(attempts));
          sortFinished.putAll(attemptSortFinish(attempts));
        }
      }
    }
    return out;
  }

  /**
   * Below the jobs list, an AM already known to be a MapReduce AM: a 404 or
   * an odd answer (e.g. a job or task that just went away) skips that one
   * item (an empty answer); other failures still fail the round.
   */
  private static JsonNode getOrSkip(String url, int timeoutMs, Budget budget) throws IOException {
    try {
      return get(url, timeoutMs, budget);
    } catch (NotMapReduce e) {
      LOG.debug("sojourn: skipping {}: {}", url, e.getMessage());
      return Protocol.JSON.createObjectNode();
    }
  }

  /**
   * The ids of the RUNNING elements of a list answer, e.g. {@code {"jobs":
   * {"job": [{"id": ..., "state": "RUNNING"}, ...]}}}. Ids other than word
   * characters are skipped: they become path segments.
   */
  static List<String> runningIds(JsonNode answer, String outer, String inner) {
    List<String> ids = new ArrayList<>();
    for (JsonNode x : elements(answer, outer, inner)) {
      String id = x.path("id").asText("");
      if ("RUNNING".equals(x.path("state").asText()) && ID.matcher(id).matches()) {
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

  /**
   * GETs {@code url} as JSON within the budget: connect and read timeouts of
   * {@code timeoutMs} (less if the deadline is nearer), no redirects.
   */
  static JsonNode get(String url, int timeoutMs, Budget budget) throws IOException {
    HttpURLConnection c = (HttpURLConnection) new URL(url).openConnection();
    budget.attach(c, url);
    try {
      int t = budget.timeout(timeoutMs, url);
      c.setConnectTimeout(t);
      c.setReadTimeout(t);
      c.setRequestProperty("Accept", "application/json");
      // The RM asks the AM directly, as the web proxy does: AmIpFilter lets the
      // proxy's hosts through. A redirect could lead anywhere: refused.
      c.setInstanceFollowRedirects(false);
      int code;
      try {
        code = c.getResponseCode();
      } catch (IOException e) {
        budget.check(url);
        throw e;
      }
      if (code >= 300 && code < 400) {
        throw new Refused("HTTP " + code + " from " + url + " redirects to '" + c.getHeaderField("Location")
            + "': redirects are not followed");
      }
      if (code == HttpURLConnection.HTTP_NOT_FOUND) {
        throw new NotMapReduce("HTTP 404 from " + url);
      }
      if (code != HttpURLConnection.HTTP_OK) {
        throw new IOException("HTTP " + code + " from " + url);
      }
      budget.fits(c.getContentLengthLong(), url); // a declared length over the budget: not even read
      try (InputStream in = new Bounded(c.getInputStream(), budget, url)) {
        JsonNode j = Protocol.JSON.readTree(in);
        if (j == null || j.isMissingNode()) {
          throw new NotMapReduce("an empty answer from " + url);
        }
        return j;
      } catch (JsonProcessingException e) {
        budget.check(url);
        throw new NotMapReduce("not JSON from " + url + ": " + e.getOriginalMessage());
      } catch (IOException e) {
        budget.check(url);
        throw e;
      }
    } finally {
      budget.detach();
      c.disconnect();
    }
  }

  /**
   * One AM's round: a deadline for all its requests, enforced by closing the
   * open connection when it passes (a per-read timeout alone lets a server
   * that sends a byte a second hold on for ever), and a byte budget.
   */
  static final class Budget implements AutoCloseable {
    private final long deadlineMs;
    private final long endNanos;
    private final long maxBytes;
    private long bytesLeft;
    private final ScheduledFuture<?> alarm;
    private volatile ScheduledFuture<?> retry;
    private HttpURLConnection open;
    private boolean expired;

    Budget(long deadlineMs, long maxBytes) {
      this.deadlineMs = deadlineMs;
      this.endNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(deadlineMs);
      this.maxBytes = maxBytes;
      this.bytesLeft = maxBytes;
      this.alarm = WATCHDOG.schedule(this::expire, deadlineMs, TimeUnit.MILLISECONDS);
    }

    synchronized void attach(HttpURLConnection c, String url) throws Refused {
      check(url);
      open = c;
    }

    synchronized void detach() {
      open = null;
    }

    private void expire() {
      HttpURLConnection c;
      synchronized (this) {
        expired = true;
        c = open;
      }
      if (c != null) {
        // A disconnect while the connection is still being made finds no
        // socket to close, and a server dripping its headers would then hold
        // the reader past the deadline: try again until the reader lets go.
        // Scheduled first, so a disconnect that throws (it races the reader's
        // own use of the connection) cannot end the retries.
        retry = WATCHDOG.schedule(this::expire, 100, TimeUnit.MILLISECONDS);
        try {
          c.disconnect(); // fails the blocked read (outside the lock: disconnect may wait for a read)
        } catch (RuntimeException e) {
          LOG.debug("sojourn: disconnecting an AM past its deadline failed; trying again", e);
        }
      }
    }

    /** Throws if the deadline has passed. */
    synchronized void check(String url) throws Refused {
      if (expired || System.nanoTime() - endNanos >= 0) {
        expired = true;
        throw new Refused("the AM's answers did not all arrive within its " + deadlineMs
            + " ms deadline; cut off at " + url);
      }
    }

    int timeout(int perRead, String url) throws Refused {
      check(url);
      long left = TimeUnit.NANOSECONDS.toMillis(endNanos - System.nanoTime());
      return (int) Math.max(1, Math.min(perRead, left));
    }

    synchronized void take(long n, String url) throws Refused {
      bytesLeft -= n;
      if (bytesLeft < 0) {
        throw new Refused("the AM's answers are over " + maxBytes + " bytes in all, at " + url);
      }
    }

    synchronized void fits(long n, String url) throws Refused {
      if (n > bytesLeft) {
        throw new Refused("the answer of " + url + " declares " + n + " bytes, over the AM's budget of "
            + maxBytes + " bytes in all");
      }
    }

    @Override
    public void close() {
      alarm.cancel(false);
      synchronized (this) {
        open = null; // no further retries
      }
      ScheduledFuture<?> r = retry;
      if (r != null) {
        r.cancel(false);
      }
    }
  }

  /** Counts the bytes read against the budget, and stops at its deadline. */
  private static final class Bounded extends FilterInputStream {
    private final Budget budget;
    private final String url;

    Bounded(InputStream in, Budget budget, String url) {
      super(in);
      this.budget = budget;
      this.url = url;
    }

    private void count(long k) throws IOException {
      budget.check(url);
      budget.take(Math.max(0, k), url);
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
