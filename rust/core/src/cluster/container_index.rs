//! Container id → slab slot, in id order. The core hands out container ids
//! in increasing order (a host's recovered ids move its counter past them),
//! and the live ones are the newest few thousand with a few older ones still
//! running, so the index is a window of fixed pages over the id space: a
//! lookup, insert or removal is an array access, a page is freed when its
//! last id goes, and the window's empty ends are trimmed. An id that would
//! stretch the window past [`MAX_PAGES`] (a hostile recording, a container
//! that outlives millions of others) goes to an ordered map instead, so
//! memory never follows an id's value.

use crate::ids::ContainerId;
use std::collections::{BTreeMap, VecDeque};
use std::iter::Peekable;

const PAGE_BITS: u32 = 8;
const PAGE: usize = 1 << PAGE_BITS;
/// The widest window, in pages: 2^24 ids, a page table of 512 KiB at most.
const MAX_PAGES: u64 = 1 << 16;
const EMPTY: u32 = u32::MAX;

#[derive(Clone, Debug)]
struct Page {
    slots: Box<[u32; PAGE]>,
    live: u16,
}

#[derive(Clone, Debug, Default)]
pub(super) struct ContainerIndex {
    /// The page number of `pages[0]`.
    first_page: u64,
    pages: VecDeque<Option<Page>>,
    /// Ids outside the window when they came.
    far: BTreeMap<ContainerId, u32>,
}

impl ContainerIndex {
    /// `(page index, offset)` of `id` if it lies inside the window.
    fn locate(&self, id: ContainerId) -> Option<(usize, usize)> {
        let i = (id.0 >> PAGE_BITS).checked_sub(self.first_page)?;
        (i < self.pages.len() as u64).then_some((i as usize, id.0 as usize & (PAGE - 1)))
    }

    pub(super) fn get(&self, id: ContainerId) -> Option<u32> {
        if let Some((i, o)) = self.locate(id) {
            if let Some(s) = self.pages[i].as_ref().map(|p| p.slots[o]).filter(|s| *s != EMPTY) {
                return Some(s);
            }
        }
        self.far.get(&id).copied()
    }

    /// Maps `id` (not yet in the index) to `slot`.
    pub(super) fn insert(&mut self, id: ContainerId, slot: u32) {
        let page = id.0 >> PAGE_BITS;
        if self.pages.is_empty() {
            self.first_page = page;
        }
        let end = self.first_page + self.pages.len() as u64;
        let span = end.max(page + 1) - self.first_page.min(page);
        if span > MAX_PAGES || slot == EMPTY {
            self.far.insert(id, slot);
            return;
        }
        while page < self.first_page {
            self.pages.push_front(None);
            self.first_page -= 1;
        }
        while page >= self.first_page + self.pages.len() as u64 {
            self.pages.push_back(None);
        }
        let p = self.pages[(page - self.first_page) as usize]
            .get_or_insert_with(|| Page { slots: Box::new([EMPTY; PAGE]), live: 0 });
        let o = id.0 as usize & (PAGE - 1);
        if p.slots[o] == EMPTY {
            p.live += 1;
        }
        p.slots[o] = slot;
    }

    pub(super) fn remove(&mut self, id: ContainerId) -> Option<u32> {
        if let Some((i, o)) = self.locate(id) {
            if let Some(p) = self.pages[i].as_mut() {
                let s = p.slots[o];
                if s != EMPTY {
                    p.slots[o] = EMPTY;
                    p.live -= 1;
                    if p.live == 0 {
                        self.pages[i] = None;
                        self.trim();
                    }
                    return Some(s);
                }
            }
        }
        self.far.remove(&id)
    }

    fn trim(&mut self) {
        while matches!(self.pages.front(), Some(None)) {
            self.pages.pop_front();
            self.first_page += 1;
        }
        while matches!(self.pages.back(), Some(None)) {
            self.pages.pop_back();
        }
    }

    /// Every (id, slot), in id order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (ContainerId, u32)> + '_ {
        let window = self.pages.iter().enumerate().flat_map(move |(i, p)| {
            let base = (self.first_page + i as u64) << PAGE_BITS;
            p.iter().flat_map(move |p| {
                p.slots
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| **s != EMPTY)
                    .map(move |(o, s)| (ContainerId(base + o as u64), *s))
            })
        });
        Merge { a: window.peekable(), b: self.far.iter().map(|(id, s)| (*id, *s)).peekable() }
    }
}

/// Two iterators sorted by id, merged (an id is in one of them only).
struct Merge<A: Iterator<Item = (ContainerId, u32)>, B: Iterator<Item = (ContainerId, u32)>> {
    a: Peekable<A>,
    b: Peekable<B>,
}

impl<A: Iterator<Item = (ContainerId, u32)>, B: Iterator<Item = (ContainerId, u32)>> Iterator for Merge<A, B> {
    type Item = (ContainerId, u32);
    fn next(&mut self) -> Option<Self::Item> {
        match (self.a.peek(), self.b.peek()) {
            (Some(x), Some(y)) if y.0 < x.0 => self.b.next(),
            (Some(_), _) => self.a.next(),
            (None, _) => self.b.next(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random inserts and removals, with ids that mostly rise and some far
    /// away, against an ordered map: same lookups, same order.
    #[test]
    fn agrees_with_an_ordered_map() {
        let mut rng = crate::rng::Rng::seeded(11);
        let mut index = ContainerIndex::default();
        let mut model: BTreeMap<ContainerId, u32> = BTreeMap::new();
        let mut next = 1u64;
        for step in 0..60_000u32 {
            match rng.below(10) {
                0..=4 => {
                    let id = match rng.below(50) {
                        0 => ContainerId(rng.next_u64()),
                        1 => ContainerId(next + (1 << 26)),
                        _ => {
                            next += 1 + rng.below(3);
                            ContainerId(next)
                        }
                    };
                    if let std::collections::btree_map::Entry::Vacant(e) = model.entry(id) {
                        index.insert(id, step);
                        e.insert(step);
                    }
                }
                _ => {
                    // remove a live id, mostly an old one
                    let pick = model.keys().nth(rng.below(model.len().max(1) as u64 / 4 + 1) as usize).copied();
                    if let Some(id) = pick {
                        assert_eq!(index.remove(id), model.remove(&id));
                    }
                    let missing = ContainerId(rng.next_u64());
                    assert_eq!(index.get(missing), model.get(&missing).copied());
                }
            }
            if step % 997 == 0 {
                assert!(index.iter().eq(model.iter().map(|(k, v)| (*k, *v))), "order at step {step}");
                for (id, s) in &model {
                    assert_eq!(index.get(*id), Some(*s));
                }
            }
        }
        assert!(index.pages.len() as u64 <= MAX_PAGES);
        while let Some((id, _)) = model.pop_first() {
            assert!(index.remove(id).is_some());
        }
        assert!(index.pages.is_empty() && index.far.is_empty());
    }
}
