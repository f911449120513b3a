//! Jobs for the simulator's golden tests.

use sojourn_core::{Phase, Priority, Resources, Time};
use sojourn_sim::workload::{JobSpec, TaskGroup};

/// Job `id` submitted at `submit_s` with one 1 GB / 1 vcore map task per
/// entry of `tasks_s` (its run time in seconds).
pub fn job(id: u64, submit_s: u64, tasks_s: &[u64]) -> JobSpec {
    map_job(id, Time(submit_s * 1000), tasks_s.iter().map(|s| s * 1000).collect())
}

/// Job `id` submitted at `submit` with one 1 GB / 1 vcore map task per
/// entry of `durations_ms`.
pub fn map_job(id: u64, submit: Time, durations_ms: Vec<u64>) -> JobSpec {
    JobSpec {
        id,
        name: format!("job{id}"),
        submit,
        queue: "default".into(),
        user: "u".into(),
        priority: 0,
        groups: vec![TaskGroup {
            phase: Phase::Map,
            priority: Priority::MAP,
            resources: Resources::new(1024, 1),
            durations_ms,
            hosts: vec![],
        }],
        deadline: None,
        value: None,
        dag: None,
    }
}

/// [`job`] with a reduce phase of one 1 GB / 1 vcore task per entry of `reduces_s`.
#[allow(dead_code)] // each test binary compiles this module; not all use it
pub fn map_reduce_job(id: u64, submit_s: u64, maps_s: &[u64], reduces_s: &[u64]) -> JobSpec {
    let mut j = job(id, submit_s, maps_s);
    j.groups.push(TaskGroup {
        phase: Phase::Reduce,
        priority: Priority::REDUCE,
        resources: Resources::new(1024, 1),
        durations_ms: reduces_s.iter().map(|s| s * 1000).collect(),
        hosts: vec![],
    });
    j
}
