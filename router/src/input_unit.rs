//! Input units: one FIFO per virtual channel (depth `buffer_flits`) and the VC's control
//! state, for every input port of every router, in flat vectors.
//!
//! ```text
//!  cycle t-1            cycle t
//!  flit written  ──►    readable (ready <= t): a head at the front is routed (RC),
//!  (ready = t)          waits for output VCs (VA), then competes for the switch (SA)
//! ```

use crate::flit::Flit;
use crate::port_set::PortSet;

/// One buffer slot: the flit and the first cycle it may be read.
#[derive(Clone, Copy, Debug, Default)]
pub struct BufEntry {
    pub flit: Flit,
    pub ready: u64,
}

/// Where the packet at the front of a VC is in the pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum VcStage {
    /// No packet has been routed: the front flit (if any) is a head waiting for RC.
    #[default]
    Idle,
    /// The front packet's route is known; its branches acquire output VCs and send flits.
    Routed,
}

/// Control state of one input VC: one cache line.
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(64))]
pub struct VcCtl {
    /// FIFO read pointer and occupancy.
    pub head: u16,
    pub len: u16,
    pub stage: VcStage,
    /// Ejection channel held by the front packet (valid when `granted` has LOCAL).
    pub eject_ch: u8,
    /// Output VC of a packet with a single network branch (valid once granted).
    pub ovc: u8,
    /// Output VCs the route allows at the next hop (bit v = VC v).
    pub vc_mask: u16,
    /// Front packet: length in flits (copied from the header at RC).
    pub pkt_len: u16,
    /// The front packet is replicated asynchronously: its branches read the FIFO at their
    /// own positions ([`Routers`](crate::Routers) keeps them), `pending` are those at the front.
    pub async_rep: bool,
    /// Some branch has been granted an output VC (or ejection channel) since RC: VC
    /// allocation for the remaining branches no longer waits for RC.
    pub va_open: bool,
    /// Earliest cycle for VC allocation (RC done; while `va_open` is false) and for switch
    /// allocation (VA done).
    pub sa_ready: u64,
    /// The front flit and its ready cycle (valid when `len > 0`), so that the pipeline reads
    /// a VC's front flit from this cache line. A flit written into an empty FIFO is kept here
    /// only (its ring slot is not written: nothing reads the front's slot).
    pub front: BufEntry,
    /// Outputs the packet goes to; those holding an output VC (or ejection channel); and
    /// those that have not yet taken the front flit.
    pub route: PortSet,
    pub granted: PortSet,
    pub pending: PortSet,
}

impl VcCtl {
    /// Route computation's result for the head at the front: the packet goes to `route`, on
    /// the output VCs `vc_mask` allows, is `len` flits long, replicated asynchronously if
    /// `async_rep`, and may be allocated its output VCs from cycle `sa_ready`.
    #[inline(always)]
    pub(crate) fn routed(&mut self, route: PortSet, vc_mask: u16, len: u16, async_rep: bool, sa_ready: u64) {
        self.stage = VcStage::Routed;
        self.route = route;
        self.vc_mask = vc_mask;
        self.granted = PortSet::empty();
        self.pending = route;
        self.pkt_len = len;
        self.va_open = false;
        self.async_rep = async_rep;
        self.sa_ready = sa_ready;
    }

    /// May the front packet's branches still lacking an output VC be allocated one in cycle
    /// `t`? From the cycle its RC is done (`sa_ready` until the first grant raises it).
    #[inline(always)]
    pub fn va_may_start(&self, t: u64) -> bool {
        self.va_open || self.sa_ready <= t
    }
}

/// All input VCs of the fabric. VC `iv` has buffer slots `iv*depth .. (iv+1)*depth`; the
/// slot of its front flit is stale (the flit is in the control word's `front`).
///
/// Always-on statistics for buffer sizing: per VC, the cycles spent at each occupancy
/// (`depth + 1` bins, time-weighted, one add when the occupancy changes), and the cycles its
/// front flit was ready but stalled for lack of credits or lost switch arbitration.
#[derive(Clone, Debug)]
pub struct InputUnits {
    pub depth: u16,
    pub ctl: Vec<VcCtl>,
    buf: Vec<BufEntry>,
    /// Per VC and occupancy level `l` in `1..=depth` (entry `l - 1`): the cycles the
    /// occupancy fell below `l` less the cycles it reached `l` (wrapping), so that a push or
    /// a pop adds to one entry; the cycles spent at `l` or more are that plus the current
    /// cycle while the occupancy is `l` or more, and those at exactly `l` the difference of
    /// two such counts.
    hist: Vec<u64>,
    /// High-water mark of each VC's occupancy.
    pub max_len: Vec<u16>,
    /// Front packet's priority key and creation cycle (set at RC), for the key and age
    /// arbitration policies: kept apart from the control word, read only under contention.
    pub rank: Vec<(u32, u64)>,
    pub stall_credit: Vec<u64>,
    pub stall_arb: Vec<u64>,
}

impl InputUnits {
    pub fn new(n_vcs: usize, depth: u16) -> InputUnits {
        InputUnits {
            depth,
            ctl: vec![VcCtl::default(); n_vcs],
            buf: vec![BufEntry::default(); n_vcs * depth as usize],
            hist: vec![0; n_vcs * depth as usize],
            max_len: vec![0; n_vcs],
            rank: vec![(0, 0); n_vcs],
            stall_credit: vec![0; n_vcs],
            stall_arb: vec![0; n_vcs],
        }
    }

    /// Bytes of state per input VC (for memory estimates before building).
    pub fn bytes_per_vc(depth: u16) -> usize {
        std::mem::size_of::<VcCtl>()
            + depth as usize * std::mem::size_of::<BufEntry>()
            + depth as usize * 8
            + 2 * 8
            + 2
            + std::mem::size_of::<(u32, u64)>()
    }

    /// Take input VCs `vcs` (their FIFOs, control and statistics) from `other`, a copy of
    /// these units that ran them.
    pub(crate) fn copy_vcs_from(&mut self, other: &InputUnits, vcs: std::ops::Range<usize>) {
        let d = self.depth as usize;
        self.ctl[vcs.clone()].copy_from_slice(&other.ctl[vcs.clone()]);
        self.buf[vcs.start * d..vcs.end * d].copy_from_slice(&other.buf[vcs.start * d..vcs.end * d]);
        self.hist[vcs.start * d..vcs.end * d].copy_from_slice(&other.hist[vcs.start * d..vcs.end * d]);
        self.max_len[vcs.clone()].copy_from_slice(&other.max_len[vcs.clone()]);
        self.rank[vcs.clone()].copy_from_slice(&other.rank[vcs.clone()]);
        self.stall_credit[vcs.clone()].copy_from_slice(&other.stall_credit[vcs.clone()]);
        self.stall_arb[vcs.clone()].copy_from_slice(&other.stall_arb[vcs]);
    }

    /// The occupancy of `iv` rises by one from cycle `at` on (it is below `depth`).
    #[inline(always)]
    fn account_up(&mut self, iv: usize, at: u64) {
        let e = iv * self.depth as usize + self.ctl[iv].len as usize;
        self.hist[e] = self.hist[e].wrapping_sub(at);
    }

    /// The occupancy of `iv` falls by one from cycle `at` on (it is above 0).
    #[inline(always)]
    fn account_down(&mut self, iv: usize, at: u64) {
        let e = iv * self.depth as usize + self.ctl[iv].len as usize - 1;
        self.hist[e] = self.hist[e].wrapping_add(at);
    }

    /// Cycles VC `iv` has spent at occupancy `l` or more, up to cycle `now`.
    fn cycles_at_least(&self, iv: usize, l: usize, now: u64) -> u64 {
        let (d, len) = (self.depth as usize, self.ctl[iv].len as usize);
        match l {
            0 => now,
            l if l > d => 0,
            l => self.hist[iv * d + l - 1].wrapping_add(if len >= l { now } else { 0 }),
        }
    }

    /// Cycles VC `iv` has spent at each occupancy 0..=depth, up to cycle `now`.
    pub fn occupancy_histogram(&self, iv: usize, now: u64) -> Vec<u64> {
        let at_least = |l| self.cycles_at_least(iv, l, now);
        (0..=self.depth as usize).map(|l| at_least(l).wrapping_sub(at_least(l + 1))).collect()
    }

    /// The most flits `iv` held at the end of a cycle up to `now` (the histogram's top
    /// level). Unlike the high-water mark `max_len`, a flit written and read in the same
    /// cycle (through an injection port with no injection latency) does not count.
    pub fn held_max(&self, iv: usize, now: u64) -> u16 {
        (1..=self.max_len[iv] as usize).rev().find(|&l| self.cycles_at_least(iv, l, now) != 0).unwrap_or(0) as u16
    }

    #[inline(always)]
    pub fn len(&self, iv: usize) -> u16 {
        self.ctl[iv].len
    }

    #[inline(always)]
    pub fn is_full(&self, iv: usize) -> bool {
        self.ctl[iv].len >= self.depth
    }

    /// Write a flit at the tail; the new occupancy holds from cycle `at`. Writing to a full
    /// FIFO is a hardware bug (credit overrun).
    #[inline(always)]
    pub fn push(&mut self, iv: usize, flit: Flit, ready: u64, at: u64) {
        self.check_room(iv);
        self.account_up(iv, at);
        self.write_tail(iv, flit, ready);
    }

    #[inline(always)]
    fn check_room(&self, iv: usize) {
        let depth = self.depth;
        assert!(self.ctl[iv].len < depth, "input VC {iv} overrun: FIFO of {depth} flits is full (credit protocol violated)");
    }

    /// [`InputUnits::push`] of a flit whose occupancy holds from cycle `at`, written one
    /// cycle late: after the commit that follows, which took the front flit of this VC from
    /// cycle `at + 1` on if `popped` and otherwise did not touch it. The histogram and
    /// high-water mark come out as if the flit had been written in time. (A split fabric
    /// whose links and credits take two cycles exchanges its boundary flits every other
    /// cycle; nothing reads a flit before it is `ready`, so only the statistics can tell.)
    pub fn push_late(&mut self, iv: usize, flit: Flit, ready: u64, at: u64, popped: bool) {
        self.check_room(iv);
        self.count_up_late(iv, self.ctl[iv].len, at, popped);
        self.write_tail(iv, flit, ready);
    }

    /// The statistics of a write counted from cycle `at` into VC `iv` holding `level` flits
    /// without it, made one cycle late: after cycle `at`, which took a flit from the VC if
    /// `popped` (see [`InputUnits::push_late`]).
    pub(crate) fn count_up_late(&mut self, iv: usize, level: u16, at: u64, popped: bool) {
        // The level in cycle `at` without this flit; it reached x0 + 1 at `at`.
        let x0 = level as usize + popped as usize;
        let row = iv * self.depth as usize;
        self.hist[row + x0] = self.hist[row + x0].wrapping_sub(at);
        if popped {
            // The recorded fall below x0 at `at + 1` was a fall below x0 + 1.
            self.hist[row + x0 - 1] = self.hist[row + x0 - 1].wrapping_sub(at + 1);
            self.hist[row + x0] = self.hist[row + x0].wrapping_add(at + 1);
        }
        self.max_len[iv] = self.max_len[iv].max(x0 as u16 + 1);
    }

    /// The ring write of a push, into a FIFO with room (no statistics but the high-water
    /// mark). Into an empty FIFO the flit goes to the control word's front only: a flit
    /// behind the front was written behind another, so into its slot.
    #[inline(always)]
    fn write_tail(&mut self, iv: usize, flit: Flit, ready: u64) {
        let depth = self.depth as usize;
        let c = &mut self.ctl[iv];
        let len = c.len;
        c.len += 1;
        self.max_len[iv] = self.max_len[iv].max(len + 1);
        if len == 0 {
            c.front = BufEntry { flit, ready };
            return;
        }
        let mut slot = c.head as usize + len as usize;
        if slot >= depth {
            slot -= depth;
        }
        self.buf[iv * depth + slot] = BufEntry { flit, ready };
    }

    /// Set occupancy-histogram entry `k` of VC `iv` (as [`InputUnits::hist`] keeps it): for
    /// handing back statistics kept elsewhere.
    pub(crate) fn set_hist(&mut self, iv: usize, k: usize, value: u64) {
        self.hist[iv * self.depth as usize + k] = value;
    }

    /// Write ring slot `slot` of VC `iv` (not the front's copy in the control word): for
    /// handing back a FIFO kept elsewhere.
    #[inline]
    pub(crate) fn set_entry(&mut self, iv: usize, slot: usize, e: BufEntry) {
        self.buf[iv * self.depth as usize + slot] = e;
    }

    /// The `k`-th entry from the front (0 = front, from the control word).
    #[inline(always)]
    pub fn entry(&self, iv: usize, k: u16) -> &BufEntry {
        let depth = self.depth as usize;
        let c = &self.ctl[iv];
        debug_assert!(k < c.len);
        if k == 0 {
            return &c.front;
        }
        let mut slot = c.head as usize + k as usize;
        if slot >= depth {
            slot -= depth;
        }
        &self.buf[iv * depth + slot]
    }

    /// The front entry (the FIFO is not empty), from the control word's copy.
    #[inline(always)]
    pub fn front_entry(&self, iv: usize) -> &BufEntry {
        let c = &self.ctl[iv];
        debug_assert!(c.len > 0);
        &c.front
    }

    #[inline(always)]
    pub fn front(&self, iv: usize) -> Option<&BufEntry> {
        if self.ctl[iv].len == 0 { None } else { Some(self.front_entry(iv)) }
    }

    /// Remove the front flit; the new occupancy holds from cycle `at`.
    #[inline]
    pub fn pop(&mut self, iv: usize, at: u64) -> BufEntry {
        assert!(self.ctl[iv].len > 0, "input VC {iv} underrun: pop from an empty FIFO");
        self.account_down(iv, at);
        self.pop_ready(iv)
    }

    /// Remove the front flit without touching the statistics (see [`InputUnits::count_down`]).
    #[inline]
    pub(crate) fn pop_ready(&mut self, iv: usize) -> BufEntry {
        debug_assert!(self.ctl[iv].len > 0, "input VC {iv} underrun: pop from an empty FIFO");
        let depth = self.depth as usize;
        let c = &mut self.ctl[iv];
        let e = c.front;
        c.head += 1;
        if c.head as usize == depth {
            c.head = 0;
        }
        c.len -= 1;
        if c.len > 0 {
            // Written behind the popped flit: in its ring slot.
            c.front = self.buf[iv * depth + c.head as usize];
        }
        e
    }

    /// Is the whole packet whose head is at the front buffered and readable (store-and-forward)?
    #[inline]
    pub fn whole_packet_ready(&self, iv: usize, t: u64) -> bool {
        let c = &self.ctl[iv];
        // A one-flit packet's tail is the front, whose copy is in the control word.
        c.len >= c.pkt_len && if c.pkt_len == 1 { c.front.ready } else { self.entry(iv, c.pkt_len - 1).ready } <= t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::PacketId;

    #[test]
    fn vc_ctl_is_one_cache_line() {
        assert_eq!(std::mem::size_of::<VcCtl>(), 64);
    }

    #[test]
    fn fifo_wraps_and_keeps_order() {
        let mut u = InputUnits::new(2, 3);
        for round in 0..5u16 {
            let t = 3 * round as u64;
            u.push(1, Flit::of(PacketId(round as u32), 0, 1), t, t);
            u.push(1, Flit::of(PacketId(100 + round as u32), 0, 1), t, t + 1);
            assert_eq!(u.pop(1, t + 2).flit.packet, PacketId(round as u32));
            assert_eq!(u.pop(1, t + 3).flit.packet, PacketId(100 + round as u32));
        }
        assert_eq!(u.len(1), 0);
        assert_eq!(u.len(0), 0);
        assert_eq!(u.max_len[1], 2);
        // Each round: 1 cycle at 1 flit, 1 at 2, 1 at 1, and the next round starts at once.
        assert_eq!(u.occupancy_histogram(1, 15), vec![0, 10, 5, 0]);
        assert_eq!(u.occupancy_histogram(0, 15), vec![15, 0, 0, 0]);
    }

    proptest::proptest! {
        /// The control word's front is always the FIFO's front, and every entry behind it
        /// the FIFO's entry there (a flit written into an empty FIFO has no ring slot),
        /// through any sequence of writes and reads that wraps the ring.
        #[test]
        fn front_copy_is_the_fifo_front(depth in 1u16..6, ops in proptest::collection::vec(proptest::bool::ANY, 0..60)) {
            let mut u = InputUnits::new(1, depth);
            let mut model = std::collections::VecDeque::new();
            for (t, push) in ops.into_iter().enumerate() {
                let t = t as u64;
                if push && model.len() < depth as usize {
                    let f = Flit::of(PacketId(t as u32), 0, 1);
                    u.push(0, f, t + 2, t);
                    model.push_back((f, t + 2));
                } else if !push && !model.is_empty() {
                    let e = u.pop(0, t);
                    proptest::prop_assert_eq!((e.flit, e.ready), model.pop_front().unwrap());
                }
                let front = u.front(0).map(|e| (e.flit, e.ready));
                proptest::prop_assert_eq!(front, model.front().copied());
                for (k, want) in model.iter().enumerate() {
                    let e = u.entry(0, k as u16);
                    proptest::prop_assert_eq!((e.flit, e.ready), *want);
                }
            }
        }
    }

    proptest::proptest! {
        /// A flit written a cycle late (after the next commit, which may have taken the
        /// front flit) leaves the same histogram, high-water mark and FIFO as one written
        /// in time. Flits take two cycles to become readable, as on the links it is used for.
        #[test]
        fn late_write_keeps_the_statistics(depth in 1u16..6, ops in proptest::collection::vec((proptest::bool::ANY, proptest::bool::ANY), 1..60)) {
            let (mut on_time, mut late) = (InputUnits::new(1, depth), InputUnits::new(1, depth));
            let mut pending: Option<(Flit, u64)> = None;
            for (t, (arrive, pop)) in ops.into_iter().enumerate() {
                let t = t as u64;
                // The commit of cycle t: a pop (not of the flit that arrived in t-1, which is
                // not readable yet), then an arrival.
                let unready = pending.is_some() as u16;
                let pop = pop && on_time.len(0) > unready;
                if pop {
                    let a = on_time.pop(0, t + 1);
                    let b = late.pop(0, t + 1);
                    proptest::prop_assert_eq!(a.flit, b.flit);
                }
                if let Some((f, at)) = pending.take() {
                    late.push_late(0, f, at + 1, at, pop);
                }
                if arrive && on_time.len(0) < depth {
                    let f = Flit::of(PacketId(t as u32), 0, 1);
                    on_time.push(0, f, t + 2, t + 1);
                    pending = Some((f, t + 1));
                }
            }
            let end = on_time.len(0) as u64 + 100;
            if let Some((f, at)) = pending.take() {
                late.push_late(0, f, at + 1, at, false);
            }
            proptest::prop_assert_eq!(on_time.occupancy_histogram(0, end), late.occupancy_histogram(0, end));
            proptest::prop_assert_eq!(on_time.max_len[0], late.max_len[0]);
            proptest::prop_assert_eq!(on_time.len(0), late.len(0));
            while on_time.len(0) > 0 {
                proptest::prop_assert_eq!(on_time.pop(0, end).flit, late.pop(0, end).flit);
            }
        }
    }

    #[test]
    #[should_panic(expected = "overrun")]
    fn overrun_is_a_bug() {
        let mut u = InputUnits::new(1, 1);
        u.push(0, Flit::default(), 0, 0);
        u.push(0, Flit::default(), 0, 0);
    }

    #[test]
    fn whole_packet_needs_tail_readable() {
        let mut u = InputUnits::new(1, 4);
        u.ctl[0].pkt_len = 3;
        for s in 0..3 {
            u.push(0, Flit::of(PacketId(7), s, 3), 10 + s as u64, 10);
        }
        assert!(!u.whole_packet_ready(0, 11));
        assert!(u.whole_packet_ready(0, 12));
    }
}
