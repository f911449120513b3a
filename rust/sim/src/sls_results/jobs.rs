//! Several SLS runs of one trace, job by job: a job is the same trace job in
//! every run when its application has the same sequence number (SLS submits
//! the trace in order), so the runs line up on [`SlsComparison::job_keys`].

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use super::runs::{app_order, read_sls_run, SlsJob, SlsRun};
use crate::engine::SimError;

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

#[cfg(test)]
mod tests {
    use super::super::JOBRUNTIME;
    use super::*;

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
}
