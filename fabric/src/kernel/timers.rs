//! The nodes' timers (a program's wake-ups, a NIC waiting out its start-up cost), taken out
//! in order of cycle, then node, then kind: the order of a heap of `(cycle, node, kind)`.
//!
//! Timers for the [`SPAN`] cycles from the next one to be taken out wait in a wheel, a list
//! per cycle; later ones (and any set for a cycle already past) in a heap, from which they
//! move into the wheel as their cycle comes within reach. A program that wakes its node
//! every few tens of cycles (synthetic traffic) costs a push onto a short list, not a
//! heap's sift down and up.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Cycles the wheel covers (a multiple of 64).
const SPAN: u64 = 256;
const WORDS: usize = SPAN as usize / 64;

/// A timer as the wheel keeps it: `node << 1 | kind` (kind 0 or 1), which orders like
/// `(node, kind)`.
fn entry(node: u32, kind: u8) -> u32 {
    debug_assert!(kind <= 1 && node < 1 << 31, "timer of node {node}, kind {kind}");
    node << 1 | kind as u32
}

fn split(e: u32) -> (u32, u8) {
    (e >> 1, (e & 1) as u8)
}

#[derive(Debug)]
pub(crate) struct Timers {
    /// Slot `c % SPAN` lists the timers of cycle `c`, for `c` in `[base, base + SPAN)`, in
    /// the order they were set; bit `c % SPAN` of `occupied` says it lists some.
    slots: Vec<Vec<u32>>,
    occupied: [u64; WORDS],
    base: u64,
    in_wheel: usize,
    /// The other timers: (cycle, entry).
    far: BinaryHeap<Reverse<(u64, u32)>>,
    /// Scratch for the timers due when they come from several places.
    due: Vec<(u64, u32)>,
}

impl Default for Timers {
    fn default() -> Timers {
        Timers {
            slots: vec![Vec::new(); SPAN as usize],
            occupied: [0; WORDS],
            base: 0,
            in_wheel: 0,
            far: BinaryHeap::new(),
            due: Vec::new(),
        }
    }
}

impl Timers {
    pub(crate) fn is_empty(&self) -> bool {
        self.in_wheel == 0 && self.far.is_empty()
    }

    /// Set a timer of `kind` (0 or 1) for node `node` in cycle `at`.
    #[inline(always)]
    pub(crate) fn push(&mut self, at: u64, node: u32, kind: u8) {
        let e = entry(node, kind);
        if at >= self.base && at - self.base < SPAN {
            self.put(at, e);
        } else {
            self.far.push(Reverse((at, e)));
        }
    }

    #[inline]
    fn put(&mut self, at: u64, e: u32) {
        let s = (at % SPAN) as usize;
        self.slots[s].push(e);
        self.occupied[s / 64] |= 1 << (s % 64);
        self.in_wheel += 1;
    }

    /// The cycle of the earliest timer.
    pub(crate) fn next(&self) -> Option<u64> {
        let far = self.far.peek().map(|&Reverse((at, _))| at);
        if self.in_wheel == 0 {
            return far;
        }
        // The first occupied slot from `base`'s, round the wheel.
        let start = (self.base % SPAN) as usize;
        let mut first = None;
        for k in 0..=WORDS {
            let w = (start / 64 + k) % WORDS;
            let mut bits = self.occupied[w];
            if k == 0 {
                bits &= !0 << (start % 64);
            } else if k == WORDS {
                bits &= !(!0 << (start % 64));
            }
            if bits != 0 {
                let s = (w * 64) as u64 + bits.trailing_zeros() as u64;
                first = Some(self.base + (s + SPAN - start as u64) % SPAN);
                break;
            }
        }
        let wheel = first.expect("an occupied slot");
        Some(far.map_or(wheel, |f| f.min(wheel)))
    }

    /// Take out the timers due by cycle `t` (earlier cycles included), calling `f(node,
    /// kind)` for each in order of cycle, node, kind.
    #[inline]
    pub(crate) fn pop_due(&mut self, t: u64, mut f: impl FnMut(u32, u8)) {
        let far_due = self.far.peek().is_some_and(|&Reverse((at, _))| at <= t);
        if t == self.base && !far_due {
            // Each cycle in turn: only this cycle's slot.
            let s = (t % SPAN) as usize;
            if self.occupied[s / 64] & 1 << (s % 64) != 0 {
                self.occupied[s / 64] &= !(1 << (s % 64));
                let mut list = std::mem::take(&mut self.slots[s]);
                self.in_wheel -= list.len();
                list.sort_unstable();
                for &e in &list {
                    let (n, kind) = split(e);
                    f(n, kind);
                }
                list.clear();
                self.slots[s] = list;
            }
        } else {
            self.pop_due_from_all(t, f);
        }
        if t >= self.base {
            self.base = t + 1;
            while let Some(&Reverse((at, e))) = self.far.peek()
                && at - self.base < SPAN
            {
                self.far.pop();
                self.put(at, e);
            }
        }
    }

    /// [`Timers::pop_due`] after cycles skipped, or with timers due from the heap.
    fn pop_due_from_all(&mut self, t: u64, mut f: impl FnMut(u32, u8)) {
        let mut due = std::mem::take(&mut self.due);
        while let Some(&Reverse((at, e))) = self.far.peek()
            && at <= t
        {
            self.far.pop();
            due.push((at, e));
        }
        if t >= self.base && self.in_wheel > 0 {
            let start = self.base % SPAN;
            for w in 0..WORDS {
                let mut bits = self.occupied[w];
                while bits != 0 {
                    let s = (w * 64) as u64 + bits.trailing_zeros() as u64;
                    bits &= bits - 1;
                    let at = self.base + (s + SPAN - start) % SPAN;
                    if at <= t {
                        self.occupied[w] &= !(1 << (s % 64));
                        let list = &mut self.slots[s as usize];
                        self.in_wheel -= list.len();
                        due.extend(list.drain(..).map(|e| (at, e)));
                    }
                }
            }
        }
        due.sort_unstable();
        for &(_, e) in &due {
            let (n, kind) = split(e);
            f(n, kind);
        }
        due.clear();
        self.due = due;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Timers come out as a heap of (cycle, node, kind) gives them, whether cycles are
        /// taken out one by one or skipped (to the next timer, or beyond it), timers are
        /// set near or far (or for a cycle already past), and `next` is the heap's minimum.
        #[test]
        fn timers_come_out_in_heap_order(
            ops in proptest::collection::vec((0u64..700, 0u32..6, 0u8..2, 0u8..4), 1..300)
        ) {
            let mut timers = Timers::default();
            let mut model: BinaryHeap<Reverse<(u64, u32, u8)>> = BinaryHeap::new();
            let mut now = 0u64;
            for &(d, node, kind, step) in &ops {
                // Mostly ahead of the current cycle, a few behind it.
                let at = if d >= 690 { now.saturating_sub(d - 690) } else { now + d };
                timers.push(at, node, kind);
                model.push(Reverse((at, node, kind)));
                proptest::prop_assert_eq!(timers.next(), model.peek().map(|r| r.0.0));
                if step > 0 {
                    // Step by one, to the next timer, or past it.
                    let t = match step {
                        1 => now,
                        2 => model.peek().map_or(now, |r| r.0.0.max(now)),
                        _ => now + d,
                    };
                    let mut got = Vec::new();
                    timers.pop_due(t, |n, k| got.push((n, k)));
                    let mut want = Vec::new();
                    while let Some(&Reverse((at, n, k))) = model.peek() && at <= t {
                        model.pop();
                        want.push((n, k));
                    }
                    proptest::prop_assert_eq!(got, want);
                    proptest::prop_assert_eq!(timers.is_empty(), model.is_empty());
                    now = t + 1;
                }
            }
        }
    }
}
