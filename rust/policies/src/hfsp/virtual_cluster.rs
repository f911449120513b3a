//! The virtual cluster of HFSP (hfsp.md §1.3, §6 A1–A2): one pool of
//! virtual slots per phase type, shared max-min fairly among the phases in
//! the pool. Each phase is a list of virtual tasks (remaining slot-ms); a
//! virtual slot processes one task at rate 1 (× the aging speed). A phase
//! never holds more slots than it has unfinished virtual tasks, and the
//! leftover goes to the others (max-min). Slots are handed out round-robin
//! starting from the phases with the fewest unfinished tasks, then by
//! submission (hfsp.md §7.13); within a phase, the lowest task ids run.
//!
//! Time advances exactly: the interval is split at every virtual task
//! completion and the slots are reallocated there (A2). A phase whose tasks
//! are all done is *virtually done* and gets a finish sequence number
//! (FSPE's late order).
//!
//! A phase's tasks are kept run-length encoded ([`Tasks`]): runs of tasks
//! with equal remaining work, so its memory does not grow with its task
//! count (an ask for 2^31 − 1 containers is one run). Only the running
//! prefix is ever touched, so a phase holds at most about as many runs as
//! it has ever held virtual slots, plus the runs it was created with.

use std::collections::BTreeMap;

/// Virtual tasks in task-id order, run-length encoded: (remaining slot-ms,
/// how many tasks) with adjacent runs of equal work merged. Tasks of no
/// work are not kept.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tasks {
    runs: Vec<(f64, u64)>,
    count: u64,
}

impl Tasks {
    /// `n` tasks of `work` slot-ms each.
    pub fn uniform(work: f64, n: u64) -> Tasks {
        let mut t = Tasks::default();
        t.push(work, n);
        t
    }

    /// Appends `n` tasks of `work` slot-ms each (none if `work` ≤ 0).
    pub fn push(&mut self, work: f64, n: u64) {
        if n == 0 || work.is_nan() || work <= 0.0 {
            return;
        }
        self.count = self.count.saturating_add(n);
        match self.runs.last_mut() {
            Some((w, c)) if *w == work => *c = c.saturating_add(n),
            _ => self.runs.push((work, n)),
        }
    }

    /// How many tasks.
    pub fn len(&self) -> u64 {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// How many runs the tasks take (the memory they hold).
    pub fn runs(&self) -> usize {
        self.runs.len()
    }

    /// The runs, (work, tasks) in task-id order.
    #[cfg(test)]
    pub(crate) fn run_list(&self) -> &[(f64, u64)] {
        &self.runs
    }

    /// Total remaining work (slot-ms).
    pub fn sum(&self) -> f64 {
        self.runs.iter().map(|(w, c)| w * *c as f64).sum()
    }

    /// Multiplies every task's work by `f` (tasks left with no work go).
    pub fn scale(&mut self, f: f64) {
        let old = std::mem::take(self);
        for (w, c) in old.runs {
            self.push(w * f, c);
        }
    }

    /// The least work among the first `r` tasks.
    fn min_of_first(&self, r: usize) -> Option<f64> {
        let mut left = r as u64;
        let mut min: Option<f64> = None;
        for (w, c) in &self.runs {
            if left == 0 {
                break;
            }
            min = Some(min.map_or(*w, |m| m.min(*w)));
            left = left.saturating_sub(*c);
        }
        min
    }

    /// Takes `step` slot-ms off each of the first `r` tasks (a run that
    /// straddles the r-th task splits); tasks left with at most 1e-9 are
    /// done and go. Returns whether any task finished, and the least work
    /// left among the first `r` tasks (infinite if none is left), which is
    /// `min_of_first(r)` afterwards when none finished.
    ///
    /// Called for every running phase at every step of the virtual clock,
    /// so it rewrites the runs it touches in place (a run's successors are
    /// written at or before where it was read, as a step never makes more
    /// runs of one), then adds the straddling run's waiting part and merges
    /// the first untouched run if it has the same work; the runs after that
    /// are already merged.
    pub(crate) fn advance_first(&mut self, r: usize, step: f64) -> (bool, f64) {
        let runs = &mut self.runs;
        let mut left = r as u64;
        let mut any = false;
        let mut least = f64::INFINITY;
        // runs[..written] are the stepped runs, runs[read..] the untouched.
        let (mut read, mut written) = (0, 0);
        let mut waiting_part = None;
        while left > 0 && read < runs.len() {
            let (w, c) = runs[read];
            read += 1;
            let ran = c.min(left);
            left -= ran;
            let rest = w - step;
            if rest > 1e-9 {
                least = least.min(rest);
                if written > 0 && runs[written - 1].0 == rest {
                    runs[written - 1].1 += ran;
                } else {
                    runs[written] = (rest, ran);
                    written += 1;
                }
            } else {
                any |= rest <= 1e-9;
                self.count -= ran;
            }
            if c > ran {
                waiting_part = Some((w, c - ran)); // the last run touched
            }
        }
        if let Some((w, n)) = waiting_part {
            if let Some((lw, lc)) = written.checked_sub(1).map(|i| &mut runs[i]) {
                if *lw == w {
                    *lc += n;
                    waiting_part = None;
                }
            }
        }
        if let Some(&(w, c)) = runs.get(read) {
            let last = match waiting_part.as_mut() {
                Some(part) => Some(part),
                None => written.checked_sub(1).map(|i| &mut runs[i]),
            };
            if let Some((_, lc)) = last.filter(|(lw, _)| *lw == w) {
                *lc += c;
                read += 1;
            }
        }
        match waiting_part {
            Some(part) if written == read => runs.insert(written, part),
            Some(part) => {
                runs[written] = part;
                runs.drain(written + 1..read);
            }
            None if written < read => {
                runs.drain(written..read);
            }
            None => {}
        }
        (any, least)
    }
}

impl FromIterator<f64> for Tasks {
    fn from_iter<I: IntoIterator<Item = f64>>(iter: I) -> Tasks {
        let mut t = Tasks::default();
        for w in iter {
            t.push(w, 1);
        }
        t
    }
}

/// A phase in a pool, identified by the caller's key.
#[derive(Clone, Debug, Default)]
pub struct VPhase {
    /// Remaining work of the unfinished virtual tasks, in task-id order.
    pub tasks: Tasks,
    /// How many of the first `tasks` hold a virtual slot.
    pub running: usize,
    /// Round-robin order key (submission order), after #tasks.
    pub order: u64,
    /// Set when the last virtual task completes.
    pub finish_seq: Option<u64>,
    /// Stepped only when the pool must (see [`Pool::set_lagging`]): its
    /// `tasks` may miss the pool's `lag`.
    pub lagging: bool,
}

impl VPhase {
    /// Remaining virtual size V (slot-ms).
    pub fn size(&self) -> f64 {
        self.tasks.sum()
    }
}

/// One pool of virtual slots (MAP or REDUCE).
#[derive(Clone, Debug, Default)]
pub struct Pool<K: Ord + Copy> {
    pub slots: usize,
    pub phases: BTreeMap<K, VPhase>,
    finish_counter: u64,
    /// Remainder slots go to phases in submission order rather than to the
    /// ones with the fewest tasks (the authors' code's JobID order, D7).
    pub remainders_by_submission: bool,
    /// `next_completion` as the last `advance` left it, until a change of
    /// phases or slots (each goes through `allocate`): the next `advance`
    /// starts from it rather than scanning every phase again.
    next: Option<Option<f64>>,
    /// The steps of the virtual clock the lagging phases have not taken
    /// yet; none of them completes a lagging phase's task.
    lag: Vec<f64>,
    /// The least work left among the lagging phases' running tasks, as
    /// stepping them at every step would leave it (infinite if none runs).
    /// Rounding is monotone, so the least of them minus a step is the least
    /// of each minus that step: one subtraction per step stands for all.
    lagging_least: f64,
    /// How many times the slots were handed out (`allocate`): between two,
    /// every phase keeps its `running` and no task completes, so each V
    /// falls at its own constant rate (order.rs keeps an order on this).
    pub(crate) reallocations: u64,
    /// No phase holds a virtual slot (every `running` is 0), as on a pool
    /// of no slots. Nothing then ages or completes, and a phase comes in
    /// holding none, so `allocate` on a pool of no slots leaves everything
    /// as it is: without this it would rank every phase ever seen (a phase
    /// that never finishes virtually stays) at each phase's arrival, sizing
    /// and real completion.
    idle: bool,
}

impl<K: Ord + Copy> Pool<K> {
    pub fn new(slots: usize) -> Pool<K> {
        Pool {
            slots,
            phases: BTreeMap::new(),
            finish_counter: 0,
            remainders_by_submission: false,
            next: None,
            lag: Vec::new(),
            lagging_least: f64::INFINITY,
            reallocations: 0,
            idle: true,
        }
    }

    /// Adds a phase with these virtual tasks (none: virtually done at once).
    pub fn insert(&mut self, key: K, order: u64, tasks: Tasks) {
        let mut p = VPhase { tasks, running: 0, order, finish_seq: None, lagging: false };
        if p.tasks.is_empty() {
            self.finish_counter += 1;
            p.finish_seq = Some(self.finish_counter);
        }
        self.phases.insert(key, p);
        self.allocate();
    }

    /// Replaces a phase's virtual tasks (the S_i → S_f update), then reallocates.
    pub fn replace_tasks(&mut self, key: K, tasks: Tasks) {
        self.catch_up(); // the new tasks start from now
        if let Some(p) = self.phases.get_mut(&key) {
            if p.finish_seq.is_some() {
                return; // virtually done already: stays done
            }
            p.tasks = tasks;
            if p.tasks.is_empty() {
                self.finish_counter += 1;
                p.finish_seq = Some(self.finish_counter);
            }
        }
        self.allocate();
    }

    pub fn remove(&mut self, key: K) {
        if self.phases.remove(&key).is_some() {
            self.allocate();
        }
    }

    pub fn resize(&mut self, slots: usize) {
        if slots != self.slots {
            self.slots = slots;
            self.allocate();
        }
    }

    /// Whether a phase is stepped only when the pool must: when one of its
    /// tasks completes, when the slots are reallocated, or when its size is
    /// read through [`Pool::size_of`]. For phases whose size nobody reads at
    /// every event (HFSP's phases really done but not virtually done), so a
    /// step of the virtual clock costs one subtraction for all of them. The
    /// outcome is the same as stepping them at every step, bit for bit.
    pub fn set_lagging(&mut self, key: K, lagging: bool) {
        if self.phases.get(&key).is_none_or(|p| p.lagging == lagging) {
            return;
        }
        // All lagging phases miss the same steps.
        self.catch_up();
        if let Some(p) = self.phases.get_mut(&key) {
            p.lagging = lagging;
        }
        self.lagging_least = self.least_of_lagging();
    }

    /// The least work left among the lagging phases' running tasks, from
    /// their tasks (which must be up to date).
    fn least_of_lagging(&self) -> f64 {
        if self.idle {
            return f64::INFINITY;
        }
        self.phases
            .values()
            .filter(|p| p.lagging)
            .filter_map(|p| p.tasks.min_of_first(p.running))
            .fold(f64::INFINITY, f64::min)
    }

    /// Steps the lagging phases through the `lag` (no task of theirs
    /// completes there).
    fn catch_up(&mut self) {
        if self.lag.is_empty() {
            return;
        }
        for p in self.phases.values_mut().filter(|p| p.lagging && p.running > 0) {
            for step in &self.lag {
                p.tasks.advance_first(p.running, *step);
            }
        }
        self.lag.clear();
    }

    /// Remaining virtual size V of a phase (slot-ms), lagging or not.
    pub fn size_of(&self, key: K) -> Option<f64> {
        let p = self.phases.get(&key)?;
        if !p.lagging || self.lag.is_empty() || p.running == 0 {
            return Some(p.size());
        }
        self.tasks_of(key).map(|t| t.sum())
    }

    /// A phase's virtual tasks as of now, lagging or not.
    pub fn tasks_of(&self, key: K) -> Option<Tasks> {
        let p = self.phases.get(&key)?;
        let mut tasks = p.tasks.clone();
        if p.lagging && p.running > 0 {
            for step in &self.lag {
                tasks.advance_first(p.running, *step);
            }
        }
        Some(tasks)
    }

    /// A1: max-min round-robin of the slots over the unfinished phases.
    pub fn allocate(&mut self) {
        self.reallocations += 1;
        self.next = None;
        // The lagging phases' tasks must be current before slots move.
        self.catch_up();
        if self.slots == 0 && self.idle {
            // Every grant is 0 and every phase holds 0 already; nothing
            // runs, so nothing completes.
            self.next = Some(None);
            self.lagging_least = f64::INFINITY;
            return;
        }
        let mut order: Vec<(u64, u64, K)> = self
            .phases
            .iter()
            .filter(|(_, p)| !p.tasks.is_empty())
            .map(|(k, p)| (p.tasks.len(), p.order, *k))
            .collect();
        // Keys are unique, so an unstable sort gives the one order.
        order.sort_unstable();
        for p in self.phases.values_mut() {
            p.running = 0;
        }
        // Water-filling with integer caps, phases by ascending cap: the same
        // grants as the round-robin pass, remainders to the first in order.
        let mut left = self.slots;
        let n = order.len();
        let mut grant = vec![0usize; n];
        for i in 0..n {
            let rest = n - i;
            let fair = left / rest;
            if order[i].0 <= fair as u64 {
                grant[i] = order[i].0 as usize;
                left -= grant[i];
            } else {
                let extra = left - fair * rest;
                let mut uncapped: Vec<usize> = (i..n).collect();
                if self.remainders_by_submission {
                    uncapped.sort_by_key(|&j| order[j].1);
                }
                for (rank, &j) in uncapped.iter().enumerate() {
                    grant[j] = fair + usize::from(rank < extra);
                }
                break;
            }
        }
        let mut granted = 0;
        for ((_, _, k), g) in order.iter().zip(grant) {
            if let Some(p) = self.phases.get_mut(k) {
                p.running = g.min(usize::try_from(p.tasks.len()).unwrap_or(usize::MAX));
                granted |= p.running;
            }
        }
        self.idle = granted == 0;
        self.lagging_least = self.least_of_lagging();
    }

    /// Each phase's virtual slots as a full max-min pass would grant them
    /// now, without the shortcut of an idle pool: what `running` must be.
    #[cfg(test)]
    pub(crate) fn grants_from_scratch(&self) -> BTreeMap<K, usize> {
        let mut fresh = self.clone();
        fresh.idle = false;
        fresh.allocate();
        fresh.phases.iter().map(|(k, p)| (*k, p.running)).collect()
    }

    /// Slot-ms until the next virtual task completion, if any task runs.
    pub fn next_completion(&self) -> Option<f64> {
        if self.idle {
            return None;
        }
        let stepped = self.phases.values().filter(|p| !p.lagging).filter_map(|p| p.tasks.min_of_first(p.running));
        stepped.chain(self.lagging_least.is_finite().then_some(self.lagging_least)).min_by(f64::total_cmp)
    }

    /// When each unfinished phase would finish virtually if no phase came
    /// or changed (slot-ms of work per slot from now; max-min reallocated at
    /// every task completion, as in [`Pool::advance`]). Phases that would
    /// never finish (no slots) are missing.
    pub fn projected_finish(&self) -> BTreeMap<K, f64> {
        let mut sim = self.clone();
        let mut at = 0.0;
        let mut out = BTreeMap::new();
        while let Some(step) = sim.next_completion() {
            at += step;
            for k in sim.advance(step) {
                out.insert(k, at);
            }
        }
        out
    }

    /// A2: advances by `work` slot-ms per running slot, splitting at every
    /// virtual task completion. Returns the phases that became virtually
    /// done, in finish order.
    pub fn advance(&mut self, mut work: f64) -> Vec<K> {
        let mut done = Vec::new();
        let mut next = match self.next.take() {
            Some(n) => n,
            None => self.next_completion(),
        };
        while work > 0.0 {
            let Some(m) = next else { break };
            let step = m.min(work);
            let mut any = false;
            // Without a completion every phase keeps its running tasks, so
            // the least of them is the next completion.
            let mut least: Option<f64> = None;
            // The lagging phases take this step now only if one of their
            // tasks completes in it (the same test `advance_first` makes).
            let lagging_rest = self.lagging_least - step;
            let lagging_done = lagging_rest <= 1e-9;
            if self.lagging_least.is_finite() {
                self.lag.push(step);
                if !lagging_done {
                    self.lagging_least = lagging_rest;
                    least = Some(lagging_rest);
                }
            }
            for (k, p) in self.phases.iter_mut() {
                if p.running == 0 || (p.lagging && !lagging_done) {
                    continue;
                }
                if p.lagging {
                    for s in &self.lag {
                        any |= p.tasks.advance_first(p.running, *s).0;
                    }
                } else {
                    let (finished, l) = p.tasks.advance_first(p.running, step);
                    any |= finished;
                    if l.is_finite() {
                        least = Some(least.map_or(l, |x| x.min(l)));
                    }
                }
                if p.tasks.is_empty() && p.finish_seq.is_none() {
                    self.finish_counter += 1;
                    p.finish_seq = Some(self.finish_counter);
                    done.push(*k);
                }
            }
            if lagging_done {
                self.lag.clear();
            }
            work -= step;
            next = if any {
                self.allocate();
                self.next_completion()
            } else {
                least
            };
        }
        self.next = Some(next);
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// hfsp.md §5.5, derived: 4 slots; A = 8 tasks × 10 s, B = 1 task × 10 s.
    /// B is virtually done at 10 s with V(A) = 50 s; A at 30 s.
    #[test]
    fn max_min_virtual_cluster_example() {
        let mut pool: Pool<u32> = Pool::new(4);
        pool.insert(1, 1, Tasks::uniform(10_000.0, 8));
        pool.insert(2, 2, Tasks::uniform(10_000.0, 1));
        assert_eq!((pool.phases[&1].running, pool.phases[&2].running), (3, 1));
        assert_eq!(pool.advance(10_000.0), vec![2]);
        assert!((pool.phases[&1].size() - 50_000.0).abs() < 1e-6);
        assert_eq!(pool.advance(19_999.0), Vec::<u32>::new());
        assert_eq!(pool.advance(1.0), vec![1]);
    }

    #[test]
    fn round_robin_gives_remainders_to_the_smallest_phases() {
        let mut pool: Pool<u32> = Pool::new(5);
        pool.insert(1, 1, Tasks::uniform(1.0, 10));
        pool.insert(2, 2, Tasks::uniform(1.0, 10));
        pool.insert(3, 3, Tasks::uniform(1.0, 1));
        let r: Vec<usize> = pool.phases.values().map(|p| p.running).collect();
        assert_eq!(r, vec![2, 2, 1]);
        let mut pool: Pool<u32> = Pool::new(2);
        for k in 0..3 {
            pool.insert(k, k as u64, Tasks::uniform(1.0, 4));
        }
        let r: Vec<usize> = pool.phases.values().map(|p| p.running).collect();
        assert_eq!(r, vec![1, 1, 0]);
    }

    /// §7.10: A (1 task × 6 s) and B (4 tasks × 2 s) share 4 slots: B holds
    /// 3, finishes 3 tasks at 2 s and its last at 4 s; A finishes at 6 s.
    /// B has the larger V (8 > 6) but the earlier virtual finish.
    #[test]
    fn projected_virtual_finish_times() {
        let mut pool: Pool<u32> = Pool::new(4);
        pool.insert(1, 1, Tasks::uniform(6000.0, 1));
        pool.insert(2, 2, Tasks::uniform(2000.0, 4));
        assert_eq!(pool.projected_finish(), [(1, 6000.0), (2, 4000.0)].into());
        assert!(pool.phases[&1].size() < pool.phases[&2].size());
    }

    /// An ask for u32::MAX tasks is one run of virtual tasks: its memory
    /// stays bounded as it ages and shares the pool, while its size and
    /// slots are those of as many tasks (max-min: B's 2 tasks take 2 of
    /// 4 slots, A the other 2).
    #[test]
    fn a_huge_phase_is_a_few_runs() {
        let n = u64::from(u32::MAX);
        let mut pool: Pool<u32> = Pool::new(4);
        pool.insert(1, 1, Tasks::uniform(1000.0, n));
        pool.insert(2, 2, Tasks::uniform(1500.0, 2));
        assert_eq!((pool.phases[&1].running, pool.phases[&2].running), (2, 2));
        assert_eq!(pool.phases[&1].size(), 1000.0 * n as f64);
        for _ in 0..10 {
            pool.advance(250.0);
        }
        // A's tasks 1–2 end at 1 s, 3–4 (from 1 s) at 2 s; B ends at 1.5 s
        // and A takes all 4 slots: 5–6 (from 1.5 s) end at 2.5 s, 7–8 run
        // since 2 s. Left: 2 tasks of 0.5 s, then n − 8 untouched.
        assert_eq!(pool.phases[&2].finish_seq, Some(1));
        let a = &pool.phases[&1];
        assert_eq!((a.tasks.len(), a.tasks.runs(), a.running), (n - 6, 2, 4));
        assert_eq!(a.size(), 2.0 * 500.0 + 1000.0 * (n - 8) as f64);
    }

    /// A step rewrites only the running runs, yet a running run that comes
    /// down to the work of the next, waiting run merges with it, so a
    /// phase's runs stay as few as its distinct remaining works; the step
    /// reports the least work left among the running tasks.
    #[test]
    fn a_step_merges_running_tasks_into_the_waiting_run_they_meet() {
        let mut tasks: Tasks = [3000.0, 2000.0, 1000.0, 1000.0].into_iter().collect();
        assert_eq!(tasks.advance_first(2, 1000.0), (false, 1000.0));
        assert_eq!((tasks.runs(), tasks.len(), tasks.sum()), (2, 4, 5000.0));
        assert_eq!(tasks.advance_first(3, 1000.0), (true, 1000.0));
        assert_eq!((tasks.runs(), tasks.len(), tasks.sum()), (1, 2, 2000.0));
    }

    /// The code's JobID order (D7): 3 slots, A (submitted first, 5 tasks)
    /// and B (2 tasks) get one each and the third goes to A, where the
    /// thesis's order gives it to B, the phase with fewer tasks.
    #[test]
    fn remainders_by_submission_order() {
        for (by_submission, want) in [(false, (1, 2)), (true, (2, 1))] {
            let mut pool: Pool<u32> = Pool::new(3);
            pool.remainders_by_submission = by_submission;
            pool.insert(1, 1, Tasks::uniform(1.0, 5));
            pool.insert(2, 2, Tasks::uniform(1.0, 2));
            assert_eq!((pool.phases[&1].running, pool.phases[&2].running), want);
        }
    }
}
