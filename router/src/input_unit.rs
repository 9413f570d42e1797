//! Input units: one FIFO per virtual channel (depth `buffer_flits`) and the VC's control
//! state, for every input port of every router, in flat vectors.
//!
//! ```text
//!  cycle t-1                 cycle t
//!  flit sent upstream ──►    counted in the VC's occupancy from t (statistics, credits)
//!  ... link_latency ──►      written into the FIFO, readable: a head at the front is
//!                            routed (RC), waits for an output VC (VA), then bids for the
//!                            switch (SA)
//! ```
//!
//! A flit enters its FIFO in the cycle it becomes readable, so every flit in a FIFO can be
//! read; the occupancy the statistics count (`occ`) includes the flits on their way, from
//! the cycle after they were sent, as the upstream router's credits do.
//!
//! The flits of a VC are consecutive flits of consecutive packets (a VC takes a new packet
//! only after the last one's tail), so a VC keeps its front flit and, for the packets behind
//! the front one, their ids in a ring of `depth` slots: a body flit arriving behind the front
//! needs no slot, and the flit after a popped one is the next of its packet, or after a tail
//! the head of the next packet in the ring.
//!
//! Always-on statistics for buffer sizing: per VC, the cycles spent at each occupancy
//! (time-weighted, one add when the occupancy changes), its high-water mark, and the cycles
//! its front flit could not go for lack of credits or lost switch arbitration.

use crate::flat::Flat;
use crate::flit::{Flit, FlitFlags};
use crate::ids::PacketId;
use crate::port_set::PortSet;

/// The output "port" of a packet routed to ejection (`Vc::out`).
pub(crate) const LOCAL_OUT: u8 = u8::MAX;
/// The output "port" of a packet the router replicates: its branches are in [`Branches`].
pub(crate) const MULTI_OUT: u8 = u8::MAX - 1;

/// `Vc::flags`: the front packet is routed.
pub(crate) const ROUTED: u8 = 1;
/// A unicast packet holds its output VC or ejection channel.
pub(crate) const GRANTED: u8 = 2;
/// Some branch has been granted since RC: allocation for the others no longer waits for RC.
pub(crate) const VA_OPEN: u8 = 4;
/// A replicated packet whose branches read the FIFO at positions of their own.
pub(crate) const ASYNC: u8 = 8;

/// Occupancy levels whose histogram entries an input VC keeps in its own cache line (the
/// others, for deeper buffers, in [`InputUnits::hist_hi`]).
pub(crate) const HIST_INLINE: usize = 4;
/// The in-line histogram entries are rebased to a new epoch this often (cycles), so that
/// what they hold (durations since the epoch, less the start of an interval still open)
/// stays within 32 bits.
pub(crate) const HIST_SPAN: u64 = 1 << 30;

/// An input VC in one cache line: its front flit and how many flits it holds, where the
/// packets behind the front one start in its ring, its occupancy (flits on their way
/// included) and high-water mark, the front packet's route, rank and grants, and the bottom
/// of its occupancy histogram. Fields describing the last packet (`ovc`, `eject_ch`,
/// `vc_mask`, `pkt_len`, `sa_ready`, `key`, `birth`) keep their values after it has gone.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
pub(crate) struct Vc {
    pub front: Flit,
    /// Earliest cycle of VC allocation (RC done), then of switch allocation (VA done).
    pub sa_ready: u64,
    /// The front packet's creation cycle and priority key (set at RC), for the age and key
    /// arbitration policies ([`Vc::rank`]): in the line route computation writes anyway, so
    /// that routing a head touches no other line of the router's.
    pub birth: u64,
    pub key: u32,
    /// The ring slot of the first packet behind the front one, and how many there are.
    pub phead: u16,
    pub pkts: u16,
    /// Flits in the FIFO (all readable), the front one included.
    pub len: u16,
    /// Flits in the FIFO or on their way into it (sent, not readable yet): the occupancy the
    /// statistics count.
    pub occ: u16,
    pub pkt_len: u16,
    /// Output VCs the route allows at the next hop (bit v = VC v).
    pub vc_mask: u16,
    pub max_len: u16,
    /// Output port of the routed packet: a network port, [`LOCAL_OUT`] or [`MULTI_OUT`].
    pub out: u8,
    /// The output VC held (unicast to a network port), and the ejection channel held.
    pub ovc: u8,
    pub eject_ch: u8,
    /// [`ROUTED`], [`GRANTED`], [`VA_OPEN`], [`ASYNC`].
    pub flags: u8,
    /// The ejection VC held (of channel `eject_ch`).
    pub eject_vc: u8,
    _pad: u8,
    /// Occupancy levels `0..HIST_INLINE` of the histogram, counted from
    /// [`InputUnits::hist_epoch`] in 32 bits (see [`InputUnits::hist_entry`]).
    pub hist: [u32; HIST_INLINE],
}

const _: () = assert!(std::mem::size_of::<Vc>() == 64, "an input VC in one cache line");

impl Vc {
    #[inline(always)]
    pub fn routed(&self) -> bool {
        self.flags & ROUTED != 0
    }
    #[inline(always)]
    pub fn granted(&self) -> bool {
        self.flags & GRANTED != 0
    }
    #[inline(always)]
    pub fn multicast(&self) -> bool {
        self.out == MULTI_OUT
    }
    /// The route of a routed unicast packet: its output port, or LOCAL.
    #[inline(always)]
    pub fn unicast_route(&self) -> PortSet {
        if self.out == LOCAL_OUT { PortSet::LOCAL } else { PortSet::port(self.out as usize) }
    }

    /// Past its VA delay in cycle `t` with a flit buffered: may its front flit bid for the
    /// switch (its output held)?
    #[inline(always)]
    pub fn sa_able(&self, t: u64) -> bool {
        self.sa_ready <= t && self.len > 0
    }

    /// May the front packet's branches still lacking an output VC be allocated one in cycle
    /// `t`? From the cycle its RC is done (`sa_ready` until the first grant raises it).
    #[inline(always)]
    pub fn va_may_start(&self, t: u64) -> bool {
        self.flags & VA_OPEN != 0 || self.sa_ready <= t
    }
    /// The front packet's rank for the key and age arbitration policies: (key, birth).
    #[inline(always)]
    pub fn rank(&self) -> (u32, u64) {
        (self.key, self.birth)
    }
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

/// The branches of a packet the router replicates: where it goes, which branches hold their
/// output VC (or ejection channel), and which have not yet taken the front flit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Branches {
    pub route: PortSet,
    pub granted: PortSet,
    pub pending: PortSet,
    /// The branches in `route` whose output VCs come from `other_mask` instead of the VC's
    /// `vc_mask` (their own dateline class: [`crate::RouteDecision::other`]).
    pub other: PortSet,
    pub other_mask: u16,
}

impl Branches {
    /// The output VCs branch `o` may take, given the VC's `vc_mask`.
    #[inline]
    pub fn vc_mask(&self, o: usize, vc_mask: u16) -> u16 {
        if self.other.contains(PortSet::port(o)) { self.other_mask } else { vc_mask }
    }
}

/// All input VCs of the fabric: control state in one line each, the rings, the statistics.
#[derive(Clone, Debug)]
pub(crate) struct InputUnits {
    pub depth: u16,
    pub vcs: Flat<Vc>,
    /// Per VC, `depth` slots holding the ids of the packets behind its front one.
    pub ring: Flat<u32>,
    /// Histogram entries of levels `HIST_INLINE..depth` (`depth - HIST_INLINE` per VC): the
    /// cycles the occupancy fell below the level less the cycles it reached it (wrapping).
    pub hist_hi: Flat<u64>,
    /// The cycle the in-line entries count from, and what they held before it (per VC and
    /// in-line level; empty until the first rebase).
    pub hist_epoch: u64,
    pub hist_base: Vec<u64>,
    /// [`HIST_SPAN`] (shorter in tests).
    pub hist_span: u64,
    pub stall_credit: Flat<u64>,
    pub stall_arb: Flat<u64>,
    /// Replicated packets' branches, per VC (allocated at the first such packet).
    pub branches: Flat<Branches>,
    /// Asynchronous replication: per VC and branch (network port, or `net_ports` for LOCAL),
    /// how many flits of the front packet the branch has read beyond the front (allocated at
    /// the first such packet; `iv * (net_ports + 1) + branch`), and per VC the FIFO position
    /// read through the crossbar in the cycle it was last read.
    pub branch_pos: Flat<u16>,
    pub read_at: Flat<u16>,
}

impl InputUnits {
    pub fn new(n_vcs: usize, depth: u16) -> InputUnits {
        InputUnits {
            depth,
            vcs: vec![Vc::default(); n_vcs].into(),
            ring: vec![0; n_vcs * depth as usize].into(),
            hist_hi: vec![0; n_vcs * (depth as usize).saturating_sub(HIST_INLINE)].into(),
            hist_epoch: 0,
            hist_base: Vec::new(),
            hist_span: HIST_SPAN,
            stall_credit: vec![0; n_vcs].into(),
            stall_arb: vec![0; n_vcs].into(),
            branches: Flat::new(),
            branch_pos: Flat::new(),
            read_at: Flat::new(),
        }
    }

    /// Bytes of state per input VC (for memory estimates before building).
    pub fn bytes_per_vc(depth: u16) -> usize {
        std::mem::size_of::<Vc>() + depth as usize * 4 + (depth as usize).saturating_sub(HIST_INLINE) * 8 + 2 * 8
    }

    /// Write `flit` behind the flits of VC `iv` (it becomes readable now); true if it is the
    /// front.
    #[inline(always)]
    pub fn write(&mut self, iv: usize, flit: Flit) -> bool {
        let c = &mut self.vcs[iv];
        let len = c.len;
        debug_assert!(len < self.depth, "input VC {iv} overrun");
        c.len = len + 1;
        if len == 0 {
            c.front = flit;
            return true;
        }
        if flit.is_head() {
            // A packet behind the front one: its id into the ring (its body flits follow it).
            let depth = self.depth as usize;
            let slot = c.phead as usize + c.pkts as usize;
            let slot = if slot >= depth { slot - depth } else { slot };
            c.pkts += 1;
            self.ring[iv * depth + slot] = flit.packet.0;
        }
        false
    }

    /// Remove the front flit of VC `iv` (not empty); the next flit comes to the front: the
    /// next of its packet, or after a tail the head of the next packet in the ring. Returns
    /// the flit removed.
    #[inline(always)]
    pub fn pop(&mut self, iv: usize) -> Flit {
        let depth = self.depth as usize;
        let c = &mut self.vcs[iv];
        let flit = c.front;
        c.len -= 1;
        if c.len > 0 {
            if flit.is_tail() {
                let p = self.ring[iv * depth + c.phead as usize];
                c.phead = if c.phead as usize + 1 == depth { 0 } else { c.phead + 1 };
                c.pkts -= 1;
                // Its length is known at RC; a one-flit packet's head gets its tail flag then.
                c.front = Flit { packet: PacketId(p), seq: 0, flags: FlitFlags::HEAD };
            } else {
                let seq = flit.seq + 1;
                c.front.seq = seq;
                c.front.flags = if seq + 1 == c.pkt_len { FlitFlags::TAIL } else { FlitFlags::empty() };
            }
        }
        flit
    }

    /// The flit `k` places behind the front of VC `iv`, within the front packet (asynchronous
    /// replication reads there).
    #[inline]
    pub fn entry_in_front_packet(&self, iv: usize, k: u16) -> Flit {
        let c = &self.vcs[iv];
        debug_assert!(k < c.len && c.front.seq + k < c.pkt_len.max(1));
        if k == 0 { c.front } else { Flit::of(c.front.packet, c.front.seq + k, c.pkt_len) }
    }

    /// The flits of VC `iv` in order (in the FIFO, then those still on their way, which the
    /// caller appends): the rest of the front packet, then the packets of the ring, each
    /// `len_of` long (the last may be cut short by the FIFO's end).
    pub fn flits(&self, iv: usize, len_of: impl Fn(PacketId) -> u16) -> Vec<Flit> {
        let c = &self.vcs[iv];
        let depth = self.depth as usize;
        let mut flits = Vec::with_capacity(c.len as usize);
        let (mut p, mut seq, mut k, mut left) = (c.front.packet, c.front.seq, 0, c.len);
        let mut front_len = if c.routed() { c.pkt_len } else { len_of(p) };
        while left > 0 {
            while left > 0 && seq < front_len {
                flits.push(Flit::of(p, seq, front_len));
                (seq, left) = (seq + 1, left - 1);
            }
            if left > 0 {
                p = PacketId(self.ring[iv * depth + (c.phead as usize + k) % depth]);
                (seq, k) = (0, k + 1);
                front_len = len_of(p);
            }
        }
        flits
    }

    /// A flit sent towards VC `iv` in cycle `t`: the occupancy statistics count it from
    /// `t + 1`. Writing beyond the FIFO's depth is a hardware bug (credit overrun).
    #[inline(always)]
    pub fn count_in(&mut self, iv: usize, t: u64) {
        let depth = self.depth;
        let epoch = self.hist_epoch;
        let c = &mut self.vcs[iv];
        let level = c.occ;
        assert!(level < depth, "input VC {iv} overrun: FIFO of {depth} flits is full (credit protocol violated)");
        let at = t + 1;
        if (level as usize) < HIST_INLINE {
            let h = &mut c.hist[level as usize];
            *h = h.wrapping_sub((at - epoch) as u32);
        } else {
            let e = iv * (depth as usize - HIST_INLINE) + level as usize - HIST_INLINE;
            self.hist_hi[e] = self.hist_hi[e].wrapping_sub(at);
        }
        c.occ = level + 1;
        c.max_len = c.max_len.max(level + 1);
    }

    /// A flit left VC `iv` in cycle `t`: the occupancy statistics count one fewer from `t + 1`.
    #[inline(always)]
    pub fn count_out(&mut self, iv: usize, t: u64) {
        let depth = self.depth as usize;
        let epoch = self.hist_epoch;
        let c = &mut self.vcs[iv];
        let level = c.occ as usize;
        let at = t + 1;
        if level <= HIST_INLINE {
            let h = &mut c.hist[level - 1];
            *h = h.wrapping_add((at - epoch) as u32);
        } else {
            let e = iv * (depth - HIST_INLINE) + level - 1 - HIST_INLINE;
            self.hist_hi[e] = self.hist_hi[e].wrapping_add(at);
        }
        c.occ -= 1;
    }

    /// The statistics of a flit sent towards VC `iv` counted from cycle `at`, made one cycle
    /// late: after cycle `at`, which took a flit from the VC if `popped`. (A fabric split
    /// between threads whose links and credits take two cycles exchanges its boundary flits
    /// every other cycle; nothing reads a flit before it is readable, so only the statistics
    /// can tell.)
    pub fn count_up_late(&mut self, iv: usize, at: u64, popped: bool) {
        // The level in cycle `at` without this flit; it reached x0 + 1 at `at`.
        let x0 = self.vcs[iv].occ as usize + popped as usize;
        assert!(x0 < self.depth as usize, "input VC {iv} overrun: FIFO of {} flits is full (credit protocol violated)", self.depth);
        self.hist_add(iv, x0, at, false);
        if popped {
            // The recorded fall below x0 at `at + 1` was a fall below x0 + 1.
            self.hist_add(iv, x0 - 1, at + 1, false);
            self.hist_add(iv, x0, at + 1, true);
        }
        let c = &mut self.vcs[iv];
        c.occ += 1;
        c.max_len = c.max_len.max(x0 as u16 + 1);
    }

    /// Histogram entry `k` of VC `iv`: `+ at` if `plus`, else `- at`.
    fn hist_add(&mut self, iv: usize, k: usize, at: u64, plus: bool) {
        if k < HIST_INLINE {
            let d = (at - self.hist_epoch) as u32;
            let h = &mut self.vcs[iv].hist[k];
            *h = if plus { h.wrapping_add(d) } else { h.wrapping_sub(d) };
        } else {
            let e = iv * (self.depth as usize - HIST_INLINE) + k - HIST_INLINE;
            self.hist_hi[e] = if plus { self.hist_hi[e].wrapping_add(at) } else { self.hist_hi[e].wrapping_sub(at) };
        }
    }

    /// Histogram entry `k` (`0..depth`) of VC `iv` as a sum of signed cycle numbers
    /// (wrapping): the cycles the occupancy fell below `k + 1` less the cycles it reached it.
    pub fn hist_entry(&self, iv: usize, k: usize) -> u64 {
        let c = &self.vcs[iv];
        if k >= HIST_INLINE {
            return self.hist_hi[iv * (self.depth as usize - HIST_INLINE) + k - HIST_INLINE];
        }
        // Since the epoch: the durations of the intervals at level > k that began in it, less
        // the start of one still open; that one's rise counted from the epoch.
        let since = c.hist[k] as i32 as i64 as u64;
        let open = (c.occ as usize > k) as u64;
        let base = self.hist_base.get(iv * HIST_INLINE + k).copied().unwrap_or(0);
        base.wrapping_add(since).wrapping_sub(open.wrapping_mul(self.hist_epoch))
    }

    /// Count the in-line histogram entries from cycle `t` on (before their 32 bits could
    /// overflow).
    #[cold]
    #[inline(never)]
    pub fn rebase_hist(&mut self, t: u64) {
        if self.hist_base.is_empty() {
            self.hist_base = vec![0; self.vcs.len() * HIST_INLINE];
        }
        let levels = HIST_INLINE.min(self.depth as usize);
        for iv in 0..self.vcs.len() {
            for k in 0..levels {
                let v = self.hist_entry(iv, k);
                // An interval still open is closed at `t` into the base and reopened from `t`.
                let open = (self.vcs[iv].occ as usize > k) as u64;
                self.hist_base[iv * HIST_INLINE + k] = v.wrapping_add(open.wrapping_mul(t));
                self.vcs[iv].hist[k] = 0;
            }
        }
        self.hist_epoch = t;
    }

    /// Cycles VC `iv` has spent at occupancy `l` or more, up to cycle `now`.
    fn cycles_at_least(&self, iv: usize, l: usize, now: u64) -> u64 {
        let (d, occ) = (self.depth as usize, self.vcs[iv].occ as usize);
        match l {
            0 => now,
            l if l > d => 0,
            l => self.hist_entry(iv, l - 1).wrapping_add(if occ >= l { now } else { 0 }),
        }
    }

    /// Cycles VC `iv` has spent at each occupancy 0..=depth, up to cycle `now`.
    pub fn occupancy_histogram(&self, iv: usize, now: u64) -> Vec<u64> {
        let at_least = |l| self.cycles_at_least(iv, l, now);
        (0..=self.depth as usize).map(|l| at_least(l).wrapping_sub(at_least(l + 1))).collect()
    }

    /// Add VC `iv`'s histogram up to cycle `now` into `sum` (no allocation: the levels up to
    /// its high-water mark, the others being empty).
    pub fn add_histogram(&self, iv: usize, now: u64, sum: &mut crate::occupancy::ClassOccupancy) {
        let at_least = |l| self.cycles_at_least(iv, l, now);
        for l in 0..=self.vcs[iv].max_len as usize {
            sum.add(l, at_least(l).wrapping_sub(at_least(l + 1)));
        }
    }

    /// The most flits `iv` held at the end of a cycle up to `now` (the histogram's top
    /// level). Unlike the high-water mark, a flit written and read in the same cycle
    /// (through an injection port with no injection latency) does not count.
    pub fn held_max(&self, iv: usize, now: u64) -> u16 {
        (1..=self.vcs[iv].max_len as usize).rev().find(|&l| self.cycles_at_least(iv, l, now) != 0).unwrap_or(0) as u16
    }

    /// Take VCs `vcs` (FIFOs, control, statistics) from `other`, a copy of these units that
    /// ran them (a part of a fabric split between threads); both count their histograms
    /// from the same epoch.
    pub fn copy_vcs_from(&mut self, other: &InputUnits, vcs: std::ops::Range<usize>) {
        debug_assert_eq!(self.hist_epoch, other.hist_epoch);
        let d = self.depth as usize;
        let h = d.saturating_sub(HIST_INLINE);
        self.vcs[vcs.clone()].copy_from_slice(&other.vcs[vcs.clone()]);
        self.ring[vcs.start * d..vcs.end * d].copy_from_slice(&other.ring[vcs.start * d..vcs.end * d]);
        self.hist_hi[vcs.start * h..vcs.end * h].copy_from_slice(&other.hist_hi[vcs.start * h..vcs.end * h]);
        if !other.hist_base.is_empty() {
            if self.hist_base.is_empty() {
                self.hist_base = vec![0; self.vcs.len() * HIST_INLINE];
            }
            let b = HIST_INLINE;
            self.hist_base[vcs.start * b..vcs.end * b].copy_from_slice(&other.hist_base[vcs.start * b..vcs.end * b]);
        }
        self.stall_credit[vcs.clone()].copy_from_slice(&other.stall_credit[vcs.clone()]);
        self.stall_arb[vcs.clone()].copy_from_slice(&other.stall_arb[vcs.clone()]);
        if !other.branches.is_empty() {
            if self.branches.is_empty() {
                self.branches = vec![Branches::default(); self.vcs.len()].into();
            }
            self.branches[vcs.clone()].copy_from_slice(&other.branches[vcs.clone()]);
        }
        if !other.branch_pos.is_empty() {
            let per = other.branch_pos.len() / self.vcs.len();
            if self.branch_pos.is_empty() {
                self.branch_pos = vec![0; other.branch_pos.len()].into();
                self.read_at = vec![0; self.vcs.len()].into();
            }
            self.branch_pos[vcs.start * per..vcs.end * per].copy_from_slice(&other.branch_pos[vcs.start * per..vcs.end * per]);
            self.read_at[vcs.clone()].copy_from_slice(&other.read_at[vcs]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn vc_is_one_cache_line() {
        assert_eq!(std::mem::size_of::<Vc>(), 64);
    }

    /// A reference histogram kept the plain way: per VC and level, cycles at that level.
    struct Plain {
        level: Vec<usize>,
        since: Vec<u64>,
        cycles: Vec<Vec<u64>>,
        max: Vec<u16>,
    }

    impl Plain {
        fn new(n: usize, depth: usize) -> Plain {
            Plain { level: vec![0; n], since: vec![0; n], cycles: vec![vec![0; depth + 1]; n], max: vec![0; n] }
        }
        /// The level of `iv` becomes `to` from cycle `at` on.
        fn set(&mut self, iv: usize, to: usize, at: u64) {
            self.cycles[iv][self.level[iv]] += at - self.since[iv];
            (self.level[iv], self.since[iv]) = (to, at);
            self.max[iv] = self.max[iv].max(to as u16);
        }
        fn histogram(&self, iv: usize, now: u64) -> Vec<u64> {
            let mut h = self.cycles[iv].clone();
            h[self.level[iv]] += now - self.since[iv];
            h
        }
    }

    proptest! {
        /// The occupancy histogram kept in each VC's line in 32 bits from an epoch, rebased as
        /// runs go on (every few cycles here, every 2^30 in a run), with the levels beyond the
        /// line's in 64 bits, is the histogram of the occupancy over time, for any sequence of
        /// writes, reads and late writes at any cycles.
        #[test]
        fn the_in_line_histogram_is_the_occupancy_over_time(
            depth in 1u16..=12,
            span in 1u64..40,
            ops in proptest::collection::vec((0usize..3, 0u8..4, 0u64..3000), 1..300),
        ) {
            let mut u = InputUnits::new(3, depth);
            u.hist_span = span;
            let mut plain = Plain::new(3, depth as usize);
            let (mut t, mut popped_at, mut last_in) = (0u64, [u64::MAX; 3], [u64::MAX; 3]);
            // Changes recorded one cycle late are applied to the plain histogram in time.
            for (iv, op, dt) in ops {
                t += dt;
                if t - u.hist_epoch >= u.hist_span {
                    u.rebase_hist(t);
                }
                let occ = u.vcs[iv].occ;
                match op {
                    0 | 1 if occ < depth => {
                        u.count_in(iv, t);
                        last_in[iv] = t;
                        plain.set(iv, occ as usize + 1, t + 1);
                    }
                    2 if occ > 0 && plain.since[iv] <= t + 1 => {
                        u.count_out(iv, t);
                        plain.set(iv, occ as usize - 1, t + 1);
                        popped_at[iv] = t;
                    }
                    3 if occ < depth && t > u.hist_epoch && last_in[iv] != t && (popped_at[iv] == t || plain.since[iv] <= t) => {
                        // A flit sent in cycle t - 1 by another part (the only sender into
                        // this VC, so none was sent in t), taken in after cycle t, which
                        // popped one if `popped`: in time, the level rose at t.
                        let popped = popped_at[iv] == t;
                        u.count_up_late(iv, t, popped);
                        if popped {
                            // Plain: +1 at t (over the level before the pop), then -1 at t + 1.
                            let before = plain.level[iv] + 1;
                            plain.cycles[iv][before] -= 1;
                            plain.cycles[iv][before + 1] += 1;
                            plain.max[iv] = plain.max[iv].max(before as u16 + 1);
                            plain.level[iv] += 1;
                        } else {
                            plain.set(iv, occ as usize + 1, t);
                        }
                    }
                    _ => {}
                }
            }
            let now = t + 5;
            for iv in 0..3 {
                prop_assert_eq!(u.occupancy_histogram(iv, now), plain.histogram(iv, now), "VC {} at depth {} span {}", iv, depth, span);
                prop_assert_eq!(u.vcs[iv].max_len, plain.max[iv]);
            }
        }

        /// The FIFO kept as a front flit and a ring of packet ids gives back the flits written,
        /// in order, for any sequence of writes and reads of whole packets' flits.
        #[test]
        fn the_packet_ring_keeps_the_flits_in_order(
            depth in 1u16..8,
            lens in proptest::collection::vec(1u16..6, 1..20),
            ops in proptest::collection::vec(proptest::bool::ANY, 0..120),
        ) {
            let mut u = InputUnits::new(1, depth);
            let all: Vec<Flit> = lens.iter().enumerate().flat_map(|(p, &l)| (0..l).map(move |s| Flit::of(PacketId(p as u32), s, l))).collect();
            let (mut next, mut model) = (0usize, std::collections::VecDeque::new());
            for write in ops {
                if write && next < all.len() && model.len() < depth as usize {
                    u.write(0, all[next]);
                    model.push_back(all[next]);
                    next += 1;
                } else if !write && !model.is_empty() {
                    // RC gives the front packet's length before anything is read.
                    let p = u.vcs[0].front.packet.0 as usize;
                    u.vcs[0].pkt_len = lens[p];
                    if lens[p] == 1 {
                        u.vcs[0].front.flags |= FlitFlags::TAIL;
                    }
                    prop_assert_eq!(u.pop(0), model.pop_front().unwrap());
                }
                if let Some(&f) = model.front() {
                    prop_assert_eq!(u.vcs[0].front.packet, f.packet);
                    prop_assert_eq!(u.vcs[0].front.seq, f.seq);
                }
                let got = u.flits(0, |p| lens[p.0 as usize]);
                prop_assert_eq!(got, model.iter().copied().collect::<Vec<_>>());
            }
        }
    }
}
