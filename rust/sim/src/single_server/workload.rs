//! Single-server workloads (hfsp.md §4.2, §6 A12): the thesis's Weibull
//! generator with log-normal estimation errors, and SWIM traces with the
//! HFSP size formula (`../shared/traces/README.md`).

use super::Job;
use crate::engine::SimError;
use crate::workload::swim::swim_sizes;
use sojourn_core::Rng;
use std::path::Path;

/// The generator's knobs; defaults are Table 3.1 (hfsp.md §4.2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WeibullSpec {
    /// Weibull shape of job sizes (mean 1).
    pub shape: f64,
    /// Weibull shape of inter-arrival times.
    pub timeshape: f64,
    /// σ of the log-normal multiplicative error.
    pub sigma: f64,
    pub load: f64,
    pub njobs: usize,
    pub seed: u64,
}

impl Default for WeibullSpec {
    fn default() -> Self {
        WeibullSpec { shape: 0.25, timeshape: 1.0, sigma: 0.5, load: 0.9, njobs: 10_000, seed: 1 }
    }
}

/// Γ(x) for x > 0 (Lanczos, g = 7, n = 9; ~15 significant digits).
pub fn gamma(x: f64) -> f64 {
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        return std::f64::consts::PI / ((std::f64::consts::PI * x).sin() * gamma(1.0 - x));
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + 7.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    (2.0 * std::f64::consts::PI).sqrt() * t.powf(x + 0.5) * (-t).exp() * a
}

fn check(spec: &WeibullSpec) -> Result<(), SimError> {
    let bad = |m: String| Err(SimError::Config(m));
    if !(spec.shape > 0.0 && spec.shape.is_finite()) {
        return bad(format!("shape must be > 0, got {}", spec.shape));
    }
    if !(spec.timeshape > 0.0 && spec.timeshape.is_finite()) {
        return bad(format!("timeshape must be > 0, got {}", spec.timeshape));
    }
    if !(spec.sigma >= 0.0 && spec.sigma.is_finite()) {
        return bad(format!("sigma must be >= 0, got {}", spec.sigma));
    }
    if !(spec.load > 0.0 && spec.load.is_finite()) {
        return bad(format!("load must be > 0, got {}", spec.load));
    }
    if spec.njobs == 0 {
        return bad("the workload needs at least one job".into());
    }
    Ok(())
}

/// Stretches arrivals so that total size / last arrival = `load` exactly
/// (schedsim does this after drawing, hfsp.md §4.2).
fn stretch(jobs: &mut [Job], load: f64) {
    let last = jobs.last().map(|j| j.arrival).unwrap_or(0.0);
    let total: f64 = jobs.iter().map(|j| j.size).sum();
    if last > 0.0 && total > 0.0 {
        let k = total / load / last;
        for j in jobs.iter_mut() {
            j.arrival *= k;
        }
    }
}

/// The thesis's synthetic workload: sizes ~ Weibull(shape) with mean 1,
/// inter-arrivals ~ Weibull(timeshape) with mean 1/load, estimates =
/// size × LogNormal(0, σ²) (eq. 3.1). Sizes, arrivals and errors come from
/// three forks of one seeded stream, so changing σ keeps the same sizes
/// and arrivals (common random numbers across a σ sweep). The first job
/// arrives after one inter-arrival time.
pub fn weibull_workload(spec: &WeibullSpec) -> Result<Vec<Job>, SimError> {
    check(spec)?;
    let mut root = Rng::seeded(spec.seed);
    let (mut sizes, mut gaps, mut errors) = (root.fork(), root.fork(), root.fork());
    let size_scale = 1.0 / gamma(1.0 + 1.0 / spec.shape);
    let gap_scale = 1.0 / (gamma(1.0 + 1.0 / spec.timeshape) * spec.load);
    let mut t = 0.0;
    let mut jobs: Vec<Job> = (0..spec.njobs)
        .map(|_| {
            t += gaps.weibull(spec.timeshape, gap_scale);
            let size = sizes.weibull(spec.shape, size_scale);
            let est = size * errors.lognormal(0.0, spec.sigma);
            Job::new(t, size, est)
        })
        .collect();
    stretch(&mut jobs, spec.load);
    Ok(jobs)
}

/// A SWIM trace as single-server jobs (hfsp.md §4.2 "Real traces"): size =
/// map_input + (1 + 4)·shuffle + reduce_output bytes, rescaled so that total
/// size = load × last submit time (s) on a server doing 1 unit per second;
/// estimates = size × LogNormal(0, σ²) drawn from `seed`. Jobs of size 0
/// are dropped (no slowdown); the second value counts them.
pub fn swim_workload(path: &Path, load: f64, sigma: f64, seed: u64) -> Result<(Vec<Job>, usize), SimError> {
    if !(load > 0.0 && load.is_finite() && sigma >= 0.0 && sigma.is_finite()) {
        return Err(SimError::Config(format!("bad load {load} or sigma {sigma}")));
    }
    let rows = swim_sizes(path)?;
    let last = rows.iter().map(|r| r.submit.as_secs_f64()).fold(0.0, f64::max);
    let total: f64 = rows.iter().map(|r| r.size_bytes as f64).sum();
    if rows.is_empty() || total <= 0.0 || last <= 0.0 {
        return Err(SimError::Config(format!("{}: no job with a size and a positive submit time", path.display())));
    }
    let k = load * last / total;
    let mut errors = Rng::seeded(seed);
    let mut jobs = Vec::with_capacity(rows.len());
    let mut zero = 0;
    for r in &rows {
        let size = r.size_bytes as f64 * k;
        if size <= 0.0 {
            zero += 1;
            continue;
        }
        jobs.push(Job::new(r.submit.as_secs_f64(), size, size * errors.lognormal(0.0, sigma)));
    }
    jobs.sort_by(|a, b| a.arrival.total_cmp(&b.arrival));
    Ok((jobs, zero))
}
