//! NodeManagers: nodes joining, their heartbeat grid (YARN's NODE_UPDATE
//! every `heartbeat_ms`, staggered across nodes), and failures that lose
//! their containers.

use super::{Ev, Live, Sim, SimError, Work};
use sojourn_core::{ContainerId, Event, NodeSpec, Time};

impl<'a> Sim<'a> {
    pub(super) fn add_node(&mut self, i: usize, shape: crate::workload::NodeShape) -> Result<(), SimError> {
        self.core(Event::NodeAdded(NodeSpec {
            node: self.node_ids[i],
            name: shape.name,
            rack: shape.rack,
            labels: shape.labels,
            capacity: shape.capacity,
        }))
    }

    /// In heartbeat mode, nodes heartbeat on their grid while any demand waits.
    pub(super) fn wake_heartbeats(&mut self) {
        if self.cfg.heartbeat_ms == 0 || self.hb_idle.is_empty() || self.core.cluster().pending_containers() == 0 {
            return;
        }
        // In node order, as a scan of all nodes arms them (the order only
        // numbers the events: their (time, node) keys order them anyway).
        let mut idle = std::mem::take(&mut self.hb_idle);
        idle.sort_unstable();
        let mut down = 0;
        for k in 0..idle.len() {
            let node = idle[k];
            if self.node_up[node as usize] {
                let at = self.next_grid(node as usize, self.now.plus(1));
                self.push(at, Ev::Heartbeat { node });
            } else {
                idle[down] = node; // armed when it is back
                down += 1;
            }
        }
        idle.truncate(down);
        self.hb_idle = idle;
    }

    /// The first heartbeat of node `i` at or after `t`.
    pub(super) fn next_grid(&self, i: usize, t: Time) -> Time {
        let hb = self.cfg.heartbeat_ms;
        if hb == 0 {
            return t;
        }
        let off = self.hb_offset[i];
        if t.0 <= off {
            return Time(off);
        }
        let k = (t.0 - off).div_ceil(hb);
        Time(off + k * hb)
    }

    pub(super) fn fail_node(&mut self, node: usize) -> Result<(), SimError> {
        if !self.node_up[node] {
            return Ok(());
        }
        self.node_up[node] = false;
        let id = self.node_ids[node];
        let lost: Vec<ContainerId> =
            self.core.cluster().node(id).map(|n| n.containers.iter().copied().collect()).unwrap_or_default();
        self.core(Event::NodeRemoved { node: id })?;
        for c in lost {
            if let Some(Live { work, resources, .. }) = self.containers.remove(&c) {
                let (Work::Task { job, .. } | Work::Am { job }) = work;
                self.account(job, resources, false);
                self.requeue(work)?;
            }
        }
        self.dirty_all = true;
        Ok(())
    }
}
