//! An app's asks by priority: a vector kept sorted by priority. An app has
//! one to a few asks (an AM, maps, reduces), and a `BTreeMap` spends a whole
//! eleven-slot node (about 1.3 KB with `AskState`) on each app however few
//! it holds: at data-center scale, with tens of thousands of apps waiting,
//! those nodes were three quarters of the simulator's heap. The methods are
//! the map's, with the same order (lowest priority value first).

use super::AskState;
use crate::ids::Priority;
use std::ops::RangeBounds;

#[derive(Clone, Debug, Default)]
pub struct AskBook {
    /// Sorted by priority, one entry per priority.
    entries: Vec<(Priority, AskState)>,
}

impl AskBook {
    fn position(&self, prio: &Priority) -> Result<usize, usize> {
        self.entries.binary_search_by(|(p, _)| p.cmp(prio))
    }
    pub fn len(&self) -> usize {
        self.entries.len()
    }
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
    pub fn get(&self, prio: &Priority) -> Option<&AskState> {
        self.position(prio).ok().map(|i| &self.entries[i].1)
    }
    pub fn get_mut(&mut self, prio: &Priority) -> Option<&mut AskState> {
        self.position(prio).ok().map(move |i| &mut self.entries[i].1)
    }
    /// Puts `state` at `prio`, returning what was there.
    pub fn insert(&mut self, prio: Priority, state: AskState) -> Option<AskState> {
        match self.position(&prio) {
            Ok(i) => Some(std::mem::replace(&mut self.entries[i].1, state)),
            Err(i) => {
                self.entries.insert(i, (prio, state));
                None
            }
        }
    }
    /// The ask at `prio`, made by `make` if there is none (the map's
    /// `entry(prio).or_insert_with(make)`).
    pub fn get_or_insert_with(&mut self, prio: Priority, make: impl FnOnce() -> AskState) -> &mut AskState {
        let i = match self.position(&prio) {
            Ok(i) => i,
            Err(i) => {
                self.entries.insert(i, (prio, make()));
                i
            }
        };
        &mut self.entries[i].1
    }
    pub fn remove(&mut self, prio: &Priority) -> Option<AskState> {
        let i = self.position(prio).ok()?;
        let (_, state) = self.entries.remove(i);
        if self.entries.is_empty() {
            // An app whose asks are all served gives the memory back.
            self.entries = Vec::new();
        }
        Some(state)
    }
    /// Priorities and asks, lowest priority value first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&Priority, &AskState)> + ExactSizeIterator + Clone {
        self.entries.iter().map(|(p, s)| (p, s))
    }
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &Priority> + ExactSizeIterator + Clone {
        self.entries.iter().map(|(p, _)| p)
    }
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &AskState> + ExactSizeIterator + Clone {
        self.entries.iter().map(|(_, s)| s)
    }
    /// The entries whose priority lies in `range`, in order.
    pub fn range<R: RangeBounds<Priority>>(&self, range: R) -> impl DoubleEndedIterator<Item = (&Priority, &AskState)> {
        self.entries.iter().filter(move |(p, _)| range.contains(p)).map(|(p, s)| (p, s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Ask, Phase};
    use crate::resources::Resources;
    use std::collections::BTreeMap;

    fn state(prio: u32, count: u32) -> AskState {
        AskState {
            ask: Ask {
                priority: Priority(prio),
                capability: Resources::new(1024, 1),
                count,
                phase: Phase::Other,
                locality: Vec::new(),
                relax_locality: true,
                label: None,
                est_task_ms: None,
            },
            outstanding: count,
        }
    }

    /// The book answers as the `BTreeMap` it replaced, over a long random
    /// sequence of inserts and removals at a handful of priorities.
    #[test]
    fn ask_book_answers_as_a_btree_map() {
        let mut book = AskBook::default();
        let mut map: BTreeMap<Priority, AskState> = BTreeMap::new();
        let mut x: u64 = 7;
        for step in 0..5_000u32 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let prio = Priority(((x >> 33) % 7) as u32);
            if (x >> 20) % 5 == 1 {
                book.get_or_insert_with(prio, || state(prio.0, step)).outstanding += 2;
                map.entry(prio).or_insert_with(|| state(prio.0, step)).outstanding += 2;
            } else if (x >> 20).is_multiple_of(3) {
                assert_eq!(book.remove(&prio).map(|s| s.outstanding), map.remove(&prio).map(|s| s.outstanding));
            } else {
                let got = book.insert(prio, state(prio.0, step));
                let want = map.insert(prio, state(prio.0, step));
                assert_eq!(got.map(|s| s.outstanding), want.map(|s| s.outstanding));
            }
            if let Some(s) = book.get_mut(&prio) {
                s.outstanding += 1;
                map.get_mut(&prio).expect("the map has it too").outstanding += 1;
            }
            let b: Vec<(u32, u32)> = book.iter().map(|(p, s)| (p.0, s.outstanding)).collect();
            let m: Vec<(u32, u32)> = map.iter().map(|(p, s)| (p.0, s.outstanding)).collect();
            assert_eq!(b, m, "step {step}");
            let from = Priority(((x >> 40) % 7) as u32);
            let br: Vec<u32> = book.range(from..).map(|(p, _)| p.0).collect();
            let mr: Vec<u32> = map.range(from..).map(|(p, _)| p.0).collect();
            assert_eq!(br, mr);
            assert_eq!(book.len(), map.len());
            assert_eq!(book.get(&prio).map(|s| s.outstanding), map.get(&prio).map(|s| s.outstanding));
        }
    }
}
