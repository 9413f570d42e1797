//! VC allocation: a routed packet acquires, on each of its output ports, an output VC (or,
//! for LOCAL, an ejection channel), and holds it until its tail flit has passed.
//!
//! A multi-flit packet the router replicates takes all its branches in one cycle or none
//! under [`MulticastVa::Atomic`](crate::params::MulticastVa): its front flit leaves the
//! buffer only when every branch has taken it, so a worm holding one branch while it waits
//! for another could wait on a worm that waits on it.
//!
//! ```text
//!  cycle t: RC done (t >= sa_ready, or a branch already granted) ──► request free VCs allowed by vc_mask
//!           each free output VC goes to the arbiter's winner ──► SA from t + va_delay
//! ```

use crate::ids::{NONE, NodeId};
use crate::port_set::PortSet;
use crate::router::{NEVER, Routers};
use crate::vc_set::{VcBits, members};

impl Routers {
    /// Atomic allocation for the replicated packets in `which` (local VCs waiting in
    /// `NEED_MC`): in the order of the router's multicast arbiter, each packet whose every
    /// branch finds a free output VC its `vc_mask` allows (and, for LOCAL, a free ejection
    /// channel) takes them all; the others take nothing and try again next cycle. No
    /// reservation: outputs a waiting packet cannot use yet stay free for others.
    pub(crate) fn allocate_multicast<S: VcBits>(&mut self, r: NodeId, t: u64, which: S) {
        let (v, net) = (self.vcs(), self.net_ports());
        let ri = r.idx();
        let base = ri * self.npv;
        let pbase = ri * self.np;
        let va_delay = self.params.pipeline.va_delay as u64;
        let policy = self.params.arbiter;
        let mut want = S::ZERO;
        for l in members(which) {
            if self.inputs.ctl[base + l].va_may_start(t) {
                want |= S::bit(l);
            }
        }
        // The lowest free output VC of port `o` that `mask` allows.
        let free_vc = |owner: &[u32], o: usize, mask: u16| (0..v).find(|&vc| mask & (1 << vc) != 0 && owner[(pbase + o) * v + vc] == NONE);
        while !want.is_empty() {
            let l = if want.is_single() {
                want.first()
            } else {
                let inputs = &self.inputs;
                let Some(l) = self.mc_arb(ri).arbitrate(policy, want, |l| inputs.rank[base + l]) else {
                    break;
                };
                l
            };
            want &= !S::bit(l);
            let iv = base + l;
            let c = self.inputs.ctl[iv];
            debug_assert!(c.granted.is_empty(), "router {r} VC {l}: atomic allocation after a partial grant: {c:?}");
            let free_ch = self.free_ej_channels(ri);
            if c.pending.contains(PortSet::LOCAL) && free_ch == 0 {
                continue;
            }
            if !c.pending.network().net_ports().all(|o| free_vc(&self.outputs.owner, o, c.vc_mask).is_some()) {
                continue;
            }
            for o in c.pending.network().net_ports() {
                let vc = free_vc(&self.outputs.owner, o, c.vc_mask).expect("checked free above");
                self.outputs.owner[(pbase + o) * v + vc] = iv as u32;
                self.inputs.ctl[iv].ovc = vc as u8;
            }
            if c.pending.contains(PortSet::LOCAL) {
                let ch = free_ch.trailing_zeros() as usize;
                self.outputs.owner[(pbase + net + ch) * v] = iv as u32;
                self.inputs.ctl[iv].eject_ch = ch as u8;
                self.ej_granted::<S>(ri, l, ch);
            }
            let c = &mut self.inputs.ctl[iv];
            c.granted = c.pending;
            c.va_open = true;
            c.sa_ready = c.sa_ready.max(t + va_delay);
            self.multicast_granted::<S>(ri, l);
            let npv = self.npv;
            self.mc_arb_mut(ri).grant_accepted(npv, l);
        }
    }

    /// Give each free ejection channel of router `r` to one packet waiting to eject.
    pub(crate) fn allocate_ejection<S: VcBits>(&mut self, r: NodeId, t: u64) {
        let (v, net) = (self.vcs(), self.net_ports());
        let ri = r.idx();
        let base = ri * self.npv;
        let va_delay = self.params.pipeline.va_delay as u64;
        let policy = self.params.arbiter;
        let mut want = S::ZERO;
        for l in members(self.need_ej_set::<S>(ri)) {
            if self.inputs.ctl[base + l].va_may_start(t) {
                want |= S::bit(l);
            }
        }
        let mut free = self.free_ej_channels(ri);
        while free != 0 && !want.is_empty() {
            let ch = free.trailing_zeros() as usize;
            free &= free - 1;
            let op = ri * self.np + net + ch;
            debug_assert!(self.outputs.owner[op * v] == NONE, "ejection channel {ch} of router {r} held but not marked owned");
            let l = if want.is_single() {
                // A single requester wins under every policy.
                want.first()
            } else {
                let inputs = &self.inputs;
                let Some(l) = self.outputs.va_arb[op].arbitrate(policy, want, |l| inputs.rank[base + l]) else {
                    break;
                };
                l
            };
            want &= !S::bit(l);
            let c = &mut self.inputs.ctl[base + l];
            self.outputs.owner[op * v] = (base + l) as u32;
            c.granted |= PortSet::LOCAL;
            c.va_open = true;
            c.eject_ch = ch as u8;
            c.sa_ready = c.sa_ready.max(t + va_delay);
            self.outputs.va_arb[op].grant_accepted(self.npv, l);
            self.ej_granted::<S>(ri, l, ch);
        }
    }

    /// Give each free output VC of router `r`'s network ports to one packet routed there
    /// whose `vc_mask` allows it. Returns the unicast packets granted theirs.
    pub(crate) fn allocate_network_vcs<S: VcBits>(&mut self, r: NodeId, t: u64) -> S {
        let v = self.vcs();
        let ri = r.idx();
        let base = ri * self.npv;
        let va_delay = self.params.pipeline.va_delay as u64;
        let policy = self.params.arbiter;
        let waiting = self.need_va_set::<S>(ri);
        let mut outs = 0u64;
        let mut later = NEVER;
        let mut unicast = S::ZERO;
        for l in members(waiting) {
            let c = &self.inputs.ctl[base + l];
            if !c.va_may_start(t) {
                later = later.min(self.wake_bound(c.sa_ready));
                continue;
            }
            // Branches still owed the front flit and holding no VC (a branch that has sent
            // its tail is no longer pending, so it is never allocated again).
            let mut b = c.pending.network().difference(c.granted).bits();
            while b != 0 {
                let o = b.trailing_zeros() as usize;
                b &= b - 1;
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
            let op = ri * self.np + o;
            for vc in 0..v {
                let ov = op * v + vc;
                if self.outputs.owner[ov] != NONE {
                    continue;
                }
                let req = S::load(self.scratch.req[o]);
                if req.is_empty() {
                    break;
                }
                let mut want = S::ZERO;
                for l in members(req) {
                    if self.inputs.ctl[base + l].vc_mask & (1 << vc) != 0 {
                        want |= S::bit(l);
                    }
                }
                if want.is_empty() {
                    continue;
                }
                let inputs = &self.inputs;
                let Some(l) = self.outputs.va_arb[op].arbitrate(policy, want, |l| inputs.rank[base + l]) else {
                    continue;
                };
                (req & !S::bit(l)).store_into(&mut self.scratch.req[o]);
                let c = &mut self.inputs.ctl[base + l];
                self.outputs.owner[ov] = (base + l) as u32;
                c.granted |= PortSet::port(o);
                c.va_open = true;
                c.ovc = vc as u8;
                c.sa_ready = c.sa_ready.max(t + va_delay);
                if c.route.bits().is_power_of_two() {
                    unicast |= S::bit(l);
                }
                self.outputs.va_arb[op].grant_accepted(self.npv, l);
            }
        }
        // Every output VC an able requester may take is now held.
        let mut blocked = false;
        for l in members(waiting) {
            let c = &self.inputs.ctl[base + l];
            let lacking = c.pending.network().difference(c.granted);
            if lacking.is_empty() {
                self.clear_need_va::<S>(ri, l);
            } else if c.va_may_start(t) {
                blocked = true;
            }
        }
        self.va_rests_until(ri, later, blocked);
        unicast
    }
}
