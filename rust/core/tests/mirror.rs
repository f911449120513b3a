//! The mirror as a host sees it, at the edges of its inputs.

use sojourn_core::{AppId, AppSpec, Ask, Cluster, NodeId, NodeSpec, Phase, Priority, Resources, Time};

/// Reliability finding 7: a replayed node or app id near 2^32 used to size
/// the mirror's dense slabs to it (hundreds of GB). Far ids now cost one map
/// entry each, and the mirror serves them like any other.
#[test]
fn ids_near_u32_max_work_without_a_giant_allocation() {
    let mut c = Cluster::new(None);
    let far_node = NodeId(u32::MAX - 1);
    let far_app = AppId(u32::MAX);
    for node in [NodeId(2), far_node] {
        let spec = NodeSpec {
            node,
            name: format!("{node}"),
            rack: "/r".into(),
            labels: vec![],
            capacity: Resources::new(2048, 2),
        };
        c.add_node(spec).expect("node");
    }
    let spec = AppSpec {
        app: far_app,
        name: String::new(),
        queue: "q".into(),
        user: "u".into(),
        priority: 0,
        deadline: None,
        value: None,
    };
    c.add_app(spec, Time(0)).expect("app");
    c.update_asks(far_app, vec![Ask::new(Priority::MAP, Resources::new(1024, 1), 3, Phase::Map)]).expect("ask");
    assert_eq!(c.nodes_with_space().collect::<Vec<_>>(), vec![NodeId(2), far_node]);
    c.allocate(far_app, Priority::MAP, far_node, Time(1)).expect("on the far node");
    c.allocate(far_app, Priority::MAP, far_node, Time(1)).expect("on the far node");
    assert_eq!(c.nodes_with_space().collect::<Vec<_>>(), vec![NodeId(2)], "the far node is full");
    c.allocate(far_app, Priority::MAP, NodeId(2), Time(1)).expect("on the near node");
    assert_eq!(c.app(far_app).map(|a| a.containers.len()), Some(3));
    c.check_invariants().expect("invariants");
    c.remove_app(far_app, Time(2)).expect("remove");
    c.remove_node(far_node, Time(2)).expect("remove");
    assert_eq!(c.node_count(), 1);
    assert_eq!(c.allocated(), Resources::ZERO);
}
