//! Typed refusals between a host and the core: a decision the host refuses
//! for good is not decided again, one it refuses for now may be, and an
//! event the core refuses says which of the two it is.

use sojourn_core::{
    AppId, AppSpec, Ask, ContainerState, CoreConfig, Ctx, Decision, Event, Harness, NodeId, NodeSpec, Phase, Policy,
    PreemptMode, Priority, RefusalKind, Resources, Time,
};

/// A policy that places asks first-fit and, on every heartbeat, tries to
/// suspend each running container: the re-issuing a real policy does when
/// it keeps wanting a victim's vcores.
struct SuspendEverything;

impl Policy for SuspendEverything {
    fn name(&self) -> &'static str {
        "suspend-everything"
    }
    fn on_node_heartbeat(&mut self, ctx: &mut Ctx<'_>, node: NodeId) {
        let running: Vec<_> = ctx
            .cluster()
            .containers()
            .filter(|c| c.state == ContainerState::Running && c.node == node)
            .map(|c| c.id)
            .collect();
        for c in running {
            let _ = ctx.preempt(c, PreemptMode::Suspend);
        }
        let apps: Vec<AppId> = ctx.cluster().apps().map(|a| a.id()).collect();
        for app in apps {
            while ctx.allocate(app, Priority::MAP, node).is_ok() {}
        }
    }
}

fn core_with_one_running_container() -> (Harness, Decision) {
    let mut c = Harness::new(Box::new(SuspendEverything), CoreConfig::default());
    let node = NodeSpec {
        node: NodeId(1),
        name: "n1".into(),
        rack: "/r".into(),
        labels: vec![],
        capacity: Resources::new(4096, 4),
    };
    c.handle(Time(0), Event::NodeAdded(node)).expect("node");
    let app = AppSpec::new(AppId(1), "q", "u");
    c.handle(Time(0), Event::AppAdded(app)).expect("app");
    let ask = Ask::new(Priority::MAP, Resources::new(1024, 1), 1, Phase::Map);
    c.handle(Time(0), Event::AsksUpdated { app: AppId(1), asks: vec![ask] }).expect("ask");
    c.handle(Time(0), Event::NodeHeartbeat { node: NodeId(1) }).expect("heartbeat");
    c.drain_decisions();
    c.handle(Time(1), Event::NodeHeartbeat { node: NodeId(1) }).expect("heartbeat");
    let ds = c.drain_decisions();
    assert!(matches!(ds.as_slice(), [Decision::Preempt { mode: PreemptMode::Suspend, .. }]), "{ds:?}");
    (c, ds[0].clone())
}

fn suspensions_after(kind: RefusalKind) -> usize {
    let (mut c, suspend) = core_with_one_running_container();
    c.handle(Time(2), Event::Rejected { decision: suspend, reason: "suspend=reject".into(), kind }).expect("rejected");
    let mut n = 0;
    for t in 3..8 {
        c.handle(Time(t), Event::NodeHeartbeat { node: NodeId(1) }).expect("heartbeat");
        n += c.drain_decisions().iter().filter(|d| matches!(d, Decision::Preempt { .. })).count();
    }
    n
}

#[test]
fn a_suspension_refused_for_now_is_decided_again() {
    assert_eq!(suspensions_after(RefusalKind::Retry), 1);
}

#[test]
fn a_suspension_refused_for_good_is_never_decided_again() {
    assert_eq!(suspensions_after(RefusalKind::Never), 0);
}

#[test]
fn a_refused_event_says_whether_to_retry() {
    let (mut c, _) = core_with_one_running_container();
    let unknown = c.handle(Time(9), Event::AppRemoved { app: AppId(42) }).expect_err("unknown app");
    assert_eq!(unknown.kind(), RefusalKind::Never);
    assert!(unknown.to_string().contains("app#42"), "{unknown}");
    let bad = c.handle(Time(9), Event::NodeHeartbeat { node: NodeId(9) }).expect_err("unknown node");
    assert_eq!(bad.kind(), RefusalKind::Never);
}

#[test]
fn a_rejection_without_a_kind_reads_as_retry() {
    let json = r#"{"type":"rejected","decision":{"type":"resume","container":3},"reason":"old recording"}"#;
    let e: Event = serde_json::from_str(json).expect("an older recording still reads");
    assert!(matches!(e, Event::Rejected { kind: RefusalKind::Retry, .. }), "{e:?}");
}

#[test]
fn an_app_whose_value_is_not_a_positive_number_is_refused_by_name() {
    let (mut c, _) = core_with_one_running_container();
    for bad in [0.0, -3.0, f64::NAN, f64::INFINITY] {
        let app = AppSpec { value: Some(bad), ..AppSpec::new(AppId(7), "q", "u") };
        let e = c.handle(Time(9), Event::AppAdded(app)).expect_err("a value that is not positive");
        assert_eq!(e.kind(), RefusalKind::Never);
        assert!(e.to_string().contains("app#7") && e.to_string().contains("value"), "{e}");
    }
    let good = AppSpec { value: Some(25.0), ..AppSpec::new(AppId(7), "q", "u") };
    c.handle(Time(9), Event::AppAdded(good)).expect("a positive value is taken");
}
