//! Golden tests, hand-computed, driving a `Core` with events. Unless a test
//! says otherwise: containers of 1 GB / 1 vcore, nodes with as many vcores
//! as GB (memory binds), asks without locality preferences.

use super::{build, PARAMS};
use sojourn_core::{
    AppId, AppSpec, Ask, ContainerId, CoreConfig, Decision, Event, Locality, NodeId, NodeSpec, Outcome, Params, Phase,
    Priority, Resources, Time,
};
use std::collections::BTreeMap;

pub(super) const GB: u64 = 1024;

pub(super) fn params(kv: &[(&str, &str)]) -> sojourn_core::Result<Params> {
    let given: BTreeMap<String, String> = kv.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    Params::validate("capacity", PARAMS, &given)
}

pub(super) struct Harness {
    pub core: sojourn_core::Harness,
    pub now: Time,
    /// Every decision so far, in order.
    pub log: Vec<Decision>,
}

impl Harness {
    pub fn new(kv: &[(&str, &str)]) -> Harness {
        let p = params(kv).expect("valid parameters");
        Harness {
            core: sojourn_core::Harness::new(build(&p).expect("valid tree"), CoreConfig::default()),
            now: Time::ZERO,
            log: vec![],
        }
    }

    pub fn ev(&mut self, e: Event) -> Vec<Decision> {
        self.core.handle(self.now, e).expect("event applies");
        let new = self.core.drain_decisions();
        self.log.extend(new.iter().cloned());
        new
    }

    pub fn node_on_rack(&mut self, id: u32, gb: u64, rack: &str) {
        self.ev(Event::NodeAdded(NodeSpec {
            node: NodeId(id),
            name: format!("n{id}"),
            rack: rack.into(),
            labels: vec![],
            capacity: Resources::new(gb * GB, gb as u32),
        }));
    }
    pub fn node(&mut self, id: u32, gb: u64) {
        self.node_on_rack(id, gb, "/r0");
    }

    pub fn app(&mut self, id: u32, queue: &str, user: &str, priority: i32) {
        self.ev(Event::AppAdded(AppSpec { priority, ..AppSpec::new(AppId(id), queue, user) }));
    }

    pub fn ask_with(&mut self, app: u32, ask: Ask) {
        self.ev(Event::AsksUpdated { app: AppId(app), asks: vec![ask] });
    }
    pub fn ask(&mut self, app: u32, prio: u32, gb: u64, count: u32) {
        self.ask_with(app, Ask::new(Priority(prio), Resources::new(gb * GB, gb as u32), count, Phase::Map));
    }

    /// Apps served by the allocations among `ds`, in order.
    pub fn served(ds: &[Decision]) -> Vec<u32> {
        ds.iter()
            .filter_map(|d| match d {
                Decision::Allocate { app, .. } => Some(app.0),
                _ => None,
            })
            .collect()
    }
    pub fn schedule(&mut self) -> Vec<u32> {
        let ds = self.ev(Event::ScheduleAll);
        Harness::served(&ds)
    }
    pub fn heartbeat(&mut self, node: u32) -> Vec<u32> {
        let ds = self.ev(Event::NodeHeartbeat { node: NodeId(node) });
        Harness::served(&ds)
    }

    /// Containers `app` holds now, oldest first.
    pub fn containers(&self, app: u32) -> Vec<ContainerId> {
        self.core.cluster().app(AppId(app)).map(|a| a.containers.iter().copied().collect()).unwrap_or_default()
    }
    pub fn running(&self, app: u32) -> usize {
        self.containers(app).len()
    }
    pub fn complete(&mut self, c: ContainerId) {
        self.ev(Event::ContainerCompleted { container: c, outcome: Outcome::Finished });
    }

    /// Moves time to `ms` and fires due timers; returns the decisions.
    pub fn advance(&mut self, ms: u64) -> Vec<Decision> {
        self.now = Time(ms);
        self.core.handle_timeout(self.now);
        let new = self.core.drain_decisions();
        self.log.extend(new.iter().cloned());
        new
    }

    pub fn describe(&self) -> serde_json::Value {
        self.core.describe()
    }
}

pub(super) fn queue_json<'a>(v: &'a serde_json::Value, path: &str) -> Option<&'a serde_json::Value> {
    if v["path"] == path {
        return Some(v);
    }
    v["children"].as_array()?.iter().find_map(|c| queue_json(c, path))
}

pub(super) const TWO_QUEUES: &[(&str, &str)] =
    &[("queue.root.queues", "a,b"), ("queue.root.a.capacity", "30"), ("queue.root.b.capacity", "70")];

// ---- (1) guaranteed shares --------------------------------------------------

/// 10 GB, queues a 30% / b 70%, one app each asking far more than the
/// cluster. Each descent serves the queue with the lower used/guaranteed
/// (ties: the larger capacity, b): b 1/7, a 1/3, b 2/7, b 3/7, a 2/3, b 4/7,
/// b 5/7, a 3/3, b 6/7, b 7/7. Final split 3 / 7.
#[test]
fn saturating_queues_split_by_capacity() {
    let mut h = Harness::new(TWO_QUEUES);
    h.node(0, 10);
    h.app(1, "a", "ua", 0);
    h.app(2, "b", "ub", 0);
    h.ask(1, 20, 1, 20);
    h.ask(2, 20, 1, 20);
    assert_eq!(h.schedule(), vec![2, 1, 2, 2, 1, 2, 2, 1, 2, 2]);
    assert_eq!((h.running(1), h.running(2)), (3, 7));
    // A freed container of a goes back to a (2/3 < 7/7).
    let c = h.containers(1)[0];
    h.complete(c);
    assert_eq!(h.schedule(), vec![1]);
    assert_eq!((h.running(1), h.running(2)), (3, 7));
}

/// The same on two nodes, heartbeat by heartbeat: one off-switch container
/// per heartbeat (maximum-offswitch-assignments 1), the same global order.
#[test]
fn heartbeats_place_one_off_switch_container_each() {
    let mut h = Harness::new(TWO_QUEUES);
    h.node(0, 5);
    h.node(1, 5);
    h.app(1, "a", "ua", 0);
    h.app(2, "b", "ub", 0);
    h.ask(1, 20, 1, 20);
    h.ask(2, 20, 1, 20);
    let mut order = Vec::new();
    for i in 0..10 {
        let got = h.heartbeat(i % 2);
        assert_eq!(got.len(), 1, "heartbeat {i}");
        order.extend(got);
    }
    assert_eq!(order, vec![2, 1, 2, 2, 1, 2, 2, 1, 2, 2]);
    assert!(h.heartbeat(0).is_empty());
}

/// Node-local asks are not off-switch: one heartbeat fills the node.
#[test]
fn node_local_asks_fill_a_node_in_one_heartbeat() {
    let mut h = Harness::new(&[]);
    h.node(0, 4);
    h.app(1, "default", "u", 0);
    let mut ask = Ask::new(Priority(20), Resources::new(GB, 1), 4, Phase::Map);
    ask.locality = vec![Locality::Node(NodeId(0), 4), Locality::Rack("/r0".into(), 4)];
    h.ask_with(1, ask);
    assert_eq!(h.heartbeat(0), vec![1, 1, 1, 1]);
}

// ---- (2) elasticity -----------------------------------------------------------

/// a 50% (maximum 80%), b 50%, 10 GB; only a is busy and its user may go
/// past capacity (factor 2: the cap is 10 GB). a grows to its maximum, 8 GB,
/// and no further; 2 GB stay idle until b asks.
#[test]
fn lone_busy_queue_grows_to_its_maximum_capacity() {
    let mut h = Harness::new(&[
        ("queue.root.queues", "a,b"),
        ("queue.root.a.capacity", "50"),
        ("queue.root.a.maximum_capacity", "80"),
        ("queue.root.a.user_limit_factor", "2"),
        ("queue.root.b.capacity", "50"),
    ]);
    h.node(0, 10);
    h.app(1, "a", "ua", 0);
    h.ask(1, 20, 1, 20);
    h.schedule();
    assert_eq!(h.running(1), 8);
    assert!(h.schedule().is_empty());
    assert_eq!(h.core.cluster().node(NodeId(0)).map(|n| n.available().memory_mb), Some(2 * GB));
    h.app(2, "root.b", "ub", 0);
    h.ask(2, 20, 1, 5);
    assert_eq!(h.schedule(), vec![2, 2]);
    assert_eq!((h.running(1), h.running(2)), (8, 2));
}

// ---- (3) user limits ----------------------------------------------------------

/// One leaf, minimum-user-limit-percent 50, two active users, 10 GB. The
/// limit is max(⌈(active usage + 1 GB) / 2⌉, 10 GB × 50%) = 5 GB while the
/// queue is under capacity. u1 (first in FIFO) is served while its usage
/// is not above 5 GB: 0..5 GB, so it ends at 6 GB (one container over the
/// limit, as YARN). u2 then takes the rest: 4 GB.
#[test]
fn minimum_user_limit_percent_splits_a_queue_between_users() {
    let mut h = Harness::new(&[("queue.root.default.minimum_user_limit_percent", "50")]);
    h.node(0, 10);
    h.app(1, "default", "u1", 0);
    h.app(2, "default", "u2", 0);
    h.ask(1, 20, 1, 10);
    h.ask(2, 20, 1, 10);
    assert_eq!(h.schedule(), vec![1, 1, 1, 1, 1, 1, 2, 2, 2, 2]);
    assert_eq!((h.running(1), h.running(2)), (6, 4));
    // The queue is now full: current capacity is usage + 1 GB = 11 GB, and
    // the limit max(⌈11 GB / 2⌉, ⌊11 GB × 50⌋ / 100) = 5.5 GB, rounded up
    // to 6 GB: u1 (at 6) keeps its share, u2 (at 4) is under it.
    let d = h.describe();
    let leaf = queue_json(&d["root"], "root.default").expect("leaf");
    assert_eq!(leaf["user_limit"]["memory_mb"], 6.0 * GB as f64);
}

/// a 50% / b 50%, user-limit-factor 1: a lone user of a is capped at
/// 5 GB × 1 = 5 GB, so it gets 5 GB plus one container, 6 GB, although a
/// could grow to 10 GB. With factor 2 the same user takes the whole cluster.
#[test]
fn user_limit_factor_caps_a_single_user() {
    for (factor, expect) in [("1", 6), ("2", 10)] {
        let mut h = Harness::new(&[
            ("queue.root.queues", "a,b"),
            ("queue.root.a.capacity", "50"),
            ("queue.root.a.user_limit_factor", factor),
            ("queue.root.b.capacity", "50"),
        ]);
        h.node(0, 10);
        h.app(1, "a", "ua", 0);
        h.ask(1, 20, 1, 20);
        h.schedule();
        assert_eq!(h.running(1), expect, "user_limit_factor {factor}");
    }
}

// ---- (4) order inside a leaf --------------------------------------------------

/// app1 (priority 0), app2 (priority 5, later), app3 (priority 5, later
/// still), 4 GB: app2, app2, app3, app3; app1 waits. A freed container goes
/// to app1, the only one still waiting. Inside an app, the reduce ask
/// (request priority 10) goes before the maps (20).
#[test]
fn apps_by_priority_then_submission_asks_by_request_priority() {
    let mut h = Harness::new(&[]);
    h.node(0, 4);
    h.app(1, "default", "u", 0);
    h.now = Time(1000);
    h.app(2, "default", "u", 5);
    h.now = Time(2000);
    h.app(3, "default", "u", 5);
    h.ask(1, 20, 1, 2);
    h.ask(2, 20, 1, 2);
    h.ask(3, 20, 1, 2);
    assert_eq!(h.schedule(), vec![2, 2, 3, 3]);
    let c = h.containers(2)[0];
    h.complete(c);
    assert_eq!(h.schedule(), vec![1]);

    let mut h = Harness::new(&[]);
    h.node(0, 1);
    h.app(1, "default", "u", 0);
    h.ask(1, 20, 1, 1);
    h.ask(1, 10, 1, 1);
    let ds = h.ev(Event::ScheduleAll);
    assert!(matches!(ds.as_slice(), [Decision::Allocate { priority: Priority(10), .. }]), "{ds:?}");
}

// ---- locality delay -----------------------------------------------------------

/// Two racks; an ask for 1 container on n0 (rack r0). On n1 (rack r1) it is
/// off-switch: delayed while misses ≤ min(2 nodes, 1 × min(2 locations /
/// 2 nodes, 1)) = 1, placed at the second miss.
#[test]
fn off_switch_waits_for_missed_opportunities() {
    let mut h = Harness::new(&[]);
    h.node_on_rack(0, 4, "/r0");
    h.node_on_rack(1, 4, "/r1");
    h.app(1, "default", "u", 0);
    let mut ask = Ask::new(Priority(20), Resources::new(GB, 1), 1, Phase::Map);
    ask.locality = vec![Locality::Node(NodeId(0), 1), Locality::Rack("/r0".into(), 1)];
    h.ask_with(1, ask);
    assert!(h.heartbeat(1).is_empty());
    assert_eq!(h.heartbeat(1), vec![1]);
}

/// n0, n1 on rack r0, n2 on r1; an ask for n0 and r0 with
/// node_locality_delay 1 and rack_locality_additional_delay 10. On n0 it is
/// node-local: at once. On n1 rack-local: after min(3 nodes, 1) = 1 miss,
/// at the second heartbeat. On n2 off-switch: after min(3 nodes, 1 + 10) = 3
/// misses, at the fourth.
#[test]
fn rack_local_and_off_switch_delays() {
    for (node, first) in [(0, 1), (1, 2), (2, 4)] {
        let mut h = Harness::new(&[("node_locality_delay", "1"), ("rack_locality_additional_delay", "10")]);
        h.node_on_rack(0, 4, "/r0");
        h.node_on_rack(1, 4, "/r0");
        h.node_on_rack(2, 4, "/r1");
        h.app(1, "default", "u", 0);
        let mut ask = Ask::new(Priority(20), Resources::new(GB, 1), 1, Phase::Map);
        ask.locality = vec![Locality::Node(NodeId(0), 1), Locality::Rack("/r0".into(), 1)];
        h.ask_with(1, ask);
        let placed_at = (1..=6).find(|_| !h.heartbeat(node).is_empty());
        assert_eq!(placed_at, Some(first), "on n{node}");
    }
}

/// An ask that may not leave its node and rack never goes off-switch.
#[test]
fn strict_locality_never_goes_off_switch() {
    let mut h = Harness::new(&[]);
    h.node_on_rack(0, 4, "/r0");
    h.node_on_rack(1, 4, "/r1");
    h.app(1, "default", "u", 0);
    let mut ask = Ask::new(Priority(20), Resources::new(GB, 1), 1, Phase::Map);
    ask.locality = vec![Locality::Node(NodeId(0), 1), Locality::Rack("/r0".into(), 1)];
    ask.relax_locality = false;
    h.ask_with(1, ask);
    for _ in 0..5 {
        assert!(h.heartbeat(1).is_empty());
    }
    assert_eq!(h.heartbeat(0), vec![1]);
}

// ---- reservations ---------------------------------------------------------------

/// Two 4 GB nodes; app1 holds 3 × 1 GB on n0; app2 (higher priority) wants
/// 2 GB: on n0's heartbeat it reserves n0, and app1's next 1 GB waits there
/// although it fits.
fn reserved_setup() -> Harness {
    let mut h = Harness::new(&[]);
    h.node(0, 4);
    h.node(1, 4);
    h.app(1, "default", "u1", 0);
    h.app(2, "default", "u2", 1);
    h.ask(1, 20, 1, 3);
    for _ in 0..3 {
        assert_eq!(h.heartbeat(0), vec![1]);
    }
    h.ask(2, 20, 2, 1);
    h.ask(1, 20, 1, 1);
    let ds = h.ev(Event::NodeHeartbeat { node: NodeId(0) });
    assert!(matches!(ds.as_slice(), [Decision::Reserve { app: AppId(2), node: NodeId(0), .. }]), "{ds:?}");
    assert!(h.heartbeat(0).is_empty());
    h
}

/// ... and when app1 frees a container the reservation is served.
#[test]
fn a_reservation_is_served_when_room_appears() {
    let mut h = reserved_setup();
    let c = h.containers(1)[0];
    h.complete(c);
    assert_eq!(h.heartbeat(0), vec![2]);
    assert!(h.core.cluster().node(NodeId(0)).is_some_and(|n| n.reservation.is_none()));
}

/// ... or, when the ask is placed on another node, the reservation is
/// dropped and app1 gets n0's free gigabyte.
#[test]
fn a_reservation_is_dropped_once_the_ask_is_placed_elsewhere() {
    let mut h = reserved_setup();
    let ds = h.ev(Event::NodeHeartbeat { node: NodeId(1) });
    assert!(
        matches!(
            ds.as_slice(),
            [Decision::Allocate { app: AppId(2), node: NodeId(1), .. }, Decision::Unreserve { node: NodeId(0), .. }]
        ),
        "{ds:?}"
    );
    assert_eq!(h.heartbeat(0), vec![1]);
}

// ---- AM limit -------------------------------------------------------------------

/// 10 GB, maximum-am-resource-percent 0.1: the AM limit is 1 GB. app1's
/// 1 GB AM starts; app2's waits (1 + 1 > 1 GB) until app1 leaves.
#[test]
fn am_limit_holds_back_further_applications() {
    let mut h = Harness::new(&[]);
    h.node(0, 10);
    for app in [1, 2] {
        h.app(app, "default", "u", 0);
        h.ask_with(app, Ask::new(Priority(0), Resources::new(GB, 1), 1, Phase::Am));
    }
    assert_eq!(h.schedule(), vec![1]);
    h.ev(Event::AppRemoved { app: AppId(1) });
    assert_eq!(h.schedule(), vec![2]);
}

// maximum-am-resource-percent (YARN's default 0.1) on 40 GB: the queue's AMs
// may hold 4 GB, so four 1 GB AMs run and the fifth and sixth wait, though
// 36 GB are free; when one app leaves, one more AM runs.
#[test]
fn am_limit_is_never_exceeded() {
    let mut h = Harness::new(&[]);
    for n in 0..4 {
        h.node(n, 10);
    }
    for app in 1..=6 {
        h.app(app, "default", "u", 0);
        h.ask_with(app, Ask::new(Priority(0), Resources::new(GB, 1), 1, Phase::Am));
    }
    assert_eq!(h.schedule(), vec![1, 2, 3, 4]);
    let am_used = |h: &Harness| queue_json(&h.describe()["root"], "root.default").expect("default")["am_used"].clone();
    assert_eq!(am_used(&h)["memory_mb"], 4 * GB);
    assert_eq!(h.schedule(), Vec::<u32>::new());
    h.ev(Event::AppRemoved { app: AppId(2) });
    assert_eq!(h.schedule(), vec![5]);
    assert_eq!(am_used(&h)["memory_mb"], 4 * GB);
}
