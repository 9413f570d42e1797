//! The work registers of [`Schedule::Busy`](crate::Schedule::Busy): per router, sets of its
//! input VCs by what they wait for ([`Work`], [`McWork`] for the packets it replicates), kept
//! in the width its VC sets are computed in ([`Width`]), and the events that keep them up to
//! date (a VC joining VC allocation, becoming a bidder, something freed).

use crate::flat::Flat;
use crate::flit::Flit;
use crate::input_unit::{Branches, Vc};
use crate::params::{MulticastVa, Switching};
use crate::port_set::PortSet;
use crate::router::Routers;
use crate::vc_set::VcBits;
use crate::wheel::vcr;

/// One router's work registers: sets of its input VCs (bit `port * vcs + vc`) by what they
/// wait for, and what its stage 1 read. One cache line for routers of up to 64 input VCs.
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(64))]
pub(crate) struct Work<S> {
    /// Unicast to a network output, holding its output VC, able to bid (`sa_ready` passed),
    /// a flit buffered (and, store-and-forward at a network input, the whole packet).
    pub bid: S,
    /// Unicast to ejection, holding an ejection VC, able, a flit buffered.
    pub ejbid: S,
    /// Able VC-allocation requesters for a network output (`rc_delay` passed, a branch
    /// still without an output VC).
    pub va_req: S,
    /// Able requesters of an ejection channel.
    pub ej_req: S,
    /// VCs read through the crossbar by ejection in stage 1 of cycle `s1_at`.
    pub s1_read: S,
    /// Ejection channels whose every VC is held (bit per channel).
    pub ej_full: u64,
    pub s1_at: u64,
    /// Allocations that must run at their next stage: [`VA_DIRTY`], [`EJ_DIRTY`], [`MC_DIRTY`].
    pub dirty: u8,
}

// How stages 1 and 2 are compiled for a cycle: the `P` of their functions and of what they
// call ([`Routers::compiled`]). Where a run cannot meet a case, its code is left out rather
// than tested at every step (what it gains: docs/performance.md). Which code runs is a
// choice of compilation, never of a rule: each rule is the same function in every case, with
// the same results (`fabric/tests/schedules.rs` compares runs with a probe attached, which
// run `ANY`, with runs without).
/// Every case, tested as it comes.
pub(crate) const ANY: u8 = 0;
/// No probes to log for, links of one flit a cycle, no replicated packet, VC sets of one word.
pub(crate) const PLAIN: u8 = 1;
/// [`PLAIN`] under wormhole switching: a head needs one credit downstream, as a body flit.
pub(crate) const PLAIN_WH: u8 = 2;

pub(crate) const VA_DIRTY: u8 = 1;
pub(crate) const EJ_DIRTY: u8 = 2;
pub(crate) const MC_DIRTY: u8 = 4;

/// A router's registers for the packets it replicates (allocated at the first such packet).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct McWork<S> {
    /// Replicated packets that may bid in switch allocation: routed, past their VA delay, a
    /// flit buffered, some network branch holding its output VC (the allocation looks at
    /// each branch).
    pub mc_bid: S,
    /// Replicated packets whose LOCAL branch holds an ejection VC, past their VA delay, a
    /// flit buffered (ejection looks at where the branch is).
    pub mc_ej: S,
    /// Able requesters of atomic allocation (every branch in one cycle or none).
    pub mc_req: S,
    /// VCs popped in stage 1 of cycle `s1_at` (of [`Work`]).
    pub s1_popped: S,
    /// Heads routed after injection in cycle `new_at` that request atomic allocation then.
    pub mc_new: S,
    pub new_at: u64,
}

/// The width stages compute VC sets in, and the registers kept in it (each a [`Flat`], indexed
/// without a bounds check in a release build like the routers' other state vectors).
pub(crate) trait Width: VcBits + Default {
    fn w(r: &Routers) -> &Flat<Work<Self>>;
    fn w_mut(r: &mut Routers) -> &mut Flat<Work<Self>>;
    fn m(r: &Routers) -> &Flat<McWork<Self>>;
    fn m_mut(r: &mut Routers) -> &mut Flat<McWork<Self>>;
}

impl Width for u64 {
    #[inline(always)]
    fn w(r: &Routers) -> &Flat<Work<u64>> {
        &r.w64
    }
    #[inline(always)]
    fn w_mut(r: &mut Routers) -> &mut Flat<Work<u64>> {
        &mut r.w64
    }
    #[inline(always)]
    fn m(r: &Routers) -> &Flat<McWork<u64>> {
        &r.m64
    }
    #[inline(always)]
    fn m_mut(r: &mut Routers) -> &mut Flat<McWork<u64>> {
        &mut r.m64
    }
}

impl Width for u128 {
    #[inline(always)]
    fn w(r: &Routers) -> &Flat<Work<u128>> {
        &r.w128
    }
    #[inline(always)]
    fn w_mut(r: &mut Routers) -> &mut Flat<Work<u128>> {
        &mut r.w128
    }
    #[inline(always)]
    fn m(r: &Routers) -> &Flat<McWork<u128>> {
        &r.m128
    }
    #[inline(always)]
    fn m_mut(r: &mut Routers) -> &mut Flat<McWork<u128>> {
        &mut r.m128
    }
}

impl Routers {
    #[inline(always)]
    pub(crate) fn set_net_work(&mut self, r: usize) {
        self.net_work[r >> 6] |= 1 << (r & 63);
    }
    #[inline(always)]
    pub(crate) fn set_ej_work(&mut self, r: usize) {
        self.ej_work[r >> 6] |= 1 << (r & 63);
    }
    /// How stages 1 and 2 of this cycle are compiled ([`ANY`], [`PLAIN`], [`PLAIN_WH`]).
    /// Neither stage routes a packet, so none can start replicating within them.
    #[inline]
    pub(crate) fn compiled(&self) -> u8 {
        if self.log || self.width != 1 || !self.m64.is_empty() || !self.narrow() {
            ANY
        } else if self.switching == Switching::Wormhole {
            PLAIN_WH
        } else {
            PLAIN
        }
    }
    /// Router `r` replicates packets: its multicast registers, allocated at the first one.
    #[inline(always)]
    pub(crate) fn has_mc<S: Width, const P: u8>(&self) -> bool {
        P == ANY && !S::m(self).is_empty()
    }
    /// Router `r`'s replicated packets that may bid in switch allocation.
    #[inline(always)]
    pub(crate) fn mc_bid<S: Width, const P: u8>(&self, r: usize) -> S {
        if self.has_mc::<S, P>() { S::m(self)[r].mc_bid } else { S::ZERO }
    }
    /// Router `r`'s replicated packets whose LOCAL branch may eject.
    #[inline(always)]
    pub(crate) fn mc_ej<S: Width, const P: u8>(&self, r: usize) -> S {
        if self.has_mc::<S, P>() { S::m(self)[r].mc_ej } else { S::ZERO }
    }
    /// Allocate the state of replicated packets (at the first one).
    #[cold]
    #[inline(never)]
    pub(crate) fn start_multicast(&mut self) {
        let nvcs = self.inputs.vcs.len();
        if self.inputs.branches.is_empty() {
            self.inputs.branches = vec![Branches::default(); nvcs].into();
        }
        if self.narrow() {
            if self.m64.is_empty() {
                self.m64 = vec![McWork::default(); self.n].into();
            }
        } else if self.m128.is_empty() {
            self.m128 = vec![McWork::default(); self.n].into();
        }
    }
    #[cold]
    #[inline(never)]
    pub(crate) fn start_async(&mut self) {
        if self.inputs.branch_pos.is_empty() {
            self.inputs.branch_pos = vec![0; self.inputs.vcs.len() * (self.nnet + 1)].into();
            self.inputs.read_at = vec![0; self.inputs.vcs.len()].into();
        }
    }

    /// Index of branch `o` (a network port, or LOCAL's slot) of input VC `iv` in `branch_pos`.
    #[inline(always)]
    pub(crate) fn branch_slot(&self, iv: usize, local: bool, o: usize) -> usize {
        iv * (self.nnet + 1) + if local { self.nnet } else { o }
    }

    /// [`Routers::branch_slot`] of branch `branch` (one network port, or LOCAL).
    #[inline(always)]
    pub(crate) fn branch_slot_of(&self, iv: usize, branch: PortSet) -> usize {
        let local = branch == PortSet::LOCAL;
        self.branch_slot(iv, local, if local { 0 } else { branch.bits().trailing_zeros() as usize })
    }

    /// The FIFO position of the flit branch `branch` of the asynchronously replicated packet
    /// at input VC `iv` takes next.
    #[inline(always)]
    pub(crate) fn branch_position(&self, iv: usize, branch: PortSet) -> u16 {
        self.inputs.branch_pos[self.branch_slot_of(iv, branch)]
    }

    /// The position and flit branch `branch` of the asynchronously replicated packet at input
    /// VC `iv` takes next, if that flit is buffered.
    #[inline(always)]
    pub(crate) fn branch_next(&self, iv: usize, branch: PortSet) -> Option<(u16, Flit)> {
        let k = self.branch_position(iv, branch);
        (k < self.inputs.vcs[iv].len).then(|| (k, self.inputs.entry_in_front_packet(iv, k)))
    }

    /// Something an allocation of router `r` waits for was freed: the allocations with
    /// requesters must run at their next stage.
    #[inline(always)]
    pub(crate) fn freed<S: Width, const P: u8>(&mut self, r: usize, network: bool) {
        let w = &mut S::w_mut(self)[r];
        if network {
            if !w.va_req.is_empty() {
                w.dirty |= VA_DIRTY;
            }
        } else if !w.ej_req.is_empty() {
            w.dirty |= EJ_DIRTY;
        }
        if self.has_mc::<S, P>() && !S::m(self)[r].mc_req.is_empty() {
            S::w_mut(self)[r].dirty |= MC_DIRTY;
            self.set_ej_work(r);
        }
    }

    /// Routed input VC `l` of router `r` may now be allocated what it lacks (its `rc_delay`
    /// passed): it joins the requesters of the allocations that give it.
    #[inline(always)]
    pub(crate) fn va_join<S: Width>(&mut self, r: usize, l: usize) {
        let iv = r * self.npv + l;
        let c = self.inputs.vcs[iv];
        if !c.multicast() {
            let w = &mut S::w_mut(self)[r];
            if c.out == crate::input_unit::LOCAL_OUT {
                w.ej_req |= S::bit(l);
                w.dirty |= EJ_DIRTY;
                self.set_ej_work(r);
            } else {
                w.va_req |= S::bit(l);
                w.dirty |= VA_DIRTY;
                self.set_net_work(r);
            }
            return;
        }
        let b = self.inputs.branches[iv];
        if self.waits_atomic(&c, &b) {
            S::m_mut(self)[r].mc_req |= S::bit(l);
            S::w_mut(self)[r].dirty |= MC_DIRTY;
            self.set_ej_work(r);
            return;
        }
        let lacking = self.lacking(iv);
        let w = &mut S::w_mut(self)[r];
        if !lacking.network().is_empty() {
            w.va_req |= S::bit(l);
            w.dirty |= VA_DIRTY;
        }
        if lacking.contains(PortSet::LOCAL) {
            w.ej_req |= S::bit(l);
            w.dirty |= EJ_DIRTY;
        }
        self.set_net_work(r);
        self.set_ej_work(r);
    }

    /// Does the replicated packet at VC `c` wait for atomic allocation (every branch in one
    /// cycle or none)? Multi-flit packets under [`MulticastVa::Atomic`] until granted.
    #[inline]
    pub(crate) fn waits_atomic(&self, c: &Vc, b: &Branches) -> bool {
        c.pkt_len > 1 && self.params.multicast_va == MulticastVa::Atomic && b.granted.is_empty()
    }

    /// Make input VC `l` of router `r` a bidder (or ejector) in cycle `t` if it is one:
    /// routed, holding its output VC or channel, able, a flit buffered, and a
    /// store-and-forward head at a network input with its whole packet in. A replicated
    /// packet's VC bids for what its branches hold ([`Routers::replica_bids`]); switch
    /// allocation and ejection look at each branch.
    #[inline]
    pub(crate) fn check_bid<S: Width>(&mut self, r: usize, l: usize, t: u64) {
        let c = &self.inputs.vcs[r * self.npv + l];
        if c.multicast() {
            if c.sa_able(t) {
                self.replica_bids::<S>(r, l);
            }
            return;
        }
        if !c.granted() || !c.sa_able(t) {
            return;
        }
        if c.out == crate::input_unit::LOCAL_OUT {
            S::w_mut(self)[r].ejbid |= S::bit(l);
            self.set_ej_work(r);
            return;
        }
        if !self.may_cross(l, c) {
            return;
        }
        S::w_mut(self)[r].bid |= S::bit(l);
        self.set_net_work(r);
    }

    /// The replicated packet at local VC `l` of router `r` (routed, able, a flit buffered)
    /// bids for the network outputs and the ejection VC its branches hold.
    #[cold]
    #[inline(never)]
    fn replica_bids<S: Width>(&mut self, r: usize, l: usize) {
        let g = self.inputs.branches[r * self.npv + l].granted;
        if !g.network().is_empty() {
            S::m_mut(self)[r].mc_bid |= S::bit(l);
            self.set_net_work(r);
        }
        if g.contains(PortSet::LOCAL) {
            S::m_mut(self)[r].mc_ej |= S::bit(l);
            self.set_ej_work(r);
        }
    }

    /// May the front flit of local VC `l` (state `c`) cross now, as far as its own buffer
    /// goes: not a store-and-forward head at a network input whose tail is not in (the NIC
    /// holds the whole packet already).
    #[inline(always)]
    pub(crate) fn may_cross(&self, l: usize, c: &Vc) -> bool {
        !(self.switching == Switching::StoreAndForward && l < self.net_vcs && c.front.is_head() && c.len < c.pkt_len)
    }

    /// Input VC `l` of router `r` was granted its output VC or channel in cycle `t`: it may
    /// bid from `t + va_delay`.
    #[inline(always)]
    pub(crate) fn granted<S: Width>(&mut self, r: usize, l: usize, t: u64) {
        if self.va_delay == 0 {
            self.check_bid::<S>(r, l, t);
        } else {
            self.wheel.slot(t + self.va_delay).sa_joins.push(vcr(r, l));
        }
    }
}

const _: () = assert!(std::mem::size_of::<Work<u64>>() == 64, "a router's work registers in one cache line");
