package org.sojourn.yarn.gridmix;

import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.SleepJob;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;
import org.apache.hadoop.yarn.api.records.ApplicationReport;

/**
 * Runs job DAGs (PigMix's queries, gridmix.md §5.1) as real MapReduce jobs on a local cluster
 * of real daemons (a MiniMRYarnCluster, as {@link GridmixRunner}): every DAG job is one of
 * Hadoop's SleepJobs, submitted once its query has arrived AND every parent has succeeded,
 * as PigMix's JobControl does. A job whose parent failed is never submitted.
 *
 * <p>The DAG is the CSV `sojourn export-dag` writes (rust/sim/src/workload/pigmix_dag/export.rs):
 * {@code query,job,name,submit_ms,parents,maps,reduces,map_ms,reduce_ms}, parents
 * {@code ;}-separated job ids of earlier rows; SleepJob sleeps every map {@code map_ms} and every
 * reduce {@code reduce_ms} (the export's mean task times, already capped).
 *
 * <p>Writes {@code OUT/jobs.csv} (the RM's application reports, exactly as GridmixRunner),
 * {@code OUT/queries.csv} ({@code query,jobs,succeeded,submit_ms,finish_ms,response_ms}: the
 * first job's submission and the last job's finish, epoch ms, the response empty unless every
 * job of the query succeeded) and {@code OUT/run.json}. Exit status 0 only when every job of
 * the DAG ran and succeeded.
 *
 * <pre>
 *   java [Java 17 flags] -cp CONF_DIR:CLASSPATH org.sojourn.yarn.gridmix.PigmixDagRunner \
 *     --dag DAG.csv --out DIR [--name NAME] [--nodes 2] [--nm-mb 4096] [--nm-vcores 4] [-D key=value ...]
 * </pre>
 *
 * <p>With {@code --cluster-conf DIR} (a cluster's client configuration: yarn-site.xml and the
 * other site files) no mini cluster starts: the jobs go to that cluster's RM, whatever
 * scheduler it runs, and jobs.csv holds only the applications this run submitted. The README
 * shows it under {@code hadoop jar}.
 */
public final class PigmixDagRunner {
  /** The header `sojourn export-dag` writes. */
  static final String DAG_HEADER = "query,job,name,submit_ms,parents,maps,reduces,map_ms,reduce_ms";
  static final String QUERIES_HEADER = "query,jobs,succeeded,submit_ms,finish_ms,response_ms";

  private PigmixDagRunner() {}

  /** One row of the DAG file. */
  static final class DagJob {
    String query;
    long id;
    String name;
    long submitMs;
    final List<Long> parents = new ArrayList<>();
    int maps;
    int reduces;
    long mapMs;
    long reduceMs;
  }

  static final class Options extends RealCluster.Options {
    File dag;

    static Options parse(String[] args) {
      Options o = new Options();
      o.parse(args, (a, v) -> {
        if (a.equals("--dag")) {
          o.dag = new File(v);
        } else {
          throw new IllegalArgumentException("unknown argument " + a);
        }
      });
      if (o.dag == null || o.out == null) {
        throw new IllegalArgumentException("--dag and --out are required");
      }
      if (!o.dag.isFile()) {
        throw new IllegalArgumentException("--dag " + o.dag + ": no such file");
      }
      return o;
    }
  }

  /** Parses the DAG file; errors name the file, line and field. */
  static List<DagJob> parseDag(List<String> lines, String file) {
    if (lines.isEmpty() || !lines.get(0).trim().equals(DAG_HEADER)) {
      throw new IllegalArgumentException(file + ": the first line is not '" + DAG_HEADER + "'");
    }
    List<DagJob> jobs = new ArrayList<>();
    Map<Long, DagJob> byId = new LinkedHashMap<>();
    for (int n = 1; n < lines.size(); n++) {
      String line = lines.get(n);
      if (line.trim().isEmpty()) {
        continue;
      }
      String where = file + " line " + (n + 1);
      String[] f = line.split(",", -1);
      if (f.length != 9) {
        throw new IllegalArgumentException(where + ": " + f.length + " fields, expected 9: '" + line + "'");
      }
      DagJob j = new DagJob();
      j.query = f[0].trim();
      j.id = number(where, "job", f[1]);
      j.name = f[2].trim();
      j.submitMs = number(where, "submit_ms", f[3]);
      if (!f[4].trim().isEmpty()) {
        for (String p : f[4].split(";")) {
          long parent = number(where, "parents", p);
          if (!byId.containsKey(parent)) {
            throw new IllegalArgumentException(where + ": parent " + parent + " is not an earlier job");
          }
          j.parents.add(parent);
        }
      }
      j.maps = (int) number(where, "maps", f[5]);
      j.reduces = (int) number(where, "reduces", f[6]);
      j.mapMs = number(where, "map_ms", f[7]);
      j.reduceMs = number(where, "reduce_ms", f[8]);
      if (j.query.isEmpty() || j.name.isEmpty() || j.maps < 1) {
        throw new IllegalArgumentException(where + ": a job needs a query, a name and at least one map: '" + line + "'");
      }
      if (byId.put(j.id, j) != null) {
        throw new IllegalArgumentException(where + ": job " + j.id + " appears twice");
      }
      jobs.add(j);
    }
    if (jobs.isEmpty()) {
      throw new IllegalArgumentException(file + ": no jobs");
    }
    return jobs;
  }

  private static long number(String where, String column, String v) {
    try {
      long x = Long.parseLong(v.trim());
      if (x >= 0 && x <= Integer.MAX_VALUE) {
        return x;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new IllegalArgumentException(where + ": " + column + " '" + v + "' is not a whole number");
  }

  public static void main(String[] args) throws Exception {
    Options o;
    List<DagJob> dag;
    try {
      o = Options.parse(args);
      dag = parseDag(Files.readAllLines(o.dag.toPath(), StandardCharsets.UTF_8), o.dag.getPath());
    } catch (IllegalArgumentException e) {
      System.err.println("PigmixDagRunner: " + e.getMessage());
      System.exit(2);
      return;
    }
    int rc = run(o, dag);
    // Hadoop leaves non-daemon threads behind (metrics, IPC); the run is over.
    System.exit(rc);
  }

  /** What happened to one DAG job. */
  static final class Outcome {
    final boolean succeeded;
    final String appId; // null: never submitted
    final String error;

    Outcome(boolean succeeded, String appId, String error) {
      this.succeeded = succeeded;
      this.appId = appId;
      this.error = error;
    }
  }

  static int run(Options o, List<DagJob> dag) throws Exception {
    if (!o.out.isDirectory() && !o.out.mkdirs()) {
      throw new IOException("cannot create --out " + o.out);
    }
    boolean external = o.clusterConf != null;
    Configuration conf = external ? RealCluster.externalConf(o) : RealCluster.conf(o);
    long t0 = System.currentTimeMillis();
    MiniMRYarnCluster cluster = external ? null : RealCluster.create("pigmix", o);
    Map<Long, Outcome> outcomes = new ConcurrentHashMap<>();
    List<ApplicationReport> apps;
    long dagMs;
    // One thread per job waiting on the cluster; daemons, so a hung job cannot hold the JVM.
    ExecutorService pool = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "dag-job");
      t.setDaemon(true);
      return t;
    });
    try {
      Configuration client;
      if (external) {
        o.nodes = RealCluster.nodeManagers(conf);
        client = new Configuration(conf);
      } else {
        cluster.init(conf);
        cluster.start();
        client = new Configuration(cluster.getConfig());
      }
      RealCluster.announce("PigmixDagRunner", o, conf);
      if (!o.defines.containsKey("mapreduce.job.queuename")) {
        client.set("mapreduce.job.queuename", "default");
      }
      // A child is submitted when its parents' waitForCompletion returns: poll often (default 5 s).
      client.setInt("mapreduce.client.completion.pollinterval", 250);
      long start = System.currentTimeMillis();
      Map<Long, CompletableFuture<Boolean>> done = new LinkedHashMap<>();
      for (DagJob j : dag) {
        List<CompletableFuture<Boolean>> parents = new ArrayList<>();
        for (long p : j.parents) {
          parents.add(done.get(p));
        }
        CompletableFuture<Boolean> f = CompletableFuture.allOf(parents.toArray(new CompletableFuture[0]))
            .thenApplyAsync(v -> {
              if (!parents.stream().allMatch(CompletableFuture::join)) {
                outcomes.put(j.id, new Outcome(false, null, "a parent did not succeed"));
                return false;
              }
              Outcome out = runJob(j, client, start);
              outcomes.put(j.id, out);
              return out.succeeded;
            }, pool);
        done.put(j.id, f);
      }
      CompletableFuture.allOf(done.values().toArray(new CompletableFuture[0])).join();
      dagMs = System.currentTimeMillis() - start;
      if (external) {
        // A shared cluster runs other jobs too: only this run's applications are reported.
        Set<String> ours = new HashSet<>();
        for (Outcome out : outcomes.values()) {
          if (out.appId != null) {
            ours.add(out.appId);
          }
        }
        apps = RealCluster.applications(client, ours);
      } else {
        apps = RealCluster.applications(cluster);
      }
    } finally {
      pool.shutdownNow();
      if (cluster != null) {
        RealCluster.stop(cluster);
      }
    }
    int succeeded = RealCluster.writeJobsCsv(o.out, apps);
    Map<String, ApplicationReport> byApp = new LinkedHashMap<>();
    for (ApplicationReport a : apps) {
      byApp.put(a.getApplicationId().toString(), a);
    }
    int queriesDone = writeQueriesCsv(new File(o.out, "queries.csv"), dag, outcomes, byApp);
    long jobsOk = dag.stream().filter(j -> outcomes.get(j.id) != null && outcomes.get(j.id).succeeded).count();
    String error = null;
    for (DagJob j : dag) {
      Outcome out = outcomes.get(j.id);
      if (error == null && (out == null || !out.succeeded)) {
        error = "job " + j.id + " (" + j.name + "): " + (out == null ? "no outcome" : out.error);
      }
    }
    boolean ok = error == null && apps.size() == dag.size() && succeeded == apps.size();
    if (ok != (error == null)) {
      error = apps.size() + " applications for " + dag.size() + " DAG jobs, " + succeeded + " succeeded";
    }
    long queries = dag.stream().map(j -> j.query).distinct().count();
    try (PrintWriter w = new PrintWriter(new File(o.out, "run.json"), StandardCharsets.UTF_8.name())) {
      w.printf("{\"name\":\"%s\",\"scheduler\":\"%s\",\"policy\":%s,\"dag\":\"%s\",\"nodes\":%d,"
          + "\"nm_mb\":%d,\"nm_vcores\":%d,\"jobs\":%d,\"queries\":%d,\"applications\":%d,\"succeeded\":%d,"
          + "\"jobs_succeeded\":%d,\"queries_done\":%d,\"dag_s\":%.1f,\"wall_s\":%.1f,\"ok\":%b,\"error\":%s}%n",
          RealCluster.json(o.name), RealCluster.json(RealCluster.scheduler(conf)), RealCluster.policyJson(conf),
          RealCluster.json(o.dag.getAbsolutePath()), o.nodes, o.nmMb, o.nmVcores, dag.size(), queries, apps.size(),
          succeeded, jobsOk, queriesDone, dagMs / 1000.0, (System.currentTimeMillis() - t0) / 1000.0, ok,
          error == null ? "null" : "\"" + RealCluster.json(error) + "\"");
    }
    System.out.printf("PigmixDagRunner: %s: %d of %d jobs succeeded, %d of %d queries done, DAG %.0f s%s%n",
        o.name, jobsOk, dag.size(), queriesDone, queries, dagMs / 1000.0, ok ? "" : ": " + error);
    return ok ? 0 : 1;
  }

  /** Waits for the query's arrival, submits the SleepJob and waits for it to finish. */
  static Outcome runJob(DagJob j, Configuration client, long start) {
    String appId = null;
    try {
      long wait = start + j.submitMs - System.currentTimeMillis();
      if (wait > 0) {
        Thread.sleep(wait);
      }
      SleepJob sleep = new SleepJob();
      sleep.setConf(new Configuration(client));
      Job job = sleep.createJob(j.maps, j.reduces, j.mapMs, 1, j.reduceMs, 1);
      job.setJobName(j.name);
      job.submit();
      // The job's ID and its application's share the cluster timestamp and sequence number.
      appId = job.getJobID().toString().replaceFirst("^job_", "application_");
      boolean ok = job.waitForCompletion(false);
      return new Outcome(ok, appId, ok ? null : "finished " + job.getStatus().getState());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new Outcome(false, appId, "interrupted");
    } catch (Exception e) {
      e.printStackTrace();
      return new Outcome(false, appId, "failed: " + e);
    }
  }

  /** Writes queries.csv in query order of first appearance; returns how many queries finished. */
  static int writeQueriesCsv(File file, List<DagJob> dag, Map<Long, Outcome> outcomes,
      Map<String, ApplicationReport> byApp) throws IOException {
    Map<String, List<DagJob>> byQuery = new LinkedHashMap<>();
    for (DagJob j : dag) {
      byQuery.computeIfAbsent(j.query, q -> new ArrayList<>()).add(j);
    }
    int done = 0;
    try (PrintWriter w = new PrintWriter(file, StandardCharsets.UTF_8.name())) {
      w.println(QUERIES_HEADER);
      for (Map.Entry<String, List<DagJob>> q : byQuery.entrySet()) {
        long submit = Long.MAX_VALUE;
        long finish = 0;
        int ok = 0;
        for (DagJob j : q.getValue()) {
          Outcome out = outcomes.get(j.id);
          ApplicationReport a = out == null || out.appId == null ? null : byApp.get(out.appId);
          if (a == null) {
            continue;
          }
          submit = Math.min(submit, a.getStartTime());
          finish = Math.max(finish, a.getFinishTime());
          if (out.succeeded && RealCluster.succeeded(a)) {
            ok++;
          }
        }
        boolean finished = ok == q.getValue().size() && finish > 0;
        if (finished) {
          done++;
        }
        w.printf("%s,%d,%d,%s,%s,%s%n", RealCluster.csv(q.getKey()), q.getValue().size(), ok,
            submit == Long.MAX_VALUE ? "" : Long.toString(submit), finished ? Long.toString(finish) : "",
            finished ? Long.toString(finish - submit) : "");
      }
    }
    return done;
  }
}
