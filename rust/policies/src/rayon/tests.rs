//! Golden tests of the Rayon/CapacityScheduler baseline on tiny clusters of
//! one-slot nodes (1 GB, 1 vcore), times hand-computed with the plan step
//! of 1 s; and properties of the plan and of the policy.

use super::admission::{Admission, AdmissionConfig, Decision, Placement, Reservation};
use super::Rayon;
use crate::test_support::{allocations, core, node, schedule, tick};
use proptest::prelude::*;
use sojourn_core::{
    AppId, AppSpec, Ask, ContainerId, Decision as Out, Event, Harness, Outcome, Phase, PreemptMode, Priority,
    Resources, Time,
};

/// App `id` submitted at `t` asking `k` one-slot containers estimated at
/// `est` ms each, an SLO job if it has a `deadline`.
fn app(c: &mut Harness, t: u64, id: u32, k: u32, est: u64, deadline: Option<u64>) {
    let mut spec = AppSpec::new(AppId(id), "default", "u");
    spec.deadline = deadline.map(Time);
    c.handle(Time(t), Event::AppAdded(spec)).expect("app");
    let mut ask = Ask::new(Priority::MAP, Resources::new(1024, 1), k, Phase::Map);
    ask.est_task_ms = Some(est);
    c.handle(Time(t), Event::AsksUpdated { app: AppId(id), asks: vec![ask] }).expect("ask");
}

fn killed(ds: &[Out]) -> Vec<ContainerId> {
    ds.iter()
        .filter_map(|d| match d {
            Out::Preempt { container, mode: PreemptMode::Kill } => Some(*container),
            _ => None,
        })
        .collect()
}

fn end(c: &mut Harness, t: u64, container: ContainerId, outcome: Outcome) {
    c.handle(Time(t), Event::ContainerCompleted { container, outcome }).expect("complete");
}

fn rayon(c: &Harness) -> &Rayon {
    c.core().policy_as::<Rayon>().expect("a rayon policy")
}

fn decision(c: &Harness, id: u32) -> Option<Decision> {
    rayon(c).admission.decision(AppId(id))
}

/// Two one-slot nodes. BE app 1 takes both at 0. SLO app 2 (k = 2, 5 s,
/// deadline 11 s) arrives at 1 s: the agent places it as late as it can,
/// [6 s, 11 s). Nothing is preempted before its window; at 6 s both BE
/// containers are killed, newest first, and when they are gone app 2 gets
/// both nodes although BE app 1, submitted earlier, asks again.
#[test]
fn an_admitted_job_gets_its_capacity_while_best_effort_work_is_preempted() {
    let mut c = core("rayon", &[]);
    node(&mut c, 0, 1024, 1);
    node(&mut c, 1, 1024, 1);
    app(&mut c, 0, 1, 2, 60_000, None);
    let be = allocations(&schedule(&mut c, 0));
    assert_eq!(be.len(), 2);
    app(&mut c, 1000, 2, 2, 5000, Some(11_000));
    assert_eq!(
        decision(&c, 2),
        Some(Decision::Accepted(Reservation { start: Time(6000), end: Time(11_000), slots: 2 }))
    );
    assert!(killed(&schedule(&mut c, 1000)).is_empty(), "no preemption before the reservation starts");
    assert_eq!(c.poll_timeout(), Some(Time(6000)), "woken when the reservation starts");
    let k = killed(&tick(&mut c, 6000));
    assert_eq!(k, vec![be[1].1, be[0].1], "both BE containers, newest first");
    for v in k {
        end(&mut c, 6000, v, Outcome::Preempted);
    }
    let again = Ask::new(Priority::MAP, Resources::new(1024, 1), 2, Phase::Map);
    c.handle(Time(6000), Event::AsksUpdated { app: AppId(1), asks: vec![again] }).expect("ask");
    let got: Vec<u32> = allocations(&schedule(&mut c, 6000)).iter().map(|a| a.0).collect();
    assert_eq!(got, vec![2, 2]);
    assert_eq!(rayon(&c).counts().preempted, 2);
}

/// One node. SLO app 1 (10 s, deadline 10 s) is accepted for [0, 10 s);
/// SLO app 2 (5 s, deadline 8 s) finds no window and is rejected. It runs
/// in the best-effort queue once the node frees at 10 s, and is killed at
/// 17 s for SLO app 3 (3 s, deadline 20 s, reserved [17 s, 20 s)).
#[test]
fn a_job_that_cannot_fit_before_its_deadline_is_rejected_and_runs_best_effort() {
    let mut c = core("rayon", &[]);
    node(&mut c, 0, 1024, 1);
    app(&mut c, 0, 1, 1, 10_000, Some(10_000));
    app(&mut c, 0, 2, 1, 5000, Some(8000));
    assert!(matches!(decision(&c, 1), Some(Decision::Accepted(_))));
    assert_eq!(decision(&c, 2), Some(Decision::Rejected));
    let first = allocations(&schedule(&mut c, 0));
    assert_eq!(first.iter().map(|a| a.0).collect::<Vec<_>>(), vec![1]);
    end(&mut c, 10_000, first[0].1, Outcome::Finished);
    let second = allocations(&schedule(&mut c, 10_000));
    assert_eq!(second.iter().map(|a| a.0).collect::<Vec<_>>(), vec![2], "the rejected job runs best effort");
    app(&mut c, 10_000, 3, 1, 3000, Some(20_000));
    assert_eq!(
        decision(&c, 3),
        Some(Decision::Accepted(Reservation { start: Time(17_000), end: Time(20_000), slots: 1 }))
    );
    assert!(killed(&schedule(&mut c, 10_000)).is_empty());
    assert_eq!(killed(&tick(&mut c, 17_000)), vec![second[0].1], "best effort: preempted for a reservation");
    assert_eq!((rayon(&c).counts().accepted, rayon(&c).counts().rejected), (2, 1));
}

/// One node of two slots. SLO app 1 (k = 1), under-estimated at 4 s with
/// deadline 10 s, is reserved [6 s, 10 s) and starts at once on spare
/// capacity. At 10 s it is still running: its reservation expired and it
/// moved to the BE queue, so when SLO app 3 (k = 2, 2 s, deadline 15 s,
/// reserved [13 s, 15 s)) finds one slot free, app 1's container is killed.
#[test]
fn a_reservation_that_expires_moves_its_job_to_the_best_effort_queue() {
    let mut c = core("rayon", &[]);
    node(&mut c, 0, 2048, 2);
    app(&mut c, 0, 1, 1, 4000, Some(10_000));
    assert_eq!(
        decision(&c, 1),
        Some(Decision::Accepted(Reservation { start: Time(6000), end: Time(10_000), slots: 1 }))
    );
    let a1 = allocations(&schedule(&mut c, 0));
    assert_eq!(a1.len(), 1, "spare capacity before its window");
    assert!(tick(&mut c, 6000).is_empty());
    assert_eq!(rayon(&c).counts().expired, 0);
    tick(&mut c, 10_000);
    assert_eq!(rayon(&c).counts().expired, 1);
    app(&mut c, 10_000, 3, 2, 2000, Some(15_000));
    assert_eq!(
        decision(&c, 3),
        Some(Decision::Accepted(Reservation { start: Time(13_000), end: Time(15_000), slots: 2 }))
    );
    let ds = schedule(&mut c, 10_000);
    assert!(killed(&ds).is_empty());
    assert_eq!(allocations(&ds).len(), 1, "app 3 takes the free slot early, beyond no guarantee yet");
    assert_eq!(killed(&tick(&mut c, 13_000)), vec![a1[0].1], "the expired job is best effort now");
}

/// §4.4: both stacks use the same Rayon admission, so one arrival stream
/// gets the same accepted/rejected decisions under `rayon` and
/// `tetrisched`, although the two schedule (and finish) the jobs
/// differently. 40 apps on three one-slot nodes, 70% SLO with tight and
/// loose deadlines, each container finishing 1.3× its estimate after it
/// starts (estimates are under-estimates), kills finished at once.
#[test]
fn rayon_and_tetrisched_accept_the_same_jobs() {
    let mut rng = sojourn_core::Rng::seeded(11);
    let stream: Vec<(u64, u32, u64, Option<u64>)> = (0..40)
        .scan(0u64, |t, _| {
            *t += 500 + rng.below(3000);
            let k = 1 + rng.below(3) as u32;
            let est = 1000 + rng.below(8000);
            let slo = rng.next_f64() < 0.7;
            let deadline = slo.then(|| *t + est + rng.below(2 * est));
            Some((*t, k, est, deadline))
        })
        .collect();
    let mut decided = Vec::new();
    for (policy, params) in [("rayon", vec![]), ("tetrisched", vec![("no_global", "true")])] {
        let mut c = core(policy, &params);
        for n in 0..3 {
            node(&mut c, n, 1024, 1);
        }
        let mut ends: Vec<(u64, ContainerId)> = Vec::new();
        let mut est_of = std::collections::BTreeMap::new();
        for (i, (t, k, est, deadline)) in stream.iter().enumerate() {
            ends.sort();
            while let Some(&(e, v)) = ends.first().filter(|(e, _)| e <= t) {
                ends.remove(0);
                if c.core().cluster().container(v).is_some() {
                    let ds = crate::test_support::finish(&mut c, e, v);
                    record(&c, &ds, e, &est_of, &mut ends);
                }
            }
            let id = i as u32 + 1;
            est_of.insert(id, *est);
            app(&mut c, *t, id, *k, *est, *deadline);
            let ds = schedule(&mut c, *t);
            record(&c, &ds, *t, &est_of, &mut ends);
        }
        let d: Vec<Option<Decision>> = (1..=stream.len() as u32)
            .map(|id| match policy {
                "rayon" => rayon(&c).admission().decision(AppId(id)),
                _ => c
                    .core()
                    .policy_as::<crate::tetrisched::TetriSched>()
                    .expect("a tetrisched policy")
                    .admission()
                    .decision(AppId(id)),
            })
            .collect();
        decided.push(d);
    }
    let accepted = decided[0].iter().filter(|d| matches!(d, Some(Decision::Accepted(_)))).count();
    let rejected = decided[0].iter().filter(|d| matches!(d, Some(Decision::Rejected))).count();
    assert!(accepted > 0 && rejected > 0, "the stream exercises both: {accepted} accepted, {rejected} rejected");
    assert_eq!(decided[0], decided[1]);
}

/// Each new container ends 1.3× its app's estimate after `t`; each kill now.
fn record(
    c: &Harness,
    ds: &[Out],
    t: u64,
    est: &std::collections::BTreeMap<u32, u64>,
    ends: &mut Vec<(u64, ContainerId)>,
) {
    for (a, v, _) in allocations(ds) {
        ends.push((t + est.get(&a).copied().unwrap_or(1000) * 13 / 10, v));
    }
    for v in killed(ds) {
        if c.core().cluster().container(v).is_some() {
            ends.push((t, v));
        }
    }
}

fn plan(placement: Placement) -> Admission {
    Admission::new(AdmissionConfig { placement, ..AdmissionConfig::default() })
}

/// Early placement (YARN-4360) puts the same request at the first window.
#[test]
fn early_placement_takes_the_first_window() {
    let mut a = plan(Placement::Early);
    let r = a.place(Time(1500), Time(20_000), 2, 3000, 4);
    assert_eq!(r, Some(Reservation { start: Time(2000), end: Time(5000), slots: 2 }));
    let mut l = plan(Placement::Late);
    let r = l.place(Time(1500), Time(20_000), 2, 3000, 4);
    assert_eq!(r, Some(Reservation { start: Time(17_000), end: Time(20_000), slots: 2 }));
}

#[test]
fn bad_placement_is_refused_by_name() {
    let e = crate::test_support::config_error("rayon", &[("placement", "middle")]);
    assert!(e.contains("placement"), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    /// The plan never reserves more than its capacity at any step; every
    /// reservation lies inside [submit, deadline] and is as long as its
    /// estimate; and a request is rejected only if no window had room (the
    /// late agent picks the latest window that has, the early the first).
    #[test]
    fn the_plan_never_admits_more_than_capacity(
        cap in 1u32..6,
        early in any::<bool>(),
        reqs in prop::collection::vec((0u64..20, 1u32..6, 1u64..8, 0u64..15), 1..30),
    ) {
        let placement = if early { Placement::Early } else { Placement::Late };
        let mut a = plan(placement);
        let mut profile = vec![0u32; 1024];
        let mut now = 0;
        for (gap, need, dur, slack) in reqs {
            now += gap;
            let (submit, deadline) = (now * 1000, (now + dur + slack) * 1000);
            // Brute force over the step-aligned windows.
            let ok: Vec<u64> = (now..=now + slack)
                .filter(|s| (*s..s + dur).all(|t| profile[t as usize] + need <= cap))
                .collect();
            let want = if early { ok.first() } else { ok.last() };
            let got = a.place(Time(submit), Time(deadline), need, dur * 1000, cap);
            prop_assert_eq!(got.map(|r| r.start.ms() / 1000), want.copied());
            if let Some(r) = got {
                prop_assert!(r.start.ms() >= submit && r.end.ms() <= deadline && r.end.ms() - r.start.ms() == dur * 1000);
                for t in r.start.ms() / 1000..r.end.ms() / 1000 {
                    profile[t as usize] += need;
                    prop_assert!(profile[t as usize] <= cap);
                    prop_assert_eq!(a.reserved_at(Time(t * 1000)), profile[t as usize]);
                }
            }
        }
    }

    /// Random SLO and BE arrivals, completions, reservation starts and ends
    /// and kills on 1–3 nodes of 1–3 slots: no node ever holds more than
    /// its capacity.
    #[test]
    fn no_node_is_over_committed(
        nodes in prop::collection::vec(1u32..4, 1..4),
        ops in prop::collection::vec((0u8..4, 0u64..3000, 1u32..4, 1u64..6, prop::option::of(1u64..12)), 1..40),
    ) {
        let mut c = core("rayon", &[]);
        for (i, n) in nodes.iter().enumerate() {
            node(&mut c, i as u32, 1024 * u64::from(*n), *n);
        }
        let mut now = 0;
        let mut next_app = 1;
        let mut held: Vec<ContainerId> = Vec::new();
        for (kind, gap, k, est_s, deadline_s) in ops {
            now += gap;
            let ds = match kind {
                0 | 1 => {
                    app(&mut c, now, next_app, k, est_s * 1000, deadline_s.map(|d| now + (est_s + d) * 1000));
                    next_app += 1;
                    schedule(&mut c, now)
                }
                2 => {
                    if let Some(v) = held.pop() {
                        if c.core().cluster().container(v).is_some() {
                            end(&mut c, now, v, Outcome::Finished);
                        }
                    }
                    schedule(&mut c, now)
                }
                _ => tick(&mut c, now),
            };
            for v in killed(&ds) {
                // A kill may race with the container's own end.
                if c.core().cluster().container(v).is_some() {
                    end(&mut c, now, v, Outcome::Preempted);
                }
            }
            held.extend(allocations(&ds).iter().map(|a| a.1));
            let cluster = c.core().cluster();
            for n in cluster.nodes() {
                let used: u64 = n.containers.iter().filter_map(|x| cluster.container(*x)).map(|x| x.resources.memory_mb).sum();
                prop_assert!(used <= n.capacity.memory_mb, "node {} holds {used} MB of {}", n.id, n.capacity.memory_mb);
            }
        }
    }
}
