//! The scheduling cycle (tetrisched.md §6.1), in two halves around the
//! solve: [`TetriSched::cycle`] builds the STRL and the supply (steps 1–6),
//! and [`TetriSched::launch`] turns a plan into containers (steps 10–12).
//!
//! Inside the ResourceManager the solve (steps 7–9) runs off the scheduler's
//! lock (§4, the paper's solver beside its proxy scheduler): the cycle hands
//! it to the host with [`Ctx::offload`], keeps what the launch needs in
//! [`InFlight`], and launches when the answer comes back as
//! [`Event::OffloadDone`](sojourn_core::Event::OffloadDone) at a later call
//! (applied as nodes heartbeat). The flight recorder keeps the answer, so a
//! replay gives the same decisions without solving. While a solve runs, due
//! cycles wait for it. A host that runs no offloaded work (the simulator
//! with `--solves inline`, the library's default) gets the solve inline,
//! with the same decisions at the cycle's own time; the simulator's CLI by
//! default answers it from a child process at the same simulated time.

use super::compile::{self, Plan, Solved, Supply, Window};
use super::jobs::{self, Gang, JobStrl};
use super::offloaded::{decode, SolveInput};
use super::strl::{EqSets, Partitioning, Strl};
use super::{greedy, subtract, CycleStats, TetriSched};
use sojourn_core::Ctx;
use std::collections::BTreeMap;

/// A cycle whose solve runs elsewhere: what launching its answer needs.
pub(super) struct InFlight {
    tag: u64,
    gangs: Vec<Gang>,
    jobs: Vec<JobStrl>,
    /// Each job's first leaf id in the root's leaf order.
    first: Vec<usize>,
    root: Strl,
    milp_root: Strl,
    /// How many jobs (the first in queue order) the MILP plans.
    batch: usize,
    sets: EqSets,
    parts: Partitioning,
    supply: Supply,
    window: Window,
    stats: CycleStats,
}

impl TetriSched {
    /// One scheduling cycle (§6.1).
    pub(super) fn cycle(&mut self, ctx: &mut Ctx<'_>) {
        let now = ctx.now;
        if self.in_flight.is_some() {
            // The last cycle's solve is still running: plan again after it.
            self.schedule_next(now);
            return;
        }
        self.dirty = false;
        self.cycles += 1;
        // A new plan replaces the last one's bindings its nodes have not
        // yet taken (they did not heartbeat within a cycle).
        let unapplied = self.map.clear();
        if unapplied > 0 {
            ctx.metrics.count("tetrisched.unapplied_bindings", unapplied);
        }
        let q = self.cfg.quantum_ms;
        // Step 1–2: forget containers that ended; extend under-estimates (A9).
        self.running.retain(|id, _| ctx.cluster().container(*id).is_some());
        for r in self.running.values_mut() {
            if r.est_end <= now {
                r.est_end = now.plus(q.max(r.est_ms / 10));
            }
        }
        let gangs = self.gangs(ctx.cluster());
        let tau0 = now.ms() / q;
        let window = Window { now: tau0, len: self.cfg.window_slices };
        let mut stats = CycleStats { at_ms: now.ms(), gangs: gangs.len(), ..CycleStats::default() };
        if gangs.is_empty() {
            stats.planner = "idle".into();
            self.last = stats;
            self.warm.clear();
            self.next_cycle = None;
            return;
        }
        // Nothing can start now when no node has a free slot, and a plan's
        // only effect is what starts now (its later slices are re-planned by
        // the next cycle): skip the STRL and the solve. A freed slot marks
        // the policy dirty, and with `event_cycles` the next pass plans at
        // once. That solve starts cold: a plan kept across skipped cycles
        // no longer fits the supply, and with it as the warm start CBC
        // aborted (the `crunch` assertion of `warm_start_regression`) in
        // the 400-job heartbeat run of tetrisched.md §4.
        if self.cfg.skip_full_cycles && !ctx.cluster().nodes().any(|n| self.slots(&n.available()) > 0) {
            stats.planner = "full".into();
            ctx.metrics.count("tetrisched.full_cycles", 1);
            self.warm.clear();
            self.last = stats;
            self.schedule_next(now);
            return;
        }
        // Step 4: STRL per gang.
        let mut sets = EqSets::new();
        let jobs: Vec<JobStrl> = gangs.iter().map(|g| jobs::strl(g, &mut sets, tau0, window.len, &self.cfg)).collect();
        stats.hopeless = jobs.iter().filter(|j| j.hopeless).count();
        let root = Strl::Sum(jobs.iter().map(|j| j.expr.clone()).collect());
        // Leaf ranges per job in the root's leaf order.
        let mut first = Vec::with_capacity(jobs.len());
        let mut at = 0;
        for j in &jobs {
            first.push(at);
            at += j.tags.len();
        }
        stats.leaves = at;
        // Step 5–6: dynamic partitioning and supply.
        let parts = Partitioning::atoms(&sets, &root.sets());
        stats.partitions = parts.parts.len();
        let supply = self.supply(ctx.cluster(), &parts, window);
        // §2.8 (6): the MILP takes the first `max_milp_jobs` jobs in queue
        // order; the rest are planned greedily on what it leaves.
        let batch = if self.cfg.no_global { 0 } else { jobs.len().min(self.cfg.max_milp_jobs) };
        let milp_root = Strl::Sum(jobs[..batch].iter().map(|j| j.expr.clone()).collect());
        let mut f = InFlight {
            tag: self.cycles,
            gangs,
            jobs,
            first,
            root,
            milp_root,
            batch,
            sets,
            parts,
            supply,
            window,
            stats,
        };
        if self.cfg.no_global {
            f.stats.planner = "greedy".into();
            let plan = greedy(&f.root, &f.parts, &f.supply, window, self.cfg.solver.defer_penalty);
            return self.launch(ctx, f, plan);
        }
        // Step 7–9: the global MILP, warm-started from the last plan (§2.6).
        let mut warm = BTreeMap::new();
        if self.cfg.warm_start {
            for (j, (g, js)) in f.gangs.iter().zip(&f.jobs).enumerate() {
                for (i, (tag, s)) in js.tags.iter().enumerate() {
                    if let Some(u) = self.warm.get(&(g.key, *tag, *s)) {
                        warm.insert(f.first[j] + i, *u);
                    }
                }
            }
        }
        let opts = self.cfg.solver;
        if ctx.can_offload() {
            let input = SolveInput {
                root: f.milp_root.clone(),
                parts: f.parts.clone(),
                supply: f.supply.clone(),
                window,
                opts,
                warm,
            };
            // The input describes itself too, so that the RM can run it in a
            // child process (`offloaded.rs`: a CBC abort must not end the
            // RM); the host builds that description on its own thread.
            ctx.metrics.count("tetrisched.offloaded_solves", 1);
            // The host took the work (the answer arrives as an event); a
            // host that gives it back gets it run here.
            if let Some(back) = ctx.offload(f.tag, Box::new(input)) {
                let answer = decode(&back.work.run());
                return self.solved(ctx, f, answer);
            }
            self.in_flight = Some(f);
            self.schedule_next(now);
            return;
        }
        let answer = compile::solve(&f.milp_root, &f.parts, &f.supply, window, &opts, &warm);
        self.solved(ctx, f, answer);
    }

    /// The answer to an offloaded solve: launch it if it is this cycle's.
    pub(super) fn on_offload_done(&mut self, ctx: &mut Ctx<'_>, tag: u64, result: &serde_json::Value) {
        if self.in_flight.as_ref().is_none_or(|f| f.tag != tag) {
            log::warn!("tetrisched: an answer for solve {tag}, which is not the one running; ignored");
            return;
        }
        if let Some(f) = self.in_flight.take() {
            self.solved(ctx, f, decode(result));
        }
    }

    /// Step 9: the MILP's plan (its leftover jobs planned greedily), or NG
    /// when the solver failed, so that a cycle never launches nothing
    /// because of the solver (§2.7).
    fn solved(&mut self, ctx: &mut Ctx<'_>, mut f: InFlight, answer: Result<Solved, String>) {
        let window = f.window;
        let plan = match answer {
            Ok(s) => {
                f.stats.planner = if f.batch < f.jobs.len() { "milp+greedy".into() } else { "milp".into() };
                f.stats.int_vars = s.size.int_vars;
                f.stats.bin_vars = s.size.bin_vars;
                f.stats.constraints = s.size.constraints;
                f.stats.objective = s.objective;
                ctx.metrics.observe("tetrisched.int_vars", s.size.int_vars as f64);
                let mut plan = s.plan;
                if f.batch < f.jobs.len() {
                    let mut left = f.supply.clone();
                    let milp_leaves = f.milp_root.leaves();
                    for (id, grants) in &plan.grants {
                        if let Some((l, _)) = milp_leaves.get(*id) {
                            subtract(&mut left, l, grants, window);
                        }
                    }
                    let rest = Strl::Sum(f.jobs[f.batch..].iter().map(|j| j.expr.clone()).collect());
                    let g = greedy(&rest, &f.parts, &left, window, self.cfg.solver.defer_penalty);
                    let base = f.first[f.batch];
                    plan.grants.extend(g.grants.into_iter().map(|(id, gr)| (id + base, gr)));
                }
                plan
            }
            Err(e) => {
                ctx.metrics.count("tetrisched.solver_fallbacks", 1);
                f.stats.planner = "fallback".into();
                f.stats.solver_error = Some(e);
                greedy(&f.root, &f.parts, &f.supply, window, self.cfg.solver.defer_penalty)
            }
        };
        self.launch(ctx, f, plan);
    }

    /// Steps 10–12: launch the leaves that start in the cycle's first
    /// slice; keep the rest, tentative, as the next solve's warm start.
    fn launch(&mut self, ctx: &mut Ctx<'_>, f: InFlight, plan: Plan) {
        let InFlight { gangs, jobs, first, root, sets, parts, window, mut stats, .. } = f;
        let q = self.cfg.quantum_ms;
        ctx.metrics.count("tetrisched.cycles", 1);
        let leaves = root.leaves();
        self.warm.clear();
        for (j, (g, js)) in gangs.iter().zip(&jobs).enumerate() {
            for (i, (tag, s)) in js.tags.iter().enumerate() {
                let id = first[j] + i;
                let units = plan.units(id);
                if units == 0 {
                    continue;
                }
                if *s != window.now {
                    self.warm.insert((g.key, *tag, *s), units);
                    continue;
                }
                let Some((leaf, _)) = leaves.get(id) else { continue };
                // The slow option's runtime is σ × the estimate (§3.3).
                let run_ms = if u64::from(leaf.dur) > g.est_ms.div_ceil(q) {
                    (g.est_ms as f64 * self.cfg.slowdown).ceil() as u64
                } else {
                    g.est_ms
                };
                let placed = self.bind(ctx, g, &parts, &plan, id, sets.nodes(leaf.set), run_ms);
                if placed > 0 {
                    stats.launched_gangs += 1;
                    stats.launched_containers += placed as usize;
                }
            }
        }
        ctx.metrics.count("tetrisched.launched_containers", stats.launched_containers as u64);
        self.last = stats;
        self.schedule_next(ctx.now);
    }
}
