//! Mis-estimated task runtimes (delgado.md §1 "Mis-estimation", H10, and §2
//! §3.6.5, E9): each job's estimate, the mean task duration the policies
//! see, is multiplied by a factor drawn uniformly in [lo, hi] once per job;
//! the tasks' true durations are unchanged. Hawk's runs use e.g. [0.1, 1.9],
//! Eagle's [0.3, 1] .. [0.9, 1] (under) and [1, 1.3] .. [1, 1.9] (over).

use sojourn_core::Rng;

/// Largest factor accepted: beyond it an estimate is no estimate at all.
const MAX_FACTOR: f64 = 1000.0;

/// A per-job multiplicative error on the task-runtime estimate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EstimateError {
    pub lo: f64,
    pub hi: f64,
    /// Seeds the factors; a job's factor depends only on it and the job's id,
    /// so it does not move when the policy or the event order changes.
    pub seed: u64,
}

impl EstimateError {
    /// Parses `LO:HI` (e.g. `0.1:1.9`), with 0 < LO <= HI <= 1000.
    pub fn parse(range: &str, seed: u64) -> Result<EstimateError, String> {
        let bad = |why: &str| format!("--estimate-error {range:?}: {why}");
        let (lo, hi) = range.split_once(':').ok_or_else(|| bad("expected LO:HI, e.g. 0.1:1.9"))?;
        let num = |s: &str| s.trim().parse::<f64>().map_err(|_| bad(&format!("{s:?} is not a number")));
        let (lo, hi) = (num(lo)?, num(hi)?);
        if !(lo > 0.0 && lo <= hi && hi <= MAX_FACTOR) {
            return Err(bad(&format!("expected 0 < LO <= HI <= {MAX_FACTOR}")));
        }
        Ok(EstimateError { lo, hi, seed })
    }

    /// The factor of job `job_id`, uniform in [lo, hi].
    pub fn factor(&self, job_id: u64) -> f64 {
        // One fresh stream per job: the golden-ratio multiply spreads
        // consecutive ids before SplitMix seeding.
        let mut rng = Rng::seeded(self.seed ^ job_id.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        self.lo + (self.hi - self.lo) * rng.next_f64()
    }

    /// Job `job_id`'s estimate for a true mean of `exact_ms` (at least 1 ms,
    /// as every task lasts at least 1 ms).
    pub fn apply(&self, exact_ms: u64, job_id: u64) -> u64 {
        ((exact_ms as f64 * self.factor(job_id)).round() as u64).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factors_are_per_job_within_the_range_and_seeded() {
        let e = EstimateError::parse("0.1:1.9", 7).unwrap();
        let f: Vec<f64> = (0..1000).map(|j| e.factor(j)).collect();
        assert!(f.iter().all(|x| (0.1..=1.9).contains(x)), "{f:?}");
        // spread over the range, not a constant
        assert!(f.iter().any(|x| *x < 0.3) && f.iter().any(|x| *x > 1.7));
        let mean = f.iter().sum::<f64>() / f.len() as f64;
        assert!((mean - 1.0).abs() < 0.05, "mean factor {mean}");
        assert_eq!(e.factor(42), e.factor(42));
        assert_ne!(e.factor(42), EstimateError { seed: 8, ..e }.factor(42));
    }

    /// The policy sees the mis-estimate: hawk with a 150 s cutoff, jobs of
    /// four 100 s tasks. Exact estimates make every job short (probed);
    /// with [1, 1.9] exactly the jobs whose factor is above 1.5 are long and
    /// their tasks are placed by the central scheduler; true durations, and
    /// so the jobs' work, are unchanged.
    #[test]
    fn the_policy_classifies_by_the_mis_estimate() {
        use crate::engine::{simulate, SimConfig};
        use crate::workload::{ClusterSpec, JobSpec, TaskGroup};
        use sojourn_core::{Resources, Time};
        let one = Resources::new(1024, 1);
        let jobs: Vec<JobSpec> = (0..40)
            .map(|id| JobSpec {
                id,
                name: format!("j{id}"),
                submit: Time(id * 1000),
                queue: "default".into(),
                user: "u".into(),
                priority: 0,
                groups: vec![TaskGroup::maps(one, vec![100_000; 4])],
                deadline: None,
                value: None,
                dag: None,
            })
            .collect();
        let cluster = ClusterSpec::uniform(8, one, 8);
        let run = |error: Option<EstimateError>| {
            let mut cfg =
                SimConfig { policy: "hawk".into(), heartbeat_ms: 0, estimate_error: error, ..SimConfig::default() };
            cfg.params.insert("cutoff_s".into(), "150".into());
            let r = simulate(&cluster, Box::new(jobs.clone().into_iter().map(Ok)), "t", &cfg, None).unwrap();
            assert_eq!(r.unfinished, 0);
            assert_eq!(r.jobs.iter().map(|j| j.work_ms).sum::<u64>(), 40 * 4 * 100_000);
            r.policy_metrics.counters.get("central_placed").copied().unwrap_or(0)
        };
        assert_eq!(run(None), 0, "exact: every job short");
        let e = EstimateError::parse("1:1.9", 5).unwrap();
        let long = (0..40).filter(|id| e.factor(*id) * 100.0 > 150.0).count() as u64;
        assert!(long > 0 && long < 40, "{long} of 40 jobs over-estimated past the cutoff");
        assert_eq!(run(Some(e)), 4 * long, "the central scheduler places the tasks of the jobs estimated long");
        assert_eq!(run(Some(EstimateError::parse("0.1:1", 5).unwrap())), 0, "under-estimates stay short");
    }

    #[test]
    fn a_degenerate_range_is_exact() {
        let e = EstimateError::parse("1:1", 3).unwrap();
        assert!((0..100).all(|j| e.apply(12_345, j) == 12_345));
    }

    #[test]
    fn bad_ranges_are_refused_naming_the_input() {
        for bad in ["1.9", "0:1", "2:1", "x:1", "1:1e9", "-1:1"] {
            let err = EstimateError::parse(bad, 1).unwrap_err();
            assert!(err.contains(bad), "{err}");
        }
    }
}
