//! `sojourn-offload`: runs a policy's described offloaded work
//! (`sojourn_policies::offload::run`, TetriSched's MILP solves) for the
//! ResourceManager, which keeps one of these as a child process so that a
//! solver's abort ends this process, not the RM (`isolation.rs`).
//!
//! Reads one JSON request a line on stdin, `{"tag": .., "kind": ..,
//! "input": ..}`, and writes one answer a line on stdout, `{"tag": ..,
//! "answer": ..}`, until stdin closes. A request that does not parse, an
//! unknown kind or a panic answers `{"error": ..}` naming it; nothing here
//! panics on input.
//!
//! Kinds for tests of the host: `test.abort` aborts the process, as CBC did;
//! `test.sleep` sleeps `input` ms, as a hung solver would.

use serde_json::{json, Value};
use std::io::{BufRead, Write};
use std::os::fd::FromRawFd;
use std::panic::{catch_unwind, AssertUnwindSafe};

fn main() {
    let mut answers = answer_channel();
    let stdin = std::io::stdin().lock();
    for (n, line) in stdin.lines().enumerate() {
        let Ok(line) = line else { return };
        if line.trim().is_empty() {
            continue;
        }
        let answer = answer(n + 1, &line);
        if writeln!(answers, "{answer}").and_then(|_| answers.flush()).is_err() {
            return; // the RM is gone
        }
    }
}

/// Where answers go: the original stdout. File descriptor 1 is pointed at
/// stderr, so that whatever a solver library prints never mixes with them.
fn answer_channel() -> Box<dyn Write> {
    // SAFETY: dup and dup2 on the process's own standard descriptors; the
    // duplicate is owned by the File alone.
    unsafe {
        let fd = libc::dup(1);
        if fd >= 0 && libc::dup2(2, 1) >= 0 {
            return Box::new(std::fs::File::from_raw_fd(fd));
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
            std::thread::sleep(std::time::Duration::from_millis(input.as_u64().unwrap_or(0)));
            Ok(json!({ "slept_ms": input }))
        }
        _ => match catch_unwind(AssertUnwindSafe(|| sojourn_policies::offload::run(kind, input))) {
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
