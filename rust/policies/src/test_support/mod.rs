//! Helpers for the policies' golden tests: a `Core` driven by events at
//! given times, and the decisions it answers with; and, in [`props`], the
//! property-test driver every policy shares.

pub mod props;

use sojourn_core::{
    AppId, AppSpec, Ask, ContainerId, CoreConfig, Decision, Event, Harness, NodeId, NodeSpec, Outcome, Phase,
    PreemptMode, Priority, Resources, Time,
};
use std::collections::BTreeMap;

/// A core running `policy` with `kv` parameters.
pub fn core(policy: &str, kv: &[(&str, &str)]) -> Harness {
    core_with(policy, kv, CoreConfig::default())
}

/// A core running `policy` with `kv` parameters under the host's `config`.
pub fn core_with(policy: &str, kv: &[(&str, &str)], config: CoreConfig) -> Harness {
    let given: BTreeMap<String, String> = kv.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let p = crate::build(policy, &given).expect("valid parameters");
    Harness::new(p, config)
}

/// Checks `kv` against `policy`'s schema, returning the error text.
pub fn config_error(policy: &str, kv: &[(&str, &str)]) -> String {
    let given: BTreeMap<String, String> = kv.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    match crate::build(policy, &given) {
        Ok(_) => String::new(),
        Err(e) => e.to_string(),
    }
}

pub fn node(c: &mut Harness, id: u32, mb: u64, vcores: u32) {
    node_in_rack(c, id, "/r", mb, vcores);
}

/// Node `n<id>` in `rack`.
pub fn node_in_rack(c: &mut Harness, id: u32, rack: &str, mb: u64, vcores: u32) {
    let spec = NodeSpec {
        node: NodeId(id),
        name: format!("n{id}"),
        rack: rack.into(),
        labels: vec![],
        capacity: Resources::new(mb, vcores),
    };
    c.handle(Time::ZERO, Event::NodeAdded(spec)).expect("node");
}

/// App `id` in `queue`, submitted at `t` (ms), asking `tasks` containers of
/// 1 GB and 1 vcore in `phase` at that phase's MapReduce priority.
pub fn job_in(c: &mut Harness, t: u64, id: u32, queue: &str, tasks: u32, phase: Phase) {
    let spec = AppSpec::new(AppId(id), queue, "u");
    c.handle(Time(t), Event::AppAdded(spec)).expect("app");
    let prio = match phase {
        Phase::Am => Priority::AM,
        Phase::Reduce => Priority::REDUCE,
        _ => Priority::MAP,
    };
    let ask = Ask::new(prio, Resources::new(1024, 1), tasks, phase);
    c.handle(Time(t), Event::AsksUpdated { app: AppId(id), asks: vec![ask] }).expect("ask");
}

/// Fires the timers due by `t`, then offers every node (event-driven).
pub fn schedule(c: &mut Harness, t: u64) -> Vec<Decision> {
    c.handle_timeout(Time(t));
    c.handle(Time(t), Event::ScheduleAll).expect("schedule");
    c.drain_decisions()
}

/// Fires the timers due by `t` only.
pub fn tick(c: &mut Harness, t: u64) -> Vec<Decision> {
    c.handle_timeout(Time(t));
    c.drain_decisions()
}

pub fn finish(c: &mut Harness, t: u64, container: ContainerId) -> Vec<Decision> {
    c.handle_timeout(Time(t));
    c.handle(Time(t), Event::ContainerCompleted { container, outcome: Outcome::Finished }).expect("complete");
    c.drain_decisions()
}

/// (app, container, node) of each allocation.
pub fn allocations(ds: &[Decision]) -> Vec<(u32, ContainerId, u32)> {
    ds.iter()
        .filter_map(|d| match d {
            Decision::Allocate { app, container, node, .. } => Some((app.0, *container, node.0)),
            _ => None,
        })
        .collect()
}

pub fn suspended(ds: &[Decision]) -> Vec<ContainerId> {
    ds.iter()
        .filter_map(|d| match d {
            Decision::Preempt { container, mode: PreemptMode::Suspend } => Some(*container),
            _ => None,
        })
        .collect()
}

pub fn resumed(ds: &[Decision]) -> Vec<ContainerId> {
    ds.iter()
        .filter_map(|d| match d {
            Decision::Resume { container } => Some(*container),
            _ => None,
        })
        .collect()
}
