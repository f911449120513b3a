//! TetriSched's parameters and their defaults (tetrisched.md §2, §3, §7).
//! Where the paper is silent the default is the document's [R] and the
//! choice is a parameter.

use super::compile::{Backend, SolverOptions};
use sojourn_core::{CoreError, ParamKind, ParamSpec, Params, Result};

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec::new("cycle_ms", ParamKind::Int, "4000", "scheduling cycle period (ms): the plan is re-solved from scratch every cycle ([L342], §2.3)"),
    ParamSpec::new("quantum_ms", ParamKind::Int, "4000", "time slice q (ms): leaves start on slice boundaries and durations are ceil(estimate / q) slices (A1)"),
    ParamSpec::new("plan_ahead_ms", ParamKind::Int, "100000", "plan-ahead window H (ms): start options are emitted for every slice of [now, now + H) (A2, [L411])"),
    ParamSpec::new("no_global", ParamKind::Bool, "false", "TetriSched-NG: one job at a time, in queue order accepted SLO > SLO without reservation > best effort, each subtracting its plan from the supply (§2.9, §6.2)"),
    ParamSpec::new("no_heterogeneity", ParamKind::Bool, "false", "TetriSched-NH: every job draws from one equivalence set, the whole cluster, at its slow runtime (§2.9, [L349])"),
    ParamSpec::new("no_plan_ahead", ParamKind::Bool, "false", "TetriSched-NP: only start = now is considered (H = 1 slice; alsched, [L411])"),
    ParamSpec::new("solver", ParamKind::Choice(&["cbc", "highs", "microlp"]), "cbc", "MILP backend of good_lp (§8.3); highs and microlp need sojourn-policies' Cargo features of those names"),
    ParamSpec::new("mip_gap", ParamKind::Float, "0.1", "relative MIP gap at which the solver stops ([L114], §2.7)"),
    ParamSpec::new("time_limit_s", ParamKind::Float, "3", "the solver's own time limit per cycle, seconds (A17; CBC rounds up to whole seconds). A solve that stops without a valid plan falls back to the greedy plan"),
    ParamSpec::new("max_milp_jobs", ParamKind::Int, "50", "at most this many pending jobs (in queue order) go into the cycle's MILP; the rest are planned greedily on what it leaves (§2.8 (6); §8.3: ≈ 50 jobs solve within 3 s at RC80 scale)"),
    ParamSpec::new("max_plan_jobs", ParamKind::Int, "100", "at most this many pending gangs, the first in queue order, are planned in a cycle; the rest wait (§2.8 (6); bounds a cycle's work under a backlog)"),
    ParamSpec::new("warm_start", ParamKind::Bool, "true", "seed each solve with the previous cycle's plan, leaves keyed by job, absolute start and option ([L114], §2.6)"),
    ParamSpec::new("defer_penalty", ParamKind::Float, "0.000001", "A19: objective penalty per unit per slice from now to a leaf's end, so equal plans finish early"),
    ParamSpec::new("skip_full_cycles", ParamKind::Bool, "false", "a cycle that finds no free slot on any node plans nothing: nothing can start now, and the next cycle (a freed slot makes one with event_cycles) re-plans the future anyway; the solve after it starts cold. Halves the CPU of a loaded heartbeat run; off by default because the changed sequence of solves makes CBC 2.10.8 abort the estimate-error benchmark in process (tetrisched.md §4). false: solve every cycle, as the paper does ([L342])"),
    ParamSpec::new("event_cycles", ParamKind::Bool, "true", "also run a cycle when a scheduling pass or heartbeat finds new asks or freed resources since the last cycle (not only every cycle_ms)"),
    ParamSpec::new("slo_queues", ParamKind::Str, "slo", "comma-separated queues whose apps are accepted SLO jobs (value 1000·C, §3.2)"),
    ParamSpec::new("slo_norez_queues", ParamKind::Str, "slo_norez", "comma-separated queues whose apps are SLO jobs without a reservation (value 25·C, §3.2)"),
    ParamSpec::new("rayon_admission", ParamKind::Bool, "true", "an app with a deadline is an accepted SLO job (value 1000·C) only if Rayon's admission (the `rayon` policy's plan, late greedy placement, 1 s steps) reserves it; otherwise an SLO job without reservation (25·C) (§3.2, §4.4: both stacks share one admission). false: every app with a deadline is accepted"),
    ParamSpec::new("deadline_slack", ParamKind::Float, "2", "an SLO app without a deadline in its AppSpec gets submit + slack · estimated runtime (A13: slack U[1.5, 3], its midpoint rounded)"),
    ParamSpec::new("be_horizon_ms", ParamKind::Int, "3600000", "T_BE: a best-effort job's value decays linearly from C at arrival to the floor at arrival + T_BE (A7)"),
    ParamSpec::new("slowdown", ParamKind::Float, "1.5", "σ: runtime factor of a GPU or MPI job off its preferred nodes (A13)"),
    ParamSpec::new("gpu_racks", ParamKind::Str, "", "comma-separated racks of GPU nodes (A12); nodes with GPUs in their capacity are GPU nodes too"),
    ParamSpec::new("default_runtime_ms", ParamKind::Int, "60000", "runtime estimate of an ask without est_task_ms"),
    ParamSpec::new("slot_mb", ParamKind::Int, "1024", "memory of one supply unit (a slot); the paper's unit is a whole node (A11)"),
    ParamSpec::new("slot_vcores", ParamKind::Int, "1", "vcores of one supply unit (a slot)"),
    ParamSpec::new("bind_on_heartbeat", ParamKind::Bool, "false", "a plan's containers are allocated on each node when that node heartbeats (the paper's allocation map in its proxy scheduler, §4), spreading a plan over NODE_UPDATEs; the next periodic cycle replaces what is left of it. false: every container at the plan's launch. Needs heartbeats (the RM, or the simulator with --heartbeat-ms; an event-driven pass over all nodes applies the whole map). On in hadoop-conf/sojourn-tetrisched.xml"),
    ParamSpec::new("elastic_asks", ParamKind::Bool, "false", "every ask is elastic (LnCk: any part of it is worth its share) instead of a gang placed all or nothing (nCk): MapReduce's tasks are independent, and gangs behind AMs that hold slots can wait for ever. On in hadoop-conf/sojourn-tetrisched.xml"),
];

/// Validated parameters.
#[derive(Clone, Debug)]
pub struct Config {
    pub cycle_ms: u64,
    pub quantum_ms: u64,
    /// H in slices (1 under NP).
    pub window_slices: u32,
    pub no_global: bool,
    pub no_heterogeneity: bool,
    pub no_plan_ahead: bool,
    pub solver: SolverOptions,
    pub max_milp_jobs: usize,
    pub max_plan_jobs: usize,
    pub warm_start: bool,
    pub event_cycles: bool,
    /// Skip a cycle that finds every node full (nothing can start now).
    pub skip_full_cycles: bool,
    pub slo_queues: Vec<String>,
    pub slo_norez_queues: Vec<String>,
    pub rayon_admission: bool,
    pub deadline_slack: f64,
    pub be_horizon_ms: u64,
    pub slowdown: f64,
    pub gpu_racks: Vec<String>,
    pub default_runtime_ms: u64,
    pub slot_mb: u64,
    pub slot_vcores: u32,
    pub elastic_asks: bool,
    pub bind_on_heartbeat: bool,
}

fn list(s: &str) -> Vec<String> {
    s.split(',').map(str::trim).filter(|x| !x.is_empty()).map(str::to_string).collect()
}

fn bad(key: &str, why: String) -> CoreError {
    CoreError::Config(format!("parameter '{key}': {why}"))
}

impl Config {
    pub fn from_params(p: &Params) -> Result<Config> {
        let cycle_ms = p.int_at_least("cycle_ms", 1)? as u64;
        let quantum_ms = p.int_at_least("quantum_ms", 1)? as u64;
        let plan_ahead_ms = p.int_at_least("plan_ahead_ms", 0)? as u64;
        let no_plan_ahead = p.bool("no_plan_ahead")?;
        // At most 10^4 slices: the model is linear in H (§2.2).
        let slices = plan_ahead_ms.div_ceil(quantum_ms).max(1);
        if slices > 10_000 {
            return Err(bad("plan_ahead_ms", format!("{plan_ahead_ms} is over 10000 slices of quantum_ms")));
        }
        let window_slices = if no_plan_ahead { 1 } else { slices as u32 };
        let name = p.str("solver")?;
        let backend = Backend::parse(&name).ok_or_else(|| bad("solver", format!("unknown backend '{name}'")))?;
        if !Backend::available().contains(&name.as_str()) {
            return Err(bad(
                "solver",
                format!(
                    "'{name}' is not compiled in (built with: {}); enable sojourn-policies' feature '{name}'",
                    Backend::available().join(", ")
                ),
            ));
        }
        let mip_gap = p.float_in("mip_gap", 0.0, 1.0)?;
        let time_limit_s = p.float_in("time_limit_s", 0.001, 86_400.0)?;
        let defer_penalty = p.float_in("defer_penalty", 0.0, 1.0)?;
        let deadline_slack = p.float_in("deadline_slack", 1.0, 1000.0)?;
        let slowdown = p.float_in("slowdown", 1.0, 1000.0)?;
        Ok(Config {
            cycle_ms,
            quantum_ms,
            window_slices,
            no_global: p.bool("no_global")?,
            no_heterogeneity: p.bool("no_heterogeneity")?,
            no_plan_ahead,
            solver: SolverOptions { backend, mip_gap, time_limit_s, defer_penalty },
            max_milp_jobs: p.int_at_least("max_milp_jobs", 1)?.min(1 << 20) as usize,
            max_plan_jobs: p.int_at_least("max_plan_jobs", 1)?.min(1 << 20) as usize,
            warm_start: p.bool("warm_start")?,
            event_cycles: p.bool("event_cycles")?,
            skip_full_cycles: p.bool("skip_full_cycles")?,
            slo_queues: list(&p.str("slo_queues")?),
            slo_norez_queues: list(&p.str("slo_norez_queues")?),
            rayon_admission: p.bool("rayon_admission")?,
            deadline_slack,
            be_horizon_ms: p.int_at_least("be_horizon_ms", 1)? as u64,
            slowdown,
            gpu_racks: list(&p.str("gpu_racks")?),
            default_runtime_ms: p.int_at_least("default_runtime_ms", 1)? as u64,
            slot_mb: p.int_at_least("slot_mb", 1)? as u64,
            slot_vcores: p.int_at_least("slot_vcores", 1)?.min(i64::from(u32::MAX)) as u32,
            elastic_asks: p.bool("elastic_asks")?,
            bind_on_heartbeat: p.bool("bind_on_heartbeat")?,
        })
    }
}
