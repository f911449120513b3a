//! The set of nodes with room, as a bitset over node ids: a node gains and
//! loses free space on nearly every allocation and completion, and the
//! policies walk the set on every scheduling pass
//! ([`Cluster::nodes_with_space`](super::Cluster::nodes_with_space)).

use super::slab::DENSE_IDS;
use crate::ids::NodeId;
use std::collections::BTreeSet;

/// Node ids in id order, as a bitset (a node gains and loses free space on
/// nearly every allocation and completion).
#[derive(Clone, Debug, Default)]
pub(super) struct NodeBits {
    words: Vec<u64>,
    count: usize,
    /// Ids past the dense range (see `slab`), kept apart.
    sparse: BTreeSet<NodeId>,
}

impl NodeBits {
    pub(super) fn set(&mut self, id: NodeId, on: bool) {
        if id.0 >= DENSE_IDS {
            if on {
                self.sparse.insert(id);
            } else {
                self.sparse.remove(&id);
            }
            return;
        }
        let (w, b) = (id.0 as usize / 64, id.0 % 64);
        if w >= self.words.len() {
            if !on {
                return;
            }
            self.words.resize(w + 1, 0);
        }
        let was = self.words[w] >> b & 1 == 1;
        if was != on {
            self.words[w] ^= 1 << b;
            if on {
                self.count += 1;
            } else {
                self.count -= 1;
            }
        }
    }
    /// The first node at or after `from` in id order, without walking the
    /// nodes before it (a policy filling nodes one by one resumes here).
    pub(super) fn next_from(&self, from: NodeId) -> Option<NodeId> {
        if from.0 < DENSE_IDS {
            let (mut w, b) = (from.0 as usize / 64, from.0 % 64);
            let mut bits = self.words.get(w).map_or(0, |x| x & (u64::MAX << b));
            loop {
                if bits != 0 {
                    return Some(NodeId(w as u32 * 64 + bits.trailing_zeros()));
                }
                w += 1;
                match self.words.get(w) {
                    Some(&x) => bits = x,
                    None => break,
                }
            }
        }
        self.sparse.range(from..).next().copied()
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = NodeId> + '_ {
        let mut left = self.count;
        self.words
            .iter()
            .enumerate()
            .take_while(move |(_, w)| {
                let go = left > 0;
                left = left.saturating_sub(w.count_ones() as usize);
                go
            })
            .flat_map(|(i, &w)| {
                let mut w = w;
                std::iter::from_fn(move || {
                    if w == 0 {
                        return None;
                    }
                    let b = w.trailing_zeros();
                    w &= w - 1;
                    Some(NodeId(i as u32 * 64 + b))
                })
            })
            .chain(self.sparse.iter().copied())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cursor meets exactly the ids the full walk gives, across word
    /// boundaries and into the sparse range.
    #[test]
    fn the_cursor_walks_what_the_iterator_walks() {
        let mut bits = NodeBits::default();
        let ids = [0, 1, 63, 64, 65, 130, 1000, DENSE_IDS - 1, DENSE_IDS, DENSE_IDS + 7, u32::MAX];
        for &i in &ids {
            bits.set(NodeId(i), true);
        }
        bits.set(NodeId(65), false);
        let all: Vec<NodeId> = bits.iter().collect();
        let mut walked = Vec::new();
        let mut at = bits.next_from(NodeId(0));
        while let Some(n) = at {
            walked.push(n);
            at = n.0.checked_add(1).and_then(|m| bits.next_from(NodeId(m)));
        }
        assert_eq!(walked, all);
        assert_eq!(all.len(), ids.len() - 1);
        assert_eq!(bits.next_from(NodeId(66)), Some(NodeId(130)));
        assert_eq!(bits.next_from(NodeId(1001)), Some(NodeId(DENSE_IDS - 1)));
        assert_eq!(NodeBits::default().next_from(NodeId(5)), None);
    }
}
