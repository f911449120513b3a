//! The host's limit on containers per node heartbeat (YARN's
//! per-node-heartbeat maximum-container-assignments): the mirror refuses a
//! placement past it before anything is decided, so a heartbeat places at
//! most the limit, the rest waits for later heartbeats, and every ask is
//! served in the end.

mod common;

use sojourn_core::{
    AppId, Core, CoreConfig, CoreError, Ctx, Decision, Event, NodeId, Policy, Priority, Refusal, RefusalKind,
    Resources, Time,
};

/// Fills the heartbeating node with every app's maps, asking the mirror
/// first, as the policies do; then tries one placement more without asking,
/// as a policy that checks room itself would, and keeps what it was told.
#[derive(Default)]
struct FillNode {
    refusals: Vec<Refusal>,
    errors: Vec<CoreError>,
}

impl Policy for FillNode {
    fn name(&self) -> &'static str {
        "fill-node"
    }
    fn on_node_heartbeat(&mut self, ctx: &mut Ctx<'_>, node: NodeId) {
        let apps: Vec<AppId> = ctx.cluster().apps().map(|a| a.id()).collect();
        for app in apps {
            loop {
                match ctx.cluster().can_allocate(app, Priority::MAP, node) {
                    Ok(()) => {
                        ctx.allocate(app, Priority::MAP, node).expect("the mirror said it fits");
                    }
                    Err(r) => {
                        self.refusals.push(r);
                        break;
                    }
                }
            }
            if let Err(e) = ctx.allocate(app, Priority::MAP, node) {
                self.errors.push(e);
            }
        }
    }
}

fn core(limit: Option<u32>, nodes: u32, maps: u32) -> Core {
    let mut c =
        Core::new(Box::new(FillNode::default()), CoreConfig { max_assignments: limit, ..CoreConfig::default() });
    let setup = common::nodes_and_one_app(nodes, Resources::new(64 * 1024, 64), maps);
    let step = c.step(Time(0), setup).and_then(|s| s.check()).expect("setup");
    assert!(step.decisions.is_empty(), "nothing is placed before a heartbeat");
    c
}

/// The allocations of a step, by node id.
fn placed_on(c: &mut Core, t: u64, events: Vec<Event>) -> Vec<u32> {
    let step = c.step(Time(t), events).and_then(|s| s.check()).expect("step");
    let mut on: Vec<u32> = step
        .decisions
        .iter()
        .filter_map(|d| match d {
            Decision::Allocate { node, .. } => Some(node.0),
            _ => None,
        })
        .collect();
    on.sort_unstable();
    on
}

fn heartbeat(n: u32) -> Event {
    Event::NodeHeartbeat { node: NodeId(n) }
}

fn policy(c: &Core) -> &FillNode {
    c.policy_as::<FillNode>().expect("fill-node")
}

#[test]
fn a_heartbeat_places_at_most_the_limit_and_the_rest_follows() {
    let mut c = core(Some(3), 1, 8);
    let per_heartbeat: Vec<usize> = (1..=4).map(|t| placed_on(&mut c, t, vec![heartbeat(1)]).len()).collect();
    assert_eq!(per_heartbeat, vec![3, 3, 2, 0]);
    // Every ask served, the mirror holding exactly what was decided.
    assert_eq!(c.cluster().pending_containers(), 0);
    assert_eq!(c.cluster().containers().count(), 8);
    assert_eq!(c.cluster().allocated(), Resources::new(8 * 1024, 8));
    // The two heartbeats the limit ended refused with it, at the mirror's
    // check and at a placement asked for without one; outside a heartbeat
    // there is no limit to report.
    let p = policy(&c);
    assert_eq!(p.refusals[..2], [Refusal::AssignmentLimit, Refusal::AssignmentLimit]);
    let limited: Vec<&CoreError> = p.errors.iter().filter(|e| matches!(e, CoreError::AssignmentLimit { .. })).collect();
    assert_eq!(limited.len(), 2, "{:?}", p.errors);
    assert_eq!(limited[0].kind(), RefusalKind::Retry);
    assert!(limited[0].to_string().contains("already placed 3 container(s)"), "{}", limited[0]);
    assert_eq!(c.cluster().assignments_left(), None);
}

#[test]
fn without_a_limit_one_heartbeat_fills_what_fits() {
    let mut c = core(None, 1, 80);
    assert_eq!(placed_on(&mut c, 1, vec![heartbeat(1)]).len(), 64);
    assert!(policy(&c).errors.iter().all(|e| !matches!(e, CoreError::AssignmentLimit { .. })));
}

#[test]
fn each_heartbeat_of_a_step_has_its_own_limit() {
    let mut c = core(Some(2), 3, 10);
    assert_eq!(placed_on(&mut c, 1, vec![heartbeat(1), heartbeat(2), heartbeat(3)]), vec![1, 1, 2, 2, 3, 3]);
}

#[test]
fn schedule_all_is_not_limited() {
    let mut c = core(Some(1), 2, 10);
    assert_eq!(placed_on(&mut c, 1, vec![Event::ScheduleAll]).len(), 10);
}
