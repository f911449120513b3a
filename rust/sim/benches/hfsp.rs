//! HFSP's costs (issue: HFSP). Prints CSV rows and, with `--record`,
//! appends them to `benches/hfsp-history.csv`.
//!
//!   cargo bench -p sojourn-sim --bench hfsp                # both parts
//!   cargo bench -p sojourn-sim --bench hfsp -- --record
//!
//! - `node_update`: the core's cost of one `NODE_UPDATE` (a heartbeat
//!   after a container finished, which places the next one) with 1,000
//!   jobs running, p50/p99 over 5,000 heartbeats, for hfsp and, as
//!   yardsticks in the same run, fifo and fair. 125 nodes of 8 vcores /
//!   8 GB; each job asks 20 map tasks of 1 GB, so 1,000 containers run and
//!   every job keeps demand waiting.
//! - `single_server`: jobs per second of each chapter-3 discipline on the
//!   FB-2010 SWIM day (24,315 jobs), load 0.9, σ 0.5.

#[path = "common/history.rs"]
mod history;

use sojourn_core::{
    AppId, AppSpec, Ask, ContainerId, CoreConfig, Decision, Event, Harness, NodeId, NodeSpec, Outcome, Phase, Priority,
    Resources, Time,
};
use sojourn_sim::single_server::{self, workload::swim_workload, Discipline};
use std::collections::BTreeMap;
use std::time::Instant;

const FB2010: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/workloads/FB-2010_samples_24_times_1hr_0.tsv");
const HISTORY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/hfsp-history.csv");

fn percentile(sorted: &[f64], q: f64) -> f64 {
    let k = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[k - 1]
}

/// (p50 µs, p99 µs, heartbeats) of `policy` at 1,000 running jobs.
fn node_update(policy: &str) -> (f64, f64, usize) {
    let p = sojourn_policies::build(policy, &BTreeMap::new()).expect("policy");
    let mut core = Harness::new(p, CoreConfig::default());
    let nodes = 125u32;
    for n in 0..nodes {
        let spec = NodeSpec {
            node: NodeId(n),
            name: format!("n{n}"),
            rack: format!("/r{}", n / 40),
            labels: vec![],
            capacity: Resources::new(8192, 8),
        };
        core.handle(Time::ZERO, Event::NodeAdded(spec)).expect("node");
    }
    let mut now = Time::ZERO;
    for a in 0..1000u32 {
        now = now.plus(10);
        let spec = AppSpec::new(AppId(a), "default", &format!("u{}", a % 10));
        core.handle(now, Event::AppAdded(spec)).expect("app");
        let mut ask = Ask::new(Priority::MAP, Resources::new(1024, 1), 20, Phase::Map);
        ask.est_task_ms = Some(30_000);
        core.handle(now, Event::AsksUpdated { app: AppId(a), asks: vec![ask] }).expect("ask");
    }
    // running: container -> node, in placement order
    let mut running: Vec<(ContainerId, NodeId)> = Vec::new();
    let place = |core: &mut Harness, running: &mut Vec<(ContainerId, NodeId)>| {
        for d in core.drain_decisions() {
            if let Decision::Allocate { container, node, .. } = d {
                core.handle(Time::ZERO, Event::ContainerStarted { container }).ok();
                running.push((container, node));
            }
        }
    };
    // fill the cluster one heartbeat per node, round robin, until it is full
    for _ in 0..16 {
        for n in 0..nodes {
            core.handle(now, Event::NodeHeartbeat { node: NodeId(n) }).expect("heartbeat");
            place(&mut core, &mut running);
        }
    }
    let mut lat = Vec::new();
    let mut i = 0usize;
    for _ in 0..5000 {
        if running.is_empty() {
            break;
        }
        now = now.plus(50);
        i = (i * 7 + 13) % running.len();
        let (c, node) = running.swap_remove(i);
        core.handle(now, Event::ContainerCompleted { container: c, outcome: Outcome::Finished }).expect("done");
        place(&mut core, &mut running);
        let t = Instant::now();
        core.handle(now, Event::NodeHeartbeat { node }).expect("heartbeat");
        lat.push(t.elapsed().as_secs_f64() * 1e6);
        place(&mut core, &mut running);
    }
    lat.sort_by(|a, b| a.total_cmp(b));
    (percentile(&lat, 0.5), percentile(&lat, 0.99), lat.len())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let record = args.iter().any(|a| a == "--record");
    let mut rows = Vec::new();
    println!("case,subject,count,p50_us,p99_us,jobs_per_s");
    for policy in ["hfsp", "fifo", "fair"] {
        let (p50, p99, n) = node_update(policy);
        rows.push(format!("node_update,{policy},{n},{p50:.1},{p99:.1},"));
        println!("{}", rows.last().expect("row"));
    }
    let (jobs, _) = swim_workload(std::path::Path::new(FB2010), 0.9, 0.5, 1).expect("FB-2010 sizes");
    for d in Discipline::ALL {
        let t = Instant::now();
        let done = single_server::run(&jobs, d);
        let wall = t.elapsed().as_secs_f64();
        assert_eq!(done.len(), jobs.len());
        rows.push(format!("single_server,{},{},,,{:.0}", d.name(), jobs.len(), jobs.len() as f64 / wall));
        println!("{}", rows.last().expect("row"));
    }
    if record {
        history::append(HISTORY, "case,subject,count,p50_us,p99_us,jobs_per_s", &rows);
    }
}
