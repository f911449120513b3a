//! The books behind the fairness index: each open job's and queue's
//! allocation, kept as containers come and go, so that a sample costs
//! O(queues) rather than a walk over every container. Jain's index is taken
//! over the dominant shares of the queues with open jobs, or, when only one
//! queue has any, over the open jobs' own shares (from running sums of the
//! shares and their squares).

use super::jain_index;
use sojourn_core::Resources;
use std::collections::BTreeMap;

#[derive(Clone, Debug)]
pub struct FairnessBooks {
    /// The cluster's capacity the dominant shares are taken against.
    total: Resources,
    /// Σ and Σ² of open jobs' dominant shares.
    share_sum: f64,
    share_sq: f64,
    /// Allocation and open jobs per queue.
    queues: BTreeMap<String, (Resources, u32)>,
}

impl FairnessBooks {
    pub fn new(total: Resources) -> FairnessBooks {
        FairnessBooks { total, share_sum: 0.0, share_sq: 0.0, queues: BTreeMap::new() }
    }

    /// A job of `queue` opened (it holds nothing yet).
    pub fn job_opened(&mut self, queue: &str) {
        self.queues.entry(queue.to_string()).or_insert((Resources::ZERO, 0)).1 += 1;
    }

    /// A job of `queue` that held `from` now holds `to`.
    pub fn job_changed(&mut self, queue: &str, from: Resources, to: Resources) {
        let (before, after) = (from.dominant_share(&self.total), to.dominant_share(&self.total));
        self.share_sum += after - before;
        self.share_sq += after * after - before * before;
        if let Some(q) = self.queues.get_mut(queue) {
            q.0 = q.0.saturating_sub(&from) + to;
        }
    }

    /// A job of `queue` holding `held` closed.
    pub fn job_closed(&mut self, queue: &str, held: Resources) {
        let share = held.dominant_share(&self.total);
        self.share_sum -= share;
        self.share_sq -= share * share;
        if let Some(q) = self.queues.get_mut(queue) {
            q.0 = q.0.saturating_sub(&held);
            q.1 = q.1.saturating_sub(1);
        }
    }

    /// Jain's index now, with `open_jobs` jobs open: `None` when fewer than
    /// two queues, or jobs in one queue, are there to compare.
    pub fn index(&self, cluster_total: &Resources, open_jobs: usize) -> Option<f64> {
        let queues: Vec<f64> =
            self.queues.values().filter(|(_, open)| *open > 0).map(|(r, _)| r.dominant_share(cluster_total)).collect();
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
        b.job_opened("a");
        b.job_opened("a");
        // two jobs in one queue, 30 % and 10 %: (0.4)² / (2 · 0.1) = 0.8
        b.job_changed("a", Resources::ZERO, Resources::new(30, 30));
        b.job_changed("a", Resources::ZERO, Resources::new(10, 10));
        assert!((b.index(&total, 2).unwrap() - 0.8).abs() < 1e-12);
        // a second queue with the same share: perfectly fair between queues
        b.job_opened("b");
        b.job_changed("b", Resources::ZERO, Resources::new(40, 40));
        assert_eq!(b.index(&total, 3), Some(1.0));
        b.job_closed("b", Resources::new(40, 40));
        b.job_closed("a", Resources::new(10, 10));
        assert_eq!(b.index(&total, 1), None);
    }
}
