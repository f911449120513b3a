package org.sojourn.yarn;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.authorize.AccessControlList;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.QueueState;
import org.apache.hadoop.yarn.api.records.QueueUserACLInfo;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ActiveUsersManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Queue;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt;
import org.apache.hadoop.yarn.util.Records;

/**
 * One queue of {@link QueueTree}: YARN's view of it (metrics, ACLs, queue
 * info, the apps in it). Ordering and sharing between queues are the policy's
 * business, in Rust; this class only answers YARN's obligations.
 */
final class SojournQueue implements Queue {
  private final String path;
  private final String name;
  private final QueueMetrics metrics;
  private final ActiveUsersManager users;
  private final Supplier<Resource> cluster;
  private volatile SojournQueue parent;
  private volatile boolean leaf;
  private volatile Map<QueueACL, AccessControlList> acls;
  private final List<SojournQueue> children = new CopyOnWriteArrayList<>();
  private final Set<ApplicationId> apps = new ConcurrentSkipListSet<>();

  SojournQueue(String path, SojournQueue parent, Configuration conf, Supplier<Resource> cluster) {
    this.path = path;
    this.name = QueueTree.leafName(path);
    this.parent = parent;
    this.cluster = cluster;
    // Registered once per path (QueueMetrics caches by name): q0=root,q1=...
    this.metrics = QueueMetrics.forQueue(path, parent, false, conf);
    this.users = new ActiveUsersManager(metrics);
  }

  void reset(SojournQueue newParent, boolean isLeaf, Map<QueueACL, AccessControlList> newAcls) {
    this.parent = newParent;
    this.leaf = isLeaf;
    this.acls = newAcls;
    this.children.clear();
  }

  void addChild(SojournQueue q) {
    children.add(q);
  }

  String getPath() {
    return path;
  }

  SojournQueue getParent() {
    return parent;
  }

  boolean isLeaf() {
    return leaf;
  }

  List<SojournQueue> getChildren() {
    return children;
  }

  void addApp(ApplicationId id) {
    apps.add(id);
  }

  void removeApp(ApplicationId id) {
    apps.remove(id);
  }

  int appCount() {
    return apps.size();
  }

  /** Apps in this queue and, for a parent, in its descendants. */
  void collectApps(List<ApplicationId> out) {
    out.addAll(apps);
    for (SojournQueue c : children) {
      c.collectApps(out);
    }
  }

  @Override
  public String getQueueName() {
    return name;
  }

  @Override
  public QueueMetrics getMetrics() {
    return metrics;
  }

  @Override
  public QueueInfo getQueueInfo(boolean includeChildQueues, boolean recursive) {
    QueueInfo info = Records.newRecord(QueueInfo.class);
    info.setQueueName(name);
    SojournQueue p = parent;
    float share = p == null ? 1f : 1f / Math.max(1, p.children.size());
    info.setCapacity(share);
    info.setMaximumCapacity(1f);
    Resource total = cluster.get();
    long used = metrics.getAllocatedMB();
    info.setCurrentCapacity(total == null || total.getMemorySize() == 0 ? 0f
        : (float) used / total.getMemorySize());
    List<QueueInfo> kids = new ArrayList<>();
    if (includeChildQueues) {
      for (SojournQueue c : children) {
        kids.add(c.getQueueInfo(recursive, recursive));
      }
    }
    info.setChildQueues(kids);
    info.setApplications(Collections.emptyList());
    info.setQueueState(QueueState.RUNNING);
    return info;
  }

  @Override
  public List<QueueUserACLInfo> getQueueUserAclInfo(UserGroupInformation user) {
    List<QueueUserACLInfo> out = new ArrayList<>();
    collectAclInfo(user, out);
    return out;
  }

  private void collectAclInfo(UserGroupInformation user, List<QueueUserACLInfo> out) {
    List<QueueACL> granted = new ArrayList<>();
    for (QueueACL acl : QueueACL.values()) {
      if (user == null || hasAccess(acl, user)) {
        granted.add(acl);
      }
    }
    QueueUserACLInfo i = Records.newRecord(QueueUserACLInfo.class);
    i.setQueueName(name);
    i.setUserAcls(granted);
    out.add(i);
    for (SojournQueue c : children) {
      c.collectAclInfo(user, out);
    }
  }

  /** Allowed here or on any ancestor (CapacityScheduler's rule). */
  @Override
  public boolean hasAccess(QueueACL acl, UserGroupInformation user) {
    AccessControlList l = acls == null ? null : acls.get(acl);
    if (l != null && l.isUserAllowed(user)) {
      return true;
    }
    SojournQueue p = parent;
    return p != null && p.hasAccess(acl, user);
  }

  Map<QueueACL, AccessControlList> getAcls() {
    return acls;
  }

  @Override
  public ActiveUsersManager getAbstractUsersManager() {
    return users;
  }

  @Override
  public void recoverContainer(Resource clusterResource,
      SchedulerApplicationAttempt schedulerAttempt, RMContainer rmContainer) {
    // Work-preserving recovery is not supported yet: the core has no event
    // for a container it did not place.
  }

  @Override
  public Set<String> getAccessibleNodeLabels() {
    return null;
  }

  @Override
  public String getDefaultNodeLabelExpression() {
    return null;
  }

  @Override
  public void incPendingResource(String nodeLabel, Resource resourceToInc) {}

  @Override
  public void decPendingResource(String nodeLabel, Resource resourceToDec) {}

  @Override
  public Priority getDefaultApplicationPriority() {
    return null;
  }

  @Override
  public void incReservedResource(String partition, Resource reservedRes) {}

  @Override
  public void decReservedResource(String partition, Resource reservedRes) {}

  @Override
  public String toString() {
    return path;
  }
}
