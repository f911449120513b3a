//! Seeded GridMix-like and PigMix-like job mixes (size classes of
//! MapReduce jobs), streamed as the other synthetic workloads are
//! ([`super::synthetic`] holds the shared helpers).
//!
//! # GridMix-like mix
//! Small, medium and large MapReduce jobs in proportions 60/30/10 (our
//! choice, in the spirit of GridMix's small/medium/large job sizes): maps
//! 1–10 / 20–100 / 200–500, reduces 1 / 5–10 / 20–50 (uniform), map tasks
//! of 15 / 30 / 45 s and reduce tasks of 20 / 60 / 180 s on average,
//! log-normal within a job (sigma 0.3, the within-job spread of the Yahoo
//! sample). Poisson arrivals, mean 30 s (HFSP's DEV workload, hfsp.md §5.2).
//! Maps 1024 MB, reduces 2048 MB.
//!

use super::synthetic::{interarrival, job, job_count, secs_ms, streams, whole, Poisson};
use super::{pick_weighted, JobSpec, TaskGroup};
use sojourn_core::{Resources, Rng};

/// One size class of the GridMix-like mix.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GridMixClass {
    pub name: &'static str,
    pub weight: f64,
    /// Inclusive ranges, drawn uniformly.
    pub maps: (u32, u32),
    pub reduces: (u32, u32),
    /// Mean map and reduce task times, s.
    pub map_s: f64,
    pub reduce_s: f64,
}

pub const GRIDMIX_CLASSES: [GridMixClass; 3] = [
    GridMixClass { name: "small", weight: 0.6, maps: (1, 10), reduces: (1, 1), map_s: 15.0, reduce_s: 20.0 },
    GridMixClass { name: "medium", weight: 0.3, maps: (20, 100), reduces: (5, 10), map_s: 30.0, reduce_s: 60.0 },
    GridMixClass { name: "large", weight: 0.1, maps: (200, 500), reduces: (20, 50), map_s: 45.0, reduce_s: 180.0 },
];

#[derive(Clone, Debug, PartialEq)]
pub struct GridMixOptions {
    pub jobs: u64,
    pub seed: u64,
    pub mean_interarrival_s: f64,
    pub classes: Vec<GridMixClass>,
    /// Job name prefix.
    pub prefix: &'static str,
    /// Log-normal sigma of task times within a job.
    pub sigma: f64,
    /// A factor on every class's mean task times, applied when drawing, so
    /// that it composes with the per-class keys in any order.
    pub time_scale: f64,
    pub map_container: Resources,
    pub reduce_container: Resources,
}

impl GridMixOptions {
    pub fn new(jobs: u64, seed: u64) -> GridMixOptions {
        GridMixOptions {
            jobs,
            seed,
            mean_interarrival_s: 30.0,
            classes: GRIDMIX_CLASSES.to_vec(),
            prefix: "gridmix",
            sigma: 0.3,
            time_scale: 1.0,
            map_container: Resources::new(1024, 1),
            reduce_container: Resources::new(2048, 1),
        }
    }

    /// Sets one option by name: `jobs`, `seed`, `interarrival_s`, and the
    /// task-time calibration knobs (issue 20): `sigma` (0.3), the
    /// log-normal deviation of task times within a job (0: every task of a
    /// phase takes the class's mean), and `time_scale` (1), a factor on every
    /// class's map and reduce means (the PigMix bins' times are our choice,
    /// see [`PIGMIX_BINS`], so their scale is a knob to calibrate).
    ///
    /// Per class, by the class's name (`bin1`..`bin4` for `pigmix`,
    /// `small`/`medium`/`large` for `gridmix`), the quantities the HFSP
    /// thesis leaves open (hfsp.md §5.6): `CLASS_map_s` and `CLASS_reduce_s`,
    /// the class's mean map and reduce task times in seconds (before
    /// `time_scale`); `CLASS_maps=LO-HI` and `CLASS_reduces=LO-HI` (or one
    /// number N for N-N), the inclusive ranges its map and reduce counts are
    /// drawn from uniformly (maps at least 1; 0 reduces makes a map-only
    /// job). The defaults are the class's row of [`PIGMIX_BINS`] or
    /// [`GRIDMIX_CLASSES`].
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let within = |lo: f64, hi: f64| {
            value
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|v| (lo..=hi).contains(v))
                .ok_or_else(|| format!("{key}: {value:?} is not a number in [{lo}, {hi}]"))
        };
        match key {
            "jobs" => self.jobs = job_count(key, value)?,
            "seed" => self.seed = whole(key, value)?,
            "interarrival_s" => self.mean_interarrival_s = interarrival(key, value)?,
            "sigma" => self.sigma = within(0.0, 3.0)?,
            "time_scale" => self.time_scale = within(0.01, 100.0)?,
            _ => {
                let names: Vec<&'static str> = self.classes.iter().map(|c| c.name).collect();
                let known = || {
                    format!(
                        "unknown key {key:?} (known: jobs, seed, interarrival_s, sigma, time_scale, and per class \
                         CLASS_map_s, CLASS_reduce_s, CLASS_maps, CLASS_reduces with CLASS one of {})",
                        names.join(", ")
                    )
                };
                let (class, what) = key.split_once('_').ok_or_else(known)?;
                let Some(c) = self.classes.iter().position(|c| c.name == class) else { return Err(known()) };
                // Task means up to a day; counts up to 100,000 tasks a phase.
                let range = |min: u32| -> Result<(u32, u32), String> {
                    let bad =
                        || format!("{key}: expected LO-HI or N, whole numbers from {min} to 100000, found {value:?}");
                    let (lo, hi) = value.split_once('-').unwrap_or((value, value));
                    let lo = lo.trim().parse::<u32>().map_err(|_| bad())?;
                    let hi = hi.trim().parse::<u32>().map_err(|_| bad())?;
                    if lo < min || lo > hi || hi > 100_000 {
                        return Err(bad());
                    }
                    Ok((lo, hi))
                };
                let c = &mut self.classes[c];
                match what {
                    "map_s" => c.map_s = within(0.001, 86_400.0)?,
                    "reduce_s" => c.reduce_s = within(0.001, 86_400.0)?,
                    "maps" => c.maps = range(1)?,
                    "reduces" => c.reduces = range(0)?,
                    _ => return Err(known()),
                }
            }
        }
        Ok(())
    }
}

/// The PigMix bins of the HFSP testbed (hfsp.md §5.2, Table 5.1): data set
/// 1 GB / 10 GB / 100 GB / 1 TB with < 5, 10–50, 50–150 and > 150 maps.
/// The thesis gives no task times; per hfsp.md §5.6 map means stay ≤ 60 s
/// with a small within-job spread and reduce means span about 100×, and
/// every job has 20 reducers (the PigMix sample's `PARALLEL 20`). Bin 4 is
/// capped at 250 maps and map means grow with the bin, our choices, so that
/// TEST runs at an offered load near 0.9 on the 20-node testbed.
pub const PIGMIX_BINS: [GridMixClass; 4] = [
    GridMixClass { name: "bin1", weight: 0.0, maps: (1, 4), reduces: (20, 20), map_s: 15.0, reduce_s: 3.0 },
    GridMixClass { name: "bin2", weight: 0.0, maps: (10, 50), reduces: (20, 20), map_s: 20.0, reduce_s: 15.0 },
    GridMixClass { name: "bin3", weight: 0.0, maps: (50, 150), reduces: (20, 20), map_s: 25.0, reduce_s: 60.0 },
    GridMixClass { name: "bin4", weight: 0.0, maps: (150, 250), reduces: (20, 20), map_s: 30.0, reduce_s: 300.0 },
];

impl GridMixOptions {
    /// The PigMix-like workloads of the HFSP testbed: `dev` (bins
    /// 65/20/10/5%, Poisson arrivals with mean 30 s), `test` (30/40/10/20%,
    /// 60 s) and `prod` (0/10/60/30%, 60 s), 100 jobs by default.
    pub fn pigmix(workload: &str, jobs: u64, seed: u64) -> Option<GridMixOptions> {
        let (weights, gap) = match workload {
            "dev" => ([0.65, 0.20, 0.10, 0.05], 30.0),
            "test" => ([0.30, 0.40, 0.10, 0.20], 60.0),
            "prod" => ([0.0, 0.10, 0.60, 0.30], 60.0),
            _ => return None,
        };
        let mut classes = PIGMIX_BINS.to_vec();
        for (c, w) in classes.iter_mut().zip(weights) {
            c.weight = w;
        }
        Some(GridMixOptions {
            mean_interarrival_s: gap,
            classes,
            prefix: match workload {
                "dev" => "pigmix-dev",
                "test" => "pigmix-test",
                _ => "pigmix-prod",
            },
            ..GridMixOptions::new(jobs, seed)
        })
    }
}

/// `n` task times (ms), log-normal with mean `mean_s` seconds and deviation
/// `sigma`: mu = ln(mean) - sigma^2 / 2.
pub(super) fn lognormal_times(rng: &mut Rng, n: usize, mean_s: f64, sigma: f64) -> Vec<u64> {
    let mu = mean_s.ln() - sigma * sigma / 2.0;
    (0..n).map(|_| secs_ms(rng.lognormal(mu, sigma))).collect()
}

/// A draw from an inclusive range, uniformly.
pub(super) fn uniform_in(rng: &mut Rng, (lo, hi): (u32, u32)) -> usize {
    (lo as u64 + rng.below(hi.saturating_sub(lo) as u64 + 1)) as usize
}

#[derive(Clone, Debug)]
pub struct GridMixJobs {
    opts: GridMixOptions,
    arrivals: Poisson,
    rng: Rng,
    next_id: u64,
}

impl GridMixJobs {
    pub fn new(opts: GridMixOptions) -> GridMixJobs {
        let (a, rng) = streams(opts.seed);
        let arrivals = Poisson::new(a, opts.mean_interarrival_s);
        GridMixJobs { opts, arrivals, rng, next_id: 0 }
    }

    fn uniform(&mut self, range: (u32, u32)) -> usize {
        uniform_in(&mut self.rng, range)
    }

    fn times(&mut self, n: usize, mean_s: f64) -> Vec<u64> {
        lognormal_times(&mut self.rng, n, mean_s, self.opts.sigma)
    }
}

impl Iterator for GridMixJobs {
    type Item = JobSpec;

    fn next(&mut self) -> Option<JobSpec> {
        if self.next_id >= self.opts.jobs {
            return None;
        }
        let id = self.next_id;
        self.next_id += 1;
        let submit = self.arrivals.next();
        let weights: Vec<f64> = self.opts.classes.iter().map(|c| c.weight).collect();
        let class = self.opts.classes[pick_weighted(&mut self.rng, &weights)];
        let maps = self.uniform(class.maps).max(1);
        let reduces = self.uniform(class.reduces);
        let f = self.opts.time_scale;
        let mut groups = vec![TaskGroup::maps(self.opts.map_container, self.times(maps, class.map_s * f))];
        if reduces > 0 {
            groups.push(TaskGroup::reduces(self.opts.reduce_container, self.times(reduces, class.reduce_s * f)));
        }
        Some(job(id, format!("{}-{}-{id}", self.opts.prefix, class.name), submit, groups))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = (self.opts.jobs - self.next_id) as usize;
        (left, Some(left))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sojourn_core::Phase;

    /// `sigma=0` gives every task of a phase its class's mean; `time_scale`
    /// multiplies every task time of the same draw and nothing else.
    #[test]
    fn gridmix_sigma_and_time_scale() {
        let draw = |opts: &[(&str, &str)]| -> Vec<JobSpec> {
            let mut o = GridMixOptions::pigmix("test", 40, 2).unwrap();
            for (k, v) in opts {
                o.set(k, v).unwrap();
            }
            GridMixJobs::new(o).collect()
        };
        for j in draw(&[("sigma", "0")]) {
            let bin = PIGMIX_BINS.iter().find(|b| j.name.contains(&format!("-{}-", b.name))).unwrap();
            assert!(j.groups[0].durations_ms.iter().all(|d| *d == (bin.map_s * 1000.0) as u64), "{}", j.name);
            assert!(j.groups[1].durations_ms.iter().all(|d| *d == (bin.reduce_s * 1000.0) as u64), "{}", j.name);
        }
        let (a, b) = (draw(&[]), draw(&[("time_scale", "2")]));
        for (x, y) in a.iter().zip(&b) {
            assert_eq!((x.submit, &x.name), (y.submit, &y.name));
            for (gx, gy) in x.groups.iter().zip(&y.groups) {
                for (dx, dy) in gx.durations_ms.iter().zip(&gy.durations_ms) {
                    assert!(dy.abs_diff(2 * dx) <= 1, "{dx} x 2 vs {dy}");
                }
            }
        }
        let mut o = GridMixOptions::new(1, 1);
        assert!(o.set("sigma", "-0.1").unwrap_err().contains("sigma"));
        assert!(o.set("time_scale", "0").unwrap_err().contains("time_scale"));
    }

    /// The per-bin time keys change only their bin: with `sigma=0` a bin-3
    /// job's tasks take exactly the given means (times `time_scale`, in
    /// either key order) while every other job keeps today's draw with its
    /// times x `time_scale`; the count keys bound the bin's task counts; bad
    /// values name the key.
    #[test]
    fn pigmix_per_bin_keys() {
        let draw = |opts: &[(&str, &str)]| -> Vec<JobSpec> {
            let mut o = GridMixOptions::pigmix("test", 200, 4).unwrap();
            for (k, v) in opts {
                o.set(k, v).unwrap();
            }
            GridMixJobs::new(o).collect()
        };
        let base = draw(&[("sigma", "0")]);
        let bin3 = [("bin3_map_s", "7.5"), ("bin3_reduce_s", "40")];
        let scaled_first: Vec<(&str, &str)> = [("sigma", "0"), ("time_scale", "2")].into_iter().chain(bin3).collect();
        let scaled_last: Vec<(&str, &str)> =
            [("sigma", "0")].into_iter().chain(bin3).chain([("time_scale", "2")]).collect();
        let (a, b) = (draw(&scaled_first), draw(&scaled_last));
        assert_eq!(a, b, "time_scale composes with the per-bin keys in any order");
        let mut n3 = 0;
        for (x, y) in base.iter().zip(&a) {
            assert_eq!((x.submit, &x.name), (y.submit, &y.name));
            assert_eq!(x.groups.len(), y.groups.len());
            for (gx, gy) in x.groups.iter().zip(&y.groups) {
                assert_eq!(gx.durations_ms.len(), gy.durations_ms.len());
            }
            if y.name.contains("-bin3-") {
                n3 += 1;
                assert!(y.groups[0].durations_ms.iter().all(|d| *d == 15_000), "{}", y.name);
                assert!(y.groups[1].durations_ms.iter().all(|d| *d == 80_000), "{}", y.name);
            } else {
                for (gx, gy) in x.groups.iter().zip(&y.groups) {
                    assert!(gx.durations_ms.iter().zip(&gy.durations_ms).all(|(dx, dy)| *dy == 2 * dx), "{}", y.name);
                }
            }
        }
        assert!(n3 > 5, "only {n3} bin-3 jobs drawn");
        let counted = draw(&[("bin3_maps", "60-61"), ("bin3_reduces", "5"), ("bin4_maps", "400-800")]);
        let of = |bin: &'static str| counted.iter().filter(move |j| j.name.contains(bin));
        assert!(of("-bin3-").all(|j| (60..=61).contains(&j.groups[0].durations_ms.len())));
        assert!(of("-bin3-").all(|j| j.groups[1].durations_ms.len() == 5));
        assert!(of("-bin4-").all(|j| (400..=800).contains(&j.groups[0].durations_ms.len())));
        assert!(of("-bin2-").all(|j| (10..=50).contains(&j.groups[0].durations_ms.len())));
        // 0 reduces makes map-only jobs.
        assert!(draw(&[("bin2_reduces", "0")])
            .iter()
            .filter(|j| j.name.contains("-bin2-"))
            .all(|j| j.groups.len() == 1));
        let mut o = GridMixOptions::pigmix("test", 1, 1).unwrap();
        assert!(o.set("bin5_map_s", "3").unwrap_err().contains("bin1, bin2, bin3, bin4"));
        assert!(o.set("bin2_map_s", "0").unwrap_err().contains("bin2_map_s"));
        assert!(o.set("bin2_maps", "9-3").unwrap_err().contains("bin2_maps"));
        assert!(o.set("bin2_maps", "0").unwrap_err().contains("bin2_maps"));
        assert!(o.set("bin2_speed", "1").unwrap_err().contains("unknown key"));
        // GridMix's own classes take the same keys.
        assert!(GridMixOptions::new(1, 1).set("large_reduce_s", "90").is_ok());
    }

    #[test]
    fn gridmix_mix() {
        let jobs: Vec<JobSpec> = GridMixJobs::new(GridMixOptions::new(10_000, 2)).collect();
        let large = jobs.iter().filter(|j| j.name.contains("-large-")).count() as f64 / 1e4;
        let small = jobs.iter().filter(|j| j.name.contains("-small-")).count() as f64 / 1e4;
        assert!((large - 0.1).abs() < 0.01 && (small - 0.6).abs() < 0.02, "{small} {large}");
        for j in &jobs {
            assert_eq!(j.groups.len(), 2);
            assert_eq!(j.groups[1].phase, Phase::Reduce);
            assert_eq!(j.groups[1].resources, Resources::new(2048, 1));
        }
        let small_maps: Vec<u64> =
            jobs.iter().filter(|j| j.name.contains("-small-")).flat_map(|j| j.groups[0].durations_ms.clone()).collect();
        let mean = small_maps.iter().sum::<u64>() as f64 / small_maps.len() as f64;
        assert!((mean - 15_000.0).abs() < 500.0, "small map mean {mean}");
    }

    /// Table 5.1's bin shares, the map-count ranges and the arrival rates
    /// of the HFSP testbed's PigMix workloads.
    #[test]
    fn pigmix_bins_follow_table_5_1() {
        for (w, shares, gap) in [
            ("dev", [0.65, 0.20, 0.10, 0.05], 30.0),
            ("test", [0.30, 0.40, 0.10, 0.20], 60.0),
            ("prod", [0.0, 0.10, 0.60, 0.30], 60.0),
        ] {
            let opts = GridMixOptions::pigmix(w, 5000, 3).expect("known workload");
            let jobs: Vec<JobSpec> = GridMixJobs::new(opts).collect();
            for (b, share) in shares.iter().enumerate() {
                let bin = format!("-bin{}-", b + 1);
                let of_bin: Vec<&JobSpec> = jobs.iter().filter(|j| j.name.contains(&bin)).collect();
                let got = of_bin.len() as f64 / 5000.0;
                assert!((got - share).abs() < 0.02, "{w} bin {}: {got}", b + 1);
                let (lo, hi) = PIGMIX_BINS[b].maps;
                assert!(of_bin.iter().all(|j| (lo as usize..=hi as usize).contains(&j.groups[0].durations_ms.len())));
                assert!(of_bin.iter().all(|j| j.groups[1].durations_ms.len() == 20));
            }
            let mean_gap = jobs.last().unwrap().submit.as_secs_f64() / 5000.0;
            assert!((mean_gap - gap).abs() < gap * 0.05, "{w}: mean gap {mean_gap}");
        }
        assert!(GridMixOptions::pigmix("stage", 1, 1).is_none());
    }
}
