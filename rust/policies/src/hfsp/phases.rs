//! The books of phases and containers (§1.1, §7.3, §7.7): phases appear
//! with their first ask, containers register as (training) tasks, and
//! completions, kills and departed apps update both.

use super::*;

impl Hfsp {
    /// A3: new phases from an app's asks, and task counts.
    pub(super) fn observe_asks(&mut self, ctx: &mut Ctx<'_>, app: AppId) {
        let Some(a) = ctx.cluster().app(app) else { return };
        let submit = a.submit;
        let mut seen: BTreeMap<Kind, (u32, Option<u64>)> = BTreeMap::new();
        for s in a.asks.values() {
            if let Some(k) = Kind::of(s.ask.phase) {
                let e = seen.entry(k).or_insert((0, None));
                e.0 = e.0.saturating_add(s.outstanding);
                e.1 = e.1.or(s.ask.est_task_ms);
            }
        }
        for (kind, (outstanding, est)) in seen {
            let key = (app, kind);
            match self.phases.get_mut(&key) {
                Some(p) => {
                    // An app that asks again after its phase completed
                    // revives it (not MapReduce's way, but any AM may).
                    let revived = p.real_done && outstanding > 0;
                    if revived {
                        p.real_done = false;
                    }
                    let live = u32::try_from(p.live.len()).unwrap_or(u32::MAX);
                    p.n = p.n.max(outstanding.saturating_add(live).saturating_add(p.finished));
                    if outstanding == 0 {
                        p.locality_wait = None; // nothing waits for locality
                    }
                    if revived {
                        self.pools[kind as usize].set_lagging(key, false);
                        self.refile(key);
                    }
                    self.refile_training(key);
                }
                None if outstanding > 0 => self.create_phase(key, submit, outstanding, est),
                None => {}
            }
        }
    }

    pub(super) fn create_phase(&mut self, key: Key, submit: Time, n: u32, est: Option<u64>) {
        self.seq += 1;
        let tiny = n < self.cfg.tiny;
        let k = key.1 as usize;
        let sbar = match (self.cfg.use_ask_estimates, est) {
            (true, Some(e)) => e as f64,
            _ => self.mean_task_ms(key.1),
        };
        let task = self.cfg.xi * sbar;
        if !tiny {
            self.pools[k].insert(key, self.seq, Tasks::uniform(task, n.into()));
        }
        let training = !tiny && self.cfg.t > 0;
        let s_initial = if tiny { 0.0 } else { n as f64 * task };
        if training {
            self.in_training.insert((s_initial.to_bits(), self.seq, key));
        }
        self.phases.insert(
            key,
            PhaseState {
                submit,
                seq: self.seq,
                n,
                tiny,
                finished: 0,
                finished_ms: 0,
                finished_since_sort_ms: 0,
                training,
                train_started: 0,
                train_samples: Vec::new(),
                s_initial,
                s_final: None,
                task_estimate: None,
                real_done: false,
                live: BTreeSet::new(),
                train_reporting: BTreeSet::new(),
                locality_wait: None,
            },
        );
        self.refile(key);
        self.refile_training(key);
    }

    /// s̄ for S_i (§2.3): the task-weighted mean task time of the completed
    /// phases of the type; with `initial_mean=queued` (D2), the mean per-task
    /// estimate of the trained phases of the type still in the queue, rounded
    /// up to the ms. s0 when there is none.
    pub(super) fn mean_task_ms(&self, kind: Kind) -> f64 {
        if self.cfg.initial_from_queue {
            let trained: Vec<f64> = self
                .phases
                .iter()
                .filter(|(k, p)| k.1 == kind && !p.real_done && !p.tiny)
                .filter_map(|(_, p)| p.task_estimate)
                .collect();
            if trained.is_empty() {
                return self.cfg.s0_ms;
            }
            return (trained.iter().sum::<f64>() / trained.len() as f64).ceil();
        }
        let (ms, tasks) = self.history[kind as usize];
        if tasks > 0 {
            ms / tasks as f64
        } else {
            self.cfg.s0_ms
        }
    }

    /// Training tasks still to start for a phase.
    pub(super) fn training_wanted(&self, key: Key) -> u32 {
        let p = &self.phases[&key];
        if !p.training {
            return 0;
        }
        self.cfg.t.min(p.n).saturating_sub(p.train_started)
    }

    pub(super) fn register(&mut self, ctx: &mut Ctx<'_>, key: Key, cid: ContainerId) {
        let training = self.training_wanted(key) > 0;
        let now = ctx.now;
        if let Some(p) = self.phases.get_mut(&key) {
            p.live.insert(cid);
            if p.training {
                self.sampling.insert(key);
            }
            if training {
                p.train_started += 1;
                ctx.metrics.count("training_tasks", 1);
            }
        }
        self.refile_training(key);
        if training {
            self.train_running[key.1 as usize] += 1;
            if self.cfg.delta_ms > 0 {
                self.timers.set(now, Time(now.0 + self.cfg.delta_ms), Timer::Delta);
            }
        }
        let (node, resources) =
            ctx.cluster().container(cid).map_or((NodeId(0), Resources::ZERO), |c| (c.node, c.resources));
        let ci = CInfo {
            key,
            training,
            started: now,
            before_ms: 0,
            since: Some(now),
            sort_finished: None,
            node,
            resources,
            preempting: false,
        };
        self.containers.insert(cid, ci);
        self.reindex(cid);
    }

    /// Re-reads a container's service bookkeeping after a suspend, resume
    /// or kill decision, or a driver's rejection of one.
    pub(crate) fn sync(&mut self, cluster: &Cluster, cid: ContainerId) {
        if let (Some(ci), Some(c)) = (self.containers.get_mut(&cid), cluster.container(cid)) {
            ci.before_ms = c.attained_before_ms;
            ci.since = c.running_since;
            ci.preempting = c.preempting;
        }
        self.reindex(cid);
    }

    /// Files a container in the preemption index after any change to it.
    pub(crate) fn reindex(&mut self, cid: ContainerId) {
        match self.containers.get(&cid) {
            Some(ci) => {
                self.index.file(cid, ci);
                // Suspended now, maybe: something to place (resume).
                self.mark_placeable(ci.key);
            }
            None => self.index.remove(cid),
        }
    }

    /// Forgets a container.
    pub(super) fn drop_container(&mut self, cid: ContainerId) -> Option<CInfo> {
        self.index.remove(cid);
        let ci = self.containers.remove(&cid)?;
        if let Some(p) = self.phases.get_mut(&ci.key) {
            p.train_reporting.remove(&cid);
        }
        Some(ci)
    }

    /// A phase's real completion (A7): history, and removal once virtually done.
    pub(super) fn check_done(&mut self, key: Key, cluster: &Cluster, app_gone: bool) {
        let Some(p) = self.phases.get(&key) else { return };
        if p.real_done {
            return;
        }
        let done = app_gone || (p.live.is_empty() && p.finished >= p.n && Self::pending(cluster, key).0 == 0);
        if !done {
            return;
        }
        let k = key.1 as usize;
        let p = self.phases.get_mut(&key).expect("checked");
        p.real_done = true;
        p.training = false;
        self.sampling.remove(&key);
        self.in_training.remove(&(p.s_initial.to_bits(), p.seq, key));
        self.train_wanting[k].remove(&(p.s_initial.to_bits(), p.seq, key));
        if p.finished > 0 && !app_gone {
            self.history[k].0 += p.finished_ms as f64;
            self.history[k].1 += p.finished as u64;
        }
        let virtually_done = self.pools[k].phases.get(&key).is_none_or(|v| v.finish_seq.is_some());
        if virtually_done {
            self.pools[k].remove(key);
            self.phases.remove(&key);
        } else {
            // Nothing ranks it any more: only its completion matters.
            self.pools[k].set_lagging(key, true);
        }
        self.refile(key);
    }

    pub(super) fn on_completed(&mut self, ctx: &mut Ctx<'_>, cid: ContainerId, outcome: Outcome) {
        let Some(ci) = self.drop_container(cid) else { return };
        let attained = ci.attained(ctx.now);
        let k = ci.key.1 as usize;
        if ci.training {
            self.train_running[k] = self.train_running[k].saturating_sub(1);
        }
        if let Some(p) = self.phases.get_mut(&ci.key) {
            p.live.remove(&cid);
            if outcome == Outcome::Finished {
                p.finished += 1;
                p.finished_ms += attained;
                p.finished_since_sort_ms += ci.since_sort(ctx.now);
                if ci.training && p.training {
                    p.train_samples.push(attained as f64);
                    self.sample_ready.insert(ci.key);
                }
            } else if ci.training && p.training {
                // A killed training task is started again as one.
                p.train_started = p.train_started.saturating_sub(1);
            }
        }
        self.refile_training(ci.key);
        self.check_done(ci.key, ctx.cluster(), false);
    }

    pub(super) fn on_app_removed(&mut self, ctx: &mut Ctx<'_>, app: AppId) {
        // Every container of a phase is among its live ones (registered
        // there, left there only as it is dropped).
        let mut gone: Vec<ContainerId> = [Kind::Map, Kind::Reduce]
            .iter()
            .filter_map(|kind| self.phases.get(&(app, *kind)))
            .flat_map(|p| p.live.iter().copied())
            .collect();
        gone.sort_unstable();
        for cid in gone {
            if let Some(ci) = self.drop_container(cid) {
                if ci.training {
                    let k = ci.key.1 as usize;
                    self.train_running[k] = self.train_running[k].saturating_sub(1);
                }
            }
        }
        for kind in [Kind::Map, Kind::Reduce] {
            if let Some(p) = self.phases.get_mut(&(app, kind)) {
                p.live.clear();
            }
            self.check_done((app, kind), ctx.cluster(), true);
        }
    }
}
