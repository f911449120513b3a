//! Eagle's node-queue selection (delgado.md §2.5, Algorithm 1 as §5 E3
//! gives it) and DLWL+SRPT's (§5 D7): shortest remaining processing time
//! first, with the starvation bound.
//!
//! A job's remaining processing time as the nodes see it is
//! `est × unlaunched tasks` (§6.7). The nodes learn the count at once from
//! the core's ask (the authors' simulator applies the scheduler's update
//! 2d after each hand-out; the difference is at most one get-task).

use super::nodes::{EntryQueue, Hot, SlotBits};
use super::views::AskView;
use super::{views::AskViews, Entry, Order};
use sojourn_core::Cluster;
use std::collections::VecDeque;

/// Which entry of `queue` the node serves next, and the probes it purged on
/// the way (SRPT orders only: short probes whose job has no unlaunched task
/// left, the lazy purge of §5 E3). `None` with a non-empty queue: every
/// entry is an AM held back by the AM share (`am_full`).
///
/// - `Fifo`: the first entry (past AMs held back).
/// - `Srpt` (Eagle): scan from the head, stop at the first long entry; among
///   the short entries before it choose the least remaining time (ties to
///   the front) whose estimate fits the least slack in front of it, slack
///   being `factor × est(P) − bypass(P)` (`≤`, §6.8). If none (the head is
///   long), the head.
/// - `SrptAll` (DLWL+SRPT): the same over every entry, long ones too, with
///   a strict `<` slack test (§2.7, the authors' simulator).
///
/// `dead`: the ask slots whose probes in the scanned part may be dead
/// ([`SlotBits::ALL`]: any). An entry that is not such a probe and could
/// not be chosen (its estimate exceeds the least slack in front of it, or
/// it is a live probe whose estimate alone is no less than the best
/// remaining time so far) adds only its slack: its ask is not read.
pub(crate) fn select(
    queue: &mut EntryQueue,
    order: Order,
    factor: f64,
    cluster: &Cluster,
    views: &AskViews,
    am_full: bool,
    dead: &SlotBits,
) -> (Option<usize>, Vec<Entry>) {
    let held = |queue: &EntryQueue, at: usize, view: u32| {
        am_full && queue.req(at).is_some_and(|req| views.get(view, cluster, req).am)
    };
    let first_not_held =
        |queue: &EntryQueue| queue.hot().iter().enumerate().position(|(at, h)| !held(queue, at, h.view()));
    let mut purged = Vec::new();
    if order == Order::Fifo {
        return (first_not_held(queue), purged);
    }
    let mut s = Scan {
        all: order == Order::SrptAll,
        am_full,
        factor,
        dead: *dead,
        chosen: None,
        best: u64::MAX,
        min_slack: f64::INFINITY,
    };
    // The scan walks the queue without moving it, noting the probes to
    // purge (their positions, in order); an entry's index is its place once
    // they are gone. The entries that need more than the packed views (a
    // probe to purge, a view read through the core) stop the inner loop,
    // which then keeps its state in registers. (Queues hold thousands of
    // entries at data-center scale: a removal in the middle of the scan, or
    // the state spilled around a call, cost more than the selection.)
    let mut dead: Vec<usize> = Vec::new();
    let mut from = 0;
    while let Some(at) = s.run(queue.hot(), from, views, dead.len()) {
        let Some(&e) = queue.hot().get(at) else { break };
        let view = match views.packed(e.view()) {
            Some(view) => view,
            None => match queue.req(at) {
                Some(req) => views.get(e.view(), cluster, req),
                None => break,
            },
        };
        if is_dead(&e, view) {
            dead.push(at);
        } else {
            s.take(&e, view, at - dead.len());
        }
        from = at + 1;
    }
    let chosen = s.chosen;
    // (last first, so the positions noted stay right)
    for at in dead.into_iter().rev() {
        if let Some(gone) = queue.remove(at) {
            purged.push(gone);
        }
    }
    purged.reverse();
    (chosen.or_else(|| first_not_held(queue)), purged)
}

/// Whether `e` is a short probe whose req has no task left (`view`): the
/// selection purges it (§5 E3).
fn is_dead(e: &Hot, view: AskView) -> bool {
    e.probe() && !e.long() && view.unlaunched == 0
}

/// The SRPT scan's state.
struct Scan {
    all: bool,
    am_full: bool,
    factor: f64,
    /// [`select`]'s `dead`.
    dead: SlotBits,
    chosen: Option<usize>,
    best: u64,
    min_slack: f64,
}

impl Scan {
    /// Scans from `from` the entries the packed views serve, none of them
    /// to purge (`dead` purged so far); returns where it stopped on one
    /// that is not, or `None` at the end of what SRPT scans.
    fn run(&mut self, hot: &VecDeque<Hot>, from: usize, views: &AskViews, dead: usize) -> Option<usize> {
        for (at, e) in hot.range(from..).enumerate() {
            let at = from + at;
            if e.long() && !self.all {
                return None;
            }
            // A short probe outside the filter is alive: at least one task
            // left, so its remaining time is at least its estimate.
            let short_probe = e.probe() && !e.long();
            let alive = !short_probe || !self.dead.contains(e.view());
            let outrun = short_probe && self.chosen.is_some() && e.est_us() >= self.best;
            if alive && (outrun || !self.may_bypass(e.est_us())) {
                debug_assert!(
                    !views.packed(e.view()).is_some_and(|v| is_dead(e, v)),
                    "a dead probe of slot {} outside the filter",
                    e.view()
                );
                self.add_slack(e);
                continue;
            }
            let view = match views.packed(e.view()) {
                Some(view) if !is_dead(e, view) => view,
                _ => return Some(at),
            };
            self.take(e, view, at - dead);
        }
        None
    }

    /// Entry `e` (its ask `view`, its index once the purged are gone `at`)
    /// is a candidate: chosen if it may bypass every entry in front and
    /// has less remaining time than the best so far (ties to the front).
    fn take(&mut self, e: &Hot, view: AskView, at: usize) {
        let remaining = e.est_us().saturating_mul(view.unlaunched as u64);
        if self.may_bypass(e.est_us()) && !(self.am_full && view.am) && (self.chosen.is_none() || remaining < self.best)
        {
            self.chosen = Some(at);
            self.best = remaining;
        }
        self.add_slack(e);
    }

    /// Whether an entry of estimate `est_us` fits the least slack in front.
    #[inline]
    fn may_bypass(&self, est_us: u64) -> bool {
        let est = est_us as f64;
        if self.all {
            est < self.min_slack
        } else {
            est <= self.min_slack
        }
    }

    /// Entry `e`'s slack bounds what may bypass it.
    #[inline]
    fn add_slack(&mut self, e: &Hot) {
        // (as `f64::min`: a NaN slack keeps the minimum, and ±0 compare equal)
        let slack = self.factor * e.est_us() as f64 - e.bypass_us() as f64;
        if slack < self.min_slack {
            // (rare past the first entries: a branch, not a select the next
            // entry's comparison would wait for)
            std::hint::cold_path();
            self.min_slack = slack;
        }
    }
}
