//! VC allocation: a routed packet acquires, on each of its output ports, an output VC (or,
//! for LOCAL, an ejection channel), and holds it until its tail flit has passed.
//!
//! A multi-flit packet the router replicates takes all its branches in one cycle or none
//! under [`MulticastVa::Atomic`](crate::params::MulticastVa): its front flit leaves the
//! buffer only when every branch has taken it, so a worm holding one branch while it waits
//! for another could wait on a worm that waits on it.
//!
//! ```text
//!  cycle t: requester (rc_delay passed) ──► each free output VC its vc_mask allows goes to
//!           the output port's arbiter's winner ──► may bid in switch allocation from t + va_delay
//! ```

use crate::arbiter::best_ranked;
use crate::input_unit::{GRANTED, VA_OPEN};
use crate::output_unit::{FREE, round_from};
use crate::port_set::PortSet;
use crate::router::Routers;
use crate::vc_set::members;
use crate::work::Width;

impl Routers {
    /// Give each free output VC of router `r`'s network ports to one requester routed there
    /// whose `vc_mask` allows it.
    pub(crate) fn allocate_network_vcs<S: Width, const P: u8>(&mut self, r: usize, t: u64) {
        let v = self.nv;
        let base = r * self.npv;
        let policy = self.params.arbiter;
        let waiting = S::w(self)[r].va_req;
        if waiting.is_single() {
            // One requester: every arbiter grants it the first free output VC its mask allows.
            let l = waiting.first();
            let c = &self.inputs.vcs[base + l];
            if !c.multicast() {
                let (o, mask) = (c.out as usize, c.vc_mask);
                if let Some(vc) = self.first_free_vc(r * self.np + o, mask) {
                    self.grant_output_vc::<S, P>(r, l, o, vc, t);
                    S::w_mut(self)[r].va_req = S::ZERO;
                }
                return;
            }
        }
        if v == 1 && !self.has_mc::<S, P>() {
            self.allocate_single_vcs::<S, P>(r, t, waiting);
            return;
        }
        let mut outs = 0u64;
        // Ports known to have no VC to offer: of one VC, held (the offer below would pass
        // them by), so that a router whose requesters wait for busy ports asks nothing.
        let mut held = 0u64;
        for l in members(waiting) {
            // Branches still owed the front flit and holding no VC (a branch that has sent its
            // tail is no longer pending, so it is never allocated again).
            let mut b = self.lacking(base + l).network().bits() & !held;
            while b != 0 {
                let o = b.trailing_zeros() as usize;
                b &= b - 1;
                if v == 1 && outs & (1 << o) == 0 && !self.output_vc_free(r * self.np + o, 0) {
                    held |= 1 << o;
                    continue;
                }
                if outs & (1 << o) == 0 {
                    outs |= 1 << o;
                    S::ZERO.store_into(&mut self.scratch.req[o]);
                }
                S::insert_into(&mut self.scratch.req[o], l);
            }
        }
        let mut rest = outs;
        while rest != 0 {
            let o = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            let op = r * self.np + o;
            // A port of one VC offers it.
            let mut order = [0u8; 16];
            if v > 1 {
                self.outputs.offer_order(self.params.va_policy, op, v, true, &mut order);
            }
            for &vc in &order[..v] {
                let vc = vc as usize;
                if !self.output_vc_free(op, vc) {
                    continue;
                }
                let req = S::load(self.scratch.req[o]);
                if req.is_empty() {
                    break;
                }
                let mut want = S::ZERO;
                for l in members(req) {
                    if allows(self.vc_mask_for(base + l, o), vc) {
                        want |= S::bit(l);
                    }
                }
                if want.is_empty() {
                    continue;
                }
                let inputs = &self.inputs;
                let Some(l) = self.outputs.va_arb[op].arbitrate(policy, want, |l| inputs.vcs[base + l].rank()) else {
                    continue;
                };
                (req & !S::bit(l)).store_into(&mut self.scratch.req[o]);
                self.grant_output_vc::<S, P>(r, l, o, vc, t);
            }
        }
        // Requesters with every network branch granted leave.
        for l in members(waiting) {
            if self.lacking(base + l).network().is_empty() {
                S::w_mut(self)[r].va_req &= !S::bit(l);
            }
        }
    }

    /// [`Routers::allocate_network_vcs`] at ports of one VC in routers that replicate no
    /// packet (every requester unicast): a requester asks for the one VC of its output port
    /// if that VC is free and its mask allows it, and each port's arbiter picks among those
    /// asking. The grants of the general loop, without its offer order and its request set
    /// per VC.
    #[inline(always)]
    fn allocate_single_vcs<S: Width, const P: u8>(&mut self, r: usize, t: u64, waiting: S) {
        let base = r * self.npv;
        let pbase = r * self.np;
        let mut outs = 0u64;
        for l in members(waiting) {
            let c = &self.inputs.vcs[base + l];
            debug_assert!(!c.multicast(), "router {r} VC {l}: a replicated packet before the multicast state");
            let o = c.out as usize;
            if c.granted() || !allows(c.vc_mask, 0) || !self.output_vc_free(pbase + o, 0) {
                continue;
            }
            if outs & (1 << o) == 0 {
                outs |= 1 << o;
                S::ZERO.store_into(&mut self.scratch.req[o]);
            }
            S::insert_into(&mut self.scratch.req[o], l);
        }
        let policy = self.params.arbiter;
        while outs != 0 {
            let o = outs.trailing_zeros() as usize;
            outs &= outs - 1;
            let want = S::load(self.scratch.req[o]);
            let inputs = &self.inputs;
            let l = self.outputs.va_arb[pbase + o]
                .arbitrate(policy, want, |l| inputs.vcs[base + l].rank())
                .expect("a port asked for has a winner");
            self.grant_output_vc::<S, P>(r, l, o, 0, t);
            S::w_mut(self)[r].va_req &= !S::bit(l);
        }
    }

    /// The output VCs the packet at VC `iv` may take on network port `o`: its `vc_mask`, or a
    /// replicated packet's branch's own class ([`Branches::vc_mask`]).
    #[inline(always)]
    pub(crate) fn vc_mask_for(&self, iv: usize, o: usize) -> u16 {
        let c = &self.inputs.vcs[iv];
        if c.multicast() { self.inputs.branches[iv].vc_mask(o, c.vc_mask) } else { c.vc_mask }
    }

    /// The branches of the routed packet at VC `iv` still owed the front flit and holding no
    /// output VC or channel: `pending - granted` of [`Routers::branches_of`], without
    /// building the branches.
    #[inline(always)]
    pub(crate) fn lacking(&self, iv: usize) -> PortSet {
        let c = &self.inputs.vcs[iv];
        debug_assert!(c.routed(), "input VC {iv}: the branches of a packet not routed");
        if c.multicast() {
            let b = &self.inputs.branches[iv];
            return b.pending.difference(b.granted);
        }
        if c.granted() { PortSet::empty() } else { c.unicast_route() }
    }

    /// Is output VC `vc` of network output port `op` (global index) held by no packet? The one
    /// test of every path of VC allocation (with [`allows`]).
    #[inline(always)]
    fn output_vc_free(&self, op: usize, vc: usize) -> bool {
        self.outputs.ovs[op * self.nv + vc].owner == FREE
    }

    /// The free VC of network output port `op` (global index) that `mask` allows and the
    /// port offers first ([`VaPolicy`](crate::VaPolicy)).
    #[inline]
    fn first_free_vc(&self, op: usize, mask: u16) -> Option<usize> {
        let v = self.nv;
        let free = |vc: usize| allows(mask, vc) && self.output_vc_free(op, vc);
        if v == 1 {
            return free(0).then_some(0);
        }
        let policy = self.params.va_policy;
        if policy == crate::params::VaPolicy::MostCredits {
            let mut order = [0u8; 16];
            self.outputs.offer_order(policy, op, v, true, &mut order);
            return order[..v].iter().map(|&vc| vc as usize).find(|&vc| free(vc));
        }
        let first = self.outputs.first_offered(policy, op);
        (0..v).map(|k| round_from(first, k, v)).find(|&vc| free(vc))
    }

    /// The free VC of ejection channel `ch` of router `r` it offers first.
    #[inline]
    fn first_free_ejection_vc(&self, r: usize, ch: usize) -> Option<usize> {
        if self.ejv == 1 {
            return self.ejection_vc_free(r, ch, 0).then_some(0);
        }
        // No credits to compare: `most-credits` offers the lowest, like `lowest`.
        let (first, n) = (self.outputs.first_offered(self.params.va_policy, r * self.np + self.nnet + ch), self.ejv);
        (0..n).map(|k| round_from(first, k, n)).find(|&vc| self.ejection_vc_free(r, ch, vc))
    }

    /// Is every ejection VC of channel `ch` of router `r` held? (What the channel's bit in
    /// the work register's `ej_full` says.)
    #[inline(always)]
    pub(crate) fn ejection_channel_full(&self, r: usize, ch: usize) -> bool {
        (0..self.ejv).all(|evc| !self.ejection_vc_free(r, ch, evc))
    }

    /// Is ejection VC `evc` of channel `ch` of router `r` held by no packet?
    #[inline(always)]
    fn ejection_vc_free(&self, r: usize, ch: usize, evc: usize) -> bool {
        self.outputs.ej_owner[(r * self.nk + ch) * self.ejv + evc] == FREE
    }

    /// The ejection channels of router `r` with a VC free (a bit per channel).
    #[inline(always)]
    pub(crate) fn free_channels<S: Width>(&self, r: usize) -> u64 {
        !S::w(self)[r].ej_full & self.all_channels
    }

    /// Ejection VC `evc` of channel `ch` of router `r` is taken by local VC `l`: held, the
    /// channel full if it was its last free VC, the round-robin offer on after it, the VC's
    /// packet told where it ejects.
    #[inline(always)]
    fn take_ejection_vc<S: Width, const P: u8>(&mut self, r: usize, l: usize, ch: usize, evc: usize) {
        self.outputs.ej_owner[(r * self.nk + ch) * self.ejv + evc] = l as u8;
        // A channel of one VC is full now; one of several when this was its last free VC.
        if self.ejv == 1 || self.ejection_channel_full(r, ch) {
            S::w_mut(self)[r].ej_full |= 1 << ch;
        }
        self.outputs.vc_granted(r * self.np + self.nnet + ch, evc, self.ejv);
        let c = &mut self.inputs.vcs[r * self.npv + l];
        (c.eject_ch, c.eject_vc) = (ch as u8, evc as u8);
        self.log_va::<P>(r, l, self.nnet + ch, evc);
    }

    /// Output VC `vc` of network output `o` of router `r` is taken by local VC `l`: held, the
    /// port's round-robin offer on after it, the VC's packet told which it holds.
    #[inline(always)]
    fn take_output_vc<const P: u8>(&mut self, r: usize, l: usize, o: usize, vc: usize) {
        let op = r * self.np + o;
        self.outputs.ovs[op * self.nv + vc].owner = l as u8;
        self.outputs.vc_granted(op, vc, self.nv);
        self.inputs.vcs[r * self.npv + l].ovc = vc as u8;
        self.log_va::<P>(r, l, o, vc);
    }

    /// The packet at input VC `iv` took an output VC or channel in cycle `t`: it may take the
    /// switch `va_delay` cycles on.
    #[inline(always)]
    fn open_va(&mut self, iv: usize, t: u64) {
        let c = &mut self.inputs.vcs[iv];
        c.flags |= VA_OPEN;
        c.sa_ready = c.sa_ready.max(t + self.va_delay);
    }

    /// Branch `branch` of the packet at local VC `l` of router `r` holds its output VC or
    /// channel from cycle `t`: it bids from `t + va_delay`.
    #[inline(always)]
    fn branch_granted<S: Width>(&mut self, r: usize, l: usize, branch: PortSet, t: u64) {
        let iv = r * self.npv + l;
        self.open_va(iv, t);
        let c = &mut self.inputs.vcs[iv];
        if c.multicast() {
            self.inputs.branches[iv].granted |= branch;
        } else {
            c.flags |= GRANTED;
        }
        self.granted::<S>(r, l, t);
    }

    /// Output VC `vc` of network output `o` of router `r` goes to local VC `l` in cycle `t`.
    #[inline(always)]
    fn grant_output_vc<S: Width, const P: u8>(&mut self, r: usize, l: usize, o: usize, vc: usize, t: u64) {
        self.take_output_vc::<P>(r, l, o, vc);
        self.outputs.va_arb[r * self.np + o].grant_accepted(self.npv, l);
        self.branch_granted::<S>(r, l, PortSet::port(o), t);
    }

    /// Give each free ejection VC of router `r` to one able requester: channel by channel,
    /// each channel's VCs in the order it offers them, each to its arbiter's winner.
    pub(crate) fn allocate_ejection<S: Width, const P: u8>(&mut self, r: usize, t: u64) {
        let base = r * self.npv;
        let policy = self.params.arbiter;
        let mut free = self.free_channels::<S>(r);
        // The best-ranked requesters left ([`best_ranked`]): every arbiter here picks among
        // the same shrinking set, so the ranks are compared again only when the best are
        // all granted.
        let mut best = S::ZERO;
        while free != 0 && !S::w(self)[r].ej_req.is_empty() {
            let ch = free.trailing_zeros() as usize;
            free &= free - 1;
            let op = r * self.np + self.nnet + ch;
            // Until the channel is full (no free VC left; a grant may fill it).
            while S::w(self)[r].ej_full & (1 << ch) == 0 {
                let evc = self.first_free_ejection_vc(r, ch).expect("a channel not full has a free VC");
                let want = S::w(self)[r].ej_req;
                best &= want;
                if best.is_empty() {
                    let inputs = &self.inputs;
                    best = if want.is_single() { want } else { best_ranked(policy, want, |l| inputs.vcs[base + l].rank()) };
                }
                let Some(l) = self.outputs.va_arb[op].pick(policy, best) else {
                    break;
                };
                self.outputs.va_arb[op].grant_accepted(self.npv, l);
                S::w_mut(self)[r].ej_req &= !S::bit(l);
                self.grant_ejection::<S, P>(r, l, ch, evc, t);
            }
        }
    }

    /// Ejection VC `evc` of channel `ch` of router `r` goes to local VC `l` in cycle `t`.
    #[inline(always)]
    fn grant_ejection<S: Width, const P: u8>(&mut self, r: usize, l: usize, ch: usize, evc: usize, t: u64) {
        self.take_ejection_vc::<S, P>(r, l, ch, evc);
        self.branch_granted::<S>(r, l, PortSet::LOCAL, t);
    }

    /// Atomic allocation for the replicated packets in `which` (able requesters of router
    /// `r`): in the order of the router's multicast arbiter, each packet whose every branch
    /// finds a free output VC its branch's mask allows (and, for LOCAL, a free ejection channel)
    /// takes them all; the others take nothing and try again when something is freed. No
    /// reservation: outputs a waiting packet cannot use yet stay free for others.
    #[inline(never)]
    pub(crate) fn allocate_multicast<S: Width, const P: u8>(&mut self, r: usize, t: u64, which: S) {
        let base = r * self.npv;
        let pbase = r * self.np;
        let policy = self.params.arbiter;
        let mut want = which;
        // The free output VC of port `o` that `mask` allows and the port offers first.
        let free_vc = |rs: &Routers, o: usize, mask: u16| rs.first_free_vc(pbase + o, mask);
        while !want.is_empty() {
            let l = if want.is_single() {
                want.first()
            } else {
                let inputs = &self.inputs;
                let Some(l) = self.mc_arb[r].arbitrate(policy, want, |l| inputs.vcs[base + l].rank()) else {
                    break;
                };
                l
            };
            want &= !S::bit(l);
            let iv = base + l;
            let (c, b) = (self.inputs.vcs[iv], self.inputs.branches[iv]);
            debug_assert!(b.granted.is_empty(), "router {r} VC {l}: atomic allocation after a partial grant: {c:?}");
            let free_ch = self.free_channels::<S>(r);
            if b.pending.contains(PortSet::LOCAL) && free_ch == 0 {
                continue;
            }
            if !b.pending.network().net_ports().all(|o| free_vc(self, o, self.vc_mask_for(iv, o)).is_some()) {
                continue;
            }
            for o in b.pending.network().net_ports() {
                let vc = free_vc(self, o, self.vc_mask_for(iv, o)).expect("checked free above");
                self.take_output_vc::<P>(r, l, o, vc);
            }
            if b.pending.contains(PortSet::LOCAL) {
                let ch = free_ch.trailing_zeros() as usize;
                let evc = self.first_free_ejection_vc(r, ch).expect("a channel not full has a free VC");
                self.take_ejection_vc::<S, P>(r, l, ch, evc);
            }
            self.inputs.branches[iv].granted = b.pending;
            self.open_va(iv, t);
            S::m_mut(self)[r].mc_req &= !S::bit(l);
            let npv = self.npv;
            self.mc_arb[r].grant_accepted(npv, l);
            self.granted::<S>(r, l, t);
        }
    }
}

/// Does a packet's VC mask allow it output VC `vc`? The one test of every path of VC
/// allocation (with [`Routers::output_vc_free`]).
#[inline(always)]
pub(crate) fn allows(mask: u16, vc: usize) -> bool {
    mask & (1 << vc) != 0
}
