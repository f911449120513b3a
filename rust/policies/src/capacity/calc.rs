//! Resource arithmetic as YARN's `ResourceCalculator` does it. Limits,
//! shares and preemption targets are computed on [`V`], a float vector
//! (memory MB, vcores, GPUs) that may go negative in intermediate steps as
//! YARN's `Resources.subtract` does; [`Calc`] compares vectors the way the
//! configured calculator does: `memory` (DefaultResourceCalculator) looks
//! at memory alone, `dominant` (DominantResourceCalculator) at the dominant
//! share of the cluster, with component-wise fit tests.

use sojourn_core::{Calculator, Resources};
use std::cmp::Ordering;

/// A resource vector in floats: memory (MB), vcores, GPUs.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct V {
    pub mem: f64,
    pub cpu: f64,
    pub gpu: f64,
}

impl From<Resources> for V {
    fn from(r: Resources) -> V {
        V { mem: r.memory_mb as f64, cpu: r.vcores as f64, gpu: r.gpus as f64 }
    }
}

impl V {
    pub const ZERO: V = V { mem: 0.0, cpu: 0.0, gpu: 0.0 };

    fn map(self, f: impl Fn(f64) -> f64) -> V {
        V { mem: f(self.mem), cpu: f(self.cpu), gpu: f(self.gpu) }
    }
    fn zip(self, o: V, f: impl Fn(f64, f64) -> f64) -> V {
        V { mem: f(self.mem, o.mem), cpu: f(self.cpu, o.cpu), gpu: f(self.gpu, o.gpu) }
    }

    pub fn add(self, o: V) -> V {
        self.zip(o, |a, b| a + b)
    }
    pub fn sub(self, o: V) -> V {
        self.zip(o, |a, b| a - b)
    }
    pub fn scale(self, f: f64) -> V {
        self.map(|a| a * f)
    }
    /// Component-wise minimum.
    pub fn cmin(self, o: V) -> V {
        self.zip(o, f64::min)
    }
    /// Negative components set to zero.
    pub fn clamp0(self) -> V {
        self.map(|a| a.max(0.0))
    }
    pub fn floor(self) -> V {
        self.map(f64::floor)
    }
    pub fn ceil(self) -> V {
        self.map(f64::ceil)
    }
    /// `divideAndCeil`: each component divided by `n`, rounded up.
    pub fn ceil_div(self, n: f64) -> V {
        if n <= 0.0 {
            return self;
        }
        self.map(|a| (a / n).ceil())
    }
    /// Each component rounded down to a multiple of `step`'s (a zero step
    /// component leaves it as it is).
    pub fn floor_to(self, step: V) -> V {
        self.zip(step, |a, s| if s > 0.0 { (a / s).floor() * s } else { a })
    }
    /// Each component rounded up to a multiple of `step`'s.
    pub fn ceil_to(self, step: V) -> V {
        self.zip(step, |a, s| if s > 0.0 { (a / s).ceil() * s } else { a })
    }
    pub fn is_zero(self) -> bool {
        self.mem == 0.0 && self.cpu == 0.0 && self.gpu == 0.0
    }
}

/// Compares vectors as the configured calculator does, relative to the
/// cluster's total (`total`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Calc {
    pub kind: Calculator,
    pub total: V,
}

fn part(a: f64, t: f64) -> f64 {
    if t > 0.0 {
        a / t
    } else {
        0.0
    }
}

impl Calc {
    pub fn new(kind: Calculator, total: Resources) -> Calc {
        Calc { kind, total: V::from(total) }
    }

    /// The shares of each resource type, largest first (types the cluster
    /// lacks count as zero).
    fn shares(&self, a: V) -> [f64; 3] {
        let mut s = [part(a.mem, self.total.mem), part(a.cpu, self.total.cpu), part(a.gpu, self.total.gpu)];
        s.sort_by(|x, y| y.total_cmp(x));
        s
    }

    /// `a`'s share of the cluster: memory share, or dominant share.
    pub fn ratio(&self, a: V) -> f64 {
        match self.kind {
            Calculator::Memory => part(a.mem, self.total.mem),
            Calculator::Dominant => self.shares(a)[0],
        }
    }

    /// YARN's `Resources.divide(rc, cluster, a, b)`: `a / b` in the
    /// calculator's measure, 0 when `b` is nothing.
    pub fn divide(&self, a: V, b: V) -> f64 {
        match self.kind {
            Calculator::Memory => part(a.mem, b.mem),
            Calculator::Dominant => part(self.ratio(a), self.ratio(b)),
        }
    }

    pub fn cmp(&self, a: V, b: V) -> Ordering {
        match self.kind {
            Calculator::Memory => a.mem.total_cmp(&b.mem),
            Calculator::Dominant => {
                let (x, y) = (self.shares(a), self.shares(b));
                x[0].total_cmp(&y[0]).then(x[1].total_cmp(&y[1])).then(x[2].total_cmp(&y[2]))
            }
        }
    }
    pub fn gt(&self, a: V, b: V) -> bool {
        self.cmp(a, b) == Ordering::Greater
    }
    pub fn ge(&self, a: V, b: V) -> bool {
        self.cmp(a, b) != Ordering::Less
    }
    pub fn lt(&self, a: V, b: V) -> bool {
        self.cmp(a, b) == Ordering::Less
    }
    pub fn le(&self, a: V, b: V) -> bool {
        self.cmp(a, b) != Ordering::Greater
    }
    pub fn positive(&self, a: V) -> bool {
        self.gt(a, V::ZERO)
    }
    /// The larger of two vectors in the calculator's order (not
    /// component-wise), as `Resources.max(rc, ...)`.
    pub fn max(&self, a: V, b: V) -> V {
        if self.ge(a, b) {
            a
        } else {
            b
        }
    }
    pub fn min(&self, a: V, b: V) -> V {
        if self.le(a, b) {
            a
        } else {
            b
        }
    }
    /// `isAnyMajorResourceZeroOrNegative`: memory for the memory
    /// calculator, memory or vcores for the dominant one.
    pub fn any_major_nonpositive(&self, a: V) -> bool {
        match self.kind {
            Calculator::Memory => a.mem <= 0.0,
            Calculator::Dominant => a.mem <= 0.0 || a.cpu <= 0.0,
        }
    }
    /// `Resources.fitsIn(rc, small, big)`: memory alone for the memory
    /// calculator, every component for the dominant one.
    pub fn fits(&self, small: V, big: V) -> bool {
        match self.kind {
            Calculator::Memory => small.mem <= big.mem,
            Calculator::Dominant => small.mem <= big.mem && small.cpu <= big.cpu && small.gpu <= big.gpu,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_calculator_ignores_vcores() {
        let c = Calc::new(Calculator::Memory, Resources::new(10_240, 10));
        let a = V::from(Resources::new(2048, 9));
        let b = V::from(Resources::new(3072, 1));
        assert!(c.lt(a, b));
        assert!(c.fits(a, b));
        assert!((c.divide(a, b) - 2.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn dominant_calculator_uses_the_largest_share() {
        let c = Calc::new(Calculator::Dominant, Resources::new(10_240, 10));
        let a = V::from(Resources::new(2048, 9)); // 90% cpu
        let b = V::from(Resources::new(3072, 1)); // 30% memory
        assert!(c.gt(a, b));
        assert!(!c.fits(a, b));
        assert!((c.ratio(a) - 0.9).abs() < 1e-12);
    }

    #[test]
    fn rounding_to_steps() {
        let step = V::from(Resources::new(1024, 1));
        let v = V { mem: 2500.0, cpu: 2.5, gpu: 0.0 };
        assert_eq!(v.floor_to(step), V { mem: 2048.0, cpu: 2.0, gpu: 0.0 });
        assert_eq!(v.ceil_to(step), V { mem: 3072.0, cpu: 3.0, gpu: 0.0 });
        assert_eq!(V::from(Resources::new(5121, 3)).ceil_div(2.0), V { mem: 2561.0, cpu: 2.0, gpu: 0.0 });
    }
}
