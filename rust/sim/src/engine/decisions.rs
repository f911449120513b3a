//! Carrying out the core's decisions, as YARN and the AMs would: an
//! allocation starts the AM or a waiting task (or is handed back), a kill
//! loses the task's work and re-queues it, a suspension keeps its remaining
//! work, a resume restarts it on its node. What this brings back to the core
//! goes into its next step (`Sim::core`).

use super::{Ev, Live, Sim, SimError, Task, Work, HELD};
use sojourn_core::{AppId, Ask, ContainerId, Decision, Event, NodeId, Outcome, PreemptMode, Priority, Resources, Time};

impl<'a> Sim<'a> {
    pub(super) fn carry_out(&mut self, decisions: &mut Vec<Decision>) -> Result<(), SimError> {
        for d in decisions.drain(..) {
            match d {
                // A gang's members are all one app's, so they start together
                // or are refused together (its app finished) here.
                Decision::Allocate { container, app, priority, node, resources, .. } => {
                    self.start(container, app, priority, node, resources)?
                }
                Decision::Preempt { container, mode: PreemptMode::Kill } => self.kill(container)?,
                Decision::Preempt { container, mode: PreemptMode::Suspend } => self.suspend(container),
                Decision::Resume { container } => self.resume(container),
                Decision::Reserve { .. } | Decision::Unreserve { .. } => {}
            }
        }
        Ok(())
    }

    pub(super) fn start(
        &mut self,
        container: ContainerId,
        app: AppId,
        priority: Priority,
        node: NodeId,
        resources: Resources,
    ) -> Result<(), SimError> {
        let job = app.0 as usize;
        if self.jobs.get(job).is_none_or(|j| j.is_none()) {
            return self.core(Event::Rejected {
                decision: Decision::Allocate { container, app, priority, node, resources: Resources::ZERO, gang: None },
                reason: "application finished".into(),
                kind: sojourn_core::RefusalKind::Never,
            });
        }
        self.account(job, resources, true);
        // The RM has made the container: confirmed to the core with its next
        // step, as the shim confirms every allocation YARN accepts.
        self.confirmations.push(Event::ContainerStarted { container });
        let Some(j) = self.jobs.get_mut(job).and_then(|j| j.as_mut()) else { return Ok(()) };
        if priority == Priority::AM && j.needs_am {
            j.needs_am = false;
            j.am = Some(container);
            self.containers.insert(container, Live { node, work: Work::Am { job }, resources });
            let launch_ms = self.launches.start(node.0 as usize, self.now, self.now);
            let ready = self.am_tick_after(job, self.now.plus(launch_ms).plus(self.cfg.am_startup_ms));
            self.push(ready, Ev::AmReady { job: app.0 });
            return Ok(());
        }
        // The container goes to the group asking at its priority.
        let spec = &j.spec;
        let task = j
            .running
            .iter_mut()
            .find(|(g, r)| spec.groups[**g].priority == priority && r.waiting() > 0)
            .and_then(|(g, r)| r.pop_front(*g, &spec.groups[*g].durations_ms));
        let Some(task) = task else {
            // More containers than waiting tasks: give it back, as an AM does.
            self.account(job, resources, false);
            return self.core(Event::ContainerCompleted { container, outcome: Outcome::Released });
        };
        let task = self.placed(job, node, task);
        let generation = self.bump_generation();
        // The RM holds the container from now; the task runs once the AM has
        // heard of it and launched it.
        let launch = self.am_acts(job, self.now);
        let launch_ms = self.launches.start(node.0 as usize, launch, self.now);
        if self.waits_for_maps(job, task.group) {
            // Held: it starts its work when the last map ends (`release_held`).
            self.containers.insert(
                container,
                Live {
                    node,
                    work: Work::Task {
                        job,
                        task,
                        finish_at: HELD,
                        generation,
                        suspended: false,
                        suspended_since: Time::ZERO,
                    },
                    resources,
                },
            );
            self.result.task_events += 1;
            return Ok(());
        }
        let finish_at = launch.plus(launch_ms).plus(task.remaining_ms);
        self.containers.insert(
            container,
            Live {
                node,
                work: Work::Task { job, task, finish_at, generation, suspended: false, suspended_since: Time::ZERO },
                resources,
            },
        );
        let report = self.next_grid(node.0 as usize, finish_at);
        self.push(report, Ev::TaskDone { container, generation });
        self.schedule_progress(container, generation);
        self.result.task_events += 1;
        Ok(())
    }

    /// Whether a task of `group` of `job` must wait for earlier groups (the
    /// maps) to finish before its work starts (`reduces_wait_for_maps`).
    pub(super) fn waits_for_maps(&self, job: usize, group: usize) -> bool {
        self.cfg.reduces_wait_for_maps
            && self.jobs.get(job).and_then(|j| j.as_ref()).is_some_and(|j| j.running.keys().any(|g| *g < group))
    }

    /// Starts the work of `job`'s held reduces, its maps being done.
    pub(super) fn release_held(&mut self, job: usize) {
        let mut held: Vec<ContainerId> = self
            .containers
            .iter()
            .filter(|(_, l)| {
                matches!(l.work, Work::Task { job: j, finish_at, suspended: false, .. } if j == job && finish_at == HELD)
            })
            .map(|(c, _)| *c)
            .collect();
        held.sort(); // the map's order is not deterministic
        for container in held {
            let generation = self.bump_generation();
            let now = self.now;
            let Some(Live { node, work: Work::Task { task, finish_at, generation: g, .. }, .. }) =
                self.containers.get_mut(&container)
            else {
                continue;
            };
            *finish_at = now.plus(task.remaining_ms);
            *g = generation;
            let (node, at) = (node.0 as usize, *finish_at);
            let report = self.next_grid(node, at);
            self.push(report, Ev::TaskDone { container, generation });
            self.schedule_progress(container, generation);
        }
    }

    pub(super) fn bump_generation(&mut self) -> u32 {
        self.next_generation = self.next_generation.wrapping_add(1);
        self.next_generation
    }

    /// A killed task loses its work and waits to run again from scratch.
    pub(super) fn kill(&mut self, container: ContainerId) -> Result<(), SimError> {
        self.result.preemptions_kill += 1;
        let live = self.containers.remove(&container);
        if let Some(Live { work: Work::Task { job, .. } | Work::Am { job }, resources, .. }) = live {
            self.account(job, resources, false);
        }
        self.core(Event::ContainerCompleted { container, outcome: Outcome::Preempted })?;
        if let Some(Live { node, work, .. }) = live {
            self.freed(node);
            self.requeue(work)?;
        }
        Ok(())
    }

    /// Puts the work of a killed or lost container back in its job's queue.
    pub(super) fn requeue(&mut self, work: Work) -> Result<(), SimError> {
        match work {
            Work::Task { job, task, finish_at, suspended, .. } => {
                let Some(j) = self.jobs[job].as_ref() else { return Ok(()) };
                let full = task.full_ms(&j.spec).unwrap_or(1).max(1);
                // The work lost is counted in its run on the node it had.
                let ran = self.run_ms(full, &task);
                let done_ms = if suspended {
                    ran.saturating_sub(task.remaining_ms)
                } else {
                    ran.saturating_sub(finish_at.since(self.now))
                };
                self.result.lost_work_ms += done_ms;
                let Some(j) = self.jobs[job].as_mut() else { return Ok(()) };
                let Some(run) = j.running.get_mut(&task.group) else { return Ok(()) };
                // Its next placement decides afresh whether it runs slowed.
                run.push_front(Task { remaining_ms: full, slowed: false, ..task });
                self.send_ask(job, task.group)
            }
            Work::Am { job } => {
                // The AM is asked for again; finished tasks are kept (MapReduce
                // AM recovery), running ones keep running.
                let Some(j) = self.jobs[job].as_mut() else { return Ok(()) };
                j.am = None;
                j.needs_am = true;
                let (app, am) = (j.app, self.cfg.am_container.unwrap_or(Resources::new(1024, 1)));
                self.core(Event::AsksUpdated {
                    app,
                    asks: vec![Ask::new(Priority::AM, am, 1, sojourn_core::Phase::Am)],
                })
            }
        }
    }

    pub(super) fn suspend(&mut self, container: ContainerId) {
        self.result.preemptions_suspend += 1;
        let now = self.now;
        if let Some(Live { work: Work::Task { task, finish_at, suspended, suspended_since, .. }, .. }) =
            self.containers.get_mut(&container)
        {
            if !*suspended {
                // Not launched yet: all of its work is left.
                task.remaining_ms = finish_at.since(now).clamp(1, task.remaining_ms.max(1));
                *suspended = true;
                *suspended_since = now;
            }
        }
    }

    pub(super) fn resume(&mut self, container: ContainerId) {
        let generation = self.bump_generation();
        let now = self.now;
        let held = match self.containers.get(&container) {
            Some(Live { work: Work::Task { job, task, .. }, .. }) => self.waits_for_maps(*job, task.group),
            _ => false,
        };
        let speed = self.cfg.suspended_speed;
        let Some(Live {
            node,
            work: Work::Task { task, finish_at, generation: g, suspended, suspended_since, .. },
            ..
        }) = self.containers.get_mut(&container)
        else {
            return;
        };
        if !*suspended {
            return;
        }
        *suspended = false;
        if speed > 0.0 && !held {
            // The work it did at its throttled share while suspended; it
            // cannot have finished (first-order model, `suspended_speed`).
            let done = (now.since(*suspended_since) as f64 * speed) as u64;
            task.remaining_ms = task.remaining_ms.saturating_sub(done).max(1);
        }
        if held {
            *finish_at = HELD;
            *g = generation;
            return;
        }
        *finish_at = now.plus(task.remaining_ms);
        *g = generation;
        let (node, at) = (node.0 as usize, *finish_at);
        let report = self.next_grid(node, at);
        self.push(report, Ev::TaskDone { container, generation });
        self.schedule_progress(container, generation);
    }
}
