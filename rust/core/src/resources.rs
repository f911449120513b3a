//! Integer resource vectors (memory in MB, vcores, GPUs as YARN's extended
//! resource type `yarn.io/gpu`) and the arithmetic every policy needs: fit
//! tests, saturating/checked sums, and dominant-resource shares (DRF).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, AddAssign};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Resources {
    pub memory_mb: u64,
    pub vcores: u32,
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub gpus: u32,
}

fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}

/// How a policy compares resource vectors, as YARN's `ResourceCalculator`:
/// `Memory` looks at memory alone (DefaultResourceCalculator), `Dominant`
/// at the dominant share (DominantResourceCalculator).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Calculator {
    Memory,
    Dominant,
}

impl Resources {
    pub const ZERO: Resources = Resources { memory_mb: 0, vcores: 0, gpus: 0 };

    pub const fn new(memory_mb: u64, vcores: u32) -> Resources {
        Resources { memory_mb, vcores, gpus: 0 }
    }
    pub const fn with_gpus(self, gpus: u32) -> Resources {
        Resources { gpus, ..self }
    }

    pub fn is_zero(&self) -> bool {
        self.memory_mb == 0 && self.vcores == 0 && self.gpus == 0
    }

    /// Every component of `self` is at most the same component of `other`.
    pub fn fits_in(&self, other: &Resources) -> bool {
        self.memory_mb <= other.memory_mb && self.vcores <= other.vcores && self.gpus <= other.gpus
    }

    pub fn checked_sub(&self, other: &Resources) -> Option<Resources> {
        Some(Resources {
            memory_mb: self.memory_mb.checked_sub(other.memory_mb)?,
            vcores: self.vcores.checked_sub(other.vcores)?,
            gpus: self.gpus.checked_sub(other.gpus)?,
        })
    }

    pub fn saturating_sub(&self, other: &Resources) -> Resources {
        Resources {
            memory_mb: self.memory_mb.saturating_sub(other.memory_mb),
            vcores: self.vcores.saturating_sub(other.vcores),
            gpus: self.gpus.saturating_sub(other.gpus),
        }
    }

    pub fn times(&self, n: u64) -> Resources {
        Resources {
            memory_mb: self.memory_mb.saturating_mul(n),
            vcores: (self.vcores as u64).saturating_mul(n).min(u32::MAX as u64) as u32,
            gpus: (self.gpus as u64).saturating_mul(n).min(u32::MAX as u64) as u32,
        }
    }

    /// Component-wise minimum.
    pub fn min(&self, other: &Resources) -> Resources {
        Resources {
            memory_mb: self.memory_mb.min(other.memory_mb),
            vcores: self.vcores.min(other.vcores),
            gpus: self.gpus.min(other.gpus),
        }
    }

    /// The resources a suspended container keeps on its node: its memory
    /// (the process image stays resident) and its GPUs, not its vcores.
    pub fn held_while_suspended(&self) -> Resources {
        Resources { memory_mb: self.memory_mb, vcores: 0, gpus: self.gpus }
    }

    /// The largest share of any resource type: DRF's dominant share of `self`
    /// within `total`. Types absent from the cluster are ignored.
    pub fn dominant_share(&self, total: &Resources) -> f64 {
        let mut s: f64 = 0.0;
        if total.memory_mb > 0 {
            s = s.max(self.memory_mb as f64 / total.memory_mb as f64);
        }
        if total.vcores > 0 {
            s = s.max(self.vcores as f64 / total.vcores as f64);
        }
        if total.gpus > 0 {
            s = s.max(self.gpus as f64 / total.gpus as f64);
        }
        s
    }

    /// The share of `self` in `total` as the given calculator measures it.
    pub fn share(&self, total: &Resources, calc: Calculator) -> f64 {
        match calc {
            Calculator::Memory if total.memory_mb > 0 => self.memory_mb as f64 / total.memory_mb as f64,
            Calculator::Memory => 0.0,
            Calculator::Dominant => self.dominant_share(total),
        }
    }

    /// How many copies of `unit` fit into `self` (0 for a zero `unit`
    /// component that `self` cannot hold; unbounded components are skipped).
    pub fn count_fitting(&self, unit: &Resources) -> u64 {
        [
            self.memory_mb.checked_div(unit.memory_mb),
            (self.vcores as u64).checked_div(unit.vcores as u64),
            (self.gpus as u64).checked_div(unit.gpus as u64),
        ]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(0)
    }
}

impl Add for Resources {
    type Output = Resources;
    fn add(self, o: Resources) -> Resources {
        Resources {
            memory_mb: self.memory_mb.saturating_add(o.memory_mb),
            vcores: self.vcores.saturating_add(o.vcores),
            gpus: self.gpus.saturating_add(o.gpus),
        }
    }
}

impl AddAssign for Resources {
    fn add_assign(&mut self, o: Resources) {
        *self = *self + o;
    }
}

impl fmt::Display for Resources {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<memory:{}, vCores:{}", self.memory_mb, self.vcores)?;
        if self.gpus > 0 {
            write!(f, ", gpu:{}", self.gpus)?;
        }
        write!(f, ">")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dominant_share_picks_the_scarcest_type() {
        let total = Resources::new(100_000, 100);
        let a = Resources::new(10_000, 40); // 10% memory, 40% cpu
        assert!((a.dominant_share(&total) - 0.4).abs() < 1e-12);
        assert!((a.share(&total, Calculator::Memory) - 0.1).abs() < 1e-12);
    }

    #[test]
    fn fit_and_subtract() {
        let node = Resources::new(8192, 8);
        let c = Resources::new(3072, 1);
        assert!(c.fits_in(&node));
        assert_eq!(node.count_fitting(&c), 2);
        assert_eq!(c.checked_sub(&node), None);
        assert_eq!(node.checked_sub(&c), Some(Resources::new(5120, 7)));
    }
}
