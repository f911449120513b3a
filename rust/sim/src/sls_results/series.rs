//! The per-second gauges of an SLS run (`metrics/variable.*.csv`): running
//! containers and applications, and the cluster's allocated and available
//! memory and vcores, joined by second into utilization samples like the
//! simulator's. Metrics off (no files) gives no samples, not an error.

use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::Path;

use crate::engine::SimError;
use crate::run::UtilSample;
use crate::workload::text::Lines;
use sojourn_core::Time;

/// A Codahale `variable.*.csv` gauge (`t,value`, t in epoch seconds) as `(t, value)` rows;
/// errors name `file` and the line.
pub fn parse_gauge(file: &str, text: &str) -> Result<Vec<(f64, f64)>, SimError> {
    gauge_rows(Lines::of_str(text, file))
}

/// [`parse_gauge`] over any lines: the first is the header.
fn gauge_rows<R: BufRead>(mut lines: Lines<R>) -> Result<Vec<(f64, f64)>, SimError> {
    if let Some(header) = lines.next() {
        header?;
    }
    let mut rows = Vec::new();
    while let Some(row) = lines.next() {
        let (n, line) = row?;
        let mut f = line.split(',').map(str::trim);
        let mut num = || {
            let s = f.next().ok_or_else(|| lines.error(n, "too few fields"))?;
            s.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| lines.error(n, format!("'{s}' is not a number")))
        };
        rows.push((num()?, num()?));
    }
    Ok(rows)
}

/// What SLS samples every second besides the counters (`metrics/variable.*.csv`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SlsSeries {
    /// Containers running (AMs included), `(epoch s, count)`.
    pub running_containers: Vec<(f64, f64)>,
    /// Memory and vcores allocated over allocated + available, at the seconds the cluster
    /// had capacity (`t` in epoch ms; `running_jobs` from `variable.running.application.csv`).
    pub utilization: Vec<UtilSample>,
}

impl SlsSeries {
    /// The samples from `start_s` to `end_s` (epoch seconds, both included).
    pub fn window(&self, start_s: f64, end_s: f64) -> SlsSeries {
        let inside = |t: f64| t >= start_s && t <= end_s;
        SlsSeries {
            running_containers: self.running_containers.iter().copied().filter(|p| inside(p.0)).collect(),
            utilization: self.utilization.iter().filter(|u| inside(u.t.ms() as f64 / 1000.0)).cloned().collect(),
        }
    }
}

/// Reads the gauges of an SLS output directory; a missing file (metrics off) gives no samples.
pub fn read_sls_series(dir: &Path) -> Result<SlsSeries, SimError> {
    let metrics = dir.join("metrics");
    let gauge = |name: &str| -> Result<BTreeMap<i64, f64>, SimError> {
        match Lines::open_if_exists(&metrics.join(format!("variable.{name}.csv")))? {
            Some(lines) => Ok(gauge_rows(lines)?.into_iter().map(|(t, v)| (t as i64, v)).collect()),
            None => Ok(BTreeMap::new()),
        }
    };
    let running = gauge("running.container")?;
    let apps = gauge("running.application")?;
    let [mem_used, mem_free, cores_used, cores_free] = [
        gauge("cluster.allocated.memory")?,
        gauge("cluster.available.memory")?,
        gauge("cluster.allocated.vcores")?,
        gauge("cluster.available.vcores")?,
    ];
    let frac = |used: f64, free: f64| (used + free > 0.0).then(|| used / (used + free));
    let utilization = mem_used
        .iter()
        .filter_map(|(&t, &mu)| {
            let memory = frac(mu, *mem_free.get(&t)?)?;
            let vcores = frac(*cores_used.get(&t)?, *cores_free.get(&t)?)?;
            let running_jobs = apps.get(&t).map_or(0, |&n| n.max(0.0) as u32);
            let t = Time(u64::try_from(t).ok()? * 1000);
            Some(UtilSample { t, memory, vcores, running_jobs, pending_containers: 0 })
        })
        .collect();
    Ok(SlsSeries { running_containers: running.into_iter().map(|(t, v)| (t as f64, v)).collect(), utilization })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Utilization;
    use std::path::PathBuf;

    /// A temporary SLS output directory holding `files` (path under it, contents).
    fn out_dir(tag: &str, files: &[(&str, &str)]) -> PathBuf {
        let d = std::env::temp_dir().join(format!("sojourn-sls-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        for (name, text) in files {
            let p = d.join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        d
    }

    #[test]
    fn gauges_parse_and_errors_name_file_and_line() {
        assert_eq!(parse_gauge("g.csv", "t,value\n10,0\n11,2.5\n\n").unwrap(), [(10.0, 0.0), (11.0, 2.5)]);
        assert_eq!(parse_gauge("g.csv", "t,value\n").unwrap(), []);
        let e = parse_gauge("m/g.csv", "t,value\n10,0\n11,x\n").unwrap_err().to_string();
        assert!(e.contains("m/g.csv:3: 'x' is not a number"), "{e}");
        let e = parse_gauge("g.csv", "t,value\n10\n").unwrap_err().to_string();
        assert!(e.contains("g.csv:2: too few fields"), "{e}");
        assert!(parse_gauge("g.csv", "t,value\n10,NaN\n").is_err());
    }

    /// Two nodes' worth of capacity (8 GB, 8 vcores) joining at t=2: the samples before have
    /// no capacity and no utilization.
    const ALLOCATED_MB: &str = "t,value\n1,0\n2,2048\n3,8192\n4,4096\n";
    const AVAILABLE_MB: &str = "t,value\n1,0\n2,6144\n3,0\n4,4096\n";
    const ALLOCATED_VC: &str = "t,value\n1,0\n2,2\n3,4\n4,4\n";
    const AVAILABLE_VC: &str = "t,value\n1,0\n2,6\n3,4\n4,4\n";

    #[test]
    fn series_join_the_gauges() {
        let d = out_dir(
            "series",
            &[
                ("metrics/variable.running.container.csv", "t,value\n1,0\n2,2\n3,8\n4,4\n"),
                ("metrics/variable.running.application.csv", "t,value\n1,0\n2,2\n3,2\n4,1\n"),
                ("metrics/variable.cluster.allocated.memory.csv", ALLOCATED_MB),
                ("metrics/variable.cluster.available.memory.csv", AVAILABLE_MB),
                ("metrics/variable.cluster.allocated.vcores.csv", ALLOCATED_VC),
                ("metrics/variable.cluster.available.vcores.csv", AVAILABLE_VC),
            ],
        );
        let s = read_sls_series(&d).unwrap();
        assert_eq!(s.running_containers, [(1.0, 0.0), (2.0, 2.0), (3.0, 8.0), (4.0, 4.0)]);
        let u: Vec<(u64, f64, f64, u32)> =
            s.utilization.iter().map(|u| (u.t.ms(), u.memory, u.vcores, u.running_jobs)).collect();
        assert_eq!(u, [(2000, 0.25, 0.25, 2), (3000, 1.0, 0.5, 2), (4000, 0.5, 0.5, 1)]);
        // Time-weighted: 0.25 for 1 s, 1.0 for 1 s (the last sample closes the span).
        assert_eq!(Utilization::of(&s.utilization).mean_memory, 0.625);
        let w = s.window(3.0, 4.0);
        assert_eq!((w.running_containers.len(), w.utilization.len()), (2, 2));
        // Metrics off: no samples, no error. A bad row: an error naming the file.
        assert_eq!(read_sls_series(&d.join("nowhere")).unwrap(), SlsSeries::default());
        std::fs::write(d.join("metrics/variable.running.container.csv"), "t,value\n1,?\n").unwrap();
        let e = read_sls_series(&d).unwrap_err().to_string();
        assert!(e.contains("variable.running.container.csv:2: '?' is not a number"), "{e}");
        let _ = std::fs::remove_dir_all(d);
    }
}
