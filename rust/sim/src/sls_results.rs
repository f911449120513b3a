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
//!
//! Jobs are matched across runs by their application sequence number (`…_0003` → `app_0003`):
//! SLS submits the trace's jobs in trace order, so the n-th application is the same trace
//! job under every scheduler. Percentiles are nearest-rank ([`crate::metrics::percentile`]).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::engine::SimError;
use crate::metrics::Dist;

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

/// Parses SLS's `jobruntime.csv`: jobs in application order, and how many rows repeated a job
/// (the first finish of a job is kept).
pub fn parse_jobruntime(text: &str) -> Result<(Vec<SlsJob>, usize), SimError> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header = lines.next().ok_or_else(|| bad("jobruntime.csv", "empty"))?;
    let cols: Vec<&str> = header.split(',').map(str::trim).collect();
    let col = |name: &str| {
        cols.iter()
            .position(|c| *c == name)
            .ok_or_else(|| bad("jobruntime.csv", format!("no column {name} in header '{header}'")))
    };
    let (c_id, c_trace, c_start, c_end) =
        (col("JobID")?, col("real_start_time")?, col("simulate_start_time")?, col("simulate_end_time")?);
    let mut by_key: BTreeMap<String, SlsJob> = BTreeMap::new();
    let mut duplicates = 0;
    for (i, line) in lines.enumerate() {
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        let num = |c: usize| -> Result<i64, SimError> {
            let s = f.get(c).ok_or_else(|| bad("jobruntime.csv", format!("row {}: too few fields", i + 2)))?;
            s.parse::<i64>().map_err(|e| bad("jobruntime.csv", format!("row {}: '{s}': {e}", i + 2)))
        };
        let app_id = f.get(c_id).copied().unwrap_or_default().to_string();
        let job = SlsJob {
            key: app_key(&app_id),
            app_id,
            trace_start_ms: num(c_trace)?,
            start_ms: num(c_start)?,
            end_ms: num(c_end)?,
        };
        match by_key.get_mut(&job.key) {
            Some(old) => {
                duplicates += 1;
                if job.end_ms < old.end_ms {
                    *old = job;
                }
            }
            None => {
                by_key.insert(job.key.clone(), job);
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
    let (jobs, duplicate_rows) = parse_jobruntime(&text)?;
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
    fn job_keys(&self) -> Vec<(String, i64)> {
        let mut keys: BTreeMap<String, i64> = BTreeMap::new();
        for r in &self.runs {
            for j in &r.jobs {
                keys.entry(j.key.clone()).or_insert(j.trace_start_ms);
            }
        }
        keys.into_iter().collect()
    }

    /// One row per scheduler: `scheduler,jobs,mean_s,p50_s,p90_s,p99_s,max_s,makespan_s,allocate_calls_per_s,handle_p99_ms`.
    pub fn summary_csv(&self) -> String {
        let mut s = String::from(
            "scheduler,jobs,mean_s,p50_s,p90_s,p99_s,max_s,makespan_s,allocate_calls_per_s,handle_p99_ms\n",
        );
        for r in &self.runs {
            let d = r.response();
            let _ = writeln!(
                s,
                "{},{},{},{},{},{},{},{},{},{}",
                r.name,
                r.jobs.len(),
                opt(d.map(|d| d.mean), 3),
                opt(d.map(|d| d.p50), 3),
                opt(d.map(|d| d.p90), 3),
                opt(d.map(|d| d.p99), 3),
                opt(d.map(|d| d.max), 3),
                opt(r.makespan_s(), 3),
                opt(r.allocate_calls_per_s, 2),
                opt(r.handle_p99_ms, 3),
            );
        }
        s
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

    /// The summary and per-job tables, in markdown.
    pub fn markdown(&self) -> String {
        let mut s = String::from(
            "| scheduler | jobs | mean (s) | p50 (s) | p90 (s) | p99 (s) | max (s) | makespan (s) | allocate calls/s | handle p99 (ms) |\n\
             |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
        );
        for line in self.summary_csv().lines().skip(1) {
            let _ = writeln!(s, "| {} |", line.split(',').collect::<Vec<_>>().join(" | "));
        }
        s.push_str("\nResponse time per job (s):\n\n| job | trace start (s) |");
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
        let dups: Vec<String> = self
            .runs
            .iter()
            .filter(|r| r.duplicate_rows > 0)
            .map(|r| format!("{} {}", r.name, r.duplicate_rows))
            .collect();
        if !dups.is_empty() {
            let _ = writeln!(s, "\nRepeated jobruntime.csv rows dropped (first finish kept): {}.", dups.join(", "));
        }
        s
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

/// The comparison of SLS runs of one trace, as markdown (summary table, then per-job table).
pub fn compare_sls_runs(dirs: &[(String, PathBuf)]) -> Result<String, SimError> {
    Ok(read_sls_runs(dirs)?.markdown())
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
        let summary = c.summary_csv();
        let rows: Vec<&str> = summary.lines().collect();
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[1], "sojourn:fifo,3,6.000,6.000,8.000,8.000,8.000,10.000,2.50,");
        assert_eq!(rows[2], "fair,2,6.000,5.000,7.000,7.000,7.000,9.000,2.50,");
        let jobs = c.jobs_csv();
        assert_eq!(jobs.lines().next(), Some("job,trace_start_s,sojourn:fifo_response_s,fair_response_s"));
        assert!(jobs.contains("app_0002,2.000,6.000,\n"), "{jobs}");
        let md = c.markdown();
        assert!(md.contains("| sojourn:fifo | 3 | 6.000 |"), "{md}");
        assert!(md.contains("| app_0002 | 2.000 | 6.000 | — |"), "{md}");
    }

    #[test]
    fn reads_output_directories() {
        let base = std::env::temp_dir().join(format!("sojourn-sls-results-{}", std::process::id()));
        let a = base.join("a");
        std::fs::create_dir_all(a.join("metrics")).unwrap();
        std::fs::write(a.join("jobruntime.csv"), JOBRUNTIME).unwrap();
        std::fs::write(a.join("metrics/counter.scheduler.operation.allocate.csv"), "t,count\n1,1\n3,5\n").unwrap();
        let md = compare_sls_runs(&[("sojourn:fifo".to_string(), a.clone())]).unwrap();
        assert!(md.contains("| sojourn:fifo | 3 |"), "{md}");
        assert!(md.contains("sojourn:fifo 1"), "{md}");
        let c = read_sls_runs(&[("x".to_string(), a)]).unwrap();
        assert_eq!(c.runs[0].allocate_calls_per_s, Some(2.0));
        let e = compare_sls_runs(&[("y".to_string(), base.join("missing"))]).unwrap_err().to_string();
        assert!(e.contains("jobruntime.csv"), "{e}");
        assert!(compare_sls_runs(&[]).is_err());
        let _ = std::fs::remove_dir_all(base);
    }
}
