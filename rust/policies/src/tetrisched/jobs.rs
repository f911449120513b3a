//! Jobs to STRL (tetrisched.md §3): each pending gang becomes one `max`
//! over its start slices in the window and its placement options, with the
//! value functions of §3.2 and the culling of §3.4.

use super::config::Config;
use super::strl::{EqSets, JobKey, Leaf, Slice, Strl};
use sojourn_core::{AppId, Priority, Time};

/// The three queues of §2.9/§6.2, in priority order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    /// Accepted SLO: 1000·C up to the deadline (§3.2).
    SloAccepted,
    /// SLO without reservation: 25·C up to the deadline (§3.2, A20).
    SloNoRez,
    /// Best effort: C decaying linearly from arrival (A7).
    BestEffort,
}

/// Placement preferences (§3.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobType {
    Unconstrained,
    /// Prefers GPU nodes; σ slower anywhere else [L325].
    Gpu,
    /// Prefers all its nodes in one rack; σ slower across racks [L327–L332].
    Mpi,
}

/// One pending gang: an app's outstanding ask at one priority.
#[derive(Clone, Debug)]
pub struct Gang {
    pub app: AppId,
    pub priority: Priority,
    pub key: JobKey,
    pub class: Class,
    pub kind: JobType,
    pub submit: Time,
    pub deadline: Option<Time>,
    /// Value of meeting the deadline (SLO) or the start constant (BE).
    pub value: f64,
    /// Units wanted: the ask's outstanding containers, at most the units
    /// its eligible nodes can ever hold.
    pub k: u32,
    /// All-or-nothing (nCk). A gang larger than its eligible nodes can
    /// ever hold cannot be placed whole: it becomes linear (LnCk).
    pub gang: bool,
    pub width: u32,
    /// Estimated runtime on preferred nodes (ms).
    pub est_ms: u64,
    /// Eligible nodes (ALL), GPU nodes among them, and its nodes per rack.
    pub all: Vec<u32>,
    pub gpu: Vec<u32>,
    pub racks: Vec<Vec<u32>>,
}

pub fn job_key(app: AppId, priority: Priority) -> JobKey {
    (u64::from(app.0) << 32) | u64::from(priority.0)
}

/// Which option of its job a leaf is, stable across cycles: the warm-start
/// key with the job and the absolute start (§2.6, A18).
pub type OptionTag = u32;
pub const OPT_ALL: OptionTag = 0;
pub const OPT_GPU: OptionTag = 1;
/// Rack option `r` is `OPT_RACK + r`.
pub const OPT_RACK: OptionTag = 2;

/// A generated job expression with each leaf's option tag (in leaf order).
pub struct JobStrl {
    pub expr: Strl,
    pub tags: Vec<(OptionTag, Slice)>,
    /// Whether the job was an SLO job with no option left to meet its
    /// deadline, and so became best effort (§3.4, see `value_at`).
    pub hopeless: bool,
}

/// The value of finishing at `done` (ms), §3.2. An SLO job past its
/// deadline is worth nothing (A8).
fn value_at(g: &Gang, done: u64, cfg: &Config, as_be: bool) -> f64 {
    match (g.class, g.deadline, as_be) {
        (Class::BestEffort, _, _) | (_, None, _) | (_, _, true) => {
            // A7: C·max(ε, 1 − (t_c − a)/T_BE); the ε floor keeps a BE job
            // from being culled as worthless and starving.
            let c = if as_be { 1.0 } else { g.value };
            let age = done.saturating_sub(g.submit.ms()) as f64 / cfg.be_horizon_ms as f64;
            c * (1.0 - age).max(1e-3)
        }
        (_, Some(d), false) => {
            if done <= d.ms() {
                g.value
            } else {
                0.0
            }
        }
    }
}

fn slices(ms: u64, q: u64) -> u32 {
    ms.div_ceil(q).clamp(1, u64::from(u32::MAX)) as u32
}

/// STRL of one gang over the window starting at slice `now` (§3.3):
/// `max` over start slices of the preferred leaves and the slow ALL leaf;
/// SLO options that end after the deadline are culled (§3.4). An SLO job
/// with no option left is scheduled as best effort (value C decaying)
/// rather than dropped: YARN would otherwise keep its app waiting forever
/// (the paper drops it and counts a miss [L384]; it is still a miss).
pub fn strl(g: &Gang, sets: &mut EqSets, now: Slice, window: u32, cfg: &Config) -> JobStrl {
    let q = cfg.quantum_ms;
    let d = slices(g.est_ms, q);
    let slow = slices((g.est_ms as f64 * cfg.slowdown).ceil() as u64, q);
    let all = sets.intern(g.all.clone());
    // (set, option tag, duration in slices)
    let mut options: Vec<(usize, OptionTag, u32)> = Vec::new();
    match (g.kind, cfg.no_heterogeneity) {
        (JobType::Unconstrained, _) => options.push((all, OPT_ALL, d)),
        // NH: one set, the whole cluster, conservatively at the slow runtime [L349].
        (_, true) => options.push((all, OPT_ALL, slow)),
        (JobType::Gpu, false) => {
            if !g.gpu.is_empty() {
                options.push((sets.intern(g.gpu.clone()), OPT_GPU, d));
            }
            options.push((all, OPT_ALL, slow));
        }
        (JobType::Mpi, false) => {
            for (r, nodes) in g.racks.iter().enumerate() {
                if !nodes.is_empty() {
                    options.push((sets.intern(nodes.clone()), OPT_RACK + r as u32, d));
                }
            }
            options.push((all, OPT_ALL, slow));
        }
    }
    let build = |as_be: bool| {
        let mut leaves = Vec::new();
        let mut tags = Vec::new();
        for s in now..now + u64::from(window) {
            for &(set, tag, dur) in &options {
                let done = (s + u64::from(dur)).saturating_mul(q);
                let v = value_at(g, done, cfg, as_be);
                if v <= 0.0 {
                    continue; // §3.4: culled by the deadline
                }
                let leaf = Leaf { job: g.key, set, k: g.k, start: s, dur, value: v, width: g.width };
                leaves.push(if g.gang { Strl::NCk(leaf) } else { Strl::LnCk(leaf) });
                tags.push((tag, s));
            }
        }
        (leaves, tags)
    };
    let (mut leaves, mut tags) = build(false);
    let hopeless = leaves.is_empty();
    if hopeless {
        (leaves, tags) = build(true);
    }
    // A gang is one rectangle: `max` over its options. A linear job's
    // containers are independent tasks (an ask larger than the cluster):
    // any of them may start at any slice, so its options are summed, each
    // unit worth its share whenever it starts. Under `max`, one LnCk per
    // job would make it wait for all k units at once rather than take the
    // free ones now.
    let expr = if g.gang { Strl::Max(leaves) } else { Strl::Sum(leaves) };
    JobStrl { expr, tags, hopeless }
}
