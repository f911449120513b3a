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
            if !crate::common::node_has_room(ctx.cluster(), node) {
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
            let nodes: Vec<NodeId> = ctx.cluster().nodes_with_space().collect();
            if nodes.is_empty() {
                break;
            }
            for node in nodes {
                placed += crate::common::fill_node_with_app(ctx, app, node);
                if ctx.cluster().app(app).is_none_or(|a| a.pending_containers == 0) {
                    break;
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
