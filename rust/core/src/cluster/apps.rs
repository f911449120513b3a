//! Apps in the mirror: what an app is (its spec, asks and holdings) and the
//! driver's deltas that add and remove one and replace its asks. Pending
//! counts are kept per app and for the cluster as asks change.

use super::{bad_resource, AskBook, Cluster, Container};
use crate::error::{CoreError, Result};
use crate::ids::{AppId, ContainerId, NodeId, Priority};
use crate::protocol::{AppSpec, Ask, Outcome, Phase};
use crate::resources::Resources;
use crate::time::Time;
use std::collections::BTreeSet;
use std::ops::Bound;

/// The number of [`Phase`]s.
const PHASES: usize = 4;
const _: () = assert!(Phase::Other as usize + 1 == PHASES, "a new Phase needs a counter");

/// One ask of an app with what is still outstanding of it.
#[derive(Clone, Debug)]
pub struct AskState {
    pub ask: Ask,
    /// Containers still wanted (the `ANY` count).
    pub outstanding: u32,
}

#[derive(Clone, Debug)]
pub struct App {
    pub spec: AppSpec,
    pub submit: Time,
    pub asks: AskBook,
    pub containers: BTreeSet<ContainerId>,
    /// Resources held by its containers.
    pub allocated: Resources,
    /// Sum over outstanding asks of count × capability.
    pub pending: Resources,
    pub pending_containers: u64,
    /// Service of its completed containers (ms).
    pub attained_done_ms: u64,
    /// Containers that completed, by phase (`App::completed`); an array,
    /// not a map: it is counted at every completion.
    completed: [u32; PHASES],
    /// Nodes reserved for this app.
    pub reserved_nodes: BTreeSet<NodeId>,
}

impl App {
    pub fn id(&self) -> AppId {
        self.spec.app
    }
    pub fn queue(&self) -> &str {
        &self.spec.queue
    }
    pub fn user(&self) -> &str {
        &self.spec.user
    }
    /// How many of its containers of `phase` have completed.
    pub fn completed(&self, phase: Phase) -> u32 {
        self.completed[phase as usize]
    }
    /// Counts a completed container of `phase`.
    pub(super) fn count_completed(&mut self, phase: Phase) {
        self.completed[phase as usize] += 1;
    }
    /// The outstanding asks, most important (lowest priority value) first.
    pub fn outstanding_asks(&self) -> impl Iterator<Item = &AskState> {
        self.asks.values().filter(|a| a.outstanding > 0)
    }
    /// The priority of the most important outstanding ask after `after`
    /// (from the start when `None`): a cursor over [`Self::outstanding_asks`]
    /// for a policy that allocates as it walks them, without collecting them.
    pub fn next_outstanding_priority(&self, after: Option<Priority>) -> Option<Priority> {
        let from = match after {
            None => Bound::Unbounded,
            Some(p) => Bound::Excluded(p),
        };
        self.asks.range((from, Bound::Unbounded)).find(|(_, a)| a.outstanding > 0).map(|(p, _)| *p)
    }
}

impl Cluster {
    pub fn add_app(&mut self, spec: AppSpec, now: Time) -> Result<()> {
        if self.app(spec.app).is_some() {
            return Err(CoreError::DuplicateApp(spec.app));
        }
        if spec.queue.trim().is_empty() {
            return Err(CoreError::BadEvent(format!("{} has an empty queue name", spec.app)));
        }
        // A value weighs a job in TetriSched's objective: zero, negative or
        // not a number would make missing its deadline look as good as
        // meeting it, or break the solver's arithmetic.
        if let Some(v) = spec.value.filter(|v| !(v.is_finite() && *v > 0.0)) {
            return Err(CoreError::BadEvent(format!("{} has value {v}: it must be a positive number", spec.app)));
        }
        self.app_count += 1;
        self.apps.insert(
            spec.app.0,
            Box::new(App {
                spec,
                submit: now,
                asks: AskBook::default(),
                containers: BTreeSet::new(),
                allocated: Resources::ZERO,
                pending: Resources::ZERO,
                pending_containers: 0,
                attained_done_ms: 0,
                completed: [0; PHASES],
                reserved_nodes: BTreeSet::new(),
            }),
        );
        Ok(())
    }

    /// Removes an app; containers it still has are removed as killed.
    pub fn remove_app(&mut self, app: AppId, now: Time) -> Result<Vec<Container>> {
        let ids: Vec<ContainerId> =
            self.app(app).ok_or(CoreError::UnknownApp(app))?.containers.iter().copied().collect();
        let killed = self.complete_all(ids, Outcome::Killed, now)?;
        let a = self.apps.remove(app.0).ok_or(CoreError::UnknownApp(app))?;
        self.app_count -= 1;
        self.pending_containers -= a.pending_containers;
        for node in &a.reserved_nodes {
            if let Some(n) = self.node_mut(*node) {
                if matches!(n.reservation, Some((holder, _, _)) if holder == app) {
                    n.reservation = None;
                }
            }
        }
        Ok(killed)
    }

    /// Replaces the app's asks at the priorities given.
    pub fn update_asks(&mut self, app: AppId, asks: Vec<Ask>) -> Result<()> {
        let max = self.max_allocation;
        let a = self.apps.get_mut(app.0).map(|a| &mut **a).ok_or(CoreError::UnknownApp(app))?;
        for ask in &asks {
            let what = || format!("ask of {app} at {}", ask.priority);
            if ask.count > 0 && ask.capability.memory_mb == 0 && ask.capability.vcores == 0 {
                return Err(bad_resource(what(), "capability is zero"));
            }
            if let Some(max) = max {
                if !ask.capability.fits_in(&max) {
                    return Err(bad_resource(
                        what(),
                        &format!("{} exceeds the maximum allocation {max}", ask.capability),
                    ));
                }
            }
        }
        for ask in asks {
            let prio = ask.priority;
            if let Some(old) = a.asks.remove(&prio) {
                a.pending = a.pending.saturating_sub(&old.ask.capability.times(old.outstanding as u64));
                a.pending_containers -= old.outstanding as u64;
                self.pending_containers -= old.outstanding as u64;
            }
            if ask.count > 0 {
                a.pending += ask.capability.times(ask.count as u64);
                a.pending_containers += ask.count as u64;
                self.pending_containers += ask.count as u64;
                a.asks.insert(prio, AskState { outstanding: ask.count, ask });
            }
        }
        Ok(())
    }
}
