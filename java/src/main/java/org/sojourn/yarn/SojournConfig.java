package org.sojourn.yarn;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sojourn's settings from yarn-site.xml. Everything under
 * {@code yarn.scheduler.sojourn.} is either one of the shim's own keys below
 * or {@code <policy>.<param>}: the active policy's parameters go to Rust,
 * which validates them; keys of other known policies are kept for a later
 * switch and ignored; any other key is an error naming it. A refresh reads
 * them from yarn-site.xml again ({@link #withSiteFile}).
 */
final class SojournConfig {
  private static final Logger LOG = LoggerFactory.getLogger(SojournScheduler.class);
  static final String PREFIX = "yarn.scheduler.sojourn.";
  /** Policy name, as {@code sojourn policies} lists them. */
  static final String POLICY = PREFIX + "policy";
  static final String DEFAULT_POLICY = "fifo";
  /** Seed of the core's RNG. */
  static final String SEED = PREFIX + "seed";
  /** Milliseconds between asking the AM to give a container back and killing it. */
  static final String GRACE_MS = PREFIX + "preemption.grace-ms";
  static final long DEFAULT_GRACE_MS = 15000;
  /** Flight recorder: append every event the core receives to this file (JSON lines). */
  static final String RECORD = PREFIX + "record.path";
  /** The recorder's events file rotates past this many MiB (0: never): at most about twice this on disk. */
  static final String RECORD_MAX_MB = PREFIX + "record.max-mb";
  static final long DEFAULT_RECORD_MAX_MB = 1024;
  /** Period of the timer thread that fires policy wake-ups and preemption kills. */
  static final String TICK_MS = PREFIX + "tick-ms";
  static final long DEFAULT_TICK_MS = 100;
  /**
   * How a policy's suspend decision is carried out: {@code agent} (the
   * NodeManagers run {@code org.sojourn.yarn.nm.SuspendingContainerExecutor},
   * which pauses the container's processes), {@code kill} (YARN's kill
   * preemption; the work is lost) or {@code reject} (sent back to the policy).
   */
  static final String SUSPEND = PREFIX + "suspend";
  static final String DEFAULT_SUSPEND = "kill";
  static final List<String> SUSPEND_MODES =
      Collections.unmodifiableList(Protocol.list("agent", "kill", "reject"));
  /**
   * Every this many ms, read the progress of running MapReduce tasks from their
   * AMs' REST API and pass it to the policy (hfsp's Δ rule); 0: off.
   */
  static final String AM_PROGRESS_MS = PREFIX + "am-progress.interval-ms";
  static final long DEFAULT_AM_PROGRESS_MS = 0;
  /** Queue tree and ACLs: {@code queue.<path>.queues}, {@code queue.<path>.acl_*}. */
  static final String QUEUE = PREFIX + "queue.";
  /**
   * Where a policy's offloaded work (TetriSched's MILP solves) runs:
   * {@code process} (a child process, the {@code sojourn-offload} executable
   * this jar carries, so that a solver crash such as CBC's abort costs one
   * solve, whose cycle falls back to the greedy plan, not the RM) or
   * {@code thread} (the RM's offload thread, as before).
   */
  static final String OFFLOAD_ISOLATION = PREFIX + "offload.isolation";
  static final String DEFAULT_OFFLOAD_ISOLATION = "process";
  static final List<String> OFFLOAD_MODES =
      Collections.unmodifiableList(Protocol.list("process", "thread"));
  /** The child's executable for {@code process}; empty: the one extracted from this jar. */
  static final String OFFLOAD_COMMAND = PREFIX + "offload.command";
  /**
   * At most this many containers placed while one NODE_UPDATE is handled
   * (CapacityScheduler's {@code per-node-heartbeat.maximum-container-assignments});
   * -1: no limit. The core refuses a placement past it before the policy
   * decides it, so nothing is decided and then dropped; what waits goes at
   * the next heartbeats. A gang, which it cannot split, starts whole while any
   * is left. It bounds the time a heartbeat holds the scheduler's
   * lock (each container placed costs YARN's books about 15 us).
   */
  static final String MAX_ASSIGNMENTS = PREFIX + "per-node-heartbeat.maximum-container-assignments";
  static final long DEFAULT_MAX_ASSIGNMENTS = 8;

  private static final List<String> OWN;

  static {
    List<String> own = new ArrayList<>(Protocol.list("policy", "seed", "preemption.grace-ms", "record.path",
        "record.max-mb", "tick-ms", "suspend", "suspend.secret-file", "am-progress.interval-ms",
        "offload.isolation", "offload.command", "per-node-heartbeat.maximum-container-assignments"));
    own.addAll(Placement.KEYS);
    OWN = Collections.unmodifiableList(own);
  }

  final String policy;
  final Map<String, String> params;
  final long seed;
  final long graceMs;
  final String recordPath;
  /** See {@link #RECORD_MAX_MB}. */
  final long recordMaxMb;
  final long tickMs;
  /** agent, kill or reject: see {@link #SUSPEND}. */
  final String suspend;
  /** See {@link #AM_PROGRESS_MS}; 0: off. */
  final long amProgressMs;
  final QueueTree.Spec queues;
  /** Where apps go: see {@link Placement}. */
  final Placement placement;
  /** process or thread: see {@link #OFFLOAD_ISOLATION}. */
  final String offloadIsolation;
  /** See {@link #OFFLOAD_COMMAND}; null: the jar's. */
  final String offloadCommand;
  /** See {@link #MAX_ASSIGNMENTS}; -1: no limit. */
  final long maxAssignments;

  private SojournConfig(String policy, Map<String, String> params, long seed, long graceMs,
      String recordPath, long recordMaxMb, long tickMs, String suspend, long amProgressMs,
      QueueTree.Spec queues, Placement placement, String offloadIsolation, String offloadCommand,
      long maxAssignments) {
    this.maxAssignments = maxAssignments;
    this.offloadIsolation = offloadIsolation;
    this.offloadCommand = offloadCommand;
    this.policy = policy;
    this.params = params;
    this.seed = seed;
    this.graceMs = graceMs;
    this.recordPath = recordPath;
    this.recordMaxMb = recordMaxMb;
    this.tickMs = tickMs;
    this.suspend = suspend;
    this.amProgressMs = amProgressMs;
    this.queues = queues;
    this.placement = placement;
  }

  /** The names of the policies the native library implements. */
  static List<String> knownPolicies() {
    List<String> names = new ArrayList<>();
    try {
      for (JsonNode p : Protocol.JSON.readTree(Native.catalog())) {
        names.add(p.path("name").asText());
      }
    } catch (IOException e) {
      throw new IllegalStateException("sojourn: cannot read the policy catalog: " + e, e);
    }
    return names;
  }

  /**
   * Reads and checks the settings.
   *
   * @throws IllegalArgumentException naming the offending key
   */
  static SojournConfig read(Configuration conf) {
    List<String> known = knownPolicies();
    String policy = conf.getTrimmed(POLICY, DEFAULT_POLICY);
    if (!known.contains(policy)) {
      throw new IllegalArgumentException("sojourn: " + POLICY + "='" + policy
          + "' is not a known policy (known: " + String.join(", ", known) + ")");
    }
    Map<String, String> params = new TreeMap<>();
    TreeSet<String> unknown = new TreeSet<>();
    for (Map.Entry<String, String> e : conf.getPropsWithPrefix(PREFIX).entrySet()) {
      String key = e.getKey();
      if (OWN.contains(key) || key.startsWith("queue.")) {
        continue;
      }
      int dot = key.indexOf('.');
      String head = dot < 0 ? key : key.substring(0, dot);
      if (dot > 0 && head.equals(policy)) {
        params.put(key.substring(dot + 1), e.getValue());
      } else if (dot > 0 && known.contains(head)) {
        continue; // a parameter of another policy: kept for a switch, unused now
      } else {
        unknown.add(PREFIX + key);
      }
    }
    if (!unknown.isEmpty()) {
      throw new IllegalArgumentException("sojourn: unknown configuration key(s) " + unknown
          + ": neither a Sojourn setting (" + PREFIX + "{" + String.join(", ", OWN)
          + ", queue.*}) nor a parameter of a known policy (" + PREFIX + "<policy>.<param>, "
          + "policies: " + String.join(", ", known) + ")");
    }
    long seed = longAtLeast(conf, SEED, 0, Long.MIN_VALUE);
    long grace = longAtLeast(conf, GRACE_MS, DEFAULT_GRACE_MS, 0);
    long tick = longAtLeast(conf, TICK_MS, DEFAULT_TICK_MS, 1);
    String record = conf.getTrimmed(RECORD, "");
    long recordMaxMb = longAtLeast(conf, RECORD_MAX_MB, DEFAULT_RECORD_MAX_MB, 0);
    String suspend = conf.getTrimmed(SUSPEND, DEFAULT_SUSPEND);
    if (!SUSPEND_MODES.contains(suspend)) {
      throw new IllegalArgumentException("sojourn: " + SUSPEND + "='" + suspend
          + "' is not one of " + String.join(", ", SUSPEND_MODES));
    }
    long amProgress = longAtLeast(conf, AM_PROGRESS_MS, DEFAULT_AM_PROGRESS_MS, 0);
    String isolation = conf.getTrimmed(OFFLOAD_ISOLATION, DEFAULT_OFFLOAD_ISOLATION);
    if (!OFFLOAD_MODES.contains(isolation)) {
      throw new IllegalArgumentException("sojourn: " + OFFLOAD_ISOLATION + "='" + isolation
          + "' is not one of " + String.join(", ", OFFLOAD_MODES));
    }
    String command = conf.getTrimmed(OFFLOAD_COMMAND, "");
    long maxAssignments = longAtLeast(conf, MAX_ASSIGNMENTS, DEFAULT_MAX_ASSIGNMENTS, -1);
    if (maxAssignments == 0 || maxAssignments > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("sojourn: " + MAX_ASSIGNMENTS + "=" + maxAssignments
          + " is out of range: at least 1 container per heartbeat (0 would place none), at most "
          + Integer.MAX_VALUE + ", or -1 for no limit");
    }
    QueueTree.Spec spec = QueueTree.Spec.read(conf);
    checkPolicyQueues(policy, params, spec);
    return new SojournConfig(policy, params, seed, grace, record.isEmpty() ? null : record, recordMaxMb,
        tick, suspend, amProgress, spec, Placement.read(conf, spec), isolation,
        command.isEmpty() ? null : command, maxAssignments);
  }

  /**
   * A policy's per-queue keys ({@code <policy>.queue.<path>.<param>}) must
   * name queues of the shim's tree: the shim places every app in one of its
   * leaves, so a key for any other queue would never apply (a typo, or a
   * queue removed from {@code queue.root.queues}). For a {@code queues} key,
   * each child it lists must be in the tree too.
   *
   * @throws IllegalArgumentException naming the key and the tree
   */
  static void checkPolicyQueues(String policy, Map<String, String> params, QueueTree.Spec spec) {
    checkLeafCreation(policy, params, spec);
    for (Map.Entry<String, String> e : params.entrySet()) {
      String k = e.getKey();
      if (!k.startsWith("queue.")) {
        continue;
      }
      int dot = k.lastIndexOf('.');
      String path = fullPath(k.substring("queue.".length(), Math.max(dot, "queue.".length())));
      String full = PREFIX + policy + "." + k;
      if (path.isEmpty() || !spec.children.containsKey(path)) {
        throw new IllegalArgumentException("sojourn: " + full + " names queue '" + path
            + "', which is not in Sojourn's queue tree " + spec.children.keySet() + " (set by "
            + QUEUE + "<path>.queues)");
      }
      if (k.endsWith(".queues")) {
        for (String child : e.getValue().split(",")) {
          String c = child.trim();
          if (!c.isEmpty() && !spec.children.containsKey(path + "." + c)) {
            throw new IllegalArgumentException("sojourn: " + full + " lists queue '" + path + "." + c
                + "', which is not in Sojourn's queue tree " + spec.children.keySet() + " (set by "
                + QUEUE + "<path>.queues)");
          }
        }
      }
    }
  }

  /**
   * Leaves created on placement must be ones the policy can serve: capacity
   * creates leaves only under parents with its own
   * {@code queue.<parent>.auto_create_child_queue_enabled} (the two lists
   * must agree), and fair only while {@code allow_undeclared_pools} is on.
   * The other policies take any leaf.
   *
   * @throws IllegalArgumentException naming the keys that disagree
   */
  static void checkLeafCreation(String policy, Map<String, String> params, QueueTree.Spec spec) {
    if (policy.equals("capacity")) {
      java.util.Set<String> policyAuto = new TreeSet<>();
      for (Map.Entry<String, String> e : params.entrySet()) {
        String k = e.getKey();
        String suffix = "." + QueueTree.AUTO_CREATE;
        if (k.startsWith("queue.") && k.endsWith(suffix) && e.getValue().trim().equalsIgnoreCase("true")) {
          policyAuto.add(fullPath(k.substring("queue.".length(), k.length() - suffix.length())));
        }
      }
      if (!policyAuto.equals(spec.autoCreate)) {
        throw new IllegalArgumentException("sojourn: the shim creates leaves under " + spec.autoCreate
            + " (" + QUEUE + "<parent>." + QueueTree.AUTO_CREATE + ") but the capacity policy under "
            + policyAuto + " (" + PREFIX + "capacity.queue.<parent>." + QueueTree.AUTO_CREATE
            + "): set both for the same parents");
      }
    } else if (policy.equals("fair") && !spec.autoCreate.isEmpty()
        && params.getOrDefault("allow_undeclared_pools", "true").trim().equalsIgnoreCase("false")) {
      throw new IllegalArgumentException("sojourn: " + QUEUE + "<parent>." + QueueTree.AUTO_CREATE
          + " is set for " + spec.autoCreate + " but " + PREFIX
          + "fair.allow_undeclared_pools=false forbids the fair policy queues it was not configured with");
    }
  }

  /** {@code a.b} as {@code root.a.b}, as the policies read queue names. */
  private static String fullPath(String p) {
    String t = p.trim();
    if (t.isEmpty() || t.equals(QueueTree.ROOT) || t.startsWith(QueueTree.ROOT + ".")) {
      return t;
    }
    return QueueTree.ROOT + "." + t;
  }

  /**
   * {@code conf} with the {@code yarn.scheduler.sojourn.*} keys of the
   * current yarn-site.xml, as the RM's ConfigurationProvider gives it
   * (LocalConfigurationProvider: the file on the classpath, i.e. in
   * HADOOP_CONF_DIR; FileSystemBasedConfigurationProvider: the file in
   * {@code yarn.resourcemanager.configuration.file-system-based-store}). The
   * file's Sojourn keys replace {@code conf}'s; a Sojourn key that
   * {@code conf} got from yarn-site.xml and the file no longer has is removed.
   * Keys set another way (programmatically, another resource) stay. Without a
   * provider or a file, {@code conf} itself.
   *
   * @throws IOException the file cannot be read or parsed (naming it)
   */
  static Configuration withSiteFile(Configuration conf, RMContext context) throws IOException {
    if (context == null || context.getConfigurationProvider() == null) {
      return conf;
    }
    String name = YarnConfiguration.YARN_SITE_CONFIGURATION_FILE;
    Configuration site = new Configuration(false);
    try (java.io.InputStream in = context.getConfigurationProvider().getConfigurationInputStream(conf, name)) {
      if (in == null) {
        LOG.info("sojourn: refresh: the configuration provider has no {}; using the RM's configuration", name);
        return conf;
      }
      site.addResource(in, name);
      site.size(); // parse now, while the stream is open
    } catch (IOException | org.apache.hadoop.yarn.exceptions.YarnException | RuntimeException e) {
      throw new IOException("sojourn: refresh: cannot read " + name + " through "
          + context.getConfigurationProvider().getClass().getName() + ": " + e.getMessage(), e);
    }
    Configuration out = new Configuration(conf);
    for (String key : conf.getPropsWithPrefix(SojournConfig.PREFIX).keySet()) {
      String full = SojournConfig.PREFIX + key;
      String[] from = conf.getPropertySources(full);
      if (site.getRaw(full) == null && from != null && Arrays.asList(from).contains(name)) {
        out.unset(full);
      }
    }
    Map<String, String> fresh = site.getPropsWithPrefix(SojournConfig.PREFIX);
    for (Map.Entry<String, String> e : fresh.entrySet()) {
      out.set(SojournConfig.PREFIX + e.getKey(), e.getValue(), name);
    }
    LOG.info("sojourn: refresh reads {} Sojourn key(s) from {} through {}", fresh.size(), name,
        context.getConfigurationProvider().getClass().getSimpleName());
    return out;
  }

  private static long longAtLeast(Configuration conf, String key, long dflt, long min) {
    String v = conf.getTrimmed(key);
    if (v == null || v.isEmpty()) {
      return dflt;
    }
    long x;
    try {
      x = Long.parseLong(v);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("sojourn: " + key + "='" + v + "' is not an integer");
    }
    if (x < min) {
      throw new IllegalArgumentException("sojourn: " + key + "=" + x + " is below the minimum " + min);
    }
    return x;
  }
}
