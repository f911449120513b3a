package org.sojourn.yarn.nm;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import com.sun.net.httpserver.HttpServer;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.junit.Test;

/** The NodeManager agent's reading of the RM's suspended list: addresses, answers, an RM that is down. */
public class RmSuspendListTest {
  private static final String Q =
      "/jmx?get=Hadoop:service=ResourceManager,name=SojournScheduler::SuspendedContainers";

  @Test
  public void addressesComeFromTheRmWebAddressOrTheOverride() {
    Configuration c = new YarnConfiguration();
    c.set(YarnConfiguration.RM_HOSTNAME, "rm.example");
    assertEquals(Collections.singletonList("http://rm.example:8088" + Q), RmSuspendList.urls(c));
    c.set(YarnConfiguration.RM_WEBAPP_ADDRESS, "0.0.0.0:18088");
    assertEquals(Collections.singletonList("http://rm.example:18088" + Q), RmSuspendList.urls(c));
    c.set(YarnConfiguration.RM_HA_ENABLED, "true");
    c.set(YarnConfiguration.RM_HA_IDS, "rm1,rm2");
    c.set(YarnConfiguration.RM_WEBAPP_ADDRESS + ".rm1", "a:8088");
    c.set(YarnConfiguration.RM_HOSTNAME + ".rm2", "b");
    assertEquals(Arrays.asList("http://a:8088" + Q, "http://b:8088" + Q), RmSuspendList.urls(c));
    c.set(RmSuspendList.RM_WEB, "http://x:1/, y:2");
    assertEquals(Arrays.asList("http://x:1" + Q, "http://y:2" + Q), RmSuspendList.urls(c));
  }

  @Test
  public void theListIsReadFromTheJmxServletAndAnRmThatIsDownChangesNothing() throws Exception {
    AtomicReference<String> answer = new AtomicReference<>();
    HttpServer http = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    http.createContext("/jmx", ex -> {
      byte[] b = answer.get().getBytes(StandardCharsets.UTF_8);
      ex.sendResponseHeaders(200, b.length);
      try (OutputStream o = ex.getResponseBody()) {
        o.write(b);
      }
    });
    http.start();
    int down;
    try (ServerSocket s = new ServerSocket(0)) {
      down = s.getLocalPort();
    }
    try {
      Configuration c = new YarnConfiguration();
      // The first RM is down, the second answers: the second's list counts.
      c.set(RmSuspendList.RM_WEB, "127.0.0.1:" + down + ",127.0.0.1:" + http.getAddress().getPort());
      RmSuspendList rm = new RmSuspendList(c, 1000);
      answer.set("{\"beans\":[{\"name\":\"Hadoop:service=ResourceManager,name=SojournScheduler\","
          + "\"SuspendedContainers\":[\"container_1_0001_01_000002\",\"container_1_0002_01_000003\"]}]}");
      List<String> errors = new ArrayList<>();
      assertEquals(new TreeSet<>(Arrays.asList("container_1_0001_01_000002", "container_1_0002_01_000003")),
          rm.fetch(errors));
      assertEquals(errors.toString(), 1, errors.size());
      // An RM without the bean (another scheduler): nothing is suspended.
      answer.set("{\"beans\":[]}");
      assertEquals(new TreeSet<String>(), rm.fetch(new ArrayList<>()));
      // Garbage is an error, not an empty list.
      answer.set("<html>login</html>");
      errors.clear();
      assertNull(rm.fetch(errors));
      assertEquals(2, errors.size());
    } finally {
      http.stop(0);
    }
    // No RM answers: null, so the agent keeps what it paused.
    Configuration c = new YarnConfiguration();
    c.set(RmSuspendList.RM_WEB, "127.0.0.1:" + down);
    List<String> errors = new ArrayList<>();
    assertNull(new RmSuspendList(c, 500).fetch(errors));
    assertTrue(errors.get(0), errors.get(0).contains("127.0.0.1:" + down));
  }
}
