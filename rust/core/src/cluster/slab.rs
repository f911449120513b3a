//! Nodes and apps by id: a dense vector for the ids hosts hand out from a
//! counter (fast on every heartbeat), and an ordered map past
//! [`DENSE_IDS`], so an id near 2^32 from a hostile recording or a long-lived
//! RM costs one map entry, not gigabytes of empty slots.

use std::collections::BTreeMap;

/// Ids below this live in the dense vector (8 bytes of slot each at most:
/// 8 MiB however many ids a host has used).
pub const DENSE_IDS: u32 = 1 << 20;

#[derive(Clone, Debug)]
pub struct IdSlab<T> {
    dense: Vec<Option<T>>,
    sparse: BTreeMap<u32, T>,
}

impl<T> Default for IdSlab<T> {
    fn default() -> Self {
        IdSlab { dense: Vec::new(), sparse: BTreeMap::new() }
    }
}

impl<T> IdSlab<T> {
    pub fn get(&self, id: u32) -> Option<&T> {
        if id < DENSE_IDS {
            self.dense.get(id as usize)?.as_ref()
        } else {
            self.sparse.get(&id)
        }
    }

    pub fn get_mut(&mut self, id: u32) -> Option<&mut T> {
        if id < DENSE_IDS {
            self.dense.get_mut(id as usize)?.as_mut()
        } else {
            self.sparse.get_mut(&id)
        }
    }

    /// Puts `value` at `id`, returning what was there.
    pub fn insert(&mut self, id: u32, value: T) -> Option<T> {
        if id < DENSE_IDS {
            let i = id as usize;
            if i >= self.dense.len() {
                self.dense.resize_with(i + 1, || None);
            }
            self.dense[i].replace(value)
        } else {
            self.sparse.insert(id, value)
        }
    }

    pub fn remove(&mut self, id: u32) -> Option<T> {
        if id < DENSE_IDS {
            self.dense.get_mut(id as usize)?.take()
        } else {
            self.sparse.remove(&id)
        }
    }

    /// Every value in id order.
    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.dense.iter().filter_map(|v| v.as_ref()).chain(self.sparse.values())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_far_apart_cost_little_and_iterate_in_order() {
        let mut s = IdSlab::default();
        s.insert(u32::MAX, "max");
        s.insert(3, "three");
        s.insert(DENSE_IDS, "edge");
        assert!(s.dense.len() <= 4, "no slots for the far ids");
        assert_eq!(s.values().copied().collect::<Vec<_>>(), vec!["three", "edge", "max"]);
        assert_eq!(s.remove(u32::MAX), Some("max"));
        assert_eq!(s.get(u32::MAX), None);
        assert_eq!(s.get(3), Some(&"three"));
    }
}
