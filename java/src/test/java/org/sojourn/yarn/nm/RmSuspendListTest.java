package org.sojourn.yarn.nm;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import com.sun.net.httpserver.HttpServer;
import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.Collections;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.junit.Test;

/**
 * The NodeManager agent's reading of the RM's suspended list: addresses, the
 * signed list it accepts, the lists and answers it refuses, an RM that is down.
 */
public class RmSuspendListTest {
  private static final String Q =
      "/jmx?get=Hadoop:service=ResourceManager,name=SojournScheduler::SignedSuspendedContainers";
  private static final byte[] SECRET =
      "0123456789abcdef0123456789abcdef-node-agent-test".getBytes(StandardCharsets.UTF_8);
  private static final byte[] OTHER = "fedcba9876543210fedcba9876543210-someone-else".getBytes(StandardCharsets.UTF_8);
  private static final String A = "container_1_0001_01_000002";
  private static final String B = "container_1_0002_01_000003";

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

  /** A fake RM web server whose /jmx answers what {@code answer} holds at each request. */
  private static HttpServer fakeRm(AtomicReference<String> answer) throws IOException {
    HttpServer http = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    http.createContext("/jmx", ex -> {
      byte[] b = answer.get().getBytes(StandardCharsets.UTF_8);
      ex.sendResponseHeaders(200, b.length);
      try (OutputStream o = ex.getResponseBody()) {
        o.write(b);
      }
    });
    http.start();
    return http;
  }

  /** The JMX servlet's answer carrying {@code line} as the signed attribute. */
  private static String jmx(String line) {
    return "{\"beans\":[{\"name\":\"Hadoop:service=ResourceManager,name=SojournScheduler\","
        + "\"modelerType\":\"org.sojourn.yarn.SojournScheduler\",\"SignedSuspendedContainers\":\"" + line + "\"}]}";
  }

  private static String signed(byte[] secret, long seq, String... ids) {
    return SuspendListMac.sign(secret, seq, System.currentTimeMillis(), Arrays.asList(ids));
  }

  private static RmSuspendList agentOf(HttpServer... rms) {
    Configuration c = new YarnConfiguration();
    StringBuilder a = new StringBuilder();
    for (HttpServer rm : rms) {
      a.append(a.length() == 0 ? "" : ",").append("127.0.0.1:").append(rm.getAddress().getPort());
    }
    c.set(RmSuspendList.RM_WEB, a.toString());
    return new RmSuspendList(c, 1000, SECRET);
  }

  /** Polls once: the list must be refused, for a reason that says {@code because}. */
  private static void assertRefused(RmSuspendList rm, String because) {
    RmSuspendList.Poll p = rm.poll();
    assertNull("a list was accepted: " + p.containers, p.containers);
    assertTrue(p.problems.toString(), p.refused && p.problems.toString().contains(because));
  }

  @Test
  public void aListSignedWithTheSharedSecretIsAccepted() throws Exception {
    AtomicReference<String> answer = new AtomicReference<>(jmx(signed(SECRET, 5, A, B)));
    HttpServer http = fakeRm(answer);
    try {
      RmSuspendList rm = agentOf(http);
      assertEquals(new TreeSet<>(Arrays.asList(A, B)), rm.poll().containers);
      // A newer empty list: nothing is suspended.
      answer.set(jmx(signed(SECRET, 6)));
      assertEquals(new TreeSet<String>(), rm.poll().containers);
    } finally {
      http.stop(0);
    }
  }

  /**
   * Whoever answers at the RM's address cannot stop or continue containers:
   * the old unsigned list, a list marked unsigned, one signed with another
   * secret or altered after signing, and an answer without the signed
   * attribute (which the old agent took as "resume everything") are refused.
   */
  @Test
  public void unsignedForgedAndAlteredListsAreRefused() throws Exception {
    AtomicReference<String> answer = new AtomicReference<>(
        "{\"beans\":[{\"name\":\"Hadoop:service=ResourceManager,name=SojournScheduler\","
        + "\"SuspendedContainers\":[\"" + A + "\"]}]}");
    HttpServer http = fakeRm(answer);
    try {
      RmSuspendList rm = agentOf(http);
      assertRefused(rm, "no SignedSuspendedContainers");
      answer.set(jmx(SuspendListMac.sign(null, 1, System.currentTimeMillis(), Collections.singletonList(A))));
      assertRefused(rm, "unsigned");
      answer.set(jmx(signed(OTHER, 2, A)));
      assertRefused(rm, "signature is wrong");
      answer.set(jmx(signed(SECRET, 3, A).replace(A, B)));
      assertRefused(rm, "signature is wrong");
      answer.set("{\"beans\":[]}");
      assertRefused(rm, "nothing changes");
      // The right secret is still accepted after all that.
      answer.set(jmx(signed(SECRET, 4, A)));
      assertEquals(Collections.singleton(A), rm.poll().containers);
    } finally {
      http.stop(0);
    }
  }

  /** A list the agent has already seen, or an older one, is refused; so is one signed long ago. */
  @Test
  public void replayedAndStaleListsAreRefused() throws Exception {
    String older = signed(SECRET, 10, A);
    String newer = signed(SECRET, 11);
    AtomicReference<String> answer = new AtomicReference<>(jmx(newer));
    HttpServer http = fakeRm(answer);
    try {
      RmSuspendList rm = agentOf(http);
      assertEquals(new TreeSet<String>(), rm.poll().containers);
      answer.set(jmx(older));
      assertRefused(rm, "replayed list: sequence 10 is not above 11");
      answer.set(jmx(newer));
      assertRefused(rm, "replayed");
      long hourAgo = System.currentTimeMillis() - 3600_000;
      answer.set(jmx(SuspendListMac.sign(SECRET, 12, hourAgo, Collections.singletonList(A))));
      assertRefused(rm, "over 60000 ms from this node's clock");
    } finally {
      http.stop(0);
    }
  }

  /** An answer over 1 MiB is refused unread, however well signed the list in it. */
  @Test
  public void anOversizedAnswerIsRefused() throws Exception {
    StringBuilder pad = new StringBuilder();
    while (pad.length() <= RmSuspendList.MAX_ANSWER_BYTES) {
      pad.append("                                                                ");
    }
    AtomicReference<String> answer = new AtomicReference<>(pad + jmx(signed(SECRET, 1, A)));
    HttpServer http = fakeRm(answer);
    try {
      RmSuspendList rm = agentOf(http);
      assertRefused(rm, "over 1048576");
      // Chunked (no length declared): refused as it is read.
      HttpServer chunked = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
      chunked.createContext("/jmx", ex -> {
        ex.sendResponseHeaders(200, 0);
        try (OutputStream o = ex.getResponseBody()) {
          o.write(answer.get().getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
          // the agent hung up
        }
      });
      chunked.start();
      try {
        assertRefused(agentOf(chunked), "over 1048576");
      } finally {
        chunked.stop(0);
      }
    } finally {
      http.stop(0);
    }
  }

  /** The secret file: unset is null; missing, open to others or short is an error naming the file. */
  @Test
  public void theSecretFileMustBeTheOwnersAloneAndLongEnough() throws Exception {
    Configuration c = new YarnConfiguration();
    assertNull(SuspendListMac.readSecret(c));
    File dir = Files.createTempDirectory("sojourn-secret").toFile();
    File f = new File(dir, "suspend.secret");
    c.set(SuspendListMac.SECRET_FILE, f.getPath());
    assertTrue(secretError(c), secretError(c).contains(f.getPath()) && secretError(c).contains("no such file"));
    Files.write(f.toPath(), "0123456789abcdef0123456789abcdef\n".getBytes(StandardCharsets.UTF_8));
    Files.setPosixFilePermissions(f.toPath(), PosixFilePermissions.fromString("rw-r--r--"));
    assertTrue(secretError(c), secretError(c).contains(f.getPath()) && secretError(c).contains("chmod 600"));
    Files.setPosixFilePermissions(f.toPath(), PosixFilePermissions.fromString("rw-------"));
    assertEquals("0123456789abcdef0123456789abcdef", new String(SuspendListMac.readSecret(c), StandardCharsets.UTF_8));
    Files.write(f.toPath(), "short".getBytes(StandardCharsets.UTF_8));
    assertTrue(secretError(c), secretError(c).contains(f.getPath()) && secretError(c).contains("at least 32"));
  }

  private static String secretError(Configuration c) {
    try {
      SuspendListMac.readSecret(c);
    } catch (IOException e) {
      return e.getMessage();
    }
    throw new AssertionError("the secret file was accepted");
  }

  @Test
  public void anRmThatIsDownChangesNothing() throws Exception {
    AtomicReference<String> answer = new AtomicReference<>(jmx(signed(SECRET, 1, A)));
    HttpServer http = fakeRm(answer);
    int down;
    try (ServerSocket s = new ServerSocket(0)) {
      down = s.getLocalPort();
    }
    try {
      Configuration c = new YarnConfiguration();
      // The first RM is down, the second answers: the second's list counts.
      c.set(RmSuspendList.RM_WEB, "127.0.0.1:" + down + ",127.0.0.1:" + http.getAddress().getPort());
      RmSuspendList rm = new RmSuspendList(c, 1000, SECRET);
      RmSuspendList.Poll p = rm.poll();
      assertEquals(Collections.singleton(A), p.containers);
      assertEquals(p.problems.toString(), 1, p.problems.size());
      // Garbage is an error, not an empty list.
      answer.set("<html>login</html>");
      p = rm.poll();
      assertNull(p.containers);
      assertEquals(2, p.problems.size());
    } finally {
      http.stop(0);
    }
    // No RM answers: no list, so the agent keeps what it paused.
    Configuration c = new YarnConfiguration();
    c.set(RmSuspendList.RM_WEB, "127.0.0.1:" + down);
    RmSuspendList.Poll p = new RmSuspendList(c, 500, SECRET).poll();
    assertNull(p.containers);
    assertFalse(p.refused);
    assertTrue(p.problems.get(0), p.problems.get(0).contains("127.0.0.1:" + down));
  }
}
