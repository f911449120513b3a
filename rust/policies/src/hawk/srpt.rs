//! Eagle's node-queue selection (delgado.md §2.5, Algorithm 1 as §5 E3
//! gives it) and DLWL+SRPT's (§5 D7): shortest remaining processing time
//! first, with the starvation bound.
//!
//! A job's remaining processing time as the nodes see it is
//! `est × unlaunched tasks` (§6.7). The nodes learn the count at once from
//! the core's ask (the authors' simulator applies the scheduler's update
//! 2d after each hand-out; the difference is at most one get-task).

use super::blocks::{BlockSummary, Summaries};
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
    select_with(queue, order, factor, cluster, views, am_full, dead, true)
}

/// [`select`], passing a block whole only when `by_block` (else reading
/// every entry it scans, which the block summaries must not change).
#[allow(clippy::too_many_arguments)]
pub(crate) fn select_with(
    queue: &mut EntryQueue,
    order: Order,
    factor: f64,
    cluster: &Cluster,
    views: &AskViews,
    am_full: bool,
    dead: &SlotBits,
    by_block: bool,
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
        dead_folded: dead.folded(),
        chosen: None,
        best: u64::MAX,
        min_slack: f64::INFINITY,
        by_block,
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
    // (the queue does not change until the scan ends: where one run
    // stopped, the next goes on)
    let mut cursor = (0, 0);
    while let Some(at) = {
        let (hot, mut blocks) = queue.summaries();
        s.run(hot, &mut blocks, &mut cursor, from, views, dead.len())
    } {
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
    /// [`select`]'s `dead`, and folded as blocks keep slots.
    dead: SlotBits,
    dead_folded: [u64; 4],
    chosen: Option<usize>,
    best: u64,
    min_slack: f64,
    /// Whether a block whose summary shows that no entry in it could be
    /// chosen nor purged is passed whole.
    by_block: bool,
}

impl Scan {
    /// Scans from `from` the entries the packed views serve, none of them
    /// to purge (`dead` purged so far); returns where it stopped on one
    /// that is not, or `None` at the end of what SRPT scans.
    ///
    /// A whole block none of whose entries could be chosen or purged
    /// ([`Scan::passes`]) only lowers the least slack, by its own least.
    /// At 500,000 Google-like jobs on 15,000 nodes the queues SRPT scans
    /// grow to over a thousand entries, and 19 in 20 of those a scan reads
    /// are such: the least slack in front is already below their estimates.
    ///
    /// `cursor`: the block holding `from` and where it starts, or one
    /// before it (a block and its start, as the last run left them).
    fn run(
        &mut self,
        hot: &VecDeque<Hot>,
        blocks: &mut Summaries<'_>,
        cursor: &mut (usize, usize),
        from: usize,
        views: &AskViews,
        dead: usize,
    ) -> Option<usize> {
        let (mut b, mut start) = *cursor;
        let mut at = from;
        while let Some(len) = blocks.len(b) {
            let end = start + len;
            if end <= at {
                (b, start) = (b + 1, end);
                continue;
            }
            *cursor = (b, start);
            // a block passed whole: its least slack
            let passed = match self.by_block && at == start {
                true => blocks.summary(b, start, self.factor).filter(|sum| self.passes(sum)).map(|sum| sum.min_slack),
                false => None,
            };
            match passed {
                Some(least) if least < self.min_slack => self.min_slack = least,
                Some(_) => {}
                None => {
                    if let Some(stop) = self.entries(hot, at..end, views, dead) {
                        return stop;
                    }
                }
            }
            (b, start, at) = (b + 1, end, end);
        }
        None
    }

    /// Whether no entry of a block (`sum`) could be chosen nor purged from
    /// here: no long entry it would stop at, no probe the dead filter
    /// holds, and every estimate above the least slack in front (so none
    /// may bypass, the least only falling within the block) or, for a
    /// short probe, outrun by the best so far. Each entry would then only
    /// add its slack.
    fn passes(&self, sum: &BlockSummary) -> bool {
        if (sum.long && !self.all) || sum.probe_slots.meets(&self.dead_folded) {
            return false;
        }
        let stays = |est_us: u64| {
            let est = est_us as f64;
            if self.all {
                est >= self.min_slack
            } else {
                est > self.min_slack
            }
        };
        let probes_pass = sum.min_probe_est_us == u64::MAX
            || stays(sum.min_probe_est_us)
            || (self.chosen.is_some() && sum.min_probe_est_us >= self.best);
        let others_pass = sum.min_other_est_us == u64::MAX || stays(sum.min_other_est_us);
        probes_pass && others_pass
    }

    /// [`Scan::run`] entry by entry over `range`: `Some(stop)` where the
    /// scan ends (`Some(at)`: on an entry to read apart; `None`: at a long
    /// entry), `None` to go on past the range.
    fn entries(
        &mut self,
        hot: &VecDeque<Hot>,
        range: std::ops::Range<usize>,
        views: &AskViews,
        dead: usize,
    ) -> Option<Option<usize>> {
        let from = range.start;
        for (at, e) in hot.range(range).enumerate() {
            let at = from + at;
            if e.long() && !self.all {
                return Some(None);
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
                _ => return Some(Some(at)),
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
        let slack = e.slack(self.factor);
        if slack < self.min_slack {
            // (rare past the first entries: a branch, not a select the next
            // entry's comparison would wait for)
            std::hint::cold_path();
            self.min_slack = slack;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{select, select_with};
    use crate::hawk::nodes::{EntryQueue, SlotBits};
    use crate::hawk::views::{AskViews, NO_VIEW};
    use crate::hawk::{Entry, Order};
    use crate::test_support::{core, job_in};
    use proptest::prelude::*;
    use sojourn_core::{AppId, Phase, Priority};

    /// A queued entry: its job (of 6), long, probe, estimate, bypass
    /// counter, and whether it reads its ask through a view.
    type Spec = (usize, bool, bool, u64, u64, bool);

    fn spec() -> impl Strategy<Value = Spec> {
        (0usize..6, prop::bool::weighted(0.1), prop::bool::weighted(0.8), 1u64..12, 0u64..20, prop::bool::weighted(0.9))
    }

    proptest! {
        // (cheap cases; a wrong pass shows in a few hundred)
        #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

        /// On long queues of few distinct estimates (ties everywhere), jobs
        /// with no task left, AMs and every dead-probe filter that holds:
        /// selection passing blocks whole picks and purges what it does
        /// reading every entry, for Eagle's and DLWL+SRPT's orders.
        #[test]
        fn passing_blocks_whole_selects_as_reading_every_entry(
            tasks in prop::collection::vec(0u32..4, 6),
            specs in prop::collection::vec(spec(), 0..90),
            factor in prop_oneof![Just(0.5), Just(1.0), Just(1.5), Just(5.0)],
            extra_dead in prop::collection::vec(0u32..8, 0..3),
        ) {
            let mut c = core("fifo", &[]);
            for (i, n) in tasks.iter().enumerate() {
                let phase = if i == 5 { Phase::Am } else { Phase::Map };
                job_in(&mut c, 0, i as u32 + 1, "default", *n, phase);
            }
            let cluster = c.core().cluster();
            let req = |i: usize| {
                let prio = if i == 5 { Priority::AM } else { Priority::MAP };
                (AppId(i as u32 + 1), prio)
            };
            let mut views = AskViews::default();
            let slots: Vec<u32> = (0..6).map(|i| views.add(cluster, req(i))).collect();
            // the filter must hold every slot whose probes are dead
            let mut dead = SlotBits::NONE;
            for (i, n) in tasks.iter().enumerate() {
                if *n == 0 {
                    dead.insert(slots[i]);
                }
            }
            for s in extra_dead {
                dead.insert(s);
            }
            let queue: EntryQueue = specs
                .iter()
                .map(|&(job, long, probe, est, bypass, viewed)| {
                    let mut e = Entry::new(req(job), long, probe, est * 1000)
                        .viewed(if viewed { slots[job] } else { NO_VIEW });
                    e.bypass_us = bypass * 1000;
                    e
                })
                .collect();
            for order in [Order::Srpt, Order::SrptAll] {
                for am_full in [false, true] {
                    for filter in [dead, SlotBits::ALL] {
                        let (mut by_block, mut by_entry) = (queue.clone(), queue.clone());
                        let (pick, purged) = select(&mut by_block, order, factor, cluster, &views, am_full, &filter);
                        let (pick_read, purged_read) =
                            select_with(&mut by_entry, order, factor, cluster, &views, am_full, &filter, false);
                        prop_assert_eq!(pick, pick_read, "{:?} am_full {}", order, am_full);
                        let reqs = |es: &[Entry]| es.iter().map(|e| e.req).collect::<Vec<_>>();
                        prop_assert_eq!(reqs(&purged), reqs(&purged_read));
                    }
                }
            }
        }
    }
}
