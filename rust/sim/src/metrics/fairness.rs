//! The books behind the fairness index: each open job's and queue's
//! allocation, kept as containers come and go, so that a sample costs
//! O(queues) rather than a walk over every container. Jain's index is taken
//! over the dominant shares of the queues with open jobs, or, when only one
//! queue has any, over the open jobs' own shares (from running sums of the
//! shares and their squares).

use super::jain_index;
use sojourn_core::Resources;
use std::collections::BTreeMap;

/// A queue's place in the books, handed out when its first job opens, so
/// that the per-container updates find it without a name lookup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueSlot(usize);

#[derive(Clone, Debug)]
pub struct FairnessBooks {
    /// The cluster's capacity the dominant shares are taken against.
    total: Resources,
    /// Σ and Σ² of open jobs' dominant shares.
    share_sum: f64,
    share_sq: f64,
    /// Allocation and open jobs per queue, by slot.
    queues: Vec<(Resources, u32)>,
    /// Slots by queue name (the index walks the queues in name order).
    slots: BTreeMap<String, QueueSlot>,
}

impl FairnessBooks {
    pub fn new(total: Resources) -> FairnessBooks {
        FairnessBooks { total, share_sum: 0.0, share_sq: 0.0, queues: Vec::new(), slots: BTreeMap::new() }
    }

    /// A job of `queue` opened (it holds nothing yet); its updates go to
    /// the slot returned.
    pub fn job_opened(&mut self, queue: &str) -> QueueSlot {
        let slot = match self.slots.get(queue) {
            Some(s) => *s,
            None => {
                let s = QueueSlot(self.queues.len());
                self.queues.push((Resources::ZERO, 0));
                self.slots.insert(queue.to_string(), s);
                s
            }
        };
        self.queues[slot.0].1 += 1;
        slot
    }

    /// A job of the queue at `slot` that held `from` now holds `to`.
    pub fn job_changed(&mut self, slot: QueueSlot, from: Resources, to: Resources) {
        let (before, after) = (from.dominant_share(&self.total), to.dominant_share(&self.total));
        self.share_sum += after - before;
        self.share_sq += after * after - before * before;
        if let Some(q) = self.queues.get_mut(slot.0) {
            q.0 = q.0.saturating_sub(&from) + to;
        }
    }

    /// A job of the queue at `slot` holding `held` closed.
    pub fn job_closed(&mut self, slot: QueueSlot, held: Resources) {
        let share = held.dominant_share(&self.total);
        self.share_sum -= share;
        self.share_sq -= share * share;
        if let Some(q) = self.queues.get_mut(slot.0) {
            q.0 = q.0.saturating_sub(&held);
            q.1 = q.1.saturating_sub(1);
        }
    }

    /// Jain's index now, with `open_jobs` jobs open: `None` when fewer than
    /// two queues, or jobs in one queue, are there to compare.
    pub fn index(&self, cluster_total: &Resources, open_jobs: usize) -> Option<f64> {
        let queues: Vec<f64> = self
            .slots
            .values()
            .map(|s| self.queues[s.0])
            .filter(|(_, open)| *open > 0)
            .map(|(r, _)| r.dominant_share(cluster_total))
            .collect();
        if queues.len() > 1 {
            Some(jain_index(&queues))
        } else if open_jobs > 1 {
            let (n, s, s2) = (open_jobs as f64, self.share_sum.max(0.0), self.share_sq);
            Some(if s2 <= 1e-15 { 1.0 } else { (s * s / (n * s2)).min(1.0) })
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queues_compare_by_their_shares_and_jobs_when_one_queue() {
        let total = Resources::new(100, 100);
        let mut b = FairnessBooks::new(total);
        let a = b.job_opened("a");
        assert_eq!(b.job_opened("a"), a);
        // two jobs in one queue, 30 % and 10 %: (0.4)² / (2 · 0.1) = 0.8
        b.job_changed(a, Resources::ZERO, Resources::new(30, 30));
        b.job_changed(a, Resources::ZERO, Resources::new(10, 10));
        assert!((b.index(&total, 2).unwrap() - 0.8).abs() < 1e-12);
        // a second queue with the same share: perfectly fair between queues
        let q = b.job_opened("b");
        b.job_changed(q, Resources::ZERO, Resources::new(40, 40));
        assert_eq!(b.index(&total, 3), Some(1.0));
        b.job_closed(q, Resources::new(40, 40));
        b.job_closed(a, Resources::new(10, 10));
        assert_eq!(b.index(&total, 1), None);
    }
}
