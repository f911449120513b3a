//! The thread that runs a policy's offloaded work ([`sojourn_core::Offload`],
//! TetriSched's MILP solves) off the scheduler's lock, so that NODE_UPDATEs
//! keep their latency while a solve runs (tetrisched.md §4: the paper's
//! solver ran beside the proxy scheduler, never in its path).
//!
//! Work goes in over one channel and answers come back over another; the
//! session drains the answers at its next call and feeds them to the core as
//! [`Event::OffloadDone`], which the flight recorder keeps. Work runs one
//! piece at a time, in order. A piece that panics answers with an error
//! value (the policy falls back, as for a failed solve) and the thread goes
//! on: no panic reaches the RM. With [`Isolation::Process`] a piece that
//! comes described runs in a child process instead ([`crate::isolation`]),
//! so that not even an abort inside it reaches the RM.

use crate::isolation::{ChildRunner, ChildStats, Isolation};
use crossbeam::channel::{unbounded, Receiver, Sender};
use sojourn_core::{Event, Offload};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

pub struct Worker {
    isolation: Isolation,
    /// What the child processes did (shared with the thread).
    children: Arc<Mutex<ChildStats>>,
    running: Option<Running>,
    /// Answers of work run on the caller's thread because no thread could
    /// be started (never left unanswered).
    inline: Vec<Event>,
    /// Pieces submitted whose answers have not been taken yet.
    outstanding: usize,
}

/// The thread and its channels. Dropping it closes the work channel, which
/// ends the thread once the piece in hand is done; nobody waits for it (a
/// long solve must not hold up the RM's shutdown).
struct Running {
    work: Sender<Offload>,
    answers: Receiver<Event>,
}

impl Default for Worker {
    fn default() -> Worker {
        Worker::new(Isolation::Thread)
    }
}

impl Worker {
    pub fn new(isolation: Isolation) -> Worker {
        Worker { isolation, children: Arc::default(), running: None, inline: Vec::new(), outstanding: 0 }
    }

    /// Where the work runs and what the child processes did, for operators.
    pub fn describe(&self) -> serde_json::Value {
        let children = self.children.lock().map(|s| s.clone()).unwrap_or_default();
        // ("outstanding": pieces handed over and not yet answered, i.e. a
        // solve in flight while the scheduler goes on)
        match &self.isolation {
            Isolation::Thread => serde_json::json!({ "isolation": "thread", "outstanding": self.outstanding }),
            Isolation::Process { command, .. } => serde_json::json!({
                "isolation": "process",
                "command": command.display().to_string(),
                "children": children,
                "outstanding": self.outstanding,
            }),
        }
    }

    /// Queues `work`; the thread starts with the first piece.
    pub fn submit(&mut self, work: Offload) {
        self.outstanding += 1;
        if self.running.is_none() {
            let children = match &self.isolation {
                Isolation::Thread => None,
                Isolation::Process { command, grace } => {
                    Some(ChildRunner::new(command.clone(), *grace, self.children.clone()))
                }
            };
            match Running::start(children) {
                Ok(r) => self.running = Some(r),
                Err(e) => {
                    log::error!("cannot start the offload thread ({e}); running the work on the scheduler's thread");
                    self.inline.push(run(work));
                    return;
                }
            }
        }
        if let Some(r) = &self.running {
            if let Err(e) = r.work.send(work) {
                log::error!("the offload thread is gone; running the work on the scheduler's thread");
                self.inline.push(run(e.into_inner()));
            }
        }
    }

    /// The answers ready now, in the order the work was submitted.
    pub fn finished(&mut self) -> Vec<Event> {
        let mut out = std::mem::take(&mut self.inline);
        if let Some(r) = &self.running {
            out.extend(r.answers.try_iter());
        }
        self.outstanding = self.outstanding.saturating_sub(out.len());
        out
    }

    /// Whether some work is still running or waiting: the session then asks
    /// the shim's timer to call back soon, to bring the answer in.
    pub fn busy(&self) -> bool {
        self.outstanding > 0
    }
}

/// Runs one piece; a panic becomes an `{"error": ...}` answer.
fn run(work: Offload) -> Event {
    let tag = work.tag;
    match catch_unwind(AssertUnwindSafe(|| work.run())) {
        Ok(answer) => answer,
        Err(p) => {
            let why = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".into());
            log::error!("offloaded work {tag} panicked: {why}");
            Event::OffloadDone { tag, result: serde_json::json!({ "error": format!("the work panicked: {why}") }) }
        }
    }
}

impl Running {
    /// The thread; with `children`, described pieces run in a child process.
    fn start(mut children: Option<ChildRunner>) -> std::io::Result<Running> {
        let (work, inbox) = unbounded::<Offload>();
        let (outbox, answers) = unbounded::<Event>();
        std::thread::Builder::new().name("sojourn-offload".into()).spawn(move || {
            for w in inbox {
                // The description is built here, off the scheduler's thread,
                // and only when a child will run it.
                let described = children.as_ref().and_then(|_| w.work.describe());
                let answer = match (&mut children, described) {
                    (Some(c), Some(d)) => Event::OffloadDone { tag: w.tag, result: c.run(w.tag, &d) },
                    _ => run(w),
                };
                if outbox.send(answer).is_err() {
                    return; // the session is gone (the child ends with it)
                }
            }
        })?;
        Ok(Running { work, answers })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn wait_for(w: &mut Worker, n: usize) -> Vec<Event> {
        let start = Instant::now();
        let mut got = Vec::new();
        while got.len() < n && start.elapsed() < Duration::from_secs(10) {
            got.extend(w.finished());
            std::thread::sleep(Duration::from_millis(5));
        }
        got
    }

    /// Work that notes on which thread it was asked to describe itself.
    struct Watched(std::sync::Arc<std::sync::Mutex<Vec<Option<String>>>>);

    impl sojourn_core::OffloadWork for Watched {
        fn run(self: Box<Self>) -> serde_json::Value {
            serde_json::json!("ran")
        }
        fn describe(&self) -> Option<sojourn_core::Described> {
            if let Ok(mut seen) = self.0.lock() {
                seen.push(std::thread::current().name().map(str::to_string));
            }
            None
        }
    }

    /// In thread mode nothing asks for a description (building one costs
    /// a solve's whole model in JSON); in process mode the offload thread
    /// does, never the scheduler's thread that submitted the work.
    #[test]
    fn a_description_is_built_only_for_a_child_and_off_the_scheduler_thread() {
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut w = Worker::default();
        w.submit(Offload { tag: 1, work: Box::new(Watched(seen.clone())) });
        let got = wait_for(&mut w, 1);
        assert!(matches!(&got[..], [Event::OffloadDone { tag: 1, result }] if result == "ran"), "{got:?}");
        assert!(seen.lock().map(|s| s.is_empty()).unwrap_or(false), "thread mode described the work");

        let mut w = Worker::new(Isolation::Process {
            command: "/nonexistent/sojourn-offload".into(),
            grace: Duration::from_secs(1),
        });
        w.submit(Offload { tag: 2, work: Box::new(Watched(seen.clone())) });
        let got = wait_for(&mut w, 1);
        // Undescribed (describe said None), so it ran as the closure.
        assert!(matches!(&got[..], [Event::OffloadDone { tag: 2, result }] if result == "ran"), "{got:?}");
        let names = seen.lock().map(|s| s.clone()).unwrap_or_default();
        assert_eq!(names, vec![Some("sojourn-offload".to_string())]);
    }

    #[test]
    fn answers_come_back_in_order_under_their_tags() {
        let mut w = Worker::default();
        for tag in 1..=3u64 {
            w.submit(Offload { tag, work: Box::new(move || serde_json::json!(tag * 10)) });
        }
        let got = wait_for(&mut w, 3);
        let tags: Vec<(u64, serde_json::Value)> = got
            .into_iter()
            .filter_map(|e| match e {
                Event::OffloadDone { tag, result } => Some((tag, result)),
                _ => None,
            })
            .collect();
        assert_eq!(tags, vec![(1, 10.into()), (2, 20.into()), (3, 30.into())]);
    }

    #[test]
    fn slow_work_does_not_block_the_caller_and_a_panic_is_an_error_answer() {
        let mut w = Worker::default();
        let start = Instant::now();
        w.submit(Offload {
            tag: 7,
            work: Box::new(|| {
                std::thread::sleep(Duration::from_millis(300));
                serde_json::json!("slow")
            }),
        });
        // The caller is back at once, with nothing ready yet.
        assert!(start.elapsed() < Duration::from_millis(200));
        assert!(w.finished().is_empty());
        w.submit(Offload { tag: 8, work: Box::new(|| panic!("solver exploded")) });
        let got = wait_for(&mut w, 2);
        assert_eq!(got.len(), 2, "{got:?}");
        let Event::OffloadDone { tag, result } = &got[1] else { panic!("{got:?}") };
        assert_eq!(*tag, 8);
        assert!(result["error"].as_str().is_some_and(|s| s.contains("solver exploded")), "{result}");
    }
}
