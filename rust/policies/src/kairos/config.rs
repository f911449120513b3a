//! Kairos's parameters (delgado.md §3.6): the YARN testbed's values as
//! defaults (N = the node's vcores, Q = 4, W = 50 s); the simulation setting
//! of the thesis is `extra_tasks=2` on one-vcore nodes with `quantum_ms`
//! 100 000 (Yahoo) or 10 000 000 (Google). Where the thesis is ambiguous
//! (delgado.md §6.10–§6.14) the alternative is a parameter.

use sojourn_core::{ParamKind, ParamSpec, Params, Result};

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec::new(
        "cores",
        ParamKind::Int,
        "0",
        "N: tasks a node runs at once (0: the node's vcores, one task per vcore as in the testbed)",
    ),
    ParamSpec::new(
        "extra_tasks",
        ParamKind::Int,
        "4",
        "Q: tasks a node may hold beyond N, suspended; the central scheduler caps a node at N + Q (testbed 4, simulation 2)",
    ),
    ParamSpec::new(
        "quantum_ms",
        ParamKind::Int,
        "50000",
        "W: the processor-sharing window; at its end the running task yields to a suspended one with less attained service",
    ),
    ParamSpec::new(
        "hysteresis_ms",
        ParamKind::Int,
        "0",
        "h: swap at quantum end only if the suspended task's attained service is at most the running one's minus h (thesis 0; authors' code W/2)",
    ),
    ParamSpec::new(
        "starvation",
        ParamKind::Choice(&["waited", "preempted"]),
        "waited",
        "starvation guard: a task suspended for starvation_quanta·W runs next (thesis prose), or a task preempted more than starvation_quanta times gets a protected window at its next quantum end (authors' code)",
    ),
    ParamSpec::new(
        "starvation_quanta",
        ParamKind::Int,
        "3",
        "the starvation counter S (thesis simulation 3; 0 disables the guard)",
    ),
    ParamSpec::new(
        "protect_quanta",
        ParamKind::Int,
        "2",
        "M: quanta a task saved from starvation runs without being preempted (authors' code 2)",
    ),
    ParamSpec::new(
        "tie_break",
        ParamKind::Choice(&["var", "random", "sum"]),
        "var",
        "among nodes with the fewest tasks: lowest variance of attained service (thesis), a random one, or lowest total attained service",
    ),
    ParamSpec::new(
        "stats_interval_ms",
        ParamKind::Int,
        "1000",
        "Δ: how often the central scheduler re-reads every node's attained-service figures, as heartbeats carry them (the authors' RM: 1 s); 0 = at every dispatch",
    ),
    ParamSpec::new(
        "lazy_quanta",
        ParamKind::Bool,
        "true",
        "no wake-up at a quantum end that cannot change anything (a task with no suspended task on its node; kairos/dormant.rs): the quantum_ends metric then lags by such tasks' ends until they stop; false wakes at every end (metric exact mid-run, W restarted from a late wake-up)",
    ),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TieBreak {
    Var,
    Random,
    Sum,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Starvation {
    /// Suspended for S·W without a turn: resumed next, protected M·W.
    Waited,
    /// Preempted more than S times: at its next quantum end it keeps running
    /// for M·W (the authors' YARN code).
    Preempted,
}

#[derive(Clone, Debug)]
pub struct Config {
    /// N; 0 = the node's vcores.
    pub cores: u32,
    pub extra: u32,
    pub quantum_ms: u64,
    pub hysteresis_ms: u64,
    pub starvation: Starvation,
    pub starvation_quanta: u32,
    pub protect_quanta: u32,
    pub tie_break: TieBreak,
    pub stats_interval_ms: u64,
    /// Tasks may be dormant between quantum ends ([`super::dormant`]).
    pub lazy_quanta: bool,
}

impl Config {
    pub fn from_params(p: &Params) -> Result<Config> {
        Ok(Config {
            cores: p.int_at_least("cores", 0)? as u32,
            extra: p.int_at_least("extra_tasks", 0)? as u32,
            quantum_ms: p.int_at_least("quantum_ms", 1)? as u64,
            hysteresis_ms: p.int_at_least("hysteresis_ms", 0)? as u64,
            starvation: match p.str("starvation")?.as_str() {
                "preempted" => Starvation::Preempted,
                _ => Starvation::Waited,
            },
            starvation_quanta: p.int_at_least("starvation_quanta", 0)? as u32,
            protect_quanta: p.int_at_least("protect_quanta", 0)? as u32,
            tie_break: match p.str("tie_break")?.as_str() {
                "random" => TieBreak::Random,
                "sum" => TieBreak::Sum,
                _ => TieBreak::Var,
            },
            stats_interval_ms: p.int_at_least("stats_interval_ms", 0)? as u64,
            lazy_quanta: p.bool("lazy_quanta")?,
        })
    }
}
