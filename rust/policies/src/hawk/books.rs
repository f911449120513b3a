//! The policy's books of its containers (per node, per app, the AM
//! share) and its timers.

use super::{Hawk, Pending, Run, Wake};
use sojourn_core::{Cluster, ContainerId, Ctx, NodeId, Time};
use std::collections::BTreeSet;

impl Hawk {
    /// Forgets containers the mirror no longer has (a node or an app went);
    /// returns the nodes that got room.
    pub(crate) fn sweep(&mut self, cluster: &Cluster) -> Vec<NodeId> {
        let gone: Vec<ContainerId> = self.running.keys().copied().filter(|c| cluster.container(*c).is_none()).collect();
        let mut freed = BTreeSet::new();
        for c in gone {
            if let Some(run) = self.forget(c) {
                freed.insert(run.node);
            }
        }
        freed.into_iter().collect()
    }

    /// Enters a container the policy started in its books.
    pub(crate) fn record(&mut self, container: ContainerId, run: Run) {
        *self.runs_per_app.entry(run.app).or_insert(0) += 1;
        if run.central {
            self.freeze_snapshot(run.node);
        }
        if let Some(ns) = self.nodes.get_mut(&run.node) {
            if run.am {
                ns.ams += 1;
            }
            if run.long {
                ns.running_long += 1;
            } else {
                ns.running_short += 1;
            }
        }
        if run.central {
            self.nodes.push_central_run(run.node, (container, run.est_us, run.start_us));
        }
        self.running.insert(container, run);
    }

    /// Removes one of the policy's containers from its books.
    pub(crate) fn forget(&mut self, c: ContainerId) -> Option<Run> {
        let run = self.running.remove(&c)?;
        if let Some(k) = self.runs_per_app.get_mut(&run.app) {
            *k -= 1;
            if *k == 0 {
                self.runs_per_app.remove(&run.app);
            }
        }
        if run.am {
            self.ams = self.ams.saturating_sub(1);
        }
        if run.central {
            self.freeze_snapshot(run.node);
        }
        if let Some(ns) = self.nodes.get_mut(&run.node) {
            if run.am {
                ns.ams = ns.ams.saturating_sub(1);
            }
            if run.long {
                ns.running_long = ns.running_long.saturating_sub(1);
            } else {
                ns.running_short = ns.running_short.saturating_sub(1);
            }
        }
        if run.central {
            self.nodes.remove_central_run(run.node, c);
        }
        if run.long && run.central {
            self.unassign_long(run.node);
        }
        Some(run)
    }

    /// Sets a wake-up for `p` at `due_us`.
    pub(crate) fn after(&mut self, ctx: &Ctx<'_>, due_us: u64, p: Pending) {
        self.seq += 1;
        let slot = self.pending.insert(p, self.seq, due_us);
        let at = Time(due_us.div_ceil(1000));
        self.timers.set(ctx.now, at, Wake { due_us, seq: self.seq, slot });
    }
}
