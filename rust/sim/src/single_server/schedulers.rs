//! The disciplines of hfsp.md §4.1 as single-server schedulers, in the shape
//! of schedsim's (hfsp.md §6 A11): the loop tells a scheduler about
//! arrivals and real completions, asks it for the server shares, and asks
//! when its next *internal* event is (a virtual completion, an LAS level
//! merge). Every scheduler keeps its own view of the service it handed out
//! (attained service, estimated remaining size, virtual time), advanced in
//! closed form by [`Scheduler::advance`]: there is no time stepping.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// A float with a total order, for ordered sets keyed by size or time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Key(pub f64);
impl Eq for Key {}
impl PartialOrd for Key {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Key {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&o.0)
    }
}

/// A single-server scheduling discipline. Jobs are dense indices in arrival
/// order (so an index is also the FIFO tie-break).
pub trait Scheduler {
    /// Brings internal state to `now`, given the shares of the last
    /// [`Scheduler::schedule`]. Called by the loop before every event.
    fn advance(&mut self, now: f64);
    /// Job `job` arrives; `est` is the size the scheduler sees (exact for
    /// the size-aware disciplines without `E`), `weight` its PSBS weight.
    fn enqueue(&mut self, now: f64, job: usize, est: f64, weight: f64);
    /// Job `job` has completed really.
    fn dequeue(&mut self, now: f64, job: usize);
    /// `(job, share)` pairs, shares summing to at most 1.
    fn schedule(&mut self, now: f64) -> Vec<(usize, f64)>;
    /// The absolute time of the next internal event, if any.
    fn next_internal(&self) -> Option<f64> {
        None
    }
}

/// FIFO: arrival order, non-preemptive.
#[derive(Default)]
pub struct Fifo {
    queue: VecDeque<usize>,
}
impl Scheduler for Fifo {
    fn advance(&mut self, _now: f64) {}
    fn enqueue(&mut self, _now: f64, job: usize, _est: f64, _w: f64) {
        self.queue.push_back(job);
    }
    fn dequeue(&mut self, _now: f64, job: usize) {
        self.queue.retain(|j| *j != job);
    }
    fn schedule(&mut self, _now: f64) -> Vec<(usize, f64)> {
        self.queue.front().map(|j| vec![(*j, 1.0)]).unwrap_or_default()
    }
}

/// PS: every job in the system gets 1/n.
#[derive(Default)]
pub struct Ps {
    jobs: BTreeSet<usize>,
}
impl Scheduler for Ps {
    fn advance(&mut self, _now: f64) {}
    fn enqueue(&mut self, _now: f64, job: usize, _est: f64, _w: f64) {
        self.jobs.insert(job);
    }
    fn dequeue(&mut self, _now: f64, job: usize) {
        self.jobs.remove(&job);
    }
    fn schedule(&mut self, _now: f64) -> Vec<(usize, f64)> {
        let share = 1.0 / self.jobs.len().max(1) as f64;
        self.jobs.iter().map(|j| (*j, share)).collect()
    }
}

/// LAS (FB, SET): the jobs with the least attained service share the server
/// equally. Jobs are grouped by attained service; only the lowest group is
/// served, and it merges with the next group when it reaches its level.
#[derive(Default)]
pub struct Las {
    /// attained service → jobs at that level (the first entry is served).
    levels: BTreeMap<Key, BTreeSet<usize>>,
    attained: BTreeMap<usize, f64>,
    last: f64,
}
impl Las {
    fn due(&self) -> Option<(f64, f64, f64)> {
        let mut it = self.levels.iter();
        let (lo, group) = it.next()?;
        let (next, _) = it.next()?;
        Some((self.last + (next.0 - lo.0) * group.len() as f64, lo.0, next.0))
    }
}
impl Scheduler for Las {
    fn advance(&mut self, now: f64) {
        let Some((lo, group)) = self.levels.pop_first() else {
            self.last = now;
            return;
        };
        let level = match self.levels.first_key_value() {
            // The merge is due (the loop stops exactly there): snap to the
            // next level so that the groups join exactly.
            Some((next, _)) if self.last + (next.0 - lo.0) * group.len() as f64 <= now => next.0,
            _ => lo.0 + (now - self.last) / group.len() as f64,
        };
        for j in &group {
            self.attained.insert(*j, level);
        }
        self.levels.entry(Key(level)).or_default().extend(group);
        self.last = now;
    }
    fn enqueue(&mut self, now: f64, job: usize, _est: f64, _w: f64) {
        self.last = now;
        self.attained.insert(job, 0.0);
        self.levels.entry(Key(0.0)).or_default().insert(job);
    }
    fn dequeue(&mut self, _now: f64, job: usize) {
        if let Some(a) = self.attained.remove(&job) {
            if let Some(set) = self.levels.get_mut(&Key(a)) {
                set.remove(&job);
                if set.is_empty() {
                    self.levels.remove(&Key(a));
                }
            }
        }
    }
    fn schedule(&mut self, _now: f64) -> Vec<(usize, f64)> {
        match self.levels.first_key_value() {
            Some((_, g)) => g.iter().map(|j| (*j, 1.0 / g.len() as f64)).collect(),
            None => vec![],
        }
    }
    fn next_internal(&self) -> Option<f64> {
        self.due().map(|d| d.0)
    }
}

/// SRPT on the sizes it is given: exact sizes make SRPT, estimates SRPTE.
/// The served job's estimated remaining size decreases as it is served; once
/// it reaches 0 the job is *late* and no arrival (estimate > 0) can preempt
/// it (hfsp.md §4.1). Ties keep the running job, then arrival order.
#[derive(Default)]
pub struct Srpt {
    waiting: BTreeSet<(Key, usize)>,
    /// The served job and its estimated remaining size.
    current: Option<(usize, f64)>,
    last: f64,
}
impl Scheduler for Srpt {
    fn advance(&mut self, now: f64) {
        if let Some((_, rem)) = &mut self.current {
            *rem -= now - self.last;
        }
        self.last = now;
    }
    fn enqueue(&mut self, now: f64, job: usize, est: f64, _w: f64) {
        self.last = now;
        match self.current {
            Some((cur, rem)) if est < rem => {
                self.waiting.insert((Key(rem), cur));
                self.current = Some((job, est));
            }
            Some(_) => {
                self.waiting.insert((Key(est), job));
            }
            None => self.current = Some((job, est)),
        }
    }
    fn dequeue(&mut self, _now: f64, job: usize) {
        if self.current.map(|c| c.0) == Some(job) {
            self.current = self.waiting.pop_first().map(|(k, j)| (j, k.0));
        } else {
            self.waiting.retain(|(_, j)| *j != job);
        }
    }
    fn schedule(&mut self, _now: f64) -> Vec<(usize, f64)> {
        self.current.map(|(j, _)| vec![(j, 1.0)]).unwrap_or_default()
    }
}

/// A virtual GPS (weighted processor-sharing) system, the core of FSP and
/// PSBS (hfsp.md §4.1 "PSBS", §6 A9/A10): a global virtual clock `g` that
/// advances at `1/W` (W = total weight present virtually); a job with
/// estimate `s` and weight `w` arriving at virtual time `g` completes
/// virtually when the clock reaches its tag `g + s/w`.
#[derive(Default)]
pub struct VirtualPs {
    g: f64,
    last: f64,
    weight: f64,
    /// Jobs present virtually, by tag.
    tags: BTreeSet<(Key, usize)>,
    tag_of: BTreeMap<usize, (f64, f64)>,
}
impl VirtualPs {
    /// When the head completes virtually, if anything is present.
    pub fn next_completion(&self) -> Option<f64> {
        let (tag, _) = self.tags.first()?;
        Some(self.last + (tag.0 - self.g) * self.weight)
    }
    /// Advances to `now`, splitting at every virtual completion; returns the
    /// jobs that completed virtually, in order (tag, then id).
    pub fn advance(&mut self, now: f64) -> Vec<usize> {
        let mut done = Vec::new();
        while let Some(due) = self.next_completion() {
            if due > now {
                break;
            }
            // Snap to the head's tag exactly: no drift, no eps.
            let tag = self.tags.first().map(|t| t.0 .0).unwrap_or(self.g);
            self.g = tag.max(self.g);
            self.last = due.max(self.last);
            while let Some(&(t, j)) = self.tags.first() {
                if t.0 > self.g {
                    break;
                }
                self.tags.pop_first();
                let (_, w) = self.tag_of.remove(&j).unwrap_or((0.0, 0.0));
                self.weight -= w;
                done.push(j);
            }
            if self.tags.is_empty() {
                self.weight = 0.0;
            }
        }
        if self.weight > 0.0 {
            self.g += (now - self.last) / self.weight;
        }
        self.last = now;
        done
    }
    pub fn insert(&mut self, job: usize, est: f64, w: f64) {
        let tag = self.g + est / w;
        self.tags.insert((Key(tag), job));
        self.tag_of.insert(job, (tag, w));
        self.weight += w;
    }
    /// Remaining virtual work of `job` (0 once virtually done).
    pub fn remaining(&self, job: usize) -> f64 {
        self.tag_of.get(&job).map(|(t, w)| (t - self.g) * w).unwrap_or(0.0)
    }
    /// Jobs present virtually, in virtual completion order.
    pub fn order(&self) -> impl Iterator<Item = usize> + '_ {
        self.tags.iter().map(|(_, j)| *j)
    }
    pub fn contains(&self, job: usize) -> bool {
        self.tag_of.contains_key(&job)
    }
}

/// What an FSP-family scheduler does with late jobs (virtually done,
/// really not).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LatePolicy {
    /// FSPE (and FSP): one at a time, in the order they became late.
    Serial,
    /// FSPE+PS: all late jobs share the server equally.
    Ps,
    /// PSBS: late jobs share the server in proportion to their weights.
    Weighted,
}

/// FSP / FSPE / FSPE+PS / PSBS. Non-late: serve the really-running job that
/// completes first in the virtual GPS system. Jobs that complete really
/// stay in the virtual system until they complete there (hfsp.md §1.2).
pub struct Fsp {
    virt: VirtualPs,
    late_policy: LatePolicy,
    /// Really running jobs by tag (the head is served when nothing is late).
    running: BTreeSet<(Key, usize)>,
    tag: BTreeMap<usize, f64>,
    /// Late jobs in the order they became late, with their weights.
    late: Vec<(usize, f64)>,
    weight: BTreeMap<usize, f64>,
}
impl Fsp {
    pub fn new(late_policy: LatePolicy) -> Fsp {
        Fsp {
            virt: VirtualPs::default(),
            late_policy,
            running: BTreeSet::new(),
            tag: BTreeMap::new(),
            late: Vec::new(),
            weight: BTreeMap::new(),
        }
    }
    pub fn virtual_system(&self) -> &VirtualPs {
        &self.virt
    }
}
impl Scheduler for Fsp {
    fn advance(&mut self, now: f64) {
        for j in self.virt.advance(now) {
            if let Some(t) = self.tag.remove(&j) {
                self.running.remove(&(Key(t), j));
                self.late.push((j, self.weight[&j]));
            }
        }
    }
    fn enqueue(&mut self, _now: f64, job: usize, est: f64, w: f64) {
        self.virt.insert(job, est, w);
        let t = self.virt.tag_of[&job].0;
        self.running.insert((Key(t), job));
        self.tag.insert(job, t);
        self.weight.insert(job, w);
    }
    fn dequeue(&mut self, _now: f64, job: usize) {
        if let Some(t) = self.tag.remove(&job) {
            self.running.remove(&(Key(t), job));
        }
        self.late.retain(|(j, _)| *j != job);
        self.weight.remove(&job);
    }
    fn schedule(&mut self, _now: f64) -> Vec<(usize, f64)> {
        if self.late.is_empty() {
            return self.running.first().map(|(_, j)| vec![(*j, 1.0)]).unwrap_or_default();
        }
        match self.late_policy {
            LatePolicy::Serial => vec![(self.late[0].0, 1.0)],
            LatePolicy::Ps => {
                let s = 1.0 / self.late.len() as f64;
                self.late.iter().map(|(j, _)| (*j, s)).collect()
            }
            LatePolicy::Weighted => {
                let total: f64 = self.late.iter().map(|(_, w)| w).sum();
                self.late.iter().map(|(j, w)| (*j, w / total)).collect()
            }
        }
    }
    fn next_internal(&self) -> Option<f64> {
        self.virt.next_completion()
    }
}
