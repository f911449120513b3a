//! The size caps every reader, generator and the command line enforce, in
//! one place. A trace is outside input: a corrupt or hostile field (an
//! arrival in the year 2300, a task count of 10^13) must be an error naming
//! the file, the line and the cap, not a run that allocates until the
//! machine gives up. Each cap is far above what any shipped or published
//! trace needs (the largest, SWIM FB-2010, is one day, 24,442 jobs, 8.6M
//! tasks, jobs of at most about 650,000 tasks).
//!
//! - Times: every submit time (after a reader's rebasing) and every task
//!   duration is at most [`MAX_TIME_MS`], one year.
//! - Tasks: at most [`MAX_TASKS_PER_JOB`] in one job and
//!   [`MAX_TASKS_PER_RUN`] in a whole workload (counting SLS `job.count`
//!   copies); at most [`MAX_JOBS_PER_RUN`] jobs.
//! - Text: a line of a SWIM, Hawk/Eagle or Kairos file is at most
//!   [`MAX_LINE_BYTES`]; one top-level object of a JSON file (SLS jobs,
//!   Rumen, SLS nodes) at most [`MAX_JSON_OBJECT_BYTES`]; a line of a flight
//!   recording (one step) at most [`MAX_RECORD_LINE_BYTES`].
//! - Cluster: at most [`MAX_NODES`] nodes of at most [`MAX_NODE_MEMORY_MB`]
//!   and [`MAX_NODE_VCORES`] each (so cluster totals fit their integers);
//!   a container is no larger than the largest node.
//! - Command line: periods (heartbeats, sampling, progress, network delay)
//!   at most [`MAX_PERIOD_MS`]; `--load` in (0, [`MAX_LOAD`]] and the node
//!   count it gives at most [`MAX_NODES`]; `--am-response-lag` at most
//!   [`MAX_AM_RESPONSE_LAG`]; node failures within the horizon.
//! - A run of the `sojourn` CLI stops at [`run_horizon_ms`] of simulated
//!   time (two years at the default 60 s sampling; shorter for a shorter
//!   sampling period), so it keeps at most [`MAX_SAMPLES`] + 1 utilization
//!   samples (about 100 MB); jobs not done by then are counted unfinished.

use super::{JobSpec, WorkloadError};

/// The horizon of every time a workload holds: one year (365 days), in ms.
pub const MAX_TIME_MS: u64 = 365 * 24 * 3600 * 1000;

/// [`MAX_TIME_MS`] in seconds, for readers of seconds.
pub const MAX_TIME_S: f64 = MAX_TIME_MS as f64 / 1000.0;

/// The most tasks in one job.
pub const MAX_TASKS_PER_JOB: u64 = 1_000_000;

/// The most tasks in one workload: 400 MB of task durations.
pub const MAX_TASKS_PER_RUN: u64 = 50_000_000;

/// The most jobs in one workload.
pub const MAX_JOBS_PER_RUN: u64 = 10_000_000;

/// The longest line of a line-oriented trace, bytes (1 MiB).
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// The largest top-level JSON object, bytes (64 MiB; Rumen jobs run to a
/// few MB).
pub const MAX_JSON_OBJECT_BYTES: u64 = 64 << 20;

/// The longest line of a flight recording, bytes (1 GiB). A line is one
/// step, and the shim sends its whole cluster as one step when it rebuilds
/// the core: 10,000 nodes and a million containers come to a few hundred MB.
/// The cap only keeps a line without an end from taking all memory.
pub const MAX_RECORD_LINE_BYTES: usize = 1 << 30;

/// The most nodes in a cluster.
pub const MAX_NODES: usize = 100_000;

/// The most memory of one node (and one container): 16 TiB, in MB.
pub const MAX_NODE_MEMORY_MB: u64 = 16 << 20;

/// The most vcores of one node (and one container).
pub const MAX_NODE_VCORES: u32 = 4096;

/// The longest period of a timer the command line sets: one day, in ms.
pub const MAX_PERIOD_MS: u64 = 24 * 3600 * 1000;

/// The most AM heartbeats an AM may lag behind a response
/// (`--am-response-lag`).
pub const MAX_AM_RESPONSE_LAG: u32 = 100;

/// The highest `--load`.
pub const MAX_LOAD: f64 = 100.0;

/// The most utilization samples a CLI run keeps (2^21, about 100 MB with
/// the fairness series).
pub const MAX_SAMPLES: u64 = 1 << 21;

/// Where a CLI run stops (simulated ms) when it samples every `sample_ms`:
/// two horizons (a year of arrivals, a year to finish them) or
/// [`MAX_SAMPLES`] sampling periods, whichever is shorter.
pub fn run_horizon_ms(sample_ms: u64) -> u64 {
    (2 * MAX_TIME_MS).min(MAX_SAMPLES.saturating_mul(sample_ms.max(1)))
}

/// `ms` as days, for messages.
pub(crate) fn days(ms: u64) -> String {
    let d = ms as f64 / 86_400_000.0;
    if d >= 10.0 {
        format!("{d:.0} days")
    } else {
        format!("{d:.2} days")
    }
}

/// Seconds checked against the horizon: `what` names the field.
pub(crate) fn check_secs(s: f64, what: &str, file: &str, line: usize) -> Result<f64, WorkloadError> {
    if s > MAX_TIME_S {
        return Err(WorkloadError::new(
            file,
            line,
            format!("{what}: {s} s is past the limit on times, {MAX_TIME_S} s (365 days)"),
        ));
    }
    Ok(s)
}

/// Milliseconds checked against the horizon.
pub(crate) fn check_ms(ms: u64, what: &str, file: &str, line: usize) -> Result<u64, WorkloadError> {
    if ms > MAX_TIME_MS {
        return Err(WorkloadError::new(
            file,
            line,
            format!("{what}: {ms} ms is past the limit on times, {MAX_TIME_MS} ms (365 days)"),
        ));
    }
    Ok(ms)
}

/// What a workload has handed out so far, checked against the caps job by
/// job. Every reader keeps one and admits each job before yielding it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Budget {
    jobs: u64,
    tasks: u64,
}

impl Budget {
    /// Checks that `copies` more jobs like `job` fit: times, task counts,
    /// container sizes and the workload's totals. The error names `file`
    /// and `line` (the job's line, 0 for a generator).
    pub(crate) fn admit(&mut self, job: &JobSpec, copies: u64, file: &str, line: usize) -> Result<(), WorkloadError> {
        let err = |msg: String| WorkloadError::new(file, line, msg);
        check_ms(job.submit.ms(), &format!("job {} submit time", job.name), file, line)?;
        let n = job.task_count() as u64;
        if n > MAX_TASKS_PER_JOB {
            return Err(err(format!("job {} has {n} tasks, more than the limit of {MAX_TASKS_PER_JOB}", job.name)));
        }
        for g in &job.groups {
            if let Some(d) = g.durations_ms.iter().copied().find(|d| *d > MAX_TIME_MS) {
                check_ms(d, &format!("job {} task duration", job.name), file, line)?;
            }
            let r = g.resources;
            if r.memory_mb > MAX_NODE_MEMORY_MB || r.vcores > MAX_NODE_VCORES {
                return Err(err(format!(
                    "job {}: container {} MB / {} vcores is larger than the largest node allowed \
                     ({MAX_NODE_MEMORY_MB} MB / {MAX_NODE_VCORES} vcores)",
                    job.name, r.memory_mb, r.vcores
                )));
            }
        }
        let jobs = self.jobs.saturating_add(copies);
        if jobs > MAX_JOBS_PER_RUN {
            return Err(err(format!("more than {MAX_JOBS_PER_RUN} jobs in one workload (the limit)")));
        }
        let tasks = self.tasks.saturating_add(n.saturating_mul(copies));
        if tasks > MAX_TASKS_PER_RUN {
            let what = if copies > 1 { format!("{copies} copies of {n} tasks") } else { format!("{n} tasks") };
            return Err(err(format!(
                "{what} bring the workload to {tasks} tasks, more than the limit of {MAX_TASKS_PER_RUN}"
            )));
        }
        self.jobs = jobs;
        self.tasks = tasks;
        Ok(())
    }
}

/// A generator's stream with every job admitted by a [`Budget`] (errors
/// name the generator, line 0).
pub(crate) struct Guarded<I> {
    inner: I,
    name: String,
    budget: Budget,
    done: bool,
}

impl<I> Guarded<I> {
    pub(crate) fn new(inner: I, name: impl Into<String>) -> Guarded<I> {
        Guarded { inner, name: name.into(), budget: Budget::default(), done: false }
    }
}

impl<I: Iterator<Item = JobSpec>> Iterator for Guarded<I> {
    type Item = Result<JobSpec, WorkloadError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let j = self.inner.next()?;
        let r = self.budget.admit(&j, 1, &self.name, 0).map(|_| j);
        self.done = r.is_err();
        Some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::TaskGroup;
    use sojourn_core::{Resources, Time};

    fn job(submit_ms: u64, durations_ms: Vec<u64>) -> JobSpec {
        JobSpec {
            id: 0,
            name: "j".into(),
            submit: Time(submit_ms),
            queue: "q".into(),
            user: "u".into(),
            priority: 0,
            groups: vec![TaskGroup::maps(Resources::new(1024, 1), durations_ms)],
            deadline: None,
            value: None,
            dag: None,
        }
    }

    #[test]
    fn the_budget_admits_up_to_each_cap_and_names_the_line() {
        let mut b = Budget::default();
        b.admit(&job(MAX_TIME_MS, vec![MAX_TIME_MS]), 1, "f", 3).unwrap();
        let e = b.admit(&job(MAX_TIME_MS + 1, vec![1]), 1, "f", 4).unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("f", 4));
        assert!(e.message.contains("submit time") && e.message.contains("365 days"), "{e}");
        let e = b.admit(&job(0, vec![MAX_TIME_MS + 1]), 1, "f", 5).unwrap_err();
        assert!(e.message.contains("task duration"), "{e}");
        let e = b.admit(&job(0, vec![1; 1000]), MAX_TASKS_PER_RUN / 1000 + 1, "f", 6).unwrap_err();
        assert!(e.message.contains(&format!("limit of {MAX_TASKS_PER_RUN}")), "{e}");
        let mut big = job(0, vec![1]);
        big.groups[0].resources = Resources::new(MAX_NODE_MEMORY_MB + 1, 1);
        assert!(b.admit(&big, 1, "f", 7).unwrap_err().message.contains("larger than the largest node"));
    }

    #[test]
    fn the_run_horizon_bounds_the_samples() {
        assert_eq!(run_horizon_ms(60_000), 2 * MAX_TIME_MS);
        assert_eq!(run_horizon_ms(1_000), MAX_SAMPLES * 1_000);
        for s in [1, 7, 60, 3_600, 86_400] {
            assert!(run_horizon_ms(s * 1000) / (s * 1000) <= MAX_SAMPLES);
        }
    }
}
