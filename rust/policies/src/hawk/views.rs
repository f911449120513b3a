//! What SRPT's selection ([`super::srpt`]) reads of each queued entry's
//! ask: its unlaunched tasks and whether it is an AM, kept per req in one
//! dense vector; and, apart, its container size, which `serve` reads for
//! the picked entry. A node's selection reads this for every entry it scans,
//! and reading the core's app, then its ask map, cost several cache misses
//! per entry (most of Eagle's time at data-center scale); an entry carries
//! its req's slot here instead.
//!
//! The core changes an ask only in four places, each followed by a call
//! into the policy that refreshes the view: `AsksUpdated`, the policy's own
//! allocation, a rejected allocation rolled back, `AppRemoved`. A removed
//! app's view falls back to the core (an app id seen again must not read
//! what the old app left).

use super::nodes::SlotBits;
use super::queues::NO_TASK_HOLD;
use super::{srpt, Hawk, Order, Req};
use sojourn_core::{AppId, Ask, Cluster, NodeId, Phase, Resources};
use std::collections::BTreeSet;

/// An entry without a slot (tests build queues by hand): read the core.
pub const NO_VIEW: u32 = u32::MAX;

/// One req's ask as selection reads it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct AskView {
    /// The ask's outstanding containers (0: no ask).
    pub unlaunched: u32,
    pub am: bool,
}

/// A kept view in one word, for selection's scan (a node's scan reads one
/// per queued entry, and at data-center scale a 12-byte slot per req no
/// longer stays in cache): [`PACKED_KEPT`], [`PACKED_AM`] and the
/// unlaunched count below them; 0 when not kept or the count does not fit.
const PACKED_KEPT: u32 = 1 << 31;
const PACKED_AM: u32 = 1 << 30;
const PACKED_COUNT: u32 = PACKED_AM - 1;

impl AskView {
    /// The view in one word (0 if the count does not fit).
    fn packed(self) -> u32 {
        if self.unlaunched > PACKED_COUNT {
            return 0;
        }
        PACKED_KEPT | if self.am { PACKED_AM } else { 0 } | self.unlaunched
    }

    /// The core's state of `req`'s ask.
    pub fn read(cluster: &Cluster, req: Req) -> AskView {
        Hawk::ask_of(cluster, req)
            .map_or(AskView::default(), |a| AskView { unlaunched: a.outstanding, am: a.ask.phase == Phase::Am })
    }
}

/// The views, by slot; a slot is never reused.
#[derive(Clone, Debug)]
pub(crate) struct AskViews {
    /// The view, and whether it is kept up to date (`false`: read the core).
    slots: Vec<(AskView, bool)>,
    /// By slot: the kept view packed ([`AskView::packed`]).
    packed: Vec<u32>,
    /// By slot: the ask's container size, read only for the entry a
    /// selection picked (kept apart so the scan's slots stay small).
    capabilities: Vec<Resources>,
    /// By slot: the nodes a short probe of the req was queued at (a node
    /// once per run of arrivals), to tell them when the req has no task
    /// left; emptied when the app leaves.
    holders: Vec<Vec<NodeId>>,
    /// Whether a busy node may skip selection ([`Hawk::selection_idle`]):
    /// off for good once an ask without vcores appears, an ask of a req
    /// with queued entries may have grown past a node, a node's capacity
    /// changed, or probes were stolen (a queued entry then might not fit
    /// its node, which selection must find).
    pub busy_skip: bool,
    /// Apps that left: one coming back under the same id could revive
    /// entries whose req's end is no longer tracked.
    gone: BTreeSet<AppId>,
}

impl AskViews {
    /// A new slot holding `req`'s current ask.
    pub fn add(&mut self, cluster: &Cluster, req: Req) -> u32 {
        let view = AskView::read(cluster, req);
        self.slots.push((view, true));
        self.packed.push(view.packed());
        self.capabilities.push(Self::capability_of(cluster, req));
        self.holders.push(Vec::new());
        (self.slots.len() - 1) as u32
    }

    /// Reads `req`'s ask (slot `slot`) from the core again after it changed.
    pub fn refresh(&mut self, slot: u32, cluster: &Cluster, req: Req) {
        if let Some(s) = self.slots.get_mut(slot as usize) {
            s.0 = AskView::read(cluster, req);
            if let Some(p) = self.packed.get_mut(slot as usize) {
                *p = if s.1 { s.0.packed() } else { 0 };
            }
        }
        if let Some(c) = self.capabilities.get_mut(slot as usize) {
            *c = Self::capability_of(cluster, req);
        }
    }

    fn capability_of(cluster: &Cluster, req: Req) -> Resources {
        Hawk::ask_of(cluster, req).map_or(Resources::ZERO, |a| a.ask.capability)
    }

    /// The req's app left: its slot is no longer kept up to date.
    pub fn retire(&mut self, slot: u32) {
        if let Some(s) = self.slots.get_mut(slot as usize) {
            s.1 = false;
        }
        if let Some(p) = self.packed.get_mut(slot as usize) {
            *p = 0;
        }
    }

    /// The view in `slot` if it is kept up to date.
    pub fn kept(&self, slot: u32) -> Option<AskView> {
        self.slots.get(slot as usize).filter(|s| s.1).map(|s| s.0)
    }

    /// The kept view in `slot` when its packed word holds it (what
    /// [`AskViews::get`] then returns), without the req.
    pub fn packed(&self, slot: u32) -> Option<AskView> {
        let packed = self.packed.get(slot as usize).copied().unwrap_or(0);
        (packed & PACKED_KEPT != 0)
            .then_some(AskView { unlaunched: packed & PACKED_COUNT, am: packed & PACKED_AM != 0 })
    }

    /// `req`'s ask through `slot`, else from the core.
    pub fn get(&self, slot: u32, cluster: &Cluster, req: Req) -> AskView {
        if let Some(view) = self.packed(slot) {
            debug_assert_eq!(view, AskView::read(cluster, req), "stale ask view of {req:?}");
            return view;
        }
        match self.slots.get(slot as usize) {
            Some(&(view, true)) => {
                debug_assert_eq!(view, AskView::read(cluster, req), "stale ask view of {req:?}");
                view
            }
            _ => AskView::read(cluster, req),
        }
    }

    /// What a get-task for `req` (slot `slot`) sets aside of its node, and
    /// whether it fetches an AM: the ask's container while it has a task
    /// left, else the slot for the round trip. Through the views when kept:
    /// the core's app and ask map are cold by the time a node picks (a
    /// sixth of Eagle's time at 50,000 jobs went to that lookup).
    pub fn hold(&self, slot: u32, cluster: &Cluster, req: Req) -> (Resources, bool) {
        match (self.kept(slot), self.capabilities.get(slot as usize)) {
            (Some(view), Some(&capability)) => {
                let hold = if view.unlaunched > 0 { capability } else { NO_TASK_HOLD };
                debug_assert_eq!((hold, view.am), Self::hold_read(cluster, req), "stale hold of {req:?}");
                (hold, view.am)
            }
            _ => Self::hold_read(cluster, req),
        }
    }

    /// [`AskViews::hold`] read from the core.
    pub fn hold_read(cluster: &Cluster, req: Req) -> (Resources, bool) {
        let ask = Hawk::ask_of(cluster, req);
        let am = ask.is_some_and(|a| a.ask.phase == Phase::Am);
        let hold = match ask {
            Some(a) if a.outstanding > 0 => a.ask.capability,
            _ => NO_TASK_HOLD,
        };
        (hold, am)
    }
}

impl Default for AskViews {
    fn default() -> AskViews {
        AskViews {
            slots: Vec::new(),
            packed: Vec::new(),
            capabilities: Vec::new(),
            holders: Vec::new(),
            busy_skip: true,
            gone: BTreeSet::new(),
        }
    }
}

/// A busy node's selection is skipped when it would change nothing: it
/// would purge nothing (no short probe of a req without tasks left in the
/// scanned part: `NodeState::dead`, marked whenever one may appear
/// there) and the entry it picks could not start anyway (the node
/// has no vcore left, and every ask needs one). Each probe arrival at a
/// busy node otherwise rescans its queue, which at data-center scale grows
/// to hundreds of entries.
impl Hawk {
    /// `req`'s slot in the ask views.
    pub(crate) fn view_of(&self, req: Req) -> u32 {
        self.reqs.get(&req).map_or(NO_VIEW, |s| s.view)
    }

    /// The core changed `req`'s ask (view `slot`): the view reads it again,
    /// and if the req has no task left, the nodes holding its probes must
    /// purge them at their next selection.
    pub(crate) fn ask_changed(&mut self, cluster: &Cluster, req: Req, slot: u32) {
        self.views.refresh(slot, cluster, req);
        if self.views.kept(slot).is_some_and(|v| v.unlaunched == 0) {
            self.must_purge_holders(slot);
        }
    }

    /// An `AsksUpdated` ask of `app`, `existed`: of a req already known
    /// (its queued entries were sent to nodes its old size fitted).
    pub(crate) fn ask_updated(&mut self, cluster: &Cluster, app: AppId, ask: &Ask, existed: bool) {
        if ask.capability.vcores == 0 || self.views.gone.contains(&app) {
            self.views.busy_skip = false;
        }
        if existed {
            self.layout(cluster);
            if !ask.capability.fits_in(&self.min_capacity) {
                self.views.busy_skip = false;
            }
        }
    }

    /// The app of the req with view `slot` left: its probes are dead.
    pub(crate) fn app_gone(&mut self, app: AppId, slot: u32) {
        self.views.gone.insert(app);
        self.must_purge_holders(slot);
        self.views.retire(slot);
        if let Some(h) = self.views.holders.get_mut(slot as usize) {
            *h = Vec::new();
        }
    }

    fn must_purge_holders(&mut self, slot: u32) {
        let Some(holders) = self.views.holders.get(slot as usize) else { return };
        for node in holders {
            if let Some(ns) = self.nodes.get_mut(node) {
                ns.dead.died(slot);
            }
        }
    }

    /// `e` was just put in `node`'s queue.
    pub(crate) fn queued(&mut self, cluster: &Cluster, node: NodeId, e: &super::Entry) {
        // (FIFO selection never rescans: nothing to track)
        if !e.probe || e.long || self.cfg.order == Order::Fifo {
            return;
        }
        let dead = self.views.get(e.view, cluster, e.req).unlaunched == 0;
        let tracked = self.views.kept(e.view).is_some();
        if dead || !tracked {
            if let Some(ns) = self.nodes.get_mut(&node) {
                ns.dead.died(e.view);
            }
        }
        if !tracked && (!dead || e.view == NO_VIEW) {
            // a hand-built entry, or a removed app's that the core shows
            // alive: its req's end is not seen
            self.views.busy_skip = false;
        }
        if let Some(h) = self.views.holders.get_mut(e.view as usize) {
            if h.last() != Some(&node) {
                h.push(node);
            }
        }
    }
}

impl Hawk {
    /// Whether `node`'s selection would change nothing, so `serve` may
    /// stop before it: an SRPT order, every entry eligible (the AM shares
    /// have room), nothing to purge, and no vcore free, so that whatever it
    /// picks (which fits the node: it was sent to a node its size fits)
    /// waits. Debug builds run the skipped selection on a copy to check.
    pub(crate) fn selection_idle(&self, cluster: &Cluster, node: NodeId, am_full: bool, node_am_cap: u32) -> bool {
        if !self.views.busy_skip || am_full || self.cfg.order == Order::Fifo {
            return false;
        }
        let (Some(ns), Some(n)) = (self.nodes.get(&node), cluster.node(node)) else { return false };
        let node_full = node_am_cap > 0 && ns.ams >= node_am_cap;
        if !ns.dead.none_scanned() || node_full || ns.queue.is_empty() || n.capacity.vcores == 0 {
            return false;
        }
        if n.available().saturating_sub(&ns.held).vcores > 0 {
            return false;
        }
        debug_assert!(self.selection_changes_nothing(cluster, node), "a skipped selection at {node} would act");
        true
    }

    /// The selection [`Hawk::selection_idle`] skips, on a copy of the queue:
    /// it purges nothing, and its pick fits the node but not its room.
    pub(crate) fn selection_changes_nothing(&self, cluster: &Cluster, node: NodeId) -> bool {
        let (Some(ns), Some(n)) = (self.nodes.get(&node), cluster.node(node)) else { return false };
        let mut queue = ns.queue.clone();
        let (pick, purged) = srpt::select(
            &mut queue,
            self.cfg.order,
            self.cfg.starvation_factor,
            cluster,
            &self.views,
            false,
            &SlotBits::ALL,
        );
        let Some(req) = pick.and_then(|at| queue.req(at)) else { return false };
        let need = match Hawk::ask_of(cluster, req) {
            Some(a) if a.outstanding > 0 => a.ask.capability,
            _ => super::queues::NO_TASK_HOLD,
        };
        purged.is_empty() && need.fits_in(&n.capacity) && !need.fits_in(&n.available().saturating_sub(&ns.held))
    }
}
