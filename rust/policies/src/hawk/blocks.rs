//! A node queue cut into blocks of consecutive entries, each with a
//! summary of what SRPT's scan ([`super::srpt`], Algorithm 1 as delgado.md
//! §5 E3 gives it) reads of its entries: the least slack, the least
//! estimates, whether a long entry is there, and the probes' ask slots.
//! With it the scan passes a block none of whose entries it could choose
//! nor purge, taking only its least slack.
//!
//! At 500,000 Google-like jobs on 15,000 nodes the part of a queue SRPT
//! scans grows past a thousand entries, and 19 in 20 of the entries a scan
//! reads are such: the least slack in front is already below their
//! estimates. The block lengths are kept apart from the summaries, so
//! finding a block streams a few cache lines.

use super::nodes::Hot;
use std::collections::VecDeque;

/// Entries per block (at most twice as many after inserts in the middle).
/// Small in tests, so that short queues span many blocks.
#[cfg(not(test))]
const BLOCK: u32 = 32;
#[cfg(test)]
const BLOCK: u32 = 3;

/// A set of ask slots in 256 bits (a slot's bit is its number mod 256): a
/// clear bit means the slot is not in the set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProbeSlots([u64; 4]);

impl ProbeSlots {
    fn insert(&mut self, slot: u32) {
        self.0[((slot / 64) % 4) as usize] |= 1 << (slot % 64);
    }

    /// Whether a slot may be in both this and `folded` ([`super::nodes::SlotBits::folded`]).
    #[inline]
    pub fn meets(&self, folded: &[u64; 4]) -> bool {
        self.0.iter().zip(folded).any(|(a, b)| a & b != 0)
    }

    #[cfg(test)]
    fn covers(&self, other: &ProbeSlots) -> bool {
        self.0.iter().zip(&other.0).all(|(a, b)| a & b == *b)
    }
}

/// What SRPT's scan needs to know of a block to pass it without reading
/// its entries.
#[derive(Clone, Copy, Debug)]
pub struct BlockSummary {
    /// The starvation factor `min_slack` was computed with.
    factor_bits: u64,
    /// The least slack ([`Hot::slack`]) of the block's entries, NaN slacks
    /// left out, as the scan folds them.
    pub min_slack: f64,
    /// The least estimate of the block's short probes (`u64::MAX`: none).
    pub min_probe_est_us: u64,
    /// The least estimate of its other entries (`u64::MAX`: none).
    pub min_other_est_us: u64,
    /// The ask slots of its short probes.
    pub probe_slots: ProbeSlots,
    /// Whether a long entry is in the block.
    pub long: bool,
    /// Entries that left since the summary was made: the least estimates
    /// and the slots may then be below and above the block's own (which
    /// only makes a scan read a block it could have passed); the least
    /// slack and `long` stay exact.
    loose: u32,
}

impl BlockSummary {
    fn of<'a>(entries: impl Iterator<Item = &'a Hot> + Clone, factor: f64) -> BlockSummary {
        let mut s = BlockSummary {
            factor_bits: factor.to_bits(),
            min_slack: least_slack(entries.clone(), factor),
            min_probe_est_us: u64::MAX,
            min_other_est_us: u64::MAX,
            probe_slots: ProbeSlots::default(),
            long: false,
            loose: 0,
        };
        for e in entries {
            s.count(e);
        }
        s
    }

    /// Counts entry `e` in, but for its slack.
    fn count(&mut self, e: &Hot) {
        self.long |= e.long();
        if e.probe() && !e.long() {
            self.min_probe_est_us = self.min_probe_est_us.min(e.est_us());
            self.probe_slots.insert(e.view());
        } else {
            self.min_other_est_us = self.min_other_est_us.min(e.est_us());
        }
    }

    /// Entry `e` joined the block.
    fn joined(&mut self, e: &Hot) {
        let slack = e.slack(f64::from_bits(self.factor_bits));
        if slack < self.min_slack {
            self.min_slack = slack;
        }
        self.count(e);
    }

    /// Entry `e` left the block: whether the summary still holds (it does
    /// not when `e` may have held the least slack or was long, nor after a
    /// quarter of a block left).
    fn left(&mut self, e: &Hot) -> bool {
        self.loose += 1;
        !(e.long() || e.slack(f64::from_bits(self.factor_bits)) == self.min_slack || self.loose > BLOCK.div_ceil(4))
    }
}

/// The least slack of `entries` as SRPT's scan folds them (NaN left out).
fn least_slack<'a>(entries: impl Iterator<Item = &'a Hot>, factor: f64) -> f64 {
    let mut least = f64::INFINITY;
    for e in entries {
        let slack = e.slack(factor);
        if slack < least {
            least = slack;
        }
    }
    least
}

/// A queue's blocks: their lengths, which sum to the queue's, none 0, and
/// apart, their summaries, made when a scan first needs one and dropped
/// when the block changes in a way they cannot follow.
#[derive(Clone, Debug, Default)]
pub struct Blocks {
    lens: VecDeque<u32>,
    sums: VecDeque<Option<BlockSummary>>,
}

impl Blocks {
    /// The block holding entry `at` and where it starts (`None` past the end).
    pub fn locate(&self, at: usize) -> Option<(usize, usize)> {
        let mut start = 0;
        for (b, len) in self.lens.iter().enumerate() {
            let end = start + *len as usize;
            if at < end {
                return Some((b, start));
            }
            start = end;
        }
        None
    }

    /// Entry `e` joined the queue at its back.
    pub fn pushed(&mut self, e: &Hot) {
        match self.lens.back_mut() {
            Some(len) if *len < BLOCK => {
                *len += 1;
                if let Some(Some(s)) = self.sums.back_mut() {
                    s.joined(e);
                }
            }
            _ => {
                self.lens.push_back(1);
                self.sums.push_back(None);
            }
        }
    }

    /// Entry `e` joined block `b` (split past twice [`BLOCK`]).
    pub fn inserted(&mut self, b: usize, e: &Hot) {
        let (Some(len), Some(sum)) = (self.lens.get_mut(b), self.sums.get_mut(b)) else { return };
        *len += 1;
        if let Some(s) = sum {
            s.joined(e);
        }
        if *len > 2 * BLOCK {
            let rest = *len - BLOCK;
            (*len, *sum) = (BLOCK, None);
            self.lens.insert(b + 1, rest);
            self.sums.insert(b + 1, None);
        }
    }

    /// Entry `e` left block `b`.
    pub fn removed(&mut self, b: usize, e: &Hot) {
        let (Some(len), Some(sum)) = (self.lens.get_mut(b), self.sums.get_mut(b)) else { return };
        *len -= 1;
        if *len == 0 {
            self.lens.remove(b);
            self.sums.remove(b);
        } else if !sum.as_mut().is_some_and(|s| s.left(e)) {
            *sum = None;
        }
    }

    /// The entries in `range` left the queue.
    pub fn drained(&mut self, range: std::ops::Range<usize>) {
        let mut start = 0;
        for (len, sum) in self.lens.iter_mut().zip(self.sums.iter_mut()) {
            let end = start + *len as usize;
            let cut = end.min(range.end).saturating_sub(start.max(range.start));
            if cut > 0 {
                (*len, *sum) = (*len - cut as u32, None);
            }
            if end >= range.end {
                break;
            }
            start = end;
        }
        while let Some(b) = self.lens.iter().position(|len| *len == 0) {
            self.lens.remove(b);
            self.sums.remove(b);
        }
    }

    /// Adds `us` to the bypass counter of the first `n` entries of `hot`,
    /// block by block, making each summarized block's least slack again
    /// while its entries are at hand (dropped, every summary in front of a
    /// served entry would be made again by the next scan, and SRPT serves
    /// entries deep in the queue).
    pub fn bypass(&mut self, hot: &mut VecDeque<Hot>, n: usize, us: u64) {
        let mut start = 0;
        for (len, sum) in self.lens.iter().zip(self.sums.iter_mut()) {
            if start >= n {
                break;
            }
            let end = (start + *len as usize).min(hot.len());
            for h in hot.range_mut(start.min(end)..end.min(n)) {
                h.add_bypass(us);
            }
            if let Some(s) = sum {
                s.min_slack = least_slack(hot.range(start.min(end)..end), f64::from_bits(s.factor_bits));
            }
            start = end;
        }
    }

    /// Whether the blocks cover `hot`, none empty, and every summary kept
    /// (with `factor`) is one a scan may use: the least slack and `long`
    /// exact, the least estimates no higher, the slots no fewer.
    #[cfg(test)]
    pub fn hold(&self, hot: &VecDeque<Hot>, factor: f64) -> bool {
        let mut start = 0;
        for (len, sum) in self.lens.iter().zip(&self.sums) {
            let end = start + *len as usize;
            if *len == 0 || end > hot.len() {
                return false;
            }
            if let Some(s) = sum.filter(|s| s.factor_bits == factor.to_bits()) {
                let fresh = BlockSummary::of(hot.range(start..end), factor);
                if s.min_slack != fresh.min_slack
                    || s.long != fresh.long
                    || s.min_probe_est_us > fresh.min_probe_est_us
                    || s.min_other_est_us > fresh.min_other_est_us
                    || !s.probe_slots.covers(&fresh.probe_slots)
                {
                    return false;
                }
            }
            start = end;
        }
        start == hot.len() && self.lens.len() == self.sums.len()
    }
}

/// A queue's scanned part with its blocks, for one scan.
pub struct Summaries<'a> {
    hot: &'a VecDeque<Hot>,
    blocks: &'a mut Blocks,
}

impl<'a> Summaries<'a> {
    pub fn new(hot: &'a VecDeque<Hot>, blocks: &'a mut Blocks) -> Summaries<'a> {
        Summaries { hot, blocks }
    }

    /// The number of entries of block `b`.
    #[inline]
    pub fn len(&self, b: usize) -> Option<usize> {
        self.blocks.lens.get(b).map(|len| *len as usize)
    }

    /// The summary of block `b`, which starts at entry `start`.
    pub fn summary(&mut self, b: usize, start: usize, factor: f64) -> Option<&BlockSummary> {
        let hot = self.hot;
        let len = *self.blocks.lens.get(b)? as usize;
        let sum = self.blocks.sums.get_mut(b)?;
        if sum.is_none_or(|s| s.factor_bits != factor.to_bits()) {
            let end = (start + len).min(hot.len());
            *sum = Some(BlockSummary::of(hot.range(start.min(end)..end), factor));
        }
        sum.as_ref()
    }
}
