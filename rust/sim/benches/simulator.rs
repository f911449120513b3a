//! Simulator speed and memory (issue: foundation; every policy since Core
//! v2). Prints, per case, the simulated task events per second, wall time,
//! peak memory (VmHWM of a child process per case, so cases do not inflate
//! each other's peak) and the core's own time.
//!
//!   cargo bench -p sojourn-sim --bench simulator                # every case
//!   cargo bench -p sojourn-sim --bench simulator -- yahoo       # yahoo, every policy
//!   cargo bench -p sojourn-sim --bench simulator -- yahoo:hawk  # one case
//!   cargo bench -p sojourn-sim --bench simulator -- --record    # and append to history.csv
//!   cargo bench -p sojourn-sim --bench simulator -- google:eagle  # one policy at 500,000 jobs
//!   cargo bench -p sojourn-sim --bench simulator -- google:all    # every policy at 500,000 jobs
//!
//! Cases (targets on a 2-core machine):
//! - `yahoo`: YH2_sub.tr (3,363 jobs, 137,029 tasks) on 4,000 one-slot
//!   workers, event-driven, fifo. Target < 0.5 s. `yahoo:<policy>` is the
//!   same run under every other registered policy with its defaults (a
//!   benchmark of one policy hides the others).
//! - `google`: 500,000 synthetic Google-like jobs on 15,000 one-slot
//!   workers, event-driven, fifo. Target < 60 s and < 4 GiB.
//!   `google:<policy>` is the same run under every other policy; at a
//!   minute or more each, these run only when named (or `google:all`).

#[path = "common/history.rs"]
mod history;

use sojourn_core::Resources;
use sojourn_sim::engine::{simulate, SimConfig};
use sojourn_sim::workload::{self, ClusterSpec};
use std::time::Instant;

// The allocator the `sojourn` binary ships with, so that a row measures what a
// user runs (rows before 2026-11-27 d7e34b3 used the system allocator).
#[global_allocator]
static GLOBAL: sojourn_sim::allocator::MiMalloc = sojourn_sim::allocator::MiMalloc;

const YH2: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/traces/eagle/YH2_sub.tr");
const HISTORY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/history.csv");

struct Case {
    /// `yahoo` and `google` run fifo (their history predates the others);
    /// `yahoo:<policy>` runs that policy.
    name: String,
    workload: String,
    workers: usize,
    policy: String,
}

fn cases() -> Vec<Case> {
    let yh2 = std::env::var("SOJOURN_YH2").unwrap_or_else(|_| YH2.to_string());
    let mut cases = vec![Case { name: "yahoo".into(), workload: yh2.clone(), workers: 4000, policy: "fifo".into() }];
    // tetrisched re-plans every pending job each cycle: a YH2 replay does not
    // finish in reasonable time yet (issue 16).
    for p in sojourn_policies::catalog()
        .into_iter()
        .filter(|p| p.name != "fifo" && !sojourn_policies::NOT_COMPARED_BY_DEFAULT.contains(&p.name))
    {
        cases.push(Case {
            name: format!("yahoo:{}", p.name),
            workload: yh2.clone(),
            workers: 4000,
            policy: p.name.into(),
        });
    }
    let google = "synthetic:google:jobs=500000:seed=1";
    cases.push(Case { name: "google".into(), workload: google.into(), workers: 15000, policy: "fifo".into() });
    for p in sojourn_policies::catalog()
        .into_iter()
        .filter(|p| p.name != "fifo" && !sojourn_policies::NOT_COMPARED_BY_DEFAULT.contains(&p.name))
    {
        cases.push(Case {
            name: format!("google:{}", p.name),
            workload: google.into(),
            workers: 15000,
            policy: p.name.into(),
        });
    }
    cases
}

/// Whether `case` was asked for: by its name, or by the name before its
/// `:` (`yahoo` runs every `yahoo:` case too); nothing asked runs all but
/// the long `google:<policy>` cases, which run when named or by `google:all`.
fn wanted(case: &Case, asked: &[&String]) -> bool {
    if let Some(policy) = case.name.strip_prefix("google:") {
        return asked.iter().any(|a| a.as_str() == "google:all" || a.strip_prefix("google:") == Some(policy));
    }
    asked.is_empty() || asked.iter().any(|a| case.name == **a || case.name.split(':').next() == Some(a.as_str()))
}

/// Runs one case in this process and prints one CSV row.
fn run_case(case: &Case) -> Result<String, String> {
    let jobs = workload::open(&case.workload).map_err(|e| e.to_string())?;
    let cluster = ClusterSpec::uniform(case.workers, Resources::new(1024, 1), 40);
    let cfg = SimConfig { policy: case.policy.clone(), heartbeat_ms: 0, sample_ms: 100_000, ..SimConfig::default() };
    let t = Instant::now();
    let r = simulate(&cluster, jobs, &case.name, &cfg, None).map_err(|e| e.to_string())?;
    let wall = t.elapsed().as_secs_f64();
    Ok(format!(
        "{},{},{},{},{:.0},{:.3},{:.1},{:.3}",
        case.name,
        r.jobs.len(),
        r.task_events,
        case.workers,
        r.task_events as f64 / wall,
        wall,
        history::peak_rss_mib(),
        r.core_ms / 1000.0
    ))
}

fn main() {
    sojourn_sim::allocator::keep_freed_pages();
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let record = args.iter().any(|a| a == "--record");
    if let Some(name) = args.iter().find_map(|a| a.strip_prefix("--child=")) {
        let case = cases().into_iter().find(|c| c.name == name).expect("known case");
        match run_case(&case) {
            Ok(row) => println!("{row}"),
            Err(e) => {
                eprintln!("{}: {e}", case.name);
                std::process::exit(1);
            }
        }
        return;
    }
    let asked: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let exe = std::env::current_exe().expect("own path");
    println!("case,jobs,task_events,workers,task_events_per_s,wall_s,peak_rss_mib,core_s");
    let mut rows = Vec::new();
    for case in cases() {
        if !wanted(&case, &asked) {
            continue;
        }
        let out = std::process::Command::new(&exe).arg(format!("--child={}", case.name)).output().expect("run case");
        if !out.status.success() {
            eprintln!("{}", String::from_utf8_lossy(&out.stderr));
            std::process::exit(1);
        }
        let row = String::from_utf8_lossy(&out.stdout).trim().to_string();
        println!("{row}");
        rows.push(row);
    }
    if record {
        history::append(HISTORY, "case,jobs,task_events,workers,task_events_per_s,wall_s,peak_rss_mib,core_s", &rows);
    }
}
