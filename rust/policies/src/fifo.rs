//! `fifo`: YARN's FifoScheduler (yarn.md §1, `scheduler/fifo/FifoScheduler`).
//!
//! What it models: one queue; applications in order of application priority
//! (higher first), then submission time, then id; on each node heartbeat the
//! first application with demand is served first, its asks in request-priority
//! order (MapReduce: AM 0, reduces 10, maps 20), and as many containers as fit
//! are placed on the node, node-local, then rack-local, then off-switch
//! requests alike in the same heartbeat (FifoScheduler has no delay
//! scheduling). An app whose next ask does not fit does not block the apps
//! behind it, as in FifoScheduler, which moves on to the next app.
//!
//! What it leaves out: FifoScheduler's per-user metrics and its
//! `assignMultiple`-free quirks around the AM limit; no preemption.

use crate::common::DemandIndex;
use sojourn_core::{AppId, Ctx, Event, NodeId, ParamSpec, Policy};
use std::cmp::Reverse;

pub const PARAMS: &[ParamSpec] = &[];

/// Apps ordered by (priority desc, submit time, id).
type FifoKey = (Reverse<i32>, sojourn_core::Time, AppId);

#[derive(Default)]
pub struct Fifo {
    demand: DemandIndex<FifoKey>,
}

impl Fifo {
    pub fn new() -> Fifo {
        Fifo::default()
    }
}

impl Policy for Fifo {
    fn name(&self) -> &'static str {
        "fifo"
    }

    fn on_event(&mut self, ctx: &mut Ctx<'_>, event: &Event) {
        self.demand.observe(ctx.cluster(), event, |a| (Reverse(a.spec.priority), a.submit, a.id()));
    }

    fn on_node_heartbeat(&mut self, ctx: &mut Ctx<'_>, node: NodeId) {
        let mut served = Vec::new();
        for app in self.demand.iter() {
            if crate::common::fill_node_with_app(ctx, app, node) > 0 {
                served.push(app);
            }
            if !crate::common::heartbeat_may_assign(ctx.cluster(), node) {
                break;
            }
        }
        for app in served {
            self.demand.refresh(ctx.cluster(), app);
        }
    }

    /// Event-driven pass: apps in order, each placed on the free nodes in
    /// node order, the same placements repeated heartbeats would give with
    /// every node heartbeating at once, without offering every free node to
    /// every waiting app.
    fn on_schedule(&mut self, ctx: &mut Ctx<'_>) {
        let mut served = Vec::new();
        for app in self.demand.iter() {
            let mut placed = 0;
            // A cursor rather than a list of every free node: filling only
            // takes space away, so the walk meets the nodes a snapshot would.
            let Some(mut node) = ctx.cluster().next_node_with_space(NodeId(0)) else { break };
            loop {
                placed += crate::common::fill_node_with_app(ctx, app, node);
                if ctx.cluster().app(app).is_none_or(|a| a.pending_containers == 0) {
                    break;
                }
                match node.0.checked_add(1).and_then(|n| ctx.cluster().next_node_with_space(NodeId(n))) {
                    Some(n) => node = n,
                    None => break,
                }
            }
            if placed > 0 {
                served.push(app);
            }
        }
        for app in served {
            self.demand.refresh(ctx.cluster(), app);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::{allocations, core, job_in, node_in_rack};
    use sojourn_core::{AppId, Ask, Event, Harness, Locality, NodeId, Phase, Priority, Resources, Time};

    fn node_on(c: &mut Harness, id: u32, rack: &str) {
        node_in_rack(c, id, rack, 2048, 2);
    }

    fn heartbeat(c: &mut Harness, n: u32) -> Vec<(u32, u32)> {
        c.handle(Time(1), Event::NodeHeartbeat { node: NodeId(n) }).expect("heartbeat");
        allocations(&c.drain_decisions()).iter().map(|a| (a.0, a.2)).collect()
    }

    /// FifoScheduler serves node-local, rack-local and off-switch requests in
    /// one heartbeat: an ask preferring n0 (rack /r0) is placed on n1 of
    /// another rack when n1 heartbeats first. An ask that does not relax its
    /// locality waits for its own node, and the app behind it is served.
    #[test]
    fn off_switch_in_the_same_heartbeat_and_strict_locality_waits() {
        let mut c = core("fifo", &[]);
        node_on(&mut c, 0, "/r0");
        node_on(&mut c, 1, "/r1");
        job_in(&mut c, 0, 1, "default", 0, Phase::Map);
        let mut strict = Ask::new(Priority::MAP, Resources::new(1024, 1), 1, Phase::Map);
        strict.locality = vec![Locality::Node(NodeId(0), 1), Locality::Rack("/r0".into(), 1)];
        strict.relax_locality = false;
        c.handle(Time(0), Event::AsksUpdated { app: AppId(1), asks: vec![strict] }).expect("ask");
        job_in(&mut c, 0, 2, "default", 0, Phase::Map);
        let mut loose = Ask::new(Priority::MAP, Resources::new(1024, 1), 2, Phase::Map);
        loose.locality = vec![Locality::Node(NodeId(0), 2), Locality::Rack("/r0".into(), 2)];
        c.handle(Time(0), Event::AsksUpdated { app: AppId(2), asks: vec![loose] }).expect("ask");
        assert_eq!(heartbeat(&mut c, 1), vec![(2, 1), (2, 1)], "app 1 may not leave n0; app 2 goes off-switch");
        assert_eq!(heartbeat(&mut c, 0), vec![(1, 0)]);
    }
}
