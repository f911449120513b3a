//! Hadoop 1 slot-typed nodes (`--slots MAPS:MAP_MB,REDUCES:REDUCE_MB`): each
//! TaskTracker had so many map slots and so many reduce slots, and a task
//! took one slot of its own type, so a reduce never took room a map could
//! use and vice versa (the HFSP thesis's cluster: 2 map slots of 1 GB and 1
//! reduce slot of 2 GB per node, hfsp.md §5.1). YARN nodes pool memory and
//! vcores instead; the simulator models slots through the resource vector,
//! the same for every policy, without changing any:
//!
//! - a node offers memory M × MAP_MB + R × REDUCE_MB, 2M + 1 vcores and R
//!   GPUs;
//! - a map asks <MAP_MB, 2 vcores, 0 GPUs>, a reduce <REDUCE_MB, 0 vcores,
//!   1 GPU>.
//!
//! GPUs count reduce slots, so at most R reduces fit. Two vcores per map
//! count map slots: M maps leave 1 vcore, too few for another map. That
//! spare vcore is there because policies (fifo's and hfsp's heartbeat
//! loops, `common::node_has_room`) stop offering a node whose free vcores
//! or memory are zero; with one vcore per map and M vcores, a node with
//! full map slots and a free reduce slot would never be offered for the
//! reduce. Memory is the slots' sum, so it is zero only when every slot is
//! taken, and a policy that sizes by memory (hfsp's virtual MAP and REDUCE
//! pools) sees the same node as without slots.
//!
//! There is no ApplicationMaster (Hadoop 1 had a JobTracker), and a task's
//! own container size in the workload is replaced by its slot's.

use super::{JobSpec, TaskGroup};
use sojourn_core::{Phase, Resources};

/// The flag, for error messages.
pub const FLAG: &str = "--slots";

/// A node's map and reduce slots and their sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hadoop1Slots {
    pub maps: u32,
    pub map_mb: u64,
    pub reduces: u32,
    pub reduce_mb: u64,
}

impl Hadoop1Slots {
    /// `MAPS:MAP_MB,REDUCES:REDUCE_MB`, e.g. `2:1024,1:2048`; each count at
    /// least 1 and at most `max_slots`, the node's memory at most `max_mb`.
    pub fn parse(s: &str, max_slots: u32, max_mb: u64) -> Result<Hadoop1Slots, String> {
        let bad = || format!("{FLAG} '{s}' is not MAPS:MAP_MB,REDUCES:REDUCE_MB (e.g. 2:1024,1:2048)");
        let (m, r) = s.split_once(',').ok_or_else(bad)?;
        let pair = |p: &str, kind: &str| -> Result<(u32, u64), String> {
            let (n, mb) = p.split_once(':').ok_or_else(bad)?;
            let n: u32 = n.trim().parse().map_err(|_| bad())?;
            let mb: u64 = mb.trim().parse().map_err(|_| bad())?;
            if !(1..=max_slots).contains(&n) {
                return Err(format!("{FLAG} '{s}': {n} {kind} slots per node, expected 1 to {max_slots}"));
            }
            if !(1..=max_mb).contains(&mb) {
                return Err(format!("{FLAG} '{s}': {kind} slots of {mb} MB, expected 1 to {max_mb}"));
            }
            Ok((n, mb))
        };
        let (maps, map_mb) = pair(m, "map")?;
        let (reduces, reduce_mb) = pair(r, "reduce")?;
        let slots = Hadoop1Slots { maps, map_mb, reduces, reduce_mb };
        let mb = (maps as u64).saturating_mul(map_mb).saturating_add((reduces as u64).saturating_mul(reduce_mb));
        if mb > max_mb {
            return Err(format!("{FLAG} '{s}': a node of {mb} MB, more than the limit of {max_mb} MB"));
        }
        Ok(slots)
    }

    /// What a node offers (see the module's documentation).
    pub fn node(&self) -> Resources {
        let mb = (self.maps as u64) * self.map_mb + (self.reduces as u64) * self.reduce_mb;
        Resources::new(mb, 2 * self.maps + 1).with_gpus(self.reduces)
    }

    /// A map task's ask: its slot's memory and two of the node's vcores.
    pub fn map_task(&self) -> Resources {
        Resources::new(self.map_mb, 2)
    }

    /// A reduce task's ask: its slot's memory and one GPU, no vcores.
    pub fn reduce_task(&self) -> Resources {
        Resources::new(self.reduce_mb, 0).with_gpus(1)
    }

    /// Gives every task of `job` its slot's ask. A job with a task group that
    /// is neither maps nor reduces (an AM, or a non-MapReduce task) has no
    /// slot to run in, and is refused, naming it.
    pub fn apply(&self, job: &mut JobSpec) -> Result<(), String> {
        for g in &mut job.groups {
            g.resources = self.ask(g).ok_or_else(|| {
                format!(
                    "{FLAG}: job {} ('{}') has a {:?} task group; Hadoop 1 slots hold only map and reduce tasks \
                     (use a MapReduce workload, e.g. pigmix or a SWIM trace)",
                    job.id, job.name, g.phase
                )
            })?;
        }
        Ok(())
    }

    fn ask(&self, g: &TaskGroup) -> Option<Resources> {
        match g.phase {
            Phase::Map => Some(self.map_task()),
            Phase::Reduce => Some(self.reduce_task()),
            Phase::Am | Phase::Other => None,
        }
    }

    /// Node-ms of the busier slot pool: every map's duration over M, or
    /// every reduce's over R (a node's M map slots serve M maps at once).
    pub fn demand_node_ms(&self, jobs: &[JobSpec]) -> f64 {
        let (mut maps, mut reduces) = (0u64, 0u64);
        for g in jobs.iter().flat_map(|j| j.groups.iter()) {
            let ms: u64 = g.durations_ms.iter().sum();
            match g.phase {
                Phase::Reduce => reduces = reduces.saturating_add(ms),
                _ => maps = maps.saturating_add(ms),
            }
        }
        (maps as f64 / self.maps as f64).max(reduces as f64 / self.reduces as f64)
    }

    /// For the run's description.
    pub fn describe(&self) -> String {
        format!(
            "{} map x {} MB + {} reduce x {} MB per node (Hadoop 1), no AMs",
            self.maps, self.map_mb, self.reduces, self.reduce_mb
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every (maps, reduces) a node can hold at once, by the fit test the
    /// core places with: exactly the box M × R, whatever the sizes.
    #[test]
    fn a_node_holds_exactly_its_slots() {
        for (maps, reduces, map_mb, reduce_mb) in [(2, 1, 1024, 2048), (1, 3, 4096, 512), (3, 2, 1000, 1000)] {
            let s = Hadoop1Slots { maps, map_mb, reduces, reduce_mb };
            let node = s.node();
            for k in 0..=maps + 2 {
                for l in 0..=reduces + 2 {
                    let used = s.map_task().times(k as u64) + s.reduce_task().times(l as u64);
                    assert_eq!(used.fits_in(&node), k <= maps && l <= reduces, "{s:?}: {k} maps, {l} reduces");
                }
            }
        }
    }

    #[test]
    fn parse_and_refusals() {
        let s = Hadoop1Slots::parse("2:1024,1:2048", 4096, 1 << 20).unwrap();
        assert_eq!(s, Hadoop1Slots { maps: 2, map_mb: 1024, reduces: 1, reduce_mb: 2048 });
        assert_eq!(s.node(), Resources::new(4096, 5).with_gpus(1));
        for (bad, says) in [
            ("2:1024", "is not MAPS:MAP_MB,REDUCES:REDUCE_MB"),
            ("2x1024,1:2048", "is not"),
            ("0:1024,1:2048", "0 map slots per node, expected 1 to 4096"),
            ("2:1024,1:0", "reduce slots of 0 MB"),
            ("2:1048576,1:1", "more than the limit"),
        ] {
            let e = Hadoop1Slots::parse(bad, 4096, 1 << 20).unwrap_err();
            assert!(e.starts_with("--slots") && e.contains(says), "{bad}: {e}");
        }
    }
}
