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
    let spec = AppSpec::new(far_app, "q", "u");
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

/// A node that declares an absurd size cannot make one scheduling pass
/// allocate without bound: it holds at most MAX_CONTAINERS_PER_NODE.
#[test]
fn a_huge_node_holds_a_bounded_number_of_containers() {
    use sojourn_core::cluster::MAX_CONTAINERS_PER_NODE;
    let mut c = Cluster::new(None);
    let spec = NodeSpec {
        node: NodeId(1),
        name: "huge".into(),
        rack: "/r".into(),
        labels: vec![],
        capacity: Resources::new(u64::MAX, u32::MAX),
    };
    c.add_node(spec).expect("node");
    let app = AppSpec::new(AppId(1), "q", "u");
    c.add_app(app, Time(0)).expect("app");
    c.update_asks(AppId(1), vec![Ask::new(Priority::MAP, Resources::new(1, 1), u32::MAX, Phase::Map)]).expect("ask");
    let mut placed = 0;
    while c.allocate(AppId(1), Priority::MAP, NodeId(1), Time(0)).is_ok() {
        placed += 1;
    }
    assert_eq!(placed, MAX_CONTAINERS_PER_NODE);
    assert_eq!(c.nodes_with_space().count(), 0, "a full node is not offered again");
}
