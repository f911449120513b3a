//! HFSP's parameters (hfsp.md §2.1, §3, §7, §8.2): the thesis's values as
//! defaults, the authors' code's behaviour as options.

use sojourn_core::{ParamKind, ParamSpec, Params, Result};

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec::new("training_tasks", ParamKind::Int, "5", "t: training tasks per phase (thesis 5; code 2)"),
    ParamSpec::new(
        "tiny_threshold",
        ParamKind::Int,
        "5",
        "phases with fewer tasks are tiny: size 0, no training (thesis: t = 5)",
    ),
    ParamSpec::new(
        "delta_ms",
        ParamKind::Int,
        "60000",
        "Δ: a running training task's progress p gives its size as elapsed/p after this long",
    ),
    ParamSpec::new("xi", ParamKind::Float, "1", "ξ ≥ 1: pessimism factor on the initial size S_i = n·ξ·s̄"),
    ParamSpec::new("training_slots_map", ParamKind::Int, "10", "T for maps: running training containers (code: 0)"),
    ParamSpec::new("training_slots_reduce", ParamKind::Int, "10", "T for reduces: running training containers"),
    ParamSpec::new(
        "initial_task_ms",
        ParamKind::Int,
        "60000",
        "s0: per-task size before any phase of the type has completed (code default)",
    ),
    ParamSpec::new(
        "preemption",
        ParamKind::Choice(&["wait", "kill", "suspend"]),
        "wait",
        "WAIT (thesis default), KILL youngest tasks first, or SUSPEND them",
    ),
    ParamSpec::new(
        "late_policy",
        ParamKind::Choice(&["fspe", "ps"]),
        "fspe",
        "late phases: one after another in virtual finish order (FSPE, thesis) or shared (FSPE+PS)",
    ),
    ParamSpec::new("aging_speed", ParamKind::Float, "1", "virtual clock speed vs wall clock (thesis 1; code 0.5)"),
    ParamSpec::new(
        "keep_aging",
        ParamKind::Bool,
        "false",
        "at S_f: false sets V := S_f (remaining work); true keeps the aged fraction, V := V·S_f/S_i",
    ),
    ParamSpec::new(
        "training_order",
        ParamKind::Choice(&["initial_size", "progress"]),
        "initial_size",
        "training slot to the smallest initial size (thesis) or the most launched/finished tasks (code)",
    ),
    ParamSpec::new("map_share", ParamKind::Float, "0.5", "share of cluster memory forming the virtual MAP pool"),
    ParamSpec::new("map_slot_mb", ParamKind::Int, "1024", "memory of one virtual MAP slot (thesis: 1 GB)"),
    ParamSpec::new("reduce_slot_mb", ParamKind::Int, "2048", "memory of one virtual REDUCE slot (thesis: 2 GB)"),
    ParamSpec::new(
        "use_ask_estimates",
        ParamKind::Bool,
        "false",
        "take the initial per-task size from the ask's est_task_ms when the driver gives one",
    ),
    ParamSpec::new(
        "kill_below_progress",
        ParamKind::Float,
        "0",
        "SUSPEND mode, hybrid (hfsp.md A6): a victim with less progress than this is killed instead (little work lost; frees its memory)",
    ),
    ParamSpec::new(
        "wait_below_remaining_ms",
        ParamKind::Int,
        "0",
        "SUSPEND mode, hybrid: a victim estimated to finish within this long is left to finish (WAIT)",
    ),
    ParamSpec::new(
        "max_suspended_per_node",
        ParamKind::Int,
        "0",
        "SUSPEND mode: at most this many suspended tasks on a node (the RAM + swap budget of §3.4); 0 = memory is the only bound",
    ),
    ParamSpec::new(
        "preempt_maps",
        ParamKind::Bool,
        "true",
        "map tasks may be preempted (thesis); false preempts reduces only, as the authors' code does (D8)",
    ),
    ParamSpec::new(
        "reserve_training_slots",
        ParamKind::Bool,
        "false",
        "while training tasks wait, keep T slots of their type for them: other phases use at most (slots − T) (the authors' code, D11)",
    ),
    ParamSpec::new(
        "round_robin_order",
        ParamKind::Choice(&["tasks", "submission"]),
        "tasks",
        "virtual max-min remainders go to the phases with the fewest tasks (thesis) or in submission (JobID) order (code, D7)",
    ),
    ParamSpec::new(
        "initial_mean",
        ParamKind::Choice(&["completed", "queued"]),
        "completed",
        "s̄ of S_i: mean task time of completed phases (thesis, §2.3) or mean per-task estimate of trained phases in the queue (code, D2)",
    ),
    ParamSpec::new(
        "map_final",
        ParamKind::Choice(&["thesis", "completed_mean"]),
        "thesis",
        "map S_f: the training formula (thesis, §2.5) or the mean of completed maps over all n tasks, aging lost (code, D3)",
    ),
    ParamSpec::new(
        "map_completed_samples",
        ParamKind::Int,
        "2",
        "map_final=completed_mean: completed maps needed before S_f (code's num-completed, §8.2)",
    ),
    ParamSpec::new(
        "reduce_final",
        ParamKind::Choice(&["thesis", "sort_finish"]),
        "thesis",
        "reduce S_f: the training formula (thesis, §2.5) or the code's (D4): completed reduces and running ones past Δ at elapsed/((p − 2/3)·3), over the unfinished tasks; times from the sort finish where the driver reports it (YARN: read from MapReduce AMs), else from launch",
    ),
    ParamSpec::new(
        "order",
        ParamKind::Choice(&["remaining", "virtual_finish"]),
        "remaining",
        "size-based queue by remaining virtual size V (thesis and code) or by projected virtual finish time under max-min (classic FSP; experiment, §7.10)",
    ),
    ParamSpec::new(
        "victims",
        ParamKind::Choice(&["any_node", "heartbeat_node"]),
        "any_node",
        "preemption victims on any node at once (thesis, §3) or only on the heartbeating node, those elsewhere only counted as claimed (code, D8)",
    ),
    ParamSpec::new(
        "locality_delay_ms",
        ParamKind::Int,
        "1500",
        "delay scheduling D (§1.7 step 5, §7.18): a phase without a node-local ask here waits D, then rack-local, after 2D any; 0 = off (default: the code's auto 1.5 × a 1 s heartbeat)",
    ),
    ParamSpec::new(
        "pool_quotas",
        ParamKind::Bool,
        "false",
        "real side keeps the virtual MAP/REDUCE split, borrowing a pool's idle slots while it has no waiting demand; borrowed containers are the first victims (§7.1)",
    ),
    ParamSpec::new(
        "min_run_ms",
        ParamKind::Int,
        "0",
        "never preempt a task that started or resumed less than this ago (thesis: none)",
    ),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preemption {
    Wait,
    Kill,
    Suspend,
}

#[derive(Clone, Debug)]
pub struct Config {
    pub t: u32,
    pub tiny: u32,
    pub delta_ms: u64,
    pub xi: f64,
    /// T per kind (map, reduce).
    pub train_slots: [u32; 2],
    pub s0_ms: f64,
    pub preemption: Preemption,
    pub late_ps: bool,
    pub aging_speed: f64,
    pub keep_aging: bool,
    pub train_by_progress: bool,
    pub map_share: f64,
    pub slot_mb: [u64; 2],
    pub use_ask_estimates: bool,
    pub min_run_ms: u64,
    pub kill_below_progress: f64,
    pub wait_below_remaining_ms: u64,
    pub max_suspended_per_node: u32,
    pub preempt_maps: bool,
    pub reserve_training_slots: bool,
    pub remainders_by_submission: bool,
    pub initial_from_queue: bool,
    pub map_completed_mean: bool,
    pub map_completed_samples: u32,
    pub reduce_sort_finish: bool,
    pub order_by_finish: bool,
    pub victims_on_heartbeat_node: bool,
    pub locality_delay_ms: u64,
    pub pool_quotas: bool,
}

impl Config {
    pub fn from_params(p: &Params) -> Result<Config> {
        let nonneg = |k: &str| p.int_at_least(k, 0);
        Ok(Config {
            t: p.int_at_least("training_tasks", 0)? as u32,
            tiny: nonneg("tiny_threshold")? as u32,
            delta_ms: nonneg("delta_ms")? as u64,
            xi: p.float_in("xi", 1.0, 1e9)?,
            train_slots: [nonneg("training_slots_map")? as u32, nonneg("training_slots_reduce")? as u32],
            s0_ms: p.int_at_least("initial_task_ms", 1)? as f64,
            preemption: match p.str("preemption")?.as_str() {
                "kill" => Preemption::Kill,
                "suspend" => Preemption::Suspend,
                _ => Preemption::Wait,
            },
            late_ps: p.str("late_policy")? == "ps",
            aging_speed: p.float_in("aging_speed", 1e-6, 1e6)?,
            keep_aging: p.bool("keep_aging")?,
            train_by_progress: p.str("training_order")? == "progress",
            map_share: p.float_in("map_share", 0.0, 1.0)?,
            slot_mb: [p.int_at_least("map_slot_mb", 1)? as u64, p.int_at_least("reduce_slot_mb", 1)? as u64],
            use_ask_estimates: p.bool("use_ask_estimates")?,
            min_run_ms: nonneg("min_run_ms")? as u64,
            kill_below_progress: p.float_in("kill_below_progress", 0.0, 1.0)?,
            wait_below_remaining_ms: nonneg("wait_below_remaining_ms")? as u64,
            max_suspended_per_node: nonneg("max_suspended_per_node")? as u32,
            preempt_maps: p.bool("preempt_maps")?,
            reserve_training_slots: p.bool("reserve_training_slots")?,
            remainders_by_submission: p.str("round_robin_order")? == "submission",
            initial_from_queue: p.str("initial_mean")? == "queued",
            map_completed_mean: p.str("map_final")? == "completed_mean",
            map_completed_samples: p.int_at_least("map_completed_samples", 1)? as u32,
            reduce_sort_finish: p.str("reduce_final")? == "sort_finish",
            order_by_finish: p.str("order")? == "virtual_finish",
            victims_on_heartbeat_node: p.str("victims")? == "heartbeat_node",
            locality_delay_ms: nonneg("locality_delay_ms")? as u64,
            pool_quotas: p.bool("pool_quotas")?,
        })
    }
}
