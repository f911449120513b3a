package org.sojourn.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.junit.Test;

/**
 * Issue 18: the RM's web UI page and REST resource, fetched over HTTP from a
 * running RM (MockRM with its web app): both show the queue tree.
 *
 * <p>With {@code SOJOURN_SCREENSHOT=<file.png>} in the environment, the test
 * also has headless {@code chromium} photograph the live page
 * ({@code integration/ui-screenshot.sh}).
 */
public class SchedulerWebTest extends SojournTestBase {

  private static String get(String url, String accept, int[] status) throws Exception {
    HttpURLConnection c = (HttpURLConnection) new URL(url).openConnection();
    c.setRequestProperty("Accept", accept);
    c.setConnectTimeout(10000);
    c.setReadTimeout(20000);
    status[0] = c.getResponseCode();
    try (InputStream in = status[0] < 400 ? c.getInputStream() : c.getErrorStream()) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      if (in != null) {
        byte[] buf = new byte[8192];
        for (int n; (n = in.read(buf)) > 0; ) {
          out.write(buf, 0, n);
        }
      }
      return new String(out.toByteArray(), StandardCharsets.UTF_8);
    }
  }

  /** {@code conf} with the RM's web app on a free port, the page and REST set; returns the base URL. */
  private static String withWebApp(YarnConfiguration conf) throws Exception {
    conf.setBoolean("mockrm.webapp.enabled", true);
    int port = FreePorts.next();
    conf.set(YarnConfiguration.RM_WEBAPP_ADDRESS, "127.0.0.1:" + port);
    conf.set("yarn.http.rmwebapp.scheduler.page.class", SojournSchedulerPage.class.getName());
    conf.set("yarn.http.rmwebapp.external.classes", SojournWebServices.class.getName());
    return "http://127.0.0.1:" + port;
  }

  /**
   * The policy panel: kairos's tasks per node with their attained service
   * and suspended flag, hfsp's phases in the real order with their virtual
   * sizes, as tables of the page.
   */
  @Test(timeout = 120000)
  public void thePolicyPanelShowsKairosTasksAndHfspOrder() throws Exception {
    for (String policy : new String[] {"kairos", "hfsp"}) {
      resetMetrics();
      YarnConfiguration conf = conf();
      String base = withWebApp(conf);
      conf.set("yarn.scheduler.sojourn.policy", policy);
      start(conf);
      MockNM nm = rm.registerNode("127.0.0.1:1234", 8 * GB, 8);
      // An AM with two tasks: tasks, not AMs, are what kairos and hfsp schedule.
      org.apache.hadoop.yarn.server.resourcemanager.MockAM am =
          org.apache.hadoop.yarn.server.resourcemanager.MockRM.launchAndRegisterAM(
              submit(GB, "default", "alice"), rm, nm);
      assertEquals(2, allocateAndWait(am, nm, GB, 1, 2).size());
      int[] status = new int[1];
      String page = get(base + "/cluster/scheduler", "text/html", status);
      assertEquals(page, 200, status[0]);
      String flat = page.replaceAll("\\s+", " ");
      assertTrue(page, flat.contains("Policy: " + policy));
      if (policy.equals("kairos")) {
        assertTrue(page, flat.contains("id=\"sojourn-policy-nodes\""));
        for (String col : new String[] {">node<", ">running<", ">suspended<", ">containers<"}) {
          assertTrue(col + " in " + page, flat.replace(" ", "").contains(col));
        }
        // The two tasks on the node, each listed with its attained service.
        assertTrue(page, flat.split("attained_ms=").length - 1 >= 2 && flat.contains("suspended=false"));
      } else {
        assertTrue(page, flat.contains("id=\"sojourn-policy-phases\""));
        for (String col : new String[] {">app<", ">phase<", ">virtual_size_ms<", ">virtual_slots<"}) {
          assertTrue(col + " in " + page, flat.replace(" ", "").contains(col));
        }
      }
      stopRm();
    }
  }

  @Test(timeout = 120000)
  public void thePageAndTheRestResourceShowTheQueueTree() throws Exception {
    YarnConfiguration conf = conf();
    String base = withWebApp(conf);
    conf.set("yarn.scheduler.sojourn.policy", "capacity");
    conf.set("yarn.scheduler.sojourn.queue.root.queues", "prod,dev");
    conf.set("yarn.scheduler.sojourn.capacity.queue.root.queues", "prod,dev");
    conf.set("yarn.scheduler.sojourn.capacity.queue.root.prod.capacity", "70");
    conf.set("yarn.scheduler.sojourn.capacity.queue.root.dev.capacity", "30");
    conf.set("yarn.scheduler.sojourn.capacity.queue.root.dev.maximum_capacity", "100");
    conf.set("yarn.scheduler.sojourn.placement.default-queue", "dev");
    start(conf);
    MockNM nm = rm.registerNode("127.0.0.1:1234", 8 * GB, 8);
    submit(2 * GB, "prod", "alice");
    nm.nodeHeartbeat(true);
    rm.drainEvents();
    int[] status = new int[1];

    String page = get(base + "/cluster/scheduler", "text/html", status);
    assertEquals(page, 200, status[0]);
    assertTrue(page, page.contains("Sojourn Scheduler"));
    assertTrue(page, page.contains("sojourn-queues") && page.contains("title=\"root.prod\"")
        && page.contains("title=\"root.dev\""));
    String flat = page.replaceAll("\\s+", "");
    assertTrue(page, flat.contains(">prod<") && flat.contains(">dev<") && flat.contains(">70.0%<"));
    assertTrue(page, page.contains("Policy state (describe)") && page.contains("absolute_capacity"));

    for (String path : new String[] {"/ws/v1/cluster/scheduler", "/ws/v1/cluster/scheduler/sojourn"}) {
      String json = get(base + path, "application/json", status);
      assertEquals(path + ": " + json, 200, status[0]);
      JsonNode info = Protocol.JSON.readTree(json).path("scheduler").path("schedulerInfo");
      assertEquals(json, "sojournScheduler", info.path("type").asText());
      assertEquals("capacity", info.path("policy").asText());
      JsonNode root = info.path("rootQueue");
      assertEquals("root", root.path("queuePath").asText());
      JsonNode kids = root.path("queues").path("queue");
      assertEquals(json, 2, kids.size());
      assertEquals("root.prod", kids.get(0).path("queuePath").asText());
      assertEquals(1, kids.get(0).path("numApplications").asInt());
      assertEquals(70.0, kids.get(0).path("absoluteCapacity").asDouble(), 1e-9);
      assertEquals(2 * GB, kids.get(0).path("resourcesUsed").path("memory").asLong());
      assertEquals("root.dev", kids.get(1).path("queuePath").asText());
      assertEquals(100.0, kids.get(1).path("absoluteMaxCapacity").asDouble(), 1e-9);
      assertTrue(json, info.path("describe").path("core").path("state").isObject());
    }
    // The rest of /ws/v1/cluster is still Hadoop's.
    String metrics = get(base + "/ws/v1/cluster/metrics", "application/json", status);
    assertEquals(metrics, 200, status[0]);
    assertTrue(metrics, metrics.contains("clusterMetrics"));

    String shot = System.getenv("SOJOURN_SCREENSHOT");
    if (shot != null && !shot.isEmpty()) {
      File png = new File(shot);
      png.delete();
      Process p = new ProcessBuilder("chromium", "--headless", "--no-sandbox", "--disable-gpu",
          "--hide-scrollbars", "--window-size=1280,1100", "--screenshot=" + png.getAbsolutePath(),
          base + "/cluster/scheduler").redirectErrorStream(true)
          .redirectOutput(new File(png.getAbsolutePath() + ".log")).start();
      assertTrue("chromium did not finish in 60 s", p.waitFor(60, TimeUnit.SECONDS));
      assertTrue(png + " was not written (see " + png + ".log)", png.isFile() && png.length() > 10_000);
    }
  }
}
