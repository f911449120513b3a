//! What a TetriSched solve costs on top of CBC when it runs in the
//! `sojourn-offload` child (issue 16): the solve described as JSON, one line
//! to the child, decoded there, solved, its answer one line back. Per
//! instance size it prints the request's size; the JSON work of a round
//! trip timed apart in this process (describe and write the request line,
//! read it back as the child does, write and read the answer); and the
//! median time of the solve in this process and through the child, whose
//! difference also holds CBC's own run-to-run spread.
//!
//!   cargo bench -p sojourn-jni --bench offload            # 7 solves per size
//!   cargo bench -p sojourn-jni --bench offload -- 21

#[path = "../../sim/benches/common/sizing.rs"]
mod sizing;
use sizing::instance;

use sojourn_core::OffloadWork;
use sojourn_jni::isolation::{ChildRunner, ChildStats};
use sojourn_policies::tetrisched::compile::SolverOptions;
use sojourn_policies::tetrisched::offloaded::SolveInput;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A solve of §2's sizing instances, as the policy hands it to the host.
fn solve_input(nodes: u32, racks: u32, slices: u32, jobs: u32) -> SolveInput {
    let (root, parts, supply, window) = instance(nodes, racks, slices, jobs, 1);
    SolveInput { root, parts, supply, window, opts: SolverOptions::default(), warm: BTreeMap::new() }
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() {
    let reps: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(7);
    let stats = Arc::new(Mutex::new(ChildStats::default()));
    let mut child = ChildRunner::new(env!("CARGO_BIN_EXE_sojourn-offload").into(), Duration::from_secs(5), stats);
    println!("| nodes/racks/slices/jobs | request KB | answer KB | JSON work ms | in process ms | through the child ms | difference ms |");
    println!("|---|---|---|---|---|---|---|");
    let mut tag = 0;
    // §2's solver-sizing instances, and a tiny one for the fixed cost.
    for (n, r, h, j) in [(8, 2, 4, 2), (80, 8, 10, 20), (80, 8, 25, 20), (80, 8, 25, 50), (256, 8, 25, 150)] {
        let input = solve_input(n, r, h, j);
        let (mut inline, mut through, mut json) = (Vec::new(), Vec::new(), Vec::new());
        let (mut request_kb, mut answer_kb) = (0.0, 0.0);
        for _ in 0..reps {
            let t = Instant::now();
            let answer = Box::new(input.clone()).run();
            inline.push(t.elapsed().as_secs_f64() * 1000.0);
            answer_kb = answer.to_string().len() as f64 / 1024.0;
            // The round trip's JSON alone: what the parent and the child add.
            let t = Instant::now();
            let line = input.describe().map(|d| d.input.to_string()).unwrap_or_default();
            let decoded: Result<SolveInput, _> = serde_json::from_str(&line);
            let back = answer.to_string();
            let reread: Result<serde_json::Value, _> = serde_json::from_str(&back);
            json.push(t.elapsed().as_secs_f64() * 1000.0);
            if decoded.is_err() || reread.is_err() {
                eprintln!("{n}/{r}/{h}/{j}: the request or the answer does not read back");
                std::process::exit(1);
            }
            // The host's whole path: describe, send, solve there, read back.
            let t = Instant::now();
            let Some(described) = input.describe() else {
                eprintln!("{n}/{r}/{h}/{j}: the solve does not describe itself");
                std::process::exit(1);
            };
            request_kb = described.input.to_string().len() as f64 / 1024.0;
            tag += 1;
            let answered = child.run(tag, &described);
            through.push(t.elapsed().as_secs_f64() * 1000.0);
            if answered.get("error").is_some() {
                eprintln!("{n}/{r}/{h}/{j}: the child failed: {answered}");
                std::process::exit(1);
            }
        }
        let (a, b) = (median(inline), median(through));
        println!(
            "| {n}/{r}/{h}/{j} | {request_kb:.1} | {answer_kb:.1} | {:.2} | {a:.2} | {b:.2} | {:.2} |",
            median(json),
            b - a
        );
    }
}
