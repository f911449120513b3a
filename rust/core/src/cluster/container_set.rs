//! The containers on one node, in id order. A node holds few containers and
//! new ids are the largest, so a sorted vector serves (insertion is a push);
//! up to two ids are kept inline, in the node itself: most nodes run one or
//! two containers at a time, and a vector's buffer elsewhere was one more
//! cache miss at every placement and completion of a 15,000-node run.

use crate::ids::ContainerId;

#[derive(Clone, Debug, Default)]
pub struct ContainerSet(Ids);

/// Sorted, without repeats. Once spilled to `Many` a set stays there (it
/// keeps its buffer for the next burst, as the plain vector did).
#[derive(Clone, Debug, Default)]
enum Ids {
    #[default]
    Empty,
    One(ContainerId),
    Two([ContainerId; 2]),
    Many(Vec<ContainerId>),
}

impl ContainerSet {
    pub fn as_slice(&self) -> &[ContainerId] {
        match &self.0 {
            Ids::Empty => &[],
            Ids::One(id) => std::slice::from_ref(id),
            Ids::Two(ids) => ids,
            Ids::Many(v) => v,
        }
    }
    pub fn iter(&self) -> std::slice::Iter<'_, ContainerId> {
        self.as_slice().iter()
    }
    pub fn len(&self) -> usize {
        self.as_slice().len()
    }
    pub fn is_empty(&self) -> bool {
        self.as_slice().is_empty()
    }
    pub fn contains(&self, id: &ContainerId) -> bool {
        self.as_slice().binary_search(id).is_ok()
    }
    pub(super) fn insert(&mut self, id: ContainerId) {
        self.0 = match std::mem::take(&mut self.0) {
            Ids::Empty => Ids::One(id),
            Ids::One(a) if a == id => Ids::One(a),
            Ids::One(a) => Ids::Two(if a < id { [a, id] } else { [id, a] }),
            Ids::Two(ids) => {
                let mut v = ids.to_vec();
                if let Err(i) = v.binary_search(&id) {
                    v.insert(i, id);
                }
                if v.len() == 2 {
                    Ids::Two(ids)
                } else {
                    Ids::Many(v)
                }
            }
            Ids::Many(mut v) => {
                match v.last() {
                    Some(last) if *last >= id => {
                        if let Err(i) = v.binary_search(&id) {
                            v.insert(i, id);
                        }
                    }
                    _ => v.push(id),
                }
                Ids::Many(v)
            }
        };
    }
    pub(super) fn remove(&mut self, id: &ContainerId) {
        match &mut self.0 {
            Ids::Empty => {}
            Ids::One(a) => {
                if a == id {
                    self.0 = Ids::Empty;
                }
            }
            Ids::Two([a, b]) => {
                if a == id {
                    self.0 = Ids::One(*b);
                } else if b == id {
                    self.0 = Ids::One(*a);
                }
            }
            Ids::Many(v) => {
                if let Ok(i) = v.binary_search(id) {
                    v.remove(i);
                }
            }
        }
    }
}

/// Equal when they hold the same ids, however they are stored.
impl PartialEq for ContainerSet {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for ContainerSet {}

impl<'a> IntoIterator for &'a ContainerSet {
    type Item = &'a ContainerId;
    type IntoIter = std::slice::Iter<'a, ContainerId>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    proptest! {
        /// Any sequence of inserts and removals (ids mostly rising, some
        /// repeated or older, as recovered containers bring) leaves the same
        /// ids, in the same order, as an ordered set.
        #[test]
        fn holds_what_an_ordered_set_holds(ops in proptest::collection::vec((0u64..24, 0u8..3), 0..200)) {
            let mut set = ContainerSet::default();
            let mut model = BTreeSet::new();
            for (id, op) in ops {
                let id = ContainerId(id);
                if op == 0 {
                    set.remove(&id);
                    model.remove(&id);
                } else {
                    set.insert(id);
                    model.insert(id);
                }
                prop_assert!(set.iter().eq(model.iter()), "{:?} vs {:?}", set, model);
                prop_assert_eq!(set.len(), model.len());
                prop_assert_eq!(set.contains(&id), model.contains(&id));
            }
        }
    }

    #[test]
    fn equal_whatever_the_storage() {
        let mut spilled = ContainerSet::default();
        for i in 1..=3 {
            spilled.insert(ContainerId(i));
        }
        spilled.remove(&ContainerId(3));
        let mut inline = ContainerSet::default();
        inline.insert(ContainerId(2));
        inline.insert(ContainerId(1));
        assert_eq!(spilled, inline);
    }
}
