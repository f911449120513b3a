//! The mirror's self-check, run by tests after every step: the books each
//! node keeps agree with its containers, and no node is over-committed.

use super::Cluster;
use crate::error::{CoreError, Result};
use crate::resources::Resources;

impl Cluster {
    /// Checks the mirror's own invariants: every node's allocation equals the
    /// sum of its containers' holdings and fits its capacity. Used by tests.
    pub fn check_invariants(&self) -> Result<()> {
        for n in self.nodes() {
            let mut sum = Resources::ZERO;
            for c in &n.containers {
                sum += self.container(*c).ok_or(CoreError::UnknownContainer(*c))?.held();
            }
            if sum != n.allocated {
                return Err(CoreError::BadEvent(format!("{} books {} but holds {sum}", n.id, n.allocated)));
            }
            if !n.allocated.fits_in(&n.capacity) {
                return Err(CoreError::BadEvent(format!("{} over-committed: {} > {}", n.id, n.allocated, n.capacity)));
            }
        }
        Ok(())
    }
}
