package org.sojourn.yarn;

import static org.junit.Assert.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerState;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;

/**
 * The scene the distributed policies' RM tests share (pigeon, eagle): two
 * NodeManagers of 8 vcores, a very wide job (an AM and {@link #WIDE} tasks)
 * in {@code default}, then short jobs (an AM and 2 tasks) in {@code short}.
 */
abstract class ShortBehindWideTestBase extends SojournTestBase {
  static final int WIDE = 100;

  MockNM nm1;
  MockNM nm2;

  void heartbeatBoth() throws Exception {
    nm1.nodeHeartbeat(true);
    nm2.nodeHeartbeat(true);
    rm.drainEvents();
  }

  MockNM nmOf(NodeId node) {
    return node.equals(nm1.getNodeId()) ? nm1 : nm2;
  }

  /** How many of {@code cs} run on {@code nm}. */
  static int on(List<Container> cs, MockNM nm) {
    int n = 0;
    for (Container c : cs) {
      if (c.getNodeId().equals(nm.getNodeId())) {
        n++;
      }
    }
    return n;
  }

  /**
   * Registers the two nodes and starts the wide job (with application {@code tags}): its AM,
   * then WIDE containers asked; returns what it got.
   */
  List<Container> startWide(MockAM[] amOut, String... tags) throws Exception {
    nm1 = rm.registerNode("127.0.0.1:1234", 8 * GB, 8);
    nm2 = rm.registerNode("127.0.0.2:1234", 8 * GB, 8);
    heartbeatBoth();
    RMApp wide = submitTagged(true, "default", "alice", tags);
    MockAM am = MockRM.launchAndRegisterAM(wide, rm, nm1);
    amOut[0] = am;
    am.addRequests(new String[] {"*"}, GB, 1, WIDE);
    List<Container> got = new ArrayList<>(am.schedule().getAllocatedContainers());
    for (int i = 0; i < 5; i++) {
      heartbeatBoth();
      got.addAll(am.schedule().getAllocatedContainers());
    }
    return got;
  }

  /** Completes a short job's tasks {@code got}, then its AM: the app must end FINISHED. */
  void finishShortJob(RMApp app, MockAM am, List<Container> got) throws Exception {
    for (Container c : got) {
      nmOf(c.getNodeId()).nodeHeartbeat(am.getApplicationAttemptId(), c.getId().getContainerId(),
          ContainerState.COMPLETE);
    }
    assertEquals(got.size(), waitCompleted(am, got.size()).size());
    NodeId amNode = app.getCurrentAppAttempt().getMasterContainer().getNodeId();
    MockRM.finishAMAndVerifyAppState(app, rm, nmOf(amNode), am);
    assertEquals(RMAppState.FINISHED, app.getState());
  }
}
