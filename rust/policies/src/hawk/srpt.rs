//! Eagle's node-queue selection (delgado.md §2.5, Algorithm 1 as §5 E3
//! gives it) and DLWL+SRPT's (§5 D7): shortest remaining processing time
//! first, with the starvation bound.
//!
//! A job's remaining processing time as the nodes see it is
//! `est × unlaunched tasks` (§6.7). The nodes learn the count at once from
//! the core's ask (the authors' simulator applies the scheduler's update
//! 2d after each hand-out; the difference is at most one get-task).

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
pub(crate) fn select(
    queue: &mut VecDeque<Entry>,
    order: Order,
    factor: f64,
    cluster: &Cluster,
    views: &AskViews,
    am_full: bool,
) -> (Option<usize>, Vec<Entry>) {
    let held = |e: &Entry| am_full && views.get(e.view, cluster, e.req).am;
    let mut purged = Vec::new();
    if order == Order::Fifo {
        return (queue.iter().position(|e| !held(e)), purged);
    }
    let all = order == Order::SrptAll;
    let mut chosen: Option<usize> = None;
    let mut best = u64::MAX;
    let mut min_slack = f64::INFINITY;
    let mut i = 0;
    while i < queue.len() {
        let e = &queue[i];
        if e.long && !all {
            break;
        }
        let unlaunched = views.get(e.view, cluster, e.req).unlaunched;
        if e.probe && !e.long && unlaunched == 0 {
            if let Some(gone) = queue.remove(i) {
                purged.push(gone);
            }
            continue;
        }
        let remaining = e.est_us.saturating_mul(unlaunched as u64);
        let est = e.est_us as f64;
        let may_bypass = if all { est < min_slack } else { est <= min_slack };
        if !held(e) && may_bypass && (chosen.is_none() || remaining < best) {
            chosen = Some(i);
            best = remaining;
        }
        min_slack = min_slack.min(factor * est - e.bypass_us as f64);
        i += 1;
    }
    (chosen.or_else(|| queue.iter().position(|e| !held(e))), purged)
}
