package org.sojourn.yarn.gridmix;

import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapred.gridmix.Gridmix;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;
import org.apache.hadoop.util.ToolRunner;
import org.apache.hadoop.yarn.api.records.ApplicationReport;

/**
 * Replays a Rumen trace with Hadoop's GridMix on a local cluster of real daemons: a
 * MiniMRYarnCluster (one ResourceManager, N NodeManagers that launch real MR AM and task
 * JVMs, a JobHistoryServer) on the local filesystem. GridMix runs in SLEEPJOB mode, so no
 * input data is generated or read: each task sleeps for its trace run time, capped by
 * {@code --max-map-ms}/{@code --max-reduce-ms} so that a trace runs in minutes.
 *
 * <p>The scheduler comes from the {@code yarn-site.xml} first on the classpath
 * (integration/gridmix/compare.sh writes one per scheduler). When GridMix is done, every
 * application the RM knows is written to {@code OUT/jobs.csv} with its submission, AM launch
 * and finish times from the RM's application reports, and {@code OUT/run.json} says how
 * the run went. The exit status is 0 only when GridMix succeeded and every application
 * finished with FinalApplicationStatus SUCCEEDED.
 *
 * <pre>
 *   java [Java 17 flags] -cp CONF_DIR:CLASSPATH org.sojourn.yarn.gridmix.GridmixRunner \
 *     --trace TRACE.json --out DIR [--name NAME] [--nodes 2] [--nm-mb 4096] [--nm-vcores 4]
 *     [--submission REPLAY|SERIAL|STRESS] [--max-map-ms 10000] [--max-reduce-ms 10000]
 *     [--submit-multiplier 1.0] [-D key=value ...]
 * </pre>
 */
public final class GridmixRunner {
  /** The header of jobs.csv (kept here for the tests that name it). */
  static final String JOBS_HEADER = RealCluster.JOBS_HEADER;

  private GridmixRunner() {}

  /** The command line, parsed; every error names the offending argument. */
  static final class Options extends RealCluster.Options {
    File trace;
    String submission = "REPLAY";
    long maxMapMs = 10000;
    long maxReduceMs = 10000;
    double submitMultiplier = 1.0;

    static Options parse(String[] args) {
      Options o = new Options();
      o.parse(args, (a, v) -> {
        switch (a) {
          case "--trace": o.trace = new File(v); break;
          case "--submission":
            o.submission = v.toUpperCase(java.util.Locale.ROOT);
            if (!o.submission.equals("REPLAY") && !o.submission.equals("SERIAL")
                && !o.submission.equals("STRESS")) {
              throw new IllegalArgumentException("--submission " + v + ": not REPLAY, SERIAL or STRESS");
            }
            break;
          case "--max-map-ms": o.maxMapMs = RealCluster.positiveInt(a, v); break;
          case "--max-reduce-ms": o.maxReduceMs = RealCluster.positiveInt(a, v); break;
          case "--submit-multiplier":
            try {
              o.submitMultiplier = Double.parseDouble(v);
            } catch (NumberFormatException e) {
              throw new IllegalArgumentException("--submit-multiplier " + v + ": not a number");
            }
            if (!(o.submitMultiplier > 0) || Double.isInfinite(o.submitMultiplier)) {
              throw new IllegalArgumentException("--submit-multiplier " + v + ": must be > 0");
            }
            break;
          default: throw new IllegalArgumentException("unknown argument " + a);
        }
      });
      if (o.trace == null || o.out == null) {
        throw new IllegalArgumentException("--trace and --out are required");
      }
      if (o.clusterConf != null) {
        // GridMix itself runs against any cluster (`hadoop jar hadoop-gridmix.jar`, README).
        throw new IllegalArgumentException("--cluster-conf: GridmixRunner starts its own mini cluster; "
            + "against an existing cluster run Hadoop's GridMix as the README shows");
      }
      if (!o.trace.isFile()) {
        throw new IllegalArgumentException("--trace " + o.trace + ": no such file");
      }
      return o;
    }
  }

  public static void main(String[] args) throws Exception {
    Options o;
    try {
      o = Options.parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println("GridmixRunner: " + e.getMessage());
      System.exit(2);
      return;
    }
    int rc = run(o);
    // Hadoop leaves non-daemon threads behind (metrics, IPC); the run is over.
    System.exit(rc);
  }

  /** GridMix's settings: sleep jobs, no data, capped task times, no emulation of anything else. */
  static void gridmixConf(Configuration jc, Options o) {
    jc.set("gridmix.job.type", "SLEEPJOB");
    jc.set("gridmix.job-submission.policy", o.submission);
    jc.setFloat("gridmix.submit.multiplier", (float) o.submitMultiplier);
    jc.setLong("gridmix.sleep.max-map-time", o.maxMapMs);
    jc.setLong("gridmix.sleep.max-reduce-time", o.maxReduceMs);
    // Sleep tasks read nothing: no fake split locations to chase.
    jc.setInt("gridmix.sleep.fake-locations", 0);
    jc.setBoolean("gridmix.compression-emulation.enable", false);
    jc.setBoolean("gridmix.distributed-cache-emulation.enable", false);
    jc.setBoolean("gridmix.highram-emulation.enable", false);
    // The trace's task JVM options (its -Xmx) would replace ours and drop the Java 17 flags.
    jc.setBoolean("gridmix.task.jvm-options.enable", false);
    // Every scheduler sees the same queue: the trace's queues do not exist here.
    jc.setBoolean("gridmix.job-submission.use-queue-in-trace", false);
    jc.set("gridmix.job-submission.default-queue", "default");
    for (Map.Entry<String, String> d : o.defines.entrySet()) {
      jc.set(d.getKey(), d.getValue());
    }
  }

  static int run(Options o) throws Exception {
    if (!o.out.isDirectory() && !o.out.mkdirs()) {
      throw new IOException("cannot create --out " + o.out);
    }
    Configuration conf = RealCluster.conf(o);
    RealCluster.announce("GridmixRunner", o, conf);
    long t0 = System.currentTimeMillis();
    MiniMRYarnCluster cluster = RealCluster.create("gridmix", o);
    int gridmixRc = -1;
    String error = null;
    List<ApplicationReport> apps;
    long tGridmix = 0;
    try {
      cluster.init(conf);
      cluster.start();
      Configuration jc = new Configuration(cluster.getConfig());
      gridmixConf(jc, o);
      File io = new File(o.out, "gridmix-io");
      // GridMix's file pool wants at least one input file at start-up even for sleep jobs,
      // which read none: one small file, and a minimum file size that admits it.
      File input = new File(io, "input");
      if (!input.isDirectory() && !input.mkdirs()) {
        throw new IOException("cannot create GridMix's input directory " + input);
      }
      java.nio.file.Files.write(new File(input, "placeholder").toPath(), new byte[4096]);
      jc.setLong("gridmix.min.file.size", 1);
      // No -generate: GridMix 3.3 refuses "-generate 0" ("should be nonnegative"), and sleep
      // jobs read no input, so there is nothing to generate.
      String[] gargs = {io.toURI().toString(), o.trace.getAbsoluteFile().toURI().toString()};
      long tg = System.currentTimeMillis();
      try {
        gridmixRc = ToolRunner.run(jc, new Gridmix(), gargs);
      } catch (Exception e) {
        error = "GridMix failed: " + e;
        e.printStackTrace();
      }
      tGridmix = System.currentTimeMillis() - tg;
      apps = RealCluster.applications(cluster);
    } finally {
      RealCluster.stop(cluster);
    }
    int succeeded = RealCluster.writeJobsCsv(o.out, apps);
    boolean ok = error == null && gridmixRc == 0 && !apps.isEmpty() && succeeded == apps.size();
    if (error == null && gridmixRc != 0) {
      error = "GridMix exited " + gridmixRc;
    } else if (error == null && apps.isEmpty()) {
      error = "GridMix submitted no job";
    } else if (error == null && succeeded != apps.size()) {
      error = (apps.size() - succeeded) + " of " + apps.size() + " applications did not succeed";
    }
    try (PrintWriter w = new PrintWriter(new File(o.out, "run.json"), StandardCharsets.UTF_8.name())) {
      w.printf("{\"name\":\"%s\",\"scheduler\":\"%s\",\"policy\":%s,\"trace\":\"%s\",\"nodes\":%d,"
          + "\"nm_mb\":%d,\"nm_vcores\":%d,\"submission\":\"%s\",\"max_map_ms\":%d,\"max_reduce_ms\":%d,"
          + "\"gridmix_exit\":%d,\"applications\":%d,\"succeeded\":%d,\"gridmix_s\":%.1f,\"wall_s\":%.1f,"
          + "\"ok\":%b,\"error\":%s}%n",
          json(o.name), json(RealCluster.scheduler(conf)), RealCluster.policyJson(conf),
          json(o.trace.getAbsolutePath()), o.nodes, o.nmMb, o.nmVcores, o.submission, o.maxMapMs,
          o.maxReduceMs, gridmixRc, apps.size(), succeeded, tGridmix / 1000.0,
          (System.currentTimeMillis() - t0) / 1000.0, ok, error == null ? "null" : "\"" + json(error) + "\"");
    }
    System.out.printf("GridmixRunner: %s: %d applications, %d succeeded, GridMix %.0f s%s%n", o.name,
        apps.size(), succeeded, tGridmix / 1000.0, ok ? "" : ": " + error);
    return ok ? 0 : 1;
  }

  private static String json(String s) {
    return RealCluster.json(s);
  }
}
