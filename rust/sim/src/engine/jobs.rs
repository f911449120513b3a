//! The ApplicationMasters' side: jobs arriving, asking for their task
//! groups phase by phase (with MapReduce's slowstart), tasks finishing and
//! reporting progress, jobs ending; AM heartbeats time when an AM acts.
//! Each container's resources are booked to its job for the fairness index.

use super::{Ev, GroupRun, Job, Live, Sim, SimError, Work};
use crate::run::JobRecord;
use crate::workload::{JobSpec, WorkloadError};
use sojourn_core::{AppId, AppSpec, Ask, ContainerId, Event, Locality, NodeId, Outcome, Priority, Resources, Time};
use std::collections::BTreeMap;

impl<'a> Sim<'a> {
    pub(super) fn pull_next_job(&mut self) -> Result<(), SimError> {
        match self.stream.next() {
            Some(j) => {
                let j = j?;
                if j.submit < self.last_submit {
                    return Err(SimError::Workload(WorkloadError::new(
                        &self.result.workload,
                        0,
                        format!(
                            "job {} is submitted at {} before the previous job ({})",
                            j.id, j.submit, self.last_submit
                        ),
                    )));
                }
                self.last_submit = j.submit;
                self.push(j.submit, Ev::Arrival);
                self.lookahead = Some(j);
            }
            None => self.lookahead = None,
        }
        Ok(())
    }

    pub(super) fn arrive(&mut self) -> Result<(), SimError> {
        let Some(spec) = self.lookahead.take() else { return Ok(()) };
        self.pull_next_job()?;
        match self.dags.admit(spec) {
            Ok(Some(spec)) => self.submit(spec),
            Ok(None) => Ok(()), // waits for a parent
            Err(msg) => Err(SimError::Workload(WorkloadError::new(&self.result.workload, 0, msg))),
        }
    }

    /// Submits a job: its application is added and its AM (or first phase)
    /// asks for room.
    fn submit(&mut self, spec: JobSpec) -> Result<(), SimError> {
        let idx = self.jobs.len();
        let app = AppId(idx as u32);
        let queue_slot = self.fairness.job_opened(&spec.queue);
        self.core(Event::AppAdded(AppSpec {
            app,
            name: spec.name.clone(),
            queue: spec.queue.clone(),
            user: spec.user.clone(),
            priority: spec.priority,
            deadline: spec.deadline,
            value: spec.value,
        }))?;
        self.open_jobs += 1;
        let needs_am = self.cfg.am_container.is_some();
        self.jobs.push(Some(Job {
            spec,
            app,
            running: super::Groups::default(),
            next_group: 0,
            am: None,
            needs_am,
            alloc: Resources::ZERO,
            queue_slot,
        }));
        self.dirty_all = true;
        match self.cfg.am_container {
            Some(am) => self
                .core(Event::AsksUpdated { app, asks: vec![Ask::new(Priority::AM, am, 1, sojourn_core::Phase::Am)] }),
            None => self.start_group(idx, 0),
        }
    }

    pub(super) fn start_next_group(&mut self, job: usize) -> Result<(), SimError> {
        let g = self.jobs[job].as_ref().map_or(0, |j| j.next_group);
        self.start_group(job, g)
    }

    /// Asks for every task of group `g` of `job` (unless asked already), or
    /// finishes the job when no group is left and none runs.
    pub(super) fn start_group(&mut self, job: usize, g: usize) -> Result<(), SimError> {
        let Some(j) = self.jobs[job].as_mut() else { return Ok(()) };
        if g < j.next_group {
            return Ok(()); // started early (slowstart)
        }
        // Skip empty groups.
        let mut g = g;
        while g < j.spec.groups.len() && j.spec.groups[g].durations_ms.is_empty() {
            g += 1;
        }
        j.next_group = (g + 1).min(j.spec.groups.len());
        if g >= j.spec.groups.len() {
            if j.running.is_empty() {
                return self.finish_job(job);
            }
            return Ok(());
        }
        // (A job has at most MAX_TASKS_PER_JOB tasks: the count fits.)
        j.running.insert(g, GroupRun::new(j.spec.groups[g].durations_ms.len() as u32));
        self.send_ask(job, g)
    }

    /// Tells the core how many tasks of group `g` of the job wait.
    pub(super) fn send_ask(&mut self, job: usize, g: usize) -> Result<(), SimError> {
        let Some(j) = self.jobs[job].as_ref() else { return Ok(()) };
        let Some(run) = j.running.get(&g) else { return Ok(()) };
        let grp = &j.spec.groups[g];
        let mut ask = Ask::new(grp.priority, grp.resources, run.waiting() as u32, grp.phase);
        if self.cfg.estimates {
            let n = grp.durations_ms.len().max(1) as u64;
            let exact = grp.durations_ms.iter().sum::<u64>() / n;
            ask.est_task_ms = Some(match self.cfg.estimate_error {
                Some(e) => e.apply(exact, j.spec.id),
                None => exact,
            });
        }
        if !grp.hosts.is_empty() {
            let mut per_node: BTreeMap<NodeId, u32> = BTreeMap::new();
            for index in run.waiting_indices() {
                if let Some(Some(h)) = grp.hosts.get(index as usize) {
                    if let Some(n) = self.node_by_name.get(h) {
                        *per_node.entry(*n).or_insert(0) += 1;
                    }
                }
            }
            ask.locality = per_node.into_iter().map(|(n, c)| Locality::Node(n, c)).collect();
        }
        let app = j.app;
        self.dirty_all = true;
        self.core(Event::AsksUpdated { app, asks: vec![ask] })
    }

    pub(super) fn finish_job(&mut self, job: usize) -> Result<(), SimError> {
        let am = self.jobs[job].as_ref().and_then(|j| j.am);
        let am_live = am.and_then(|am| self.containers.remove(&am));
        if let Some(live) = am_live {
            self.account(job, live.resources, false);
        }
        let Some(j) = self.jobs[job].take() else { return Ok(()) };
        self.fairness.job_closed(j.queue_slot, j.alloc);
        if let Some(am) = j.am {
            if let Some(live) = am_live {
                self.freed(live.node);
            }
            self.core(Event::ContainerCompleted { container: am, outcome: Outcome::Released })?;
        }
        self.core(Event::AppRemoved { app: j.app })?;
        self.open_jobs -= 1;
        let s = &j.spec;
        self.result.jobs.push(JobRecord {
            id: s.id,
            name: s.name.clone(),
            queue: s.queue.clone(),
            user: s.user.clone(),
            submit: s.submit,
            finish: self.now,
            tasks: s.task_count() as u32,
            work_ms: s.work_ms(),
            ideal_ms: s.ideal_ms(),
            mean_task_ms: s.mean_task_ms(),
        });
        self.result.makespan = self.now;
        // Children whose last parent this was are submitted now.
        for mut child in self.dags.finished(s, self.now) {
            child.submit = child.submit.max(self.now);
            self.submit(child)?;
        }
        let done = self.result.jobs.len();
        if done.is_multiple_of(256) {
            if let Some(p) = self.progress.as_mut() {
                p(done);
            }
        }
        Ok(())
    }

    pub(super) fn schedule_progress(&mut self, container: ContainerId, generation: u32) {
        if self.cfg.progress_ms > 0 {
            self.push(self.now.plus(self.cfg.progress_ms), Ev::Progress { container, generation });
        }
    }

    /// A running task's progress: the share of its run time done.
    pub(super) fn report_progress(&mut self, container: ContainerId, generation: u32) -> Result<(), SimError> {
        let Some(Live { work: Work::Task { job, task, finish_at, generation: g, suspended: false, .. }, .. }) =
            self.containers.get(&container)
        else {
            return Ok(());
        };
        if *g != generation || *finish_at <= self.now {
            return Ok(());
        }
        let Some(j) = self.jobs.get(*job).and_then(|j| j.as_ref()) else { return Ok(()) };
        let Some(total) = task.full_ms(&j.spec).map(|t| self.run_ms(t, task)).filter(|t| *t > 0) else {
            return Ok(());
        };
        let left = finish_at.since(self.now);
        let progress = (1.0 - left as f64 / total as f64).clamp(0.0, 1.0);
        self.schedule_progress(container, generation);
        self.core(Event::ContainerProgress { container, progress, sort_finished: None })
    }

    /// Books a container's resources to its job and queue (`add`) or takes
    /// them off, keeping the fairness sums current.
    pub(super) fn account(&mut self, job: usize, res: Resources, add: bool) {
        let Some(j) = self.jobs.get_mut(job).and_then(|j| j.as_mut()) else { return };
        let before = j.alloc;
        j.alloc = if add { j.alloc + res } else { j.alloc.saturating_sub(&res) };
        self.fairness.job_changed(j.queue_slot, before, j.alloc);
    }

    pub(super) fn task_done(&mut self, container: ContainerId, generation: u32) -> Result<(), SimError> {
        let (job, node, group, res) = match self.containers.get(&container) {
            Some(&Live { node, work: Work::Task { job, task, generation: g, suspended: false, .. }, resources })
                if g == generation =>
            {
                (job, node, task.group, resources)
            }
            _ => return Ok(()), // killed, suspended or lost since
        };
        self.containers.remove(&container);
        self.account(job, res, false);
        self.result.task_events += 1;
        self.freed(node);
        self.core(Event::ContainerCompleted { container, outcome: Outcome::Finished })?;
        let Some(j) = self.jobs[job].as_mut() else { return Ok(()) };
        let Some(run) = j.running.get_mut(&group) else { return Ok(()) };
        run.unfinished -= 1;
        let left = run.unfinished;
        if left == 0 {
            j.running.remove(&group);
        }
        // The next group starts when this one is done, or (reduces after
        // maps) once the slowstart share of this one has finished. (The
        // group's size is read last: a job of one group, as every
        // Google-like job, then never reads its group list here, which
        // for jobs scattered over a backlog was a cache miss per task.)
        let next = j.next_group;
        let early = next == group + 1
            && left > 0
            && j.spec.groups.get(next).is_some_and(|g| g.phase == sojourn_core::Phase::Reduce)
            && {
                let total = j.spec.groups[group].durations_ms.len();
                (total - left as usize) as f64 >= self.cfg.slowstart * total as f64
            };
        let all_done = j.running.is_empty();
        if left == 0 && self.cfg.reduces_wait_for_maps {
            self.release_held(job);
        }
        if !(early || (left == 0 && all_done)) {
            return Ok(());
        }
        if self.cfg.am_heartbeat_ms == 0 {
            return self.start_group(job, next);
        }
        let at = self.am_acts(job, self.now);
        // A job's index is its AppId's; a group index is far below 2^32.
        self.push(at, Ev::StartGroup { job: job as u32, group: next as u32 });
        Ok(())
    }

    /// The first heartbeat of `job`'s AM strictly after `t` (`t` itself when
    /// AMs act at once). AM heartbeats fall at submission + k × interval, as
    /// SLS schedules its AM simulators.
    pub(super) fn am_tick_after(&self, job: usize, t: Time) -> Time {
        let hb = self.cfg.am_heartbeat_ms;
        let Some(j) = self.jobs.get(job).and_then(|j| j.as_ref()) else { return t };
        if hb == 0 {
            return t;
        }
        let base = j.spec.submit.0.min(t.0);
        Time(base + ((t.0 - base) / hb + 1) * hb)
    }

    /// When `job`'s AM acts on something the RM did at `t`: the allocate call
    /// at its next heartbeat carries it, and it acts `am_response_lag`
    /// heartbeats later.
    pub(super) fn am_acts(&self, job: usize, t: Time) -> Time {
        self.am_tick_after(job, t).plus(self.cfg.am_heartbeat_ms * u64::from(self.cfg.am_response_lag))
    }
}
