//! Kairos with AM containers that hold a vcore (delgado.md §3.5: AMs are
//! never suspended): on the thesis's testbed shape (30 nodes of 4 cores,
//! 60 GB, 5 GB containers) every job must finish. Before AMs were kept from
//! a node's last task core, 6, 4 and 3 jobs of seeds 1, 3 and 4 stalled with
//! suspended tasks behind nodes whose every core an AM held.

use std::process::Command;

fn unfinished(seed: u32) -> String {
    let workload = format!(
        "{}/workloads/kairos/generated_workload_bigc:spread=0.25:overhead_s=5:seed={seed}",
        env!("CARGO_MANIFEST_DIR")
    );
    let out = std::env::temp_dir().join(format!("sojourn-test-{}-kairos-am-{seed}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let run = Command::new(env!("CARGO_BIN_EXE_sojourn"))
        .args(["simulate", "-q", "--no-wall-clock", "--policy", "kairos", "--workload", &workload])
        .args(["--node-vcores", "4", "--classes", "none", "--nodes", "30", "--node-memory-mb", "61440"])
        .args(["--am-mb", "5120", "--am-startup-ms", "5000", "--heartbeat-ms", "1000", "--am-heartbeat-ms", "1000"])
        .arg("--out")
        .arg(&out)
        .output()
        .expect("run sojourn");
    assert!(run.status.success(), "seed {seed}: {}", String::from_utf8_lossy(&run.stderr));
    let csv = std::fs::read_to_string(out.join("summary.csv")).expect("summary.csv");
    let _ = std::fs::remove_dir_all(&out);
    let row = csv.lines().find(|l| l.starts_with("unfinished,kairos,")).unwrap_or_else(|| panic!("no row: {csv}"));
    row.split(',').nth(2).unwrap_or_default().to_string()
}

#[test]
fn every_job_finishes_when_ams_hold_a_core() {
    for seed in [1, 3, 4] {
        assert_eq!(unfinished(seed), "0", "seed {seed}: jobs left unfinished");
    }
}
