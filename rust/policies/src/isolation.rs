//! Offloaded work run in a child process, so that a crash inside it (CBC
//! 2.10.8 has aborted on an assertion; an abort cannot be caught) costs one
//! answer, not the host: the ResourceManager's JVM (the jni crate's
//! `sojourn-offload` executable) or the simulator (`sojourn offload-worker`).
//! Both hosts use this one implementation: [`ChildRunner`] on the host's
//! side, [`serve`] in the child.
//!
//! One long-lived child, started at the first described piece: a request
//! is one JSON line on its stdin, `{"tag", "kind", "input"}`, and its answer
//! one line on its stdout, `{"tag", "answer"}`. When the child dies, answers
//! something that does not parse or is not this piece's, or overruns the
//! piece's deadline (twice its budget plus a grace; it is then killed), the
//! piece answers with an error value, as a panic does (the policy falls
//! back), and the next piece starts a fresh child.
//!
//! This is host machinery, the one part of this crate that reads a clock,
//! starts processes and threads and writes files: it lives here only because
//! both hosts depend on this crate (and the child runs the policies' work).
//! No policy calls it; the core's purity rules (`clippy.toml`) are lifted for
//! this module alone.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use serde_json::{json, Value};
use sojourn_core::Described;
use std::io::{BufRead, BufReader, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Where described work runs.
#[derive(Clone, Debug, PartialEq)]
pub enum Isolation {
    /// On the offload thread, as its closure.
    Thread,
    /// In a child process running `command` (an executable that calls
    /// [`serve`]); a piece overrunning twice its budget plus `grace` is
    /// killed.
    Process { command: PathBuf, grace: Duration },
}

/// What the child processes did, for `describe()` (operators and tests).
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ChildStats {
    /// Pieces a child answered (errors of the work included).
    pub answered: u64,
    /// Pieces lost to a child that died, hung or answered garbage.
    pub failed: u64,
    /// Children started.
    pub started: u64,
    /// The running child's process id.
    pub pid: Option<u32>,
    /// Why the last child was given up, with its exit status.
    pub last_failure: Option<String>,
}

/// A request line, borrowing the piece's input (which can be a whole model).
#[derive(serde::Serialize)]
struct Request<'a> {
    tag: u64,
    kind: &'a str,
    input: &'a Value,
}

/// The child and the thread reading its answers.
struct Running {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<std::io::Result<String>>,
}

impl Drop for Running {
    /// A child given up is killed and reaped (no zombie is left).
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs described pieces in a child, one at a time.
pub struct ChildRunner {
    command: PathBuf,
    args: Vec<String>,
    grace: Duration,
    running: Option<Running>,
    stats: Arc<Mutex<ChildStats>>,
}

impl ChildRunner {
    pub fn new(command: PathBuf, grace: Duration, stats: Arc<Mutex<ChildStats>>) -> ChildRunner {
        ChildRunner { command, args: Vec::new(), grace, running: None, stats }
    }

    /// The child is started with these arguments (the simulator's own
    /// executable serves as the child under a subcommand).
    pub fn with_args(mut self, args: Vec<String>) -> ChildRunner {
        self.args = args;
        self
    }

    /// The piece's answer, or `{"error": ...}` naming what went wrong.
    pub fn run(&mut self, tag: u64, work: &Described) -> serde_json::Value {
        match self.exchange(tag, work) {
            Ok(answer) => {
                self.stats(|s| s.answered += 1);
                answer
            }
            Err(why) => {
                let status = self.give_up();
                let why = format!("the offload process {} {why}{status}", self.command.display());
                log::warn!("offloaded work {tag} ({}) lost: {why}; the next piece starts a new process", work.kind);
                self.stats(|s| {
                    s.failed += 1;
                    s.pid = None;
                    s.last_failure = Some(why.clone());
                });
                serde_json::json!({ "error": why })
            }
        }
    }

    fn stats(&self, f: impl FnOnce(&mut ChildStats)) {
        if let Ok(mut s) = self.stats.lock() {
            f(&mut s);
        }
    }

    fn exchange(&mut self, tag: u64, work: &Described) -> Result<serde_json::Value, String> {
        if self.running.is_none() {
            self.running = Some(self.spawn()?);
        }
        let Some(r) = self.running.as_mut() else { return Err("did not start".into()) };
        let request = Request { tag, kind: &work.kind, input: &work.input };
        let mut line = serde_json::to_vec(&request).map_err(|e| format!("got no request: it does not encode ({e})"))?;
        line.push(b'\n');
        // One write of the whole line: the pipe is unbuffered, and a value
        // written as it formats costs a system call per token on both sides.
        r.stdin.write_all(&line).and_then(|_| r.stdin.flush()).map_err(|e| format!("took no request ({e})"))?;
        let deadline = Duration::from_millis(work.budget_ms.saturating_mul(2)) + self.grace;
        let start = Instant::now();
        let line = match r.lines.recv_timeout(deadline) {
            Ok(Ok(line)) => line,
            Ok(Err(e)) => return Err(format!("could not be read ({e})")),
            Err(RecvTimeoutError::Timeout) => {
                return Err(format!("did not answer within {} ms and was killed", start.elapsed().as_millis()))
            }
            Err(RecvTimeoutError::Disconnected) => return Err("died".into()),
        };
        let parsed: serde_json::Value = serde_json::from_str(&line)
            .map_err(|e| format!("answered a line that does not parse ({e}): '{}'", clip(&line)))?;
        if parsed.get("tag").and_then(serde_json::Value::as_u64) != Some(tag) {
            return Err(format!("answered for another piece than {tag}: '{}'", clip(&line)));
        }
        match parsed.get("answer") {
            Some(a) => Ok(a.clone()),
            None => Err(format!("answered without an answer: '{}'", clip(&line))),
        }
    }

    fn spawn(&mut self) -> Result<Running, String> {
        let mut child = Command::new(&self.command)
            .args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot be started ({e})"))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err("has no pipes".into());
        };
        let (tx, lines) = channel();
        let reader = std::thread::Builder::new().name("sojourn-offload-reader".into()).spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let end = line.is_err();
                if tx.send(line).is_err() || end {
                    return;
                }
            }
        });
        if let Err(e) = reader {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("cannot be read: no thread ({e})"));
        }
        let pid = child.id();
        log::info!("offload process {} started, pid {pid}", self.command.display());
        self.stats(|s| {
            s.started += 1;
            s.pid = Some(pid);
        });
        Ok(Running { child, stdin, lines })
    }

    /// Kills and reaps the child; says how it ended, for the log.
    fn give_up(&mut self) -> String {
        let Some(mut r) = self.running.take() else { return String::new() };
        // A child that died on its own has an exit status already; wait a
        // moment for it before killing, so the log says abort, not kill.
        let end = Instant::now() + Duration::from_millis(200);
        let mut status = r.child.try_wait().ok().flatten();
        while status.is_none() && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(10));
            status = r.child.try_wait().ok().flatten();
        }
        if status.is_none() {
            let _ = r.child.kill();
            status = r.child.wait().ok();
        }
        match status {
            Some(s) => format!(" (pid {}, {s})", r.child.id()),
            None => format!(" (pid {})", r.child.id()),
        }
    }
}

/// At most 200 characters of a line, for messages.
fn clip(line: &str) -> String {
    line.chars().take(200).collect()
}

/// The child's side: answers requests read from stdin, one a line, until
/// stdin closes (see the module doc for the format); the request loop of
/// every child executable. A request that does not parse, an unknown kind
/// or a panic answers `{"error": ..}` naming it; nothing here panics on
/// input.
///
/// Kinds for tests of the host: `test.abort` aborts the process, as CBC did;
/// `test.sleep` sleeps `input` ms, as a hung solver would.
pub fn serve() {
    let mut answers = answer_channel();
    let stdin = std::io::stdin().lock();
    for (n, line) in stdin.lines().enumerate() {
        let Ok(line) = line else { return };
        if line.trim().is_empty() {
            continue;
        }
        let answer = answer(n + 1, &line);
        let mut text = answer.to_string();
        text.push('\n');
        // One write a line (the descriptor is unbuffered; see `exchange`).
        if answers.write_all(text.as_bytes()).and_then(|_| answers.flush()).is_err() {
            return; // the host is gone
        }
    }
}

/// Where answers go: the original stdout. File descriptor 1 is pointed at
/// stderr, so that whatever a solver library prints never mixes with them.
fn answer_channel() -> Box<dyn Write> {
    use std::os::fd::AsFd;
    if let Ok(saved) = std::io::stdout().as_fd().try_clone_to_owned() {
        if rustix::stdio::dup2_stdout(std::io::stderr().as_fd()).is_ok() {
            return Box::new(std::fs::File::from(saved));
        }
    }
    Box::new(std::io::stdout())
}

/// The answer line to request line `n`.
fn answer(n: usize, line: &str) -> Value {
    let request: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => return json!({ "tag": null, "answer": { "error": format!("request line {n} does not parse: {e}") } }),
    };
    let tag = request.get("tag").cloned().unwrap_or(Value::Null);
    let Some(kind) = request.get("kind").and_then(Value::as_str) else {
        return json!({ "tag": tag, "answer": { "error": format!("request line {n} has no string 'kind'") } });
    };
    let input = request.get("input").cloned().unwrap_or(Value::Null);
    let result = match kind {
        "test.abort" => std::process::abort(),
        "test.sleep" => {
            std::thread::sleep(Duration::from_millis(input.as_u64().unwrap_or(0)));
            Ok(json!({ "slept_ms": input }))
        }
        _ => match catch_unwind(AssertUnwindSafe(|| crate::offload::run(kind, input))) {
            Ok(r) => r,
            Err(p) => Err(format!(
                "the work panicked: {}",
                p.downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| p.downcast_ref::<String>().cloned())
                    .unwrap_or_default()
            )),
        },
    };
    let answer = result.unwrap_or_else(|e| json!({ "error": format!("request line {n} ({kind}): {e}") }));
    json!({ "tag": tag, "answer": answer })
}
