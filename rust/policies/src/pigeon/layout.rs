//! The layout of workers into groups (pigeon.md §1, §6.2; A3, A5): groups
//! of N_w workers as rack-aligned partitions of NodeManagers, one master
//! each, reserved workers spread over a group's nodes; recomputed when
//! nodes come and go, carrying workers' states and queued tasks over.

use super::{Master, Pigeon, Task, WState, Worker, WorkerKey};
use sojourn_core::{Ctx, NodeId};
use std::collections::{BTreeMap, BTreeSet};

impl Pigeon {
    /// Groups of N_w, reserved workers, masters (module doc, A3, A5); on a
    /// change, carries workers' states and queued tasks over.
    pub(super) fn layout(&mut self, ctx: &mut Ctx<'_>, at_us: u64) {
        if !self.layout_stale {
            return;
        }
        self.layout_stale = false;
        self.layout_gen += 1;
        let old: BTreeMap<WorkerKey, WState> = self.workers.iter().map(|w| (w.key, w.state)).collect();
        let mut queued: Vec<Task> = Vec::new();
        for m in &mut self.masters {
            queued.extend(m.htq.drain(..));
            queued.extend(m.ltq.drain(..));
        }
        // §6.2: groups are partitions of NodeManagers, rack-aligned: nodes
        // in (rack, node) order, so a group spans as few racks as its size
        // allows (with one rack, e.g. `/default-rack`, node order).
        let mut order: Vec<(u32, NodeId)> =
            self.nodes.keys().map(|id| (ctx.cluster().node(*id).map_or(u32::MAX, |n| n.rack), *id)).collect();
        order.sort_unstable();
        let mut keys = Vec::new();
        for (_, id) in &order {
            let slots = ctx.cluster().node(*id).map_or(0, |n| n.capacity.vcores.max(1));
            if let Some(info) = self.nodes.get_mut(id) {
                info.first = keys.len();
                info.slots = slots;
            }
            keys.extend((0..slots).map(|slot| WorkerKey { node: *id, slot }));
        }
        let n = keys.len();
        let n_w = self.cfg.workers_per_group.max(1) as usize;
        let target = if n == 0 { 0 } else { ((n as f64 / n_w as f64).round() as usize).clamp(1, n) };
        // A node joins the group (of the N_g equal cuts of the workers, A5)
        // that holds its first worker: cuts fall between nodes, never inside
        // one; a cut no node starts in (nodes wider than a group) is dropped,
        // so no master is left without workers.
        let mut bounds: Vec<(usize, usize)> = Vec::with_capacity(target);
        let mut cut = 0;
        for (_, id) in &order {
            let Some(info) = self.nodes.get(id) else { continue };
            if info.slots == 0 {
                continue;
            }
            let first = info.first;
            let starts_new = bounds.is_empty() || (cut + 1 < target && (cut + 1) * n / target <= first);
            while cut + 1 < target && (cut + 1) * n / target <= first {
                cut += 1;
            }
            if starts_new {
                bounds.push((first, first));
            }
            if let Some(b) = bounds.last_mut() {
                b.1 = first + info.slots as usize;
            }
        }
        let groups = bounds.len();
        self.masters = (0..groups).map(|_| Master::default()).collect();
        self.group_sizes = bounds.iter().map(|(lo, hi)| (hi - lo) as u32).collect();
        self.workers = Vec::with_capacity(n);
        for (g, &(lo, hi)) in bounds.iter().enumerate() {
            let r = ((self.cfg.reserved_pct / 100.0) * (hi - lo) as f64).round() as usize;
            // reserved slots spread over the group's nodes: slot 0 of its
            // first nodes, then slot 1, ... (one-slot nodes: the first R, A3)
            let mut by_slot: Vec<usize> = (lo..hi).collect();
            by_slot.sort_by_key(|&i| (keys[i].slot, i));
            let reserved: BTreeSet<usize> = by_slot.into_iter().take(r).collect();
            for (i, key) in keys[lo..hi].iter().enumerate() {
                let state = match old.get(key) {
                    None | Some(WState::Idle) | Some(WState::Blocked) => WState::Idle,
                    Some(s) => *s,
                };
                let epoch = self.nodes.get(&key.node).map_or(0, |n| n.epoch);
                let w = Worker { key: *key, epoch, group: g, reserved: reserved.contains(&(lo + i)), state };
                if state == WState::Idle {
                    let m = &mut self.masters[g];
                    if w.reserved {
                        m.hiw.push_back(lo + i);
                    } else {
                        m.liw.push_back(lo + i);
                    }
                }
                self.workers.push(w);
            }
        }
        self.blocked.clear();
        if groups > 0 {
            for (i, task) in queued.into_iter().enumerate() {
                self.arrive(ctx, i % groups, task, at_us);
            }
        } else {
            for task in queued {
                self.lose(task.req);
                self.starved.insert(task.req);
            }
        }
    }

    /// Recomputes a stale layout at once when tasks wait at the masters
    /// (new workers take them); otherwise when next needed, so that a
    /// cluster registering node by node is laid out once.
    pub(super) fn relayout_if_queued(&mut self, ctx: &mut Ctx<'_>, at_us: u64) {
        if self.layout_stale && self.masters.iter().any(|m| m.queued() > 0) {
            self.layout(ctx, at_us);
        }
    }
}
