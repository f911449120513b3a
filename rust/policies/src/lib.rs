//! Sojourn's policies, one module per policy, and the registry that builds
//! one by name from validated parameters ([`build`]) and lists them with
//! their parameter schemas ([`catalog`]).

#![forbid(unsafe_code)]

pub mod bigc;
pub mod capacity;
pub mod common;
pub mod fair;
pub mod fifo;
pub mod hawk;
#[cfg(test)]
mod heartbeat_limit_tests;
pub mod hfsp;
pub mod isolation;
pub mod kairos;
pub mod offload;
pub mod pigeon;
pub mod rayon;
#[cfg(test)]
pub(crate) mod test_support;
pub mod tetrisched;

use sojourn_core::{CoreError, ParamSpec, Params, Policy, Result};
use std::collections::BTreeMap;

/// A policy as `sojourn policies` lists it.
pub struct PolicyInfo {
    pub name: &'static str,
    pub doc: &'static str,
    pub params: &'static [ParamSpec],
    build: fn(&Params) -> Result<Box<dyn Policy>>,
}

/// Policies `sojourn compare` leaves out unless they are named with
/// `--policies`: tetrisched solves a MILP every cycle, and the default
/// FB-2009 day (5,894 jobs) had not finished after 25 min and 30,000 solves
/// (2026-11-28; 16 CBC aborts survived in the child). SLO mixes, GR_MIX at
/// RC256 and `simulate --policy tetrisched` run it.
pub const NOT_COMPARED_BY_DEFAULT: &[&str] = &["tetrisched"];

/// Policies that offload their solves ([`sojourn_core::Ctx::offload`]) when
/// the host runs offloaded work: the simulator then answers them from a
/// child process unless told `--solves inline`.
pub const OFFLOADS_SOLVES: &[&str] = &["tetrisched"];

/// Every implemented policy, in the order reports show them.
pub fn catalog() -> Vec<PolicyInfo> {
    vec![
    PolicyInfo {
        name: "fifo",
        doc: "YARN's FifoScheduler: apps by priority then submission, fill the heartbeating node",
        params: fifo::PARAMS,
        build: |_| Ok(Box::new(fifo::Fifo::new())),
    },
    PolicyInfo {
        name: "fair",
        doc: "YARN's FairScheduler: hierarchical weighted fair shares (fair/drf), min/max shares, reservations, optional preemption",
        params: fair::PARAMS,
        build: fair::build,
    },
    PolicyInfo {
        name: "capacity",
        doc: "YARN's CapacityScheduler: queue tree with elastic capacities, user limits, locality delay, optional proportional preemption",
        params: capacity::PARAMS,
        build: capacity::build,
    },
    PolicyInfo {
        name: "hfsp",
        doc: "HFSP: size-based with aging (a virtual cluster shared max-min), job-size estimation by training tasks, preemption wait/kill/suspend",
        params: hfsp::PARAMS,
        build: hfsp::build,
    },
    PolicyInfo {
        name: "kairos",
        doc: "Kairos: preemptive least-attained-service on each node (suspend, quantum W, starvation guard), central placement on the fewest tasks capped at N + Q, ties to the lowest variance; no runtime estimates",
        params: kairos::PARAMS,
        build: kairos::build,
    },
    PolicyInfo {
        name: "bigc",
        doc: "Big-C-like baseline (Kairos's thesis): short and long job classes with 95%/5% elastic shares, FIFO within a class, short tasks suspend the newest long tasks",
        params: bigc::PARAMS,
        build: bigc::build,
    },
    PolicyInfo {
        name: "sparrow",
        doc: "Sparrow: every job by batch probing (ratio d) to random nodes, FIFO node queues, late binding paying a network round trip",
        params: hawk::SPARROW,
        build: hawk::build_sparrow,
    },
    PolicyInfo {
        name: "hawk",
        doc: "Hawk: short jobs by Sparrow probing over the cluster, long jobs by central least-work-left on estimates, a short-only partition, randomized stealing",
        params: hawk::HAWK,
        build: hawk::build_hawk,
    },
    PolicyInfo {
        name: "lwl",
        doc: "Fully centralized least-work-left on task estimates for every job (Hawk's centralized baseline)",
        params: hawk::LWL,
        build: hawk::build_lwl,
    },
    PolicyInfo {
        name: "split",
        doc: "Split cluster (Hawk's baseline): short jobs probe only the short partition, long jobs least-work-left on the rest",
        params: hawk::SPLIT,
        build: hawk::build_split,
    },
    PolicyInfo {
        name: "eagle",
        doc: "Eagle: Hawk's hybrid without stealing, plus Succinct State Sharing (short probes avoid nodes with long tasks), Sticky Batch Probing, SRPT node queues with a starvation bound, and at least 20 probes per short job",
        params: hawk::EAGLE,
        build: hawk::build_eagle,
    },
    PolicyInfo {
        name: "dlwl_srpt",
        doc: "DLWL+SRPT (Eagle's baseline, distributed Yaq): every task placed by distributed least-work-left on heartbeat snapshots of the queues plus noise, SRPT node queues with a starvation bound, a short partition",
        params: hawk::DLWL_SRPT,
        build: hawk::build_dlwl_srpt,
    },
    PolicyInfo {
        name: "pigeon",
        doc: "Pigeon: groups of N_w workers with one master each; a job's tasks split evenly over the masters; per master a short and a long FIFO queue served by weighted fair queuing (weight W, inf = strict priority) and reserved workers for short tasks",
        params: pigeon::PARAMS,
        build: pigeon::build,
    },
    PolicyInfo {
        name: "tetrisched",
        doc: "TetriSched: pending gangs as STRL (space-time alternatives, deadlines, values) compiled each cycle into one MILP (good_lp, CBC) over dynamically partitioned nodes and a plan-ahead window; launches what starts now, re-plans the rest; ablations NG/NH/NP; greedy NG plan as the solver fallback",
        params: tetrisched::PARAMS,
        build: tetrisched::build,
    },
    PolicyInfo {
        name: "rayon",
        doc: "Rayon/CapacityScheduler (TetriSched's baseline): greedy reservation admission of SLO jobs into a capacity-over-time plan, reservation queues guaranteed their capacity, a FIFO best-effort queue for BE, rejected and expired jobs, kill preemption of best-effort containers for reservations",
        params: rayon::PARAMS,
        build: rayon::build,
    }]
}

/// Builds the policy `name` with the given parameters (keys without the
/// `yarn.scheduler.sojourn.<policy>.` prefix). Unknown policies, unknown keys
/// and bad values are errors naming them.
pub fn build(name: &str, given: &BTreeMap<String, String>) -> Result<Box<dyn Policy>> {
    let all = catalog();
    let info = all.iter().find(|p| p.name == name).ok_or_else(|| {
        let names: Vec<&str> = all.iter().map(|p| p.name).collect();
        CoreError::Config(format!("unknown policy '{name}' (known: {})", names.join(", ")))
    })?;
    let params = Params::validate(name, info.params, given)?;
    (info.build)(&params)
}
