//! The parameters of the Hawk family (delgado.md §1.7, §1.8): one schema,
//! registered four times with the defaults that make each policy
//! (`hawk`, `sparrow`, `lwl`, `split`). Where the thesis is silent (§6) the
//! alternative is a parameter.

use sojourn_core::{CoreError, ParamKind, ParamSpec, Params, Result};

/// The schema with the defaults of one registered policy: how jobs are
/// placed (`central`), the short partition, stealing, and where short probes
/// go.
macro_rules! hawk_params {
    ($central:literal, $partition:literal, $steal:literal, $targets:literal) => {
        &[
            ParamSpec::new(
                "probe_ratio",
                ParamKind::Float,
                "2",
                "d: probes a distributed scheduler sends per task (Sparrow's batch probing; thesis 2, delgado.md §1.4)",
            ),
            ParamSpec::new(
                "network_delay_us",
                ParamKind::Int,
                "500",
                "one-way network delay (µs): a probe or a placed task reaches its node after it, and every get-task costs the slot a round trip (thesis 0.5 ms, §1.4; 0 inside the RM)",
            ),
            ParamSpec::new(
                "trace",
                ParamKind::Choice(&["yahoo", "google", "cloudera", "facebook"]),
                "yahoo",
                "whose cutoff and short-partition size apply when cutoff_s / short_partition_pct are -1 (the authors' simulator's values, delgado.md §0)",
            ),
            ParamSpec::new(
                "cutoff_s",
                ParamKind::Float,
                "-1",
                "a job is long iff its estimated task duration (the ask's est_task_ms) is above this (s); -1: the trace's (Yahoo 90.5811 s)",
            ),
            ParamSpec::new(
                "short_partition_pct",
                ParamKind::Float,
                $partition,
                "share of nodes (lowest node ids, floored) reserved for short tasks; -1: the trace's (Yahoo 2, Google 17); 0: no partition",
            ),
            ParamSpec::new(
                "central",
                ParamKind::Choice(&["long", "none", "all"]),
                $central,
                "long: long jobs by the central LWL scheduler (Hawk); none: every job probes (long ones in the general partition); all: every job by central LWL (fully centralized baseline)",
            ),
            ParamSpec::new(
                "short_targets",
                ParamKind::Choice(&["all", "short_partition"]),
                $targets,
                "where short jobs probe: the whole cluster (Hawk), or only the short partition (the split-cluster baseline, §1.8)",
            ),
            ParamSpec::new(
                "steal_attempts",
                ParamKind::Int,
                $steal,
                "randomized stealing: general-partition nodes an idle node contacts, stopping at the first with stealable probes (thesis 10; 0 = no stealing)",
            ),
            ParamSpec::new(
                "steal_limit",
                ParamKind::Int,
                "0",
                "most probes taken in one steal (0 = the whole consecutive run, as the authors' simulator)",
            ),
            ParamSpec::new(
                "sampling",
                ParamKind::Choice(&["replacement", "distinct"]),
                "replacement",
                "probe targets drawn with replacement (authors' simulator) or distinct nodes while there are enough (§6.3)",
            ),
            ParamSpec::new(
                "max_am_share",
                ParamKind::Float,
                "0.5",
                "share of the cluster's slots AM containers may hold (YARN's maxAMShare): beyond it, an AM entry at a queue's head lets the entries behind it go first, so AMs cannot fill the cluster and starve their own tasks (the thesis has no AMs)",
            ),
            ParamSpec::new(
                "unknown_estimate",
                ParamKind::Choice(&["short", "long"]),
                "short",
                "the class of an ask without est_task_ms (AMs, hosts without estimates)",
            ),
        ]
    };
}

pub const HAWK: &[ParamSpec] = hawk_params!("long", "-1", "10", "all");
pub const SPARROW: &[ParamSpec] = hawk_params!("none", "0", "0", "all");
pub const LWL: &[ParamSpec] = hawk_params!("all", "0", "0", "all");
pub const SPLIT: &[ParamSpec] = hawk_params!("long", "-1", "0", "short_partition");

/// Who places a job's tasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Central {
    /// Long jobs by the central scheduler, short ones by probes (Hawk).
    Long,
    /// Every job by probes (Sparrow; Hawk without centralized scheduling).
    None,
    /// Every job by the central scheduler (the fully centralized baseline).
    All,
}

#[derive(Clone, Debug)]
pub struct Config {
    pub probe_ratio: f64,
    pub delay_us: u64,
    /// Long iff est (µs) > cutoff (µs).
    pub cutoff_us: u64,
    pub short_partition_pct: f64,
    pub central: Central,
    /// Short jobs probe only the short partition (split cluster).
    pub short_in_partition: bool,
    pub steal_attempts: u32,
    /// 0 = no cap.
    pub steal_limit: u32,
    pub distinct: bool,
    pub unknown_is_long: bool,
    pub max_am_share: f64,
}

/// The authors' simulator's cutoff (s) and short-partition share (%) per
/// trace (delgado.md §0, §1.3).
fn trace_defaults(trace: &str) -> (f64, f64) {
    match trace {
        "google" => (1129.532, 17.0),
        "cloudera" => (272.7830, 9.0),
        "facebook" => (76.5951, 2.0),
        _ => (90.5811, 2.0),
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
        let pct = p.float("short_partition_pct")?;
        let short_partition_pct = if pct == -1.0 { trace_pct } else { pct };
        if !(0.0..=100.0).contains(&short_partition_pct) {
            return Err(CoreError::Config(format!(
                "parameter 'short_partition_pct': {pct} is neither -1 nor a share in [0, 100]"
            )));
        }
        let delay_us = p.int_at_least("network_delay_us", 0)?;
        if delay_us > 60_000_000 {
            return Err(CoreError::Config(format!("parameter 'network_delay_us': {delay_us} is above a minute")));
        }
        let steal_attempts = p.int_at_least("steal_attempts", 0)?;
        let steal_limit = p.int_at_least("steal_limit", 0)?;
        let too_big = |k: &str, v: i64| CoreError::Config(format!("parameter '{k}': {v} is above {}", u32::MAX));
        Ok(Config {
            probe_ratio: p.float_in("probe_ratio", 1.0, 1000.0)?,
            delay_us: delay_us as u64,
            cutoff_us: (cutoff_s * 1e6).round() as u64,
            short_partition_pct,
            central: match p.str("central")?.as_str() {
                "none" => Central::None,
                "all" => Central::All,
                _ => Central::Long,
            },
            short_in_partition: p.str("short_targets")? == "short_partition",
            steal_attempts: u32::try_from(steal_attempts).map_err(|_| too_big("steal_attempts", steal_attempts))?,
            steal_limit: u32::try_from(steal_limit).map_err(|_| too_big("steal_limit", steal_limit))?,
            distinct: p.str("sampling")? == "distinct",
            unknown_is_long: p.str("unknown_estimate")? == "long",
            max_am_share: p.float_in("max_am_share", 0.0, 1.0)?,
        })
    }
}
