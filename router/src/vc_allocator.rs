//! VC allocation: a routed packet acquires, on each of its output ports, an output VC (or,
//! for LOCAL, an ejection channel), and holds it until its tail flit has passed.
//!
//! ```text
//!  cycle t: RC done (t >= va_ready) ──► request free VCs allowed by vc_mask
//!           each free output VC goes to the arbiter's winner ──► SA from t + va_delay
//! ```

use crate::arbiter::Request;
use crate::ids::{NONE, NodeId};
use crate::port_set::PortSet;
use crate::router::{Routers, Sel};

impl Routers {
    /// Give each free ejection channel of router `r` to one packet waiting to eject.
    pub(crate) fn allocate_ejection(&mut self, r: NodeId, t: u64) {
        let (v, net, k) = (self.vcs(), self.params.net_ports as usize, self.params.nic_channels as usize);
        let pv = self.ports() * v;
        let base = r.idx() * pv;
        let va_delay = self.params.pipeline.va_delay as u64;
        let policy = self.params.arbiter;
        self.collect(r.idx(), Sel::NeedEj);
        let mut n = 0;
        for i in 0..self.scratch.list.len() {
            let l = self.scratch.list[i] as usize;
            let c = &self.inputs.ctl[base + l];
            if c.va_ready <= t {
                self.scratch.reqs[n] = Request { who: l as u16, key: c.key, birth: c.birth };
                n += 1;
            }
        }
        for ch in 0..k {
            if n == 0 {
                break;
            }
            let op = r.idx() * (net + k) + net + ch;
            if self.outputs.owner[op * v] != NONE {
                continue;
            }
            let winner = {
                let inputs = &self.inputs;
                self.outputs.va_arb[op].arbitrate(policy, pv as u16, &self.scratch.reqs[..n], |rq| {
                    !inputs.ctl[base + rq.who as usize].granted.contains(PortSet::LOCAL)
                })
            };
            let Some(i) = winner else { break };
            let l = self.scratch.reqs[i].who as usize;
            let c = &mut self.inputs.ctl[base + l];
            self.outputs.owner[op * v] = (base + l) as u32;
            c.granted |= PortSet::LOCAL;
            c.eject_ch = ch as u8;
            c.sa_ready = c.sa_ready.max(t + va_delay);
            self.outputs.va_arb[op].grant_accepted(pv as u16, l as u16);
            self.ej_granted(r.idx(), l, ch);
        }
    }

    /// Give each free output VC of router `r`'s network ports to one packet routed there
    /// whose `vc_mask` allows it.
    pub(crate) fn allocate_network_vcs(&mut self, r: NodeId, t: u64) {
        let (v, net) = (self.vcs(), self.params.net_ports as usize);
        let p = self.ports();
        let pv = p * v;
        let base = r.idx() * pv;
        let va_delay = self.params.pipeline.va_delay as u64;
        let policy = self.params.arbiter;
        self.collect(r.idx(), Sel::NeedVa);
        let mut outs = 0u64;
        for i in 0..self.scratch.list.len() {
            let l = self.scratch.list[i] as usize;
            let c = &self.inputs.ctl[base + l];
            if c.va_ready > t {
                continue;
            }
            // Branches still owed the front flit and holding no VC (a branch that has sent
            // its tail is no longer pending, so it is never allocated again).
            let need = c.pending.network().difference(c.granted);
            for o in need.net_ports() {
                if outs & (1 << o) == 0 {
                    outs |= 1 << o;
                    self.scratch.nreq[o] = 0;
                }
                let k = self.scratch.nreq[o] as usize;
                self.scratch.reqs[o * pv + k] = Request { who: l as u16, key: c.key, birth: c.birth };
                self.scratch.nreq[o] += 1;
            }
        }
        let mut rest = outs;
        while rest != 0 {
            let o = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            debug_assert!(o < net);
            let n = self.scratch.nreq[o] as usize;
            let op = r.idx() * p + o;
            for vc in 0..v {
                let ov = op * v + vc;
                if self.outputs.owner[ov] != NONE {
                    continue;
                }
                let winner = {
                    let inputs = &self.inputs;
                    self.outputs.va_arb[op].arbitrate(policy, pv as u16, &self.scratch.reqs[o * pv..o * pv + n], |rq| {
                        let c = &inputs.ctl[base + rq.who as usize];
                        c.vc_mask & (1 << vc) != 0 && !c.granted.has_port(o)
                    })
                };
                let Some(i) = winner else { continue };
                let l = self.scratch.reqs[o * pv + i].who as usize;
                let c = &mut self.inputs.ctl[base + l];
                self.outputs.owner[ov] = (base + l) as u32;
                c.granted |= PortSet::port(o);
                c.ovc = vc as u8;
                c.sa_ready = c.sa_ready.max(t + va_delay);
                self.outputs.va_arb[op].grant_accepted(pv as u16, l as u16);
            }
        }
        for i in 0..self.scratch.list.len() {
            let l = self.scratch.list[i] as usize;
            let c = &self.inputs.ctl[base + l];
            if c.pending.network().difference(c.granted).is_empty() {
                self.va_done(r.idx(), l);
            }
        }
    }
}
