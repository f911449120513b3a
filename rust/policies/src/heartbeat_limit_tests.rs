//! Every policy under the host's per-heartbeat limit (YARN's
//! per-node-heartbeat maximum-container-assignments, which the shim sets to
//! 8 by default): no heartbeat places more than the limit, and every ask is
//! served over later heartbeats.

use crate::test_support::{allocations, job_in, node};
use sojourn_core::{CoreConfig, Decision, Event, Harness, NodeId, Phase, Time};
use std::collections::BTreeMap;

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
        let mut most = 0;
        // Heartbeats every second for a minute: time for the policies whose
        // cycles run on timers (tetrisched's 4 s) to plan.
        for s in 0..60u64 {
            let t = Time(s * 1000);
            c.handle_timeout(t);
            placed += allocations(&c.drain_decisions()).len();
            for n in [1, 2] {
                c.handle(t, Event::NodeHeartbeat { node: NodeId(n) }).expect("heartbeat");
                let ds: Vec<Decision> = c.drain_decisions();
                let now = allocations(&ds).len();
                most = most.max(now);
                placed += now;
            }
        }
        assert!(most <= LIMIT, "{}: a heartbeat placed {most} containers, the limit is {LIMIT}", info.name);
        assert_eq!(placed, 10, "{}: {placed} of the 10 asks placed within a minute of heartbeats", info.name);
        assert!(c.core().cluster().check_invariants().is_ok(), "{}", info.name);
    }
}
