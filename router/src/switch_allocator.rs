//! Switch allocation and crossbar traversal.
//!
//! Ejection channels are dedicated to the packet holding them and take one flit per cycle.
//! Network outputs use a separable output-first allocator: each output port's arbiter grants
//! up to `link_width` requests per cycle, each input port's crossbar reads are limited to
//! `link_width` per cycle, and each VC sends at most its front flit. A flit granted to
//! several outputs in one cycle is read once and replicated by the crossbar (multicast);
//! it leaves the input buffer once every branch has taken it. Outputs take turns, by cycle,
//! at picking first.
//!
//! ```text
//!  cycle t: front flit readable, VC held, credits ok ──► SA grant ──► crossbar + link
//!           readable downstream at t + link_latency; credit back upstream at t + 1 + credit_delay
//! ```

use crate::ids::{NONE, NodeId};
use crate::params::Switching;
use crate::port_set::PortSet;
use crate::router::{Departure, Ejection, Outbox, Routers};
use crate::vc_set::{VcBits, members};

impl Routers {
    /// Each ejection channel takes the front flit of the packet holding it.
    pub(crate) fn eject<S: VcBits>(&mut self, r: NodeId, t: u64, ejected: &mut Vec<Ejection>, out: &mut Outbox) {
        let ri = r.idx();
        let (v, net) = (self.vcs(), self.net_ports());
        let base = ri * self.npv;
        let mut owned = self.ej_owned(ri);
        while owned != 0 {
            let ch = owned.trailing_zeros() as usize;
            owned &= owned - 1;
            let ov = (ri * self.np + net + ch) * v;
            let iv = self.outputs.owner[ov] as usize;
            let l = iv - base;
            let c = &self.inputs.ctl[iv];
            if c.async_rep {
                self.eject_async::<S>(ri, l, ch, t, ejected, out);
                continue;
            }
            if !c.pending.contains(PortSet::LOCAL) || c.sa_ready > t || c.len == 0 {
                continue;
            }
            let e = *self.inputs.front_entry(iv);
            if e.ready > t || !self.take_read::<S>(l) {
                continue;
            }
            ejected.push(Ejection { channel: ch as u8, flit: e.flit });
            let c = &mut self.inputs.ctl[iv];
            c.pending.remove(PortSet::LOCAL);
            let done = c.pending.is_empty();
            if e.flit.is_tail() {
                c.granted.remove(PortSet::LOCAL);
                self.outputs.owner[ov] = NONE;
                self.ej_released(ri, ch);
            }
            if done {
                self.pop_front::<S>(ri, l, t, out);
            }
        }
    }

    /// Ejection channel `ch` takes the next flit of the asynchronously replicated packet at
    /// local VC `l` that holds it, from the LOCAL branch's own position in the FIFO.
    #[cold]
    #[inline(never)]
    fn eject_async<S: VcBits>(&mut self, ri: usize, l: usize, ch: usize, t: u64, ejected: &mut Vec<Ejection>, out: &mut Outbox) {
        let iv = ri * self.npv + l;
        let c = &self.inputs.ctl[iv];
        if c.sa_ready > t || !c.granted.contains(PortSet::LOCAL) {
            return;
        }
        let b = self.branch_slot(iv, true, 0);
        let k = self.branch_pos(b);
        if k >= c.len {
            return;
        }
        let e = if k == 0 { c.front } else { *self.inputs.entry(iv, k) };
        if e.ready > t {
            return;
        }
        // The VC reads one entry a cycle: ejection defers to network branches further
        // behind that can move this cycle (they serve the oldest flit).
        let mut probe = 0u64;
        let mut behind = u16::MAX;
        self.async_able(ri, l, t, &mut probe, &mut behind);
        if behind < k || !self.take_read_at::<S>(l, k) {
            return;
        }
        ejected.push(Ejection { channel: ch as u8, flit: e.flit });
        self.advance_branch(b);
        if e.flit.is_tail() {
            self.inputs.ctl[iv].granted.remove(PortSet::LOCAL);
            self.outputs.owner[(ri * self.np + self.nnet + ch) * self.nv] = NONE;
            self.ej_released(ri, ch);
        }
        if k == 0 {
            let c = &mut self.inputs.ctl[iv];
            c.pending.remove(PortSet::LOCAL);
            if c.pending.is_empty() {
                self.pop_front::<S>(ri, l, t, out);
            }
        }
    }

    /// Switch-allocation requests of the asynchronously replicated packet at local VC `l`:
    /// each network branch holding its output VC may take the flit at its own position; of
    /// those that can go (flit readable, credits), the ones furthest behind ask, so the VC's
    /// one read a cycle serves the oldest flit and branches that can move fall back into step.
    #[cold]
    #[inline(never)]
    fn request_async<S: VcBits>(&mut self, ri: usize, l: usize, t: u64, outs: &mut u64, requested: &mut S) {
        let iv = ri * self.npv + l;
        let mut able = 0u64;
        let mut lowest = u16::MAX;
        if self.async_able(ri, l, t, &mut able, &mut lowest) {
            self.inputs.stall_credit[iv] += 1;
        }
        if able != 0 {
            *requested |= S::bit(l);
        }
        while able != 0 {
            let o = able.trailing_zeros() as usize;
            able &= able - 1;
            self.request::<S>(outs, o, l);
        }
    }

    /// The network branches of the asynchronously replicated packet at local VC `l` that can
    /// take their next flit this cycle (readable, credits for it) and are furthest behind:
    /// their ports into `able`, their position into `lowest`. True if a branch lacked credits.
    fn async_able(&self, ri: usize, l: usize, t: u64, able: &mut u64, lowest: &mut u16) -> bool {
        let iv = ri * self.npv + l;
        let v = self.nv;
        let pbase = ri * self.np;
        let c = &self.inputs.ctl[iv];
        let mut starved = false;
        for o in c.granted.net_ports() {
            let k = self.branch_pos(self.branch_slot(iv, false, o));
            if k >= c.len {
                continue;
            }
            let e = if k == 0 { c.front } else { *self.inputs.entry(iv, k) };
            if e.ready > t {
                continue;
            }
            let Some(need) = self.credits_needed(l, iv, e.flit.is_head(), c.pkt_len, t) else {
                continue;
            };
            let op = pbase + o;
            let ovc = self.outputs.vc_owned_by(op, iv as u32).expect("granted branch without an output VC");
            if self.outputs.credits[op * v + ovc] < need {
                starved = true;
                continue;
            }
            if k < *lowest {
                *lowest = k;
                *able = 0;
            }
            if k == *lowest {
                *able |= 1 << o;
            }
        }
        starved
    }

    /// Switch allocation on the network ports of router `r`, and crossbar traversal of the winners.
    pub(crate) fn allocate_switch<S: VcBits>(&mut self, r: NodeId, t: u64, out: &mut Outbox) {
        let ri = r.idx();
        let v = self.vcs();
        let base = ri * self.npv;
        let pbase = ri * self.np;
        let width = self.params.link_width;
        let policy = self.params.arbiter;
        let mut outs = 0u64;
        let mut requested = S::ZERO;
        for l in members(self.switch_candidates::<S>(ri) & self.readable::<S>()) {
            let iv = base + l;
            let c = &self.inputs.ctl[iv];
            if c.sa_ready > t {
                continue;
            }
            if c.async_rep {
                self.request_async::<S>(ri, l, t, &mut outs, &mut requested);
                continue;
            }
            let branches = c.pending.intersection(c.granted).network().bits();
            if branches == 0 {
                continue;
            }
            let e = self.inputs.front_entry(iv);
            if e.ready > t {
                continue;
            }
            let Some(need) = self.credits_needed(l, iv, e.flit.is_head(), c.pkt_len, t) else {
                continue;
            };
            let mut starved = false;
            if c.route.network().bits().is_power_of_two() {
                // Unicast: one branch, its output VC cached.
                let o = branches.trailing_zeros() as usize;
                if self.outputs.credits[(pbase + o) * v + c.ovc as usize] < need {
                    starved = true;
                } else {
                    self.request::<S>(&mut outs, o, l);
                    requested |= S::bit(l);
                }
            } else {
                let mut b = branches;
                while b != 0 {
                    let o = b.trailing_zeros() as usize;
                    b &= b - 1;
                    let op = pbase + o;
                    let ovc = self.outputs.vc_owned_by(op, iv as u32).expect("granted branch without an output VC");
                    if self.outputs.credits[op * v + ovc] < need {
                        starved = true;
                        continue;
                    }
                    self.request::<S>(&mut outs, o, l);
                    requested |= S::bit(l);
                }
            }
            if starved {
                self.inputs.stall_credit[iv] += 1;
            }
        }
        if outs == 0 {
            return;
        }
        // Outputs take turns, by cycle, at picking first.
        let start = self.sa_start(t);
        let mut rest = outs.rotate_right(start);
        while rest != 0 {
            let o = (rest.trailing_zeros() + start) as usize & 63;
            rest &= rest - 1;
            let op = pbase + o;
            let mut grants = 0;
            while grants < width {
                let req = S::load(self.scratch.req[o]);
                let want = req & self.readable::<S>();
                if want.is_empty() {
                    break;
                }
                let inputs = &self.inputs;
                let Some(l) = self.outputs.sa_arb[op].arbitrate(policy, want, |l| inputs.rank[base + l]) else {
                    break;
                };
                (req & !S::bit(l)).store_into(&mut self.scratch.req[o]);
                if self.inputs.ctl[base + l].async_rep {
                    if self.cross_async::<S>(ri, l, o, t, out) {
                        grants += 1;
                    }
                    continue;
                }
                grants += 1;
                let taken = self.take_read::<S>(l);
                debug_assert!(taken);
                let iv = base + l;
                let flit = self.inputs.front_entry(iv).flit;
                let c = &self.inputs.ctl[iv];
                let ovc = if c.route.network().bits().is_power_of_two() {
                    c.ovc as usize
                } else {
                    self.outputs.vc_owned_by(op, iv as u32).expect("granted branch without an output VC")
                };
                out.departures.push(Departure { out_port: op as u32, vc: ovc as u8, flit });
                self.outputs.credits[op * v + ovc] -= 1;
                let c = &mut self.inputs.ctl[iv];
                c.pending.remove(PortSet::port(o));
                let done = c.pending.is_empty();
                if flit.is_tail() {
                    c.granted.remove(PortSet::port(o));
                    self.outputs.owner[op * v + ovc] = NONE;
                    self.ovc_released(ri, t);
                }
                self.outputs.sa_arb[op].grant_accepted(self.npv, l);
                if done {
                    self.pop_front::<S>(ri, l, t, out);
                }
            }
        }
        // Requesters that got no output this cycle lost arbitration (or crossbar bandwidth).
        for l in members(requested & !S::load(self.scratch.read)) {
            self.inputs.stall_arb[base + l] += 1;
        }
    }

    /// Output `o` granted to the asynchronously replicated packet at local VC `l`: its
    /// branch's flit crosses, unless the VC has read another entry this cycle (then false).
    #[cold]
    #[inline(never)]
    fn cross_async<S: VcBits>(&mut self, ri: usize, l: usize, o: usize, t: u64, out: &mut Outbox) -> bool {
        let iv = ri * self.npv + l;
        let v = self.nv;
        let op = ri * self.np + o;
        let b = self.branch_slot(iv, false, o);
        let k = self.branch_pos(b);
        if !self.take_read_at::<S>(l, k) {
            return false;
        }
        let flit = if k == 0 { self.inputs.ctl[iv].front.flit } else { self.inputs.entry(iv, k).flit };
        let ovc = self.outputs.vc_owned_by(op, iv as u32).expect("granted branch without an output VC");
        out.departures.push(Departure { out_port: op as u32, vc: ovc as u8, flit });
        self.outputs.credits[op * v + ovc] -= 1;
        self.advance_branch(b);
        if flit.is_tail() {
            self.inputs.ctl[iv].granted.remove(PortSet::port(o));
            self.outputs.owner[op * v + ovc] = NONE;
            self.ovc_released(ri, t);
        }
        self.outputs.sa_arb[op].grant_accepted(self.npv, l);
        if k == 0 {
            let c = &mut self.inputs.ctl[iv];
            c.pending.remove(PortSet::port(o));
            if c.pending.is_empty() {
                self.pop_front::<S>(ri, l, t, out);
            }
        }
        true
    }

    /// Downstream credits the flit at local VC `l` (global `iv`) needs to cross: one for a
    /// worm's flit, a whole packet's for a cut-through or store-and-forward head. None while
    /// a store-and-forward head waits for its tail (except at an injection port, where the
    /// NIC already holds the whole packet).
    #[inline(always)]
    fn credits_needed(&self, l: usize, iv: usize, head: bool, pkt_len: u16, t: u64) -> Option<u16> {
        match self.params.switching {
            Switching::Wormhole => Some(1),
            Switching::StoreAndForward if head && l < self.net_vcs && !self.inputs.whole_packet_ready(iv, t) => None,
            _ if head => Some(pkt_len),
            _ => Some(1),
        }
    }

    /// Local VC `l` requests output `o` this cycle.
    #[inline(always)]
    fn request<S: VcBits>(&mut self, outs: &mut u64, o: usize, l: usize) {
        if *outs & (1 << o) == 0 {
            *outs |= 1 << o;
            S::ZERO.store_into(&mut self.scratch.req[o]);
        }
        S::insert_into(&mut self.scratch.req[o], l);
    }
}
