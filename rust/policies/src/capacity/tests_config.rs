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
