package org.sojourn.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.mockito.Mockito.atLeastOnce;
import static org.mockito.Mockito.verify;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.inject.Injector;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.Map;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import javax.management.openmbean.CompositeData;
import javax.management.openmbean.TabularData;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.webapp.test.WebAppTests;
import org.junit.Test;
import org.mockito.ArgumentCaptor;

/** What an operator sees: the web UI's scheduler page and the JMX bean. */
public class WebAndJmxTest extends SojournTestBase {

  @Test(timeout = 60000)
  public void jmxServesThePolicyAndItsState() throws Exception {
    start(conf());
    MockNM nm = rm.registerNode("127.0.0.1:1234", 4 * GB, 4);
    MockRM.launchAndRegisterAM(submit(GB), rm, nm);
    MBeanServer mbs = ManagementFactory.getPlatformMBeanServer();
    ObjectName name = new ObjectName("Hadoop:service=ResourceManager,name=SojournScheduler");
    assertEquals("fifo", mbs.getAttribute(name, "Policy"));
    assertEquals(1L, mbs.getAttribute(name, "Allocations"));
    JsonNode state = Protocol.JSON.readTree((String) mbs.getAttribute(name, "State"));
    assertEquals(1, state.path("core").path("cluster").path("nodes").asInt());
    assertEquals("root.default", ((String[]) mbs.getAttribute(name, "LeafQueues"))[0]);
  }

  /**
   * The policy's own figures on the bean (PolicyMetrics, a table of name and
   * value over JMX): kairos counts a quantum's end, which the timer thread
   * brings once a task's 200 ms quantum has passed (AMs have no quantum).
   * The task is alone on its node, so kairos wakes for its ends only with
   * lazy_quanta=false (by default they are counted when the task stops).
   */
  @Test(timeout = 60000)
  public void jmxServesThePolicysMetrics() throws Exception {
    YarnConfiguration conf = conf();
    conf.set("yarn.scheduler.sojourn.policy", "kairos");
    conf.set("yarn.scheduler.sojourn.kairos.quantum_ms", "200");
    conf.set("yarn.scheduler.sojourn.kairos.lazy_quanta", "false");
    start(conf);
    MBeanServer mbs = ManagementFactory.getPlatformMBeanServer();
    ObjectName name = new ObjectName("Hadoop:service=ResourceManager,name=SojournScheduler");
    assertTrue(policyMetrics(mbs, name).toString(), policyMetrics(mbs, name).isEmpty());
    MockNM nm = rm.registerNode("127.0.0.1:1234", 4 * GB, 4);
    MockAM am = MockRM.launchAndRegisterAM(submit(GB), rm, nm);
    assertEquals(1, allocateAndWait(am, nm, GB, 1, 1).size());
    Map<String, Double> m = policyMetrics(mbs, name);
    long deadline = System.currentTimeMillis() + 20000;
    while (m.getOrDefault("quantum_ends", 0.0) < 1 && System.currentTimeMillis() < deadline) {
      Thread.sleep(100);
      m = policyMetrics(mbs, name);
    }
    assertTrue(m.toString(), m.getOrDefault("quantum_ends", 0.0) >= 1);
    // The same figures as the core's describe (State), read there at the same time or later.
    JsonNode state = Protocol.JSON.readTree((String) mbs.getAttribute(name, "State"));
    assertTrue(state.toString(),
        state.path("core").path("metrics").path("quantum_ends").asDouble() >= m.get("quantum_ends"));
  }

  /** PolicyMetrics as JMX serves it: rows of (key, value). */
  private static Map<String, Double> policyMetrics(MBeanServer mbs, ObjectName name) throws Exception {
    TabularData t = (TabularData) mbs.getAttribute(name, "PolicyMetrics");
    Map<String, Double> m = new HashMap<>();
    for (Object row : t.values()) {
      CompositeData c = (CompositeData) row;
      m.put((String) c.get("key"), (Double) c.get("value"));
    }
    return m;
  }

  @Test(timeout = 60000)
  public void theSchedulerPageShowsThePolicyAndItsState() throws Exception {
    start(conf());
    rm.registerNode("127.0.0.1:1234", 4 * GB, 4);
    Injector inj = WebAppTests.testBlock(SojournSchedulerPage.SojournBlock.class,
        ResourceManager.class, rm);
    PrintWriter out = inj.getInstance(PrintWriter.class);
    ArgumentCaptor<String> printed = ArgumentCaptor.forClass(String.class);
    verify(out, atLeastOnce()).print(printed.capture());
    String page = String.join("", printed.getAllValues());
    assertTrue(page, page.contains("Sojourn scheduler: policy fifo"));
    assertTrue(page, page.contains("root.default"));
    assertTrue(page, page.contains("&quot;nodes&quot; : 1") || page.contains("\"nodes\" : 1"));
  }
}
