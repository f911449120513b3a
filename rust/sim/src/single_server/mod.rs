//! Single-server mode: the abstraction of the HFSP thesis's chapter-3
//! simulator (hfsp.md §4.2, schedsim). One server of speed 1; a job is an
//! amount of work; processor sharing is exact. The disciplines are those of
//! hfsp.md §4.1: FIFO, PS, LAS, SRPT, FSP, and with estimated sizes SRPTE,
//! FSPE, FSPE+PS and PSBS.
//!
//! The loop is event-driven (hfsp.md §6 A11): at every event the next one is
//! the earliest of the next arrival, the next real completion of a served job
//! (`remaining / share`) and the scheduler's next internal event (a virtual
//! completion, an LAS level merge), all in closed form; service is applied
//! for the elapsed interval and the scheduler re-plans. Times and sizes are
//! IEEE doubles, as in schedsim.
//!
//! Ambiguities resolved (see also [`schedulers`]):
//! - PSBS is not in the thesis (hfsp.md §4.1, "Read this first" 1); it is
//!   schedsim's weighted FSPE+PS. Jobs carry a weight (1 unless a workload
//!   sets one), so on the thesis's workloads PSBS equals FSPE+PS, which a
//!   test checks.
//! - FSP is FSPE fed exact sizes; SRPT is SRPTE fed exact sizes.
//! - Ties (equal keys) go to the earlier arrival; an arrival never preempts a
//!   job with an equal key.
//! - FSPE serves late jobs one at a time in the order they became late
//!   (schedsim `FSP`, hfsp.md §4.1); jobs becoming late together are ordered
//!   by tag, then arrival.
//! - Jobs of size 0 (some SWIM rows) have no slowdown; they are left out of
//!   the workload and counted in the report.

pub mod cli;
pub mod schedulers;
pub mod workload;

#[cfg(test)]
mod tests;

pub use cli::{cli_main, SingleServerArgs};
use schedulers::{Fifo, Fsp, Las, LatePolicy, Ps, Scheduler, Srpt};
use std::fmt;
use std::str::FromStr;
pub use workload::{swim_workload, weibull_workload, WeibullSpec};

/// One job of a single-server workload.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Job {
    /// Arrival time (s).
    pub arrival: f64,
    /// Real size (work units; the server does 1 per second).
    pub size: f64,
    /// Estimated size, as the `E` disciplines see it.
    pub estimate: f64,
    /// PSBS weight (1 on the thesis's workloads).
    pub weight: f64,
}

impl Job {
    pub fn new(arrival: f64, size: f64, estimate: f64) -> Job {
        Job { arrival, size, estimate, weight: 1.0 }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Discipline {
    Fifo,
    Ps,
    Las,
    Srpt,
    Fsp,
    Srpte,
    Fspe,
    FspePs,
    Psbs,
}

impl Discipline {
    pub const ALL: [Discipline; 9] = [
        Discipline::Fifo,
        Discipline::Ps,
        Discipline::Las,
        Discipline::Srpt,
        Discipline::Fsp,
        Discipline::Srpte,
        Discipline::Fspe,
        Discipline::FspePs,
        Discipline::Psbs,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Discipline::Fifo => "FIFO",
            Discipline::Ps => "PS",
            Discipline::Las => "LAS",
            Discipline::Srpt => "SRPT",
            Discipline::Fsp => "FSP",
            Discipline::Srpte => "SRPTE",
            Discipline::Fspe => "FSPE",
            Discipline::FspePs => "FSPE+PS",
            Discipline::Psbs => "PSBS",
        }
    }

    /// Whether the discipline sees the estimate (else the exact size, or
    /// nothing for the blind ones).
    pub fn uses_estimates(self) -> bool {
        matches!(self, Discipline::Srpte | Discipline::Fspe | Discipline::FspePs | Discipline::Psbs)
    }

    fn scheduler(self) -> Box<dyn Scheduler> {
        match self {
            Discipline::Fifo => Box::<Fifo>::default(),
            Discipline::Ps => Box::<Ps>::default(),
            Discipline::Las => Box::<Las>::default(),
            Discipline::Srpt | Discipline::Srpte => Box::<Srpt>::default(),
            Discipline::Fsp | Discipline::Fspe => Box::new(Fsp::new(LatePolicy::Serial)),
            Discipline::FspePs => Box::new(Fsp::new(LatePolicy::Ps)),
            Discipline::Psbs => Box::new(Fsp::new(LatePolicy::Weighted)),
        }
    }
}

impl fmt::Display for Discipline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Discipline {
    type Err = String;
    fn from_str(s: &str) -> Result<Discipline, String> {
        let norm: String = s.trim().to_ascii_uppercase().replace(['_', '-'], "+");
        Discipline::ALL.into_iter().find(|d| d.name() == norm || d.name().replace('+', "") == norm).ok_or_else(|| {
            let known: Vec<&str> = Discipline::ALL.iter().map(|d| d.name()).collect();
            format!("unknown discipline '{s}' (known: {})", known.join(", "))
        })
    }
}

/// Runs `jobs` (sorted by arrival) under `discipline`; returns each job's
/// completion time, indexed as `jobs`.
pub fn run(jobs: &[Job], discipline: Discipline) -> Vec<f64> {
    let mut sched = discipline.scheduler();
    let n = jobs.len();
    let mut remaining: Vec<f64> = jobs.iter().map(|j| j.size).collect();
    let mut completion = vec![f64::NAN; n];
    let mut shares: Vec<(usize, f64)> = Vec::new();
    let mut next = 0usize;
    let mut now = jobs.first().map(|j| j.arrival).unwrap_or(0.0);
    let mut left = n;
    while left > 0 {
        // The earliest real completion among the served jobs.
        let mut finish: Option<(f64, usize)> = None;
        for &(j, s) in &shares {
            if s > 0.0 {
                let t = now + remaining[j] / s;
                if finish.is_none_or(|(ft, fj)| (t, j) < (ft, fj)) {
                    finish = Some((t, j));
                }
            }
        }
        let arrival = jobs.get(next).map(|j| j.arrival);
        let internal = sched.next_internal();
        let mut t = f64::INFINITY;
        for c in [finish.map(|f| f.0), arrival, internal].into_iter().flatten() {
            t = t.min(c);
        }
        assert!(t.is_finite(), "single-server loop stalled with {left} jobs left");
        let t = t.max(now);
        let dt = t - now;
        for &(j, s) in &shares {
            remaining[j] -= dt * s;
        }
        now = t;
        sched.advance(now);
        // Real completions: the job that set the event exactly, and any
        // other served job whose remainder is below rounding.
        let mut done: Vec<usize> = Vec::new();
        for &(j, s) in &shares {
            let hit = finish.is_some_and(|(ft, fj)| fj == j && ft <= now);
            if hit || (s > 0.0 && remaining[j] <= 1e-12 * jobs[j].size) {
                remaining[j] = 0.0;
                done.push(j);
            }
        }
        for j in done {
            completion[j] = now;
            left -= 1;
            sched.dequeue(now, j);
        }
        while next < n && jobs[next].arrival <= now {
            let job = &jobs[next];
            let seen = if discipline.uses_estimates() { job.estimate } else { job.size };
            if job.size <= 0.0 {
                completion[next] = now;
                left -= 1;
            } else {
                sched.enqueue(now, next, seen, job.weight);
            }
            next += 1;
        }
        shares = sched.schedule(now);
    }
    completion
}

/// Per-discipline figures: mean sojourn, mean slowdown, slowdown tail.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Summary {
    pub discipline: String,
    pub jobs: usize,
    pub mean_sojourn: f64,
    pub mean_slowdown: f64,
    /// Slowdown percentiles p50, p90, p99, p99.9 and the maximum.
    pub slowdown_p50: f64,
    pub slowdown_p90: f64,
    pub slowdown_p99: f64,
    pub slowdown_p999: f64,
    pub slowdown_max: f64,
    /// Fraction of jobs with slowdown above 100 (the thesis's anchor, hfsp.md §4.3 item 6).
    pub frac_slowdown_over_100: f64,
}

/// Nearest-rank percentile of sorted values.
fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Summarizes one run of `jobs` with `completion` times.
pub fn summarize(discipline: Discipline, jobs: &[Job], completion: &[f64]) -> Summary {
    let mut sojourn_sum = 0.0;
    let mut slow: Vec<f64> = Vec::with_capacity(jobs.len());
    for (j, c) in jobs.iter().zip(completion) {
        if j.size > 0.0 {
            let s = c - j.arrival;
            sojourn_sum += s;
            // Rounding of `c - arrival` can put a tiny job a hair under 1.
            slow.push((s / j.size).max(1.0));
        }
    }
    slow.sort_by(f64::total_cmp);
    let n = slow.len().max(1) as f64;
    Summary {
        discipline: discipline.name().to_string(),
        jobs: slow.len(),
        mean_sojourn: sojourn_sum / n,
        mean_slowdown: slow.iter().sum::<f64>() / n,
        slowdown_p50: percentile(&slow, 50.0),
        slowdown_p90: percentile(&slow, 90.0),
        slowdown_p99: percentile(&slow, 99.0),
        slowdown_p999: percentile(&slow, 99.9),
        slowdown_max: slow.last().copied().unwrap_or(f64::NAN),
        frac_slowdown_over_100: slow.iter().filter(|s| **s > 100.0).count() as f64 / n,
    }
}

/// Runs every discipline of `disciplines` on `jobs`.
pub fn compare(jobs: &[Job], disciplines: &[Discipline]) -> Vec<Summary> {
    disciplines.iter().map(|d| summarize(*d, jobs, &run(jobs, *d))).collect()
}
