//! One SLS run's own files: `jobruntime.csv` (each job's submission and
//! finish) and the counters under `metrics/` (allocate calls, the
//! scheduler's handle time), read into an [`SlsRun`]. Jobs are keyed by
//! their application's sequence number, the same trace job in every run.

use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::Path;

use crate::engine::SimError;
use crate::metrics::Dist;
use crate::workload::text::Lines;

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

/// The key of an application ID: `application_…_0003` → `app_0003`.
pub(super) fn app_key(app_id: &str) -> String {
    let seq = app_id.rsplit('_').next().unwrap_or(app_id);
    format!("app_{seq}")
}

/// Application order of [`app_key`]s: YARN pads sequence numbers to four digits and no
/// further, so a longer key comes later (`app_9999` < `app_10000`).
pub(super) fn app_order(key: &str) -> (usize, String) {
    (key.len(), key.to_string())
}

/// Parses SLS's `jobruntime.csv`: jobs in application order, and how many rows repeated a job
/// (the first finish of a job is kept).
pub fn parse_jobruntime(text: &str) -> Result<(Vec<SlsJob>, usize), SimError> {
    jobruntime(Lines::of_str(text, "jobruntime.csv"))
}

/// [`parse_jobruntime`] over any lines; errors name the file and the line.
fn jobruntime<R: BufRead>(mut lines: Lines<R>) -> Result<(Vec<SlsJob>, usize), SimError> {
    let ([c_id, c_trace, c_start, c_end], _) =
        lines.columns(["JobID", "real_start_time", "simulate_start_time", "simulate_end_time"])?;
    let mut by_key: BTreeMap<(usize, String), SlsJob> = BTreeMap::new();
    let mut duplicates = 0;
    while let Some(row) = lines.next() {
        let (n, line) = row?;
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        let num = |c: usize| {
            let s = f.get(c).ok_or_else(|| lines.error(n, "too few fields"))?;
            s.parse::<i64>().map_err(|e| lines.error(n, format!("'{s}': {e}")))
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

/// Rows of a Codahale CsvReporter file (header skipped), split on commas; a row that is not all
/// numbers is passed over. Callers stop at a line that cannot be read: these files are optional
/// figures, never a reason to fail.
fn csv_rows(lines: impl Iterator<Item = (usize, String)>) -> Vec<Vec<f64>> {
    lines
        .skip(1)
        .filter_map(|(_, l)| l.split(',').map(|x| x.trim().parse::<f64>().ok()).collect::<Option<Vec<f64>>>())
        .collect()
}

/// `allocate()` calls per second from `counter.scheduler.operation.allocate.csv` (`t,count`).
pub fn allocate_rate(text: &str) -> Option<f64> {
    allocate_rate_of(Lines::of_str(text, "counter.scheduler.operation.allocate.csv"))
}

fn allocate_rate_of<R: BufRead>(lines: Lines<R>) -> Option<f64> {
    let rows = csv_rows(lines.map_while(Result::ok));
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
    timecost_p99_ms_of(Lines::of_str(text, "sampler.scheduler.operation.handle.timecost.csv"))
}

fn timecost_p99_ms_of<R: BufRead>(lines: Lines<R>) -> Option<f64> {
    let mut lines = lines.map_while(Result::ok).peekable();
    let c = lines.peek()?.1.split(',').map(str::trim).position(|h| h == "p99")?;
    let last = csv_rows(lines).pop()?;
    Some(last.get(c)? / 1.0e6)
}

/// Reads one SLS output directory (the `-output` of `SLSRunner`).
pub fn read_sls_run(name: &str, dir: &Path) -> Result<SlsRun, SimError> {
    let (jobs, duplicate_rows) = jobruntime(Lines::open(&dir.join("jobruntime.csv"))?)?;
    let metrics = dir.join("metrics");
    // Optional: without the file (metrics off) or unreadable, the figure is left out.
    let lines = |f: &str| Lines::open_if_exists(&metrics.join(f)).ok().flatten();
    Ok(SlsRun {
        name: name.to_string(),
        jobs,
        duplicate_rows,
        allocate_calls_per_s: lines("counter.scheduler.operation.allocate.csv").and_then(allocate_rate_of),
        handle_p99_ms: lines("sampler.scheduler.operation.handle.timecost.csv").and_then(timecost_p99_ms_of),
    })
}

#[cfg(test)]
mod tests {
    use super::super::{SlsComparison, JOBRUNTIME};
    use super::*;

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
        assert!(e.contains("jobruntime.csv:2: 'x'"), "{e}");
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
}
