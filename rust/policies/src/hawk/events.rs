//! The core's calls into the policy: events, heartbeats, wake-ups.

use super::{us, Hawk, NodeState, Pending, Req, ReqState};
use sojourn_core::{Cluster, Ctx, Decision, Event, NodeId, Policy, Priority, Time};
use std::collections::BTreeSet;

impl Policy for Hawk {
    fn name(&self) -> &'static str {
        self.name
    }

    fn on_event(&mut self, ctx: &mut Ctx<'_>, event: &Event) {
        self.heartbeat(ctx);
        let now = us(ctx.now);
        match event {
            Event::NodeAdded(spec) => {
                self.epochs += 1;
                // (a plain ask, sent to any node, may not fit a smaller one)
                self.views.busy_skip &= self.min_capacity.fits_in(&spec.capacity);
                self.freeze_snapshot(spec.node);
                self.nodes.insert(spec.node, NodeState::new(self.epochs));
                self.layout_stale = true;
                // the window grew: reqs above it get more entries
                self.refill.extend(self.reqs.keys().copied());
            }
            Event::NodeResourceUpdated { .. } => {
                self.layout_stale = true;
                self.views.busy_skip = false;
                self.refill.extend(self.reqs.keys().copied());
            }
            Event::NodeRemoved { node } => {
                self.layout_stale = true;
                let mut lost = BTreeSet::new();
                self.set_bit(*node, false);
                self.freeze_snapshot(*node);
                if let Some(ns) = self.nodes.remove(node) {
                    for e in ns.queue.iter() {
                        self.lose(&e);
                        lost.insert(e.req);
                    }
                }
                self.sweep(ctx.cluster());
                for req in lost {
                    self.top_up(ctx, req, now);
                }
            }
            Event::AsksUpdated { app, asks } => {
                for ask in asks {
                    let req = (*app, ask.priority);
                    let long = self.is_long(ctx.cluster(), *app, ask);
                    let known = self.reqs.get(&req).map(|st| st.view);
                    self.ask_updated(ctx.cluster(), *app, ask, known.is_some());
                    match known {
                        Some(view) => self.ask_changed(ctx.cluster(), req, view),
                        None => {
                            let view = self.views.add(ctx.cluster(), req);
                            self.reqs.insert(req, ReqState { long, live: 0, fresh: None, view });
                        }
                    }
                    self.top_up(ctx, req, now);
                }
            }
            Event::AppRemoved { app } => {
                let reqs: Vec<Req> =
                    self.reqs.range((*app, Priority(0))..=(*app, Priority(u32::MAX))).copied().collect();
                for r in reqs {
                    if let Some(st) = self.reqs.remove(&r) {
                        self.app_gone(*app, st.view);
                    }
                    self.starved.remove(&r);
                }
                let had = self.runs_per_app.contains_key(app);
                for node in if had { self.sweep(ctx.cluster()) } else { Vec::new() } {
                    self.serve(ctx, node, now, true);
                }
            }
            Event::ContainerCompleted { container, .. } => {
                if let Some(run) = self.forget(*container) {
                    self.serve(ctx, run.node, now, true);
                }
            }
            Event::Rejected { decision: Decision::Allocate { container, app, priority, node, .. }, .. } => {
                let view = self.view_of((*app, *priority));
                self.ask_changed(ctx.cluster(), (*app, *priority), view);
                self.forget(*container);
                self.top_up(ctx, (*app, *priority), now);
                self.serve(ctx, *node, now, true);
            }
            _ => {}
        }
        self.settle(ctx);
    }

    /// Nodes serve their queues as things happen (arrivals, finishes,
    /// get-task answers); a heartbeat only retries what is starved and lets
    /// the node look at its queue again.
    fn on_node_heartbeat(&mut self, ctx: &mut Ctx<'_>, node: NodeId) {
        self.heartbeat(ctx);
        let now = us(ctx.now);
        self.serve(ctx, node, now, false);
        self.settle(ctx);
    }

    fn on_schedule(&mut self, ctx: &mut Ctx<'_>) {
        self.heartbeat(ctx);
        self.settle(ctx);
    }

    fn next_wake(&self) -> Option<Time> {
        self.timers.next()
    }

    fn on_wake(&mut self, ctx: &mut Ctx<'_>) {
        self.heartbeat(ctx);
        while let Some(w) = self.timers.pop_due(ctx.now) {
            match self.pending.remove(w.slot) {
                Some(Pending::Arrive(batch)) => {
                    for (node, epoch, entry) in batch {
                        if self.nodes.get(&node).is_some_and(|n| n.epoch == epoch) {
                            self.arrive(ctx, node, entry, w.due_us);
                        } else {
                            self.lose(&entry);
                            self.top_up(ctx, entry.req, w.due_us);
                        }
                    }
                }
                Some(Pending::Fetched { node, epoch, entry, hold, am, index }) => {
                    if self.nodes.get(&node).is_some_and(|n| n.epoch == epoch) {
                        let freed = self.fetched(ctx, node, entry, hold, am, index, w.due_us);
                        self.serve(ctx, node, w.due_us, freed);
                    } else {
                        // the node left while asking
                        if am {
                            self.ams = self.ams.saturating_sub(1);
                        }
                        self.lose(&entry);
                        self.top_up(ctx, entry.req, w.due_us);
                    }
                }
                Some(Pending::Rejected { entry, bits }) => self.rejected(ctx, entry, bits, w.due_us),
                None => {}
            }
        }
        self.settle(ctx);
    }

    fn describe(&self, _cluster: &Cluster, _now: Time) -> serde_json::Value {
        serde_json::json!({
            "policy": self.name,
            "nodes": self.nodes.len(),
            "short_partition": self.short.len(),
            "queued": self.nodes.values().map(|n| n.queue.len()).sum::<usize>(),
            "in_flight": self.pending.len(),
            "running": self.running.len(),
            "starved": self.starved.iter().map(|(a, p)| format!("{a}/{p}")).collect::<Vec<_>>(),
        })
    }
}
