//! The reqs the policy probes or places, by req and by their slot in the
//! ask views ([`super::views`]). Every queued entry carries its req's slot,
//! so the hot paths (a get-task answered, a probe lost or rejected) index a
//! vector instead of searching an ordered map that, at data-center scale,
//! holds hundreds of thousands of reqs; the ordered map stays for what
//! needs the order (an app's reqs, iteration).

use super::{Req, ReqState};
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default)]
pub(crate) struct ReqTable {
    /// Each req's slot.
    slots: BTreeMap<Req, u32>,
    /// By slot: the req and its state (`None` once it left; a slot is never
    /// reused).
    states: Vec<Option<(Req, ReqState)>>,
}

impl ReqTable {
    pub fn get(&self, req: &Req) -> Option<&ReqState> {
        let slot = *self.slots.get(req)?;
        self.at(slot, req)
    }

    pub fn get_mut(&mut self, req: &Req) -> Option<&mut ReqState> {
        let slot = *self.slots.get(req)?;
        self.at_mut(slot, req)
    }

    /// `req`'s state through its slot `slot` (an entry's view), else by req.
    pub fn get_at(&self, slot: u32, req: &Req) -> Option<&ReqState> {
        match self.at(slot, req) {
            Some(st) => Some(st),
            None => self.get(req),
        }
    }

    /// As [`ReqTable::get_at`], to change it.
    pub fn get_mut_at(&mut self, slot: u32, req: &Req) -> Option<&mut ReqState> {
        let slot = if self.at(slot, req).is_some() { slot } else { *self.slots.get(req)? };
        self.at_mut(slot, req)
    }

    fn at(&self, slot: u32, req: &Req) -> Option<&ReqState> {
        match self.states.get(slot as usize) {
            Some(Some((r, st))) if r == req => Some(st),
            _ => None,
        }
    }

    fn at_mut(&mut self, slot: u32, req: &Req) -> Option<&mut ReqState> {
        match self.states.get_mut(slot as usize) {
            Some(Some((r, st))) if r == req => Some(st),
            _ => None,
        }
    }

    /// Adds `req` with `st`, at its view slot `st.view`.
    pub fn insert(&mut self, req: Req, st: ReqState) {
        self.remove(&req);
        let slot = st.view;
        let Ok(at) = usize::try_from(slot) else { return };
        if self.states.len() <= at {
            self.states.resize_with(at + 1, || None);
        }
        self.states[at] = Some((req, st));
        self.slots.insert(req, slot);
    }

    pub fn remove(&mut self, req: &Req) -> Option<ReqState> {
        let slot = self.slots.remove(req)?;
        let (_, st) = self.states.get_mut(slot as usize)?.take()?;
        Some(st)
    }

    /// The reqs in order.
    pub fn keys(&self) -> impl Iterator<Item = &Req> + '_ {
        self.slots.keys()
    }

    /// The reqs and their states, in req order.
    pub fn iter(&self) -> impl Iterator<Item = (&Req, &ReqState)> + '_ {
        self.slots.iter().filter_map(|(r, slot)| Some((r, self.at(*slot, r)?)))
    }

    /// The reqs in `range`, in order.
    pub fn range(&self, range: std::ops::RangeInclusive<Req>) -> impl Iterator<Item = &Req> + '_ {
        self.slots.range(range).map(|(r, _)| r)
    }
}

#[cfg(test)]
mod tests {
    use super::{ReqState, ReqTable};
    use sojourn_core::{AppId, Priority};

    fn st(view: u32, live: u32) -> ReqState {
        ReqState { long: false, live, fresh: None, view }
    }

    /// Found by slot or by req alike; a slot that holds another req (or
    /// none) falls back to the req; a req added again moves to its new slot.
    #[test]
    fn a_req_is_found_by_its_slot_or_by_itself() {
        let (a, b) = ((AppId(1), Priority(0)), (AppId(2), Priority(0)));
        let mut t = ReqTable::default();
        t.insert(a, st(3, 1));
        t.insert(b, st(5, 2));
        assert_eq!(t.get_at(3, &a).map(|s| s.live), Some(1));
        assert_eq!(t.get_at(5, &a).map(|s| s.live), Some(1), "slot 5 holds b: by req");
        assert_eq!(t.get_at(u32::MAX, &b).map(|s| s.live), Some(2));
        if let Some(s) = t.get_mut_at(5, &b) {
            s.live = 7;
        }
        assert_eq!(t.get(&b).map(|s| s.live), Some(7));
        t.insert(a, st(9, 4));
        assert_eq!(t.get_at(3, &a).map(|s| s.live), Some(4), "the old slot is empty: by req");
        assert_eq!(t.keys().copied().collect::<Vec<_>>(), vec![a, b]);
        assert_eq!(t.remove(&a).map(|s| s.view), Some(9));
        assert!(t.get(&a).is_none() && t.get_at(9, &a).is_none());
        assert_eq!(t.iter().map(|(r, s)| (*r, s.live)).collect::<Vec<_>>(), vec![(b, 7)]);
    }
}
