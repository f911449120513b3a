//! Quantum ends that cannot change anything are not woken for (issue 14:
//! millions of quantum ends a day on thousands of nodes, most of them on
//! nodes with nothing suspended).
//!
//! At the end of a running task's quantum (K4) it yields only to a
//! suspended task on its node, or takes a protected window (the starvation
//! guard). On a node with no task to resume, an unprotected task the guard
//! will not pick just starts the next quantum W, so its ends come every W
//! and only the `quantum_ends` count moves. Such a task is *dormant*: no
//! timer is set; its `quantum_end` is the first end not yet counted. When a
//! task on its node is suspended (the only way a node gains a task to
//! resume) or the task itself stops running, the ends that passed are
//! counted (those at the current time included: wake-ups fire before the
//! events of their time) and, if it still runs, its next end gets a timer
//! as it would have had.
//!
//! Two differences a host can see, none in the simulator (which fires every
//! wake-up at its time and, short of its time horizon, stops only when no
//! task runs): a host
//! that wakes late (a live cluster) keeps a dormant task's ends on the W
//! grid of its first, where a timer fired late would have restarted W from
//! the late wake-up; and `quantum_ends` takes a dormant task's ends when its
//! dormancy ends, so read mid-run (or at a run cut short with tasks running)
//! it lags by the ends of the tasks still dormant.

use super::{Kairos, Starvation};
use sojourn_core::{Cluster, ContainerId, Ctx, NodeId, Time};

impl Kairos {
    /// Starts a quantum W for running task `c`: a timer at its end, or none
    /// if its ends can do nothing until its node changes.
    pub(crate) fn next_quantum(&mut self, ctx: &mut Ctx<'_>, c: ContainerId) {
        let end = ctx.now.plus(self.cfg.quantum_ms.max(1));
        if !(self.lazy_quanta && self.may_sleep(ctx.cluster(), c, end)) {
            self.start_quantum(ctx, c, self.cfg.quantum_ms);
            return;
        }
        if let Some(t) = self.tasks.get_mut(&c) {
            t.quantum_end = Some(end);
            t.suspended_since = None;
            if !t.dormant {
                t.dormant = true;
                *self.dormant_on.entry(t.node).or_default() += 1;
            }
        }
    }

    /// Whether every quantum end of `c` from `end` on only starts another
    /// quantum while its node keeps no task to resume: not protected then,
    /// not due the guard of the authors' code, nothing on the node to resume.
    fn may_sleep(&self, cluster: &Cluster, c: ContainerId, end: Time) -> bool {
        let Some(t) = self.tasks.get(&c) else { return false };
        let guarded = self.cfg.starvation == Starvation::Preempted
            && self.cfg.starvation_quanta > 0
            && t.preemptions > self.cfg.starvation_quanta;
        t.protected_until <= end && !guarded && !self.has_task_to_resume(cluster, t.node)
    }

    /// Whether `node` holds a task [`Self::next_to_resume`] could pick: one
    /// the mirror does not show running.
    pub(crate) fn has_task_to_resume(&self, cluster: &Cluster, node: NodeId) -> bool {
        self.on_node.get(&node).into_iter().flatten().any(|c| !Self::is_running(cluster, *c))
    }

    /// Counts the quantum ends of `c` that passed while it was dormant and
    /// ends its dormancy; returns the next end, if it was dormant.
    pub(crate) fn end_dormancy(&mut self, ctx: &mut Ctx<'_>, c: ContainerId) -> Option<Time> {
        let w = self.cfg.quantum_ms.max(1);
        let t = self.tasks.get_mut(&c).filter(|t| t.dormant)?;
        t.dormant = false;
        if let Some(n) = self.dormant_on.get_mut(&t.node) {
            *n -= 1;
            if *n == 0 {
                self.dormant_on.remove(&t.node);
            }
        }
        let first = t.quantum_end?;
        let passed = if first > ctx.now { 0 } else { ctx.now.since(first) / w + 1 };
        if passed > 0 {
            ctx.metrics.count("quantum_ends", passed);
        }
        Some(first.plus(passed * w))
    }

    /// `node` may have gained a task to resume: its dormant tasks' next
    /// quantum ends get their timers.
    pub(crate) fn wake_dormant(&mut self, ctx: &mut Ctx<'_>, node: NodeId) {
        if !self.dormant_on.contains_key(&node) {
            return; // (most suspensions are on nodes that had one already)
        }
        let dormant: Vec<ContainerId> = match self.on_node.get(&node) {
            Some(set) => set.iter().copied().filter(|c| self.tasks.get(c).is_some_and(|t| t.dormant)).collect(),
            None => return,
        };
        for c in dormant {
            if let Some(next) = self.end_dormancy(ctx, c) {
                if let Some(t) = self.tasks.get_mut(&c) {
                    t.quantum_end = Some(next);
                }
                self.timers.set(ctx.now, next, c);
            }
        }
    }

    /// The quantum ends a dormant task's would-be timers have passed by
    /// `now` but that are not counted yet (for tests comparing with a run
    /// that woke for each).
    #[cfg(test)]
    pub(crate) fn uncounted_quantum_ends(&self, now: Time) -> u64 {
        let w = self.cfg.quantum_ms.max(1);
        self.tasks
            .values()
            .filter(|t| t.dormant)
            .filter_map(|t| t.quantum_end)
            .map(|first| if first > now { 0 } else { now.since(first) / w + 1 })
            .sum()
    }
}
