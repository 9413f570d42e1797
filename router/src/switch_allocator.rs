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
use crate::router::{Departure, Ejection, Outbox, Routers, bit, members};

impl Routers {
    /// Each ejection channel takes the front flit of the packet holding it.
    pub(crate) fn eject(&mut self, r: NodeId, t: u64, ejected: &mut Vec<Ejection>) {
        let (v, net, k) = (self.vcs(), self.params.net_ports as usize, self.params.nic_channels as usize);
        let base = r.idx() * (net + k) * v;
        let mut owned = self.ej_owned(r.idx());
        while owned != 0 {
            let ch = owned.trailing_zeros() as usize;
            owned &= owned - 1;
            let ov = (r.idx() * (net + k) + net + ch) * v;
            let iv = self.outputs.owner[ov] as usize;
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
        let base = r.idx() * p * v;
        let switching = self.params.switching;
        let width = self.params.link_width;
        let policy = self.params.arbiter;
        let readable = self.readable();
        let mut outs = 0u64;
        let mut requested = 0;
        for l in members(self.switch_candidates(r.idx()) & readable) {
            let iv = base + l;
            let c = &self.inputs.ctl[iv];
            if c.sa_ready > t {
                continue;
            }
            let branches = c.pending.intersection(c.granted).network();
            if branches.is_empty() {
                continue;
            }
            let e = self.inputs.entry(iv, 0);
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
                _ if head => c.pkt_len,
                _ => 1,
            };
            let unicast = c.route.network().bits().is_power_of_two();
            let mut starved = false;
            for o in branches.net_ports() {
                let op = r.idx() * p + o;
                let ovc = if unicast {
                    c.ovc as usize
                } else {
                    self.outputs.vc_owned_by(op, iv as u32).expect("granted branch without an output VC")
                };
                debug_assert_eq!(self.outputs.owner[op * v + ovc], iv as u32);
                if self.outputs.credits[op * v + ovc] < need {
                    starved = true;
                    continue;
                }
                if outs & (1 << o) == 0 {
                    outs |= 1 << o;
                    self.scratch.req[o] = 0;
                }
                self.scratch.req[o] |= bit(l);
                requested |= bit(l);
            }
            if starved {
                self.inputs.stall_credit[iv] += 1;
            }
        }
        if outs == 0 {
            return;
        }
        let start = (t % net as u64) as u32;
        let mut rest = outs.rotate_right(start);
        while rest != 0 {
            let o = (rest.trailing_zeros() + start) as usize % 64;
            rest &= rest - 1;
            let op = r.idx() * p + o;
            for _ in 0..width {
                let want = self.scratch.req[o] & self.readable();
                let inputs = &self.inputs;
                let Some(l) = self.outputs.sa_arb[op].arbitrate(policy, want, |l| (inputs.ctl[base + l].key, inputs.ctl[base + l].birth))
                else {
                    break;
                };
                self.scratch.req[o] &= !bit(l);
                let taken = self.take_read(l);
                debug_assert!(taken);
                let iv = base + l;
                let flit = self.inputs.entry(iv, 0).flit;
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
                if flit.is_tail() {
                    c.granted.remove(PortSet::port(o));
                    self.outputs.owner[op * v + ovc] = NONE;
                }
                self.outputs.sa_arb[op].grant_accepted(p * v, l);
            }
        }
        // Requesters that got no output this cycle lost arbitration (or crossbar bandwidth).
        for l in members(requested & !self.scratch.read) {
            self.inputs.stall_arb[base + l] += 1;
        }
    }
}
