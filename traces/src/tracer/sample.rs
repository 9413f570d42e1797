//! Sampling a cycle: the flits on links and through NIC channels, the allocators' requests
//! and grants, the `failed` bits, and the registers (buffer occupancy, VC state, credits,
//! the NIC queue), each compared with the value last written.

use super::{ChanSigs, DEST_BROADCAST, LinkSigs, OUT_VC, ROUTE, Tracer, VA_GNT, VA_REQ};
use crate::sink::ops;
use fabric::Fabric;
use fabric::probe::CycleView;
use router::NONE;

impl Tracer {
    /// Register values at the end of cycle `t`: those that differ from the values written
    /// go to timestamp `t + 1` (or, before the traced window, are only remembered). Input VCs
    /// that were empty and idle and took no flit since, and output ports whose credits
    /// cannot have changed, are not looked at.
    pub(super) fn sample_registers(&mut self, f: &Fabric, t: u64) {
        let r = &f.routers;
        let credit_ready = t + 1 + r.params.pipeline.credit_delay as u64;
        let Tracer {
            traced,
            ivcs,
            ivc_start,
            ivc_last,
            ivc_live,
            live_start,
            ivc_pushes,
            ports,
            port_start,
            credit_last,
            port_hot,
            counted,
            reads_credits,
            credit_now,
            returns,
            touched,
            nic_queue,
            queue_last,
            batch,
            emit,
            vcs,
            ..
        } = self;
        let (emit, vcs) = (*emit, *vcs);
        let mut change = |s: usize, v: u64| {
            if emit {
                ops::push_change(batch, s, v);
            }
        };
        for (i, &node) in traced.iter().enumerate() {
            // Registers change only where the router was evaluated, holds flits, has credits
            // coming back or just arrived (a port still `hot`), or its NIC works.
            let (plo, phi) = if reads_credits[i] { (port_start[i] as usize, port_start[i + 1] as usize) } else { (0, 0) };
            if !(f.is_active(node) || r.may_change(node) || f.nics.busy(node) || port_hot[plo..phi].contains(&true)) {
                continue;
            }
            let (lo, hi) = (ivc_start[i] as usize, ivc_start[i + 1] as usize);
            let (sigs, lasts, pushes) = (&ivcs[lo..hi], &mut ivc_last[lo..hi], &mut ivc_pushes[lo..hi]);
            let live = &mut ivc_live[live_start[i] as usize..live_start[i + 1] as usize];
            for (w, word) in live.iter_mut().enumerate() {
                let mut bits = *word;
                while bits != 0 {
                    let j = 64 * w + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let p = sigs[j];
                    let iv = p.iv as usize;
                    let len = r.occupancy_of(iv) as u32;
                    let now = len << 2 | r.vc_activity(iv) as u32;
                    let was = std::mem::replace(&mut lasts[j], now);
                    if (now ^ was) >> 2 != 0 {
                        change(p.occ as usize, len as u64);
                    }
                    if (now ^ was) & 3 != 0 {
                        change(p.occ as usize + 1, (now & 3) as u64);
                    }
                    // Flits that left give credits back upstream.
                    let came = std::mem::take(&mut pushes[j]) as u32;
                    debug_assert!((was >> 2) + came >= len, "input VC {iv}: {} flits, {came} came in, now {len}", was >> 2);
                    let left = ((was >> 2) + came).saturating_sub(len);
                    if left > 0 && p.up != NONE {
                        for _ in 0..left {
                            returns.push_back((credit_ready, p.up));
                        }
                    }
                    // Empty and idle: it stays so until a flit comes in (`wake`).
                    if now == 0 {
                        *word &= !(1 << (j % 64));
                    }
                }
            }
            // Credits of ports whose downstream is not traced, read from the router.
            let ports = ports[plo..phi].iter().zip(&counted[plo..phi]).zip(&mut port_hot[plo..phi]);
            for (k, ((p, &counted), hot)) in (plo..).zip(ports) {
                if counted {
                    continue;
                }
                let op = p.op as usize;
                let in_flight = r.credits_in_flight(op) > 0;
                // Credits change when a flit leaves (`hot`, set by `departures`) or a credit
                // comes back from the return line.
                if !(in_flight || *hot) {
                    continue;
                }
                *hot = in_flight;
                for (v, last) in credit_last[k * vcs..(k + 1) * vcs].iter_mut().enumerate() {
                    // After the commit of `t`, the credits the router will see in `t + 1`.
                    let now = r.credits(op, v);
                    if now != *last {
                        *last = now;
                        change(p.sig as usize + 2 * v, now as u64);
                    }
                }
            }
            let q = f.nics.queued(node).min(0xffff) as u16;
            if q != queue_last[i] {
                queue_last[i] = q;
                change(nic_queue[i] as usize, q as u64);
            }
        }
        // Counted credits: those back by `t + 1`, then every one that changed.
        while let Some(&(ready, c)) = returns.front() {
            if ready > t + 1 {
                break;
            }
            returns.pop_front();
            credit_now[c as usize] += 1;
            touched.push(c);
        }
        for &c in touched.iter() {
            let (c, now) = (c as usize, credit_now[c as usize]);
            if now != credit_last[c] {
                credit_last[c] = now;
                change(ports[c / vcs].sig as usize + 2 * (c % vcs), now as u64);
            }
        }
        touched.clear();
        if cfg!(debug_assertions) {
            for (k, p) in ports.iter().enumerate().filter(|&(k, _)| counted[k]) {
                for v in 0..vcs {
                    let router = r.credits_at(p.op as usize, v, t + 1);
                    assert_eq!(credit_now[k * vcs + v], router, "counted credits of output port {} VC {v} at cycle {}", p.op, t + 1);
                }
            }
        }
    }

    /// A flit enters input VC `iv` (global index) in this cycle.
    #[inline(always)]
    fn wake(&mut self, iv: usize) {
        let e = self.ivc_entry[iv];
        if e != NONE {
            let (w, b) = self.live_bit[e as usize];
            self.ivc_live[w as usize] |= 1 << b;
            self.ivc_pushes[e as usize] += 1;
        }
    }

    /// The `failed` signals of the traced links: high once their link is dead.
    pub(super) fn failures(&mut self, f: &Fabric) {
        let Some(faults) = f.faults.as_deref() else { return };
        let ports = f.routers.ports();
        for k in 0..self.failed.len() {
            let (s, op) = self.failed[k];
            self.set(s, faults.output_dead(op as usize, ports) as u64);
        }
    }

    /// A flit leaves on output port `op` (global index) for VC `vc`: it enters the VC
    /// downstream and takes a credit. Returns the traced port (`i * net + o`) or NONE.
    #[inline(always)]
    fn departure(&mut self, op: usize, vc: u8, tail: bool) -> u32 {
        let info = self.by_op[op];
        if info.down != NONE {
            // The port's VCs are consecutive entries and bits.
            let bit = (info.down_bit & 63) + vc as u32;
            self.ivc_live[(info.down_bit >> 6) as usize + (bit >> 6) as usize] |= 1 << (bit & 63);
            self.ivc_pushes[info.down as usize + vc as usize] += 1;
        }
        if info.port_sigs != NONE {
            let k = info.port_sigs as usize;
            if tail {
                // The output VC is free from the cycle its tail leaves (after this cycle's
                // grants: a one-flit packet may be granted and leave in one cycle).
                self.owner_frees.push(self.ports[k].sig + 2 * vc as u32 + 1);
            }
            if self.counted[k] {
                let c = k * self.vcs + vc as usize;
                self.credit_now[c] -= 1;
                self.touched.push(c as u32);
            } else {
                self.port_hot[k] = true;
            }
        }
        info.port
    }

    /// This cycle's link activity: flits into input VCs and credits taken, and the link
    /// signals (before the traced window, `show` false, only the values they hold).
    pub(super) fn departures(&mut self, v: &CycleView<'_>, show: bool) {
        if self.lanes == 1 {
            // One flit per link and cycle: no lanes to assign.
            for d in v.departures {
                let port = self.departure(d.out_port as usize, d.vc, d.flit.is_tail());
                if port != NONE {
                    let s = self.links[port as usize];
                    if s.valid != NONE {
                        self.link(s, d.vc, d.flit, v.fabric, show);
                    }
                }
            }
            return;
        }
        let p = v.fabric.routers.ports();
        self.deps.clear();
        for d in v.departures {
            if self.departure(d.out_port as usize, d.vc, d.flit.is_tail()) != NONE {
                self.deps.push((d.out_port, d.vc, d.flit));
            }
        }
        // Flits of one port take its lanes in VC order.
        self.deps.sort_unstable_by_key(|&(op, vc, _)| (op, vc));
        let deps = std::mem::take(&mut self.deps);
        for &(op, vc, flit) in &deps {
            let (node, o) = (op as usize / p, op as usize % p);
            let i = self.slot[node] as usize;
            let lane = self.lane_used[i * self.net + o] as usize;
            self.lane_used[i * self.net + o] += 1;
            debug_assert!(lane < self.lanes, "more flits than lanes on output port {op}");
            let s = self.links[(i * self.net + o) * self.lanes + lane.min(self.lanes - 1)];
            if s.valid != NONE {
                self.link(s, vc, flit, v.fabric, show);
            }
        }
        for &(op, _, _) in &deps {
            let (node, o) = (op as usize / p, op as usize % p);
            self.lane_used[self.slot[node] as usize * self.net + o] = 0;
        }
        self.deps = deps;
    }

    /// A flit on a traced link: `valid` and `flags` pulse (if `show`); `vc`, `packet` and
    /// `msg` hold the last flit's values, followed before the window too so that its first
    /// dump shows them.
    #[inline]
    fn link(&mut self, s: LinkSigs, vc: u8, flit: router::Flit, f: &Fabric, show: bool) {
        let p = f.packets.get(flit.packet);
        let msg = p.msg;
        let dest = if p.is_broadcast() { DEST_BROADCAST | p.header.span as u64 } else { p.dest().0 as u64 };
        if show {
            self.pulse(s.valid, 1);
            self.pulse(s.flags, 4 | flit.flags.bits() as u64);
            self.link_flits += 1;
        }
        self.set(s.vc, vc as u64);
        self.set(s.packet, flit.packet.0 as u64);
        self.set(s.dest, dest);
        self.set(s.msg, msg as u64);
    }

    /// This cycle's allocations: switch requests and grants per input port (pulses, if
    /// `show`), VC grants (pulses) and the output port and VC they gave (held), and which
    /// VCs request VC allocation (those still waiting at the end of the cycle and those
    /// granted in it).
    pub(super) fn allocators(&mut self, v: &CycleView<'_>, show: bool) {
        let r = &v.fabric.routers;
        let (ports, vcs, npv) = (r.ports(), self.vcs, r.ports() * self.vcs);
        let vmask = if vcs >= 64 { u64::MAX } else { (1u64 << vcs) - 1 };
        if show {
            for &(node, req) in &v.allocs.sa_requests {
                let i = self.slot[node as usize];
                if i != NONE {
                    let now = &mut self.sa_now[i as usize];
                    if *now == (0, 0) {
                        self.sa_touched.push(i);
                    }
                    now.0 |= req;
                }
            }
            for &iv in &v.allocs.sa_grants {
                let i = self.slot[iv as usize / npv];
                if i != NONE {
                    let now = &mut self.sa_now[i as usize];
                    if *now == (0, 0) {
                        self.sa_touched.push(i);
                    }
                    now.1 |= 1 << (iv as usize % npv);
                }
            }
            let touched = std::mem::take(&mut self.sa_touched);
            for &i in &touched {
                let (req, gnt) = std::mem::take(&mut self.sa_now[i as usize]);
                let mut left = req | gnt;
                while left != 0 {
                    let p = left.trailing_zeros() as usize / vcs;
                    let (r, g) = ((req >> (p * vcs)) as u64 & vmask, (gnt >> (p * vcs)) as u64 & vmask);
                    left &= !((vmask as u128) << (p * vcs));
                    let sig = self.in_port[i as usize * ports + p];
                    if sig == NONE {
                        continue;
                    }
                    if r != 0 {
                        self.pulse(sig, r);
                    }
                    if g != 0 {
                        self.pulse(sig + 1, g);
                    }
                }
            }
            self.sa_touched = touched;
            self.sa_touched.clear();
        }
        for g in &v.allocs.va_grants {
            let node = g.iv as usize / npv;
            let i = self.slot[node];
            if i == NONE {
                continue;
            }
            self.va_granted[i as usize] |= 1 << (g.iv as usize % npv);
            let e = self.ivc_entry[g.iv as usize];
            if e == NONE {
                continue;
            }
            let occ = self.ivcs[e as usize].occ;
            if show {
                self.pulse(occ + VA_GNT, 1);
            }
            self.set(occ + ROUTE, g.port as u64);
            self.set(occ + OUT_VC, g.vc as u64);
        }
        // The output VCs' owners (network ports; traced whether or not the input VC is).
        for g in &v.allocs.va_grants {
            let (node, port) = (g.iv as usize / npv, g.port as usize);
            let i = self.slot[node];
            if i == NONE || port >= self.net {
                continue;
            }
            let k = self.port_of[i as usize * self.net + port];
            if k != NONE {
                self.set(self.ports[k as usize].sig + 2 * g.vc as u32 + 1, (g.iv as usize % npv) as u64);
            }
        }
        let frees = std::mem::take(&mut self.owner_frees);
        for &s in &frees {
            self.set(s, self.owner_free);
        }
        self.owner_frees = frees;
        self.owner_frees.clear();
        for i in 0..self.traced.len() {
            let node = self.traced[i];
            let granted = std::mem::take(&mut self.va_granted[i]);
            // Requesters join only where the router registers work, and leave only by a
            // grant.
            if !(granted != 0 || self.va_recheck[i] || self.va_last[i] != 0 || r.has_work(node)) {
                continue;
            }
            self.va_recheck[i] = granted != 0;
            let now = r.va_requesters(node) | granted;
            let mut changed = now ^ self.va_last[i];
            self.va_last[i] = now;
            while changed != 0 {
                let l = changed.trailing_zeros() as usize;
                changed &= changed - 1;
                let e = self.ivc_entry[node.idx() * npv + l];
                if e != NONE {
                    self.set(self.ivcs[e as usize].occ + VA_REQ, (now >> l) as u64 & 1);
                }
            }
        }
    }

    /// Pulse each signal in `masks` with the OR of its masks.
    fn pulse_masks(&mut self) {
        if self.masks.is_empty() {
            return;
        }
        self.masks.sort_unstable();
        let masks = std::mem::take(&mut self.masks);
        let mut j = 0;
        while j < masks.len() {
            let (s, mut m) = masks[j];
            j += 1;
            while j < masks.len() && masks[j].0 == s {
                m |= masks[j].1;
                j += 1;
            }
            if m != 0 {
                self.pulse(s, m);
            }
        }
        self.masks = masks;
    }

    /// This cycle's NIC activity: flits into injection buffers and the NIC signals (before
    /// the traced window, `show` false, only the values they hold).
    pub(super) fn nics(&mut self, v: &CycleView<'_>, show: bool) {
        self.masks.clear();
        let net = v.fabric.routers.params.net_ports as usize;
        for &(node, ch, flit) in v.injections {
            // The router picked the VC (one flit a channel a cycle: the current packet's).
            let vc = v.fabric.routers.injection_vc_in_use(node, ch as usize);
            self.wake(v.fabric.routers.ivc_index(node, net + ch as usize, vc));
            let i = self.slot[node.idx()];
            if i == NONE {
                continue;
            }
            let s = self.inj[i as usize * self.k + ch as usize];
            let msg = v.fabric.packets.get(flit.packet).msg;
            self.chan(s, flit, msg, show);
            if show {
                self.masks.push((self.nic_inject[i as usize], 1 << ch));
            }
        }
        for &(node, ej, msg) in v.ejections {
            let i = self.slot[node.idx()];
            if i == NONE {
                continue;
            }
            let s = self.ej[i as usize * self.k + ej.channel as usize];
            self.chan(s, ej.flit, msg, show);
            if show {
                self.masks.push((self.nic_eject[i as usize], 1 << ej.channel));
            }
        }
        // One value per signal: the channels of a node together.
        self.pulse_masks();
    }

    /// A flit through a traced NIC channel: pulses (if `show`) and held values, as [`Self::link`].
    fn chan(&mut self, s: ChanSigs, flit: router::Flit, msg: u32, show: bool) {
        if show {
            self.pulse(s.valid, 1);
            self.pulse(s.flags, 4 | flit.flags.bits() as u64);
        }
        self.set(s.packet, flit.packet.0 as u64);
        self.set(s.msg, msg as u64);
    }
}
