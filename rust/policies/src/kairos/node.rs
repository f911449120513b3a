//! Kairos's node scheduler (delgado.md §3.3, Algorithm 2; K2–K4 of §5):
//! least attained service with preemption by suspension, a quantum W, and
//! the starvation guard. The node's cores are its vcores: a running task
//! holds its vcores, a suspended one only its memory (the mirror's rule), so
//! "a core is free" is "the suspended task's vcores fit again".

use super::{Kairos, Starvation};
use sojourn_core::{Cluster, ContainerId, ContainerState, Ctx, NodeId, PreemptMode, Resources, Time};
use std::cell::{Ref, RefCell};

/// Variance of attained service over `tasks` (live service; 0 for fewer
/// than two tasks): the central scheduler's tie-break (§3.4, §6.14).
pub fn variance(cluster: &Cluster, tasks: impl Iterator<Item = ContainerId>, now: Time) -> f64 {
    variance_of(tasks.map(|c| Kairos::service(cluster, c, now)))
}

/// Population variance of attained services (ms), 0 for fewer than two.
pub(crate) fn variance_of(services: impl Iterator<Item = u64>) -> f64 {
    // A node holds N + Q tasks at most (a handful): on the stack, as the
    // dispatcher re-reads every node each Δ.
    let mut small = [0.0f64; 16];
    let mut spill = Vec::new();
    let mut n = 0;
    for s in services {
        let x = s as f64;
        if n < small.len() {
            small[n] = x;
        } else {
            if n == small.len() {
                spill.extend_from_slice(&small);
            }
            spill.push(x);
        }
        n += 1;
    }
    let xs = if n <= small.len() { &small[..n] } else { &spill[..] };
    if xs.len() < 2 {
        return 0.0;
    }
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / xs.len() as f64
}

/// What Kairos read from one node, kept while the node is unchanged
/// ([`sojourn_core::Node::changes`]) and Kairos has not changed its tasks or
/// their protection there: the central scheduler re-reads every open node
/// each Δ and looks at them one by one for each task it places (K6), so it
/// reads this instead of the mirror.
#[derive(Clone, Debug)]
pub(crate) struct NodeView {
    changes: u64,
    /// K2's most room: free now plus what suspending every running task
    /// that is not protected would free.
    room: Resources,
    /// The room holds until then: the earliest end of a running task's
    /// protection (it may be suspended after).
    room_until: Time,
}

fn forget(views: &RefCell<Vec<Option<NodeView>>>, node: NodeId) {
    if let Some(v) = views.borrow_mut().get_mut(node.0 as usize) {
        *v = None;
    }
}

/// Node ids past this are not cached (ids are small and dense in practice).
const MAX_VIEWED_NODE: u32 = 1 << 22;

impl Kairos {
    /// The node's view at `now`, read again if the node or Kairos's tasks
    /// there changed, or a protection ended.
    pub(crate) fn view<'a>(&'a self, cluster: &Cluster, node: NodeId, now: Time) -> Option<Ref<'a, NodeView>> {
        let n = cluster.node(node)?;
        if node.0 >= MAX_VIEWED_NODE {
            return None;
        }
        let i = node.0 as usize;
        let fresh = {
            let views = self.views.borrow();
            views.get(i).and_then(|v| v.as_ref()).is_some_and(|v| v.changes == n.changes && now < v.room_until)
        };
        if !fresh {
            let view = self.read_view(cluster, node, now);
            let mut views = self.views.borrow_mut();
            if views.len() <= i {
                views.resize(i + 1, None);
            }
            views[i] = view;
        }
        Ref::filter_map(self.views.borrow(), |v| v.get(i).and_then(|v| v.as_ref())).ok()
    }

    fn read_view(&self, cluster: &Cluster, node: NodeId, now: Time) -> Option<NodeView> {
        let n = cluster.node(node)?;
        let mut view = NodeView { changes: n.changes, room: n.available(), room_until: Time(u64::MAX) };
        for &c in self.on_node.get(&node).into_iter().flatten() {
            let Some(ct) = cluster.container(c) else { continue };
            if ct.state != ContainerState::Running {
                continue;
            }
            match self.tasks.get(&c).map(|t| t.protected_until).filter(|&until| until > now) {
                Some(until) => view.room_until = view.room_until.min(until),
                None => view.room += ct.resources.saturating_sub(&ct.resources.held_while_suspended()),
            }
        }
        Some(view)
    }

    /// Drops the node's view: Kairos changed its tasks or a protection there.
    pub(crate) fn forget_view(&self, node: NodeId) {
        forget(&self.views, node);
    }

    fn protected(&self, c: ContainerId, now: Time) -> bool {
        self.tasks.get(&c).is_some_and(|t| t.protected_until > now)
    }

    /// Suspended tasks on `node`, the next to resume first: a starving one
    /// (suspended for S·W, `starvation=waited`) before all, the longest
    /// waiting first; then by least attained service, then oldest container.
    fn resume_order(&self, cluster: &Cluster, node: NodeId, now: Time) -> Vec<(bool, ContainerId)> {
        let Some(set) = self.on_node.get(&node) else { return Vec::new() };
        let starve_ms = self.starvation_ms();
        let mut v: Vec<(bool, u64, u64, ContainerId)> = set
            .iter()
            .filter(|c| !Self::is_running(cluster, **c))
            .map(|&c| self.resume_key(cluster, c, now, starve_ms))
            .collect();
        v.sort();
        v.into_iter().map(|(not_starving, _, _, c)| (!not_starving, c)).collect()
    }

    /// A suspended task's place in [`Self::resume_order`].
    fn resume_key(
        &self,
        cluster: &Cluster,
        c: ContainerId,
        now: Time,
        starve_ms: Option<u64>,
    ) -> (bool, u64, u64, ContainerId) {
        let since = self.tasks.get(&c).and_then(|t| t.suspended_since).unwrap_or(now);
        let waited = now.since(since);
        let starving = starve_ms.is_some_and(|s| waited >= s);
        // starving first (false < true, so negate), longest wait first among them
        let k1 = if starving { u64::MAX - waited } else { Self::service(cluster, c, now) };
        (!starving, k1, Self::service(cluster, c, now), c)
    }

    /// The first of [`Self::resume_order`], without ordering them all (every
    /// quantum end asks), and its attained service.
    fn next_to_resume(&self, cluster: &Cluster, node: NodeId, now: Time) -> Option<(bool, ContainerId, u64)> {
        let set = self.on_node.get(&node)?;
        let starve_ms = self.starvation_ms();
        // One read of each container (state and service), as resume_key
        // orders them: this runs at every quantum end.
        let mut best: Option<(bool, u64, u64, ContainerId)> = None;
        for &c in set {
            let service = match cluster.container(c) {
                Some(ct) if ct.state == ContainerState::Running => continue,
                Some(ct) => ct.attained_ms(now),
                None => 0,
            };
            let since = self.tasks.get(&c).and_then(|t| t.suspended_since).unwrap_or(now);
            let waited = now.since(since);
            let starving = starve_ms.is_some_and(|s| waited >= s);
            let key = (!starving, if starving { u64::MAX - waited } else { service }, service, c);
            if best.is_none_or(|b| key < b) {
                best = Some(key);
            }
        }
        best.map(|(not_starving, _, service, c)| (!not_starving, c, service))
    }

    /// The waited-time threshold of the starvation guard, if it is on.
    fn starvation_ms(&self) -> Option<u64> {
        (self.cfg.starvation == Starvation::Waited && self.cfg.starvation_quanta > 0)
            .then(|| self.cfg.starvation_quanta as u64 * self.cfg.quantum_ms)
    }

    fn protect_ms(&self) -> u64 {
        self.cfg.protect_quanta as u64 * self.cfg.quantum_ms
    }

    /// Starts a quantum for a running task (a timer at its end).
    pub(crate) fn start_quantum(&mut self, ctx: &mut Ctx<'_>, c: ContainerId, len_ms: u64) {
        let end = ctx.now.plus(len_ms.max(1));
        if let Some(t) = self.tasks.get_mut(&c) {
            t.quantum_end = Some(end);
            t.suspended_since = None;
        }
        self.timers.set(ctx.now, end, c);
    }

    pub(crate) fn suspend(&mut self, ctx: &mut Ctx<'_>, c: ContainerId) -> bool {
        if ctx.preempt(c, PreemptMode::Suspend).is_err() {
            return false;
        }
        self.end_dormancy(ctx, c);
        if let Some(node) = ctx.cluster().container(c).map(|c| c.node) {
            self.refresh.touch(node);
            // the node has a task to resume now
            self.wake_dormant(ctx, node);
        }
        if let Some(t) = self.tasks.get_mut(&c) {
            t.quantum_end = None;
            t.suspended_since = Some(ctx.now);
            t.preemptions += 1;
        }
        true
    }

    /// Resumes `c`; a starving task also gets its protected window.
    fn resume(&mut self, ctx: &mut Ctx<'_>, c: ContainerId, starving: bool) -> bool {
        if ctx.resume(c).is_err() {
            return false;
        }
        if let Some(node) = ctx.cluster().container(c).map(|c| c.node) {
            self.refresh.touch(node);
        }
        if let Some(since) = self.tasks.get(&c).and_then(|t| t.suspended_since) {
            ctx.metrics.observe("suspended_wait_ms", ctx.now.since(since) as f64);
        }
        if starving {
            ctx.metrics.count("starvation_resumes", 1);
        }
        if starving {
            let until = ctx.now.plus(self.protect_ms());
            if let Some(t) = self.tasks.get_mut(&c) {
                t.protected_until = until;
                t.preemptions = 0;
                forget(&self.views, t.node);
                self.refresh.touch(t.node);
            }
            self.start_quantum(ctx, c, self.cfg.quantum_ms.max(self.protect_ms()));
        } else {
            self.next_quantum(ctx, c);
        }
        true
    }

    /// K3: while a core is free on `node`, the next suspended task resumes.
    pub(crate) fn fill_idle_cores(&mut self, ctx: &mut Ctx<'_>, node: NodeId) {
        for (starving, c) in self.resume_order(ctx.cluster(), node, ctx.now) {
            let fits = match (ctx.cluster().container(c), ctx.cluster().node(node)) {
                (Some(ct), Some(n)) => ct.resources.saturating_sub(&ct.held()).fits_in(&n.available()),
                _ => false,
            };
            if !fits || !self.resume(ctx, c, starving) {
                // Resume in order only: a later task must not jump a starving
                // or less-served one that does not fit yet.
                break;
            }
        }
    }

    /// What `node` would have free if every running task that may be
    /// suspended were (K2's most it can make room); `None` for an unknown
    /// node. A new container can start there iff it fits in this.
    pub(crate) fn room_if_suspending(&self, cluster: &Cluster, node: NodeId, now: Time) -> Option<Resources> {
        if let Some(v) = self.view(cluster, node, now) {
            return Some(v.room);
        }
        let mut room = cluster.node(node)?.available();
        for &c in self.on_node.get(&node).into_iter().flatten() {
            match cluster.container(c) {
                Some(ct) if ct.state == ContainerState::Running && !self.protected(c, now) => {
                    room += ct.resources.saturating_sub(&ct.resources.held_while_suspended());
                }
                _ => {}
            }
        }
        Some(room)
    }

    /// [`Self::room_if_suspending`] read from the mirror, and until when it
    /// holds: the earliest end of a running task's protection (its room
    /// grows then).
    pub(crate) fn room_and_until(&self, cluster: &Cluster, node: NodeId, now: Time) -> Option<(Resources, Time)> {
        let mut room = cluster.node(node)?.available();
        let mut until = Time(u64::MAX);
        for &c in self.on_node.get(&node).into_iter().flatten() {
            match cluster.container(c) {
                Some(ct) if ct.state == ContainerState::Running => {
                    match self.tasks.get(&c).map(|t| t.protected_until).filter(|&u| u > now) {
                        Some(u) => until = until.min(u),
                        None => room += ct.resources.saturating_sub(&ct.resources.held_while_suspended()),
                    }
                }
                _ => {}
            }
        }
        Some((room, until))
    }

    /// K2: room on `node` for a new container of `need`: the running tasks
    /// to suspend for it, most attained service first, never AMs or
    /// protected tasks. `Some(empty)` if it fits already; `None` if it
    /// cannot fit even then (memory, or every candidate protected).
    pub(crate) fn victims_for(
        &self,
        cluster: &Cluster,
        node: NodeId,
        need: &Resources,
        now: Time,
    ) -> Option<Vec<ContainerId>> {
        let n = cluster.node(node)?;
        let mut avail = n.available();
        if need.fits_in(&avail) {
            return Some(Vec::new());
        }
        let mut running: Vec<(u64, ContainerId)> = self
            .on_node
            .get(&node)?
            .iter()
            .filter(|c| Self::is_running(cluster, **c) && !self.protected(**c, now))
            .map(|&c| (Self::service(cluster, c, now), c))
            .collect();
        // most served first; among equals the youngest container
        running.sort_by(|a, b| b.cmp(a));
        let mut out = Vec::new();
        for (_, c) in running {
            let ct = cluster.container(c)?;
            avail += ct.resources.saturating_sub(&ct.resources.held_while_suspended());
            out.push(c);
            if need.fits_in(&avail) {
                return Some(out);
            }
        }
        None
    }

    /// K4: the quantum of running task `c` ended.
    pub(crate) fn quantum_end(&mut self, ctx: &mut Ctx<'_>, c: ContainerId) {
        let Some(task) = self.tasks.get(&c).cloned() else { return };
        let now = ctx.now;
        ctx.metrics.count("quantum_ends", 1);
        if task.protected_until > now {
            let rest = task.protected_until.since(now);
            self.start_quantum(ctx, c, rest);
            return;
        }
        if self.cfg.starvation == Starvation::Preempted
            && self.cfg.starvation_quanta > 0
            && task.preemptions > self.cfg.starvation_quanta
        {
            // The authors' code: a much-preempted task keeps its core M·W.
            let until = now.plus(self.protect_ms());
            if let Some(t) = self.tasks.get_mut(&c) {
                t.protected_until = until;
                t.preemptions = 0;
                forget(&self.views, t.node);
                self.refresh.touch(t.node);
            }
            self.start_quantum(ctx, c, self.protect_ms().max(self.cfg.quantum_ms));
            return;
        }
        let mine = Self::service(ctx.cluster(), c, now);
        let next = self.next_to_resume(ctx.cluster(), task.node, now);
        let swap = match next {
            Some((true, _, _)) => true,
            Some((false, _, service)) => service + self.cfg.hysteresis_ms <= mine,
            None => false,
        };
        if let (true, Some((starving, m, _))) = (swap, next) {
            let fits = match (ctx.cluster().container(m), ctx.cluster().container(c), ctx.cluster().node(task.node)) {
                (Some(mc), Some(cc), Some(n)) => {
                    let freed = cc.resources.saturating_sub(&cc.resources.held_while_suspended());
                    mc.resources.saturating_sub(&mc.held()).fits_in(&(n.available() + freed))
                }
                _ => false,
            };
            if fits && self.suspend(ctx, c) {
                if self.resume(ctx, m, starving) {
                    ctx.metrics.count("quantum_swaps", 1);
                    return;
                }
                // could not resume: give the core back to the task we took it from
                let _ = self.resume(ctx, c, false);
                return;
            }
        }
        match next {
            // a task to resume is there: the next end may swap
            Some(_) => self.start_quantum(ctx, c, self.cfg.quantum_ms),
            None => self.next_quantum(ctx, c),
        }
    }
}
