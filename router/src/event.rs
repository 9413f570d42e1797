//! Event-driven evaluation of the same routers: a cycle costs in proportion to what happens
//! in it (flits becoming readable, heads routed, grants, flits crossing, credits), not to
//! the routers and VCs that hold flits.
//!
//! It follows the rules of [`Routers::stage_eject`] and [`Routers::stage_network`] for
//! fabrics whose packets all take one branch (unicast), whose links carry one flit a cycle
//! and whose routers have at most 64 input VCs; the fabric's scan kernel stays the reference
//! for everything else, and the tests require both to give the same results and leave the
//! same state. While it runs it keeps the routers' state in a compact form of its own (an
//! input VC in 32 bytes, an output VC in 4, flit rings without ready times) and hands it back
//! to [`Routers`] at the end ([`EventEval::finish`]); the arbiters and the buffer statistics
//! stay in [`Routers`] throughout.
//!
//! What changes is when work is looked at:
//!
//! - A flit enters its input buffer in the cycle it becomes readable (an event `link_latency`
//!   cycles after it was sent, `inject_latency` after the NIC wrote it), so a buffered flit is
//!   a readable one. The buffer statistics still count it from the cycle after it was sent
//!   (a VC's occupancy counts the flits on their way; the VC keeps its occupancy
//!   histogram beside its control state, in the same cache line).
//! - A head reaching the front of an idle VC is routed then; the VC becomes a VC-allocation
//!   requester `rc_delay` cycles later, and a switch-allocation bidder `va_delay` cycles
//!   after its grant (events in a wheel of per-cycle slots, like flits and credits).
//! - Per router, sets of its input VCs by what they wait for: able VC-allocation requesters,
//!   bidders (output VC held, flit buffered), ejection requesters and ejectors. VC and
//!   ejection-channel allocation run only when a requester arrived or an output VC or channel
//!   was freed (a pass that grants nothing changes no state: arbiters move only on grants);
//!   switch allocation only where there are bidders. Per fabric, bitsets of the routers with
//!   such work, visited in id order.
//! - A flit crossing the switch goes straight into the wheel for its downstream buffer, the
//!   credit for its slot into the wheel for its upstream output VC.
//!
//! Within a cycle the order of the two stages is kept: ejection-channel allocation and
//! ejection (stage 1), then the fabric runs the nodes' programs and NICs, then VC allocation
//! and switch allocation (stage 2); all effects between routers go through the wheel.

use crate::flit::{Flit, FlitFlags};
use crate::ids::{NONE, NodeId, PacketId, PortId};
use crate::input_unit::{BufEntry, VcStage};
use crate::params::{RouterParams, Switching};
use crate::port_set::{PortSet, bits};
use crate::route_compute::RouterEnv;
use crate::router::{Ejection, Routers};

/// No owner (an output VC or ejection channel held by no input VC).
const FREE: u8 = u8::MAX;
/// The output "port" of a packet routed to ejection.
const LOCAL_OUT: u8 = u8::MAX;

/// An input VC in one cache line: its front flit and how many readable flits it holds,
/// where the packets behind the front one start in its ring, its occupancy (flits on their
/// way included) and high-water mark, the front packet's route and grants, and the bottom of
/// its occupancy histogram. Fields the scan kernel keeps after a packet has gone (`ovc`,
/// `eject_ch`, `vc_mask`, `pkt_len`, `sa_ready`, `va_open`) keep their last values here
/// too, so that the state handed back is the same.
///
/// The flits of a VC are consecutive flits of consecutive packets (a VC takes a new packet
/// only after the last one's tail), so it keeps the front flit and, for the packets behind
/// the front one, their ids ([`EventEval::ring`]): a body flit arriving behind the front
/// needs no slot, and the flit after a popped one is the next of its packet, or after a tail
/// the head of the next packet in the ring.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
struct Vc {
    front: Flit,
    /// Earliest cycle of VC allocation (RC done), then of switch allocation (VA done).
    sa_ready: u64,
    /// The ring slot of the first packet behind the front one, and how many there are.
    phead: u16,
    pkts: u16,
    /// Readable flits, the front one included.
    len: u16,
    /// Flits buffered or on their way into the VC (sent, not readable yet): the occupancy the
    /// statistics count.
    occ: u16,
    pkt_len: u16,
    vc_mask: u16,
    max_len: u16,
    /// Output port of the routed packet, [`LOCAL_OUT`] for ejection.
    out: u8,
    ovc: u8,
    eject_ch: u8,
    /// [`ROUTED`], [`GRANTED`] (the output VC or ejection channel is held), [`VA_OPEN`].
    flags: u8,
    _pad: u16,
    /// Occupancy levels `0..HIST_INLINE` of the histogram, as [`InputUnits`] keeps them
    /// (crate::InputUnits) but counted from [`EventEval::hist_epoch`] in 32 bits.
    hist: [u32; HIST_INLINE],
}

const ROUTED: u8 = 1;
const GRANTED: u8 = 2;
const VA_OPEN: u8 = 4;
/// Occupancy levels whose histogram entries an input VC keeps in its own cache line (the
/// others, for deeper buffers, in [`EventEval::hist_hi`]).
const HIST_INLINE: usize = 7;
/// The in-line histogram entries are rebased to a new epoch this often (cycles), so that
/// what they hold (durations since the epoch, less the start of an interval still open)
/// stays within 32 bits.
const HIST_SPAN: u64 = 1 << 30;

impl Vc {
    #[inline(always)]
    fn routed(&self) -> bool {
        self.flags & ROUTED != 0
    }
    #[inline(always)]
    fn granted(&self) -> bool {
        self.flags & GRANTED != 0
    }
    #[inline(always)]
    fn set(&mut self, flag: u8, on: bool) {
        self.flags = if on { self.flags | flag } else { self.flags & !flag };
    }
}

const _: () = assert!(std::mem::size_of::<Vc>() == 64, "an input VC in one cache line");

/// An output VC: free slots downstream as this router sees them, and the local input VC
/// holding it ([`FREE`] if none). For an ejection channel, its VC 0's entry says who holds it.
#[derive(Clone, Copy, Debug)]
struct Ov {
    credits: u16,
    owner: u8,
}

/// One router's work, as sets of its input VCs (bit `port * vcs + vc`): one cache line.
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(64))]
struct Work {
    /// Routed to a network output, holding its output VC, able to bid (`sa_ready` passed), a
    /// flit buffered (and, store-and-forward at a network input, the whole packet).
    bid: u64,
    /// Routed to ejection, holding a channel, able (`sa_ready` passed), a flit buffered.
    ejbid: u64,
    /// Able VC-allocation requesters for a network output (`rc_delay` passed, no VC yet).
    va_req: u64,
    /// Able requesters of an ejection channel.
    ej_req: u64,
    /// Ejection channels held (bit per channel).
    ej_owned: u64,
    /// VCs whose input port was read by an ejection in cycle `blocked_at`.
    blocked: u64,
    blocked_at: u64,
    /// VC allocation (network) / ejection-channel allocation must run at the next stage.
    va_dirty: bool,
    ej_dirty: bool,
}

/// What happens at the start of a cycle, filed by cycle in the wheel.
#[derive(Clone, Debug, Default)]
struct Slot {
    /// A flit becomes readable in an input VC ([`vcr`]).
    arrivals: Vec<(u32, Flit)>,
    /// A credit becomes visible at an output VC ([`vcr`] of its router and local index
    /// `port * vcs + vc`).
    credits: Vec<u32>,
    /// A routed VC becomes an able VC-allocation requester (its `rc_delay` passed).
    va_joins: Vec<u32>,
    /// A VC that holds its output VC (or channel) may bid (its `va_delay` passed).
    sa_joins: Vec<u32>,
}

/// The wheel slots a stage files into while it runs: the arrivals of the flits it sends (all
/// `link_latency` on) and the credits for the slots it frees (all `1 + credit_delay` on).
struct Filing {
    arrivals: Vec<(u32, Flit)>,
    credits: Vec<u32>,
}

/// Input VC `l` of router `r` as the events name it: `r << 6 | l` (no division to find the
/// router again).
#[inline(always)]
fn vcr(r: usize, l: usize) -> u32 {
    (r << 6 | l) as u32
}

/// The router and local VC of [`vcr`] `x`.
#[inline(always)]
fn unvcr(x: u32) -> (usize, usize) {
    ((x >> 6) as usize, (x & 63) as usize)
}

/// The longest delay (cycles) the wheel covers: longer pipelines run on the scan kernel.
pub const MAX_EVENT_DELAY: u64 = 1 << 16;

/// The event-driven evaluation of a fabric's [`Routers`].
#[derive(Clone, Debug)]
pub struct EventEval {
    work: Vec<Work>,
    /// Routers whose stage 2 (VC allocation, switch allocation) / stage 1 (ejection-channel
    /// allocation, ejection) has work: bit `r`.
    net_work: Vec<u64>,
    ej_work: Vec<u64>,
    /// Input VCs (global index), and per VC a ring of `depth` slots holding the ids of the
    /// packets behind its front one ([`Vc`]).
    vcs: Vec<Vc>,
    ring: Vec<u32>,
    /// Output VCs (global index `port * vcs + vc`).
    ovs: Vec<Ov>,
    /// Occupancy histogram entries of levels `HIST_INLINE..depth` (`depth - HIST_INLINE` per
    /// VC, as [`crate::InputUnits`] keeps them), and the epoch the in-line ones count from,
    /// with what they held before it (per VC and in-line level).
    hist_hi: Vec<u64>,
    hist_epoch: u64,
    hist_base: Vec<u64>,
    /// [`HIST_SPAN`] (shorter in tests).
    hist_span: u64,
    /// Per output port: the [`vcr`] of VC 0 of the input port it feeds (`NONE` if none).
    down: Vec<u32>,
    /// Per input port: the [`vcr`] of VC 0 of the upstream output port feeding it (its
    /// router and local output VC index; `NONE` if none).
    up: Vec<u32>,
    /// Flits sent on each output port, flits over router-to-router links, and those that
    /// were tails (packets over links).
    sent: Vec<u64>,
    /// The routers this evaluation runs (all, or one part of a fabric split between
    /// threads): flits and credits for the others leave through `remote_flits` and
    /// `remote_credits` (this cycle's), and come back through [`EventEval::receive_flit`]
    /// and [`EventEval::receive_credit`].
    lo: u32,
    hi: u32,
    pub remote_flits: Vec<(u32, Flit)>,
    pub remote_credits: Vec<u32>,
    /// Per input VC fed from another part: the last cycle a flit left it.
    popped_at: Vec<u64>,
    pub hops: u64,
    pub tails: u64,
    /// Idle VCs whose next head reached the front by a tail leaving in the previous cycle:
    /// routed at the start of this one.
    rc_next: Vec<u32>,
    rc_now: Vec<u32>,
    /// Injection VCs written this cycle with no injection latency whose front changed.
    inj_front: Vec<u32>,
    /// Per output port: the VCs requesting it in the allocation under way (valid for the
    /// outputs it marked).
    req: [u64; 64],
    /// Per local VC: its input port, its VC, and the VCs of its input port.
    port_of: [u8; 64],
    vc_of: [u8; 64],
    port_vcs: [u64; 64],
    /// The network output that picks first in switch allocation in cycle `sa_cycle`.
    sa_first: u32,
    sa_cycle: u64,
    slots: Vec<Slot>,
    mask: u64,
    /// Every slot up to this cycle has been processed.
    done: u64,
    /// Flits buffered or on their way into a buffer.
    pub flits: u64,
    // Shape and parameters.
    v: usize,
    p: usize,
    npv: usize,
    net: usize,
    net_vcs: usize,
    depth: u16,
    all_channels: u64,
    switching: Switching,
    rc_delay: u64,
    va_delay: u64,
    link_latency: u64,
    credit_delay: u64,
    inject_latency: u64,
}

/// A flit left input VC `iv` (its state `c`) in cycle `t`: its occupancy statistics count one
/// fewer from `t + 1` (the in-line entries counted from `epoch`, the deeper ones in `hi`).
#[inline(always)]
fn count_out(c: &mut Vc, hi: &mut [u64], iv: usize, depth: usize, epoch: u64, t: u64) {
    let level = c.occ as usize;
    let at = t + 1;
    if level <= HIST_INLINE {
        let h = &mut c.hist[level - 1];
        *h = h.wrapping_add((at - epoch) as u32);
    } else {
        let e = iv * (depth - HIST_INLINE) + level - 1 - HIST_INLINE;
        hi[e] = hi[e].wrapping_add(at);
    }
    c.occ -= 1;
}

impl EventEval {
    /// Why routers of parameters `p` cannot be evaluated event by event (None if they can).
    /// Packets that the routers replicate are the fabric's to rule out.
    pub fn unsupported(p: &RouterParams) -> Option<String> {
        let pl = &p.pipeline;
        let npv = p.ports() * p.vcs as usize;
        let longest = [pl.rc_delay, pl.va_delay, pl.link_latency, pl.credit_delay + 1, pl.inject_latency].into_iter().max().unwrap_or(0);
        if p.link_width != 1 {
            Some(format!("links of {} flits a cycle (nu > 0)", p.link_width))
        } else if npv > 64 {
            Some(format!("routers of {npv} input VCs (more than 64)"))
        } else if longest as u64 >= MAX_EVENT_DELAY {
            Some(format!("a pipeline delay of {longest} cycles (at most {})", MAX_EVENT_DELAY - 1))
        } else {
            None
        }
    }

    /// The evaluation of `routers`, which must be in their initial state (see
    /// [`EventEval::unsupported`]), linked by `down` (the input port each output port feeds,
    /// global indices, `NONE` if none) and `up` (the output port feeding each input port).
    pub fn new(routers: &Routers, down: &[u32], up: &[u32]) -> EventEval {
        assert!(Self::unsupported(&routers.params).is_none(), "{:?}", Self::unsupported(&routers.params));
        let pl = routers.params.pipeline;
        let longest = [pl.rc_delay, pl.va_delay, pl.link_latency, pl.credit_delay + 1, pl.inject_latency].into_iter().max().unwrap_or(0);
        let n_slots = (longest as usize + 1).next_power_of_two();
        let n = routers.n;
        let (v, p, npv) = (routers.nv, routers.np, routers.npv);
        let k = routers.nk;
        let depth = routers.params.buffer_flits;
        let mut port_of = [0u8; 64];
        let mut vc_of = [0u8; 64];
        let mut port_vcs = [0u64; 64];
        for l in 0..npv {
            port_of[l] = (l / v) as u8;
            vc_of[l] = (l % v) as u8;
            port_vcs[l] = ((1u64 << v) - 1) << (l / v * v);
        }
        // Ports as the events name them: router and local VC index (of VC 0).
        let named = |ports: &[u32]| ports.iter().map(|&x| if x == NONE { NONE } else { vcr(x as usize / p, x as usize % p * v) }).collect();
        let (down, up) = (named(down), named(up));
        EventEval {
            work: vec![Work::default(); n],
            net_work: vec![0; n.div_ceil(64)],
            ej_work: vec![0; n.div_ceil(64)],
            vcs: vec![Vc::default(); n * npv],
            ring: vec![0; n * npv * depth as usize],
            ovs: vec![Ov { credits: depth, owner: FREE }; n * p * v],
            hist_hi: vec![0; n * npv * (depth as usize).saturating_sub(HIST_INLINE)],
            hist_epoch: 0,
            hist_base: Vec::new(),
            hist_span: HIST_SPAN,
            down,
            up,
            sent: vec![0; n * p],
            lo: 0,
            hi: n as u32,
            remote_flits: Vec::new(),
            remote_credits: Vec::new(),
            popped_at: Vec::new(),
            hops: 0,
            tails: 0,
            rc_next: Vec::new(),
            rc_now: Vec::new(),
            inj_front: Vec::new(),
            req: [0; 64],
            port_of,
            vc_of,
            port_vcs,
            sa_first: 0,
            sa_cycle: u64::MAX,
            slots: vec![Slot::default(); n_slots],
            mask: n_slots as u64 - 1,
            done: 0,
            flits: 0,
            v,
            p,
            npv,
            net: routers.nnet,
            net_vcs: routers.net_vcs,
            depth,
            all_channels: if k >= 64 { !0 } else { (1u64 << k) - 1 },
            switching: routers.params.switching,
            rc_delay: pl.rc_delay as u64,
            va_delay: pl.va_delay as u64,
            link_latency: pl.link_latency as u64,
            credit_delay: pl.credit_delay as u64,
            inject_latency: pl.inject_latency as u64,
        }
    }

    #[inline(always)]
    fn slot(&mut self, at: u64) -> &mut Slot {
        debug_assert!(at > self.done && at - self.done <= self.mask, "event at {at} outside the wheel after {}", self.done);
        &mut self.slots[(at & self.mask) as usize]
    }

    #[inline(always)]
    fn set_net_work(&mut self, r: usize) {
        self.net_work[r >> 6] |= 1 << (r & 63);
    }

    #[inline(always)]
    fn set_ej_work(&mut self, r: usize) {
        self.ej_work[r >> 6] |= 1 << (r & 63);
    }

    /// Rebase the in-line histograms every `span` cycles instead of every [`HIST_SPAN`] (for
    /// tests: results do not depend on it).
    #[doc(hidden)]
    pub fn set_hist_span(&mut self, span: u64) {
        self.hist_span = span.clamp(1, HIST_SPAN);
    }

    /// Run only routers `lo..hi` (one part of a fabric split between threads).
    pub fn set_part(&mut self, lo: usize, hi: usize) {
        (self.lo, self.hi) = (lo as u32, hi as u32);
        self.popped_at = vec![u64::MAX; self.vcs.len()];
    }

    /// Is router [`vcr`] `x`'s another part's?
    #[inline(always)]
    fn remote(&self, x: u32) -> bool {
        let r = x >> 6;
        r < self.lo || r >= self.hi
    }

    /// A flit another part sent in cycle `sent` into input VC `l` of this part's router `r`
    /// (its packet id already this part's), taken in after this part's cycle `now` (`sent`,
    /// or `sent + 1` when the parts meet every other cycle: the flit cannot be read before
    /// `sent + 2`, and the statistics are made those of a write in time).
    pub fn receive_flit(&mut self, r: usize, l: usize, flit: Flit, sent: u64, now: u64) {
        let iv = r * self.npv + l;
        if sent == now {
            self.count_in(iv, sent);
        } else {
            debug_assert!(sent + 1 == now && self.link_latency >= 2, "a flit of cycle {sent} taken in after cycle {now}");
            self.count_up_late(iv, sent + 1, self.popped_at[iv] == now);
        }
        let at = sent + self.link_latency;
        self.slot(at).arrivals.push((vcr(r, l), flit));
    }

    /// A credit for output VC `k` (`port * vcs + vc`) of this part's router `r`, for a slot
    /// another part freed in cycle `freed`.
    pub fn receive_credit(&mut self, r: usize, k: usize, freed: u64) {
        let at = freed + 1 + self.credit_delay;
        self.slot(at).credits.push(vcr(r, k));
    }

    /// Is there nothing at all in the routers (no flit buffered or on its way)?
    pub fn is_empty(&self) -> bool {
        self.flits == 0
    }

    /// Flits sent so far on each output port (global index).
    pub fn port_flits(&self) -> &[u64] {
        &self.sent
    }

    /// Start cycle `t`: everything due by `t` happens (flits become readable, credits
    /// visible, VCs become requesters and bidders), and heads that reached the front in the
    /// previous cycle are routed.
    pub fn begin_cycle<E: RouterEnv>(&mut self, routers: &mut Routers, t: u64, env: &E) {
        if t - self.hist_epoch >= self.hist_span {
            self.rebase_hist(t);
        }
        // Nothing is filed further ahead than the wheel spans: past that, no slot holds anything.
        let last = t.min(self.done + self.mask);
        while self.done < last {
            let c = self.done + 1;
            self.done = c;
            let i = (c & self.mask) as usize;
            let mut slot = std::mem::take(&mut self.slots[i]);
            for &x in &slot.credits {
                let (r, k) = unvcr(x);
                let o = &mut self.ovs[r * self.npv + k];
                o.credits += 1;
                debug_assert!(o.credits <= self.depth, "output VC {k} of router {r} has more credits than the downstream buffer holds");
            }
            for &(x, flit) in &slot.arrivals {
                let (r, l) = unvcr(x);
                self.arrive(routers, r, l, flit, c, env);
            }
            for &x in &slot.va_joins {
                let (r, l) = unvcr(x);
                self.va_join(r, l);
            }
            for &x in &slot.sa_joins {
                let (r, l) = unvcr(x);
                self.check_bid(r, l, c);
            }
            slot.credits.clear();
            slot.arrivals.clear();
            slot.va_joins.clear();
            slot.sa_joins.clear();
            self.slots[i] = slot;
        }
        self.done = self.done.max(t);
        if !self.rc_next.is_empty() {
            std::mem::swap(&mut self.rc_next, &mut self.rc_now);
            for i in 0..self.rc_now.len() {
                let (r, l) = unvcr(self.rc_now[i]);
                self.route_front(routers, r, l, t, env);
            }
            self.rc_now.clear();
        }
    }

    /// Write `flit` behind the flits of input VC `iv`; true if it is the front.
    #[inline(always)]
    fn write(&mut self, iv: usize, flit: Flit) -> bool {
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

    /// A flit becomes readable in input VC `l` of router `r` in cycle `t`.
    #[inline]
    fn arrive<E: RouterEnv>(&mut self, routers: &mut Routers, r: usize, l: usize, flit: Flit, t: u64, env: &E) {
        if self.write(r * self.npv + l, flit) {
            self.front_arrived(routers, r, l, t, env);
        } else if self.switching == Switching::StoreAndForward {
            // A store-and-forward head may bid once its whole packet is in.
            self.check_bid(r, l, t);
        }
    }

    /// Input VC `l` of router `r` was empty and has a flit at its front in cycle `t`.
    #[inline]
    fn front_arrived<E: RouterEnv>(&mut self, routers: &mut Routers, r: usize, l: usize, t: u64, env: &E) {
        if !self.vcs[r * self.npv + l].routed() {
            self.route_front(routers, r, l, t, env);
        } else {
            self.check_bid(r, l, t);
        }
    }

    /// Route computation for the head at the front of idle input VC `l` of router `r` in
    /// cycle `t`.
    fn route_front<E: RouterEnv>(&mut self, routers: &mut Routers, r: usize, l: usize, t: u64, env: &E) {
        let iv = r * self.npv + l;
        let head = self.vcs[iv].front;
        assert!(head.is_head(), "router {r} input VC {l}: body flit {head:?} at the front of an idle VC");
        let (rd, meta) = env.route(NodeId(r as u32), PortId(self.port_of[l]), head.packet);
        assert!(rd.ports.bits().is_power_of_two(), "router {r}: the event kernel routes unicast packets only, got {:?}", rd.ports);
        let c = &mut self.vcs[iv];
        c.flags = ROUTED;
        c.out = if rd.ports == PortSet::LOCAL { LOCAL_OUT } else { rd.ports.bits().trailing_zeros() as u8 };
        c.vc_mask = rd.vc_mask;
        c.pkt_len = meta.len;
        if meta.len == 1 {
            // A head that reached the front after a tail was made without its packet's length.
            c.front.flags |= FlitFlags::TAIL;
        }
        c.sa_ready = t + self.rc_delay;
        routers.inputs.rank[iv] = (meta.key, meta.birth);
        if self.rc_delay == 0 {
            self.va_join(r, l);
        } else {
            self.slot(t + self.rc_delay).va_joins.push(vcr(r, l));
        }
    }

    /// Routed input VC `l` of router `r` may now be allocated its output VC or ejection
    /// channel.
    #[inline]
    fn va_join(&mut self, r: usize, l: usize) {
        let local = self.vcs[r * self.npv + l].out == LOCAL_OUT;
        let w = &mut self.work[r];
        if local {
            w.ej_req |= 1 << l;
            w.ej_dirty = true;
            self.set_ej_work(r);
        } else {
            w.va_req |= 1 << l;
            w.va_dirty = true;
            self.set_net_work(r);
        }
    }

    /// Make input VC `l` of router `r` a bidder (or ejector) in cycle `t` if it is one:
    /// routed, holding its output VC or channel, able, a flit buffered, and a
    /// store-and-forward head at a network input with its whole packet in.
    #[inline]
    fn check_bid(&mut self, r: usize, l: usize, t: u64) {
        let c = &self.vcs[r * self.npv + l];
        if !c.granted() || c.sa_ready > t || c.len == 0 {
            return;
        }
        if c.out == LOCAL_OUT {
            self.work[r].ejbid |= 1 << l;
            self.set_ej_work(r);
            return;
        }
        if self.switching == Switching::StoreAndForward && l < self.net_vcs && c.front.is_head() && c.len < c.pkt_len {
            return;
        }
        self.work[r].bid |= 1 << l;
        self.set_net_work(r);
    }

    /// A flit written towards input VC `iv` in cycle `t`: the occupancy statistics count it
    /// from `t + 1`.
    #[inline(always)]
    fn count_in(&mut self, iv: usize, t: u64) {
        let depth = self.depth;
        let c = &mut self.vcs[iv];
        let level = c.occ;
        assert!(level < depth, "input VC {iv} overrun: FIFO of {depth} flits is full (credit protocol violated)");
        let at = t + 1;
        if (level as usize) < HIST_INLINE {
            let h = &mut c.hist[level as usize];
            *h = h.wrapping_sub((at - self.hist_epoch) as u32);
        } else {
            let e = iv * (depth as usize - HIST_INLINE) + level as usize - HIST_INLINE;
            self.hist_hi[e] = self.hist_hi[e].wrapping_sub(at);
        }
        c.occ = level + 1;
        c.max_len = c.max_len.max(level + 1);
        self.flits += 1;
    }

    /// A flit left input VC `iv` in cycle `t`: the occupancy statistics count one fewer from
    /// `t + 1`.
    #[cfg(test)]
    fn count_out(&mut self, iv: usize, t: u64) {
        count_out(&mut self.vcs[iv], &mut self.hist_hi, iv, self.depth as usize, self.hist_epoch, t);
        self.flits -= 1;
    }

    /// The statistics of a flit written towards input VC `iv` from cycle `at`, made one
    /// cycle late: after cycle `at`, which took a flit from the VC if `popped` (see
    /// [`crate::InputUnits::push_late`]).
    fn count_up_late(&mut self, iv: usize, at: u64, popped: bool) {
        // The level in cycle `at` without this flit; it reached x0 + 1 at `at`.
        let x0 = self.vcs[iv].occ as usize + popped as usize;
        self.hist_add(iv, x0, at, false);
        if popped {
            // The recorded fall below x0 at `at + 1` was a fall below x0 + 1.
            self.hist_add(iv, x0 - 1, at + 1, false);
            self.hist_add(iv, x0, at + 1, true);
        }
        let c = &mut self.vcs[iv];
        c.occ += 1;
        c.max_len = c.max_len.max(x0 as u16 + 1);
        self.flits += 1;
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

    /// The in-line histogram entries' values as [`crate::InputUnits`] keeps them (sums of
    /// signed cycle numbers, wrapping), per VC and in-line level.
    fn hist_values(&self) -> impl Iterator<Item = (usize, usize, u64)> + '_ {
        let levels = HIST_INLINE.min(self.depth as usize);
        let e = self.hist_epoch;
        self.vcs.iter().enumerate().flat_map(move |(iv, c)| {
            (0..levels).map(move |k| {
                // Since the epoch: the durations of the intervals at level > k that began in it,
                // less the start of one still open; that one's rise counted from the epoch.
                let since = c.hist[k] as i32 as i64 as u64;
                let open = (c.occ as usize > k) as u64;
                let base = self.hist_base.get(iv * HIST_INLINE + k).copied().unwrap_or(0);
                (iv, k, base.wrapping_add(since).wrapping_sub(open.wrapping_mul(e)))
            })
        })
    }

    /// Count the in-line histogram entries from cycle `t` on (before their 32 bits could
    /// overflow).
    #[cold]
    #[inline(never)]
    fn rebase_hist(&mut self, t: u64) {
        let values: Vec<(usize, usize, u64)> = self.hist_values().collect();
        if self.hist_base.is_empty() {
            self.hist_base = vec![0; self.vcs.len() * HIST_INLINE];
        }
        for (iv, k, v) in values {
            // An interval still open is closed at `t` into the base and reopened from `t`.
            let open = (self.vcs[iv].occ as usize > k) as u64;
            self.hist_base[iv * HIST_INLINE + k] = v.wrapping_add(open.wrapping_mul(t));
            self.vcs[iv].hist[k] = 0;
        }
        self.hist_epoch = t;
    }

    /// Can the NIC write a flit into injection channel `ch` of router `r`?
    #[inline]
    pub fn injection_has_room(&self, r: NodeId, ch: usize) -> bool {
        self.vcs[r.idx() * self.npv + (self.net + ch) * self.v].occ < self.depth
    }

    /// The NIC writes a flit into injection channel `ch` of router `r` in cycle `t`,
    /// readable from `t + inject_latency`. False when full. Heads written with no latency are
    /// routed by [`EventEval::after_injection`].
    pub fn inject(&mut self, r: NodeId, ch: usize, flit: Flit, t: u64) -> bool {
        if !self.injection_has_room(r, ch) {
            return false;
        }
        let l = (self.net + ch) * self.v;
        let iv = r.idx() * self.npv + l;
        self.count_in(iv, t);
        if self.inject_latency == 0 {
            if self.write(iv, flit) {
                self.inj_front.push(vcr(r.idx(), l));
            }
        } else {
            let at = t + self.inject_latency;
            self.slot(at).arrivals.push((vcr(r.idx(), l), flit));
        }
        true
    }

    /// After the NICs' injections of cycle `t`: route computation for heads that reached the
    /// front of their injection VC (stage 2's route computation).
    pub fn after_injection<E: RouterEnv>(&mut self, routers: &mut Routers, t: u64, env: &E) {
        for i in 0..self.inj_front.len() {
            let (r, l) = unvcr(self.inj_front[i]);
            self.front_arrived(routers, r, l, t, env);
        }
        self.inj_front.clear();
    }

    /// Stage 1 of cycle `t` in every router with work there: ejection-channel allocation and
    /// ejection. Ejected flits are appended to `ejected` with their router.
    pub fn eject_stage(&mut self, routers: &mut Routers, t: u64, ejected: &mut Vec<(NodeId, Ejection)>) {
        let _ = self.slot(t + 1 + self.credit_delay);
        let ci = ((t + 1 + self.credit_delay) & self.mask) as usize;
        let mut credits = std::mem::take(&mut self.slots[ci].credits);
        for wi in 0..self.ej_work.len() {
            let mut m = self.ej_work[wi];
            while m != 0 {
                let r = wi * 64 + m.trailing_zeros() as usize;
                m &= m - 1;
                self.eject_router(routers, r, t, ejected, &mut credits);
                let w = &self.work[r];
                if w.ejbid == 0 && !w.ej_dirty {
                    self.ej_work[wi] &= !(1 << (r & 63));
                }
            }
        }
        self.slots[ci].credits = credits;
    }

    fn eject_router(&mut self, routers: &mut Routers, r: usize, t: u64, ejected: &mut Vec<(NodeId, Ejection)>, credits: &mut Vec<u32>) {
        let w = &mut self.work[r];
        if w.ej_dirty {
            w.ej_dirty = false;
            if w.ej_req != 0 && !w.ej_owned & self.all_channels != 0 {
                self.allocate_ejection(routers, r, t);
            }
        }
        let mut owned = self.work[r].ej_owned;
        while owned != 0 {
            let ch = owned.trailing_zeros() as usize;
            owned &= owned - 1;
            let ov = (r * self.p + self.net + ch) * self.v;
            let l = self.ovs[ov].owner as usize;
            let w = &mut self.work[r];
            if w.ejbid & (1 << l) == 0 {
                continue;
            }
            // The crossbar reads one flit of an input port a cycle.
            if w.blocked_at == t && w.blocked & (1 << l) != 0 {
                continue;
            }
            if w.blocked_at != t {
                w.blocked_at = t;
                w.blocked = 0;
            }
            w.blocked |= self.port_vcs[l];
            let c = &mut self.vcs[r * self.npv + l];
            let flit = c.front;
            ejected.push((NodeId(r as u32), Ejection { channel: ch as u8, flit }));
            if flit.is_tail() {
                c.set(GRANTED, false);
                self.ovs[ov].owner = FREE;
                w.ej_owned &= !(1 << ch);
                if w.ej_req != 0 {
                    w.ej_dirty = true;
                }
            }
            self.pop_front(r, l, t, credits);
        }
    }

    /// Give each free ejection channel of router `r` to one able requester.
    fn allocate_ejection(&mut self, routers: &mut Routers, r: usize, t: u64) {
        let base = r * self.npv;
        let policy = routers.params.arbiter;
        let mut free = !self.work[r].ej_owned & self.all_channels;
        while free != 0 && self.work[r].ej_req != 0 {
            let ch = free.trailing_zeros() as usize;
            free &= free - 1;
            let op = r * self.p + self.net + ch;
            let want = self.work[r].ej_req;
            let inputs = &routers.inputs;
            let Some(l) = routers.outputs.va_arb[op].arbitrate(policy, want, |l| inputs.rank[base + l]) else {
                break;
            };
            self.ovs[op * self.v].owner = l as u8;
            let c = &mut self.vcs[base + l];
            c.flags |= GRANTED | VA_OPEN;
            c.eject_ch = ch as u8;
            c.sa_ready = c.sa_ready.max(t + self.va_delay);
            routers.outputs.va_arb[op].grant_accepted(self.npv, l);
            let w = &mut self.work[r];
            w.ej_req &= !(1 << l);
            w.ej_owned |= 1 << ch;
            self.granted(r, l, t);
        }
    }

    /// Input VC `l` of router `r` was granted its output VC or channel in cycle `t`: it may
    /// bid from `t + va_delay`.
    #[inline]
    fn granted(&mut self, r: usize, l: usize, t: u64) {
        if self.va_delay == 0 {
            self.check_bid(r, l, t);
        } else {
            self.slot(t + self.va_delay).sa_joins.push(vcr(r, l));
        }
    }

    /// Stage 2 of cycle `t` in every router with work there: VC allocation, and switch
    /// allocation with crossbar traversal (flits into the wheel for their downstream buffers,
    /// credits for their upstream output VCs).
    pub fn network_stage(&mut self, routers: &mut Routers, t: u64) {
        // The flits sent this cycle are counted in their downstream buffers once every router
        // has popped its own (a slot's occupancy goes down before it goes up within a cycle).
        let at = t + self.link_latency;
        let _ = self.slot(at);
        let _ = self.slot(t + 1 + self.credit_delay);
        // The slots the stage files into, held for its duration (its flits all arrive at
        // `at`, its credits one `credit_delay` after the next cycle).
        let i = (at & self.mask) as usize;
        let ci = ((t + 1 + self.credit_delay) & self.mask) as usize;
        let mut filed =
            Filing { arrivals: std::mem::take(&mut self.slots[i].arrivals), credits: std::mem::take(&mut self.slots[ci].credits) };
        let sent_from = filed.arrivals.len();
        for wi in 0..self.net_work.len() {
            let mut m = self.net_work[wi];
            while m != 0 {
                let r = wi * 64 + m.trailing_zeros() as usize;
                m &= m - 1;
                if self.work[r].va_dirty {
                    self.work[r].va_dirty = false;
                    if self.work[r].va_req != 0 {
                        self.allocate_network_vcs(routers, r, t);
                    }
                }
                if self.work[r].bid != 0 {
                    self.allocate_switch(routers, r, t, &mut filed);
                }
                let w = &self.work[r];
                if w.bid == 0 && !w.va_dirty {
                    self.net_work[wi] &= !(1 << (r & 63));
                }
            }
        }
        for &(x, _) in &filed.arrivals[sent_from..] {
            let (r, l) = unvcr(x);
            self.count_in(r * self.npv + l, t);
        }
        self.slots[i].arrivals = filed.arrivals;
        self.slots[ci].credits = filed.credits;
    }

    /// Give each free output VC of router `r`'s network ports to one able requester whose
    /// `vc_mask` allows it.
    fn allocate_network_vcs(&mut self, routers: &mut Routers, r: usize, t: u64) {
        let base = r * self.npv;
        let reqs = self.work[r].va_req;
        if reqs & reqs.wrapping_sub(1) == 0 {
            // One requester: the lowest free output VC its mask allows, if any (every
            // arbiter grants a lone requester).
            let l = reqs.trailing_zeros() as usize;
            let c = &self.vcs[base + l];
            let (o, mask) = (c.out as usize, c.vc_mask);
            let op = r * self.p + o;
            if let Some(vc) = (0..self.v).find(|&vc| mask & (1 << vc) != 0 && self.ovs[op * self.v + vc].owner == FREE) {
                self.grant_vc(routers, r, l, o, vc, t);
            }
            return;
        }
        let policy = routers.params.arbiter;
        let mut outs = 0u64;
        for l in bits(self.work[r].va_req) {
            let o = self.vcs[base + l].out as usize;
            if outs & (1 << o) == 0 {
                outs |= 1 << o;
                self.req[o] = 0;
            }
            self.req[o] |= 1 << l;
        }
        for o in bits(outs) {
            let op = r * self.p + o;
            for vc in 0..self.v {
                let ov = op * self.v + vc;
                if self.ovs[ov].owner != FREE {
                    continue;
                }
                if self.req[o] == 0 {
                    break;
                }
                let mut want = 0u64;
                for l in bits(self.req[o]) {
                    if self.vcs[base + l].vc_mask & (1 << vc) != 0 {
                        want |= 1 << l;
                    }
                }
                if want == 0 {
                    continue;
                }
                let inputs = &routers.inputs;
                let Some(l) = routers.outputs.va_arb[op].arbitrate(policy, want, |l| inputs.rank[base + l]) else {
                    continue;
                };
                self.req[o] &= !(1 << l);
                self.grant_vc(routers, r, l, o, vc, t);
            }
        }
    }

    /// Output VC `vc` of network output `o` of router `r` goes to input VC `l` in cycle `t`.
    #[inline(always)]
    fn grant_vc(&mut self, routers: &mut Routers, r: usize, l: usize, o: usize, vc: usize, t: u64) {
        let op = r * self.p + o;
        self.ovs[op * self.v + vc].owner = l as u8;
        let c = &mut self.vcs[r * self.npv + l];
        c.flags |= GRANTED | VA_OPEN;
        c.ovc = vc as u8;
        c.sa_ready = c.sa_ready.max(t + self.va_delay);
        routers.outputs.va_arb[op].grant_accepted(self.npv, l);
        self.work[r].va_req &= !(1 << l);
        self.granted(r, l, t);
    }

    /// Switch allocation on router `r`'s network outputs (separable, output first; outputs
    /// take turns by cycle at picking first; an input port's flits cross one a cycle) and
    /// crossbar traversal of the winners.
    fn allocate_switch(&mut self, routers: &mut Routers, r: usize, t: u64, filed: &mut Filing) {
        let base = r * self.npv;
        let pbase = r * self.p;
        let v = self.v;
        let w = &self.work[r];
        let mut readable = if w.blocked_at == t { !w.blocked } else { !0 };
        let bids = w.bid & readable;
        if bids & bids.wrapping_sub(1) == 0 {
            // One bidder (or none readable): it wins its output if it has the credits.
            if bids != 0 {
                let l = bids.trailing_zeros() as usize;
                let c = &self.vcs[base + l];
                let o = c.out as usize;
                let need = if c.front.is_head() && self.switching != Switching::Wormhole { c.pkt_len } else { 1 };
                if self.ovs[(pbase + o) * v + c.ovc as usize].credits < need {
                    routers.inputs.stall_credit[base + l] += 1;
                } else {
                    self.cross(routers, r, l, o, t, filed);
                }
            }
            return;
        }
        let policy = routers.params.arbiter;
        let mut outs = 0u64;
        let mut requested = 0u64;
        for l in bits(bids) {
            let c = &self.vcs[base + l];
            let o = c.out as usize;
            let need = if c.front.is_head() && self.switching != Switching::Wormhole { c.pkt_len } else { 1 };
            if self.ovs[(pbase + o) * v + c.ovc as usize].credits < need {
                routers.inputs.stall_credit[base + l] += 1;
                continue;
            }
            if outs & (1 << o) == 0 {
                outs |= 1 << o;
                self.req[o] = 0;
            }
            self.req[o] |= 1 << l;
            requested |= 1 << l;
        }
        if outs == 0 {
            return;
        }
        if self.sa_cycle != t {
            self.sa_cycle = t;
            self.sa_first = (t % self.net as u64) as u32;
        }
        let start = self.sa_first;
        let mut rest = outs.rotate_right(start);
        let mut read = 0u64;
        while rest != 0 {
            let o = (rest.trailing_zeros() + start) as usize & 63;
            rest &= rest - 1;
            let want = self.req[o] & readable;
            if want == 0 {
                continue;
            }
            let inputs = &routers.inputs;
            let Some(l) = routers.outputs.sa_arb[pbase + o].arbitrate(policy, want, |l| inputs.rank[base + l]) else {
                continue;
            };
            readable &= !self.port_vcs[l];
            read |= 1 << l;
            self.cross(routers, r, l, o, t, filed);
        }
        for l in bits(requested & !read) {
            routers.inputs.stall_arb[base + l] += 1;
        }
    }

    /// Input VC `l` of router `r` won output `o` in cycle `t`: its front flit crosses the
    /// switch onto the link (readable downstream at `t + link_latency`; another part's router
    /// takes it in after this cycle), a credit spent, the output VC freed after a tail.
    #[inline(always)]
    fn cross(&mut self, routers: &mut Routers, r: usize, l: usize, o: usize, t: u64, filed: &mut Filing) {
        let v = self.v;
        let op = r * self.p + o;
        let c = &mut self.vcs[r * self.npv + l];
        let flit = c.front;
        let k = o * v + c.ovc as usize;
        let ov = r * self.npv + k;
        let tail = flit.is_tail();
        self.ovs[ov].credits -= 1;
        if tail {
            c.set(GRANTED, false);
            self.ovs[ov].owner = FREE;
            if self.work[r].va_req != 0 {
                self.work[r].va_dirty = true;
            }
        }
        routers.outputs.sa_arb[op].grant_accepted(self.npv, l);
        let x = self.down[op] + c.ovc as u32;
        if self.remote(x) {
            self.remote_flits.push((x, flit));
        } else {
            filed.arrivals.push((x, flit));
        }
        self.sent[op] += 1;
        self.hops += 1;
        self.tails += tail as u64;
        self.pop_front(r, l, t, &mut filed.credits);
    }

    /// The front flit of local VC `l` of router `r` has been taken by its branch in cycle `t`:
    /// pop it (a credit upstream for a network port) and get the VC ready for the next flit.
    #[inline(always)]
    fn pop_front(&mut self, r: usize, l: usize, t: u64, credits: &mut Vec<u32>) {
        let iv = r * self.npv + l;
        let depth = self.depth as usize;
        let (epoch, lo, hi) = (self.hist_epoch, self.lo, self.hi);
        let c = &mut self.vcs[iv];
        count_out(c, &mut self.hist_hi, iv, depth, epoch, t);
        // The next flit: the next of the front packet, or after its tail the head of the next
        // packet in the ring.
        let tail = c.front.is_tail();
        c.len -= 1;
        let more = c.len > 0;
        if more {
            if tail {
                let p = self.ring[iv * depth + c.phead as usize];
                c.phead = if c.phead as usize + 1 == depth { 0 } else { c.phead + 1 };
                c.pkts -= 1;
                c.front = Flit { packet: PacketId(p), seq: 0, flags: FlitFlags::HEAD };
            } else {
                let seq = c.front.seq + 1;
                c.front.seq = seq;
                c.front.flags = if seq + 1 == c.pkt_len { FlitFlags::TAIL } else { FlitFlags::empty() };
            }
        }
        if tail {
            debug_assert!(!c.granted(), "router {r} VC {l}: tail left with its output still held: {c:?}");
            c.flags &= !ROUTED;
        }
        self.flits -= 1;
        if tail | !more {
            let w = &mut self.work[r];
            w.bid &= !(1 << l);
            w.ejbid &= !(1 << l);
            if tail & more {
                // The next packet's head is routed in the next cycle.
                self.rc_next.push(vcr(r, l));
            }
        }
        // The credit upstream, for a network port (by mail to another part's router).
        if l < self.net_vcs {
            let x = self.up[r * self.p + self.port_of[l] as usize] + self.vc_of[l] as u32;
            let ur = x >> 6;
            if ur < lo || ur >= hi {
                self.remote_credits.push(x);
                self.popped_at[iv] = t;
            } else {
                credits.push(x);
            }
        }
    }

    /// Hand the state back to [`Routers`] at the end of a run (or when the watchdog fires):
    /// the input VCs (flits on their way written into their buffers, readable from the cycle
    /// they arrive), output VCs (credits on their way onto the return lines), and the
    /// routers' registers. Nothing the statistics count changes. The evaluation is empty
    /// afterwards.
    pub fn finish(&mut self, routers: &mut Routers, len_of: impl Fn(PacketId) -> u16) {
        let depth = self.depth as usize;
        let v = self.v;
        // Flits on their way, by VC in the order they arrive, with the cycle they do.
        let mut late: Vec<(usize, u64)> = Vec::new();
        for c in self.done + 1..=self.done + self.mask {
            let i = (c & self.mask) as usize;
            let slot = std::mem::take(&mut self.slots[i]);
            for &(x, flit) in &slot.arrivals {
                let (r, l) = unvcr(x);
                let iv = r * self.npv + l;
                late.push((iv, c));
                self.write(iv, flit);
            }
            for &x in &slot.credits {
                let (r, k) = unvcr(x);
                let ov = r * self.npv + k;
                routers.return_credit(ov / v, (ov % v) as u8, c);
            }
        }
        late.sort_by_key(|&(iv, _)| iv);
        let mut flits = Vec::new();
        for (iv, e) in self.vcs.iter().enumerate() {
            debug_assert_eq!(e.len, e.occ, "input VC {iv}: flits on their way outside the wheel");
            let route = match (e.routed(), e.out) {
                (false, _) => PortSet::empty(),
                (true, LOCAL_OUT) => PortSet::LOCAL,
                (true, o) => PortSet::port(o as usize),
            };
            let c = &mut routers.inputs.ctl[iv];
            c.stage = if e.routed() { VcStage::Routed } else { VcStage::Idle };
            c.route = route;
            c.pending = route;
            c.granted = if e.granted() { route } else { PortSet::empty() };
            c.ovc = e.ovc;
            c.eject_ch = e.eject_ch;
            c.vc_mask = e.vc_mask;
            c.pkt_len = e.pkt_len;
            c.va_open = e.flags & VA_OPEN != 0;
            c.async_rep = false;
            c.sa_ready = e.sa_ready;
            // The buffered flits: the rest of the front packet, then the packets of the ring
            // (the last may still be arriving).
            flits.clear();
            let (mut p, mut seq, mut k, mut left) = (e.front.packet, e.front.seq, 0, e.len);
            while left > 0 {
                let len = len_of(p);
                while left > 0 && seq < len {
                    flits.push(Flit::of(p, seq, len));
                    (seq, left) = (seq + 1, left - 1);
                }
                if left > 0 {
                    p = PacketId(self.ring[iv * depth + (e.phead as usize + k) % depth]);
                    (seq, k) = (0, k + 1);
                }
            }
            // Those on their way are the last, readable from the cycle they arrive.
            let from = late.partition_point(|&(x, _)| x < iv);
            let readies = &late[from..late.partition_point(|&(x, _)| x <= iv)];
            let ready = |i: usize| if i + readies.len() >= flits.len() { readies[i + readies.len() - flits.len()].1 } else { 0 };
            c.head = 0;
            c.len = e.len;
            if let Some(&f) = flits.first() {
                c.front = BufEntry { flit: f, ready: ready(0) };
            }
            for (i, &f) in flits.iter().enumerate().skip(1) {
                routers.inputs.set_entry(iv, i, BufEntry { flit: f, ready: ready(i) });
            }
        }
        let values: Vec<(usize, usize, u64)> = self.hist_values().collect();
        for (iv, k, v) in values {
            routers.inputs.set_hist(iv, k, v);
        }
        let hi = (self.depth as usize).saturating_sub(HIST_INLINE);
        for (iv, c) in self.vcs.iter().enumerate() {
            for k in 0..hi {
                routers.inputs.set_hist(iv, HIST_INLINE + k, self.hist_hi[iv * hi + k]);
            }
            routers.inputs.max_len[iv] = c.max_len;
        }
        let npv = self.npv;
        for (ov, o) in self.ovs.iter().enumerate() {
            let r = ov / v / self.p;
            routers.outputs.owner[ov] = if o.owner == FREE { NONE } else { (r * npv + o.owner as usize) as u32 };
            routers.outputs.credits[ov] = o.credits;
        }
        routers.rebuild_registers();
        debug_assert_eq!(routers.buffered, self.flits);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::PacketId;
    use crate::input_unit::InputUnits;
    use crate::params::{ArbiterPolicy, MulticastVa, Pipeline, Replication};
    use proptest::prelude::*;

    fn routers(depth: u16) -> Routers {
        let p = RouterParams {
            switching: Switching::Wormhole,
            pipeline: Pipeline::REALISTIC,
            arbiter: ArbiterPolicy::Key,
            multicast_va: MulticastVa::Atomic,
            replication: Replication::Sync,
            vcs: 2,
            buffer_flits: depth,
            net_ports: 2,
            nic_channels: 1,
            link_width: 1,
        };
        Routers::new(p, 2)
    }

    proptest! {
        /// The occupancy histogram kept in each VC's line in 32 bits from an epoch, rebased as
        /// runs go on (every few cycles here, every 2^30 in a run), with the levels beyond the
        /// line's in 64 bits, gives the histogram the input units keep, for any sequence of
        /// writes, reads and late writes at any cycles.
        #[test]
        fn the_in_line_histogram_is_the_input_units_histogram(
            depth in 1u16..=12,
            span in 1u64..40,
            ops in proptest::collection::vec((0usize..6, 0u8..4, 0u64..3000), 1..300),
        ) {
            let r = routers(depth);
            let mut e = EventEval::new(&r, &[NONE; 6], &[NONE; 6]);
            e.hist_span = span;
            let mut reference = InputUnits::new(e.vcs.len(), depth);
            let (mut t, mut popped_at) = (0u64, vec![u64::MAX; e.vcs.len()]);
            for (iv, op, dt) in ops {
                t += dt;
                if t - e.hist_epoch >= e.hist_span {
                    e.rebase_hist(t);
                }
                let occ = reference.len(iv);
                let flit = Flit::of(PacketId(0), 0, 1);
                match op {
                    0 | 1 if occ < depth => {
                        reference.push(iv, flit, t + 2, t + 1);
                        e.count_in(iv, t);
                    }
                    2 if occ > 0 => {
                        reference.pop(iv, t + 1);
                        e.count_out(iv, t);
                        popped_at[iv] = t;
                    }
                    3 if occ < depth && t > e.hist_epoch => {
                        // A flit sent in cycle t - 1 by another part, taken in after cycle t.
                        let popped = popped_at[iv] == t;
                        reference.push_late(iv, flit, t + 1, t, popped);
                        e.count_up_late(iv, t, popped);
                    }
                    _ => {}
                }
            }
            let mut got = InputUnits::new(e.vcs.len(), depth);
            for (iv, k, v) in e.hist_values() {
                got.set_hist(iv, k, v);
            }
            let hi = (depth as usize).saturating_sub(HIST_INLINE);
            for iv in 0..e.vcs.len() {
                for k in 0..hi {
                    got.set_hist(iv, HIST_INLINE + k, e.hist_hi[iv * hi + k]);
                }
                got.ctl[iv].len = e.vcs[iv].occ;
                got.max_len[iv] = e.vcs[iv].max_len;
            }
            let now = t + 5;
            for iv in 0..e.vcs.len() {
                prop_assert_eq!(got.ctl[iv].len, reference.len(iv), "VC {} occupancy", iv);
                prop_assert_eq!(got.max_len[iv], reference.max_len[iv], "VC {} high-water mark", iv);
                let (h, want) = (got.occupancy_histogram(iv, now), reference.occupancy_histogram(iv, now));
                prop_assert_eq!(h, want, "VC {} at depth {} span {}", iv, depth, span);
            }
        }
    }
}
