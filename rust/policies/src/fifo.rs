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
        for app in self.demand.in_order() {
            crate::common::fill_node_with_app(ctx, app, node);
            self.demand.refresh(ctx.cluster(), app);
            if !crate::common::node_has_room(ctx.cluster(), node) {
                break;
            }
        }
    }
}
