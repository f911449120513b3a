//! What SRPT's selection ([`super::srpt`]) reads of each queued entry's
//! ask: its unlaunched tasks and whether it is an AM, kept per req in one
//! dense vector. A node's selection reads this for every entry it scans,
//! and reading the core's app, then its ask map, cost several cache misses
//! per entry (most of Eagle's time at data-center scale); an entry carries
//! its req's slot here instead.
//!
//! The core changes an ask only in four places, each followed by a call
//! into the policy that refreshes the view: `AsksUpdated`, the policy's own
//! allocation, a rejected allocation rolled back, `AppRemoved`. A removed
//! app's view falls back to the core (an app id seen again must not read
//! what the old app left).

use super::{Hawk, Req};
use sojourn_core::{Cluster, Phase};

/// An entry without a slot (tests build queues by hand): read the core.
pub const NO_VIEW: u32 = u32::MAX;

/// One req's ask as selection reads it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct AskView {
    /// The ask's outstanding containers (0: no ask).
    pub unlaunched: u32,
    pub am: bool,
}

impl AskView {
    /// The core's state of `req`'s ask.
    pub fn read(cluster: &Cluster, req: Req) -> AskView {
        Hawk::ask_of(cluster, req)
            .map_or(AskView::default(), |a| AskView { unlaunched: a.outstanding, am: a.ask.phase == Phase::Am })
    }
}

/// The views, by slot; a slot is never reused.
#[derive(Clone, Debug, Default)]
pub(crate) struct AskViews {
    /// The view, and whether it is kept up to date (`false`: read the core).
    slots: Vec<(AskView, bool)>,
}

impl AskViews {
    /// A new slot holding `req`'s current ask.
    pub fn add(&mut self, cluster: &Cluster, req: Req) -> u32 {
        self.slots.push((AskView::read(cluster, req), true));
        (self.slots.len() - 1) as u32
    }

    /// Reads `req`'s ask (slot `slot`) from the core again after it changed.
    pub fn refresh(&mut self, slot: u32, cluster: &Cluster, req: Req) {
        if let Some(s) = self.slots.get_mut(slot as usize) {
            s.0 = AskView::read(cluster, req);
        }
    }

    /// The req's app left: its slot is no longer kept up to date.
    pub fn retire(&mut self, slot: u32) {
        if let Some(s) = self.slots.get_mut(slot as usize) {
            s.1 = false;
        }
    }

    /// The view in `slot` if it is kept up to date.
    #[cfg(test)]
    pub fn kept(&self, slot: u32) -> Option<AskView> {
        self.slots.get(slot as usize).filter(|s| s.1).map(|s| s.0)
    }

    /// `req`'s ask through `slot`, else from the core.
    pub fn get(&self, slot: u32, cluster: &Cluster, req: Req) -> AskView {
        match self.slots.get(slot as usize) {
            Some(&(view, true)) => {
                debug_assert_eq!(view, AskView::read(cluster, req), "stale ask view of {req:?}");
                view
            }
            _ => AskView::read(cluster, req),
        }
    }
}
