//! Reading the outputs of Hadoop's Scheduler Load Simulator (SLS) and comparing runs of one
//! trace under several schedulers (issue #6).
//!
//! One SLS run writes, in its output directory (research/yarn.md §3.1):
//!
//! - `jobruntime.csv`: `JobID,real_start_time,real_end_time,simulate_start_time,simulate_end_time`.
//!   `JobID` is the RM's application ID; the `real_*` columns are the *trace's* start and end
//!   (ms from the trace's start); the `simulate_*` columns are wall-clock epoch ms of the run.
//!   A job's response time is `simulate_end_time − simulate_start_time`. SLS 3.3 may write a
//!   job twice (its AM simulator records its last step twice); the first finish is kept.
//! - `metrics/counter.scheduler.operation.allocate.csv` (`t,count`, t in epoch seconds): the
//!   scheduler's `allocate()` calls, one per AM heartbeat; their rate is reported.
//! - `metrics/sampler.scheduler.operation.handle.timecost.csv`
//!   (`t,count,max,mean,min,stddev,p50,p75,p95,p98,p99,p999`, times in ns over SLS's sliding
//!   window of the last `yarn.sls.metrics.timer.window.size` events, default 100): the last
//!   row's p99 is reported, in ms.
//! - `metrics/variable.*.csv` (`t,value`, sampled each second): `running.container` (AMs
//!   included), `running.application` and `cluster.{allocated,available}.{memory,vcores}`,
//!   from which utilization is allocated / (allocated + available) ([`read_sls_series`]).
//!
//! SLS counts no containers allocated under every scheduler (only the CapacityScheduler's
//! commit counter does), so containers allocated are the trace's tasks plus one AM per job
//! ([`CONTAINERS_NOTE`], [`SlsReport::containers`]). [`SlsReport`] maps each run into the
//! simulator's metric types and `sojourn compare`'s rows, table and page
//! (`sojourn sls-compare`); slowdown is left out, as SLS does not know a job's ideal run time.
//!
//! Jobs are matched across runs by their application sequence number (`…_0003` → `app_0003`):
//! SLS submits the trace's jobs in trace order, so the n-th application is the same trace
//! job under every scheduler. Percentiles are nearest-rank ([`crate::metrics::percentile`]).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::engine::SimError;
use crate::metrics::{Dist, Utilization};
use crate::report::{
    self, cdf_plot, time_unit, Axis, Better, Comparison, Description, Draw, Metrics, Plot, Series, Unit, WriteOptions,
};
use crate::run::UtilSample;
use sojourn_core::Time;

/// One job of one SLS run.
#[derive(Clone, Debug, PartialEq)]
pub struct SlsJob {
    /// `app_NNNN`, from the application ID's sequence number: the same trace job in every run.
    pub key: String,
    /// The RM's application ID, as SLS wrote it.
    pub app_id: String,
    /// The job's start in the trace (ms from the trace's start).
    pub trace_start_ms: i64,
    /// Wall-clock submission and finish (epoch ms).
    pub start_ms: i64,
    pub end_ms: i64,
}

impl SlsJob {
    /// Response time (submission to finish), in seconds.
    pub fn response_s(&self) -> f64 {
        (self.end_ms - self.start_ms) as f64 / 1000.0
    }
}

/// The figures of one SLS run.
#[derive(Clone, Debug, PartialEq)]
pub struct SlsRun {
    pub name: String,
    /// Jobs in application order.
    pub jobs: Vec<SlsJob>,
    /// Rows of `jobruntime.csv` dropped because their job was already listed.
    pub duplicate_rows: usize,
    /// `allocate()` calls per second over the run (None without the metrics file).
    pub allocate_calls_per_s: Option<f64>,
    /// p99 of the scheduler's `handle()` time (ms) in SLS's last window (None without the file).
    pub handle_p99_ms: Option<f64>,
}

impl SlsRun {
    /// Response-time figures (s); None when no job finished.
    pub fn response(&self) -> Option<Dist> {
        Dist::of(self.jobs.iter().map(SlsJob::response_s).collect())
    }

    /// First submission to last finish (s).
    pub fn makespan_s(&self) -> Option<f64> {
        let start = self.jobs.iter().map(|j| j.start_ms).min()?;
        let end = self.jobs.iter().map(|j| j.end_ms).max()?;
        Some((end - start) as f64 / 1000.0)
    }
}

fn bad(what: &str, detail: impl std::fmt::Display) -> SimError {
    SimError::Config(format!("{what}: {detail}"))
}

fn app_key(app_id: &str) -> String {
    let seq = app_id.rsplit('_').next().unwrap_or(app_id);
    format!("app_{seq}")
}

/// Application order of [`app_key`]s: YARN pads sequence numbers to four digits and no
/// further, so a longer key comes later (`app_9999` < `app_10000`).
fn app_order(key: &str) -> (usize, String) {
    (key.len(), key.to_string())
}

/// Parses SLS's `jobruntime.csv`: jobs in application order, and how many rows repeated a job
/// (the first finish of a job is kept).
pub fn parse_jobruntime(text: &str) -> Result<(Vec<SlsJob>, usize), SimError> {
    parse_jobruntime_in("jobruntime.csv", text)
}

/// [`parse_jobruntime`], with errors naming `file`.
fn parse_jobruntime_in(file: &str, text: &str) -> Result<(Vec<SlsJob>, usize), SimError> {
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
    let (_, header) = lines.next().ok_or_else(|| bad(file, "empty"))?;
    let cols: Vec<&str> = header.split(',').map(str::trim).collect();
    let col = |name: &str| {
        cols.iter().position(|c| *c == name).ok_or_else(|| bad(file, format!("no column {name} in header '{header}'")))
    };
    let (c_id, c_trace, c_start, c_end) =
        (col("JobID")?, col("real_start_time")?, col("simulate_start_time")?, col("simulate_end_time")?);
    let mut by_key: BTreeMap<(usize, String), SlsJob> = BTreeMap::new();
    let mut duplicates = 0;
    for (i, line) in lines {
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        let num = |c: usize| -> Result<i64, SimError> {
            let s = f.get(c).ok_or_else(|| bad(file, format!("row {}: too few fields", i + 1)))?;
            s.parse::<i64>().map_err(|e| bad(file, format!("row {}: '{s}': {e}", i + 1)))
        };
        let app_id = f.get(c_id).copied().unwrap_or_default().to_string();
        let job = SlsJob {
            key: app_key(&app_id),
            app_id,
            trace_start_ms: num(c_trace)?,
            start_ms: num(c_start)?,
            end_ms: num(c_end)?,
        };
        match by_key.get_mut(&app_order(&job.key)) {
            Some(old) => {
                duplicates += 1;
                if job.end_ms < old.end_ms {
                    *old = job;
                }
            }
            None => {
                by_key.insert(app_order(&job.key), job);
            }
        }
    }
    Ok((by_key.into_values().collect(), duplicates))
}

/// Rows of a Codahale CsvReporter file (header skipped), split on commas.
fn csv_rows(text: &str) -> Vec<Vec<f64>> {
    text.lines()
        .skip(1)
        .filter_map(|l| l.split(',').map(|x| x.trim().parse::<f64>().ok()).collect::<Option<Vec<f64>>>())
        .collect()
}

/// `allocate()` calls per second from `counter.scheduler.operation.allocate.csv` (`t,count`).
pub fn allocate_rate(text: &str) -> Option<f64> {
    let rows = csv_rows(text);
    let first = rows.iter().find(|r| r.len() >= 2 && r[1] > 0.0)?;
    let last = rows.last()?;
    let secs = last[0] - first[0];
    if secs <= 0.0 {
        return None;
    }
    Some((last[1] - first[1]) / secs)
}

/// The last row's p99 (ns → ms) of a `sampler.*.timecost.csv` file.
pub fn timecost_p99_ms(text: &str) -> Option<f64> {
    let header: Vec<&str> = text.lines().next()?.split(',').map(str::trim).collect();
    let c = header.iter().position(|h| *h == "p99")?;
    let last = csv_rows(text).pop()?;
    Some(last.get(c)? / 1.0e6)
}

/// Reads one SLS output directory (the `-output` of `SLSRunner`).
pub fn read_sls_run(name: &str, dir: &Path) -> Result<SlsRun, SimError> {
    let path = dir.join("jobruntime.csv");
    let text = std::fs::read_to_string(&path).map_err(|e| bad(&path.display().to_string(), e))?;
    let (jobs, duplicate_rows) = parse_jobruntime_in(&path.display().to_string(), &text)?;
    let metrics = dir.join("metrics");
    let read = |f: &str| std::fs::read_to_string(metrics.join(f)).ok();
    Ok(SlsRun {
        name: name.to_string(),
        jobs,
        duplicate_rows,
        allocate_calls_per_s: read("counter.scheduler.operation.allocate.csv").as_deref().and_then(allocate_rate),
        handle_p99_ms: read("sampler.scheduler.operation.handle.timecost.csv").as_deref().and_then(timecost_p99_ms),
    })
}

/// Several SLS runs of one trace.
#[derive(Clone, Debug, PartialEq)]
pub struct SlsComparison {
    pub runs: Vec<SlsRun>,
}

fn opt(x: Option<f64>, digits: usize) -> String {
    match x {
        Some(v) if v.is_finite() => format!("{v:.digits$}"),
        _ => String::new(),
    }
}

impl SlsComparison {
    /// Every job key seen in any run, in order, with its trace start.
    pub fn job_keys(&self) -> Vec<(String, i64)> {
        let mut keys: BTreeMap<(usize, String), i64> = BTreeMap::new();
        for r in &self.runs {
            for j in &r.jobs {
                keys.entry(app_order(&j.key)).or_insert(j.trace_start_ms);
            }
        }
        keys.into_iter().map(|((_, key), start)| (key, start)).collect()
    }

    /// One row per job: `job,trace_start_s,<scheduler>_response_s,…` (empty where a job did not finish).
    pub fn jobs_csv(&self) -> String {
        let mut s = String::from("job,trace_start_s");
        for r in &self.runs {
            let _ = write!(s, ",{}_response_s", r.name);
        }
        s.push('\n');
        for (key, start) in self.job_keys() {
            let _ = write!(s, "{key},{:.3}", start as f64 / 1000.0);
            for r in &self.runs {
                let v = r.jobs.iter().find(|j| j.key == key).map(SlsJob::response_s);
                let _ = write!(s, ",{}", opt(v, 3));
            }
            s.push('\n');
        }
        s
    }

    /// One row per job, one column per scheduler: response time (s), "—" where a job did not finish.
    pub fn jobs_markdown(&self) -> String {
        let mut s = String::from("| job | trace start (s) |");
        for r in &self.runs {
            let _ = write!(s, " {} |", r.name);
        }
        s.push_str("\n|---|---:|");
        for _ in &self.runs {
            s.push_str("---:|");
        }
        s.push('\n');
        for line in self.jobs_csv().lines().skip(1) {
            let cells: Vec<&str> = line.split(',').map(|c| if c.is_empty() { "—" } else { c }).collect();
            let _ = writeln!(s, "| {} |", cells.join(" | "));
        }
        s
    }

    /// Which runs repeated jobs in jobruntime.csv, and how often; None when none did.
    pub fn duplicates_note(&self) -> Option<String> {
        let dups: Vec<String> = self
            .runs
            .iter()
            .filter(|r| r.duplicate_rows > 0)
            .map(|r| format!("{} {}", r.name, r.duplicate_rows))
            .collect();
        (!dups.is_empty())
            .then(|| format!("Repeated jobruntime.csv rows dropped (first finish kept): {}.", dups.join(", ")))
    }
}

/// Reads each `(scheduler name, SLS output dir)` run.
pub fn read_sls_runs(dirs: &[(String, PathBuf)]) -> Result<SlsComparison, SimError> {
    if dirs.is_empty() {
        return Err(SimError::Config("no SLS runs to compare".to_string()));
    }
    let runs = dirs.iter().map(|(n, d)| read_sls_run(n, d)).collect::<Result<Vec<_>, _>>()?;
    Ok(SlsComparison { runs })
}

/// A Codahale `variable.*.csv` gauge (`t,value`, t in epoch seconds) as `(t, value)` rows;
/// errors name `file` and the line.
pub fn parse_gauge(file: &str, text: &str) -> Result<Vec<(f64, f64)>, SimError> {
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate().skip(1).filter(|(_, l)| !l.trim().is_empty()) {
        let mut f = line.split(',').map(str::trim);
        let mut num = || -> Result<f64, SimError> {
            let s = f.next().ok_or_else(|| bad(file, format!("line {}: too few fields", i + 1)))?;
            s.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| bad(file, format!("line {}: '{s}' is not a number", i + 1)))
        };
        rows.push((num()?, num()?));
    }
    Ok(rows)
}

/// What SLS samples every second besides the counters (`metrics/variable.*.csv`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SlsSeries {
    /// Containers running (AMs included), `(epoch s, count)`.
    pub running_containers: Vec<(f64, f64)>,
    /// Memory and vcores allocated over allocated + available, at the seconds the cluster
    /// had capacity (`t` in epoch ms; `running_jobs` from `variable.running.application.csv`).
    pub utilization: Vec<UtilSample>,
}

impl SlsSeries {
    /// The samples from `start_s` to `end_s` (epoch seconds, both included).
    pub fn window(&self, start_s: f64, end_s: f64) -> SlsSeries {
        let inside = |t: f64| t >= start_s && t <= end_s;
        SlsSeries {
            running_containers: self.running_containers.iter().copied().filter(|p| inside(p.0)).collect(),
            utilization: self.utilization.iter().filter(|u| inside(u.t.ms() as f64 / 1000.0)).cloned().collect(),
        }
    }
}

/// Reads the gauges of an SLS output directory; a missing file (metrics off) gives no samples.
pub fn read_sls_series(dir: &Path) -> Result<SlsSeries, SimError> {
    let metrics = dir.join("metrics");
    let gauge = |name: &str| -> Result<BTreeMap<i64, f64>, SimError> {
        let path = metrics.join(format!("variable.{name}.csv"));
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                let rows = parse_gauge(&path.display().to_string(), &text)?;
                Ok(rows.into_iter().map(|(t, v)| (t as i64, v)).collect())
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
            Err(e) => Err(bad(&path.display().to_string(), e)),
        }
    };
    let running = gauge("running.container")?;
    let apps = gauge("running.application")?;
    let [mem_used, mem_free, cores_used, cores_free] = [
        gauge("cluster.allocated.memory")?,
        gauge("cluster.available.memory")?,
        gauge("cluster.allocated.vcores")?,
        gauge("cluster.available.vcores")?,
    ];
    let frac = |used: f64, free: f64| (used + free > 0.0).then(|| used / (used + free));
    let utilization = mem_used
        .iter()
        .filter_map(|(&t, &mu)| {
            let memory = frac(mu, *mem_free.get(&t)?)?;
            let vcores = frac(*cores_used.get(&t)?, *cores_free.get(&t)?)?;
            let running_jobs = apps.get(&t).map_or(0, |&n| n.max(0.0) as u32);
            let t = Time(u64::try_from(t).ok()? * 1000);
            Some(UtilSample { t, memory, vcores, running_jobs, pending_containers: 0 })
        })
        .collect();
    Ok(SlsSeries { running_containers: running.into_iter().map(|(t, v)| (t as f64, v)).collect(), utilization })
}

/// Jobs and tasks of the trace the runs replayed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceCounts {
    pub jobs: usize,
    pub tasks: usize,
}

/// Counts the jobs and tasks of an SLS or Rumen trace (any spec `sojourn simulate --workload` takes).
pub fn trace_counts(spec: &str) -> Result<TraceCounts, SimError> {
    let mut c = TraceCounts { jobs: 0, tasks: 0 };
    for job in crate::workload::open(spec)? {
        c.jobs += 1;
        c.tasks += job?.task_count();
    }
    Ok(c)
}

/// How containers per second are defined, as the reports say it.
pub const CONTAINERS_NOTE: &str = "containers allocated = the trace's tasks + one AM per job, counted only when \
    every job of the trace finished (SLS runs each task in one container and writes no container count of its \
    own; the CapacityScheduler's commit counter agrees); containers/s = that over the makespan, first \
    submission to last finish. allocate calls/s counts the AMs' allocate() heartbeats, not containers.";

/// `text`'s words in lines of at most `width` characters (a longer word stands alone).
fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = 0;
    for word in text.split_whitespace() {
        let n = word.chars().count();
        if line > 0 && line + 1 + n > width {
            out.push('\n');
            line = 0;
        } else if line > 0 {
            out.push(' ');
            line += 1;
        }
        out.push_str(word);
        line += n;
    }
    out
}

/// SLS runs of one trace with their gauges, reported like `sojourn compare`.
#[derive(Clone, Debug, PartialEq)]
pub struct SlsReport {
    pub comparison: SlsComparison,
    /// One per run, in run order.
    pub series: Vec<SlsSeries>,
    /// The trace (name, counts), when given.
    pub trace: Option<(String, TraceCounts)>,
}

impl SlsReport {
    /// Reads each `(name, SLS output dir)` run, and counts `trace`'s jobs and tasks when given.
    pub fn read(dirs: &[(String, PathBuf)], trace: Option<&str>) -> Result<SlsReport, SimError> {
        let comparison = read_sls_runs(dirs)?;
        let series = dirs.iter().map(|(_, d)| read_sls_series(d)).collect::<Result<Vec<_>, _>>()?;
        let trace = trace.map(|t| Ok::<_, SimError>((t.to_string(), trace_counts(t)?))).transpose()?;
        Ok(SlsReport { comparison, series, trace })
    }

    /// Containers the scheduler allocated in run `i` ([`CONTAINERS_NOTE`]); None without the
    /// trace or when some of its jobs did not finish.
    pub fn containers(&self, i: usize) -> Option<u64> {
        let (_, t) = self.trace.as_ref()?;
        let run = self.comparison.runs.get(i)?;
        (run.jobs.len() == t.jobs).then_some((t.tasks + t.jobs) as u64)
    }

    /// Run `i`'s gauges from its first submission to its last finish.
    fn window(&self, i: usize) -> SlsSeries {
        let (Some(run), Some(series)) = (self.comparison.runs.get(i), self.series.get(i)) else {
            return SlsSeries::default();
        };
        let start = run.jobs.iter().map(|j| j.start_ms).min().unwrap_or(0);
        let end = run.jobs.iter().map(|j| j.end_ms).max().unwrap_or(0);
        series.window((start as f64 / 1000.0).floor(), (end as f64 / 1000.0).ceil())
    }

    /// The metrics SLS supports, in `sojourn compare`'s rows (no slowdown: SLS does not know
    /// a job's run time on an empty cluster).
    fn metrics(&self, i: usize) -> Metrics {
        use Better::*;
        use Unit::*;
        let mut m = Metrics::default();
        let Some(run) = self.comparison.runs.get(i) else { return m };
        let makespan = run.makespan_s();
        m.add("jobs", "finished", "finished", Count, Higher, true, Some(run.jobs.len() as f64));
        m.add("jobs", "makespan_s", "makespan (s)", Number, Lower, true, makespan);
        m.dist("all jobs", "all", "response_s", "response", " (s)", run.response().as_ref());
        let w = self.window(i);
        let util = (!w.utilization.is_empty()).then(|| Utilization::of(&w.utilization));
        m.utilization(util.as_ref());
        let running: Vec<f64> = w.running_containers.iter().map(|p| p.1).collect();
        let mean = (!running.is_empty()).then(|| running.iter().sum::<f64>() / running.len() as f64);
        let max = running.iter().copied().reduce(f64::max);
        let cl = "cluster";
        m.add(cl, "containers.running.mean", "running containers, mean", Number, Higher, true, mean);
        m.add(cl, "containers.running.max", "running containers, max", Count, Higher, false, max);
        let sc = "scheduler";
        let containers = self.containers(i).map(|c| c as f64);
        let per_s = containers.zip(makespan).and_then(|(c, s)| (s > 0.0).then(|| c / s));
        m.add(sc, "containers.allocated", "containers allocated", Count, Neither, true, containers);
        m.add(sc, "containers.per_s", "containers / s", Number, Higher, true, per_s);
        m.add(sc, "allocate_calls.per_s", "allocate calls / s", Number, Neither, true, run.allocate_calls_per_s);
        m.add(sc, "handle.p99_ms", "handle p99 (ms)", Number, Lower, true, run.handle_p99_ms);
        m
    }

    /// Every run's metrics against the run named `baseline`.
    pub fn compare(&self, baseline: &str) -> Result<Comparison, SimError> {
        let names = self.comparison.runs.iter().map(|r| r.name.clone()).collect();
        let lists = (0..self.comparison.runs.len()).map(|i| self.metrics(i)).collect();
        Comparison::of_metrics(baseline, names, lists)
    }

    /// What was compared, for the top of the text and the page.
    pub fn description(&self, baseline: &str) -> Description {
        let names: Vec<&str> = self.comparison.runs.iter().map(|r| r.name.as_str()).collect();
        let title = match &self.trace {
            Some((t, _)) => format!("SLS: {}", t.rsplit('/').next().unwrap_or(t)),
            None => format!("SLS: {}", names.join(", ")),
        };
        let mut d = Description { title, items: Vec::new() };
        if let Some((t, c)) = &self.trace {
            d.push("trace", &format!("{t} ({} jobs, {} tasks)", c.jobs, c.tasks));
        }
        d.push("schedulers", &names.join(", "));
        d.push("baseline", baseline);
        d.push("time", "wall clock (SLS runs the real ResourceManager)");
        d
    }

    /// The notes under the tables: definitions and what was dropped.
    pub fn notes(&self) -> String {
        let mut s = format!(
            "Response time is simulate_end − simulate_start of jobruntime.csv (wall clock); percentiles are \
             nearest-rank. Utilization and running containers are SLS's per-second samples from the first \
             submission to the last finish. {CONTAINERS_NOTE} handle p99 is over SLS's last window of 100 events."
        );
        if self.trace.is_none() {
            s.push_str(" No --trace given, so no container counts.");
        }
        if let Some(note) = self.comparison.duplicates_note() {
            s.push(' ');
            s.push_str(&note);
        }
        s
    }

    /// The text `sojourn sls-compare` prints: description, the comparison table, the per-job table, notes.
    pub fn text(&self, baseline: &str) -> Result<String, SimError> {
        let cmp = self.compare(baseline)?;
        Ok(format!(
            "{}\n{}\nResponse time per job (s):\n\n{}\n{}\n",
            self.description(baseline).to_text(),
            report::table(&cmp, &WriteOptions::default()),
            self.comparison.jobs_markdown(),
            wrap(&self.notes(), 100)
        ))
    }

    /// The report page: the summary table, a CDF of response time, response time per job and
    /// running containers over time.
    pub fn html(&self, baseline: &str) -> Result<String, SimError> {
        let cmp = self.compare(baseline)?;
        let runs = &self.comparison.runs;
        let mut body = String::from("<h2>Response time</h2>\n<div class=\"plots\">\n");
        let responses = runs.iter().map(|r| (r.name.clone(), r.jobs.iter().map(SlsJob::response_s).collect()));
        body.push_str(
            &cdf_plot("CDF of response time".into(), "response time (s, log scale)", responses.collect()).render(),
        );
        body.push_str(&self.per_job_plot().render());
        body.push_str("</div>\n");
        if self.series.iter().any(|s| !s.running_containers.is_empty()) {
            body.push_str("<h2>Running containers over time</h2>\n<div class=\"plots\">\n");
            body.push_str(&self.running_plot().render());
            body.push_str("</div>\n");
        }
        Ok(report::page(&self.description(baseline), &cmp, &self.notes(), &body))
    }

    /// Response time per job: job n's dots side by side around x = n, one colour per scheduler.
    fn per_job_plot(&self) -> Plot {
        let keys = self.comparison.job_keys();
        let runs = &self.comparison.runs;
        let spread = 0.5 / runs.len().max(1) as f64;
        let mut y_max: f64 = 0.0;
        let series = runs
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let dx = (i as f64 - (runs.len() as f64 - 1.0) / 2.0) * spread;
                let points = keys
                    .iter()
                    .enumerate()
                    .filter_map(|(n, (key, _))| {
                        let y = r.jobs.iter().find(|j| j.key == *key)?.response_s();
                        y_max = y_max.max(y);
                        Some(((n + 1) as f64 + dx, y))
                    })
                    .collect();
                Series { name: r.name.clone(), points }
            })
            .collect();
        Plot {
            title: "Response time per job".into(),
            class: "jobs",
            x: Axis::whole("job (application order)", 0.0, keys.len() as f64 + 1.0),
            y: Axis::linear("response time (s)", 0.0, y_max * 1.05),
            draw: Draw::Dots,
            series,
        }
    }

    /// Running containers from each run's first submission.
    fn running_plot(&self) -> Plot {
        let mut series = Vec::new();
        let (mut t_max, mut y_max): (f64, f64) = (0.0, 0.0);
        for (i, r) in self.comparison.runs.iter().enumerate() {
            let start = r.jobs.iter().map(|j| j.start_ms).min().unwrap_or(0) as f64;
            let points: Vec<(f64, f64)> =
                self.window(i).running_containers.iter().map(|&(t, v)| ((t * 1000.0 - start).max(0.0), v)).collect();
            for &(t, v) in &points {
                (t_max, y_max) = (t_max.max(t), y_max.max(v));
            }
            series.push((r.name.clone(), points));
        }
        let (unit, per) = time_unit(t_max);
        let series = series
            .into_iter()
            .map(|(name, pts)| Series { name, points: pts.into_iter().map(|(t, v)| (t / per, v)).collect() })
            .collect();
        Plot {
            title: "Running containers".into(),
            class: "running",
            x: Axis::linear(&format!("time since the first submission ({unit})"), 0.0, t_max / per),
            y: Axis::linear("running containers", 0.0, (y_max * 1.05).max(1.0)),
            draw: Draw::Line,
            series,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const JOBRUNTIME: &str = "JobID,real_start_time,real_end_time,simulate_start_time,simulate_end_time\n\
        application_1795465148441_0002,1000,6000,1795465151082,1795465158094\n\
        application_1795465148441_0002,1000,6000,1795465151082,1795465159083\n\
        application_1795465148441_0001,0,8000,1795465150082,1795465160084\n\
        application_1795465148441_0003,2000,9000,1795465152086,1795465171084\n";

    #[test]
    fn jobruntime_keeps_first_finish_and_orders_by_application() {
        let (jobs, dups) = parse_jobruntime(JOBRUNTIME).unwrap();
        assert_eq!(dups, 1);
        let keys: Vec<&str> = jobs.iter().map(|j| j.key.as_str()).collect();
        assert_eq!(keys, ["app_0001", "app_0002", "app_0003"]);
        assert_eq!(jobs[1].response_s(), 7.012);
        assert_eq!(jobs[0].trace_start_ms, 0);
        assert_eq!(jobs[2].response_s(), 18.998);
    }

    #[test]
    fn jobruntime_errors_name_the_problem() {
        let e = parse_jobruntime("JobID,foo\n").unwrap_err().to_string();
        assert!(e.contains("no column real_start_time"), "{e}");
        let e = parse_jobruntime("JobID,real_start_time,simulate_start_time,simulate_end_time\napp_1,0,x,3\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("row 2") && e.contains("'x'"), "{e}");
        assert!(parse_jobruntime("").is_err());
    }

    #[test]
    fn metrics_files() {
        let counter = "t,count\n100,0\n101,4\n102,10\n111,34\n";
        assert_eq!(allocate_rate(counter), Some(3.0));
        assert_eq!(allocate_rate("t,count\n100,0\n"), None);
        let sampler = "t,count,max,mean,min,stddev,p50,p75,p95,p98,p99,p999\n\
            1,2,0,0,0,0,0,0,0,0,0,0\n\
            2,27,65866425,13013329.5,0,14253824.6,9319907,16652831,56117945,65866425,65866425,65866425\n";
        assert_eq!(timecost_p99_ms(sampler), Some(65.866425));
        assert_eq!(timecost_p99_ms("t,count\n"), None);
    }

    fn run(name: &str, responses: &[(u32, i64)]) -> SlsRun {
        SlsRun {
            name: name.to_string(),
            jobs: responses
                .iter()
                .map(|&(seq, ms)| SlsJob {
                    key: format!("app_{seq:04}"),
                    app_id: format!("application_1_{seq:04}"),
                    trace_start_ms: seq as i64 * 1000,
                    start_ms: 10_000 + seq as i64 * 1000,
                    end_ms: 10_000 + seq as i64 * 1000 + ms,
                })
                .collect(),
            duplicate_rows: 0,
            allocate_calls_per_s: Some(2.5),
            handle_p99_ms: None,
        }
    }

    #[test]
    fn comparison_has_a_row_per_scheduler_and_per_job() {
        let c = SlsComparison {
            runs: vec![run("sojourn:fifo", &[(1, 4000), (2, 6000), (3, 8000)]), run("fair", &[(1, 5000), (3, 7000)])],
        };
        let d = c.runs[0].response().unwrap();
        assert_eq!((d.n, d.mean, d.p50, d.p90, d.max), (3, 6.0, 6.0, 8.0, 8.0));
        assert_eq!(c.runs[1].makespan_s(), Some(9.0));
        let jobs = c.jobs_csv();
        assert_eq!(jobs.lines().next(), Some("job,trace_start_s,sojourn:fifo_response_s,fair_response_s"));
        assert!(jobs.contains("app_0002,2.000,6.000,\n"), "{jobs}");
        let md = c.jobs_markdown();
        assert!(md.contains("| app_0002 | 2.000 | 6.000 | — |"), "{md}");
    }

    #[test]
    fn reads_output_directories() {
        let base = std::env::temp_dir().join(format!("sojourn-sls-results-{}", std::process::id()));
        let a = base.join("a");
        std::fs::create_dir_all(a.join("metrics")).unwrap();
        std::fs::write(a.join("jobruntime.csv"), JOBRUNTIME).unwrap();
        std::fs::write(a.join("metrics/counter.scheduler.operation.allocate.csv"), "t,count\n1,1\n3,5\n").unwrap();
        let c = read_sls_runs(&[("sojourn:fifo".to_string(), a)]).unwrap();
        assert_eq!(c.runs[0].jobs.len(), 3);
        assert_eq!(
            c.duplicates_note().as_deref(),
            Some("Repeated jobruntime.csv rows dropped (first finish kept): sojourn:fifo 1.")
        );
        assert_eq!(c.runs[0].allocate_calls_per_s, Some(2.0));
        let e = read_sls_runs(&[("y".to_string(), base.join("missing"))]).err().unwrap().to_string();
        assert!(e.contains("jobruntime.csv"), "{e}");
        assert!(read_sls_runs(&[]).is_err());
        let _ = std::fs::remove_dir_all(base);
    }
    /// A temporary SLS output directory holding `files` (path under it, contents).
    fn out_dir(tag: &str, files: &[(&str, &str)]) -> PathBuf {
        let d = std::env::temp_dir().join(format!("sojourn-sls-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        for (name, text) in files {
            let p = d.join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        d
    }

    #[test]
    fn gauges_parse_and_errors_name_file_and_line() {
        assert_eq!(parse_gauge("g.csv", "t,value\n10,0\n11,2.5\n\n").unwrap(), [(10.0, 0.0), (11.0, 2.5)]);
        assert_eq!(parse_gauge("g.csv", "t,value\n").unwrap(), []);
        let e = parse_gauge("m/g.csv", "t,value\n10,0\n11,x\n").unwrap_err().to_string();
        assert!(e.contains("m/g.csv") && e.contains("line 3") && e.contains("'x'"), "{e}");
        let e = parse_gauge("g.csv", "t,value\n10\n").unwrap_err().to_string();
        assert!(e.contains("line 2: too few fields"), "{e}");
        assert!(parse_gauge("g.csv", "t,value\n10,NaN\n").is_err());
    }

    /// Two nodes' worth of capacity (8 GB, 8 vcores) joining at t=2: the samples before have
    /// no capacity and no utilization.
    const ALLOCATED_MB: &str = "t,value\n1,0\n2,2048\n3,8192\n4,4096\n";
    const AVAILABLE_MB: &str = "t,value\n1,0\n2,6144\n3,0\n4,4096\n";
    const ALLOCATED_VC: &str = "t,value\n1,0\n2,2\n3,4\n4,4\n";
    const AVAILABLE_VC: &str = "t,value\n1,0\n2,6\n3,4\n4,4\n";

    #[test]
    fn series_join_the_gauges() {
        let d = out_dir(
            "series",
            &[
                ("metrics/variable.running.container.csv", "t,value\n1,0\n2,2\n3,8\n4,4\n"),
                ("metrics/variable.running.application.csv", "t,value\n1,0\n2,2\n3,2\n4,1\n"),
                ("metrics/variable.cluster.allocated.memory.csv", ALLOCATED_MB),
                ("metrics/variable.cluster.available.memory.csv", AVAILABLE_MB),
                ("metrics/variable.cluster.allocated.vcores.csv", ALLOCATED_VC),
                ("metrics/variable.cluster.available.vcores.csv", AVAILABLE_VC),
            ],
        );
        let s = read_sls_series(&d).unwrap();
        assert_eq!(s.running_containers, [(1.0, 0.0), (2.0, 2.0), (3.0, 8.0), (4.0, 4.0)]);
        let u: Vec<(u64, f64, f64, u32)> =
            s.utilization.iter().map(|u| (u.t.ms(), u.memory, u.vcores, u.running_jobs)).collect();
        assert_eq!(u, [(2000, 0.25, 0.25, 2), (3000, 1.0, 0.5, 2), (4000, 0.5, 0.5, 1)]);
        // Time-weighted: 0.25 for 1 s, 1.0 for 1 s (the last sample closes the span).
        assert_eq!(Utilization::of(&s.utilization).mean_memory, 0.625);
        let w = s.window(3.0, 4.0);
        assert_eq!((w.running_containers.len(), w.utilization.len()), (2, 2));
        // Metrics off: no samples, no error. A bad row: an error naming the file.
        assert_eq!(read_sls_series(&d.join("nowhere")).unwrap(), SlsSeries::default());
        std::fs::write(d.join("metrics/variable.running.container.csv"), "t,value\n1,?\n").unwrap();
        let e = read_sls_series(&d).unwrap_err().to_string();
        assert!(e.contains("variable.running.container.csv") && e.contains("line 2"), "{e}");
        let _ = std::fs::remove_dir_all(d);
    }

    /// The jobs of [`JOBRUNTIME`] (9 tasks in all, as integration/sls/tiny-trace.json) with
    /// the gauges above.
    fn report(trace: Option<TraceCounts>) -> SlsReport {
        let (jobs, duplicate_rows) = parse_jobruntime(JOBRUNTIME).unwrap();
        let base = 1795465150; // the first submission's second
        let running: Vec<(f64, f64)> =
            [0.0, 2.0, 8.0, 6.0].iter().enumerate().map(|(i, &v)| ((base + i) as f64, v)).collect();
        let run = SlsRun {
            name: "a".into(),
            jobs,
            duplicate_rows,
            allocate_calls_per_s: Some(1.5),
            handle_p99_ms: Some(2.0),
        };
        let mut b = run.clone();
        b.name = "b".into();
        b.jobs.pop();
        SlsReport {
            comparison: SlsComparison { runs: vec![run, b] },
            series: vec![SlsSeries { running_containers: running, utilization: Vec::new() }, SlsSeries::default()],
            trace: trace.map(|t| ("tiny-trace.json".to_string(), t)),
        }
    }

    #[test]
    fn containers_count_only_complete_runs() {
        let tiny = TraceCounts { jobs: 3, tasks: 9 };
        let r = report(Some(tiny));
        // 9 tasks + 3 AMs; run b lost a job, so its count is unknown.
        assert_eq!((r.containers(0), r.containers(1)), (Some(12), None));
        assert_eq!(report(None).containers(0), None);
        let c = r.compare("a").unwrap();
        let v = |key: &str| c.row(key).unwrap().values.clone();
        // Makespan of a: 1795465150082 → 1795465171084, 21.002 s.
        assert_eq!(v("makespan_s"), [Some(21.002), Some(10.002)]);
        assert_eq!(v("containers.per_s"), [Some(12.0 / 21.002), None]);
        assert_eq!(v("allocate_calls.per_s"), [Some(1.5), Some(1.5)]);
        // Responses 10.002, 7.012, 18.998 (b: the first two).
        assert_eq!(v("all.response_s.p50"), [Some(10.002), Some(7.012)]);
        assert_eq!(v("all.response_s.max"), [Some(18.998), Some(10.002)]);
        // Running containers 0, 2, 8, 6 over the run: mean 4, max 8; b has no samples.
        assert_eq!(v("containers.running.mean"), [Some(4.0), None]);
        assert_eq!(v("containers.running.max"), [Some(8.0), None]);
        assert_eq!(v("util.memory.mean"), [None, None]);
        // No slowdown: SLS does not know a job's run time on an empty cluster.
        assert!(c.rows.iter().all(|row| !row.key.contains("slowdown")));
        assert!(r.compare("zzz").unwrap_err().to_string().contains("'zzz'"));
    }

    #[test]
    fn text_and_page() {
        let r = report(Some(TraceCounts { jobs: 3, tasks: 9 }));
        let t = r.text("a").unwrap();
        assert!(t.starts_with("SLS: tiny-trace.json\n"), "{t}");
        assert!(
            t.contains("vs a") && t.contains("containers / s") && t.contains("| app_0003 | 2.000 | 18.998 | — |"),
            "{t}"
        );
        assert!(t.lines().all(|l| l.chars().count() <= 100), "{t}");
        let h = r.html("a").unwrap();
        assert_eq!(h.matches("<svg ").count(), 3);
        assert!(
            h.contains("class=\"plot cdf\"")
                && h.contains("class=\"plot jobs\"")
                && h.contains("class=\"plot running\"")
        );
        // Per job: a has three dots, b two.
        assert!(h.contains("<title>a</title>") && h.matches("h0").count() == 5, "{h}");
        // Without gauges, no running-container plot.
        let mut r = r;
        r.series = vec![SlsSeries::default(); 2];
        assert_eq!(r.html("b").unwrap().matches("<svg ").count(), 2);
    }

    #[test]
    fn trace_counts_read_sls_json() {
        let trace = concat!(env!("CARGO_MANIFEST_DIR"), "/../../integration/sls/tiny-trace.json");
        assert_eq!(trace_counts(trace).unwrap(), TraceCounts { jobs: 3, tasks: 9 });
        assert!(trace_counts("/nonexistent/trace.json").is_err());
    }

    #[test]
    fn applications_past_9999_keep_their_order() {
        let text = "JobID,real_start_time,simulate_start_time,simulate_end_time\n\
            application_1_10000,0,0,1000\napplication_1_9999,0,0,2000\napplication_1_0002,0,0,3000\n";
        let (jobs, _) = parse_jobruntime(text).unwrap();
        let keys: Vec<&str> = jobs.iter().map(|j| j.key.as_str()).collect();
        assert_eq!(keys, ["app_0002", "app_9999", "app_10000"]);
        let c = SlsComparison {
            runs: vec![SlsRun {
                name: "a".into(),
                jobs,
                duplicate_rows: 0,
                allocate_calls_per_s: None,
                handle_p99_ms: None,
            }],
        };
        let keys: Vec<String> = c.job_keys().into_iter().map(|k| k.0).collect();
        assert_eq!(keys, ["app_0002", "app_9999", "app_10000"]);
    }

    #[test]
    fn notes_wrap() {
        assert_eq!(wrap("aa bb cc", 5), "aa bb\ncc");
        assert_eq!(wrap("aaaaaaa b", 3), "aaaaaaa\nb");
    }
}
