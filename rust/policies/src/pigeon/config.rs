//! Pigeon's parameters and their defaults (pigeon.md §1.7). Where the paper
//! is ambiguous (§6.1) and the choice matters, the alternative is a
//! parameter: `wfq_mode` (A1).

use sojourn_core::{CoreError, ParamKind, ParamSpec, Params, Result};

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec::new(
        "workers_per_group",
        ParamKind::Int,
        "100",
        "N_w: workers per group, one master each; N_g = round(workers / N_w) groups whose sizes differ by at most one (pigeon.md §1.7, L216; A5). A worker is one vcore of a node",
    ),
    ParamSpec::new(
        "wfq_weight",
        ParamKind::Str,
        "20",
        "W: an integer ≥ 1, or inf (strict priority): out of every W tasks an unreserved worker takes while both queues wait, at least one is long (L94; Figs 7/8 use 20, Figs 9/10 inf)",
    ),
    ParamSpec::new(
        "wfq_mode",
        ParamKind::Choice(&["paper", "pigeon_sim"]),
        "paper",
        "paper: W−1 short tasks then a long one (M19, §6.1 A1); pigeon_sim: the authors' simulator's test c ≤ W (W+1 short tasks per long one)",
    ),
    ParamSpec::new(
        "trace",
        ParamKind::Choice(&["yahoo", "cloudera", "google", "facebook", "ec2"]),
        "yahoo",
        "whose cutoff and reservation apply when cutoff_s / reserved_pct are -1: Yahoo 90.5811 s / 2 %, Cloudera 272.783 s / 7 %, Google 1129.532 s / 9 %, EC2 1 s / 10 % (L193, L195, L293); Facebook 76.5951 s / 2 % is Eagle's [EXT]",
    ),
    ParamSpec::new(
        "cutoff_s",
        ParamKind::Float,
        "-1",
        "a job is short iff its mean task duration (the ask's est_task_ms) is at most this (s) (L193, §6.1 A7); -1: the trace's",
    ),
    ParamSpec::new(
        "reserved_pct",
        ParamKind::Float,
        "-1",
        "share of each group's workers reserved for short tasks, R = round(pct · group size), the group's first workers (§1.5, A3); -1: the trace's; the paper's generic value is 5",
    ),
    ParamSpec::new(
        "network_delay_us",
        ParamKind::Int,
        "500",
        "d (µs), one way between distributor, master and worker: tasks reach their master after d, a dispatched task starts d later, an idle notice takes d (L203; 0 inside the RM)",
    ),
    ParamSpec::new(
        "max_am_share",
        ParamKind::Float,
        "0.5",
        "share of the workers YARN's AM containers may hold, running or on their way (maxAMShare): beyond it a job's AM waits at its distributor, so AMs cannot fill the workers and starve their own tasks (the paper has no AMs)",
    ),
    ParamSpec::new(
        "short_queues",
        ParamKind::Str,
        "",
        "the short/long bit inside the RM (pigeon.md §6.2), where asks carry no estimate: comma-separated queues (leaf names or full paths, e.g. short or root.short) whose apps' task asks are short; the task asks of apps in any other queue are long. Empty: every ask without an estimate takes unknown_estimate. AM asks always take unknown_estimate",
    ),
    ParamSpec::new(
        "unknown_estimate",
        ParamKind::Choice(&["short", "long"]),
        "short",
        "the class of an ask without est_task_ms: AMs, and every task ask when short_queues is empty",
    ),
];

/// W: finite, or ∞ (strict priority).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Weight {
    Finite(u32),
    Infinite,
}

/// How the WFQ counter is compared with W (§6.1 A1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WfqMode {
    /// M19: a short task while `c < W − 1`.
    Paper,
    /// `MASTER.h`: a short task while `c ≤ W`.
    PigeonSim,
}

#[derive(Clone, Debug)]
pub struct Config {
    pub workers_per_group: u32,
    pub weight: Weight,
    pub mode: WfqMode,
    /// Short iff est (µs) ≤ cutoff (µs).
    pub cutoff_us: u64,
    pub reserved_pct: f64,
    pub delay_us: u64,
    pub unknown_is_long: bool,
    pub max_am_share: f64,
    /// Queues whose apps are short (§6.2's short/long bit): leaf names or
    /// full paths.
    pub short_queues: Vec<String>,
}

/// Cutoff (s) and reservation (%) per trace (pigeon.md §1.5, §1.6).
fn trace_defaults(trace: &str) -> (f64, f64) {
    match trace {
        "cloudera" => (272.783, 7.0),
        "google" => (1129.532, 9.0),
        "facebook" => (76.5951, 2.0),
        "ec2" => (1.0, 10.0),
        _ => (90.5811, 2.0),
    }
}

/// `inf` (or `∞`) or an integer ≥ 1.
pub fn parse_weight(s: &str) -> Result<Weight> {
    let t = s.trim();
    if t.eq_ignore_ascii_case("inf") || t == "∞" {
        return Ok(Weight::Infinite);
    }
    match t.parse::<u32>() {
        Ok(w) if w >= 1 => Ok(Weight::Finite(w)),
        _ => Err(CoreError::Config(format!("parameter 'wfq_weight': '{s}' is neither inf nor an integer ≥ 1"))),
    }
}

impl Config {
    pub fn from_params(p: &Params) -> Result<Config> {
        let (trace_cutoff, trace_pct) = trace_defaults(&p.str("trace")?);
        let cutoff = p.float("cutoff_s")?;
        let cutoff_s = if cutoff == -1.0 { trace_cutoff } else { cutoff };
        if !(0.0..=1e9).contains(&cutoff_s) {
            return Err(CoreError::Config(format!(
                "parameter 'cutoff_s': {cutoff} is neither -1 nor a duration in [0, 1e9] s"
            )));
        }
        let pct = p.float("reserved_pct")?;
        let reserved_pct = if pct == -1.0 { trace_pct } else { pct };
        if !(0.0..=100.0).contains(&reserved_pct) {
            return Err(CoreError::Config(format!(
                "parameter 'reserved_pct': {pct} is neither -1 nor a share in [0, 100]"
            )));
        }
        let n_w = p.int_at_least("workers_per_group", 1)?;
        let workers_per_group = u32::try_from(n_w)
            .map_err(|_| CoreError::Config(format!("parameter 'workers_per_group': {n_w} is above {}", u32::MAX)))?;
        let delay_us = p.int_at_least("network_delay_us", 0)?;
        if delay_us > 60_000_000 {
            return Err(CoreError::Config(format!("parameter 'network_delay_us': {delay_us} is above a minute")));
        }
        Ok(Config {
            workers_per_group,
            weight: parse_weight(&p.str("wfq_weight")?)?,
            mode: if p.str("wfq_mode")? == "pigeon_sim" { WfqMode::PigeonSim } else { WfqMode::Paper },
            cutoff_us: (cutoff_s * 1e6).round() as u64,
            reserved_pct,
            delay_us: delay_us as u64,
            unknown_is_long: p.str("unknown_estimate")? == "long",
            max_am_share: p.float_in("max_am_share", 0.0, 1.0)?,
            short_queues: crate::common::parse_queues("short_queues", &p.str("short_queues")?)?,
        })
    }

    /// Whether an app in `queue` (as submitted, a leaf or a full path) is
    /// short: the queue is listed, or its leaf is, or its path ends with a
    /// listed path.
    pub fn is_short_queue(&self, queue: &str) -> bool {
        crate::common::in_queues(&self.short_queues, queue)
    }
}
