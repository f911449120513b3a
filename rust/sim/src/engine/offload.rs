//! The policy's offloaded work (TetriSched's MILP solves) answered in a
//! child process (`SimConfig::isolate_solves`): CBC 2.10.8 has aborted on
//! an assertion, and an abort cannot be caught, so inline it ends the whole
//! run; in a child it costs one answer, an error value (the policy falls
//! back to its greedy plan), and the next piece starts a fresh child. The
//! child machinery is the ResourceManager's (`sojourn_policies::isolation`).
//!
//! Unlike the RM, the simulator waits for each answer: it is fed back to
//! the core at the simulated time the work was asked for, so that a run
//! whose solves all succeed decides exactly as the inline run does.

use super::config::OffloadChild;
use sojourn_core::{Event, Offload};
use sojourn_policies::isolation::{ChildRunner, ChildStats};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Beyond twice a solve's own time limit, how long the child may take
/// before it is killed: a shared, loaded machine must not turn a slow
/// answer into a lost one.
const GRACE: Duration = Duration::from_secs(10);

/// The kind the child aborts on (`sojourn_policies::isolation::serve`).
const ABORT_KIND: &str = "test.abort";

pub(super) struct Solves {
    child: ChildRunner,
    stats: Arc<Mutex<ChildStats>>,
    abort_piece: Option<u64>,
    /// Pieces answered so far, each also an `OffloadDone` event the core
    /// handled: host plumbing, left out of the run's core event count so
    /// that it matches the inline run's.
    pub(super) pieces: u64,
}

impl Solves {
    pub(super) fn new(c: &OffloadChild) -> Solves {
        let stats = Arc::new(Mutex::new(ChildStats::default()));
        let child = ChildRunner::new(c.command.clone(), GRACE, stats.clone()).with_args(c.args.clone());
        Solves { child, stats, abort_piece: c.abort_piece, pieces: 0 }
    }

    /// Each piece's answer, in order, as the event the core expects. Work
    /// that cannot describe itself as data runs here, as its closure (as
    /// the RM's offload thread runs it).
    pub(super) fn answer(&mut self, work: Vec<Offload>) -> Vec<Event> {
        let mut out = Vec::with_capacity(work.len());
        for w in work {
            self.pieces += 1;
            let Some(mut d) = w.work.describe() else {
                out.push(w.run());
                continue;
            };
            if self.abort_piece == Some(self.pieces) {
                d.kind = ABORT_KIND.to_string();
            }
            out.push(Event::OffloadDone { tag: w.tag, result: self.child.run(w.tag, &d) });
        }
        out
    }

    /// Pieces lost to a child that died, hung or answered garbage.
    pub(super) fn lost(&self) -> u64 {
        self.stats.lock().map(|s| s.failed).unwrap_or(0)
    }
}
