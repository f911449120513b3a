//! The Pigeon paper's slowdown (pigeon.md §3.4, L245; §6.1 A8): the x-th
//! percentile of job completion (response) times divided by the x-th
//! percentile of job execution times, where execution time is the job's
//! run time on an empty cluster (the longest task, for one-phase trace
//! jobs). A ratio of percentiles, not a percentile of per-job ratios (the
//! `slowdown` figures): both are reported. Percentiles are nearest-rank
//! ([`super::percentile`]).

use super::percentile;
use crate::run::JobRecord;
use serde::{Deserialize, Serialize};

/// p50, p90 and p99 of response over the same percentiles of ideal time.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PctSlowdown {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
}

impl PctSlowdown {
    /// `None` without jobs or when an ideal-time percentile is 0.
    pub fn of<'a>(jobs: impl IntoIterator<Item = &'a JobRecord>) -> Option<PctSlowdown> {
        let (mut resp, mut ideal): (Vec<f64>, Vec<f64>) =
            jobs.into_iter().map(|j| (j.response_ms() as f64, j.ideal_ms as f64)).unzip();
        if resp.is_empty() {
            return None;
        }
        resp.sort_by(f64::total_cmp);
        ideal.sort_by(f64::total_cmp);
        let at = |p: f64| {
            let i = percentile(&ideal, p);
            (i > 0.0).then(|| percentile(&resp, p) / i)
        };
        Some(PctSlowdown { p50: at(50.0)?, p90: at(90.0)?, p99: at(99.0)? })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::tests::job;

    /// Two jobs: a 1 s job that took 10 s (slowdown 10) and a 100 s job
    /// that took 100 s (slowdown 1). Per-job p50 slowdown is 1 (rank 1 of
    /// [1, 10]); the paper's p50 is p50(response) / p50(ideal) = 10/1 = 10;
    /// p90 = 100/100 = 1.
    #[test]
    fn a_ratio_of_percentiles_not_a_percentile_of_ratios() {
        let jobs = [job(1, 0, 10_000, 1, 1_000), job(2, 0, 100_000, 1, 100_000)];
        let p = PctSlowdown::of(&jobs).expect("jobs");
        assert_eq!((p.p50, p.p90, p.p99), (10.0, 1.0, 1.0));
        let per_job = crate::metrics::Dist::of(jobs.iter().map(|j| j.slowdown()).collect()).expect("jobs");
        assert_eq!(per_job.p50, 1.0);
        assert_eq!(PctSlowdown::of(&Vec::<JobRecord>::new()), None);
        assert_eq!(PctSlowdown::of(&[job(3, 0, 5, 1, 0)]), None, "zero ideal time");
    }
}
