//! Property test of the lagging phases of a virtual pool
//! (virtual_cluster.rs): through random phases, task-list replacements,
//! removals, resizes and steps of the virtual clock, a pool where some
//! phases lag behind the clock is, bit for bit, the pool where every phase
//! takes every step: the same tasks, slots, virtual completions in the
//! same order, and the same next completion; and every phase holds the
//! virtual slots a full max-min pass grants (an idle pool of no slots
//! skips that pass). And a step of a phase's run-length encoded tasks is
//! the step of each task alone.

use super::virtual_cluster::{Pool, Tasks};
use proptest::prelude::*;
use std::collections::BTreeMap;

#[derive(Clone, Debug)]
enum Op {
    Insert(u8, Vec<(u16, u8)>),
    Replace(u8, Vec<(u16, u8)>),
    Remove(u8),
    Resize(u8),
    Advance(u16),
    Lag(u8, bool),
}

/// Task works drawn from few values (runs meet and merge) in slot-ms
/// of a quarter, so steps land exactly on completions too.
fn tasks(runs: &[(u16, u8)]) -> Tasks {
    let mut t = Tasks::default();
    for (w, n) in runs {
        t.push(f64::from(*w) * 0.25 + 0.1, u64::from(*n));
    }
    t
}

fn op() -> impl Strategy<Value = Op> {
    let runs = prop::collection::vec((prop::sample::select(vec![1u16, 2, 3, 7, 40, 41, 400]), 1u8..5), 0..4);
    prop_oneof![
        3 => (0u8..8, runs.clone()).prop_map(|(k, r)| Op::Insert(k, r)),
        1 => (0u8..8, runs).prop_map(|(k, r)| Op::Replace(k, r)),
        1 => (0u8..8).prop_map(Op::Remove),
        // No slots often: a pool of none skips the max-min pass while idle.
        1 => prop_oneof![Just(0u8), 0u8..12].prop_map(Op::Resize),
        5 => prop::sample::select(vec![1u16, 3, 4, 10, 25, 160, 1000]).prop_map(Op::Advance),
        3 => (0u8..8, any::<bool>()).prop_map(|(k, l)| Op::Lag(k, l)),
    ]
}

fn same(lagging: &Pool<u8>, eager: &Pool<u8>) -> Result<(), TestCaseError> {
    // An idle pool of no slots skips the max-min pass: its grants must be
    // the pass's all the same.
    for pool in [lagging, eager] {
        let running: BTreeMap<u8, usize> = pool.phases.iter().map(|(k, p)| (*k, p.running)).collect();
        prop_assert_eq!(running, pool.grants_from_scratch(), "virtual slots held");
    }
    prop_assert_eq!(lagging.next_completion().map(f64::to_bits), eager.next_completion().map(f64::to_bits));
    prop_assert_eq!(lagging.phases.len(), eager.phases.len());
    for (k, p) in &eager.phases {
        let q = &lagging.phases[k];
        prop_assert_eq!((q.running, q.finish_seq), (p.running, p.finish_seq), "phase {}", k);
        prop_assert_eq!(lagging.tasks_of(*k), Some(p.tasks.clone()), "phase {}'s tasks", k);
        prop_assert_eq!(lagging.size_of(*k).map(f64::to_bits), Some(p.size().to_bits()), "phase {}'s size", k);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn lagging_phases_end_where_stepped_ones_do(slots in 0usize..10, ops in prop::collection::vec(op(), 1..120)) {
        let mut lagging: Pool<u8> = Pool::new(slots);
        let mut eager: Pool<u8> = Pool::new(slots);
        let mut order = 0;
        for op in ops {
            match op {
                Op::Insert(k, r) => {
                    order += 1;
                    lagging.insert(k, order, tasks(&r));
                    eager.insert(k, order, tasks(&r));
                }
                Op::Replace(k, r) => {
                    lagging.replace_tasks(k, tasks(&r));
                    eager.replace_tasks(k, tasks(&r));
                }
                Op::Remove(k) => {
                    lagging.remove(k);
                    eager.remove(k);
                }
                Op::Resize(s) => {
                    lagging.resize(s.into());
                    eager.resize(s.into());
                }
                Op::Advance(w) => {
                    let work = f64::from(w) * 0.25;
                    prop_assert_eq!(lagging.advance(work), eager.advance(work), "virtually done");
                }
                Op::Lag(k, l) => lagging.set_lagging(k, l),
            }
            same(&lagging, &eager)?;
        }
    }
}

/// One entry per task.
fn each_task(t: &Tasks) -> Vec<f64> {
    t.run_list().iter().flat_map(|(w, c)| std::iter::repeat_n(*w, *c as usize)).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn a_step_of_runs_is_a_step_of_each_task(
        runs in prop::collection::vec((prop::sample::select(vec![1u16, 2, 3, 5, 9]), 1u8..4), 0..6),
        steps in prop::collection::vec((0usize..14, prop::sample::select(vec![1u16, 2, 4])), 1..8),
    ) {
        let mut t = tasks(&runs);
        let mut each = each_task(&t);
        for (r, s) in steps {
            let step = f64::from(s) * 0.25;
            let ran = r.min(each.len());
            let rests: Vec<f64> = each[..ran].iter().map(|w| w - step).collect();
            let want_any = rests.iter().any(|w| *w <= 1e-9);
            let want_least = rests.iter().copied().filter(|w| *w > 1e-9).fold(f64::INFINITY, f64::min);
            each = rests.into_iter().filter(|w| *w > 1e-9).chain(each[ran..].iter().copied()).collect();
            prop_assert_eq!(t.advance_first(r, step), (want_any, want_least));
            prop_assert_eq!(each_task(&t), each.clone());
            prop_assert_eq!(t.len(), each.len() as u64);
            let merged = t.run_list().windows(2).all(|w| w[0].0 != w[1].0);
            prop_assert!(merged, "adjacent runs of equal work: {:?}", t.run_list());
        }
    }
}
