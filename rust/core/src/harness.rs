//! A core fed one event at a time, its decisions kept until drained: the one
//! harness the policies' golden tests, property tests and benchmarks share.
//! Each call is one [`Core::step`], so tests exercise the hosts' cycle
//! (timers due by the call's time fire first); only the bookkeeping of
//! decisions across steps is the harness's own.

use crate::engine::{Core, CoreConfig};
use crate::error::Result;
use crate::policy::Policy;
use crate::protocol::{Decision, Event};
use crate::time::Time;
use std::collections::VecDeque;

pub struct Harness {
    core: Core,
    out: VecDeque<Decision>,
}

impl Harness {
    pub fn new(policy: Box<dyn Policy>, config: CoreConfig) -> Harness {
        Harness { core: Core::new(policy, config), out: VecDeque::new() }
    }

    /// A step at `now` with one event; the event's refusal is the error.
    pub fn handle(&mut self, now: Time, event: Event) -> Result<()> {
        let step = self.core.step(now, [event])?;
        self.out.extend(step.decisions);
        match step.refused.into_iter().next() {
            Some(r) => Err(r.error),
            None => Ok(()),
        }
    }

    /// A step at `now` with no event: the timers due fire.
    pub fn handle_timeout(&mut self, now: Time) {
        match self.core.step(now, []) {
            Ok(step) => self.out.extend(step.decisions),
            Err(e) => panic!("harness: {e}"),
        }
    }

    /// The decisions made since the last drain, in order.
    pub fn drain_decisions(&mut self) -> Vec<Decision> {
        self.out.drain(..).collect()
    }

    /// The oldest decision not yet taken.
    pub fn poll_decision(&mut self) -> Option<Decision> {
        self.out.pop_front()
    }

    pub fn poll_timeout(&self) -> Option<Time> {
        self.core.next_wake()
    }

    /// The work the policy offloaded (with `CoreConfig::offload`), for a
    /// test to answer when it chooses.
    pub fn take_offloads(&mut self) -> Vec<crate::policy::Offload> {
        self.core.take_offloads()
    }

    pub fn core(&self) -> &Core {
        &self.core
    }
}

impl std::ops::Deref for Harness {
    type Target = Core;
    fn deref(&self) -> &Core {
        &self.core
    }
}
