//! The parameters of the Hawk family (delgado.md §1.7, §1.8, §2.6, §2.7):
//! one schema, registered six times with the defaults that make each policy
//! (`hawk`, `sparrow`, `lwl`, `split`, `eagle`, `dlwl_srpt`). Where the
//! thesis is silent (§6) the alternative is a parameter.

use sojourn_core::{CoreError, ParamKind, ParamSpec, Params, Result};

/// The schema with the defaults of one registered policy: how jobs are
/// placed (`central`), the short partition, stealing, and where short probes
/// go; Eagle's mechanisms (SSS, SBP, the node queues' order, K).
macro_rules! hawk_params {
    ($central:literal, $partition:literal, $steal:literal, $targets:literal,
     $sss:literal, $sticky:literal, $order:literal, $min_probes:literal) => {
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
                ParamKind::Choice(&["long", "none", "all", "distributed"]),
                $central,
                "long: long jobs by the central LWL scheduler (Hawk, Eagle); none: every job probes (long ones in the general partition); all: every job by central LWL (fully centralized baseline); distributed: every task placed by distributed LWL on heartbeat snapshots of the queues (DLWL, Eagle's baseline, delgado.md §2.7)",
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
                "sss",
                ParamKind::Bool,
                $sss,
                "Eagle's Succinct State Sharing (delgado.md §2.3): a node with a long task assigned rejects short probes; a rejected probe is redrawn among the nodes the freshest bit vector of the job's replies shows free of long tasks, then in the short partition",
            ),
            ParamSpec::new(
                "sticky",
                ParamKind::Bool,
                $sticky,
                "Eagle's Sticky Batch Probing (delgado.md §2.4): a short probe that got a task stays in its node's queue and asks its job for another when the node next selects, until the job has none left",
            ),
            ParamSpec::new(
                "queue_order",
                ParamKind::Choice(&["fifo", "srpt", "srpt_all"]),
                $order,
                "node queue order: fifo (Hawk); srpt: among the short probes before the first long entry, the job with the least remaining work (est × unlaunched tasks) that may bypass those in front (Eagle, Algorithm 1, §5 E3); srpt_all: every entry, long ones too, strict slack test (DLWL+SRPT, §5 D)",
            ),
            ParamSpec::new(
                "starvation_factor",
                ParamKind::Float,
                "5",
                "SRPT starvation bound (delgado.md §2.5): a task T may bypass a queued entry P only while P's bypass counter + est(T) stays within this × est(P) (thesis 5)",
            ),
            ParamSpec::new(
                "min_probes",
                ParamKind::Int,
                $min_probes,
                "K: a short job's first batch is max(K, probe_ratio × tasks) probes (Eagle 20, §2.6; 0 = none)",
            ),
            ParamSpec::new(
                "heartbeat_s",
                ParamKind::Float,
                "-1",
                "central=distributed: the period (s) of the queue-length snapshots the distributed schedulers see; -1: the trace's (thesis: Google 3, Yahoo 7, Cloudera 12, Facebook 7)",
            ),
            ParamSpec::new(
                "authors_simulator",
                ParamKind::Bool,
                "true",
                "where the authors' simulator differs from a real system (delgado.md §6.5, §6.9): true: SSS acceptance is decided when a probe is sent, against the node's true state, and a redrawn probe arrives after 2d; DLWL noise is a whole number of seconds in [0, HB]. false: a probe is rejected when it reaches its node, the rejection travels back d, and the redraw leaves then; DLWL noise is uniform in [0, HB) µs",
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
                "the class of an ask without est_task_ms: AMs, and every task ask when short_queues is empty",
            ),
            ParamSpec::new(
                "short_queues",
                ParamKind::Str,
                "",
                "the short/long bit inside the RM, where asks carry no estimate (as pigeon's): comma-separated queues (leaf names or full paths, e.g. short or root.short) whose apps' task asks are short; the task asks of apps in any other queue are long. Empty: every ask without an estimate takes unknown_estimate. AM asks always take unknown_estimate",
            ),
            ParamSpec::new(
                "unknown_task_s",
                ParamKind::Float,
                "1",
                "the estimate (s) LWL and SRPT use for a task ask without est_task_ms (inside the RM): equal positive weights make LWL least-tasks-queued and SRPT fewest-unlaunched-tasks-first; 0 gives such tasks no work, so LWL sends them all to the lowest-id node. AM asks keep 0",
            ),
        ]
    };
}

pub const HAWK: &[ParamSpec] = hawk_params!("long", "-1", "10", "all", "false", "false", "fifo", "0");
pub const SPARROW: &[ParamSpec] = hawk_params!("none", "0", "0", "all", "false", "false", "fifo", "0");
pub const LWL: &[ParamSpec] = hawk_params!("all", "0", "0", "all", "false", "false", "fifo", "0");
pub const SPLIT: &[ParamSpec] = hawk_params!("long", "-1", "0", "short_partition", "false", "false", "fifo", "0");
pub const EAGLE: &[ParamSpec] = hawk_params!("long", "-1", "0", "all", "true", "true", "srpt", "20");
pub const DLWL_SRPT: &[ParamSpec] = hawk_params!("distributed", "-1", "0", "all", "false", "false", "srpt_all", "0");

/// Who places a job's tasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Central {
    /// Long jobs by the central scheduler, short ones by probes (Hawk).
    Long,
    /// Every job by probes (Sparrow; Hawk without centralized scheduling).
    None,
    /// Every job by the central scheduler (the fully centralized baseline).
    All,
    /// Every job by distributed LWL on heartbeat snapshots (DLWL, §2.7).
    Distributed,
}

/// The order in which a node serves its queue (delgado.md §2.5, §5 E3, D7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    Fifo,
    /// Eagle: SRPT among the short probes before the first long entry.
    Srpt,
    /// DLWL+SRPT: SRPT over every entry, strict slack test.
    SrptAll,
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
    pub sss: bool,
    pub sticky: bool,
    pub order: Order,
    pub starvation_factor: f64,
    pub min_probes: u32,
    /// DLWL's snapshot period (µs, at least 1).
    pub heartbeat_us: u64,
    pub authors_simulator: bool,
    /// Queues whose apps are short (the RM's short/long bit): leaf names or
    /// full paths.
    pub short_queues: Vec<String>,
    /// Estimate (µs) of a task ask without one.
    pub unknown_task_us: u64,
}

/// The authors' simulator's cutoff (s) and short-partition share (%) per
/// trace (delgado.md §0, §1.3), and DLWL's heartbeat (s, §2.7; the thesis
/// gives none for Facebook: Yahoo's, the other 2% trace).
fn trace_defaults(trace: &str) -> (f64, f64, f64) {
    match trace {
        "google" => (1129.532, 17.0, 3.0),
        "cloudera" => (272.7830, 9.0, 12.0),
        "facebook" => (76.5951, 2.0, 7.0),
        _ => (90.5811, 2.0, 7.0),
    }
}

impl Config {
    pub fn from_params(p: &Params) -> Result<Config> {
        let (trace_cutoff, trace_pct, trace_hb) = trace_defaults(&p.str("trace")?);
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
        let hb = p.float("heartbeat_s")?;
        let heartbeat_s = if hb == -1.0 { trace_hb } else { hb };
        if !(0.001..=86_400.0).contains(&heartbeat_s) {
            return Err(CoreError::Config(format!(
                "parameter 'heartbeat_s': {hb} is neither -1 nor a period in [0.001, 86400] s"
            )));
        }
        let min_probes = p.int_at_least("min_probes", 0)?;
        let too_big = |k: &str, v: i64| CoreError::Config(format!("parameter '{k}': {v} is above {}", u32::MAX));
        Ok(Config {
            probe_ratio: p.float_in("probe_ratio", 1.0, 1000.0)?,
            delay_us: delay_us as u64,
            cutoff_us: (cutoff_s * 1e6).round() as u64,
            short_partition_pct,
            central: match p.str("central")?.as_str() {
                "none" => Central::None,
                "all" => Central::All,
                "distributed" => Central::Distributed,
                _ => Central::Long,
            },
            short_in_partition: p.str("short_targets")? == "short_partition",
            steal_attempts: u32::try_from(steal_attempts).map_err(|_| too_big("steal_attempts", steal_attempts))?,
            steal_limit: u32::try_from(steal_limit).map_err(|_| too_big("steal_limit", steal_limit))?,
            distinct: p.str("sampling")? == "distinct",
            unknown_is_long: p.str("unknown_estimate")? == "long",
            max_am_share: p.float_in("max_am_share", 0.0, 1.0)?,
            sss: p.bool("sss")?,
            sticky: p.bool("sticky")?,
            order: match p.str("queue_order")?.as_str() {
                "srpt" => Order::Srpt,
                "srpt_all" => Order::SrptAll,
                _ => Order::Fifo,
            },
            starvation_factor: p.float_in("starvation_factor", 0.0, 1e6)?,
            min_probes: u32::try_from(min_probes).map_err(|_| too_big("min_probes", min_probes))?,
            heartbeat_us: ((heartbeat_s * 1e6).round() as u64).max(1),
            authors_simulator: p.bool("authors_simulator")?,
            short_queues: crate::common::parse_queues("short_queues", &p.str("short_queues")?)?,
            unknown_task_us: (p.float_in("unknown_task_s", 0.0, 1e6)? * 1e6).round() as u64,
        })
    }

    /// Whether an app in `queue` (as submitted, a leaf or a full path) is
    /// short: the queue is listed, or its leaf is, or its path ends with a
    /// listed path (pigeon's rule).
    pub fn is_short_queue(&self, queue: &str) -> bool {
        crate::common::in_queues(&self.short_queues, queue)
    }
}
