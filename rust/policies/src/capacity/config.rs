//! The parameter schema and the queue tree it describes, validated at
//! start-up: every queue reachable from `root` through `queue.<path>.queues`,
//! children's capacities summing to 100, capacity ≤ maximum-capacity, and
//! no key naming a queue outside the tree.

use sojourn_core::{Calculator, CoreError, ParamKind, ParamSpec, Params, Resources, Result};
use std::collections::BTreeMap;

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec::new(
        "queue.*.queues",
        ParamKind::Str,
        "",
        "children of a queue, comma separated (queue.root.queues = a,b); a queue without it is a leaf. \
         Unset for root: one leaf `default` at 100%",
    ),
    ParamSpec::new(
        "queue.*.capacity",
        ParamKind::Float,
        "",
        "guaranteed share, percent of the parent; siblings sum to 100 (an only child defaults to 100)",
    ),
    ParamSpec::new(
        "queue.*.maximum_capacity",
        ParamKind::Float,
        "100",
        "elastic limit, percent of the parent (-1 = 100); at least the capacity",
    ),
    ParamSpec::new(
        "queue.*.user_limit_factor",
        ParamKind::Float,
        "1",
        "leaf: a user may hold at most capacity × this (-1: up to maximum-capacity)",
    ),
    ParamSpec::new(
        "queue.*.minimum_user_limit_percent",
        ParamKind::Float,
        "100",
        "leaf: the least share, percent of the queue, each active user is promised (1..100)",
    ),
    ParamSpec::new(
        "queue.*.auto_create_child_queue_enabled",
        ParamKind::Bool,
        "false",
        "parent: an app submitted to a missing leaf right under it creates that leaf \
         (CapacityScheduler's auto-create-child-queue.enabled)",
    ),
    ParamSpec::new(
        "queue.*.leaf_queue_template_capacity",
        ParamKind::Float,
        "0",
        "auto-create parent: capacity (percent of the parent) of each created leaf while the parent's \
         100 lasts; later leaves get 0 (GuaranteedOrZeroCapacityOverTimePolicy)",
    ),
    ParamSpec::new(
        "queue.*.leaf_queue_template_maximum_capacity",
        ParamKind::Float,
        "100",
        "auto-create parent: maximum capacity (percent of the parent) of each created leaf (-1 = 100)",
    ),
    ParamSpec::new(
        "resource_calculator",
        ParamKind::Choice(&["memory", "dominant"]),
        "memory",
        "compare resources by memory (DefaultResourceCalculator) or dominant share (DominantResourceCalculator)",
    ),
    ParamSpec::new(
        "node_locality_delay",
        ParamKind::Int,
        "40",
        "missed scheduling opportunities before a rack-local container (-1: no delay)",
    ),
    ParamSpec::new(
        "rack_locality_additional_delay",
        ParamKind::Int,
        "-1",
        "extra missed opportunities before off-switch (-1: scale with the ask's locations and the cluster size)",
    ),
    ParamSpec::new(
        "multiple_assignments_enabled",
        ParamKind::Bool,
        "true",
        "place more than one container per node heartbeat",
    ),
    ParamSpec::new(
        "max_assignments_per_heartbeat",
        ParamKind::Int,
        "-1",
        "containers per node heartbeat when multiple assignments are on (-1: unlimited)",
    ),
    ParamSpec::new(
        "max_offswitch_assignments_per_heartbeat",
        ParamKind::Int,
        "1",
        "off-switch containers per node heartbeat (asks without locality preferences are off-switch, as in YARN)",
    ),
    ParamSpec::new(
        "minimum_allocation_mb",
        ParamKind::Int,
        "1024",
        "YARN's minimum allocation (memory): the step user limits are rounded to",
    ),
    ParamSpec::new(
        "minimum_allocation_vcores",
        ParamKind::Int,
        "1",
        "YARN's minimum allocation (vcores): the step user limits are rounded to",
    ),
    ParamSpec::new(
        "maximum_am_resource_percent",
        ParamKind::Float,
        "0.1",
        "share of a leaf's capacity that application masters may hold; apps beyond it wait (one always runs)",
    ),
    ParamSpec::new("preemption.enabled", ParamKind::Bool, "false", "run the proportional preemption monitor"),
    ParamSpec::new("preemption.monitoring_interval_ms", ParamKind::Int, "3000", "time between preemption rounds"),
    ParamSpec::new(
        "preemption.max_wait_before_kill_ms",
        ParamKind::Int,
        "15000",
        "time between marking a container for preemption and killing it",
    ),
    ParamSpec::new(
        "preemption.total_preemption_per_round",
        ParamKind::Float,
        "0.1",
        "most of the cluster preempted in one round (fraction)",
    ),
    ParamSpec::new(
        "preemption.max_ignored_over_capacity",
        ParamKind::Float,
        "0.1",
        "a queue is preempted only above guaranteed × (1 + this)",
    ),
    ParamSpec::new(
        "preemption.natural_termination_factor",
        ParamKind::Float,
        "0.2",
        "fraction of a queue's excess reclaimed per round (the rest is left to finish on its own)",
    ),
];

/// One queue of the configured tree.
#[derive(Clone, Debug)]
pub(crate) struct QueueConf {
    /// Full path, `root.a.b`.
    pub path: String,
    pub name: String,
    pub parent: Option<usize>,
    pub children: Vec<usize>,
    /// Percent of the parent.
    pub capacity: f64,
    pub maximum_capacity: f64,
    /// Fractions of the cluster.
    pub abs_capacity: f64,
    pub abs_maximum_capacity: f64,
    /// Leaf only; -1 = no user-limit-factor cap.
    pub user_limit_factor: f64,
    /// Leaf only, percent.
    pub minimum_user_limit_percent: f64,
    /// A parent that creates missing leaves under it on submission, with
    /// this template.
    pub auto_create: Option<Template>,
    /// A leaf created on submission (under an `auto_create` parent).
    pub auto_created: bool,
}

/// What a leaf created under an auto-create parent gets (CapacityScheduler's
/// `leaf-queue-template`), percent of the parent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Template {
    pub capacity: f64,
    pub maximum_capacity: f64,
}

impl QueueConf {
    pub fn is_leaf(&self) -> bool {
        self.children.is_empty() && self.auto_create.is_none()
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Preemption {
    pub enabled: bool,
    pub interval_ms: u64,
    pub max_wait_ms: u64,
    pub total_per_round: f64,
    pub max_ignored_over_capacity: f64,
    pub natural_termination_factor: f64,
}

#[derive(Clone, Debug)]
pub(crate) struct Config {
    /// The tree, root first, every parent before its children.
    pub queues: Vec<QueueConf>,
    pub calculator: Calculator,
    pub node_locality_delay: i64,
    pub rack_locality_additional_delay: i64,
    pub assign_multiple: bool,
    pub max_assignments: i64,
    pub max_offswitch: i64,
    pub min_allocation: Resources,
    pub max_am_percent: f64,
    pub preemption: Preemption,
}

fn err(msg: String) -> CoreError {
    CoreError::Config(format!("capacity: {msg}"))
}

/// A family's given values, by queue path, parsed as numbers (Params has
/// already checked they are finite numbers).
fn numbers(p: &Params, pattern: &'static str) -> Result<BTreeMap<String, f64>> {
    let mut out = BTreeMap::new();
    for (path, v) in p.family(pattern) {
        let x: f64 = v.parse().map_err(|_| err(format!("'{}' is not a number for queue '{path}'", v)))?;
        out.insert(path, x);
    }
    Ok(out)
}

impl Config {
    pub fn from_params(p: &Params) -> Result<Config> {
        let calculator = match p.str("resource_calculator")?.as_str() {
            "dominant" => Calculator::Dominant,
            _ => Calculator::Memory,
        };
        let min_mb = p.int_at_least("minimum_allocation_mb", 1)?;
        let min_vc = p.int_at_least("minimum_allocation_vcores", 1)?;
        let max_assignments = p.int("max_assignments_per_heartbeat")?;
        if max_assignments < -1 || max_assignments == 0 {
            return Err(err(format!("parameter 'max_assignments_per_heartbeat': {max_assignments} is not -1 or ≥ 1")));
        }
        let preemption = Preemption {
            enabled: p.bool("preemption.enabled")?,
            interval_ms: p.int_at_least("preemption.monitoring_interval_ms", 1)? as u64,
            max_wait_ms: p.int_at_least("preemption.max_wait_before_kill_ms", 0)? as u64,
            total_per_round: p.float_in("preemption.total_preemption_per_round", 0.0, 1.0)?,
            max_ignored_over_capacity: p.float_in("preemption.max_ignored_over_capacity", 0.0, 1e6)?,
            natural_termination_factor: p.float_in("preemption.natural_termination_factor", 0.0, 1.0)?,
        };
        Ok(Config {
            queues: build_tree(p)?,
            calculator,
            node_locality_delay: p.int_at_least("node_locality_delay", -1)?,
            rack_locality_additional_delay: p.int_at_least("rack_locality_additional_delay", -1)?,
            assign_multiple: p.bool("multiple_assignments_enabled")?,
            max_assignments,
            max_offswitch: p.int_at_least("max_offswitch_assignments_per_heartbeat", 1)?,
            min_allocation: Resources::new(min_mb as u64, min_vc.min(u32::MAX as i64) as u32),
            max_am_percent: p.float_in("maximum_am_resource_percent", 0.0, 1.0)?,
            preemption,
        })
    }

    /// The leaf an app submitted to `queue` runs in: a full path
    /// (`root.a.b`), or a leaf's own name when no other leaf shares it.
    pub fn resolve(&self, queue: &str) -> std::result::Result<usize, String> {
        let q = queue.trim();
        if let Some(i) = self.queues.iter().position(|c| c.path == q) {
            return if self.queues[i].is_leaf() { Ok(i) } else { Err(format!("'{q}' is a parent queue")) };
        }
        let leaves: Vec<usize> =
            (0..self.queues.len()).filter(|&i| self.queues[i].is_leaf() && self.queues[i].name == q).collect();
        match leaves.as_slice() {
            [one] => Ok(*one),
            [] if self.queues.iter().any(|c| c.name == q && !c.is_leaf()) => Err(format!("'{q}' is a parent queue")),
            [] => Err(format!("no queue '{q}'")),
            many => {
                let paths: Vec<&str> = many.iter().map(|&i| self.queues[i].path.as_str()).collect();
                Err(format!("'{q}' is ambiguous ({})", paths.join(", ")))
            }
        }
    }
}

impl Config {
    /// Creates the leaf `path` if its parent auto-creates children
    /// (CapacityScheduler's ManagedParentQueue): the template's capacity
    /// while the parent's children sum to at most 100 with it, else 0, as
    /// GuaranteedOrZeroCapacityOverTimePolicy activates leaves in arrival
    /// order. Returns the new leaf, or why it cannot be created.
    pub fn auto_create(&mut self, path: &str) -> std::result::Result<usize, String> {
        let path = path.trim();
        let Some((parent_path, name)) = path.rsplit_once('.') else {
            return Err(format!("no queue '{path}'"));
        };
        let Some(parent) = self.queues.iter().position(|c| c.path == parent_path) else {
            return Err(format!("no queue '{path}' (nor its parent '{parent_path}')"));
        };
        let Some(t) = self.queues[parent].auto_create else {
            return Err(format!(
                "no queue '{path}', and its parent '{parent_path}' does not create leaves \
                 (queue.{parent_path}.auto_create_child_queue_enabled)"
            ));
        };
        if name.is_empty() || name.contains('*') || name.chars().any(char::is_whitespace) {
            return Err(format!("bad queue name '{name}' in '{path}'"));
        }
        let taken: f64 = self.queues[parent].children.iter().map(|&c| self.queues[c].capacity).sum();
        let capacity = if taken + t.capacity <= 100.0 + 1e-9 { t.capacity } else { 0.0 };
        let (abs_cap, abs_max) = (self.queues[parent].abs_capacity, self.queues[parent].abs_maximum_capacity);
        let idx = self.queues.len();
        self.queues.push(QueueConf {
            path: path.to_string(),
            name: name.to_string(),
            parent: Some(parent),
            children: Vec::new(),
            capacity,
            maximum_capacity: t.maximum_capacity,
            abs_capacity: abs_cap * capacity / 100.0,
            abs_maximum_capacity: abs_max * t.maximum_capacity / 100.0,
            user_limit_factor: 1.0,
            minimum_user_limit_percent: 100.0,
            auto_create: None,
            auto_created: true,
        });
        self.queues[parent].children.push(idx);
        Ok(idx)
    }
}

fn build_tree(p: &Params) -> Result<Vec<QueueConf>> {
    let lists: BTreeMap<String, String> = p.family("queue.*.queues").into_iter().collect();
    let caps = numbers(p, "queue.*.capacity")?;
    let maxes = numbers(p, "queue.*.maximum_capacity")?;
    let ulfs = numbers(p, "queue.*.user_limit_factor")?;
    let mulps = numbers(p, "queue.*.minimum_user_limit_percent")?;
    let autos: BTreeMap<String, bool> = p
        .family("queue.*.auto_create_child_queue_enabled")
        .into_iter()
        .map(|(q, v)| (q, v.eq_ignore_ascii_case("true")))
        .collect();
    let t_caps = numbers(p, "queue.*.leaf_queue_template_capacity")?;
    let t_maxes = numbers(p, "queue.*.leaf_queue_template_maximum_capacity")?;

    let mut queues = vec![QueueConf {
        path: "root".into(),
        name: "root".into(),
        parent: None,
        children: Vec::new(),
        capacity: 100.0,
        maximum_capacity: 100.0,
        abs_capacity: 1.0,
        abs_maximum_capacity: 1.0,
        user_limit_factor: 1.0,
        minimum_user_limit_percent: 100.0,
        auto_create: None,
        auto_created: false,
    }];
    let mut next = 0;
    while next < queues.len() {
        let (path, abs_cap, abs_max) =
            (queues[next].path.clone(), queues[next].abs_capacity, queues[next].abs_maximum_capacity);
        let names: Vec<String> = match lists.get(&path) {
            Some(list) => list.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect(),
            None if next == 0 => vec!["default".to_string()],
            None => Vec::new(),
        };
        if next == 0 && names.is_empty() {
            return Err(err("parameter 'queue.root.queues': root needs at least one child queue".into()));
        }
        for (k, name) in names.iter().enumerate() {
            if name.contains('.') || name.contains('*') || name.chars().any(char::is_whitespace) {
                return Err(err(format!("parameter 'queue.{path}.queues': bad queue name '{name}'")));
            }
            if names[..k].contains(name) {
                return Err(err(format!("parameter 'queue.{path}.queues': queue '{name}' is listed twice")));
            }
        }
        let mut sum = 0.0;
        for name in &names {
            let child = format!("{path}.{name}");
            let capacity = match caps.get(&child) {
                Some(c) => *c,
                None if names.len() == 1 => 100.0,
                None => {
                    return Err(err(format!(
                        "parameter 'queue.{child}.capacity' is not set (queue '{child}' has siblings)"
                    )))
                }
            };
            let max = match maxes.get(&child) {
                Some(m) if *m == -1.0 => 100.0,
                Some(m) => *m,
                None => 100.0,
            };
            if !(0.0..=100.0).contains(&capacity) {
                return Err(err(format!("parameter 'queue.{child}.capacity': {capacity} is outside [0, 100]")));
            }
            if !(0.0..=100.0).contains(&max) {
                return Err(err(format!(
                    "parameter 'queue.{child}.maximum_capacity': {max} is outside [0, 100] (or -1)"
                )));
            }
            if capacity > max {
                return Err(err(format!(
                    "queue '{child}': capacity {capacity} exceeds maximum_capacity {max} \
                     (parameters 'queue.{child}.capacity', 'queue.{child}.maximum_capacity')"
                )));
            }
            sum += capacity;
            let idx = queues.len();
            queues.push(QueueConf {
                path: child,
                name: name.clone(),
                parent: Some(next),
                children: Vec::new(),
                capacity,
                maximum_capacity: max,
                abs_capacity: abs_cap * capacity / 100.0,
                abs_maximum_capacity: abs_max * max / 100.0,
                user_limit_factor: 1.0,
                minimum_user_limit_percent: 100.0,
                auto_create: None,
                auto_created: false,
            });
            queues[next].children.push(idx);
        }
        let auto = autos.get(&path).copied().unwrap_or(false);
        if auto {
            let capacity = t_caps.get(&path).copied().unwrap_or(0.0);
            let maximum_capacity = match t_maxes.get(&path) {
                Some(m) if *m == -1.0 => 100.0,
                Some(m) => *m,
                None => 100.0,
            };
            for (what, v) in [("capacity", capacity), ("maximum_capacity", maximum_capacity)] {
                if !(0.0..=100.0).contains(&v) {
                    return Err(err(format!(
                        "parameter 'queue.{path}.leaf_queue_template_{what}': {v} is outside [0, 100]"
                    )));
                }
            }
            if capacity > maximum_capacity {
                return Err(err(format!(
                    "queue '{path}': leaf_queue_template_capacity {capacity} exceeds \
                     leaf_queue_template_maximum_capacity {maximum_capacity}"
                )));
            }
            queues[next].auto_create = Some(Template { capacity, maximum_capacity });
        }
        // An auto-create parent keeps what its static children leave for the
        // leaves it creates; any other parent's children sum to 100.
        let bad_sum = if auto { sum > 100.0 + 1e-6 } else { (sum - 100.0).abs() > 1e-6 };
        if !names.is_empty() && bad_sum {
            let parts: Vec<String> =
                queues[next].children.iter().map(|&c| format!("{}={}", queues[c].path, queues[c].capacity)).collect();
            return Err(err(format!(
                "capacities of the children of '{path}' sum to {sum}, not {} ({})",
                if auto { "at most 100 (it auto-creates leaves)" } else { "100" },
                parts.join(", ")
            )));
        }
        next += 1;
    }

    // Keys naming queues outside the tree, and leaf settings on parents.
    let known = |q: &str| queues.iter().position(|c| c.path == q);
    let families: [(&str, Vec<&String>); 8] = [
        ("queues", lists.keys().collect()),
        ("auto_create_child_queue_enabled", autos.keys().collect()),
        ("leaf_queue_template_capacity", t_caps.keys().collect()),
        ("leaf_queue_template_maximum_capacity", t_maxes.keys().collect()),
        ("capacity", caps.keys().collect()),
        ("maximum_capacity", maxes.keys().collect()),
        ("user_limit_factor", ulfs.keys().collect()),
        ("minimum_user_limit_percent", mulps.keys().collect()),
    ];
    for (what, paths) in families {
        for q in paths {
            let Some(i) = known(q) else {
                return Err(err(format!(
                    "parameter 'queue.{q}.{what}' names queue '{q}', which is not in the tree \
                     (queues: {})",
                    queues.iter().map(|c| c.path.as_str()).collect::<Vec<_>>().join(", ")
                )));
            };
            if i == 0 && (what == "capacity" || what == "maximum_capacity") {
                let v = if what == "capacity" { caps.get(q) } else { maxes.get(q) }.copied().unwrap_or(100.0);
                if v != 100.0 && v != -1.0 {
                    return Err(err(format!("parameter 'queue.root.{what}': root is always 100, not {v}")));
                }
            }
            if what.starts_with("leaf_queue_template") && queues[i].auto_create.is_none() {
                return Err(err(format!(
                    "parameter 'queue.{q}.{what}': '{q}' does not auto-create leaves \
                     (queue.{q}.auto_create_child_queue_enabled is not true)"
                )));
            }
            if i == 0 && what == "auto_create_child_queue_enabled" && autos.get(q.as_str()) == Some(&true) {
                return Err(err(
                    "parameter 'queue.root.auto_create_child_queue_enabled': root cannot auto-create leaves \
                     (as in CapacityScheduler: make a parent queue for them)"
                        .into(),
                ));
            }
            if !queues[i].is_leaf() && (what == "user_limit_factor" || what == "minimum_user_limit_percent") {
                return Err(err(format!(
                    "parameter 'queue.{q}.{what}': '{q}' is a parent queue; {what} applies to leaf queues"
                )));
            }
        }
    }
    for q in queues.iter_mut().filter(|q| q.is_leaf()) {
        if let Some(&f) = ulfs.get(&q.path) {
            if !(f > 0.0 || f == -1.0) {
                return Err(err(format!("parameter 'queue.{}.user_limit_factor': {f} is not > 0 or -1", q.path)));
            }
            q.user_limit_factor = f;
        }
        if let Some(&m) = mulps.get(&q.path) {
            if !(m > 0.0 && m <= 100.0) {
                return Err(err(format!(
                    "parameter 'queue.{}.minimum_user_limit_percent': {m} is outside (0, 100]",
                    q.path
                )));
            }
            q.minimum_user_limit_percent = m;
        }
    }
    Ok(queues)
}
