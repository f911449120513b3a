//! Gangs (tetrisched.md §3: "gangs placed all or nothing"): the core places
//! every member or none, the host is told they belong together, and a gang a
//! host carried out only in part is undone by the core, which kills the
//! members that started. Hand-computed: nodes of 4 GB / 4 vcores, members of
//! 1 GB / 1 vcore.

mod common;

use sojourn_core::{
    AppId, ContainerId, Core, CoreConfig, CoreError, Ctx, Decision, Event, GangId, NodeId, Outcome, Policy,
    PreemptMode, Priority, RefusalKind, Resources, Time,
};

/// Places the gangs of `picks` (each a list of `(node, n)` of app 1's
/// maps), in order, at the next node heartbeat or event-driven pass, and
/// keeps what the core said.
#[derive(Default)]
struct GangPolicy {
    picks: Vec<Vec<(NodeId, u32)>>,
    placed: Vec<Vec<(ContainerId, NodeId)>>,
    refused: Vec<CoreError>,
}

impl GangPolicy {
    fn place(&mut self, ctx: &mut Ctx<'_>) {
        for picks in std::mem::take(&mut self.picks) {
            match ctx.allocate_gang(AppId(1), Priority::MAP, &picks) {
                Ok(ids) => self.placed.push(ids),
                Err(e) => self.refused.push(e),
            }
        }
    }
}

impl Policy for GangPolicy {
    fn name(&self) -> &'static str {
        "gang"
    }
    fn on_node_heartbeat(&mut self, ctx: &mut Ctx<'_>, _node: NodeId) {
        self.place(ctx);
    }
    fn on_schedule(&mut self, ctx: &mut Ctx<'_>) {
        self.place(ctx);
    }
}

fn core(limit: Option<u32>, maps: u32) -> Core {
    let mut c =
        Core::new(Box::new(GangPolicy::default()), CoreConfig { max_assignments: limit, ..CoreConfig::default() });
    let setup = common::nodes_and_one_app(3, Resources::new(4096, 4), maps);
    let _ = c.step(Time(0), setup).and_then(|s| s.check()).expect("setup");
    c
}

fn policy(c: &mut Core) -> &mut GangPolicy {
    c.policy_as_mut::<GangPolicy>().expect("gang policy")
}

/// One step placing `picks` as a gang; its decisions.
fn place(c: &mut Core, t: u64, picks: &[(u32, u32)]) -> Vec<Decision> {
    policy(c).picks = vec![picks.iter().map(|(n, k)| (NodeId(*n), *k)).collect()];
    c.step(Time(t), [Event::ScheduleAll]).and_then(|s| s.check()).expect("step").decisions
}

fn allocations(ds: &[Decision]) -> Vec<(ContainerId, NodeId, Option<GangId>)> {
    ds.iter()
        .filter_map(|d| match d {
            Decision::Allocate { container, node, gang, .. } => Some((*container, *node, *gang)),
            _ => None,
        })
        .collect()
}

fn kills(ds: &[Decision]) -> Vec<ContainerId> {
    ds.iter()
        .filter_map(|d| match d {
            Decision::Preempt { container, mode: PreemptMode::Kill } => Some(*container),
            _ => None,
        })
        .collect()
}

#[test]
fn a_gang_that_fits_is_placed_whole_and_tagged_as_one_gang() {
    let mut c = core(None, 6);
    let ds = place(&mut c, 1, &[(1, 4), (2, 2)]);
    let a = allocations(&ds);
    assert_eq!(a.len(), 6);
    assert_eq!(a.iter().filter(|x| x.1 == NodeId(1)).count(), 4);
    assert_eq!(a.iter().filter(|x| x.1 == NodeId(2)).count(), 2);
    // One gang, named after its first member.
    assert!(a.iter().all(|x| x.2 == Some(GangId(a[0].0 .0))), "{a:?}");
    assert_eq!(c.cluster().unsettled_gangs(), 1);
    // The host confirms every member: the gang is settled.
    let started: Vec<Event> = a.iter().map(|x| Event::ContainerStarted { container: x.0 }).collect();
    let ds = c.step(Time(2), started).and_then(|s| s.check()).expect("confirm").decisions;
    assert!(kills(&ds).is_empty());
    assert_eq!(c.cluster().unsettled_gangs(), 0);
    assert_eq!(c.cluster().allocated(), Resources::new(6 * 1024, 6));
}

#[test]
fn a_gang_one_node_cannot_hold_places_nothing_and_leaves_the_mirror_as_it_was() {
    let mut c = core(None, 8);
    let pending = c.cluster().pending_containers();
    // Node 2 holds 4 of them, not 5: the 4 on node 1 must not stay placed.
    let ds = place(&mut c, 1, &[(1, 3), (2, 5)]);
    assert!(allocations(&ds).is_empty(), "{ds:?}");
    let p = policy(&mut c);
    assert_eq!(p.refused.len(), 1);
    assert!(p.placed.is_empty());
    assert_eq!(c.cluster().pending_containers(), pending);
    assert_eq!(c.cluster().allocated(), Resources::ZERO);
    assert_eq!(c.cluster().unsettled_gangs(), 0);
    // The ask is intact: the whole gang fits once it is asked where it fits.
    let ds = place(&mut c, 2, &[(1, 4), (2, 4)]);
    assert_eq!(allocations(&ds).len(), 8);
}

#[test]
fn a_gang_larger_than_the_ask_places_nothing() {
    let mut c = core(None, 3);
    let ds = place(&mut c, 1, &[(1, 2), (2, 2)]);
    assert!(allocations(&ds).is_empty());
    assert_eq!(c.cluster().pending_containers(), 3);
}

/// The heartbeat's assignment limit cannot split a gang: a gang larger than
/// it starts whole while the heartbeat has any assignment left (else, bound
/// to its nodes' heartbeats, it would never start: RmBench's 100-container
/// gangs under a limit of 8), and uses the rest up; the next gang waits for
/// another heartbeat.
#[test]
fn a_gang_past_the_heartbeats_assignment_limit_starts_whole_and_uses_the_budget_up() {
    let mut c = core(Some(3), 8);
    // In one heartbeat: a gang of 4 past the limit of 3, then one of 3.
    policy(&mut c).picks = vec![vec![(NodeId(1), 2), (NodeId(2), 2)], vec![(NodeId(1), 2), (NodeId(2), 1)]];
    let step = c.step(Time(1), [Event::NodeHeartbeat { node: NodeId(1) }]).expect("heartbeat");
    assert_eq!(allocations(&step.decisions).len(), 4, "{:?}", step.decisions);
    let p = policy(&mut c);
    assert_eq!(p.placed.len(), 1);
    assert!(matches!(p.refused.as_slice(), [CoreError::AssignmentLimit { limit: 3, .. }]), "{:?}", p.refused);
    assert_eq!(c.cluster().pending_containers(), 4);
    // The next heartbeat starts the second gang.
    policy(&mut c).picks = vec![vec![(NodeId(1), 2), (NodeId(2), 1)]];
    let step = c.step(Time(2), [Event::NodeHeartbeat { node: NodeId(2) }]).expect("heartbeat");
    assert_eq!(allocations(&step.decisions).len(), 3);
    // Outside a heartbeat there is no limit.
    assert_eq!(allocations(&place(&mut c, 3, &[(3, 1)])).len(), 1);
    assert!(c.cluster().check_invariants().is_ok());
}

/// A gang that fails after its first members took some of the budget gives
/// it back: the next gang of the same heartbeat has all of it.
#[test]
fn a_refused_gang_gives_the_heartbeat_its_budget_back() {
    let mut c = core(Some(3), 8);
    // Node 2 holds 4, not 5: the first gang fails after placing on node 1.
    policy(&mut c).picks = vec![vec![(NodeId(1), 1), (NodeId(2), 5)], vec![(NodeId(1), 2), (NodeId(2), 1)]];
    let step = c.step(Time(1), [Event::NodeHeartbeat { node: NodeId(1) }]).expect("heartbeat");
    assert_eq!(allocations(&step.decisions).len(), 3);
    assert_eq!(policy(&mut c).refused.len(), 1);
}

#[test]
fn a_gang_the_host_carried_out_in_part_is_killed_by_the_core() {
    let mut c = core(None, 3);
    let a = allocations(&place(&mut c, 1, &[(1, 1), (2, 1), (3, 1)]));
    let (m1, m2, m3) = (a[0].0, a[1].0, a[2].0);
    let refused = Decision::Allocate {
        container: m2,
        app: AppId(1),
        priority: Priority::MAP,
        node: NodeId(2),
        resources: Resources::new(1024, 1),
        gang: a[1].2,
    };
    // A host that does not honour gangs: it starts the first member and
    // refuses the second, in one step.
    let events = vec![
        Event::ContainerStarted { container: m1 },
        Event::Rejected { decision: refused, reason: "node 2 is busy".into(), kind: RefusalKind::Retry },
    ];
    let ds = c.step(Time(2), events).and_then(|s| s.check()).expect("step").decisions;
    assert_eq!(kills(&ds), vec![m1], "the member that started is killed");
    // The third member's confirmation arrives later: it is killed at once.
    let ds =
        c.step(Time(3), [Event::ContainerStarted { container: m3 }]).and_then(|s| s.check()).expect("step").decisions;
    assert_eq!(kills(&ds), vec![m3]);
    assert_eq!(c.cluster().unsettled_gangs(), 0);
    // The kills complete. The refused member's ask is wanted again; the
    // killed ones' work is the AM's to ask for again, as after any kill.
    let done = vec![
        Event::ContainerCompleted { container: m1, outcome: Outcome::Preempted },
        Event::ContainerCompleted { container: m3, outcome: Outcome::Preempted },
    ];
    let _ = c.step(Time(4), done).and_then(|s| s.check()).expect("completions");
    assert_eq!(c.cluster().allocated(), Resources::ZERO);
    assert_eq!(c.cluster().pending_containers(), 1);
}

#[test]
fn a_gang_all_refused_by_the_host_kills_nothing_and_is_wanted_again() {
    let mut c = core(None, 2);
    let a = allocations(&place(&mut c, 1, &[(1, 1), (2, 1)]));
    let events: Vec<Event> = a
        .iter()
        .map(|(container, node, gang)| Event::Rejected {
            decision: Decision::Allocate {
                container: *container,
                app: AppId(1),
                priority: Priority::MAP,
                node: *node,
                resources: Resources::new(1024, 1),
                gang: *gang,
            },
            reason: "gang refused".into(),
            kind: RefusalKind::Retry,
        })
        .collect();
    let ds = c.step(Time(2), events).and_then(|s| s.check()).expect("step").decisions;
    assert!(kills(&ds).is_empty());
    assert_eq!(c.cluster().pending_containers(), 2);
    assert_eq!(c.cluster().allocated(), Resources::ZERO);
    assert_eq!(c.cluster().unsettled_gangs(), 0);
}

#[test]
fn a_lone_allocation_says_no_gang_on_the_wire_and_a_recording_without_the_field_reads() {
    let lone = Decision::Allocate {
        container: ContainerId(5),
        app: AppId(1),
        priority: Priority::MAP,
        node: NodeId(2),
        resources: Resources::new(1024, 1),
        gang: None,
    };
    let json = serde_json::to_string(&lone).expect("encode");
    assert!(!json.contains("gang"), "{json}");
    let back: Decision = serde_json::from_str(&json).expect("decode");
    assert_eq!(back, lone);
    let mut member = lone.clone();
    if let Decision::Allocate { gang, .. } = &mut member {
        *gang = Some(GangId(5));
    }
    let json = serde_json::to_string(&member).expect("encode");
    assert!(json.contains("\"gang\":5"), "{json}");
    assert_eq!(serde_json::from_str::<Decision>(&json).expect("decode"), member);
}

mod props {
    use super::*;
    use proptest::prelude::*;

    /// What the host does with one member of a gang.
    #[derive(Clone, Copy, Debug)]
    enum Answer {
        Start,
        Refuse,
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

        /// Random gangs on three 4-slot nodes, each answered member by member
        /// in a random order by a host that may start some and refuse others:
        /// the mirror's books hold after every step, and once the answers are
        /// in, a gang either runs whole or not at all (none of its members is
        /// left running un-killed beside a refused one).
        #[test]
        fn a_gang_never_runs_in_part(
            gangs in prop::collection::vec(
                (prop::collection::vec((1u32..=3, 1u32..=5), 1..4),
                 prop::collection::vec(prop_oneof![3 => Just(Answer::Start), 1 => Just(Answer::Refuse)], 12),
                 any::<bool>()),
                1..6),
        ) {
            let mut c = core(None, 40);
            let mut t = 1;
            for (picks, answers, reverse) in gangs {
                let picks: Vec<(u32, u32)> = picks;
                let placed = allocations(&place(&mut c, t, &picks));
                t += 1;
                prop_assert!(c.cluster().check_invariants().is_ok());
                if placed.is_empty() {
                    continue;
                }
                let wanted: u32 = picks.iter().map(|p| p.1).sum();
                prop_assert_eq!(placed.len() as u32, wanted, "all of the gang or nothing");
                let mut order: Vec<usize> = (0..placed.len()).collect();
                if reverse {
                    order.reverse();
                }
                let events: Vec<Event> = order
                    .iter()
                    .map(|&i| {
                        let (container, node, gang) = placed[i];
                        match answers[i % answers.len()] {
                            Answer::Start => Event::ContainerStarted { container },
                            Answer::Refuse => Event::Rejected {
                                decision: Decision::Allocate {
                                    container,
                                    app: AppId(1),
                                    priority: Priority::MAP,
                                    node,
                                    resources: Resources::new(1024, 1),
                                    gang,
                                },
                                reason: "refused".into(),
                                kind: RefusalKind::Retry,
                            },
                        }
                    })
                    .collect();
                let refused = events.iter().any(|e| matches!(e, Event::Rejected { .. }));
                let ds = c.step(Time(t), events).and_then(|s| s.check()).expect("answers").decisions;
                t += 1;
                prop_assert!(c.cluster().check_invariants().is_ok());
                prop_assert_eq!(c.cluster().unsettled_gangs(), 0);
                let killed = kills(&ds);
                let running: Vec<ContainerId> = placed
                    .iter()
                    .map(|p| p.0)
                    .filter(|id| c.cluster().container(*id).is_some_and(|x| !x.preempting))
                    .collect();
                if refused {
                    prop_assert!(running.is_empty(), "a refused gang keeps {:?} running", running);
                } else {
                    prop_assert!(killed.is_empty());
                    prop_assert_eq!(running.len(), placed.len());
                }
                // The kills complete, so later gangs find the room again.
                let done: Vec<Event> = killed
                    .into_iter()
                    .map(|container| Event::ContainerCompleted { container, outcome: Outcome::Preempted })
                    .collect();
                let _ = c.step(Time(t), done).and_then(|s| s.check()).expect("completions");
                t += 1;
            }
        }
    }
}
