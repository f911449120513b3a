//! The central queue's outstanding asks filed by shape (issue 14: 500,000
//! jobs). The central scheduler meets the queued asks in FIFO order (jobs by
//! submission, then request priority) and, within a round, skips every ask of
//! a shape no open node could take. With thousands of jobs queued and the
//! cluster full, walking the queue to skip them was most of the run; filed by
//! shape, a round looks only at the shapes still placeable, each already in
//! FIFO order, and meets exactly the asks the walk would have tried.
//!
//! A shape is what decides where an ask may go: its capability, its label,
//! whether it is an AM's, and whether it may go anywhere (`plain`: relaxed
//! locality or none). Only plain shapes are ever found hopeless.

use crate::common::IdMap;
use sojourn_core::{App, AppId, Cluster, Decision, Event, Phase, Priority};
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;

/// An ask's place in the central queue: the job's FIFO key, the job, the
/// request priority.
pub(crate) type QueuedAsk = ((u64, u32), AppId, Priority);

/// A job's FIFO key and its filed asks, each with its shape id.
type Filed = ((u64, u32), Vec<(Priority, usize)>);

/// (memory, vcores, gpus, label, AM, plain): what an ask may go where by.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Shape {
    pub memory_mb: u64,
    pub vcores: u32,
    pub gpus: u32,
    pub label: Option<String>,
    pub am: bool,
    pub plain: bool,
}

fn shape_of(app: &App, prio: Priority) -> Option<Shape> {
    let s = app.asks.get(&prio).filter(|s| s.outstanding > 0)?;
    let ask = &s.ask;
    Some(Shape {
        memory_mb: ask.capability.memory_mb,
        vcores: ask.capability.vcores,
        gpus: ask.capability.gpus,
        label: ask.label.clone(),
        am: ask.phase == Phase::Am,
        plain: ask.relax_locality || ask.locality.is_empty(),
    })
}

/// Outstanding asks of the queued jobs, by shape, each shape's in FIFO order.
#[derive(Debug, Default)]
pub(crate) struct AskIndex {
    /// Shape ids (shapes are few: a workload has a handful of task sizes).
    ids: BTreeMap<Shape, usize>,
    shapes: Vec<Shape>,
    /// Per shape id, its outstanding asks in FIFO order.
    by_shape: Vec<BTreeSet<QueuedAsk>>,
    /// Per job, its FIFO key and its filed asks with their shape ids.
    /// Hashed: looked up at every placement, never walked.
    filed: IdMap<AppId, Filed>,
}

impl AskIndex {
    /// Updates the index after the mirror applied `event` (the events that
    /// change a job's asks).
    pub fn observe(&mut self, cluster: &Cluster, event: &Event, fifo_key: fn(&App) -> (u64, u32)) {
        match event {
            Event::AppAdded(spec) => self.refresh(cluster, spec.app, fifo_key),
            Event::AppRemoved { app } => self.forget(*app),
            Event::AsksUpdated { app, .. } => self.refresh(cluster, *app, fifo_key),
            Event::Rejected { decision: Decision::Allocate { app, .. }, .. } => self.refresh(cluster, *app, fifo_key),
            _ => {}
        }
    }

    fn forget(&mut self, app: AppId) {
        if let Some((key, asks)) = self.filed.remove(&app) {
            for (prio, id) in asks {
                self.by_shape[id].remove(&(key, app, prio));
            }
        }
    }

    /// Re-reads `app`'s outstanding asks (after its asks changed or one was
    /// placed). Most placements leave a job's filed asks as they were (one
    /// container fewer at the same priority): then the shape sets, which
    /// hold every queued ask, are not touched at all.
    pub fn refresh(&mut self, cluster: &Cluster, app: AppId, fifo_key: fn(&App) -> (u64, u32)) {
        let Some(a) = cluster.app(app).filter(|a| a.pending_containers > 0) else {
            self.forget(app);
            return;
        };
        let key = fifo_key(a);
        let mut asks = Vec::new();
        for (&prio, _) in a.asks.iter().filter(|(_, s)| s.outstanding > 0) {
            let Some(shape) = shape_of(a, prio) else { continue };
            let id = match self.ids.get(&shape) {
                Some(&id) => id,
                None => {
                    let id = self.shapes.len();
                    self.ids.insert(shape.clone(), id);
                    self.shapes.push(shape);
                    self.by_shape.push(BTreeSet::new());
                    id
                }
            };
            asks.push((prio, id));
        }
        if self.filed.get(&app).is_some_and(|(k, old)| *k == key && *old == asks) {
            return;
        }
        self.forget(app);
        for &(prio, id) in &asks {
            self.by_shape[id].insert((key, app, prio));
        }
        self.filed.insert(app, (key, asks));
    }

    pub fn shape_count(&self) -> usize {
        self.shapes.len()
    }

    pub fn shape(&self, id: usize) -> &Shape {
        &self.shapes[id]
    }

    /// The first ask of shape `id` after `after` in FIFO order.
    pub fn next_of_shape(&self, id: usize, after: Option<QueuedAsk>) -> Option<QueuedAsk> {
        let set = &self.by_shape[id];
        match after {
            None => set.first().copied(),
            Some(a) => set.range((Bound::Excluded(a), Bound::Unbounded)).next().copied(),
        }
    }

    /// Every filed ask with its shape, in FIFO order (for checks).
    #[cfg(test)]
    pub fn all(&self) -> Vec<(QueuedAsk, Shape)> {
        let mut v: Vec<(QueuedAsk, Shape)> = self
            .by_shape
            .iter()
            .enumerate()
            .flat_map(|(id, set)| set.iter().map(move |q| (*q, self.shapes[id].clone())))
            .collect();
        v.sort();
        v
    }

    /// What the index must hold, read from scratch from the mirror.
    #[cfg(test)]
    pub fn recompute(cluster: &Cluster, fifo_key: fn(&App) -> (u64, u32)) -> Vec<(QueuedAsk, Shape)> {
        let mut v: Vec<(QueuedAsk, Shape)> = cluster
            .apps()
            .filter(|a| a.pending_containers > 0)
            .flat_map(|a| a.asks.keys().filter_map(move |&p| shape_of(a, p).map(|s| ((fifo_key(a), a.id(), p), s))))
            .collect();
        v.sort();
        v
    }
}

/// A round's walk over the index: the next ask in FIFO order among the
/// shapes not yet found hopeless, each shape's next ask kept at hand.
pub(crate) struct Walk {
    /// (shape id, its next ask after the cursor) for the shapes still in play.
    heads: Vec<(usize, QueuedAsk)>,
}

impl Walk {
    pub fn new(index: &AskIndex) -> Walk {
        let heads = (0..index.shape_count()).filter_map(|id| index.next_of_shape(id, None).map(|q| (id, q))).collect();
        Walk { heads }
    }

    /// The next ask in FIFO order, and its shape id.
    pub fn next(&self) -> Option<(usize, QueuedAsk)> {
        self.heads.iter().min_by_key(|(_, q)| *q).copied()
    }

    /// Moves shape `id` past `after` (its asks before may have changed).
    pub fn advance(&mut self, index: &AskIndex, id: usize, after: QueuedAsk) {
        if let Some(i) = self.heads.iter().position(|(s, _)| *s == id) {
            match index.next_of_shape(id, Some(after)) {
                Some(q) => self.heads[i].1 = q,
                None => {
                    self.heads.swap_remove(i);
                }
            }
        }
    }

    /// Drops shape `id`: no open node can take it for the rest of the round.
    pub fn drop_shape(&mut self, id: usize) {
        self.heads.retain(|(s, _)| *s != id);
    }
}
