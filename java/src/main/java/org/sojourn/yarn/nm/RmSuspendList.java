package org.sojourn.yarn.nm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.conf.HAUtil;
import org.apache.hadoop.yarn.conf.YarnConfiguration;

/**
 * The NodeManager's view of the ResourceManager's suspended containers: the
 * attribute {@code SignedSuspendedContainers} of the MXBean
 * {@code Hadoop:service=ResourceManager,name=SojournScheduler}, read from the
 * RM's JMX servlet ({@code /jmx?get=<bean>::SignedSuspendedContainers}), which
 * every Hadoop daemon's HTTP server has. No Hadoop patch, no new RPC.
 *
 * <p>The servlet is unauthenticated (and plain HTTP unless YARN's http policy
 * says HTTPS), so the list is signed by the RM with a shared secret, with a
 * sequence number and time ({@link SuspendListMac}); a list that is unsigned,
 * badly signed, not newer than the last one accepted, or off the clock by over
 * {@value SuspendListMac#MAX_AGE_MS} ms is refused, and so is an answer over
 * {@value #MAX_ANSWER_BYTES} bytes or a redirect. Free of NodeManager classes,
 * so it is tested alone.
 */
public final class RmSuspendList {
  /** Comma-separated RM web addresses (host:port or a URL); default: the RM's (all of them with HA). */
  public static final String RM_WEB = "yarn.nodemanager.sojourn.suspend.rm-webapp-address";
  static final String BEAN = "Hadoop:service=ResourceManager,name=SojournScheduler";
  static final String ATTRIBUTE = "SignedSuspendedContainers";
  /** The answer is one bean with one line: 1 MiB holds ~25,000 container ids. */
  static final int MAX_ANSWER_BYTES = 1 << 20;
  private static final ObjectMapper JSON = new ObjectMapper();

  private final List<String> urls;
  private final int timeoutMs;
  private final byte[] secret;
  /** The SEQ of the last list accepted: a list must be newer. */
  private long lastSeq = Long.MIN_VALUE;

  /** What one poll found. */
  public static final class Poll {
    /** The verified list; null: nothing usable, keep the current state. */
    public final Set<String> containers;
    /** Per RM asked, why its answer was not used. */
    public final List<String> problems;
    /** Some RM answered, but its list was refused (not merely unreachable). */
    public final boolean refused;

    Poll(Set<String> containers, List<String> problems, boolean refused) {
      this.containers = containers;
      this.problems = problems;
      this.refused = refused;
    }
  }

  /** A list an RM served that is refused: its problem is the list, not the network. */
  static final class Refused extends IOException {
    Refused(String message) {
      super(message);
    }
  }

  public RmSuspendList(Configuration conf, int timeoutMs, byte[] secret) {
    this.urls = urls(conf);
    this.timeoutMs = timeoutMs;
    this.secret = secret.clone();
  }

  public List<String> urls() {
    return urls;
  }

  /** The JMX URLs to ask, in order. */
  static List<String> urls(Configuration conf) {
    boolean https = YarnConfiguration.useHttps(conf);
    String key = https ? YarnConfiguration.RM_WEBAPP_HTTPS_ADDRESS : YarnConfiguration.RM_WEBAPP_ADDRESS;
    List<String> addrs = new ArrayList<>();
    Collection<String> given = conf.getTrimmedStringCollection(RM_WEB);
    if (!given.isEmpty()) {
      addrs.addAll(given);
    } else if (HAUtil.isHAEnabled(conf) && HAUtil.getRMHAIds(conf) != null) {
      for (String id : HAUtil.getRMHAIds(conf)) {
        String a = conf.get(HAUtil.addSuffix(key, id));
        if (a == null) {
          String host = conf.get(HAUtil.addSuffix(YarnConfiguration.RM_HOSTNAME, id));
          a = host == null ? null : host + ":" + (https ? YarnConfiguration.DEFAULT_RM_WEBAPP_HTTPS_PORT
              : YarnConfiguration.DEFAULT_RM_WEBAPP_PORT);
        }
        if (a != null) {
          addrs.add(a);
        }
      }
    } else {
      addrs.add(conf.get(key, https ? YarnConfiguration.DEFAULT_RM_WEBAPP_HTTPS_ADDRESS
          : YarnConfiguration.DEFAULT_RM_WEBAPP_ADDRESS));
    }
    List<String> out = new ArrayList<>();
    for (String a : addrs) {
      String base = a.contains("://") ? a : (https ? "https://" : "http://") + a;
      if (base.contains("://0.0.0.0:")) {
        // A wildcard bind address: the RM host is yarn.resourcemanager.hostname.
        base = base.replace("://0.0.0.0:", "://" + conf.get(YarnConfiguration.RM_HOSTNAME, "0.0.0.0") + ":");
      }
      while (base.endsWith("/")) {
        base = base.substring(0, base.length() - 1);
      }
      out.add(base + "/jmx?get=" + BEAN + "::" + ATTRIBUTE);
    }
    return out;
  }

  /**
   * The suspended containers, from the first RM that serves a list signed
   * with the secret and newer than the last one accepted; otherwise no list
   * (keep the current state), with each RM's problem.
   */
  public synchronized Poll poll() {
    List<String> problems = new ArrayList<>();
    boolean refused = false;
    for (String u : urls) {
      try {
        SuspendListMac.Signed list = check(parse(get(u)), System.currentTimeMillis());
        lastSeq = list.seq;
        return new Poll(new TreeSet<>(list.containers), problems, false);
      } catch (Refused e) {
        refused = true;
        problems.add(u + ": refused: " + e.getMessage());
      } catch (IOException | RuntimeException e) {
        problems.add(u + ": " + e);
      }
    }
    return new Poll(null, problems, refused);
  }

  /** The signed line's list, if its MAC, SEQ and AT pass. */
  private SuspendListMac.Signed check(String line, long nowMs) throws Refused {
    SuspendListMac.Signed list;
    try {
      list = SuspendListMac.verify(secret, line);
    } catch (IOException e) {
      throw new Refused(e.getMessage());
    }
    if (list.seq <= lastSeq) {
      throw new Refused("a replayed list: sequence " + list.seq + " is not above " + lastSeq
          + ", the last one accepted");
    }
    if (Math.abs(nowMs - list.atMs) > SuspendListMac.MAX_AGE_MS) {
      throw new Refused("the list was signed at " + list.atMs + " (epoch ms), over "
          + SuspendListMac.MAX_AGE_MS + " ms from this node's clock (" + nowMs
          + "): a replay, or clocks that disagree");
    }
    return list;
  }

  private String get(String u) throws IOException {
    HttpURLConnection c = (HttpURLConnection) new URL(u).openConnection();
    c.setConnectTimeout(timeoutMs);
    c.setReadTimeout(timeoutMs);
    // Every RM (HA) is asked directly: a redirect is not needed, and could lead anywhere.
    c.setInstanceFollowRedirects(false);
    try {
      int code = c.getResponseCode();
      if (code != 200) {
        throw new IOException("HTTP " + code);
      }
      if (c.getContentLengthLong() > MAX_ANSWER_BYTES) {
        throw new Refused("the answer declares " + c.getContentLengthLong() + " bytes, over "
            + MAX_ANSWER_BYTES);
      }
      try (InputStream in = c.getInputStream()) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        byte[] buf = new byte[8192];
        for (int n; (n = in.read(buf)) > 0; ) {
          b.write(buf, 0, n);
          if (b.size() > MAX_ANSWER_BYTES) {
            throw new Refused("the answer is over " + MAX_ANSWER_BYTES + " bytes");
          }
        }
        return b.toString("UTF-8");
      }
    } finally {
      c.disconnect();
    }
  }

  /**
   * The signed line in a JMX servlet answer.
   *
   * @throws Refused the answer is JMX, but has no signed list (an RM of an
   *     older Sojourn, another scheduler, or something else answering)
   * @throws IOException not a JMX servlet answer
   */
  static String parse(String json) throws IOException {
    JsonNode beans = JSON.readTree(json).path("beans");
    if (!beans.isArray()) {
      throw new IOException("not a JMX servlet answer: " + SuspendListMac.clip(json));
    }
    for (JsonNode b : beans) {
      JsonNode line = b.get(ATTRIBUTE);
      if (line != null && line.isTextual()) {
        return line.asText();
      }
    }
    throw new Refused("no " + ATTRIBUTE + " in the answer (not Sojourn's RM, an older one, or a "
        + "standby): nothing is signed, so nothing changes");
  }
}
