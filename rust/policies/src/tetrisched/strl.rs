//! STRL, the Space-Time Request Language (tetrisched.md §1): the typed
//! expression tree, its value semantics as a pure evaluator (§1.2), and the
//! equivalence sets and their dynamic partitioning (§1.3).
//!
//! Time is in absolute slices (§2.1): a leaf's `start` is a slice index and
//! its `dur` a number of slices, and it holds its nodes over the half-open
//! `[start, start + dur)` (§1.4.3 (1), [L237]).

use std::collections::{BTreeMap, BTreeSet};

/// An absolute time-slice index (`now / quantum`).
pub type Slice = u64;
/// An equivalence set's index in [`EqSets`].
pub type SetId = usize;
/// A partition's index in a [`Partitioning`].
pub type PartId = usize;
/// A leaf's index: its position among the leaves of the tree in depth-first,
/// left-to-right order ([`Strl::leaves`]).
pub type LeafId = usize;
/// Which job a leaf belongs to: [legacy]'s `JobExpr` kept as metadata on the
/// leaf rather than as an operator (§1.1).
pub type JobKey = u64;

/// A rigid space-time rectangle: `k` units from the equivalence set `set`,
/// all held over `[start, start + dur)` (§1.1).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Leaf {
    pub job: JobKey,
    pub set: SetId,
    pub k: u32,
    pub start: Slice,
    pub dur: u32,
    #[serde(with = "exact_f64")]
    pub value: f64,
    /// Supply each unit takes. The paper's unit is a whole node (1; A11);
    /// on YARN nodes that hold several containers a unit is a container and
    /// this is its size in slots (`mod.rs`, "Slots").
    pub width: u32,
}

impl Leaf {
    /// The slices the leaf holds its units over, clipped to `[lo, hi)`.
    pub fn slices_within(&self, lo: Slice, hi: Slice) -> std::ops::Range<Slice> {
        let end = self.start.saturating_add(u64::from(self.dur));
        self.start.max(lo)..end.min(hi).max(self.start.max(lo))
    }
}

/// A STRL expression (§1.1 grammar, §1.2 semantics).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Strl {
    /// Gang: all `k` units or nothing, value `v` [L134].
    NCk(Leaf),
    /// Linear: `v · min(n, k) / k` for `n` units [L143], Alg. 1 [L257].
    LnCk(Leaf),
    /// OR: one child realised, the best [L138].
    Max(Vec<Strl>),
    /// AND: every child realised, the worst counts [L145].
    Min(Vec<Strl>),
    /// Aggregation (the cycle's root over all jobs) [L151].
    Sum(Vec<Strl>),
    /// `s · value(e)` [L149].
    Scale(Box<Strl>, #[serde(with = "exact_f64")] f64),
    /// `v` if `value(e) ≥ v`, else 0 [L147].
    Barrier(Box<Strl>, #[serde(with = "exact_f64")] f64),
}

/// Tolerance for `value(e) ≥ v` comparisons of floating values.
pub const EPS: f64 = 1e-6;

impl Strl {
    /// The leaves in depth-first order: `leaves()[i]` has [`LeafId`] `i`.
    /// The flag says whether it is linear (LnCk).
    pub fn leaves(&self) -> Vec<(&Leaf, bool)> {
        let mut out = Vec::new();
        self.collect_leaves(&mut out);
        out
    }

    fn collect_leaves<'a>(&'a self, out: &mut Vec<(&'a Leaf, bool)>) {
        match self {
            Strl::NCk(l) => out.push((l, false)),
            Strl::LnCk(l) => out.push((l, true)),
            Strl::Max(c) | Strl::Min(c) | Strl::Sum(c) => c.iter().for_each(|e| e.collect_leaves(out)),
            Strl::Scale(e, _) | Strl::Barrier(e, _) => e.collect_leaves(out),
        }
    }

    /// The equivalence sets the expression references.
    pub fn sets(&self) -> BTreeSet<SetId> {
        self.leaves().iter().map(|(l, _)| l.set).collect()
    }

    /// The value of a space-time allocation (§1.2): `granted(leaf)` is how
    /// many units of its set the allocation holds over the leaf's whole
    /// interval. Pure: it is how a decoded plan is scored, and the MILP's
    /// objective must equal it at the optimum (§1.4.2's invariant).
    pub fn value(&self, granted: &dyn Fn(LeafId) -> u32) -> f64 {
        let mut next = 0;
        self.value_at(granted, &mut next)
    }

    fn value_at(&self, granted: &dyn Fn(LeafId) -> u32, next: &mut LeafId) -> f64 {
        match self {
            Strl::NCk(l) => {
                let n = granted(*next);
                *next += 1;
                if n >= l.k {
                    l.value
                } else {
                    0.0
                }
            }
            Strl::LnCk(l) => {
                let n = granted(*next);
                *next += 1;
                if l.k == 0 {
                    0.0
                } else {
                    l.value * f64::from(n.min(l.k)) / f64::from(l.k)
                }
            }
            Strl::Max(c) => c.iter().map(|e| e.value_at(granted, next)).fold(0.0, f64::max),
            Strl::Min(c) => {
                let vs: Vec<f64> = c.iter().map(|e| e.value_at(granted, next)).collect();
                vs.into_iter().reduce(f64::min).unwrap_or(0.0)
            }
            Strl::Sum(c) => c.iter().map(|e| e.value_at(granted, next)).sum(),
            Strl::Scale(e, s) => s * e.value_at(granted, next),
            Strl::Barrier(e, v) => {
                if e.value_at(granted, next) >= v - EPS {
                    *v
                } else {
                    0.0
                }
            }
        }
    }
}

/// The equivalence sets of one cycle (§1.3): sets of node indices a job
/// values equally ("any GPU node", "any node of rack r"), interned so that
/// equal sets share an id.
#[derive(Clone, Debug, Default)]
pub struct EqSets {
    sets: Vec<Vec<u32>>,
    ids: BTreeMap<Vec<u32>, SetId>,
}

impl EqSets {
    pub fn new() -> EqSets {
        EqSets::default()
    }

    /// The id of the set of `nodes` (any order, duplicates ignored).
    pub fn intern(&mut self, mut nodes: Vec<u32>) -> SetId {
        nodes.sort_unstable();
        nodes.dedup();
        if let Some(id) = self.ids.get(&nodes) {
            return *id;
        }
        let id = self.sets.len();
        self.sets.push(nodes.clone());
        self.ids.insert(nodes, id);
        id
    }

    pub fn nodes(&self, set: SetId) -> &[u32] {
        self.sets.get(set).map_or(&[], |v| v.as_slice())
    }

    pub fn len(&self) -> usize {
        self.sets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sets.is_empty()
    }
}

/// Disjoint node groups such that every referenced equivalence set is an
/// exact union of them (§1.3, A6).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Partitioning {
    /// The nodes of each partition, ascending.
    pub parts: Vec<Vec<u32>>,
    /// The partitions of each equivalence set, by [`SetId`] (empty for sets
    /// no leaf references).
    pub of_set: Vec<Vec<PartId>>,
}

impl Partitioning {
    /// Dynamic partitioning [L428], [R] of §1.3: a node's signature is the
    /// list of referenced sets it belongs to; nodes with equal signatures
    /// form one partition. These are the atoms of the set system, the
    /// coarsest partitioning in which every set is a union of partitions,
    /// which keeps the partition variables (one per partition per leaf) at
    /// their fewest. Nodes no referenced set holds are left out.
    pub fn atoms(sets: &EqSets, referenced: &BTreeSet<SetId>) -> Partitioning {
        let mut signature: BTreeMap<u32, Vec<SetId>> = BTreeMap::new();
        for &s in referenced {
            for &n in sets.nodes(s) {
                signature.entry(n).or_default().push(s);
            }
        }
        let mut by_sig: BTreeMap<Vec<SetId>, Vec<u32>> = BTreeMap::new();
        for (n, sig) in signature {
            by_sig.entry(sig).or_default().push(n);
        }
        // Partitions in the order of their lowest node, for readable plans.
        let mut atoms: Vec<(Vec<SetId>, Vec<u32>)> = by_sig.into_iter().collect();
        atoms.sort_by_key(|(_, nodes)| nodes.first().copied());
        let mut out = Partitioning { parts: Vec::new(), of_set: vec![Vec::new(); sets.len()] };
        for (sig, nodes) in atoms {
            let id = out.parts.len();
            out.parts.push(nodes);
            for s in sig {
                out.of_set[s].push(id);
            }
        }
        out
    }

    pub fn parts_of(&self, set: SetId) -> &[PartId] {
        self.of_set.get(set).map_or(&[], |v| v.as_slice())
    }
}

/// An `f64` in JSON as the shortest text that parses back to the same bits
/// (a string): serde_json's default number parsing may miss by one ulp, and
/// a solve run in another process must see exactly the numbers the policy
/// built (`offload.rs`). Reads a plain JSON number too.
pub(crate) mod exact_f64 {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{v:?}"))
    }

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Text {
        Text(String),
        Number(f64),
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        match Text::deserialize(d)? {
            Text::Number(v) => Ok(v),
            Text::Text(t) => t.parse().map_err(|_| serde::de::Error::custom(format!("'{t}' is not a number"))),
        }
    }
}
