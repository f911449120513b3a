package org.sojourn.yarn;

import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;

/**
 * Where an application runs, YARN's placement rules as admins know them from
 * FairScheduler and CapacityScheduler:
 *
 * <pre>
 * yarn.scheduler.sojourn.placement.default-queue         = dev    (a leaf, by name or path; unset: the leaf "default")
 * yarn.scheduler.sojourn.placement.user-as-default-queue = false  (true: first the leaf named after the user)
 * yarn.scheduler.sojourn.placement.unknown-queue         = reject (or "default": place it as if it named no queue)
 * </pre>
 *
 * <p>A job that names no queue reaches the scheduler as {@code default}
 * (RMAppManager and MapReduce's {@code mapreduce.job.queuename} both fill it
 * in), so {@code default} is read as "no queue named", as FairScheduler's
 * {@code specified} rule does. Such an app goes, in order, to the leaf named
 * after its user ({@code user-as-default-queue}; dots in the name become
 * {@code _dot_}, as in FairScheduler), then to {@code default-queue}. A queue
 * that does not exist is refused (CapacityScheduler; FairScheduler with
 * {@code create="false"}) unless {@code unknown-queue=default}. A parent
 * queue is always refused. Queues are never created on the fly: the tree is
 * the configured one, which the policy's keys are checked against.
 */
final class Placement {
  static final String DEFAULT_QUEUE = SojournConfig.PREFIX + "placement.default-queue";
  static final String USER_AS_DEFAULT = SojournConfig.PREFIX + "placement.user-as-default-queue";
  static final String UNKNOWN_QUEUE = SojournConfig.PREFIX + "placement.unknown-queue";
  /** The shim's own keys these add (relative to {@link SojournConfig#PREFIX}). */
  static final List<String> KEYS = Protocol.list("placement.default-queue",
      "placement.user-as-default-queue", "placement.unknown-queue");
  /** The name YARN gives an app that names no queue. */
  static final String YARN_DEFAULT = "default";

  /** The configured default leaf as written, or null (then the leaf "default", if any). */
  final String defaultQueue;
  final boolean userAsDefault;
  /** unknown-queue=default. */
  final boolean unknownToDefault;

  private Placement(String defaultQueue, boolean userAsDefault, boolean unknownToDefault) {
    this.defaultQueue = defaultQueue;
    this.userAsDefault = userAsDefault;
    this.unknownToDefault = unknownToDefault;
  }

  /**
   * Reads the placement keys and checks them against the configured tree.
   *
   * @throws IllegalArgumentException naming the offending key
   */
  static Placement read(Configuration conf, QueueTree.Spec spec) {
    String dq = conf.getTrimmed(DEFAULT_QUEUE, "");
    if (!dq.isEmpty()) {
      String path = leafPath(spec, dq);
      if (path == null) {
        throw new IllegalArgumentException("sojourn: " + DEFAULT_QUEUE + "='" + dq
            + "' is not a leaf queue of the tree (leaves: " + String.join(", ", leaves(spec)) + ")");
      }
    }
    String user = conf.getTrimmed(USER_AS_DEFAULT, "false");
    if (!user.equals("true") && !user.equals("false")) {
      throw new IllegalArgumentException("sojourn: " + USER_AS_DEFAULT + "='" + user
          + "' is not true or false");
    }
    String unknown = conf.getTrimmed(UNKNOWN_QUEUE, "reject");
    if (!unknown.equals("reject") && !unknown.equals("default")) {
      throw new IllegalArgumentException("sojourn: " + UNKNOWN_QUEUE + "='" + unknown
          + "' is not one of reject, default");
    }
    return new Placement(dq.isEmpty() ? null : dq, user.equals("true"), unknown.equals("default"));
  }

  /** The outcome: a leaf and the rule that chose it, or the reason for refusing. */
  static final class Result {
    final SojournQueue queue;
    final String rule;
    final String why;

    private Result(SojournQueue queue, String rule, String why) {
      this.queue = queue;
      this.rule = rule;
      this.why = why;
    }
  }

  /** Places an app submitted to {@code requested} by {@code user} in {@code tree}. */
  Result place(QueueTree tree, String requested, String user) {
    String r = requested == null ? "" : requested.trim();
    if (r.isEmpty() || r.equals(YARN_DEFAULT)) {
      return unnamed(tree, user, "names no queue (YARN's '" + YARN_DEFAULT + "')");
    }
    SojournQueue q = tree.find(r);
    if (q != null && q.isLeaf()) {
      return new Result(q, "specified", null);
    }
    if (q != null) {
      return new Result(null, null, "queue '" + r + "' is a parent queue; submit to one of its leaves ("
          + String.join(", ", tree.leafPaths()) + ")");
    }
    if (unknownToDefault) {
      return unnamed(tree, user, "names queue '" + r + "', which does not exist");
    }
    return new Result(null, null, "queue '" + r + "' does not exist (Sojourn's leaf queues: "
        + String.join(", ", tree.leafPaths()) + "; " + UNKNOWN_QUEUE
        + "=default would place it in the default queue)");
  }

  private Result unnamed(QueueTree tree, String user, String what) {
    if (userAsDefault && user != null && !user.trim().isEmpty()) {
      SojournQueue q = tree.find(user.trim().replace(".", "_dot_"));
      if (q != null && q.isLeaf()) {
        return new Result(q, "user", null);
      }
    }
    SojournQueue q = tree.find(defaultQueue != null ? defaultQueue : YARN_DEFAULT);
    if (q != null && q.isLeaf()) {
      return new Result(q, "default", null);
    }
    return new Result(null, null, "the application " + what + " and there is no default queue: "
        + "set " + DEFAULT_QUEUE + " to one of the leaf queues (" + String.join(", ", tree.leafPaths())
        + ")" + (userAsDefault ? "" : " or " + USER_AS_DEFAULT + "=true with a leaf per user"));
  }

  /** {@code name} as a leaf path of {@code spec} (full path, unique leaf name, or root-relative), or null. */
  static String leafPath(QueueTree.Spec spec, String name) {
    String n = name.trim();
    String[] tries = {n, QueueTree.ROOT + "." + n};
    for (String t : tries) {
      List<String> kids = spec.children.get(t);
      if (kids != null) {
        return kids.isEmpty() && !t.equals(QueueTree.ROOT) ? t : null;
      }
    }
    if (!n.contains(".")) {
      for (Map.Entry<String, List<String>> e : spec.children.entrySet()) {
        if (e.getValue().isEmpty() && QueueTree.leafName(e.getKey()).equals(n)) {
          return e.getKey();
        }
      }
    }
    return null;
  }

  private static List<String> leaves(QueueTree.Spec spec) {
    List<String> l = new java.util.ArrayList<>();
    for (Map.Entry<String, List<String>> e : spec.children.entrySet()) {
      if (e.getValue().isEmpty()) {
        l.add(e.getKey());
      }
    }
    return l;
  }

  /** For the log line and the web page. */
  String describe() {
    return "default-queue=" + (defaultQueue == null ? "(the leaf 'default')" : defaultQueue)
        + ", user-as-default-queue=" + userAsDefault
        + ", unknown-queue=" + (unknownToDefault ? "default" : "reject");
  }
}
