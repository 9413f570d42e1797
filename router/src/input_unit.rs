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
    /// Some branch has been granted an output VC (or ejection channel) since RC: VC
    /// allocation for the remaining branches no longer waits for RC.
    pub va_open: bool,
    /// Earliest cycle for VC allocation (RC done; while `va_open` is false) and for switch
    /// allocation (VA done).
    pub sa_ready: u64,
    /// A copy of the front FIFO slot (valid when `len > 0`), so that the pipeline reads a
    /// VC's front flit from this cache line.
    pub front: BufEntry,
    /// Outputs the packet goes to; those holding an output VC (or ejection channel); and
    /// those that have not yet taken the front flit.
    pub route: PortSet,
    pub granted: PortSet,
    pub pending: PortSet,
}

impl VcCtl {
    /// May the front packet's branches still lacking an output VC be allocated one in cycle
    /// `t`? From the cycle its RC is done (`sa_ready` until the first grant raises it).
    #[inline(always)]
    pub fn va_may_start(&self, t: u64) -> bool {
        self.va_open || self.sa_ready <= t
    }
}

/// All input VCs of the fabric. VC `iv` has buffer slots `iv*depth .. (iv+1)*depth`.
///
/// Always-on statistics for buffer sizing: per VC, the cycles spent at each occupancy
/// (`depth + 1` bins, time-weighted, updated when the occupancy changes), and the cycles its
/// front flit was ready but stalled for lack of credits or lost switch arbitration.
#[derive(Clone, Debug)]
pub struct InputUnits {
    pub depth: u16,
    pub ctl: Vec<VcCtl>,
    buf: Vec<BufEntry>,
    /// Per VC and occupancy level: the cycles spent there, kept as Σ(leave) − Σ(enter)
    /// (wrapping), so that a change touches only this VC's row; the current level's
    /// open interval is added when read.
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
            hist: vec![0; n_vcs * (depth as usize + 1)],
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
            + (depth as usize + 1) * 8
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
        self.hist[vcs.start * (d + 1)..vcs.end * (d + 1)].copy_from_slice(&other.hist[vcs.start * (d + 1)..vcs.end * (d + 1)]);
        self.max_len[vcs.clone()].copy_from_slice(&other.max_len[vcs.clone()]);
        self.rank[vcs.clone()].copy_from_slice(&other.rank[vcs.clone()]);
        self.stall_credit[vcs.clone()].copy_from_slice(&other.stall_credit[vcs.clone()]);
        self.stall_arb[vcs.clone()].copy_from_slice(&other.stall_arb[vcs]);
    }

    /// The occupancy of `iv` changes from cycle `at` on: close the current level's interval.
    #[inline(always)]
    fn account(&mut self, iv: usize, at: u64, new_level: u16) {
        let level = self.ctl[iv].len as usize;
        let row = iv * (self.depth as usize + 1);
        self.hist[row + level] = self.hist[row + level].wrapping_add(at);
        self.hist[row + new_level as usize] = self.hist[row + new_level as usize].wrapping_sub(at);
    }

    /// Cycles VC `iv` has spent at each occupancy 0..=depth, up to cycle `now`.
    pub fn occupancy_histogram(&self, iv: usize, now: u64) -> Vec<u64> {
        let d = self.depth as usize + 1;
        let mut h = self.hist[iv * d..(iv + 1) * d].to_vec();
        let level = self.ctl[iv].len as usize;
        h[level] = h[level].wrapping_add(now);
        h
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
        self.account(iv, at, (self.ctl[iv].len + 1).min(self.depth));
        let depth = self.depth as usize;
        let c = &mut self.ctl[iv];
        assert!((c.len as usize) < depth, "input VC {iv} overrun: FIFO of {depth} flits is full (credit protocol violated)");
        let mut slot = c.head as usize + c.len as usize;
        if slot >= depth {
            slot -= depth;
        }
        if c.len == 0 {
            c.front = BufEntry { flit, ready };
        }
        c.len += 1;
        let len = c.len;
        self.max_len[iv] = self.max_len[iv].max(len);
        self.buf[iv * depth + slot] = BufEntry { flit, ready };
    }

    /// The `k`-th entry from the front (0 = front).
    #[inline(always)]
    pub fn entry(&self, iv: usize, k: u16) -> &BufEntry {
        let depth = self.depth as usize;
        let c = &self.ctl[iv];
        debug_assert!(k < c.len);
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
        self.account(iv, at, self.ctl[iv].len.saturating_sub(1));
        let depth = self.depth as usize;
        let c = &mut self.ctl[iv];
        assert!(c.len > 0, "input VC {iv} underrun: pop from an empty FIFO");
        let e = c.front;
        c.head += 1;
        if c.head as usize == depth {
            c.head = 0;
        }
        c.len -= 1;
        if c.len > 0 {
            c.front = self.buf[iv * depth + c.head as usize];
        }
        e
    }

    /// Is the whole packet whose head is at the front buffered and readable (store-and-forward)?
    #[inline]
    pub fn whole_packet_ready(&self, iv: usize, t: u64) -> bool {
        let c = &self.ctl[iv];
        c.len >= c.pkt_len && self.entry(iv, c.pkt_len - 1).ready <= t
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
        /// The control word's copy of the front slot is always the FIFO's front, through
        /// any sequence of writes and reads that wraps the ring.
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
