//! VC allocation: a routed packet acquires, on each of its output ports, an output VC (or,
//! for LOCAL, an ejection channel), and holds it until its tail flit has passed.
//!
//! ```text
//!  cycle t: RC done (t >= va_ready) ──► request free VCs allowed by vc_mask
//!           each free output VC goes to the arbiter's winner ──► SA from t + va_delay
//! ```

use crate::ids::{NONE, NodeId};
use crate::port_set::PortSet;
use crate::router::{Routers, bit, members};

impl Routers {
    /// Give each free ejection channel of router `r` to one packet waiting to eject.
    pub(crate) fn allocate_ejection(&mut self, r: NodeId, t: u64) {
        let (v, net, k) = (self.vcs(), self.params.net_ports as usize, self.params.nic_channels as usize);
        let pv = self.ports() * v;
        let base = r.idx() * pv;
        let va_delay = self.params.pipeline.va_delay as u64;
        let policy = self.params.arbiter;
        let mut want = 0;
        for l in members(self.need_ej_set(r.idx())) {
            if self.inputs.ctl[base + l].va_ready <= t {
                want |= bit(l);
            }
        }
        let mut free = !self.ej_owned(r.idx()) & if k >= 64 { !0 } else { (1u64 << k) - 1 };
        while free != 0 {
            let ch = free.trailing_zeros() as usize;
            free &= free - 1;
            if want == 0 {
                break;
            }
            let op = r.idx() * (net + k) + net + ch;
            debug_assert!(self.outputs.owner[op * v] == NONE, "ejection channel {ch} of router {r} held but not marked owned");
            let inputs = &self.inputs;
            let Some(l) = self.outputs.va_arb[op].arbitrate(policy, want, |l| (inputs.ctl[base + l].key, inputs.ctl[base + l].birth))
            else {
                break;
            };
            want &= !bit(l);
            let c = &mut self.inputs.ctl[base + l];
            self.outputs.owner[op * v] = (base + l) as u32;
            c.granted |= PortSet::LOCAL;
            c.eject_ch = ch as u8;
            c.sa_ready = c.sa_ready.max(t + va_delay);
            self.outputs.va_arb[op].grant_accepted(pv, l);
            self.ej_granted(r.idx(), l, ch);
        }
    }

    /// Give each free output VC of router `r`'s network ports to one packet routed there
    /// whose `vc_mask` allows it.
    pub(crate) fn allocate_network_vcs(&mut self, r: NodeId, t: u64) {
        let v = self.vcs();
        let p = self.ports();
        let pv = p * v;
        let base = r.idx() * pv;
        let va_delay = self.params.pipeline.va_delay as u64;
        let policy = self.params.arbiter;
        let waiting = self.need_va_set(r.idx());
        let mut outs = 0u64;
        for l in members(waiting) {
            let c = &self.inputs.ctl[base + l];
            if c.va_ready > t {
                continue;
            }
            // Branches still owed the front flit and holding no VC (a branch that has sent
            // its tail is no longer pending, so it is never allocated again).
            for o in c.pending.network().difference(c.granted).net_ports() {
                if outs & (1 << o) == 0 {
                    outs |= 1 << o;
                    self.scratch.req[o] = 0;
                }
                self.scratch.req[o] |= bit(l);
            }
        }
        let mut rest = outs;
        while rest != 0 {
            let o = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            let op = r.idx() * p + o;
            for vc in 0..v {
                let ov = op * v + vc;
                if self.outputs.owner[ov] != NONE {
                    continue;
                }
                let mut want = 0;
                for l in members(self.scratch.req[o]) {
                    if self.inputs.ctl[base + l].vc_mask & (1 << vc) != 0 {
                        want |= bit(l);
                    }
                }
                let inputs = &self.inputs;
                let Some(l) = self.outputs.va_arb[op].arbitrate(policy, want, |l| (inputs.ctl[base + l].key, inputs.ctl[base + l].birth))
                else {
                    continue;
                };
                self.scratch.req[o] &= !bit(l);
                let c = &mut self.inputs.ctl[base + l];
                self.outputs.owner[ov] = (base + l) as u32;
                c.granted |= PortSet::port(o);
                c.ovc = vc as u8;
                c.sa_ready = c.sa_ready.max(t + va_delay);
                self.outputs.va_arb[op].grant_accepted(pv, l);
            }
        }
        for l in members(waiting) {
            let c = &self.inputs.ctl[base + l];
            if c.pending.network().difference(c.granted).is_empty() {
                self.clear_need_va(r.idx(), l);
            }
        }
    }
}
