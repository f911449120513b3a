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
