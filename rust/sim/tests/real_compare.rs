//! `sojourn real-compare` end to end on hand-written run directories, as
//! integration/gridmix/compare.sh lays them out (one jobs.csv per scheduler).

use std::path::PathBuf;
use std::process::Command;

fn sojourn() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sojourn"))
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("sojourn-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

const HEADER: &str = "app_id,name,queue,user,state,final_status,submit_ms,launch_ms,finish_ms,response_ms\n";

fn run_dir(root: &std::path::Path, name: &str, rows: &[&str]) -> PathBuf {
    let d = root.join(name);
    std::fs::create_dir_all(&d).expect("run dir");
    std::fs::write(d.join("jobs.csv"), format!("{HEADER}{}\n", rows.join("\n"))).expect("jobs.csv");
    d
}

#[test]
fn real_compare_writes_table_csv_jobs_and_page() {
    let root = tmp("real-compare");
    let fifo = run_dir(
        &root,
        "sojourn-fifo",
        &[
            "application_7_0001,GRIDMIX000000,default,u,FINISHED,SUCCEEDED,1000,2000,31000,30000",
            "application_7_0002,GRIDMIX000001,default,u,FINISHED,SUCCEEDED,2000,3000,12000,10000",
        ],
    );
    let cap = run_dir(
        &root,
        "capacity",
        &[
            "application_8_0001,GRIDMIX000000,default,u,FINISHED,SUCCEEDED,1000,1500,21000,20000",
            "application_8_0002,GRIDMIX000001,default,u,FINISHED,SUCCEEDED,2000,2500,22000,20000",
        ],
    );
    let (csv, jobs, page) = (root.join("c.csv"), root.join("jobs.csv"), root.join("page"));
    let out = sojourn()
        .args(["real-compare", "--trace", "tiny-rumen.json", "--csv"])
        .arg(&csv)
        .arg("--jobs-csv")
        .arg(&jobs)
        .arg("--html")
        .arg(&page)
        .arg(format!("sojourn:fifo={}", fifo.display()))
        .arg(format!("capacity={}", cap.display()))
        .output()
        .expect("run sojourn");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.starts_with("Real cluster: tiny-rumen.json"), "{text}");
    assert!(text.contains("vs sojourn:fifo") && text.contains("| GRIDMIX000001 | 10.000 | 20.000 |"), "{text}");
    let c = std::fs::read_to_string(&csv).expect("comparison csv");
    let lines: Vec<&str> = c.lines().collect();
    assert_eq!(lines.len(), 3, "{c}");
    let cols: Vec<&str> = lines[0].split(',').collect();
    let mean = cols.iter().position(|k| *k == "all.response_s.mean").expect("mean column");
    assert_eq!(lines[1].split(',').nth(mean), Some("20"), "{c}");
    assert_eq!(lines[2].split(',').nth(mean), Some("20"), "{c}");
    let j = std::fs::read_to_string(&jobs).expect("jobs csv");
    assert!(j.contains("GRIDMIX000000,30.000,1.000,20.000,0.500"), "{j}");
    let h = std::fs::read_to_string(page.join("index.html")).expect("page");
    assert_eq!(h.matches("<svg ").count(), 2);

    // Baseline by name.
    let out = sojourn()
        .args(["real-compare", "--baseline", "capacity"])
        .arg(format!("sojourn:fifo={}", fifo.display()))
        .arg(format!("capacity={}", cap.display()))
        .output()
        .expect("run sojourn");
    assert!(String::from_utf8_lossy(&out.stdout).contains("vs capacity"));
}

#[test]
fn real_compare_errors_name_the_input() {
    let root = tmp("real-compare-errors");
    let bad = run_dir(&root, "bad", &["application_7_0001,G,default,u,FINISHED,SUCCEEDED,1000,x,31000,"]);
    let out = sojourn().args(["real-compare"]).arg(format!("a={}", bad.display())).output().expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("bad/jobs.csv") && err.contains("'x'"), "{err}");
    let out = sojourn().args(["real-compare", "a=/nonexistent/run"]).output().expect("run");
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/run"));
    let out = sojourn().args(["real-compare", "just-a-dir"]).output().expect("run");
    assert!(String::from_utf8_lossy(&out.stderr).contains("'just-a-dir'"));
}

/// Two real runs of `gradle gridmixTest` (integration/gridmix/tiny-rumen.json: 3 GridMix jobs
/// on 2 NodeManagers), as GridmixRunner wrote them: every job succeeded under both.
#[test]
fn real_compare_reads_gridmix_runner_output() {
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/gridmix");
    let root = tmp("real-compare-gridmix");
    let csv = root.join("c.csv");
    let out = sojourn()
        .args(["real-compare", "--csv"])
        .arg(&csv)
        .arg(format!("sojourn:fifo={data}/sojourn-fifo"))
        .arg(format!("capacity={data}/capacity"))
        .output()
        .expect("run sojourn");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    for job in ["GRIDMIX000000", "GRIDMIX000001", "GRIDMIX000002"] {
        assert!(text.contains(&format!("| {job} |")), "{text}");
    }
    let c = std::fs::read_to_string(&csv).expect("comparison csv");
    let lines: Vec<&str> = c.lines().collect();
    let cols: Vec<&str> = lines[0].split(',').collect();
    let ok = cols.iter().position(|k| *k == "succeeded").expect("succeeded column");
    assert_eq!(lines[1].split(',').nth(ok), Some("3"), "{c}");
    assert_eq!(lines[2].split(',').nth(ok), Some("3"), "{c}");
}
