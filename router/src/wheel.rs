//! The fabric's delay lines: links (a flit sent in cycle `t` is readable downstream from
//! `t + link_latency`), credit return wires (the credit for a slot freed in `t` is visible
//! upstream from `t + 1 + credit_delay`), the injection path, and the waits of a routed
//! packet for its RC and VA delays. Modelled as a ring of per-cycle slots, each holding what
//! becomes true at the start of its cycle; what is due further ahead than the ring spans
//! (very long pipelines) waits in an overflow queue and moves into the ring in time.
//!
//! ```text
//!  cycle t: flit crosses ──► slot t + link_latency: arrival
//!           slot freed   ──► slot t + 1 + credit_delay: credit
//!           RC done      ──► slot t + rc_delay: VC-allocation request
//!           VC granted   ──► slot t + va_delay: switch-allocation bid
//! ```

use crate::flit::Flit;
use std::collections::BTreeMap;

/// An input VC (or an output VC) as the delay lines name it: the router and its local index
/// (`port * vcs + vc`), `r << 7 | l`, so that no division finds the router again.
#[inline(always)]
pub(crate) fn vcr(r: usize, l: usize) -> u32 {
    (r << 7 | l) as u32
}

/// The router and local index of [`vcr`] `x`.
#[inline(always)]
pub(crate) fn unvcr(x: u32) -> (usize, usize) {
    ((x >> 7) as usize, (x & 127) as usize)
}

/// What becomes true at the start of a cycle.
#[derive(Clone, Debug, Default)]
pub(crate) struct Slot {
    /// A flit becomes readable in an input VC.
    pub arrivals: Vec<(u32, Flit)>,
    /// A credit becomes visible at an output VC.
    pub credits: Vec<u32>,
    /// A routed VC may be allocated its output VCs (its `rc_delay` passed).
    pub va_joins: Vec<u32>,
    /// A VC holding its output VC (or ejection channel) may bid (its `va_delay` passed).
    pub sa_joins: Vec<u32>,
}

impl Slot {
    pub fn is_empty(&self) -> bool {
        self.arrivals.is_empty() && self.credits.is_empty() && self.va_joins.is_empty() && self.sa_joins.is_empty()
    }
    fn append(&mut self, o: &Slot) {
        self.arrivals.extend_from_slice(&o.arrivals);
        self.credits.extend_from_slice(&o.credits);
        self.va_joins.extend_from_slice(&o.va_joins);
        self.sa_joins.extend_from_slice(&o.sa_joins);
    }
    fn clear(&mut self) {
        self.arrivals.clear();
        self.credits.clear();
        self.va_joins.clear();
        self.sa_joins.clear();
    }
}

/// The most cycles the ring spans.
const MAX_SLOTS: usize = 1 << 12;

#[derive(Clone, Debug)]
pub(crate) struct Wheel {
    slots: Vec<Slot>,
    pub mask: u64,
    /// Every slot up to this cycle has been taken out.
    pub done: u64,
    /// What is due beyond the ring's reach, by cycle.
    far: BTreeMap<u64, Slot>,
}

impl Wheel {
    /// A ring for delays of up to `longest` cycles (longer ones go through the overflow).
    pub fn new(longest: u64) -> Wheel {
        let n = ((longest as usize).saturating_add(2)).next_power_of_two().min(MAX_SLOTS);
        Wheel { slots: vec![Slot::default(); n], mask: n as u64 - 1, done: 0, far: BTreeMap::new() }
    }

    /// The slot of cycle `at` (after `done`).
    #[inline(always)]
    pub fn slot(&mut self, at: u64) -> &mut Slot {
        debug_assert!(at > self.done, "event at {at} not after {}", self.done);
        if at - self.done <= self.mask { &mut self.slots[(at & self.mask) as usize] } else { self.far_slot(at) }
    }

    #[cold]
    #[inline(never)]
    fn far_slot(&mut self, at: u64) -> &mut Slot {
        self.far.entry(at).or_default()
    }

    /// Has the overflow anything?
    #[inline(always)]
    pub fn has_far(&self) -> bool {
        !self.far.is_empty()
    }

    /// Take out the slot of cycle `at` (within the ring's reach); give it back with
    /// [`Wheel::put_back`] to keep its buffers.
    #[inline(always)]
    pub fn take(&mut self, at: u64) -> Slot {
        std::mem::take(&mut self.slots[(at & self.mask) as usize])
    }

    #[inline(always)]
    pub fn put_back(&mut self, at: u64, mut slot: Slot) {
        slot.clear();
        self.slots[(at & self.mask) as usize] = slot;
    }

    /// The next cycle after `done` that has something due, up to `t` (None if none): slots
    /// are visited in order; what the overflow holds for a cycle moves into its slot first.
    #[inline]
    pub fn next_due(&mut self, t: u64) -> Option<u64> {
        loop {
            if self.done >= t {
                return None;
            }
            // Nothing in the ring beyond `done + mask`; the overflow says when it has more.
            let ring_end = t.min(self.done + self.mask);
            if !self.far.is_empty() {
                self.pull_far(ring_end);
            }
            while self.done < ring_end {
                self.done += 1;
                if !self.slots[(self.done & self.mask) as usize].is_empty() {
                    return Some(self.done);
                }
            }
            if self.done >= t {
                return None;
            }
            // Past the ring's reach: jump to the overflow's next cycle, or to `t`.
            match self.far.keys().next() {
                Some(&at) if at <= t => self.done = at - 1,
                _ => {
                    self.done = t;
                    return None;
                }
            }
        }
    }

    /// The first cycle after `done` with anything due, if any (nothing taken out).
    pub fn next_pending(&self) -> Option<u64> {
        let ring = (self.done + 1..=self.done + self.mask).find(|&c| !self.slots[(c & self.mask) as usize].is_empty());
        ring.or_else(|| self.far.keys().next().copied())
    }

    /// Move what the overflow holds for cycles up to `upto` (within the ring's reach) into
    /// their slots.
    #[cold]
    #[inline(never)]
    pub fn pull_far(&mut self, upto: u64) {
        while let Some((&at, _)) = self.far.first_key_value() {
            if at > upto {
                break;
            }
            let s = self.far.remove(&at).expect("a key just seen");
            self.slots[(at & self.mask) as usize].append(&s);
        }
    }

    /// Credits due by cycle `at` for output VC `x` (a [`vcr`]), not yet taken out.
    pub fn credits_due(&self, x: u32, at: u64) -> usize {
        let ring = (self.done + 1..=at.min(self.done + self.mask)).map(|c| &self.slots[(c & self.mask) as usize]);
        let far = self.far.range(..=at).map(|(_, s)| s);
        ring.chain(far).map(|s| s.credits.iter().filter(|&&y| y == x).count()).sum()
    }

    /// Every slot not yet taken out, with its cycle.
    pub fn entries(&self) -> impl Iterator<Item = (u64, &Slot)> + '_ {
        let ring = (self.done + 1..=self.done + self.mask).map(move |c| (c, &self.slots[(c & self.mask) as usize]));
        ring.chain(self.far.iter().map(|(&c, s)| (c, s)))
    }

    /// Also carry what `other` (another part's wheel, at the same cycle) holds for which
    /// `keep` holds: arrivals and joins by input VC, credits by output VC (each a [`vcr`]).
    pub fn join(&mut self, other: &Wheel, keep: impl Fn(u32) -> bool) {
        debug_assert_eq!(self.done, other.done);
        let mut add: Vec<(u64, Slot)> = Vec::new();
        for (c, s) in other.entries() {
            let mut k = Slot::default();
            k.arrivals.extend(s.arrivals.iter().filter(|(x, _)| keep(*x)));
            k.credits.extend(s.credits.iter().filter(|&&x| keep(x)));
            k.va_joins.extend(s.va_joins.iter().filter(|&&x| keep(x)));
            k.sa_joins.extend(s.sa_joins.iter().filter(|&&x| keep(x)));
            if !k.is_empty() {
                add.push((c, k));
            }
        }
        for (c, k) in add {
            self.slot(c).append(&k);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Events filed at any distance come out at their cycle, in cycle order, however far the
    /// clock jumps between looks.
    #[test]
    fn events_come_out_at_their_cycle() {
        let mut w = Wheel::new(3);
        let mut due = vec![5u64, 6, 9, 40, 41, 1000, 70_000];
        for &c in &due {
            w.slot(c).va_joins.push(c as u32);
        }
        let mut seen = Vec::new();
        for t in [4u64, 5, 8, 9, 500, 100_000] {
            while let Some(c) = w.next_due(t) {
                let s = w.take(c);
                assert_eq!(s.va_joins, vec![c as u32]);
                seen.push(c);
                w.put_back(c, s);
            }
            assert_eq!(w.done, t);
        }
        due.sort();
        assert_eq!(seen, due);
    }

    /// The next cycle with anything due, in the ring or beyond it, without taking it out.
    #[test]
    fn next_pending_sees_the_ring_and_the_overflow() {
        let mut w = Wheel::new(3);
        assert_eq!(w.next_pending(), None);
        w.slot(70_000).credits.push(1);
        assert_eq!(w.next_pending(), Some(70_000));
        w.slot(3).credits.push(2);
        assert_eq!(w.next_pending(), Some(3));
        assert_eq!(w.next_due(3), Some(3));
        let s = w.take(3);
        w.put_back(3, s);
        assert_eq!(w.next_pending(), Some(70_000));
    }
}
