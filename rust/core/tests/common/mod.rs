//! What the core's integration tests share.

use sojourn_core::{AppId, AppSpec, Ask, Event, NodeId, NodeSpec, Phase, Priority, Resources};

/// Nodes 1..=`nodes` of `capacity` in one rack, then app 1 asking for
/// `maps` maps of 1 GB / 1 vcore: the first step of a test.
pub fn nodes_and_one_app(nodes: u32, capacity: Resources, maps: u32) -> Vec<Event> {
    let mut setup: Vec<Event> = (1..=nodes)
        .map(|n| {
            Event::NodeAdded(NodeSpec {
                node: NodeId(n),
                name: format!("n{n}"),
                rack: "/r".into(),
                labels: vec![],
                capacity,
            })
        })
        .collect();
    setup.push(Event::AppAdded(AppSpec::new(AppId(1), "q", "u")));
    let ask = Ask::new(Priority::MAP, Resources::new(1024, 1), maps, Phase::Map);
    setup.push(Event::AsksUpdated { app: AppId(1), asks: vec![ask] });
    setup
}
