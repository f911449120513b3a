package org.sojourn.yarn.gridmix;

import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;

/**
 * What the real-cluster runners (GridMix replays, PigMix DAGs of sleep jobs) share: the
 * MiniMRYarnCluster's configuration and life cycle, the command-line options that shape it,
 * an administrator's own cluster in its place ({@code --cluster-conf}), and jobs.csv, the RM's
 * application reports that `sojourn real-compare` reads.
 */
final class RealCluster {
  /** Java 17 flags for the AM and task JVMs (yarn.md section 4), as the mini-cluster tests use. */
  static final String OPENS = "--add-opens java.base/java.lang=ALL-UNNAMED "
      + "--add-opens java.base/java.util=ALL-UNNAMED --add-opens java.base/java.lang.reflect=ALL-UNNAMED "
      + "--add-opens java.base/java.net=ALL-UNNAMED --add-opens java.base/java.io=ALL-UNNAMED "
      + "--add-opens java.base/java.util.concurrent=ALL-UNNAMED --add-opens java.base/sun.nio.ch=ALL-UNNAMED "
      + "--add-exports java.base/sun.net.dns=ALL-UNNAMED --add-exports java.base/sun.net.util=ALL-UNNAMED";

  /** The header of jobs.csv; `sojourn real-compare` reads these columns by name. */
  static final String JOBS_HEADER =
      "app_id,name,queue,user,state,final_status,submit_ms,launch_ms,finish_ms,response_ms";

  private RealCluster() {}

  /** The options every runner takes: where results go and the cluster's shape. */
  static class Options {
    File out;
    String name = "run";
    int nodes = 2;
    int nmMb = 4096;
    int nmVcores = 4;
    /**
     * An existing cluster's client configuration directory (core-site.xml, yarn-site.xml,
     * mapred-site.xml, hdfs-site.xml): jobs go to that cluster and no mini cluster starts.
     */
    File clusterConf;
    final Map<String, String> defines = new LinkedHashMap<>();

    /**
     * Reads {@code args}: {@code -Dkey=value}, then {@code --option value} pairs, the options
     * every runner takes ({@link #accept}) or the runner's own ({@code own}, which throws on
     * one it does not know).
     */
    void parse(String[] args, java.util.function.BiConsumer<String, String> own) {
      for (int i = 0; i < args.length; i++) {
        String a = args[i];
        if (a.startsWith("-D") && a.length() > 2) {
          define(a.substring(2));
          continue;
        }
        if (i + 1 >= args.length) {
          throw new IllegalArgumentException("argument " + a + " needs a value");
        }
        String v = args[++i];
        if (!accept(a, v)) {
          own.accept(a, v);
        }
      }
    }

    /** Takes {@code arg value} if it is one of these options; false if it is not. */
    boolean accept(String arg, String value) {
      switch (arg) {
        case "-D": define(value); return true;
        case "--out": out = new File(value); return true;
        case "--name": name = value; return true;
        case "--nodes": nodes = positiveInt(arg, value); return true;
        case "--nm-mb": nmMb = positiveInt(arg, value); return true;
        case "--nm-vcores": nmVcores = positiveInt(arg, value); return true;
        case "--cluster-conf":
          clusterConf = new File(value);
          if (!new File(clusterConf, "yarn-site.xml").isFile()) {
            throw new IllegalArgumentException("--cluster-conf " + value + ": no yarn-site.xml in it");
          }
          return true;
        default: return false;
      }
    }

    void define(String kv) {
      int eq = kv.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException("-D " + kv + ": not key=value");
      }
      defines.put(kv.substring(0, eq), kv.substring(eq + 1));
    }
  }

  static int positiveInt(String arg, String v) {
    try {
      int n = Integer.parseInt(v);
      if (n > 0) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new IllegalArgumentException(arg + " " + v + ": not a positive integer");
  }

  /** The cluster's configuration: the scheduler from yarn-site.xml, small MR containers. */
  static Configuration conf(Options o) {
    Configuration conf = new YarnConfiguration();
    // MiniYARNCluster sizes each NodeManager from the first key.
    conf.setInt(YarnConfiguration.YARN_MINICLUSTER_NM_PMEM_MB, o.nmMb);
    conf.setInt(YarnConfiguration.NM_PMEM_MB, o.nmMb);
    conf.setInt(YarnConfiguration.NM_VCORES, o.nmVcores);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, 128);
    // Task JVMs use more virtual memory than their container on Java 17; the machine is
    // shared, so physical limits are not what is measured here either.
    conf.setBoolean(YarnConfiguration.NM_VMEM_CHECK_ENABLED, false);
    conf.setBoolean(YarnConfiguration.NM_PMEM_CHECK_ENABLED, false);
    // A stopping NodeManager waits this long for its containers (default 5 s each).
    conf.setLong(YarnConfiguration.NM_PROCESS_KILL_WAIT_MS, 1000);
    conf.setInt("yarn.app.mapreduce.am.resource.mb", 512);
    conf.set("yarn.app.mapreduce.am.command-opts", "-Xmx320m -XX:TieredStopAtLevel=1 " + OPENS);
    conf.setInt("mapreduce.map.memory.mb", 384);
    conf.setInt("mapreduce.reduce.memory.mb", 384);
    conf.set("mapreduce.map.java.opts", "-Xmx200m -XX:TieredStopAtLevel=1 " + OPENS);
    conf.set("mapreduce.reduce.java.opts", "-Xmx200m -XX:TieredStopAtLevel=1 " + OPENS);
    conf.setBoolean("mapreduce.map.speculative", false);
    conf.setBoolean("mapreduce.reduce.speculative", false);
    for (Map.Entry<String, String> d : o.defines.entrySet()) {
      conf.set(d.getKey(), d.getValue());
    }
    return conf;
  }

  /** The site files a cluster's client configuration directory may hold, in Hadoop's order. */
  private static final String[] SITE_FILES = {"core-site.xml", "hdfs-site.xml", "yarn-site.xml", "mapred-site.xml"};

  /**
   * An existing cluster's configuration ({@code --cluster-conf}): its site files as they are,
   * then the {@code -D} settings. Nothing of the mini cluster's sizing applies: the containers
   * are what the administrator's mapred-site.xml asks for.
   */
  static Configuration externalConf(Options o) {
    Configuration conf = new YarnConfiguration();
    for (String f : SITE_FILES) {
      File site = new File(o.clusterConf, f);
      if (site.isFile()) {
        conf.addResource(new org.apache.hadoop.fs.Path(site.toURI()));
      }
    }
    for (Map.Entry<String, String> d : o.defines.entrySet()) {
      conf.set(d.getKey(), d.getValue());
    }
    return conf;
  }

  static String scheduler(Configuration conf) {
    return conf.get(YarnConfiguration.RM_SCHEDULER, YarnConfiguration.DEFAULT_RM_SCHEDULER);
  }

  /** The Sojourn policy, as JSON (null under YARN's own schedulers). */
  static String policyJson(Configuration conf) {
    String p = conf.get("yarn.scheduler.sojourn.policy");
    return p == null ? "null" : "\"" + json(p) + "\"";
  }

  static void announce(String runner, Options o, Configuration conf) {
    String policy = conf.get("yarn.scheduler.sojourn.policy");
    System.out.printf("%s: %s: %d NodeManagers of %d MB/%d vcores, scheduler %s%s%n", runner, o.name, o.nodes,
        o.nmMb, o.nmVcores, scheduler(conf), policy == null ? "" : " (policy " + policy + ")");
  }

  /** A cluster, not yet started: {@code cluster.init(conf); cluster.start();}. */
  static MiniMRYarnCluster create(String kind, Options o) {
    return new MiniMRYarnCluster(kind + "-" + o.name.replaceAll("[^A-Za-z0-9-]", "-"), o.nodes);
  }

  /** Every application the RM knows, in application order. */
  static List<ApplicationReport> applications(MiniMRYarnCluster cluster) throws Exception {
    return applications(cluster.getConfig(), null);
  }

  /**
   * The applications of the RM that {@code conf} names, in application order: those whose
   * ids are in {@code only} (a shared cluster runs other people's jobs too), or every one
   * when {@code only} is null.
   */
  static List<ApplicationReport> applications(Configuration conf, java.util.Set<String> only) throws Exception {
    List<ApplicationReport> apps = new ArrayList<>();
    YarnClient yc = YarnClient.createYarnClient();
    yc.init(conf);
    yc.start();
    try {
      for (ApplicationReport a : yc.getApplications()) {
        if (only == null || only.contains(a.getApplicationId().toString())) {
          apps.add(a);
        }
      }
    } finally {
      yc.stop();
    }
    apps.sort(Comparator.comparing(a -> a.getApplicationId()));
    return apps;
  }

  /** How many NodeManagers the RM that {@code conf} names has running. */
  static int nodeManagers(Configuration conf) throws Exception {
    YarnClient yc = YarnClient.createYarnClient();
    yc.init(conf);
    yc.start();
    try {
      return yc.getYarnClusterMetrics().getNumNodeManagers();
    } finally {
      yc.stop();
    }
  }

  static boolean succeeded(ApplicationReport a) {
    return "SUCCEEDED".equals(String.valueOf(a.getFinalApplicationStatus()));
  }

  /** Writes {@code out/jobs.csv}; returns how many applications succeeded. */
  static int writeJobsCsv(File out, List<ApplicationReport> apps) throws IOException {
    int succeeded = 0;
    try (PrintWriter w = new PrintWriter(new File(out, "jobs.csv"), StandardCharsets.UTF_8.name())) {
      w.println(JOBS_HEADER);
      for (ApplicationReport a : apps) {
        if (succeeded(a)) {
          succeeded++;
        }
        long submit = a.getStartTime();
        long launch = a.getLaunchTime();
        long finish = a.getFinishTime();
        w.printf("%s,%s,%s,%s,%s,%s,%d,%d,%d,%s%n", a.getApplicationId(), csv(a.getName()), csv(a.getQueue()),
            csv(a.getUser()), a.getYarnApplicationState(), a.getFinalApplicationStatus(), submit, launch, finish,
            finish > 0 ? Long.toString(finish - submit) : "");
      }
    }
    return succeeded;
  }

  /**
   * Stops the cluster, waiting at most 20 s: a stopping NodeManager waits for applications
   * the RM no longer tells it about (about 17 s each, one after the other), though every
   * job is over and its containers have exited by then.
   */
  static void stop(MiniMRYarnCluster cluster) throws InterruptedException {
    Thread t = new Thread(cluster::stop, "cluster-stop");
    t.setDaemon(true);
    t.start();
    t.join(20000);
    if (t.isAlive()) {
      System.out.println("RealCluster: the cluster had not stopped after 20 s; exiting anyway");
    }
  }

  /** A CSV field: commas and quotes would shift columns, so they become spaces. */
  static String csv(String s) {
    return s == null ? "" : s.replace(',', ' ').replace('"', ' ').replace('\n', ' ');
  }

  static String json(String s) {
    return s.replace("\\", "\\\\").replace("\"", "\\\"");
  }
}
