//! The simulator's event queue: a 4-ary min-heap. Every pending event of a
//! run sits here (about one per running task: 15,000 at data-center scale),
//! and popping the next one was a tenth of a 100,000-job run, most of it
//! cache misses while sifting through fourteen levels of a binary heap.
//! Four children per node halve the levels, and siblings share cache lines.
//! Entries are totally ordered (the engine's carry a sequence number), so
//! the pops come out in exactly the order a binary heap gives.

pub(super) struct EventQueue<T> {
    heap: Vec<T>,
}

const ARITY: usize = 4;

impl<T: Ord + Copy> EventQueue<T> {
    pub(super) fn new() -> Self {
        EventQueue { heap: Vec::new() }
    }

    pub(super) fn peek(&self) -> Option<&T> {
        self.heap.first()
    }

    pub(super) fn push(&mut self, item: T) {
        self.heap.push(item);
        self.sift_up(self.heap.len() - 1, item);
    }

    /// Removes and returns the smallest entry.
    pub(super) fn pop(&mut self) -> Option<T> {
        let last = self.heap.pop()?;
        let Some(&top) = self.heap.first() else { return Some(last) };
        // As std's BinaryHeap: the hole at the root moves down to a leaf
        // along the smallest children, then `last` rises from there (it
        // came from the bottom, so it rarely rises far).
        let n = self.heap.len();
        let mut hole = 0;
        loop {
            let first = ARITY * hole + 1;
            if first >= n {
                break;
            }
            let end = (first + ARITY).min(n);
            let mut best = first;
            for c in first + 1..end {
                if self.heap[c] < self.heap[best] {
                    best = c;
                }
            }
            self.heap[hole] = self.heap[best];
            hole = best;
        }
        self.heap[hole] = last;
        self.sift_up(hole, last);
        Some(top)
    }

    fn sift_up(&mut self, mut at: usize, item: T) {
        while at > 0 {
            let parent = (at - 1) / ARITY;
            if item >= self.heap[parent] {
                break;
            }
            self.heap[at] = self.heap[parent];
            at = parent;
        }
        self.heap[at] = item;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    proptest! {
        /// Any interleaving of pushes and pops gives what std's binary heap
        /// gives: the engine's runs stay byte-identical.
        #[test]
        fn pops_as_a_binary_heap(ops in proptest::collection::vec((0u64..50, any::<bool>()), 0..600)) {
            let mut q = EventQueue::new();
            let mut reference = BinaryHeap::new();
            for (seq, (time, pop)) in ops.into_iter().enumerate() {
                if pop {
                    prop_assert_eq!(q.pop(), reference.pop().map(|Reverse(x)| x));
                } else {
                    q.push((time, seq));
                    reference.push(Reverse((time, seq)));
                }
                prop_assert_eq!(q.peek().copied(), reference.peek().map(|Reverse(x)| *x));
            }
            while let Some(Reverse(x)) = reference.pop() {
                prop_assert_eq!(q.pop(), Some(x));
            }
            prop_assert_eq!(q.pop(), None);
        }
    }
}
