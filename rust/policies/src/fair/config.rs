//! The `fair` policy's parameters: their schema ([`PARAMS`]) and their
//! validation into a [`Config`] (the global settings plus the declared queue
//! tree). Every error names the offending key and, for queue families, the
//! queue.

use sojourn_core::{CoreError, ParamKind, ParamSpec, Params, Resources, Result};
use std::collections::BTreeMap;

const POLICIES: &[&str] = &["fair", "drf"];

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec::new(
        "default_policy",
        ParamKind::Choice(POLICIES),
        "fair",
        "policy of queues without queue.*.policy: fair (memory) or drf (YARN's defaultQueueSchedulingPolicy)",
    ),
    ParamSpec::new("assign_multiple", ParamKind::Bool, "false", "place several containers per node heartbeat"),
    ParamSpec::new(
        "dynamic_max_assign",
        ParamKind::Bool,
        "true",
        "with assign_multiple, stop once half the node's free resources went out in one heartbeat",
    ),
    ParamSpec::new(
        "max_assign",
        ParamKind::Int,
        "-1",
        "with assign_multiple and no dynamic_max_assign: containers per heartbeat (<= 0: unlimited)",
    ),
    ParamSpec::new(
        "user_as_default_queue",
        ParamKind::Bool,
        "true",
        "apps submitted to 'default' go to root.<user> (YARN's user-as-default-queue)",
    ),
    ParamSpec::new(
        "allow_undeclared_pools",
        ParamKind::Bool,
        "true",
        "create queues named at submission that were not declared (else they go to root.default)",
    ),
    ParamSpec::new(
        "max_am_share",
        ParamKind::Float,
        "0.5",
        "share of a leaf's fair share its application masters may hold; a further AM waits \
         (YARN's queueMaxAMShareDefault; -1: no limit; a queue's first AM always runs)",
    ),
    ParamSpec::new("preemption", ParamKind::Bool, "false", "fair-share and min-share preemption (kill)"),
    ParamSpec::new(
        "preemption_utilization_threshold",
        ParamKind::Float,
        "0.8",
        "preempt only when the cluster's busiest resource is used above this fraction",
    ),
    ParamSpec::new(
        "fair_share_preemption_threshold",
        ParamKind::Float,
        "0.5",
        "an app is fair-share starved below this fraction of its fair share (root default)",
    ),
    ParamSpec::new(
        "fair_share_preemption_timeout_ms",
        ParamKind::Int,
        "-1",
        "starved for fair share this long before preempting (root default; -1 never, as YARN)",
    ),
    ParamSpec::new(
        "min_share_preemption_timeout_ms",
        ParamKind::Int,
        "-1",
        "below min share this long before preempting (root default; -1 never, as YARN)",
    ),
    ParamSpec::new(
        "update_interval_ms",
        ParamKind::Int,
        "500",
        "period of the starvation check while preemption is on and demand waits (YARN update-interval-ms)",
    ),
    ParamSpec::new(
        "starvation_recheck_delay_ms",
        ParamKind::Int,
        "29000",
        "after preempting for an app, ignore its starvation this long (15 s kill wait + 4 heartbeats + 10 s)",
    ),
    ParamSpec::new("am_preemption", ParamKind::Bool, "true", "AM containers may be preempted (chosen last)"),
    ParamSpec::new(
        "reservable_nodes",
        ParamKind::Float,
        "0.05",
        "fraction of the nodes one app may reserve for asks that are not node-local",
    ),
    ParamSpec::new(
        "reservation_threshold_mb",
        ParamKind::Int,
        "1024",
        "only containers at least this large (and reservation_threshold_vcores) reserve a node",
    ),
    ParamSpec::new("reservation_threshold_vcores", ParamKind::Int, "1", "see reservation_threshold_mb"),
    ParamSpec::new("queue.*.weight", ParamKind::Float, "1", "queue weight (>= 0) in its parent's fair shares"),
    ParamSpec::new("queue.*.min_memory_mb", ParamKind::Int, "0", "queue min share, memory (MB)"),
    ParamSpec::new("queue.*.min_vcores", ParamKind::Int, "0", "queue min share, vcores"),
    ParamSpec::new("queue.*.max_memory_mb", ParamKind::Int, "", "queue max share, memory (MB); unset: unbounded"),
    ParamSpec::new("queue.*.max_vcores", ParamKind::Int, "", "queue max share, vcores; unset: unbounded"),
    ParamSpec::new(
        "queue.*.policy",
        ParamKind::Choice(POLICIES),
        "",
        "queue scheduling policy; drf only under a drf parent (unset: default_policy)",
    ),
    ParamSpec::new(
        "queue.*.fair_share_preemption_timeout_ms",
        ParamKind::Int,
        "",
        "per-queue fair_share_preemption_timeout_ms (-1 never; unset: the parent's)",
    ),
    ParamSpec::new(
        "queue.*.min_share_preemption_timeout_ms",
        ParamKind::Int,
        "",
        "per-queue min_share_preemption_timeout_ms (-1 never; unset: the parent's)",
    ),
    ParamSpec::new(
        "queue.*.fair_share_preemption_threshold",
        ParamKind::Float,
        "",
        "per-queue fair_share_preemption_threshold (unset: the parent's)",
    ),
    ParamSpec::new(
        "queue.*.max_am_share",
        ParamKind::Float,
        "",
        "per-leaf max_am_share (YARN's maxAMShare; -1: no limit; unset: max_am_share)",
    ),
    ParamSpec::new(
        "queue.*.allow_preemption_from",
        ParamKind::Bool,
        "true",
        "containers of this queue (and its children) may be preempted",
    ),
];

/// A queue's scheduling policy (YARN's `SchedulingPolicy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueuePolicy {
    /// `FairSharePolicy`: shares and ordering by memory.
    Fair,
    /// `DominantResourceFairnessPolicy`: shares per resource, ordering by dominant share.
    Drf,
}

impl QueuePolicy {
    pub fn name(self) -> &'static str {
        match self {
            QueuePolicy::Fair => "fair",
            QueuePolicy::Drf => "drf",
        }
    }
    fn parse(s: &str) -> Option<QueuePolicy> {
        match s.trim() {
            "fair" => Some(QueuePolicy::Fair),
            "drf" => Some(QueuePolicy::Drf),
            _ => None,
        }
    }
}

/// A preemption timeout: `None` is never (YARN's `Long.MAX_VALUE` default).
pub type Timeout = Option<u64>;

/// What the parameters say about one declared queue; unset fields inherit.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueueConf {
    pub weight: Option<f64>,
    pub min_memory_mb: Option<u64>,
    pub min_vcores: Option<u32>,
    pub max_memory_mb: Option<u64>,
    pub max_vcores: Option<u32>,
    pub policy: Option<QueuePolicy>,
    pub fs_timeout: Option<Timeout>,
    pub ms_timeout: Option<Timeout>,
    pub fs_threshold: Option<f64>,
    pub preemptable: Option<bool>,
    /// `Some(None)`: no AM limit (-1).
    pub max_am_share: Option<Option<f64>>,
}

impl QueueConf {
    pub fn min_share(&self) -> Resources {
        Resources::new(self.min_memory_mb.unwrap_or(0), self.min_vcores.unwrap_or(0))
    }
    pub fn max_share(&self) -> Resources {
        Resources {
            memory_mb: self.max_memory_mb.unwrap_or(u64::MAX),
            vcores: self.max_vcores.unwrap_or(u32::MAX),
            gpus: u32::MAX,
        }
    }
}

/// The validated configuration of the `fair` policy.
#[derive(Clone, Debug)]
pub struct Config {
    pub default_policy: QueuePolicy,
    pub assign_multiple: bool,
    pub dynamic_max_assign: bool,
    pub max_assign: i64,
    pub user_as_default_queue: bool,
    pub allow_undeclared_pools: bool,
    /// Share of a leaf's fair share AMs may hold; `None`: no limit.
    pub max_am_share: Option<f64>,
    pub preemption: bool,
    pub utilization_threshold: f64,
    pub fs_threshold: f64,
    pub fs_timeout: Timeout,
    pub ms_timeout: Timeout,
    pub update_interval_ms: u64,
    pub recheck_delay_ms: u64,
    pub am_preemption: bool,
    pub reservable_nodes: f64,
    pub reservation_threshold: Resources,
    /// Declared queues by full name (`root.a.b`), with implied parents.
    pub queues: BTreeMap<String, QueueConf>,
}

fn err(msg: String) -> CoreError {
    CoreError::Config(format!("policy 'fair': {msg}"))
}

/// `a.b` → `root.a.b`; `root` and `root.x` stay. `None` for a name with an
/// empty or blank component.
pub fn full_queue_name(name: &str) -> Option<String> {
    let name = name.trim();
    if name.is_empty() || name.split('.').any(|c| c.is_empty() || c.chars().any(char::is_whitespace)) {
        return None;
    }
    if name == "root" || name.starts_with("root.") {
        Some(name.to_string())
    } else {
        Some(format!("root.{name}"))
    }
}

/// The parent of a full queue name (`root.a.b` → `root.a`).
pub fn parent_name(full: &str) -> Option<&str> {
    full.rsplit_once('.').map(|(p, _)| p)
}

fn timeout(key: &str, v: i64) -> Result<Timeout> {
    match v {
        -1 => Ok(None),
        v if v >= 0 => Ok(Some(v as u64)),
        v => Err(err(format!("parameter '{key}': {v} is not a timeout (ms >= 0, or -1 for never)"))),
    }
}

fn fraction(key: &str, v: f64) -> Result<f64> {
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(err(format!("parameter '{key}': {v} is outside [0, 1]")))
    }
}

/// FairScheduler's maxAMShare: a fraction in [0, 1], or -1 for no limit
/// (AllocationFileQueueParser refuses anything above 1).
fn am_share(key: &str, v: f64) -> Result<Option<f64>> {
    if v == -1.0 {
        Ok(None)
    } else if (0.0..=1.0).contains(&v) {
        Ok(Some(v))
    } else {
        Err(err(format!("parameter '{key}': {v} is not an AM share (a fraction in [0, 1], or -1 for no limit)")))
    }
}

fn parse_i64(key: &str, v: &str) -> Result<i64> {
    v.trim().parse().map_err(|_| err(format!("parameter '{key}': '{v}' is not an integer")))
}

fn parse_f64(key: &str, v: &str) -> Result<f64> {
    match v.trim().parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        _ => Err(err(format!("parameter '{key}': '{v}' is not a finite number"))),
    }
}

fn parse_bool(key: &str, v: &str) -> Result<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "1" | "on" => Ok(true),
        "false" | "no" | "0" | "off" => Ok(false),
        _ => Err(err(format!("parameter '{key}': '{v}' is not true or false"))),
    }
}

fn non_negative(key: &str, queue: &str, what: &str, v: i64, max: u64) -> Result<u64> {
    if v < 0 || v as u64 > max {
        return Err(err(format!("queue '{queue}': {what} {v} (parameter '{key}') must be in [0, {max}]")));
    }
    Ok(v as u64)
}

/// One property of one queue, applied to its `QueueConf`.
type Setter = fn(&mut QueueConf, &str, &str, &str) -> Result<()>;

const QUEUE_PROPS: &[(&str, &str, Setter)] = &[
    ("queue.*.weight", "weight", |q, key, name, v| {
        let w = parse_f64(key, v)?;
        if w < 0.0 {
            return Err(err(format!("queue '{name}': weight {w} (parameter '{key}') must be >= 0")));
        }
        q.weight = Some(w);
        Ok(())
    }),
    ("queue.*.min_memory_mb", "min memory", |q, key, name, v| {
        q.min_memory_mb = Some(non_negative(key, name, "min memory", parse_i64(key, v)?, u64::MAX >> 1)?);
        Ok(())
    }),
    ("queue.*.min_vcores", "min vcores", |q, key, name, v| {
        q.min_vcores = Some(non_negative(key, name, "min vcores", parse_i64(key, v)?, u32::MAX as u64)? as u32);
        Ok(())
    }),
    ("queue.*.max_memory_mb", "max memory", |q, key, name, v| {
        q.max_memory_mb = Some(non_negative(key, name, "max memory", parse_i64(key, v)?, u64::MAX >> 1)?);
        Ok(())
    }),
    ("queue.*.max_vcores", "max vcores", |q, key, name, v| {
        q.max_vcores = Some(non_negative(key, name, "max vcores", parse_i64(key, v)?, u32::MAX as u64)? as u32);
        Ok(())
    }),
    ("queue.*.policy", "policy", |q, key, name, v| {
        q.policy =
            Some(QueuePolicy::parse(v).ok_or_else(|| {
                err(format!("queue '{name}': policy '{v}' (parameter '{key}') is not one of fair, drf"))
            })?);
        Ok(())
    }),
    ("queue.*.fair_share_preemption_timeout_ms", "fair-share preemption timeout", |q, key, _, v| {
        q.fs_timeout = Some(timeout(key, parse_i64(key, v)?)?);
        Ok(())
    }),
    ("queue.*.min_share_preemption_timeout_ms", "min-share preemption timeout", |q, key, _, v| {
        q.ms_timeout = Some(timeout(key, parse_i64(key, v)?)?);
        Ok(())
    }),
    ("queue.*.fair_share_preemption_threshold", "fair-share preemption threshold", |q, key, _, v| {
        q.fs_threshold = Some(fraction(key, parse_f64(key, v)?)?);
        Ok(())
    }),
    ("queue.*.max_am_share", "max AM share", |q, key, _, v| {
        q.max_am_share = Some(am_share(key, parse_f64(key, v)?)?);
        Ok(())
    }),
    ("queue.*.allow_preemption_from", "allow_preemption_from", |q, key, _, v| {
        q.preemptable = Some(parse_bool(key, v)?);
        Ok(())
    }),
];

impl Config {
    /// Validates the parameters: global values, then every queue family key
    /// (names normalised to `root.…`, the same property of one queue given
    /// twice under two spellings is an error), then the tree (min <= max,
    /// drf only under drf parents).
    pub fn from_params(p: &Params) -> Result<Config> {
        let default_policy = QueuePolicy::parse(&p.str("default_policy")?).unwrap_or(QueuePolicy::Fair);
        let mut queues: BTreeMap<String, QueueConf> = BTreeMap::new();
        queues.insert("root".to_string(), QueueConf::default());
        let mut seen: BTreeMap<(String, &str), String> = BTreeMap::new();
        for (pattern, what, set) in QUEUE_PROPS {
            for (star, value) in p.family(pattern) {
                let key = pattern.replace('*', &star);
                let name = full_queue_name(&star).ok_or_else(|| {
                    err(format!("parameter '{key}': '{star}' is not a queue name (dot-separated, no blanks)"))
                })?;
                if let Some(other) = seen.insert((name.clone(), *what), key.clone()) {
                    return Err(err(format!("parameters '{other}' and '{key}' both set the {what} of queue '{name}'")));
                }
                let q = queues.entry(name.clone()).or_default();
                set(q, &key, &name, &value)?;
            }
        }
        // Implied parents of every declared queue.
        let names: Vec<String> = queues.keys().cloned().collect();
        for n in names {
            let mut cur = n.as_str();
            while let Some(parent) = parent_name(cur) {
                queues.entry(parent.to_string()).or_default();
                cur = parent;
            }
        }
        for (name, q) in &queues {
            let (min, max) = (q.min_share(), q.max_share());
            if !min.fits_in(&max) {
                let show = |r: Resources| {
                    let m = if r.memory_mb == u64::MAX { "unbounded".to_string() } else { r.memory_mb.to_string() };
                    let v = if r.vcores == u32::MAX { "unbounded".to_string() } else { r.vcores.to_string() };
                    format!("<memory:{m}, vCores:{v}>")
                };
                return Err(err(format!("queue '{name}': min share {} exceeds max share {}", show(min), show(max))));
            }
        }
        let effective = |name: &str| queues.get(name).and_then(|q| q.policy).unwrap_or(default_policy);
        for name in queues.keys() {
            if let Some(parent) = parent_name(name) {
                if effective(name) == QueuePolicy::Drf && effective(parent) == QueuePolicy::Fair {
                    return Err(err(format!(
                        "queue '{name}' uses policy drf but its parent '{parent}' uses fair; \
                         drf is allowed only under a drf parent (set queue.{parent}.policy=drf or default_policy=drf)"
                    )));
                }
            }
        }

        let fs_timeout = timeout("fair_share_preemption_timeout_ms", p.int("fair_share_preemption_timeout_ms")?)?;
        let ms_timeout = timeout("min_share_preemption_timeout_ms", p.int("min_share_preemption_timeout_ms")?)?;
        let preemption = p.bool("preemption")?;
        if preemption
            && fs_timeout.is_none()
            && ms_timeout.is_none()
            && queues.values().all(|q| q.fs_timeout.flatten().is_none() && q.ms_timeout.flatten().is_none())
        {
            return Err(err("preemption=true but no fair_share_preemption_timeout_ms or \
                 min_share_preemption_timeout_ms is set (globally or for a queue): nothing could ever be preempted"
                .to_string()));
        }
        let thr_mb = p.int_at_least("reservation_threshold_mb", 0)?;
        let thr_vc = p.int_at_least("reservation_threshold_vcores", 0)?;
        Ok(Config {
            default_policy,
            assign_multiple: p.bool("assign_multiple")?,
            dynamic_max_assign: p.bool("dynamic_max_assign")?,
            max_assign: p.int("max_assign")?,
            user_as_default_queue: p.bool("user_as_default_queue")?,
            allow_undeclared_pools: p.bool("allow_undeclared_pools")?,
            max_am_share: am_share("max_am_share", p.float("max_am_share")?)?,
            preemption,
            utilization_threshold: p.float_in("preemption_utilization_threshold", 0.0, 1.0)?,
            fs_threshold: p.float_in("fair_share_preemption_threshold", 0.0, 1.0)?,
            fs_timeout,
            ms_timeout,
            update_interval_ms: p.int_at_least("update_interval_ms", 1)? as u64,
            recheck_delay_ms: p.int_at_least("starvation_recheck_delay_ms", 0)? as u64,
            am_preemption: p.bool("am_preemption")?,
            reservable_nodes: p.float_in("reservable_nodes", 0.0, 1.0)?,
            reservation_threshold: Resources::new(thr_mb as u64, thr_vc.min(u32::MAX as i64) as u32),
            queues,
        })
    }
}
