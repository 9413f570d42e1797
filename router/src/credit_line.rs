//! The credit return wires of every output port of a fabric: the credit for a buffer slot
//! freed downstream travels back upstream and becomes visible there a fixed number of cycles
//! later.
//!
//! ```text
//!  cycle t: slot freed ──► on the wires ──► visible upstream from t + 1 + credit_delay
//! ```
//!
//! Modelled as a ring with one slot per cycle a credit can be on the wires, each slot
//! holding the output VCs whose credits arrive in that cycle (the wires' pipeline stages).
//! A credit due outside the ring's window (one due already, from another thread's mail, or
//! one due further ahead than the ring spans) waits in a small queue sorted by cycle.

use std::collections::VecDeque;

/// Most cycles the ring spans: credits due later wait in the overflow queue.
const MAX_SLOTS: usize = 64;

#[derive(Clone, Debug)]
pub(crate) struct CreditLine {
    /// Slot `c & mask` holds the output VCs whose credits become visible in cycle `c`, for
    /// every `c` in `done ..= done + mask`.
    slots: Vec<Vec<u32>>,
    mask: u64,
    /// The cycle of the latest delivery: every credit due by then is visible.
    done: u64,
    /// Credits due outside the ring's window, as (cycle, output VC), sorted by cycle.
    overflow: VecDeque<(u64, u32)>,
    /// The latest cycle at which a credit put on the line becomes visible.
    horizon: u64,
}

impl CreditLine {
    /// A line whose credits normally become visible `delay + 1` cycles after they are sent.
    pub(crate) fn new(delay: u32) -> CreditLine {
        // Sent after the delivery of cycle `t`, due at `t + 1 + delay`: `delay + 2` slots.
        let n = (delay as usize + 2).next_power_of_two().min(MAX_SLOTS);
        CreditLine { slots: vec![Vec::new(); n], mask: n as u64 - 1, done: 0, overflow: VecDeque::new(), horizon: 0 }
    }

    /// Put a credit for output VC `ov` on the line, visible from cycle `ready`.
    #[inline(always)]
    pub(crate) fn push(&mut self, ready: u64, ov: u32) {
        self.horizon = self.horizon.max(ready);
        if ready.wrapping_sub(self.done) <= self.mask {
            self.slots[(ready & self.mask) as usize].push(ov);
        } else {
            self.push_outside(ready, ov);
        }
    }

    /// Put credits for output VCs `ovs` on the line, all visible from cycle `ready`.
    #[inline(always)]
    pub(crate) fn push_all(&mut self, ready: u64, ovs: impl Iterator<Item = u32>) {
        // No credits, no horizon: a traced run steps on until the horizon has passed.
        let pushed = if ready.wrapping_sub(self.done) <= self.mask {
            let slot = &mut self.slots[(ready & self.mask) as usize];
            let before = slot.len();
            slot.extend(ovs);
            slot.len() != before
        } else {
            let mut any = false;
            for ov in ovs {
                self.push_outside(ready, ov);
                any = true;
            }
            any
        };
        if pushed {
            self.horizon = self.horizon.max(ready);
        }
    }

    /// A credit due outside the ring's window: into the overflow queue, in cycle order.
    #[cold]
    #[inline(never)]
    fn push_outside(&mut self, ready: u64, ov: u32) {
        match self.overflow.back() {
            Some(&(last, _)) if last > ready => {
                let at = self.overflow.partition_point(|e| e.0 <= ready);
                self.overflow.insert(at, (ready, ov));
            }
            _ => self.overflow.push_back((ready, ov)),
        }
    }

    /// Take every credit due by cycle `t` off the line, calling `arrive` with their output
    /// VCs (a slot at a time).
    #[inline(always)]
    pub(crate) fn deliver(&mut self, t: u64, mut arrive: impl FnMut(&[u32])) {
        if t >= self.done {
            for c in self.done..=t.min(self.done.saturating_add(self.mask)) {
                let slot = &mut self.slots[(c & self.mask) as usize];
                arrive(slot);
                slot.clear();
            }
            self.done = t;
        }
        while let Some(&(ready, ov)) = self.overflow.front() {
            if ready > t {
                break;
            }
            self.overflow.pop_front();
            arrive(&[ov]);
        }
    }

    /// Every credit on the line, as (cycle it becomes visible, output VC).
    pub(crate) fn credits(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        let ring = (self.done..=self.done.saturating_add(self.mask))
            .flat_map(move |c| self.slots[(c & self.mask) as usize].iter().map(move |&ov| (c, ov)));
        ring.chain(self.overflow.iter().copied())
    }

    /// Credits for output VC `ov` that are visible by cycle `t`, not yet delivered.
    pub(crate) fn count(&self, ov: u32, t: u64) -> usize {
        self.credits().filter(|&(ready, e)| ready <= t && e == ov).count()
    }

    /// Also carry the credits of `other` (another part's line) for which `keep` holds.
    pub(crate) fn join(&mut self, other: &CreditLine, keep: impl Fn(u32) -> bool) {
        for (ready, ov) in other.credits().filter(|&(_, ov)| keep(ov)) {
            self.push(ready, ov);
        }
        self.horizon = self.horizon.max(other.horizon);
    }

    /// The latest cycle at which a credit put on the line becomes visible.
    pub(crate) fn horizon(&self) -> u64 {
        self.horizon
    }
}
