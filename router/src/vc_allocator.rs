//! VC allocation: a routed packet acquires, on each of its output ports, an output VC (or,
//! for LOCAL, an ejection channel), and holds it until its tail flit has passed.
//!
//! ```text
//!  cycle t: RC done (t >= va_ready) ──► request free VCs allowed by vc_mask
//!           each free output VC goes to the arbiter's winner ──► SA from t + va_delay
//! ```

use crate::arbiter::Request;
use crate::ids::{NONE, NodeId};
use crate::input_unit::VcStage;
use crate::port_set::PortSet;
use crate::router::Routers;

impl Routers {
    /// Give each free ejection channel of router `r` to one packet waiting to eject.
    pub(crate) fn allocate_ejection(&mut self, r: NodeId, t: u64) {
        let (v, net, k) = (self.vcs(), self.params.net_ports as usize, self.params.nic_channels as usize);
        let pv = self.ports() * v;
        let base = r.idx() * pv;
        let va_delay = self.params.pipeline.va_delay as u64;
        let policy = self.params.arbiter;
        let Routers { inputs, outputs, scratch, .. } = self;
        let mut n = 0;
        for &l in &scratch.list {
            let l = l as usize;
            let c = &inputs.ctl[base + l];
            if c.stage == VcStage::Routed && c.pending.contains(PortSet::LOCAL) && !c.granted.contains(PortSet::LOCAL) && c.va_ready <= t {
                scratch.reqs[n] = Request { who: l as u16, key: c.key, birth: c.birth };
                n += 1;
            }
        }
        if n == 0 {
            return;
        }
        for ch in 0..k {
            let op = r.idx() * (net + k) + net + ch;
            if outputs.owner[op * v] != NONE {
                continue;
            }
            let winner = outputs.va_arb[op].arbitrate(policy, pv as u16, &scratch.reqs[..n], |rq| {
                !inputs.ctl[base + rq.who as usize].granted.contains(PortSet::LOCAL)
            });
            let Some(i) = winner else { break };
            let l = scratch.reqs[i].who as usize;
            let c = &mut inputs.ctl[base + l];
            outputs.owner[op * v] = (base + l) as u32;
            c.granted |= PortSet::LOCAL;
            c.eject_ch = ch as u8;
            c.sa_ready = c.sa_ready.max(t + va_delay);
            outputs.va_arb[op].grant_accepted(pv as u16, l as u16);
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
        let Routers { inputs, outputs, scratch, .. } = self;
        scratch.nreq[..net].fill(0);
        let mut any = false;
        for &l in &scratch.list {
            let l = l as usize;
            let c = &inputs.ctl[base + l];
            if c.stage != VcStage::Routed || c.va_ready > t {
                continue;
            }
            // Branches still owed the front flit and holding no VC (a branch that has sent
            // its tail is no longer pending, so it is never allocated again).
            let need = c.pending.network().difference(c.granted);
            for o in need.net_ports() {
                let k = scratch.nreq[o] as usize;
                scratch.reqs[o * pv + k] = Request { who: l as u16, key: c.key, birth: c.birth };
                scratch.nreq[o] += 1;
                any = true;
            }
        }
        if !any {
            return;
        }
        for o in 0..net {
            let n = scratch.nreq[o] as usize;
            if n == 0 {
                continue;
            }
            let op = r.idx() * p + o;
            let reqs = &scratch.reqs[o * pv..o * pv + n];
            for vc in 0..v {
                let ov = op * v + vc;
                if outputs.owner[ov] != NONE {
                    continue;
                }
                let winner = outputs.va_arb[op].arbitrate(policy, pv as u16, reqs, |rq| {
                    let c = &inputs.ctl[base + rq.who as usize];
                    c.vc_mask & (1 << vc) != 0 && !c.granted.has_port(o)
                });
                let Some(i) = winner else { continue };
                let l = reqs[i].who as usize;
                let c = &mut inputs.ctl[base + l];
                outputs.owner[ov] = (base + l) as u32;
                c.granted |= PortSet::port(o);
                c.ovc = vc as u8;
                c.sa_ready = c.sa_ready.max(t + va_delay);
                outputs.va_arb[op].grant_accepted(pv as u16, l as u16);
            }
        }
    }
}
