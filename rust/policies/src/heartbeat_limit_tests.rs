//! Every policy under the host's per-heartbeat limit (YARN's
//! per-node-heartbeat maximum-container-assignments, which the shim sets to
//! 8 by default): no heartbeat places more than the limit, and every ask is
//! served over later heartbeats. A gang is the one exception: the limit
//! cannot split it, so a gang starts whole while the heartbeat has any
//! assignment left (`Cluster::allocate_gang`).

use crate::test_support::{allocations, core_with, job_in, node};
use sojourn_core::{CoreConfig, Decision, Event, Harness, NodeId, Phase, Time};
use std::collections::BTreeMap;

/// Whether one heartbeat's decisions keep to `limit`: each container, and
/// each gang as a whole, placed while fewer than `limit` were.
fn within_limit(ds: &[Decision], limit: usize) -> Result<(), String> {
    let mut placed = 0;
    let mut gang = None;
    for d in ds {
        let Decision::Allocate { gang: g, .. } = d else { continue };
        if g.is_none() || *g != gang {
            if placed >= limit {
                return Err(format!("a heartbeat placed past its limit of {limit}: {ds:?}"));
            }
            gang = *g;
        }
        placed += 1;
    }
    Ok(())
}

#[test]
fn every_policy_places_at_most_the_limit_per_heartbeat_and_serves_every_ask() {
    const LIMIT: usize = 2;
    for info in crate::catalog() {
        let policy = crate::build(info.name, &BTreeMap::new()).expect("defaults are valid");
        let mut c = Harness::new(policy, CoreConfig { max_assignments: Some(LIMIT as u32), ..CoreConfig::default() });
        node(&mut c, 1, 8 * 1024, 8);
        node(&mut c, 2, 8 * 1024, 8);
        job_in(&mut c, 0, 1, "default", 5, Phase::Map);
        job_in(&mut c, 0, 2, "default", 5, Phase::Map);
        let mut placed = 0;
        // Heartbeats every second for a minute: time for the policies whose
        // cycles run on timers (tetrisched's 4 s) to plan.
        for s in 0..60u64 {
            let t = Time(s * 1000);
            c.handle_timeout(t);
            placed += allocations(&c.drain_decisions()).len();
            for n in [1, 2] {
                c.handle(t, Event::NodeHeartbeat { node: NodeId(n) }).expect("heartbeat");
                let ds: Vec<Decision> = c.drain_decisions();
                if let Err(e) = within_limit(&ds, LIMIT) {
                    panic!("{}: {e}", info.name);
                }
                placed += allocations(&ds).len();
            }
        }
        assert_eq!(placed, 10, "{}: {placed} of the 10 asks placed within a minute of heartbeats", info.name);
        assert!(c.core().cluster().check_invariants().is_ok(), "{}", info.name);
    }
}

/// TetriSched as shipped for the RM (`bind_on_heartbeat`) with gangs: a
/// plan's gang starts at one of its nodes' heartbeats, whole, even when it
/// is larger than the limit (which cannot split it); before, a gang past the
/// limit never started, and the RM benchmark's 100-container gangs under the
/// shim's default of 8 placed nothing in a minute.
#[test]
fn tetrisched_starts_a_gang_larger_than_the_limit_at_a_heartbeat() {
    const LIMIT: u32 = 2;
    let mut c = core_with(
        "tetrisched",
        &[("bind_on_heartbeat", "true"), ("elastic_asks", "false")],
        CoreConfig { max_assignments: Some(LIMIT), ..CoreConfig::default() },
    );
    node(&mut c, 1, 8 * 1024, 8);
    node(&mut c, 2, 8 * 1024, 8);
    job_in(&mut c, 0, 1, "default", 5, Phase::Map);
    job_in(&mut c, 0, 2, "default", 5, Phase::Map);
    let mut per_heartbeat = Vec::new();
    for s in 0..60u64 {
        let t = Time(s * 1000);
        c.handle_timeout(t);
        assert!(allocations(&c.drain_decisions()).is_empty(), "bound plans start at heartbeats only");
        for n in [1, 2] {
            c.handle(t, Event::NodeHeartbeat { node: NodeId(n) }).expect("heartbeat");
            let placed = allocations(&c.drain_decisions()).len();
            if placed > 0 {
                per_heartbeat.push(placed);
            }
        }
    }
    assert_eq!(per_heartbeat, vec![5, 5], "each job's gang whole, at one heartbeat each");
    assert!(c.core().cluster().check_invariants().is_ok());
}
