package org.sojourn.yarn;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.authorize.AccessControlList;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.apache.hadoop.yarn.api.records.Resource;

/**
 * Sojourn's queues: a hierarchy under {@code root} read from configuration,
 * in the manner of CapacityScheduler's keys:
 *
 * <pre>
 * yarn.scheduler.sojourn.queue.root.queues = a,b           (children; default: "default")
 * yarn.scheduler.sojourn.queue.root.a.queues = a1,a2
 * yarn.scheduler.sojourn.queue.root.a.acl_submit_applications = alice,bob analysts
 * yarn.scheduler.sojourn.queue.root.a.acl_administer_queue = admin
 * yarn.scheduler.sojourn.queue.root.users.auto_create_child_queue_enabled = true
 * </pre>
 *
 * Apps go to leaves, named by leaf name (unique) or full path. ACLs are
 * inherited: a user allowed on a queue is allowed on its descendants; root
 * allows everyone ({@code *}) unless configured, other queues nobody.
 * Policies see the full path of each app's leaf queue and keep their own
 * per-queue parameters (weights, capacities) under their own keys.
 *
 * <p>A queue with {@code auto_create_child_queue_enabled} is a parent (with or
 * without configured children) under which {@link Placement} may create a
 * missing leaf when an app is placed there (FairScheduler's
 * {@code create="true"}, CapacityScheduler's auto-created leaf queues). A
 * created leaf inherits its ACLs and lives until a refresh drops its parent's
 * flag while it is empty; a refresh that would drop it with apps is refused.
 */
final class QueueTree {
  static final String ROOT = "root";

  /** The configured shape: paths in tree order, children and ACLs by path. */
  static final class Spec {
    final Map<String, List<String>> children = new LinkedHashMap<>();
    final Map<String, Map<QueueACL, AccessControlList>> acls = new TreeMap<>();
    /** Parents that create missing leaves under them on placement. */
    final java.util.Set<String> autoCreate = new java.util.TreeSet<>();

    /** A configured queue without children that does not create any. */
    boolean isLeaf(String path) {
      List<String> kids = children.get(path);
      return kids != null && kids.isEmpty() && !autoCreate.contains(path);
    }

    static Spec read(Configuration conf) {
      Spec s = new Spec();
      s.add(conf, ROOT, 0);
      checkNoStrayKeys(conf, s);
      Map<String, String> leaves = new TreeMap<>();
      for (Map.Entry<String, List<String>> e : s.children.entrySet()) {
        if (s.isLeaf(e.getKey())) {
          String leaf = leafName(e.getKey());
          String other = leaves.put(leaf, e.getKey());
          if (other != null) {
            throw new IllegalArgumentException("sojourn: leaf queue name '" + leaf
                + "' is used twice (" + other + " and " + e.getKey()
                + "); leaf names must be unique");
          }
        }
      }
      return s;
    }

    private void add(Configuration conf, String path, int depth) {
      if (depth > 32) {
        throw new IllegalArgumentException("sojourn: queue tree deeper than 32 at " + path);
      }
      String key = SojournConfig.QUEUE + path + ".queues";
      String raw = conf.get(key);
      List<String> kids = new ArrayList<>();
      for (String k : raw == null ? (path.equals(ROOT) ? Collections.singletonList("default")
          : Collections.<String>emptyList()) : conf.getTrimmedStringCollection(key)) {
        if (k.isEmpty() || k.contains(".") || k.matches(".*\\s.*")) {
          throw new IllegalArgumentException("sojourn: " + key + ": bad queue name '" + k + "'");
        }
        if (kids.contains(k)) {
          throw new IllegalArgumentException("sojourn: " + key + ": queue '" + k + "' listed twice");
        }
        kids.add(k);
      }
      children.put(path, kids);
      String autoKey = autoCreateKey(path);
      String auto = conf.getTrimmed(autoKey, "false");
      if (!auto.equals("true") && !auto.equals("false")) {
        throw new IllegalArgumentException("sojourn: " + autoKey + "='" + auto + "' is not true or false");
      }
      if (auto.equals("true")) {
        autoCreate.add(path);
      }
      Map<QueueACL, AccessControlList> a = new TreeMap<>();
      for (QueueACL acl : QueueACL.values()) {
        String v = conf.get(aclKey(path, acl), path.equals(ROOT) ? "*" : " ");
        a.put(acl, new AccessControlList(v));
      }
      acls.put(path, a);
      for (String k : kids) {
        add(conf, path + "." + k, depth + 1);
      }
    }

    /** Every {@code queue.*} key must name a configured queue and a known attribute. */
    private static void checkNoStrayKeys(Configuration conf, Spec s) {
      for (String k : conf.getPropsWithPrefix(SojournConfig.QUEUE).keySet()) {
        int dot = k.lastIndexOf('.');
        String path = dot < 0 ? "" : k.substring(0, dot);
        String attr = k.substring(dot + 1);
        boolean okAttr = attr.equals("queues") || attr.equals("acl_submit_applications")
            || attr.equals("acl_administer_queue") || attr.equals(AUTO_CREATE);
        if (!okAttr) {
          throw new IllegalArgumentException("sojourn: unknown queue setting " + SojournConfig.QUEUE
              + k + " (known: <path>.queues, <path>.acl_submit_applications, "
              + "<path>.acl_administer_queue, <path>." + AUTO_CREATE + ")");
        }
        if (!s.children.containsKey(path)) {
          throw new IllegalArgumentException("sojourn: " + SojournConfig.QUEUE + k
              + " names queue '" + path + "', which is not in the tree " + s.children.keySet());
        }
      }
    }
  }

  /** The per-parent attribute that lets placement create leaves under it. */
  static final String AUTO_CREATE = "auto_create_child_queue_enabled";

  static String autoCreateKey(String path) {
    return SojournConfig.QUEUE + path + "." + AUTO_CREATE;
  }

  static String aclKey(String path, QueueACL acl) {
    return SojournConfig.QUEUE + path + "."
        + (acl == QueueACL.SUBMIT_APPLICATIONS ? "acl_submit_applications" : "acl_administer_queue");
  }

  static String leafName(String path) {
    int dot = path.lastIndexOf('.');
    return dot < 0 ? path : path.substring(dot + 1);
  }

  private final Map<String, SojournQueue> byPath = new LinkedHashMap<>();
  private final Map<String, SojournQueue> leavesByName = new TreeMap<>();
  /** Leaves placement created (not in the configured spec). */
  private final java.util.Set<String> created = new java.util.TreeSet<>();
  /** Parents that may create leaves, from the spec. */
  private final java.util.Set<String> autoCreate = new java.util.TreeSet<>();

  private QueueTree() {}

  /**
   * Builds the live tree from a spec, reusing the queues of {@code old} (their
   * metrics and apps) where the path is unchanged.
   *
   * @throws IOException if a queue that still has applications would disappear
   *     or turn from a leaf into a parent
   */
  static QueueTree build(Spec spec, QueueTree old, Configuration conf,
      Supplier<Resource> cluster) throws IOException {
    QueueTree t = new QueueTree();
    if (old != null) {
      for (SojournQueue q : old.byPath.values()) {
        boolean staysLeaf = spec.isLeaf(q.getPath()) || keepsCreated(spec, old, q);
        if (q.isLeaf() && q.appCount() > 0 && !staysLeaf) {
          throw new IOException("sojourn: queue " + q.getPath() + " has " + q.appCount()
              + " application(s) and cannot be removed or become a parent queue"
              + (old.created.contains(q.getPath()) ? " (it was created on placement under a parent that "
              + "no longer has " + AUTO_CREATE + ")" : ""));
        }
      }
    }
    t.autoCreate.addAll(spec.autoCreate);
    for (Map.Entry<String, List<String>> e : spec.children.entrySet()) {
      String path = e.getKey();
      int dot = path.lastIndexOf('.');
      SojournQueue parent = dot < 0 ? null : t.byPath.get(path.substring(0, dot));
      SojournQueue q = old == null ? null : old.byPath.get(path);
      if (q == null) {
        q = new SojournQueue(path, parent, conf, cluster);
      }
      q.reset(parent, spec.isLeaf(path), spec.acls.get(path));
      t.byPath.put(path, q);
      if (parent != null) {
        parent.addChild(q);
      }
      if (q.isLeaf()) {
        t.leavesByName.put(q.getQueueName(), q);
      }
    }
    if (old != null) {
      for (String path : old.created) {
        SojournQueue q = old.byPath.get(path);
        if (q != null && keepsCreated(spec, old, q) && !t.leavesByName.containsKey(q.getQueueName())) {
          SojournQueue parent = t.byPath.get(path.substring(0, path.lastIndexOf('.')));
          q.reset(parent, true, inheritedAcls());
          parent.addChild(q);
          t.byPath.put(path, q);
          t.leavesByName.put(q.getQueueName(), q);
          t.created.add(path);
        }
      }
    }
    return t;
  }

  /** A created leaf stays while it is not configured and its parent still creates leaves. */
  private static boolean keepsCreated(Spec spec, QueueTree old, SojournQueue q) {
    String path = q.getPath();
    int dot = path.lastIndexOf('.');
    return old.created.contains(path) && !spec.children.containsKey(path) && dot > 0
        && spec.autoCreate.contains(path.substring(0, dot));
  }

  /** A created leaf grants nothing itself: its ancestors' ACLs apply. */
  private static Map<QueueACL, AccessControlList> inheritedAcls() {
    Map<QueueACL, AccessControlList> a = new TreeMap<>();
    for (QueueACL acl : QueueACL.values()) {
      a.put(acl, new AccessControlList(" "));
    }
    return a;
  }

  /** Whether placement may create a leaf right under {@code parentPath}. */
  boolean createsUnder(String parentPath) {
    return autoCreate.contains(parentPath) && byPath.containsKey(parentPath);
  }

  boolean isCreated(String path) {
    return created.contains(path);
  }

  /**
   * This tree plus a new leaf {@code path} (whose parent creates leaves): a
   * new tree object, so readers of the old one (the web page) never see a
   * half-made change; the queues themselves are shared.
   *
   * @throws IllegalArgumentException if the parent does not create leaves or
   *     the leaf's name is taken
   */
  QueueTree withCreatedLeaf(String path, Configuration conf, Supplier<Resource> cluster) {
    int dot = path.lastIndexOf('.');
    String parentPath = dot < 0 ? "" : path.substring(0, dot);
    String name = path.substring(dot + 1);
    if (!createsUnder(parentPath)) {
      throw new IllegalArgumentException("queue '" + parentPath + "' does not create leaf queues ("
          + autoCreateKey(parentPath) + " is not true)");
    }
    if (name.isEmpty() || name.matches(".*\\s.*") || byPath.containsKey(path)) {
      throw new IllegalArgumentException("bad or existing queue '" + path + "'");
    }
    SojournQueue clash = leavesByName.get(name);
    if (clash != null) {
      throw new IllegalArgumentException("cannot create queue '" + path + "': leaf name '" + name
          + "' is taken by " + clash.getPath() + " (leaf names are unique)");
    }
    QueueTree t = new QueueTree();
    t.byPath.putAll(byPath);
    t.leavesByName.putAll(leavesByName);
    t.created.addAll(created);
    t.autoCreate.addAll(autoCreate);
    SojournQueue parent = byPath.get(parentPath);
    SojournQueue q = new SojournQueue(path, parent, conf, cluster);
    q.reset(parent, true, inheritedAcls());
    t.byPath.put(path, q);
    t.leavesByName.put(name, q);
    t.created.add(path);
    parent.addChild(q);
    return t;
  }

  SojournQueue root() {
    return byPath.get(ROOT);
  }

  /** A queue by full path or, for leaves, by name; null if none. */
  SojournQueue find(String name) {
    if (name == null) {
      return null;
    }
    String n = name.trim();
    SojournQueue q = byPath.get(n);
    if (q == null && !n.contains(".")) {
      q = leavesByName.get(n);
    }
    if (q == null && !n.startsWith(ROOT + ".") && !n.equals(ROOT)) {
      q = byPath.get(ROOT + "." + n);
    }
    return q;
  }

  Iterable<SojournQueue> all() {
    return byPath.values();
  }

  List<String> leafPaths() {
    List<String> l = new ArrayList<>();
    for (SojournQueue q : byPath.values()) {
      if (q.isLeaf()) {
        l.add(q.getPath());
      }
    }
    return l;
  }
}
