//! Golden tests of queue names, `describe` and configuration errors.

use super::build;
use super::tests::{params, queue_json, Harness, GB, TWO_QUEUES};

// ---- queue names ----------------------------------------------------------------

/// Leaves are found by name or path; an unknown queue, or a parent, leaves
/// the app unscheduled (and listed).
#[test]
fn queue_names_resolve_and_unknown_queues_are_never_served() {
    let mut h = Harness::new(&[
        ("queue.root.queues", "eng,ops"),
        ("queue.root.eng.capacity", "60"),
        ("queue.root.ops.capacity", "40"),
        ("queue.root.eng.queues", "dev"),
    ]);
    h.node(0, 10);
    h.app(1, "dev", "u", 0);
    h.app(2, "root.ops", "u", 0);
    h.app(3, "nosuch", "u", 0);
    h.app(4, "eng", "u", 0);
    for app in 1..=4 {
        h.ask(app, 20, 1, 1);
    }
    let mut served = h.schedule();
    served.sort();
    assert_eq!(served, vec![1, 2]);
    let d = h.describe();
    let stuck: Vec<u64> = d["unschedulable_apps"]
        .as_array()
        .map(|a| a.iter().filter_map(|x| x["app"].as_u64()).collect())
        .unwrap_or_default();
    assert_eq!(stuck, vec![3, 4]);
}

// ---- describe -------------------------------------------------------------------

#[test]
fn describe_shows_the_tree_with_capacities_and_usage() {
    let mut h = Harness::new(TWO_QUEUES);
    h.node(0, 10);
    h.app(1, "a", "ua", 0);
    h.ask(1, 20, 1, 2);
    h.schedule();
    let d = h.describe();
    assert_eq!(d["policy"], "capacity");
    assert_eq!(d["resource_calculator"], "memory");
    let a = queue_json(&d["root"], "root.a").expect("root.a");
    assert_eq!(a["capacity"], 30.0);
    assert_eq!(a["maximum_capacity"], 100.0);
    assert_eq!(a["used"]["memory_mb"], 2 * GB);
    assert!((a["used_capacity"].as_f64().unwrap_or(0.0) - 2.0 / 3.0).abs() < 1e-9);
    assert_eq!(a["users"][0]["user"], "ua");
    let b = queue_json(&d["root"], "root.b").expect("root.b");
    assert!((b["absolute_capacity"].as_f64().unwrap_or(0.0) - 0.7).abs() < 1e-9);
}

// ---- (6) configuration errors -----------------------------------------------------

fn config_error(kv: &[(&str, &str)]) -> String {
    match params(kv).and_then(|p| build(&p)) {
        Ok(_) => panic!("{kv:?} was accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_configurations_name_the_key_and_queue() {
    let e =
        config_error(&[("queue.root.queues", "a,b"), ("queue.root.a.capacity", "30"), ("queue.root.b.capacity", "60")]);
    assert!(e.contains("'root'") && e.contains("90") && e.contains("root.b=60"), "{e}");

    let e = config_error(&[
        ("queue.root.queues", "a,b"),
        ("queue.root.a.capacity", "30"),
        ("queue.root.a.maximum_capacity", "20"),
        ("queue.root.b.capacity", "70"),
    ]);
    assert!(e.contains("queue.root.a.maximum_capacity") && e.contains("root.a"), "{e}");

    let e = config_error(&[
        ("queue.root.queues", "a,b"),
        ("queue.root.a.capacity", "30"),
        ("queue.root.b.capacity", "70"),
        ("queue.root.c.capacity", "10"),
    ]);
    assert!(e.contains("queue.root.c.capacity") && e.contains("'root.c'"), "{e}");

    let e = config_error(&[("queue.root.queues", "a,b"), ("queue.root.a.capacity", "30")]);
    assert!(e.contains("queue.root.b.capacity"), "{e}");

    let e = config_error(&[
        ("queue.root.queues", "a"),
        ("queue.root.a.queues", "x"),
        ("queue.root.a.user_limit_factor", "2"),
    ]);
    assert!(e.contains("queue.root.a.user_limit_factor") && e.contains("parent"), "{e}");

    let e = config_error(&[("queue.root.default.minimum_user_limit_percent", "0")]);
    assert!(e.contains("queue.root.default.minimum_user_limit_percent"), "{e}");

    let e = config_error(&[("queue.root.queues", "a,a")]);
    assert!(e.contains("twice"), "{e}");

    let e = config_error(&[("resource_calculator", "cpu")]);
    assert!(e.contains("resource_calculator") && e.contains("cpu"), "{e}");

    let e = config_error(&[("preemption.natural_termination", "0.5")]);
    assert!(e.contains("preemption.natural_termination"), "{e}");

    let e = config_error(&[("queue.root.a.capacity", "abc")]);
    assert!(e.contains("queue.root.a.capacity"), "{e}");
}

#[test]
fn defaults_give_one_default_leaf_with_everything() {
    let mut h = Harness::new(&[]);
    h.node(0, 3);
    h.app(1, "default", "u", 0);
    h.ask(1, 20, 1, 5);
    assert_eq!(h.schedule(), vec![1, 1, 1]);
    assert!(h.core.poll_timeout().is_none(), "no preemption monitor by default");
}

// ---- auto-created leaves ---------------------------------------------------------

const MANAGED: &[(&str, &str)] = &[
    ("queue.root.queues", "prod,users"),
    ("queue.root.prod.capacity", "50"),
    ("queue.root.users.capacity", "50"),
    ("queue.root.users.auto_create_child_queue_enabled", "true"),
    ("queue.root.users.leaf_queue_template_capacity", "40"),
    ("queue.root.users.leaf_queue_template_maximum_capacity", "60"),
];

/// An app naming a missing leaf under an auto-create parent creates it with
/// the template (40% of the parent's 50% = 20% of the cluster) and is
/// served; the third leaf finds 80 of the parent's 100 taken and gets 0
/// guaranteed, still elastic up to the template's maximum.
#[test]
fn auto_created_leaves_take_the_template_until_the_parent_is_used_up() {
    let mut h = Harness::new(MANAGED);
    h.node(0, 10);
    h.app(1, "root.users.alice", "alice", 0);
    h.app(2, "root.users.bob", "bob", 0);
    h.app(3, "root.users.carol", "carol", 0);
    for app in 1..=3 {
        h.ask(app, 20, 1, 1);
    }
    let mut served = h.schedule();
    served.sort();
    served.dedup();
    assert_eq!(served, vec![1, 2, 3], "every app in a created leaf is served");
    let d = h.describe();
    let users = queue_json(&d["root"], "root.users").expect("root.users");
    assert_eq!(users["auto_create_child_queue_enabled"], true);
    for (leaf, cap, abs) in [("alice", 40.0, 0.2), ("bob", 40.0, 0.2), ("carol", 0.0, 0.0)] {
        let q = queue_json(&d["root"], &format!("root.users.{leaf}")).expect("created leaf");
        assert_eq!(q["auto_created"], true);
        assert_eq!(q["capacity"], cap, "{leaf}");
        assert_eq!(q["maximum_capacity"], 60.0, "{leaf}");
        assert!((q["absolute_capacity"].as_f64().unwrap_or(-1.0) - abs).abs() < 1e-9, "{leaf}");
        // The parent may grow to 100% of the cluster, so 60% of it is 0.6.
        assert!((q["absolute_maximum_capacity"].as_f64().unwrap_or(-1.0) - 0.6).abs() < 1e-9, "{leaf}");
    }
    assert!(d["unschedulable_apps"].as_array().is_some_and(|a| a.is_empty()));
}

/// A leaf created once is reused; a second app in it does not create another.
#[test]
fn a_created_leaf_is_reused_and_found_by_its_name() {
    let mut h = Harness::new(MANAGED);
    h.node(0, 10);
    h.app(1, "root.users.alice", "alice", 0);
    h.app(2, "alice", "alice", 0);
    h.ask(1, 20, 1, 1);
    h.ask(2, 20, 1, 1);
    let mut served = h.schedule();
    served.sort();
    served.dedup();
    assert_eq!(served, vec![1, 2]);
    let d = h.describe();
    let users = queue_json(&d["root"], "root.users").expect("root.users");
    assert_eq!(users["children"].as_array().map(Vec::len), Some(1));
    assert_eq!(queue_json(&d["root"], "root.users.alice").expect("leaf")["apps"], 2);
}

/// Only an auto-create parent creates: a missing leaf under any other queue,
/// or two levels down, leaves the app unscheduled, with the reason.
#[test]
fn only_an_auto_create_parent_creates_leaves() {
    let mut h = Harness::new(MANAGED);
    h.node(0, 10);
    h.app(1, "root.prod.x", "u", 0);
    h.app(2, "root.users.team.x", "u", 0);
    h.app(3, "root.nosuch", "u", 0);
    for app in 1..=3 {
        h.ask(app, 20, 1, 1);
    }
    assert!(h.schedule().is_empty());
    let d = h.describe();
    let why: Vec<String> = d["unschedulable_apps"]
        .as_array()
        .map(|a| a.iter().filter_map(|x| x["why"].as_str().map(str::to_string)).collect())
        .unwrap_or_default();
    assert_eq!(why.len(), 3, "{why:?}");
    assert!(why[2].contains("does not create leaves") && why[2].contains("root.nosuch"), "{why:?}");
}

#[test]
fn auto_create_keys_are_validated() {
    let bad: &[(&[(&str, &str)], &str)] = &[
        (&[("queue.root.auto_create_child_queue_enabled", "true")], "root cannot auto-create"),
        (
            &[("queue.root.queues", "a"), ("queue.root.a.leaf_queue_template_capacity", "10")],
            "does not auto-create leaves",
        ),
        (
            &[
                ("queue.root.queues", "a"),
                ("queue.root.a.auto_create_child_queue_enabled", "true"),
                ("queue.root.a.leaf_queue_template_capacity", "70"),
                ("queue.root.a.leaf_queue_template_maximum_capacity", "50"),
            ],
            "exceeds leaf_queue_template_maximum_capacity",
        ),
        (
            &[
                ("queue.root.queues", "a"),
                ("queue.root.a.queues", "x,y"),
                ("queue.root.a.x.capacity", "70"),
                ("queue.root.a.y.capacity", "40"),
                ("queue.root.a.auto_create_child_queue_enabled", "true"),
            ],
            "not at most 100",
        ),
    ];
    for (kv, want) in bad {
        let e = params(kv).and_then(|p| build(&p)).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains(want), "{kv:?}: {e}");
    }
    // Static children may leave room for created leaves under an auto-create parent.
    let ok = params(&[
        ("queue.root.queues", "a"),
        ("queue.root.a.queues", "x"),
        ("queue.root.a.x.capacity", "30"),
        ("queue.root.a.auto_create_child_queue_enabled", "true"),
    ]);
    assert!(ok.and_then(|p| build(&p)).is_ok());
}
