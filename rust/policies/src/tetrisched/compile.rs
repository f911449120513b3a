//! Algorithm 1 (tetrisched.md §1.4, [L245–L295]): a STRL expression to a
//! MILP through good_lp, solved by the configured backend (§8), and the
//! solution decoded into a plan of per-leaf grants (§1.4.6).
//!
//! `gen(e, I)` returns the affine objective `f_e` and pushes constraints;
//! the invariant `f_e = 0 whenever I = 0` is what lets `max` and `sum` both
//! return `Σ f_i` (§1.4.2).

use super::strl::{exact_f64, Leaf, LeafId, PartId, Partitioning, Slice, Strl};
use good_lp::{variable, Constraint, Expression, ProblemVariables, Solution, SolverModel, Variable};
#[cfg(any(feature = "cbc", feature = "highs", feature = "microlp"))]
use good_lp::{WithMipGap, WithTimeLimit};
use std::collections::BTreeMap;

/// The plan-ahead window `[now, now + len)` in slices (§1.4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Window {
    pub now: Slice,
    pub len: u32,
}

impl Window {
    pub fn end(&self) -> Slice {
        self.now.saturating_add(u64::from(self.len))
    }
    pub fn contains(&self, t: Slice) -> bool {
        t >= self.now && t < self.end()
    }
}

/// `avail(x, t)` (§1.4.1): `avail[x][t - now]` units free in partition `x`
/// at each slice of the window.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Supply {
    pub avail: Vec<Vec<u32>>,
}

impl Supply {
    pub fn at(&self, x: PartId, t: Slice, window: Window) -> u32 {
        let Some(i) = t.checked_sub(window.now) else { return 0 };
        self.avail.get(x).and_then(|row| row.get(i as usize)).copied().unwrap_or(0)
    }
    /// The most a partition ever has free in the window (its bound for a
    /// partition variable, A5).
    pub fn cap(&self, x: PartId) -> u32 {
        self.avail.get(x).and_then(|row| row.iter().copied().max()).unwrap_or(0)
    }
}

/// The MILP backends good_lp offers that suit this model (§8.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Backend {
    Cbc,
    Highs,
    Microlp,
}

impl Backend {
    /// The backends compiled into this build (Cargo features `cbc`,
    /// `highs`, `microlp`).
    pub fn available() -> Vec<&'static str> {
        let mut v = Vec::new();
        if cfg!(feature = "cbc") {
            v.push("cbc");
        }
        if cfg!(feature = "highs") {
            v.push("highs");
        }
        if cfg!(feature = "microlp") {
            v.push("microlp");
        }
        v
    }

    pub fn parse(s: &str) -> Option<Backend> {
        match s {
            "cbc" => Some(Backend::Cbc),
            "highs" => Some(Backend::Highs),
            "microlp" => Some(Backend::Microlp),
            _ => None,
        }
    }
}

/// Its floats cross processes exactly ([`exact_f64`]).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SolverOptions {
    pub backend: Backend,
    /// Relative MIP gap; the paper's solver stops within 10% (§2.7, [L114]).
    #[serde(with = "exact_f64")]
    pub mip_gap: f64,
    /// The solver's own time limit in seconds (CBC rounds it up to whole
    /// seconds). The pure core reads no clock: the budget is the backend's.
    #[serde(with = "exact_f64")]
    pub time_limit_s: f64,
    /// A19: `−penalty · (s + dur − now) · units` per leaf, so that among
    /// equal plans the earliest completion wins (no pointless deferral, and
    /// the preferred, faster option over an equally valued slow one).
    #[serde(with = "exact_f64")]
    pub defer_penalty: f64,
}

impl Default for SolverOptions {
    fn default() -> SolverOptions {
        SolverOptions { backend: Backend::Cbc, mip_gap: 0.10, time_limit_s: 3.0, defer_penalty: 1e-6 }
    }
}

/// The model's size (§1.4.5), for regression tests and metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ModelSize {
    pub int_vars: usize,
    pub bin_vars: usize,
    pub cont_vars: usize,
    pub constraints: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Status {
    Optimal,
    TimeLimit,
    GapLimit,
}

/// A decoded solution: the units each leaf holds, per partition.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Plan {
    pub grants: BTreeMap<LeafId, Vec<(PartId, u32)>>,
}

impl Plan {
    pub fn units(&self, leaf: LeafId) -> u32 {
        self.grants.get(&leaf).map_or(0, |g| g.iter().map(|(_, n)| n).sum())
    }
}

/// What a solve returns (and what crosses the host when the solve runs
/// off the scheduler's thread).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Solved {
    pub plan: Plan,
    /// The solver's objective, defer penalty included.
    #[serde(with = "exact_f64")]
    pub objective: f64,
    pub status: Status,
    pub size: ModelSize,
}

/// One leaf's partition variables, to decode the solution with.
#[derive(Default)]
struct LeafVars {
    vars: Vec<(PartId, Variable)>,
}

struct Gen<'a> {
    vars: ProblemVariables,
    cons: Vec<Constraint>,
    /// `used(x, t)` with each variable's width (§1.4.1).
    used: BTreeMap<(PartId, Slice), Vec<(Variable, u32)>>,
    leaves: Vec<LeafVars>,
    size: ModelSize,
    parts: &'a Partitioning,
    supply: &'a Supply,
    window: Window,
    penalty: f64,
    /// Warm start (§2.6): units per leaf from the previous plan.
    warm: &'a BTreeMap<LeafId, u32>,
}

impl Gen<'_> {
    fn binary(&mut self, initial: bool) -> Variable {
        self.size.bin_vars += 1;
        // Initial values only on a warm start: a cold solve gets none.
        if self.warm.is_empty() {
            self.vars.add(variable().binary())
        } else {
            self.vars.add(variable().binary().initial(if initial { 1.0 } else { 0.0 }))
        }
    }

    fn push(&mut self, c: Constraint) {
        self.size.constraints += 1;
        self.cons.push(c);
    }

    /// Whether the subtree holds a warm-started leaf (its indicator then
    /// starts at 1). `next` is the first leaf id of the subtree.
    fn warm_in(&self, e: &Strl, next: LeafId) -> bool {
        let n = e.leaves().len();
        (next..next + n).any(|i| self.warm.get(&i).is_some_and(|u| *u > 0))
    }

    fn gen(&mut self, e: &Strl, ind: Variable) -> Expression {
        match e {
            Strl::NCk(l) | Strl::LnCk(l) => {
                let linear = matches!(e, Strl::LnCk(_));
                let id = self.leaves.len();
                self.leaves.push(LeafVars::default());
                // §1.4.3 (4): a leaf starting outside the window is pruned.
                if !self.window.contains(l.start) || l.k == 0 || l.width == 0 {
                    return Expression::default();
                }
                let span = l.slices_within(self.window.now, self.window.end());
                // A5: 0 ≤ P_x ≤ min(k, |x|), |x| counted in units of this
                // leaf's width at the partition's best slice.
                let bounds: Vec<(PartId, u32)> = self
                    .parts
                    .parts_of(l.set)
                    .iter()
                    .map(|&x| (x, l.k.min(self.supply.cap(x) / l.width)))
                    .filter(|(_, ub)| *ub > 0)
                    .collect();
                let reach: u64 = bounds.iter().map(|(_, ub)| u64::from(*ub)).sum();
                if bounds.is_empty() || (!linear && reach < u64::from(l.k)) {
                    return Expression::default(); // can never be met: f = 0
                }
                let mut warm_left = self.warm.get(&id).copied().unwrap_or(0);
                let mut total = Expression::default();
                for (x, ub) in bounds {
                    let init = warm_left.min(ub);
                    warm_left -= init;
                    self.size.int_vars += 1;
                    let def = variable().integer().min(0).max(ub);
                    let p = self.vars.add(if self.warm.is_empty() { def } else { def.initial(init) });
                    total += p;
                    self.leaves[id].vars.push((x, p));
                    for t in span.clone() {
                        self.used.entry((x, t)).or_default().push((p, l.width));
                    }
                }
                let k = f64::from(l.k);
                let worth = leaf_worth(l, self.window.now, self.penalty);
                if linear {
                    self.push((total.clone() - k * ind).leq(0.0));
                    (worth / k) * total
                } else {
                    self.push((total - k * ind).eq(0.0));
                    worth * ind
                }
            }
            Strl::Sum(children) | Strl::Max(children) => {
                if children.is_empty() {
                    return Expression::default();
                }
                let mut next = self.leaves.len();
                let mut inds = Vec::with_capacity(children.len());
                let mut f = Expression::default();
                let mut isum = Expression::default();
                let mut warmed = false;
                for c in children {
                    // A max realises one child: only the first warm one starts at 1.
                    let w = self.warm_in(c, next) && (matches!(e, Strl::Sum(_)) || !warmed);
                    warmed |= w;
                    next += c.leaves().len();
                    let i = self.binary(w);
                    inds.push(i);
                    isum += i;
                }
                let n = if matches!(e, Strl::Sum(_)) { children.len() as f64 } else { 1.0 };
                self.push((isum - n * ind).leq(0.0));
                for (c, i) in children.iter().zip(inds) {
                    f += self.gen(c, i);
                }
                f
            }
            Strl::Min(children) => {
                if children.is_empty() {
                    return Expression::default();
                }
                // A5: V ≥ 0 keeps the invariant f = 0 when I = 0.
                self.size.cont_vars += 1;
                let v = self.vars.add(variable().min(0.0));
                for c in children {
                    let fi = self.gen(c, ind);
                    self.push((Expression::from(v) - fi).leq(0.0));
                }
                Expression::from(v)
            }
            Strl::Scale(c, s) => *s * self.gen(c, ind),
            Strl::Barrier(c, v) => {
                let f = self.gen(c, ind);
                self.push((*v * ind - f).leq(0.0));
                *v * ind
            }
        }
    }
}

/// Compiles `root` per Algorithm 1 and solves it; decodes and checks the
/// plan. `warm` seeds the solver with units per leaf (§2.6); an empty map
/// is a cold start. Errors are the solver's, or a plan that breaks the
/// supply rows (a backend stopped on time without an incumbent): the
/// caller falls back to the greedy plan (§2.7).
pub fn solve(
    root: &Strl,
    parts: &Partitioning,
    supply: &Supply,
    window: Window,
    opts: &SolverOptions,
    warm: &BTreeMap<LeafId, u32>,
) -> Result<Solved, String> {
    let mut g = Gen {
        vars: ProblemVariables::new(),
        cons: Vec::new(),
        used: BTreeMap::new(),
        leaves: Vec::new(),
        size: ModelSize::default(),
        parts,
        supply,
        window,
        penalty: opts.defer_penalty,
        warm,
    };
    let i_root = g.binary(true); // §1.4.3 (6): the root indicator, warm at 1
    let objective = g.gen(root, i_root);
    // Supply: Σ_{P ∈ used(x,t)} w·P ≤ avail(x,t), only where used is not
    // empty (§6.1 step 7).
    let used = std::mem::take(&mut g.used);
    for ((x, t), ps) in &used {
        let mut row = Expression::default();
        for (p, w) in ps {
            row += f64::from(*w) * *p;
        }
        g.push(row.leq(f64::from(supply.at(*x, *t, window))));
    }
    let Gen { vars, cons, leaves, size, .. } = g;
    let leaf_vars: Vec<Variable> = leaves.iter().flat_map(|l| l.vars.iter().map(|(_, v)| *v)).collect();
    let (values, status, obj) = run_backend(vars, objective, cons, opts, &leaf_vars)?;
    let mut plan = Plan::default();
    let mut k = 0;
    for (id, lv) in leaves.iter().enumerate() {
        let mut g = Vec::new();
        for (x, _) in &lv.vars {
            let n = values.get(k).copied().unwrap_or(0.0);
            k += 1;
            let n = if n.is_finite() { n.round().max(0.0) } else { 0.0 };
            if n > 0.0 {
                g.push((*x, n as u32));
            }
        }
        if !g.is_empty() {
            plan.grants.insert(id, g);
        }
    }
    check(root, &plan, supply, window)?;
    Ok(Solved { plan, objective: obj, status, size })
}

/// The plan must keep every supply row and give each gang all its units or
/// none; a backend stopped without an incumbent fails this.
pub fn check(root: &Strl, plan: &Plan, supply: &Supply, window: Window) -> Result<(), String> {
    let leaves = root.leaves();
    let mut use_at: BTreeMap<(PartId, Slice), u64> = BTreeMap::new();
    for (id, grants) in &plan.grants {
        let Some((l, linear)) = leaves.get(*id) else { return Err(format!("plan names leaf {id} of none")) };
        let units: u32 = grants.iter().map(|(_, n)| n).sum();
        if (!linear && units != l.k) || units > l.k {
            return Err(format!("leaf {id} holds {units} of its k = {}", l.k));
        }
        for (x, n) in grants {
            for t in l.slices_within(window.now, window.end()) {
                *use_at.entry((*x, t)).or_default() += u64::from(*n) * u64::from(l.width);
            }
        }
    }
    for ((x, t), u) in use_at {
        let a = supply.at(x, t, window);
        if u > u64::from(a) {
            return Err(format!("partition {x} at slice {t}: {u} units planned, {a} free"));
        }
    }
    Ok(())
}

type Solve = (Vec<f64>, Status, f64);

fn read<S: Solution>(s: &S, objective: &Expression, leaf_vars: &[Variable], status: Status) -> Solve {
    (leaf_vars.iter().map(|v| s.value(*v)).collect(), status, s.eval(objective))
}

fn status_of(s: good_lp::solvers::SolutionStatus) -> Status {
    match s {
        good_lp::solvers::SolutionStatus::Optimal => Status::Optimal,
        good_lp::solvers::SolutionStatus::TimeLimit => Status::TimeLimit,
        good_lp::solvers::SolutionStatus::GapLimit => Status::GapLimit,
    }
}

#[allow(unused_variables)]
fn run_backend(
    vars: ProblemVariables,
    objective: Expression,
    cons: Vec<Constraint>,
    opts: &SolverOptions,
    leaf_vars: &[Variable],
) -> Result<Solve, String> {
    let gap = opts.mip_gap as f32;
    let problem = vars.maximise(objective.clone());
    match opts.backend {
        #[cfg(feature = "cbc")]
        Backend::Cbc => {
            let mut m = problem.using(good_lp::coin_cbc);
            m.set_log_level(0);
            // Deterministic runs: one thread (the task's rules; §8.3).
            m.set_parameter("threads", "1");
            // CBC 2.10.8 (Debian) aborted the process about every other run
            // of the property test, on models of one partition and a few
            // dozen leaves, with an assertion in OsiClpSolverInterface::crunch
            // under its preprocessing; an abort cannot be caught. With
            // preprocessing off, 5 of 5 runs passed. The LP relaxation of
            // Algorithm 1 is nearly tight (§8.2), so little is lost.
            m.set_parameter("preprocess", "off");
            let m = m.with_mip_gap(gap).map_err(|e| format!("mip_gap: {e}"))?.with_time_limit(opts.time_limit_s);
            let s = m.with_all(cons).solve().map_err(|e| format!("cbc: {e}"))?;
            Ok(read(&s, &objective, leaf_vars, status_of(s.status())))
        }
        #[cfg(feature = "highs")]
        Backend::Highs => {
            let mut m = problem.using(good_lp::highs);
            m.set_verbose(false);
            let m = m.set_threads(1);
            let m = m.with_mip_gap(gap).map_err(|e| format!("mip_gap: {e}"))?.with_time_limit(opts.time_limit_s);
            let s = m.with_all(cons).solve().map_err(|e| format!("highs: {e}"))?;
            Ok(read(&s, &objective, leaf_vars, status_of(s.status())))
        }
        #[cfg(feature = "microlp")]
        Backend::Microlp => {
            let m = problem.using(good_lp::microlp);
            let m = m.with_mip_gap(gap).map_err(|e| format!("mip_gap: {e}"))?.with_time_limit(opts.time_limit_s);
            let s = m.with_all(cons).solve().map_err(|e| format!("microlp: {e}"))?;
            Ok(read(&s, &objective, leaf_vars, status_of(s.status())))
        }
        #[allow(unreachable_patterns)]
        other => Err(format!("solver backend {other:?} is not compiled in (features: {:?})", Backend::available())),
    }
}

/// A leaf's objective coefficient for all its k units: its value less the
/// A19 defer penalty `penalty · (start + dur − now) · k`, which orders
/// equal plans by completion (early starts and fast options win ties). The
/// penalty is a tie-breaker, so it takes at most half the value: uncapped,
/// a long, wide job whose value has decayed to the best-effort floor (A7)
/// is worth less than nothing in every option and is never scheduled, and
/// its app waits forever (the FB-2009 day's 388th job did, under NG and
/// the MILP alike). Capped, the coefficient stays positive and still falls
/// as the leaf ends later.
pub fn leaf_worth(l: &Leaf, now: Slice, penalty: f64) -> f64 {
    let late = (l.start + u64::from(l.dur)).saturating_sub(now) as f64;
    let cost = penalty * late * f64::from(l.k);
    l.value - cost.min(l.value / 2.0)
}
