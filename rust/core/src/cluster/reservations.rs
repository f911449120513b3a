//! Reservations: a node held for one app's large ask, so that smaller asks
//! of others do not keep taking the room it waits for (YARN's reserved
//! containers). A node holds at most one; the app keeps the set of its nodes.

use super::Cluster;
use crate::error::{CoreError, Result};
use crate::ids::{AppId, NodeId, Priority};
use crate::resources::Resources;

impl Cluster {
    pub fn reserve(&mut self, app: AppId, priority: Priority, node: NodeId) -> Result<Resources> {
        let res = self
            .app(app)
            .ok_or(CoreError::UnknownApp(app))?
            .asks
            .get(&priority)
            .filter(|s| s.outstanding > 0)
            .ok_or_else(|| {
                CoreError::InvalidDecision(format!("{app} has no outstanding ask at {priority} to reserve for"))
            })?
            .ask
            .capability;
        let n = self.node_mut(node).ok_or(CoreError::UnknownNode(node))?;
        if let Some((holder, _, _)) = n.reservation {
            if holder != app {
                return Err(CoreError::InvalidDecision(format!("{node} is already reserved for {holder}")));
            }
        }
        if !res.fits_in(&n.capacity) {
            return Err(CoreError::InvalidDecision(format!("{res} can never fit on {node}")));
        }
        if let Some((old, _, _)) = n.reservation.replace((app, priority, res)) {
            if let Some(a) = self.app_mut(old) {
                a.reserved_nodes.remove(&node);
            }
        }
        if let Some(a) = self.app_mut(app) {
            a.reserved_nodes.insert(node);
        }
        Ok(res)
    }

    /// Drops the reservation on `node`, returning who held it.
    pub fn unreserve(&mut self, node: NodeId) -> Result<Option<(AppId, Priority, Resources)>> {
        let r = self.node_mut(node).ok_or(CoreError::UnknownNode(node))?.reservation.take();
        if let Some((app, _, _)) = r {
            if let Some(a) = self.app_mut(app) {
                a.reserved_nodes.remove(&node);
            }
        }
        Ok(r)
    }
}
