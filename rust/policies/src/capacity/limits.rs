//! Queue and user limits, as CapacityScheduler computes them.
//!
//! - A queue's *guaranteed* resource is the cluster times its absolute
//!   capacity; its *maximum* the cluster times its absolute
//!   maximum-capacity, rounded down to the minimum allocation.
//! - The limit a parent hands a child (ParentQueue.getResourceLimitsOfChild)
//!   is what the parent may still take plus what the child holds, capped by
//!   the child's maximum: a queue grows past its guarantee only into idle
//!   resources its ancestors may still use (elasticity).
//! - The user limit (UsersManager.computeUserLimit, active-user mode):
//!   `max(⌈(used by active users + minimum allocation) / #active users⌉,
//!   ⌈current capacity × minimum-user-limit-percent / 100⌉)`, capped by
//!   `capacity × user-limit-factor` (by maximum-capacity when the factor is
//!   -1), rounded up to the minimum allocation. *Current capacity* is the
//!   queue's capacity while the queue is under it, else its consumption
//!   plus one minimum allocation. A user is served while its usage is *not
//!   above* the limit (LeafQueue.canAssignToUser's `>` test), so a user may
//!   overshoot the limit by one container.
//! - The AM limit (getAMResourceLimitPerPartition): the larger of the
//!   queue's guarantee and its current limit, times
//!   maximum-am-resource-percent, rounded up to the minimum allocation.

use super::calc::{Calc, V};
use super::config::Config;
use super::state::State;

pub(crate) fn guaranteed(conf: &Config, q: usize, calc: &Calc) -> V {
    calc.total.scale(conf.queues[q].abs_capacity).floor()
}

pub(crate) fn maximum(conf: &Config, q: usize, calc: &Calc) -> V {
    calc.total.scale(conf.queues[q].abs_maximum_capacity).floor_to(V::from(conf.min_allocation))
}

/// What `child` may grow to, given its parent's limit.
pub(crate) fn child_limit(
    conf: &Config,
    state: &State,
    parent: usize,
    parent_limit: V,
    child: usize,
    calc: &Calc,
) -> V {
    let parent_used = V::from(state.queues[parent].used);
    let child_used = V::from(state.queues[child].used);
    let room = parent_limit.sub(parent_used).add(child_used);
    calc.min(room, maximum(conf, child, calc)).floor_to(V::from(conf.min_allocation))
}

/// Used capacity relative to the guarantee (0 for a queue without one),
/// the key PriorityUtilizationQueueOrderingPolicy sorts siblings by.
pub(crate) fn used_capacity(conf: &Config, state: &State, q: usize, calc: &Calc) -> f64 {
    let g = guaranteed(conf, q, calc);
    if calc.positive(g) {
        calc.divide(V::from(state.queues[q].used), g)
    } else {
        0.0
    }
}

/// The user limit of leaf `leaf` (the same for every active user).
pub(crate) fn user_limit(conf: &Config, state: &State, leaf: usize, calc: &Calc) -> V {
    let qc = &conf.queues[leaf];
    let qu = &state.queues[leaf];
    let min = V::from(conf.min_allocation);
    let configured = guaranteed(conf, leaf, calc);
    let capacity = calc.max(configured, min);
    let usage_ratio: f64 = qu.users.values().map(|u| calc.ratio(V::from(u.used))).sum();
    let consumed = calc.total.scale(usage_ratio).ceil_to(min);
    let current = if calc.lt(consumed, capacity) { capacity } else { consumed.add(min) };
    let (mut active, mut active_used) = (0usize, V::ZERO);
    for u in qu.users.values().filter(|u| u.waiting_apps > 0) {
        active += 1;
        active_used = active_used.add(V::from(u.used));
    }
    let per_user = active_used.add(min).ceil_div(active.max(1) as f64);
    let promised = current.scale(qc.minimum_user_limit_percent).floor().ceil_div(100.0);
    let limit = calc.max(per_user, promised);
    let cap = if qc.user_limit_factor == -1.0 || configured.is_zero() {
        maximum(conf, leaf, calc)
    } else {
        capacity.scale(qc.user_limit_factor).floor()
    };
    calc.min(limit, cap).ceil_to(min)
}

/// The AM limit of leaf `leaf` under its current limit.
pub(crate) fn am_limit(conf: &Config, leaf: usize, current_limit: V, calc: &Calc) -> V {
    let g = guaranteed(conf, leaf, calc);
    let usable = if calc.fits(g, current_limit) { current_limit } else { g };
    usable.scale(conf.max_am_percent).ceil_to(V::from(conf.min_allocation))
}
