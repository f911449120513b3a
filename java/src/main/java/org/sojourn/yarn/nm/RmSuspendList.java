package org.sojourn.yarn.nm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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
 * attribute {@code SuspendedContainers} of the MXBean
 * {@code Hadoop:service=ResourceManager,name=SojournScheduler}, read from the
 * RM's JMX servlet ({@code /jmx?get=<bean>::SuspendedContainers}), which
 * every Hadoop daemon's HTTP server has. Plain HTTP and JSON: no Hadoop
 * patch, no new RPC. Free of NodeManager classes, so it is tested alone.
 */
public final class RmSuspendList {
  /** Comma-separated RM web addresses (host:port or a URL); default: the RM's (all of them with HA). */
  public static final String RM_WEB = "yarn.nodemanager.sojourn.suspend.rm-webapp-address";
  static final String BEAN = "Hadoop:service=ResourceManager,name=SojournScheduler";
  static final String ATTRIBUTE = "SuspendedContainers";
  private static final ObjectMapper JSON = new ObjectMapper();

  private final List<String> urls;
  private final int timeoutMs;

  public RmSuspendList(Configuration conf, int timeoutMs) {
    this.urls = urls(conf);
    this.timeoutMs = timeoutMs;
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
   * The suspended containers, from the first RM that serves the bean; an
   * empty set when RMs answer but none serves it (not Sojourn, or standby
   * only); null when no RM answered (keep the current state).
   *
   * @param errors receives one line per RM that could not be read
   */
  public Set<String> fetch(List<String> errors) {
    boolean answered = false;
    for (String u : urls) {
      try {
        Set<String> ids = parse(get(u));
        answered = true;
        if (ids != null) {
          return ids;
        }
      } catch (IOException | RuntimeException e) {
        errors.add(u + ": " + e);
      }
    }
    return answered ? new TreeSet<>() : null;
  }

  private String get(String u) throws IOException {
    HttpURLConnection c = (HttpURLConnection) new URL(u).openConnection();
    c.setConnectTimeout(timeoutMs);
    c.setReadTimeout(timeoutMs);
    c.setInstanceFollowRedirects(true);
    try {
      int code = c.getResponseCode();
      if (code != 200) {
        throw new IOException("HTTP " + code);
      }
      try (InputStream in = c.getInputStream()) {
        java.io.ByteArrayOutputStream b = new java.io.ByteArrayOutputStream();
        byte[] buf = new byte[8192];
        for (int n; (n = in.read(buf)) > 0; ) {
          b.write(buf, 0, n);
        }
        return b.toString("UTF-8");
      }
    } finally {
      c.disconnect();
    }
  }

  /**
   * The container ids in a JMX servlet answer, or null when the answer has
   * no Sojourn bean ({@code {"beans":[]}}: another scheduler, or a standby RM).
   */
  static Set<String> parse(String json) throws IOException {
    JsonNode beans = JSON.readTree(json).path("beans");
    if (!beans.isArray()) {
      throw new IOException("not a JMX servlet answer: " + (json.length() > 200 ? json.substring(0, 200) : json));
    }
    for (JsonNode b : beans) {
      JsonNode ids = b.get(ATTRIBUTE);
      if (ids != null && ids.isArray()) {
        Set<String> out = new TreeSet<>();
        for (JsonNode id : ids) {
          out.add(id.asText());
        }
        return out;
      }
    }
    return null;
  }
}
