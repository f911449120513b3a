//! Rayon's admission control (tetrisched.md §4.3): the reservation plan, a
//! capacity-over-time profile of reserved slots, and the greedy agent that
//! places a request in it or rejects it.
//!
//! Both `rayon` and `tetrisched` call [`Admission::decide_new`] so that, as
//! §4.4 requires ("both stacks use the same Rayon admission"), one arrival
//! stream gets the same accepted/rejected decisions under either scheduler:
//! a decision depends only on the apps' submit times, deadlines, asks and
//! estimates, never on what the scheduler did. Reservations are not released
//! when their job finishes early, for the same reason.
//!
//! A request is what Rayon's RDL says for a rigid job (§3.1): `k` containers
//! of `width` slots each for `dur` (the estimate) inside `[submit, deadline]`.
//! Here `k` is the app's outstanding containers when its asks first arrive,
//! `width` its widest ask and `dur` its longest estimate.

use sojourn_core::{AppId, Cluster, Resources, Time};
use std::collections::{BTreeMap, BTreeSet};

/// Where the agent puts a reservation among the feasible starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// As late as the deadline allows (the greedy agent allocating from the
    /// deadline backwards, §4.3).
    Late,
    /// As early as the submit time allows (YARN-4360's early allocation).
    Early,
}

impl Placement {
    pub fn parse(s: &str) -> Option<Placement> {
        match s {
            "late" => Some(Placement::Late),
            "early" => Some(Placement::Early),
            _ => None,
        }
    }
}

/// The admission's settings (shared by both policies' parameters).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdmissionConfig {
    /// The plan's time step (ms): reservations start and end on its multiples.
    pub step_ms: u64,
    /// Share of the cluster's slots the plan may reserve at any instant
    /// (CapacityOverTimePolicy's instantaneous maximum).
    pub share: f64,
    pub placement: Placement,
    pub slot_mb: u64,
    pub slot_vcores: u32,
    /// The duration of an ask without an estimate.
    pub default_runtime_ms: u64,
}

impl Default for AdmissionConfig {
    fn default() -> AdmissionConfig {
        AdmissionConfig {
            step_ms: 1000,
            share: 1.0,
            placement: Placement::Late,
            slot_mb: 1024,
            slot_vcores: 1,
            default_runtime_ms: 60_000,
        }
    }
}

/// An accepted reservation: `slots` reserved over `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reservation {
    pub start: Time,
    pub end: Time,
    pub slots: u32,
}

/// What admission decided for an SLO app.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Accepted(Reservation),
    /// No room in the plan before its deadline: an SLO job without reservation.
    Rejected,
}

/// The reservation plan: reserved slots per plan step.
#[derive(Clone, Debug)]
pub struct Admission {
    pub cfg: AdmissionConfig,
    reserved: BTreeMap<u64, u32>,
    /// SLO apps seen but not decided yet (their asks have not arrived).
    waiting: BTreeSet<(Time, AppId)>,
    decided: BTreeMap<AppId, Decision>,
    /// The latest submit time decided: requests arrive in submit order.
    horizon: Time,
}

/// Slots of supply in `r`.
pub fn slots(cfg: &AdmissionConfig, r: &Resources) -> u32 {
    let m = r.memory_mb / cfg.slot_mb.max(1);
    let v = u64::from(r.vcores / cfg.slot_vcores.max(1));
    m.min(v).min(u64::from(u32::MAX)) as u32
}

/// Slots one container of `c` takes (at least 1).
pub fn width(cfg: &AdmissionConfig, c: &Resources) -> u32 {
    let m = c.memory_mb.div_ceil(cfg.slot_mb.max(1));
    let v = u64::from(c.vcores.div_ceil(cfg.slot_vcores.max(1)));
    m.max(v).clamp(1, 1 << 20) as u32
}

impl Admission {
    pub fn new(cfg: AdmissionConfig) -> Admission {
        Admission {
            cfg,
            reserved: BTreeMap::new(),
            waiting: BTreeSet::new(),
            decided: BTreeMap::new(),
            horizon: Time::ZERO,
        }
    }

    pub fn decision(&self, app: AppId) -> Option<Decision> {
        self.decided.get(&app).copied()
    }

    /// Slots reserved at `t`.
    pub fn reserved_at(&self, t: Time) -> u32 {
        self.reserved.get(&(t.ms() / self.cfg.step_ms)).copied().unwrap_or(0)
    }

    /// The plan's capacity: the share of the cluster's slots.
    pub fn capacity(&self, cluster: &Cluster) -> u32 {
        let total: u64 = cluster.nodes().map(|n| u64::from(slots(&self.cfg, &n.capacity))).sum();
        (total as f64 * self.cfg.share).floor().min(f64::from(u32::MAX)) as u32
    }

    /// Decides every SLO app (one with a deadline) not decided yet whose
    /// asks have arrived, in submit order, and returns the new decisions.
    /// Call it on every event: apps arrive in submit order, so each is
    /// decided against exactly the reservations of the apps before it.
    pub fn decide_new(&mut self, cluster: &Cluster) -> Vec<(AppId, Decision)> {
        let mut out = Vec::new();
        for app in cluster.apps() {
            if app.spec.deadline.is_some() && !self.decided.contains_key(&app.id()) {
                self.waiting.insert((app.submit, app.id()));
            }
        }
        // Summed over every node: only when an app is decided (most calls
        // decide nothing, and on a cluster of thousands the sum was most of
        // the policy's time).
        let mut cap: Option<u32> = None;
        let waiting: Vec<(Time, AppId)> = self.waiting.iter().copied().collect();
        for (submit, id) in waiting {
            let Some(app) = cluster.app(id) else {
                // Gone before its asks came: nothing to reserve.
                self.waiting.remove(&(submit, id));
                continue;
            };
            let mut k: u64 = 0;
            let mut w = 0u32;
            let mut dur = 0u64;
            for a in app.outstanding_asks() {
                k += u64::from(a.outstanding);
                w = w.max(width(&self.cfg, &a.ask.capability));
                dur = dur.max(a.ask.est_task_ms.unwrap_or(self.cfg.default_runtime_ms));
            }
            if k == 0 {
                // Its asks have not arrived; later apps wait behind it only
                // if they arrived at the same instant (the driver sends an
                // app's asks right after adding it).
                continue;
            }
            let deadline = app.spec.deadline.unwrap_or(app.submit);
            let need = (k.saturating_mul(u64::from(w))).min(u64::from(u32::MAX)) as u32;
            let cap = *cap.get_or_insert_with(|| self.capacity(cluster));
            let d = match self.place(submit, deadline, need, dur.max(1), cap) {
                Some(r) => Decision::Accepted(r),
                None => Decision::Rejected,
            };
            self.waiting.remove(&(submit, id));
            self.decided.insert(id, d);
            self.horizon = self.horizon.max(submit);
            out.push((id, d));
        }
        // Steps before every request still to come hold no new reservation.
        let from = self.waiting.first().map_or(self.horizon, |w| w.0.min(self.horizon));
        self.forget_before(from);
        out
    }

    /// The greedy agent: a window of `dur` inside `[submit, deadline]` on
    /// plan steps where `need` more slots stay within `cap`, reserved.
    pub fn place(&mut self, submit: Time, deadline: Time, need: u32, dur_ms: u64, cap: u32) -> Option<Reservation> {
        let step = self.cfg.step_ms.max(1);
        let len = dur_ms.div_ceil(step);
        let first = submit.ms().div_ceil(step);
        let last = (deadline.ms() / step).checked_sub(len)?;
        if need > cap || first > last {
            return None;
        }
        let fits = |t: u64| self.reserved.get(&t).copied().unwrap_or(0).saturating_add(need) <= cap;
        let start = match self.cfg.placement {
            Placement::Late => {
                let mut s = last;
                loop {
                    // A full step t rules out every window holding it: the
                    // next candidate ends just before it.
                    match (s..s + len).rev().find(|t| !fits(*t)) {
                        None => break Some(s),
                        Some(t) if t >= first + len => s = t - len,
                        Some(_) => break None,
                    }
                }
            }
            Placement::Early => {
                let mut s = first;
                loop {
                    if s > last {
                        break None;
                    }
                    match (s..s + len).find(|t| !fits(*t)) {
                        None => break Some(s),
                        Some(t) => s = t + 1,
                    }
                }
            }
        }?;
        for t in start..start + len {
            *self.reserved.entry(t).or_insert(0) += need;
        }
        Some(Reservation { start: Time(start * step), end: Time((start + len) * step), slots: need })
    }

    /// Forgets plan steps before `now`.
    fn forget_before(&mut self, now: Time) {
        let keep = self.reserved.split_off(&(now.ms() / self.cfg.step_ms.max(1)));
        self.reserved = keep;
    }
}
