//! A policy's wake-ups. Each timer carries a payload the policy defines (an
//! enum such as `Aging` or `QuantumEnd(ContainerId)`), so no meaning is
//! encoded in a bare integer; setting and cancelling cost O(log n), as in
//! quinn's `TimerTable`, but keyed by payload rather than by a fixed set of
//! slots, since a policy may hold one timer per container.
//!
//! The policy owns its table and reports its first deadline through
//! [`Policy::next_wake`](crate::Policy::next_wake); the core calls
//! [`Policy::on_wake`](crate::Policy::on_wake) at the start of the first
//! [`Core::step`](crate::Core::step) at or after it, where the policy pops the
//! due timers with [`TimerTable::pop_due`].

use crate::time::Time;
use std::collections::BTreeSet;

/// Pending wake-ups, ordered by (time, payload). One payload may be pending
/// at several times; [`TimerTable::cancel`] removes them all.
#[derive(Clone, Debug)]
pub struct TimerTable<K: Ord + Clone> {
    due: BTreeSet<(Time, K)>,
    /// The same entries by payload first, for `cancel` and `is_pending`
    /// (two flat sets: a set or pop is two tree operations and no
    /// allocation per payload).
    by_key: BTreeSet<(K, Time)>,
}

impl<K: Ord + Clone> Default for TimerTable<K> {
    fn default() -> Self {
        TimerTable { due: BTreeSet::new(), by_key: BTreeSet::new() }
    }
}

impl<K: Ord + Clone> TimerTable<K> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Wakes the policy at `at` with `key`; a time before `now` is `now`
    /// (the timer fires at the start of the next step).
    pub fn set(&mut self, now: Time, at: Time, key: K) {
        let at = at.max(now);
        if self.due.insert((at, key.clone())) {
            self.by_key.insert((key, at));
        }
    }

    /// Removes every pending wake-up carrying `key`.
    pub fn cancel(&mut self, key: &K) {
        while let Some(t) = self.first_time_of(key) {
            self.by_key.remove(&(key.clone(), t));
            self.due.remove(&(t, key.clone()));
        }
    }

    fn first_time_of(&self, key: &K) -> Option<Time> {
        self.by_key.range((key.clone(), Time::ZERO)..=(key.clone(), Time::MAX)).next().map(|(_, t)| *t)
    }

    /// The earliest pending wake-up.
    pub fn next(&self) -> Option<Time> {
        self.due.first().map(|(t, _)| *t)
    }

    /// The earliest timer due at or before `now`, removed from the table.
    pub fn pop_due(&mut self, now: Time) -> Option<K> {
        let (t, _) = self.due.first()?;
        if *t > now {
            return None;
        }
        let (t, key) = self.due.pop_first()?;
        self.by_key.remove(&(key.clone(), t));
        Some(key)
    }

    /// Whether a wake-up carrying `key` is pending.
    pub fn is_pending(&self, key: &K) -> bool {
        self.first_time_of(key).is_some()
    }

    pub fn len(&self) -> usize {
        self.due.len()
    }

    pub fn is_empty(&self) -> bool {
        self.due.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
    enum T {
        A,
        B(u32),
    }

    #[test]
    fn fires_in_time_then_payload_order_and_cancel_removes_every_instance() {
        let mut t = TimerTable::new();
        t.set(Time(0), Time(20), T::B(2));
        t.set(Time(0), Time(10), T::B(1));
        t.set(Time(0), Time(10), T::A);
        t.set(Time(0), Time(30), T::B(1));
        assert_eq!(t.next(), Some(Time(10)));
        assert_eq!(t.pop_due(Time(10)), Some(T::A));
        t.cancel(&T::B(1));
        assert!(!t.is_pending(&T::B(1)));
        assert_eq!(t.pop_due(Time(15)), None);
        assert_eq!(t.pop_due(Time(100)), Some(T::B(2)));
        assert!(t.is_empty());
    }

    #[test]
    fn a_time_in_the_past_fires_at_now() {
        let mut t = TimerTable::new();
        t.set(Time(50), Time(5), T::A);
        assert_eq!(t.next(), Some(Time(50)));
        assert_eq!(t.pop_due(Time(49)), None);
        assert_eq!(t.pop_due(Time(50)), Some(T::A));
    }

    /// Random sets, cancels and pops against a plain list of (time, key):
    /// the table fires the same timers in the same order.
    #[test]
    fn agrees_with_a_plain_list() {
        let mut rng = crate::rng::Rng::seeded(7);
        let mut table = TimerTable::new();
        let mut model: Vec<(Time, u32)> = Vec::new();
        let mut now = Time(0);
        for _ in 0..20_000 {
            let key = rng.below(8) as u32;
            match rng.below(4) {
                0 | 1 => {
                    let at = Time(now.0 + rng.below(50));
                    table.set(now, at, T::B(key));
                    if !model.contains(&(at, key)) {
                        model.push((at, key));
                    }
                }
                2 => {
                    table.cancel(&T::B(key));
                    model.retain(|(_, k)| *k != key);
                }
                _ => {
                    now = Time(now.0 + rng.below(10));
                    model.sort();
                    while let Some(&(t, k)) = model.first().filter(|(t, _)| *t <= now) {
                        assert_eq!(table.pop_due(now), Some(T::B(k)), "at {t:?}");
                        model.remove(0);
                    }
                    assert_eq!(table.pop_due(now), None);
                }
            }
            assert_eq!(table.len(), model.len());
            assert_eq!(table.is_pending(&T::B(key)), model.iter().any(|(_, k)| *k == key));
            assert_eq!(table.next(), model.iter().map(|(t, _)| *t).min());
        }
    }
}
