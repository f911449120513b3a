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
 * </pre>
 *
 * Apps go to leaves, named by leaf name (unique) or full path. ACLs are
 * inherited: a user allowed on a queue is allowed on its descendants; root
 * allows everyone ({@code *}) unless configured, other queues nobody.
 * Policies see the full path of each app's leaf queue and keep their own
 * per-queue parameters (weights, capacities) under their own keys.
 */
final class QueueTree {
  static final String ROOT = "root";

  /** The configured shape: paths in tree order, children and ACLs by path. */
  static final class Spec {
    final Map<String, List<String>> children = new LinkedHashMap<>();
    final Map<String, Map<QueueACL, AccessControlList>> acls = new TreeMap<>();

    static Spec read(Configuration conf) {
      Spec s = new Spec();
      s.add(conf, ROOT, 0);
      checkNoStrayKeys(conf, s);
      Map<String, String> leaves = new TreeMap<>();
      for (Map.Entry<String, List<String>> e : s.children.entrySet()) {
        if (e.getValue().isEmpty()) {
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
            || attr.equals("acl_administer_queue");
        if (!okAttr) {
          throw new IllegalArgumentException("sojourn: unknown queue setting " + SojournConfig.QUEUE
              + k + " (known: <path>.queues, <path>.acl_submit_applications, "
              + "<path>.acl_administer_queue)");
        }
        if (!s.children.containsKey(path)) {
          throw new IllegalArgumentException("sojourn: " + SojournConfig.QUEUE + k
              + " names queue '" + path + "', which is not in the tree " + s.children.keySet());
        }
      }
    }
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
        List<String> kids = spec.children.get(q.getPath());
        boolean staysLeaf = kids != null && kids.isEmpty();
        if (q.isLeaf() && q.appCount() > 0 && !staysLeaf) {
          throw new IOException("sojourn: queue " + q.getPath() + " has " + q.appCount()
              + " application(s) and cannot be removed or become a parent queue");
        }
      }
    }
    for (Map.Entry<String, List<String>> e : spec.children.entrySet()) {
      String path = e.getKey();
      int dot = path.lastIndexOf('.');
      SojournQueue parent = dot < 0 ? null : t.byPath.get(path.substring(0, dot));
      SojournQueue q = old == null ? null : old.byPath.get(path);
      if (q == null) {
        q = new SojournQueue(path, parent, conf, cluster);
      }
      q.reset(parent, e.getValue().isEmpty(), spec.acls.get(path));
      t.byPath.put(path, q);
      if (parent != null) {
        parent.addChild(q);
      }
      if (q.isLeaf()) {
        t.leavesByName.put(q.getQueueName(), q);
      }
    }
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
