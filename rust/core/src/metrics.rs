//! What a policy publishes about its own work, beside the decisions: counters
//! (probes sent, steals, suspensions, quantum ends) and distributions
//! (solver time, per-task queueing delay). A policy records through
//! [`Ctx::metrics`](crate::Ctx::metrics); the core keeps them, and the hosts
//! carry them out: the simulator into its JSON/CSV/HTML outputs and
//! `compare`'s table, the shim onto its MXBean.
//!
//! Names are `snake_case`, without the policy's name (the host adds it).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Counters and distributions by name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counters: BTreeMap<String, u64>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub distributions: BTreeMap<String, Distribution>,
}

impl Metrics {
    /// Adds `by` to the counter `name`.
    pub fn count(&mut self, name: &str, by: u64) {
        match self.counters.get_mut(name) {
            Some(c) => *c = c.saturating_add(by),
            None => {
                self.counters.insert(name.to_string(), by);
            }
        }
    }

    /// Records one value (non-negative; e.g. a delay in ms) of `name`.
    pub fn observe(&mut self, name: &str, value: f64) {
        match self.distributions.get_mut(name) {
            Some(d) => d.record(value),
            None => {
                let mut d = Distribution::default();
                d.record(value);
                self.distributions.insert(name.to_string(), d);
            }
        }
    }

    pub fn counter(&self, name: &str) -> u64 {
        self.counters.get(name).copied().unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.counters.is_empty() && self.distributions.is_empty()
    }

    /// Every figure as one flat `name → value` map: counters as they are,
    /// distributions as `name.count`, `.mean`, `.p50`, `.p90`, `.p99`,
    /// `.max` (what a CSV column, a table row or an MXBean map holds).
    pub fn flat(&self) -> BTreeMap<String, f64> {
        let mut out: BTreeMap<String, f64> = self.counters.iter().map(|(k, v)| (k.clone(), *v as f64)).collect();
        for (k, d) in &self.distributions {
            out.insert(format!("{k}.count"), d.count as f64);
            out.insert(format!("{k}.mean"), d.mean());
            out.insert(format!("{k}.p50"), d.quantile(0.5));
            out.insert(format!("{k}.p90"), d.quantile(0.9));
            out.insert(format!("{k}.p99"), d.quantile(0.99));
            out.insert(format!("{k}.max"), d.max);
        }
        out
    }
}

/// A distribution kept in constant memory per distinct magnitude: count,
/// sum, min, max, and a histogram whose buckets grow by a factor of
/// e^(1/32) (about 3 %), so quantiles are within about 3 % of the truth
/// however many values were recorded.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Distribution {
    pub count: u64,
    pub sum: f64,
    pub min: f64,
    pub max: f64,
    /// Bucket index → values in it (sparse).
    buckets: BTreeMap<u32, u64>,
}

const BUCKETS_PER_E: f64 = 32.0;

impl Distribution {
    pub fn record(&mut self, value: f64) {
        let v = if value.is_finite() { value.max(0.0) } else { 0.0 };
        if self.count == 0 || v < self.min {
            self.min = v;
        }
        if self.count == 0 || v > self.max {
            self.max = v;
        }
        self.count += 1;
        self.sum += v;
        *self.buckets.entry(Self::bucket(v)).or_insert(0) += 1;
    }

    fn bucket(v: f64) -> u32 {
        ((v + 1.0).ln() * BUCKETS_PER_E).floor() as u32
    }

    /// The lower edge of a bucket, back in the values' unit.
    fn lower(b: u32) -> f64 {
        (b as f64 / BUCKETS_PER_E).exp() - 1.0
    }

    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum / self.count as f64
        }
    }

    /// The `q`-quantile (0..=1), to the histogram's precision, within
    /// [min, max].
    pub fn quantile(&self, q: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (b, n) in &self.buckets {
            seen += n;
            if seen >= rank {
                let mid = (Self::lower(*b) + Self::lower(b + 1)) / 2.0;
                return mid.clamp(self.min, self.max);
            }
        }
        self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_add_and_distributions_summarise() {
        let mut m = Metrics::default();
        m.count("probes", 2);
        m.count("probes", 3);
        for v in 1..=1000 {
            m.observe("delay_ms", v as f64);
        }
        assert_eq!(m.counter("probes"), 5);
        let d = &m.distributions["delay_ms"];
        assert_eq!((d.count, d.min, d.max), (1000, 1.0, 1000.0));
        assert!((d.mean() - 500.5).abs() < 1e-9);
        for (q, truth) in [(0.5, 500.0), (0.9, 900.0), (0.99, 990.0)] {
            let got = d.quantile(q);
            assert!((got - truth).abs() / truth < 0.03, "q{q}: {got} vs {truth}");
        }
        let flat = m.flat();
        assert_eq!(flat["probes"], 5.0);
        assert_eq!(flat["delay_ms.count"], 1000.0);
        assert_eq!(flat["delay_ms.max"], 1000.0);
    }

    #[test]
    fn odd_values_are_kept_in_range() {
        let mut d = Distribution::default();
        for v in [f64::NAN, -5.0, 0.0, f64::INFINITY] {
            d.record(v);
        }
        assert_eq!((d.count, d.min, d.max), (4, 0.0, 0.0));
        assert_eq!(d.quantile(0.99), 0.0);
    }
}
