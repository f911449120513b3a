//! Proportional capacity preemption (ProportionalCapacityPreemptionPolicy
//! with its FIFO candidate selector), one round per monitoring interval.
//!
//! 1. *Ideal assignment*, level by level from the root (whose ideal is the
//!    cluster): each queue starts at `min(used, guaranteed)`; what is left of
//!    the parent's ideal is offered, round after round, to the most
//!    under-served children (lowest ideal / guaranteed), each its share by
//!    guarantee among the children still asking, a child taking at most
//!    `min(maximum - ideal, used + pending - ideal)` and a leaf at most
//!    `max(used, guaranteed) - ideal`. Pending counts only what the user
//!    limit lets each user take.
//! 2. *To preempt*: a queue keeps `max(ideal, min(used + pending,
//!    guaranteed))`; the rest of its usage (minus containers already being
//!    killed) is to be preempted, scaled down at each level so the total is
//!    at most `total_preemption_per_round` of the cluster (rounded down).
//!    A leaf gives back `natural_termination_factor` of that (rounded up),
//!    only when it uses more than `guaranteed × (1 + max_ignored_over_capacity)`
//!    and while no major resource of the target is zero or negative (memory;
//!    memory and vcores for the dominant calculator). Each container taken
//!    must fit in what is left of the round's budget, so a cluster whose
//!    budget is smaller than a container preempts nothing, as in YARN.
//! 3. *Selection*, leaf by leaf: apps latest-first (reverse FIFO), first
//!    their reservations, then their containers of the least important
//!    request priority, youngest first, until the target is met (the last
//!    container may overshoot it) and within the round's budget. AM
//!    containers are spared, and taken last only while the queue's AMs
//!    exceed its AM share.
//! 4. *Mark, then kill*: a selected container is marked; once it has been
//!    marked for `max_wait_before_kill_ms` and is selected again it is
//!    killed ([`PreemptMode::Kill`]). Marks older than twice the wait are
//!    forgotten.

use super::calc::{Calc, V};
use super::limits;
use super::Capacity;
use sojourn_core::{ContainerId, Ctx, Phase, PreemptMode, Priority, Resources, Time};
use std::cmp::Reverse;
use std::collections::BTreeMap;

/// The per-round view of one queue (YARN's TempQueuePerPartition).
#[derive(Clone, Debug, Default)]
struct Temp {
    guaranteed: V,
    maximum: V,
    used: V,
    killable: V,
    pending: V,
    ideal: V,
    to_preempt: V,
}

const MAX_FIXPOINT_ROUNDS: usize = 100_000;

impl Capacity {
    pub(crate) fn preemption_round(&mut self, ctx: &mut Ctx<'_>) {
        ctx.metrics.count("preemption_rounds", 1);
        let calc = self.calc(ctx);
        if !calc.positive(calc.total) {
            return;
        }
        let mut t = self.snapshot(ctx, &calc);
        let allowed = calc.total.scale(self.conf.preemption.total_per_round);
        t[0].ideal = t[0].guaranteed;
        for q in 0..self.conf.queues.len() {
            if !self.conf.queues[q].is_leaf() {
                let kids = self.conf.queues[q].children.clone();
                let lc = Calc { kind: calc.kind, total: t[q].ideal };
                self.distribute(&mut t, &kids, allowed, &lc);
            }
        }
        let selected = self.select(ctx, &t, &calc, allowed);
        self.mark_or_kill(ctx, &selected);
    }

    fn snapshot(&self, ctx: &Ctx<'_>, calc: &Calc) -> Vec<Temp> {
        let n = self.conf.queues.len();
        let mut t = vec![Temp::default(); n];
        for q in (0..n).rev() {
            t[q].guaranteed = limits::guaranteed(&self.conf, q, calc);
            t[q].maximum = limits::maximum(&self.conf, q, calc);
            t[q].used = V::from(self.state.queues[q].used);
            if self.conf.queues[q].is_leaf() {
                let killing = self.state.queues[q]
                    .apps
                    .iter()
                    .flat_map(|k| ctx.containers_of(k.2))
                    .filter(|c| c.preempting)
                    .fold(Resources::ZERO, |s, c| s + c.held());
                t[q].killable = V::from(killing);
                t[q].pending = self.pending_within_user_limit(ctx, q, calc);
            } else {
                for &c in &self.conf.queues[q].children {
                    let (k, p) = (t[c].killable, t[c].pending);
                    t[q].killable = t[q].killable.add(k);
                    t[q].pending = t[q].pending.add(p);
                }
            }
        }
        t
    }

    /// Pending demand of a leaf's apps, each user's share capped by what
    /// the user limit still lets it take.
    fn pending_within_user_limit(&self, ctx: &Ctx<'_>, leaf: usize, calc: &Calc) -> V {
        let ul = limits::user_limit(&self.conf, &self.state, leaf, calc);
        let lq = &self.state.queues[leaf];
        let mut room: BTreeMap<&str, V> = BTreeMap::new();
        let mut total = V::ZERO;
        for key in &lq.waiting {
            let (Some(u), Some(a)) = (self.state.apps.get(&key.2), ctx.cluster().app(key.2)) else { continue };
            let r = room.entry(u.user.as_str()).or_insert_with(|| {
                let used = lq.users.get(&u.user).map_or(Resources::ZERO, |x| x.used);
                ul.sub(V::from(used)).clamp0()
            });
            let take = r.cmin(V::from(a.pending));
            *r = r.sub(take);
            total = total.add(take);
        }
        total
    }

    /// computeIdealResourceDistribution for one parent's children.
    fn distribute(&self, t: &mut [Temp], kids: &[usize], allowed: V, lc: &Calc) {
        let mut unassigned = lc.total;
        let (nonzero, zero): (Vec<usize>, Vec<usize>) = kids.iter().partition(|&&k| lc.positive(t[k].guaranteed));
        self.fixpoint(t, &nonzero, &mut unassigned, lc, false);
        if !zero.is_empty() && lc.positive(unassigned) {
            self.fixpoint(t, &zero, &mut unassigned, lc, true);
        }
        let mut need = V::ZERO;
        for &k in kids {
            if lc.gt(t[k].used, t[k].ideal) {
                need = need.add(t[k].used.sub(t[k].ideal));
            }
        }
        let scaling = if lc.gt(need, allowed) { lc.divide(allowed, need) } else { 1.0 };
        for &k in kids {
            let q = &mut t[k];
            let used_dk = q.used.sub(q.killable);
            let keep = lc.max(lc.min(q.used.add(q.pending), q.guaranteed), q.ideal);
            q.to_preempt = if lc.gt(used_dk, keep) { used_dk.sub(keep).scale(scaling).floor() } else { V::ZERO };
        }
    }

    fn fixpoint(&self, t: &mut [Temp], qs: &[usize], unassigned: &mut V, lc: &Calc, ignore_guarantee: bool) {
        let mut ordered = Vec::new();
        for &q in qs {
            let x = &mut t[q];
            x.ideal = if lc.gt(x.used, x.guaranteed) { x.guaranteed.cmin(x.used) } else { x.used };
            *unassigned = unassigned.sub(x.ideal);
            if lc.lt(x.ideal, x.used.add(x.pending)) {
                ordered.push(q);
            }
        }
        let pct = |x: &Temp| {
            if lc.positive(x.guaranteed) {
                lc.divide(x.ideal, x.guaranteed)
            } else {
                f64::from(i32::MAX)
            }
        };
        let mut rounds = 0;
        while !ordered.is_empty() && lc.positive(*unassigned) && rounds < MAX_FIXPOINT_ROUNDS {
            rounds += 1;
            // Normalized guarantees of the queues still asking (resetCapacity).
            let active = ordered.iter().fold(V::ZERO, |s, &q| s.add(t[q].guaranteed));
            let share_calc = Calc { kind: lc.kind, total: *unassigned };
            let n = ordered.len() as f64;
            ordered.sort_by(|&a, &b| pct(&t[a]).total_cmp(&pct(&t[b])).then(a.cmp(&b)));
            let head = pct(&t[ordered[0]]);
            let split = ordered.iter().position(|&q| pct(&t[q]) != head).unwrap_or(ordered.len());
            let underserved: Vec<usize> = ordered.drain(..split).collect();
            let mut assigned = V::ZERO;
            for q in underserved {
                let norm = if ignore_guarantee { 1.0 / n } else { share_calc.divide(t[q].guaranteed, active) };
                let avail = unassigned.scale(norm).ceil();
                let leaf = self.conf.queues[q].is_leaf();
                let idle = offer(&mut t[q], avail, leaf, lc);
                let done = avail.sub(idle);
                if lc.positive(done) {
                    ordered.push(q);
                }
                assigned = assigned.add(done);
            }
            *unassigned = unassigned.sub(assigned);
        }
    }

    /// The FIFO candidate selector: which containers each over-served leaf
    /// gives up this round. Reservations it drops at once.
    fn select(&mut self, ctx: &mut Ctx<'_>, t: &[Temp], calc: &Calc, allowed: V) -> Vec<ContainerId> {
        let pc = self.conf.preemption.clone();
        let mut budget = allowed;
        let mut selected = Vec::new();
        for (leaf, q) in t.iter().enumerate() {
            if !self.conf.queues[leaf].is_leaf() {
                continue;
            }
            if !calc.gt(q.used, q.guaranteed.scale(1.0 + pc.max_ignored_over_capacity)) {
                continue;
            }
            let mut want = q.to_preempt.scale(pc.natural_termination_factor).ceil();
            let wants = |w: V| calc.positive(w) && !calc.any_major_nonpositive(w);
            if !wants(want) {
                continue;
            }
            let take = |r: V, want: &mut V, budget: &mut V| {
                if wants(*want) && calc.fits(r, *budget) {
                    *want = want.sub(r);
                    *budget = budget.sub(r);
                    true
                } else {
                    false
                }
            };
            let (mut skipped_am, mut skipped_am_size) = (Vec::new(), V::ZERO);
            let apps: Vec<_> = self.state.queues[leaf].apps.iter().rev().map(|k| k.2).collect();
            for app in apps {
                if !wants(want) {
                    break;
                }
                for node in self.state.reservations.iter().filter(|r| r.1 .0 == app).map(|r| *r.0).collect::<Vec<_>>() {
                    let size = self.state.reservations.get(&node).map_or(V::ZERO, |r| V::from(r.2));
                    if take(size, &mut want, &mut budget) && ctx.unreserve(node).is_ok() {
                        self.state.unreserved(node);
                    }
                }
                let mut cs: Vec<(Reverse<Priority>, Reverse<ContainerId>, Phase, Resources)> = ctx
                    .containers_of(app)
                    .into_iter()
                    .filter(|c| !c.preempting)
                    .map(|c| (Reverse(c.priority), Reverse(c.id), c.phase, c.held()))
                    .collect();
                cs.sort_by_key(|c| (c.0, c.1));
                for (_, Reverse(id), phase, held) in cs {
                    if !wants(want) {
                        break;
                    }
                    if phase == Phase::Am {
                        skipped_am.push((id, V::from(held)));
                        skipped_am_size = skipped_am_size.add(V::from(held));
                    } else if take(V::from(held), &mut want, &mut budget) {
                        selected.push(id);
                    }
                }
            }
            let am_share = calc.total.scale(self.conf.queues[leaf].abs_capacity * self.conf.max_am_percent);
            for (id, held) in skipped_am {
                if !wants(want) || calc.le(skipped_am_size, am_share) {
                    break;
                }
                if take(held, &mut want, &mut budget) {
                    selected.push(id);
                    skipped_am_size = skipped_am_size.sub(held);
                }
            }
        }
        selected
    }

    fn mark_or_kill(&mut self, ctx: &mut Ctx<'_>, selected: &[ContainerId]) {
        let now = ctx.now;
        let wait = self.conf.preemption.max_wait_ms;
        for &c in selected {
            match self.marked.get(&c) {
                Some(&at) if at.plus(wait) <= now => {
                    match ctx.preempt(c, PreemptMode::Kill) {
                        Ok(()) => ctx.metrics.count("kills", 1),
                        Err(e) => log::warn!("capacity: preempting {c} refused: {e}"),
                    }
                    self.marked.remove(&c);
                }
                Some(_) => {}
                None => {
                    self.marked.insert(c, now);
                    ctx.metrics.count("marked", 1);
                }
            }
        }
        let cl = ctx.cluster();
        self.marked
            .retain(|c, at: &mut Time| at.plus(2 * wait) >= now && cl.container(*c).is_some_and(|x| !x.preempting));
    }
}

/// TempQueuePerPartition.offer: how much of `avail` the queue takes; the
/// rest is returned.
fn offer(q: &mut Temp, avail: V, leaf: bool, lc: &Calc) -> V {
    let to_max = q.maximum.sub(q.ideal).clamp0();
    let mut accepted = to_max.cmin(lc.min(avail, q.used.add(q.pending).sub(q.ideal)));
    if leaf {
        let cap = lc.max(lc.max(q.used, q.guaranteed).sub(q.ideal), V::ZERO);
        accepted = lc.min(accepted, cap);
    }
    q.ideal = q.ideal.add(accepted);
    avail.sub(accepted)
}
