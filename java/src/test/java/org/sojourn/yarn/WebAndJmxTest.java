package org.sojourn.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.mockito.Mockito.atLeastOnce;
import static org.mockito.Mockito.verify;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.inject.Injector;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import javax.management.MBeanServer;
import javax.management.ObjectName;
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
