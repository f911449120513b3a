package org.sojourn.yarn;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.Groups;

/**
 * Where an application runs, YARN's placement rules as admins know them from
 * FairScheduler and CapacityScheduler:
 *
 * <pre>
 * yarn.scheduler.sojourn.placement.default-queue         = dev    (a leaf, by name or path; unset: the leaf "default")
 * yarn.scheduler.sojourn.placement.user-as-default-queue = false  (true: first the leaf named after the user)
 * yarn.scheduler.sojourn.placement.unknown-queue         = reject (or "default": go on to the next rule)
 * yarn.scheduler.sojourn.placement.rules                 = specified,user@primaryGroup,primaryGroup,default
 * </pre>
 *
 * <p>A job that names no queue reaches the scheduler as {@code default}
 * (RMAppManager and MapReduce's {@code mapreduce.job.queuename} both fill it
 * in), so {@code default} is read as "no queue named", as FairScheduler's
 * {@code specified} rule does.
 *
 * <p>The rules are tried in order, as FairScheduler's queuePlacementPolicy:
 * <ul>
 * <li>{@code specified}: the queue the app names;
 * <li>{@code user}: the leaf named after the user ({@code .} written
 *     {@code _dot_}); {@code user@<parent>}: the leaf {@code <parent>.<user>}
 *     (CapacityScheduler's {@code u:%user:<parent>.%user});
 *     {@code user@primaryGroup}: the user's leaf under the parent queue named
 *     after the primary group (FairScheduler's nestedUserQueue);
 * <li>{@code primaryGroup}: the leaf named after the user's primary group;
 *     {@code secondaryGroupExistingQueue}: the first secondary group that has
 *     a leaf (groups from Hadoop's {@code hadoop.security.group.mapping});
 * <li>{@code default}: {@code default-queue}; {@code reject}: refuse.
 * </ul>
 * A rule whose leaf is missing creates it when the leaf's parent has
 * {@code queue.<parent>.auto_create_child_queue_enabled=true} (see
 * {@link QueueTree}); otherwise it does not match and the next rule is
 * tried. A named queue that exists nowhere and cannot be created is refused
 * at once (CapacityScheduler; FairScheduler with {@code create="false"})
 * unless {@code unknown-queue=default}. A parent queue is always refused.
 * Without {@code rules}: {@code specified}, then {@code user} if
 * {@code user-as-default-queue}, then {@code default}.
 */
final class Placement {
  static final String DEFAULT_QUEUE = SojournConfig.PREFIX + "placement.default-queue";
  static final String USER_AS_DEFAULT = SojournConfig.PREFIX + "placement.user-as-default-queue";
  static final String UNKNOWN_QUEUE = SojournConfig.PREFIX + "placement.unknown-queue";
  static final String RULES = SojournConfig.PREFIX + "placement.rules";
  /** The shim's own keys these add (relative to {@link SojournConfig#PREFIX}). */
  static final List<String> KEYS = Protocol.list("placement.default-queue",
      "placement.user-as-default-queue", "placement.unknown-queue", "placement.rules");
  /** The name YARN gives an app that names no queue. */
  static final String YARN_DEFAULT = "default";
  static final String PRIMARY_GROUP = "primaryGroup";
  private static final List<String> RULE_NAMES = Protocol.list("specified", "user", PRIMARY_GROUP,
      "secondaryGroupExistingQueue", "default", "reject");

  /** The configured default leaf as written, or null (then the leaf "default", if any). */
  final String defaultQueue;
  /** unknown-queue=default. */
  final boolean unknownToDefault;
  /** The rules, in order, as written ({@code user@root.users}). */
  final List<String> rules;
  /** Hadoop's group mapping, if a rule needs groups. */
  private final Groups groups;

  private Placement(String defaultQueue, boolean unknownToDefault, List<String> rules, Groups groups) {
    this.defaultQueue = defaultQueue;
    this.unknownToDefault = unknownToDefault;
    this.rules = Collections.unmodifiableList(rules);
    this.groups = groups;
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
    List<String> rules = new ArrayList<>();
    String written = conf.getTrimmed(RULES, "");
    if (written.isEmpty()) {
      rules.add("specified");
      if (user.equals("true")) {
        rules.add("user");
      }
      rules.add("default");
    } else {
      if (conf.getTrimmed(USER_AS_DEFAULT) != null) {
        throw new IllegalArgumentException("sojourn: set " + RULES + " or " + USER_AS_DEFAULT
            + ", not both (with rules, write 'user' where the user's queue should come)");
      }
      for (String r : conf.getTrimmedStringCollection(RULES)) {
        checkRule(r, spec);
        rules.add(r);
      }
    }
    boolean needsGroups = false;
    for (String r : rules) {
      needsGroups |= r.contains(PRIMARY_GROUP) || r.startsWith("secondaryGroup");
    }
    return new Placement(dq.isEmpty() ? null : dq, unknown.equals("default"), rules,
        needsGroups ? new Groups(conf) : null);
  }

  private static void checkRule(String r, QueueTree.Spec spec) {
    int at = r.indexOf('@');
    String name = at < 0 ? r : r.substring(0, at);
    if (!RULE_NAMES.contains(name)) {
      throw new IllegalArgumentException("sojourn: " + RULES + ": unknown rule '" + r + "' (rules: "
          + String.join(", ", RULE_NAMES) + ", user@<parent queue>, user@" + PRIMARY_GROUP + ")");
    }
    if (at < 0) {
      return;
    }
    String parent = r.substring(at + 1);
    if (!name.equals("user")) {
      throw new IllegalArgumentException("sojourn: " + RULES + ": '" + r + "': only the user rule nests "
          + "(user@<parent queue> or user@" + PRIMARY_GROUP + ")");
    }
    if (parent.equals(PRIMARY_GROUP)) {
      return;
    }
    String path = parent.startsWith(QueueTree.ROOT) ? parent : QueueTree.ROOT + "." + parent;
    if (!spec.children.containsKey(path) || spec.isLeaf(path)) {
      throw new IllegalArgumentException("sojourn: " + RULES + ": '" + r + "' names '" + parent
          + "', which is not a parent queue of the tree " + spec.children.keySet());
    }
  }

  /**
   * The outcome: a leaf (or, with {@link #create}, the path of a leaf to
   * create) and the rule that chose it, or the reason for refusing.
   */
  static final class Result {
    final SojournQueue queue;
    /** A leaf to create under a parent that creates leaves, or null. */
    final String create;
    final String rule;
    final String why;

    private Result(SojournQueue queue, String create, String rule, String why) {
      this.queue = queue;
      this.create = create;
      this.rule = rule;
      this.why = why;
    }

    static Result refused(String why) {
      return new Result(null, null, null, why);
    }
  }

  /**
   * Places an app submitted to {@code requested} by {@code user} in
   * {@code tree}. A recovering app names the leaf it ran in, which is
   * created again if it was created on placement.
   */
  Result place(QueueTree tree, String requested, String user, boolean recovering) {
    String r = requested == null ? "" : requested.trim();
    boolean unnamed = r.isEmpty() || r.equals(YARN_DEFAULT);
    if (recovering && !unnamed) {
      Result again = leafOrCreate(tree, r, "recovered");
      if (again != null) {
        return again;
      }
    }
    List<String> tried = new ArrayList<>();
    for (String rule : rules) {
      Result out;
      if (rule.equals("specified")) {
        if (unnamed) {
          continue;
        }
        SojournQueue q = tree.find(r);
        if (q != null && !q.isLeaf()) {
          return Result.refused("queue '" + r + "' is a parent queue; submit to one of its leaves ("
              + String.join(", ", tree.leafPaths()) + ")");
        }
        out = leafOrCreate(tree, r, rule);
        if (out == null && !unknownToDefault) {
          return Result.refused("queue '" + r + "' does not exist (Sojourn's leaf queues: "
              + String.join(", ", tree.leafPaths()) + "; " + UNKNOWN_QUEUE
              + "=default would go on to the next placement rule, " + rulesText() + ")");
        }
      } else if (rule.equals("reject")) {
        return Result.refused("the placement rule 'reject' was reached (" + rulesText() + "; tried "
            + String.join(", ", tried) + ")");
      } else if (rule.equals("default")) {
        SojournQueue q = tree.find(defaultQueue != null ? defaultQueue : YARN_DEFAULT);
        out = q != null && q.isLeaf() ? new Result(q, null, rule, null) : null;
      } else {
        out = byUserOrGroup(tree, rule, user);
      }
      if (out != null) {
        return out;
      }
      tried.add(rule);
    }
    String what = unnamed ? "names no queue (YARN's '" + YARN_DEFAULT + "')" : "names queue '" + r + "'";
    return Result.refused("the application " + what + " and no placement rule placed it ("
        + rulesText() + "): set " + DEFAULT_QUEUE + " to one of the leaf queues ("
        + String.join(", ", tree.leafPaths()) + "), or let a parent create leaves with "
        + QueueTree.autoCreateKey("<parent>") + "=true");
  }

  /** The user and group rules; null when the rule does not match. */
  private Result byUserOrGroup(QueueTree tree, String rule, String user) {
    String u = user == null ? "" : clean(user);
    if (u.isEmpty()) {
      return null;
    }
    List<String> gs = groupsOf(user);
    switch (rule) {
      case "user":
        return leafOrCreate(tree, u, rule);
      case PRIMARY_GROUP:
        return gs.isEmpty() ? null : leafOrCreate(tree, clean(gs.get(0)), rule);
      case "secondaryGroupExistingQueue":
        for (String g : gs.subList(Math.min(1, gs.size()), gs.size())) {
          SojournQueue q = tree.find(clean(g));
          if (q != null && q.isLeaf()) {
            return new Result(q, null, rule, null);
          }
        }
        return null;
      default: // user@<parent> or user@primaryGroup
        String parent = rule.substring(rule.indexOf('@') + 1);
        if (parent.equals(PRIMARY_GROUP)) {
          if (gs.isEmpty()) {
            return null;
          }
          SojournQueue p = tree.find(clean(gs.get(0)));
          if (p == null) {
            // A group's parent found by name: a leaf of that name is no parent.
            p = findParentByName(tree, clean(gs.get(0)));
          }
          if (p == null || p.isLeaf()) {
            return null;
          }
          parent = p.getPath();
        } else if (!parent.startsWith(QueueTree.ROOT)) {
          parent = QueueTree.ROOT + "." + parent;
        }
        return leafOrCreate(tree, parent + "." + u, rule);
    }
  }

  private static SojournQueue findParentByName(QueueTree tree, String name) {
    for (SojournQueue q : tree.all()) {
      if (!q.isLeaf() && q.getQueueName().equals(name)) {
        return q;
      }
    }
    return null;
  }

  /**
   * The leaf {@code name} (path or unique leaf name), or the path to create
   * when it is missing and its parent creates leaves (a bare name goes under
   * root); null otherwise.
   */
  private static Result leafOrCreate(QueueTree tree, String name, String rule) {
    SojournQueue q = tree.find(name);
    if (q != null) {
      return q.isLeaf() ? new Result(q, null, rule, null) : null;
    }
    String path = name.startsWith(QueueTree.ROOT + ".") ? name : QueueTree.ROOT + "." + name;
    int dot = path.lastIndexOf('.');
    if (tree.createsUnder(path.substring(0, dot)) && tree.find(path.substring(dot + 1)) == null) {
      return new Result(null, path, rule, null);
    }
    return null;
  }

  /** Groups of {@code user}, primary first; none if the mapping knows none. */
  private List<String> groupsOf(String user) {
    if (groups == null) {
      return Collections.emptyList();
    }
    try {
      return groups.getGroups(user);
    } catch (IOException e) {
      return Collections.emptyList();
    }
  }

  /** A user or group name as a queue name, as FairScheduler writes it. */
  private static String clean(String name) {
    return name.trim().replace(".", "_dot_");
  }

  private String rulesText() {
    return RULES + "=" + String.join(",", rules);
  }

  /** {@code name} as a leaf path of {@code spec} (full path, unique leaf name, or root-relative), or null. */
  static String leafPath(QueueTree.Spec spec, String name) {
    String n = name.trim();
    String[] tries = {n, QueueTree.ROOT + "." + n};
    for (String t : tries) {
      if (spec.children.containsKey(t)) {
        return spec.isLeaf(t) && !t.equals(QueueTree.ROOT) ? t : null;
      }
    }
    if (!n.contains(".")) {
      for (String path : spec.children.keySet()) {
        if (spec.isLeaf(path) && QueueTree.leafName(path).equals(n)) {
          return path;
        }
      }
    }
    return null;
  }

  private static List<String> leaves(QueueTree.Spec spec) {
    List<String> l = new ArrayList<>();
    for (String path : spec.children.keySet()) {
      if (spec.isLeaf(path)) {
        l.add(path);
      }
    }
    return l;
  }

  /** For the log line and the web page. */
  String describe() {
    return "rules=" + String.join(",", rules)
        + ", default-queue=" + (defaultQueue == null ? "(the leaf 'default')" : defaultQueue)
        + ", unknown-queue=" + (unknownToDefault ? "default" : "reject");
  }
}
