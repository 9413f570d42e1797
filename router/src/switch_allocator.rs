//! Switch allocation and crossbar traversal.
//!
//! Ejection channels are dedicated to the packet holding them and take one flit per cycle.
//! Network outputs use a separable output-first allocator: each output port's arbiter grants
//! up to `link_width` requests per cycle, each input port's crossbar reads are limited to
//! `link_width` per cycle, and each VC sends at most its front flit. A flit granted to
//! several outputs in one cycle is read once and replicated by the crossbar (multicast);
//! it leaves the input buffer once every branch has taken it.
//!
//! ```text
//!  cycle t: front flit readable, VC held, credits ok ──► SA grant ──► crossbar + link
//!           readable downstream at t + link_latency; credit back upstream at t + 1 + credit_delay
//! ```

use crate::ids::{NONE, NodeId};
use crate::params::Switching;
use crate::port_set::PortSet;
use crate::router::{Departure, Ejection, Outbox, Routers, Sel};

impl Routers {
    /// Each ejection channel takes the front flit of the packet holding it.
    pub(crate) fn eject(&mut self, r: NodeId, t: u64, ejected: &mut Vec<Ejection>) {
        let (v, net, k) = (self.vcs(), self.params.net_ports as usize, self.params.nic_channels as usize);
        let pv = (net + k) * v;
        let base = r.idx() * pv;
        let mut owned = self.ej_owned(r.idx());
        while owned != 0 {
            let ch = owned.trailing_zeros() as usize;
            owned &= owned - 1;
            let ov = (r.idx() * (net + k) + net + ch) * v;
            let owner = self.outputs.owner[ov];
            if owner == NONE {
                continue;
            }
            let iv = owner as usize;
            let c = &self.inputs.ctl[iv];
            if !c.pending.contains(PortSet::LOCAL) || c.sa_ready > t || c.len == 0 {
                continue;
            }
            let e = *self.inputs.entry(iv, 0);
            if e.ready > t || !self.take_read(iv - base) {
                continue;
            }
            ejected.push(Ejection { channel: ch as u8, flit: e.flit });
            let c = &mut self.inputs.ctl[iv];
            c.pending.remove(PortSet::LOCAL);
            if e.flit.is_tail() {
                c.granted.remove(PortSet::LOCAL);
                self.outputs.owner[ov] = NONE;
                self.ej_released(r.idx(), ch);
            }
        }
    }

    /// Switch allocation on the network ports of router `r`, and crossbar traversal of the winners.
    pub(crate) fn allocate_switch(&mut self, r: NodeId, t: u64, out: &mut Outbox) {
        let (v, net) = (self.vcs(), self.params.net_ports as usize);
        let p = self.ports();
        let pv = p * v;
        let base = r.idx() * pv;
        let switching = self.params.switching;
        let width = self.params.link_width;
        let policy = self.params.arbiter;
        if self.collect(r.idx(), Sel::Routed) == 0 {
            return;
        }
        let mut outs = 0u64;
        for i in 0..self.scratch.list.len() {
            let l = self.scratch.list[i] as usize;
            let iv = base + l;
            let c = &self.inputs.ctl[iv];
            if c.sa_ready > t {
                continue;
            }
            let (pending, granted, route, key, birth, pkt_len, cached_ovc) =
                (c.pending, c.granted, c.route, c.key, c.birth, c.pkt_len, c.ovc);
            let branches = pending.intersection(granted).network();
            if branches.is_empty() || !self.can_read(l) {
                continue;
            }
            let e = *self.inputs.entry(iv, 0);
            if e.ready > t {
                continue;
            }
            let head = e.flit.is_head();
            // Store-and-forward: the head waits for its tail, except at an injection port,
            // where the NIC already holds the whole packet.
            if switching == Switching::StoreAndForward && head && l / v < net && !self.inputs.whole_packet_ready(iv, t) {
                continue;
            }
            let need = match switching {
                Switching::Wormhole => 1,
                _ if head => pkt_len,
                _ => 1,
            };
            let unicast = route.network().bits().is_power_of_two();
            for o in branches.net_ports() {
                let op = r.idx() * p + o;
                let ovc = if unicast {
                    cached_ovc as usize
                } else {
                    self.outputs.vc_owned_by(op, iv as u32).expect("granted branch without an output VC")
                };
                debug_assert_eq!(self.outputs.owner[op * v + ovc], iv as u32);
                if self.outputs.credits[op * v + ovc] < need {
                    continue;
                }
                if outs & (1 << o) == 0 {
                    outs |= 1 << o;
                    self.scratch.nreq[o] = 0;
                }
                let k = o * pv + self.scratch.nreq[o] as usize;
                self.scratch.reqs[k] = crate::arbiter::Request { who: l as u16, key, birth };
                self.scratch.req_ovc[k] = ovc as u8;
                self.scratch.nreq[o] += 1;
            }
        }
        if outs == 0 {
            return;
        }
        // Outputs take turns at first pick of the crossbar's input bandwidth: rotate by cycle.
        let start = (t % net as u64) as u32;
        let order = outs.rotate_right(start);
        let mut rest = order;
        while rest != 0 {
            let o = (rest.trailing_zeros() + start) as usize % 64;
            rest &= rest - 1;
            let n = self.scratch.nreq[o] as usize;
            let op = r.idx() * p + o;
            for _ in 0..width {
                let arb = self.outputs.sa_arb[op];
                let winner = {
                    let reqs = &self.scratch.reqs[o * pv..o * pv + n];
                    arb.arbitrate(policy, pv as u16, reqs, |rq| {
                        self.can_read(rq.who as usize) && self.inputs.ctl[base + rq.who as usize].pending.has_port(o)
                    })
                };
                let Some(w) = winner else { break };
                let l = self.scratch.reqs[o * pv + w].who as usize;
                let ovc = self.scratch.req_ovc[o * pv + w] as usize;
                let taken = self.take_read(l);
                debug_assert!(taken);
                let iv = base + l;
                let flit = self.inputs.entry(iv, 0).flit;
                out.departures.push(Departure { out_port: op as u32, vc: ovc as u8, flit });
                self.outputs.credits[op * v + ovc] -= 1;
                let c = &mut self.inputs.ctl[iv];
                c.pending.remove(PortSet::port(o));
                if flit.is_tail() {
                    c.granted.remove(PortSet::port(o));
                    self.outputs.owner[op * v + ovc] = NONE;
                }
                self.outputs.sa_arb[op].grant_accepted(pv as u16, l as u16);
            }
        }
    }
}
