//! One group's master (pigeon.md §1.3, §1.4, §5.2 M1–M20): two FIFO task
//! queues (HTQ for short tasks, LTQ for long ones) served by weighted fair
//! queuing, and two FIFO lists of idle workers (LIW unreserved, HIW
//! reserved). Job-oblivious: it sees a task's class bit, nothing else
//! (L84). Pure: no core, no time; the policy carries out what it returns.

use super::config::{Weight, WfqMode};
use super::Req;
use std::collections::VecDeque;

/// A task at a master: which ask it is one container of, its class, and
/// when it reached the master (µs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Task {
    pub req: Req,
    pub long: bool,
    pub arrived_us: u64,
}

#[derive(Clone, Debug, Default)]
pub struct Master {
    pub htq: VecDeque<Task>,
    pub ltq: VecDeque<Task>,
    /// Idle unreserved workers (indices into the policy's workers).
    pub liw: VecDeque<usize>,
    /// Idle reserved workers.
    pub hiw: VecDeque<usize>,
    /// c: HTQ dispatches since the last LTQ dispatch (M12, M16, M19).
    pub c: u64,
}

/// What an idle notice led to (M10–M20).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Served {
    /// The worker takes this task; `wfq_turn`: a long task chosen by WFQ
    /// while short ones waited.
    Task { task: Task, wfq_turn: bool },
    /// Nothing it may run: back on its idle list.
    Idle,
}

impl Master {
    /// M1–M9: a task arrives. Returns the idle worker it goes to at once,
    /// or `None` when it queued. Short tasks take an unreserved worker
    /// first, then a reserved one; long tasks only unreserved ones. These
    /// direct dispatches leave the WFQ counter alone (§1.4 [EXT]).
    pub fn arrive(&mut self, task: Task) -> Option<usize> {
        if let Some(w) = self.liw.pop_front() {
            return Some(w);
        }
        if !task.long {
            if let Some(w) = self.hiw.pop_front() {
                return Some(w);
            }
            self.htq.push_back(task);
        } else {
            self.ltq.push_back(task);
        }
        None
    }

    /// M10–M20: worker `w` (reserved or not) is idle.
    pub fn idle(&mut self, w: usize, reserved: bool, weight: Weight, mode: WfqMode) -> Served {
        if reserved {
            // M11–M13: reserved workers serve only short tasks; the
            // dispatch counts toward c (A1)
            return match self.htq.pop_front() {
                Some(task) => {
                    self.c += 1;
                    Served::Task { task, wfq_turn: false }
                }
                None => {
                    self.hiw.push_back(w);
                    Served::Idle
                }
            };
        }
        match (self.htq.is_empty(), self.ltq.is_empty()) {
            (true, true) => {
                self.liw.push_back(w);
                Served::Idle
            }
            (false, true) => self.serve_high(),
            (true, false) => self.serve_low(false),
            (false, false) => {
                // M18–M20: WFQ with one integer weight (L94)
                let high = match (weight, mode) {
                    (Weight::Infinite, _) => true,
                    (Weight::Finite(w), WfqMode::Paper) => self.c + 1 < u64::from(w),
                    (Weight::Finite(w), WfqMode::PigeonSim) => self.c <= u64::from(w),
                };
                if high {
                    self.serve_high()
                } else {
                    self.serve_low(true)
                }
            }
        }
    }

    fn serve_high(&mut self) -> Served {
        match self.htq.pop_front() {
            Some(task) => {
                self.c += 1;
                Served::Task { task, wfq_turn: false }
            }
            None => Served::Idle,
        }
    }

    fn serve_low(&mut self, wfq_turn: bool) -> Served {
        match self.ltq.pop_front() {
            Some(task) => {
                self.c = 0;
                Served::Task { task, wfq_turn }
            }
            None => Served::Idle,
        }
    }

    pub fn queued(&self) -> usize {
        self.htq.len() + self.ltq.len()
    }
}
