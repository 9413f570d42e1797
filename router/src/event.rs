//! Event-driven evaluation of the same routers: a cycle costs in proportion to what happens
//! in it (flits becoming readable, heads routed, grants, flits crossing, credits), not to
//! the routers and VCs that hold flits.
//!
//! It drives the state [`Routers`] keeps (input units, output units, arbiters) by the same
//! rules as [`Routers::stage_eject`] and [`Routers::stage_network`], for fabrics whose packets
//! all take one branch (unicast), whose links carry one flit a cycle and whose routers have
//! at most 64 input VCs; the fabric's scan kernel stays the reference for everything else,
//! and the tests require both to give the same results.
//!
//! What changes is when work is looked at:
//!
//! - A flit enters its input buffer in the cycle it becomes readable (an event `link_latency`
//!   cycles after it was sent, `inject_latency` after the NIC wrote it), so a buffered flit is
//!   a readable one. The buffer statistics still count it from the cycle after it was sent
//!   (the flits on their way are counted in [`EventEval::occ`]).
//! - A head reaching the front of an idle VC is routed then; the VC becomes a VC-allocation
//!   requester `rc_delay` cycles later, and a switch-allocation bidder `va_delay` cycles
//!   after its grant (events in a wheel of per-cycle slots, like credits).
//! - Per router, sets of its input VCs by what they wait for: able VC-allocation requesters,
//!   bidders (output VC held, flit buffered), ejection requesters and ejectors. VC and
//!   ejection-channel allocation run only when a requester arrived or an output VC or channel
//!   was freed (a pass that grants nothing changes no state: arbiters move only on grants);
//!   switch allocation only where there are bidders. Per fabric, bitsets of the routers with
//!   such work, visited in id order.
//!
//! Within a cycle the order of the two stages is kept: ejection-channel allocation and
//! ejection (stage 1), then the fabric runs the nodes' programs and NICs, then VC allocation
//! and switch allocation (stage 2); all effects between routers go through the wheel.

use crate::flit::Flit;
use crate::ids::{NONE, NodeId, PortId};
use crate::input_unit::VcStage;
use crate::params::{RouterParams, Switching};
use crate::port_set::PortSet;
use crate::route_compute::RouterEnv;
use crate::router::{Departure, Ejection, Freed, Outbox, Routers};

/// One router's work, as sets of its input VCs (bit `port * vcs + vc`): one cache line.
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(64))]
struct Work {
    /// Routed to a network output, holding its output VC, able to bid (`sa_ready` passed), a
    /// flit buffered (and, store-and-forward at a network input, the whole packet).
    bid: u64,
    /// Routed to ejection, holding a channel, able (`sa_ready` passed), a flit buffered.
    ejbid: u64,
    /// Able VC-allocation requesters for a network output (`rc_delay` passed, no VC yet).
    va_req: u64,
    /// Able requesters of an ejection channel.
    ej_req: u64,
    /// Ejection channels held (bit per channel).
    ej_owned: u64,
    /// VCs whose input port was read by an ejection in cycle `blocked_at`.
    blocked: u64,
    blocked_at: u64,
    /// VC allocation (network) / ejection-channel allocation must run at the next stage.
    va_dirty: bool,
    ej_dirty: bool,
}

/// What happens at the start of a cycle, filed by cycle in the wheel.
#[derive(Clone, Debug, Default)]
struct Slot {
    /// A flit becomes readable in an input VC ([`vcr`]).
    arrivals: Vec<(u32, Flit)>,
    /// A credit becomes visible at an output VC (global index).
    credits: Vec<u32>,
    /// A routed VC becomes an able VC-allocation requester (its `rc_delay` passed).
    va_joins: Vec<u32>,
    /// A VC that holds its output VC (or channel) may bid (its `va_delay` passed).
    sa_joins: Vec<u32>,
}

/// Input VC `l` of router `r` as the events name it: `r << 6 | l` (no division to find the
/// router again).
#[inline(always)]
fn vcr(r: usize, l: usize) -> u32 {
    (r << 6 | l) as u32
}

/// The router and local VC of [`vcr`] `x`.
#[inline(always)]
fn unvcr(x: u32) -> (usize, usize) {
    ((x >> 6) as usize, (x & 63) as usize)
}

/// The longest delay (cycles) the wheel covers: longer pipelines run on the scan kernel.
pub const MAX_EVENT_DELAY: u64 = 1 << 16;

/// The event-driven evaluation of a fabric's [`Routers`].
#[derive(Clone, Debug)]
pub struct EventEval {
    work: Vec<Work>,
    /// Routers whose stage 2 (VC allocation, switch allocation) / stage 1 (ejection-channel
    /// allocation, ejection) has work: bit `r`.
    net_work: Vec<u64>,
    ej_work: Vec<u64>,
    /// Per input VC: flits buffered or on their way into it (sent, not readable yet): the
    /// occupancy the statistics count.
    occ: Vec<u16>,
    /// Idle VCs whose next head reached the front by a tail leaving in the previous cycle:
    /// routed at the start of this one.
    rc_next: Vec<u32>,
    rc_now: Vec<u32>,
    /// Injection VCs written this cycle with no injection latency whose front changed.
    inj_front: Vec<u32>,
    /// Per output port: the VCs requesting it in the allocation under way (valid for the
    /// outputs it marked).
    req: [u64; 64],
    /// Per local VC: its input port, its VC, and the VCs of its input port.
    port_of: [u8; 64],
    vc_of: [u8; 64],
    port_vcs: [u64; 64],
    /// The network output that picks first in switch allocation in cycle `sa_cycle`.
    sa_first: u32,
    sa_cycle: u64,
    slots: Vec<Slot>,
    mask: u64,
    /// Every slot up to this cycle has been processed.
    done: u64,
    /// Flits buffered or on their way into a buffer.
    pub flits: u64,
    // Shape and parameters.
    v: usize,
    p: usize,
    npv: usize,
    net: usize,
    net_vcs: usize,
    depth: u16,
    all_channels: u64,
    switching: Switching,
    rc_delay: u64,
    va_delay: u64,
    link_latency: u64,
    credit_delay: u64,
    inject_latency: u64,
}

/// Iterate the set bits of `m`, lowest first.
#[inline(always)]
fn bits(mut m: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if m == 0 {
            None
        } else {
            let i = m.trailing_zeros() as usize;
            m &= m - 1;
            Some(i)
        }
    })
}

impl EventEval {
    /// Why these routers cannot be evaluated event by event (None if they can). Packets
    /// that the routers replicate are the fabric's to rule out.
    pub fn unsupported(p: &RouterParams) -> Option<String> {
        let pl = &p.pipeline;
        let npv = p.ports() * p.vcs as usize;
        let longest = [pl.rc_delay, pl.va_delay, pl.link_latency, pl.credit_delay + 1, pl.inject_latency].into_iter().max().unwrap_or(0);
        if p.link_width != 1 {
            Some(format!("links of {} flits a cycle (nu > 0)", p.link_width))
        } else if npv > 64 {
            Some(format!("routers of {npv} input VCs (more than 64)"))
        } else if longest as u64 >= MAX_EVENT_DELAY {
            Some(format!("a pipeline delay of {longest} cycles (at most {})", MAX_EVENT_DELAY - 1))
        } else {
            None
        }
    }

    /// The evaluation of `routers`, which must be in their initial state (see
    /// [`EventEval::unsupported`]).
    pub fn new(routers: &Routers) -> EventEval {
        assert!(Self::unsupported(&routers.params).is_none(), "{:?}", Self::unsupported(&routers.params));
        let pl = routers.params.pipeline;
        let longest = [pl.rc_delay, pl.va_delay, pl.link_latency, pl.credit_delay + 1, pl.inject_latency].into_iter().max().unwrap_or(0);
        let n_slots = (longest as usize + 1).next_power_of_two();
        let n = routers.n;
        let k = routers.nk;
        let v = routers.nv;
        let mut port_of = [0u8; 64];
        let mut vc_of = [0u8; 64];
        let mut port_vcs = [0u64; 64];
        for l in 0..routers.npv {
            port_of[l] = (l / v) as u8;
            vc_of[l] = (l % v) as u8;
            port_vcs[l] = ((1u64 << v) - 1) << (l / v * v);
        }
        EventEval {
            work: vec![Work::default(); n],
            net_work: vec![0; n.div_ceil(64)],
            ej_work: vec![0; n.div_ceil(64)],
            occ: vec![0; n * routers.npv],
            rc_next: Vec::new(),
            rc_now: Vec::new(),
            inj_front: Vec::new(),
            req: [0; 64],
            port_of,
            vc_of,
            port_vcs,
            sa_first: 0,
            sa_cycle: u64::MAX,
            slots: vec![Slot::default(); n_slots],
            mask: n_slots as u64 - 1,
            done: 0,
            flits: 0,
            v: routers.nv,
            p: routers.np,
            npv: routers.npv,
            net: routers.nnet,
            net_vcs: routers.net_vcs,
            depth: routers.params.buffer_flits,
            all_channels: if k >= 64 { !0 } else { (1u64 << k) - 1 },
            switching: routers.params.switching,
            rc_delay: pl.rc_delay as u64,
            va_delay: pl.va_delay as u64,
            link_latency: pl.link_latency as u64,
            credit_delay: pl.credit_delay as u64,
            inject_latency: pl.inject_latency as u64,
        }
    }

    #[inline(always)]
    fn slot(&mut self, at: u64) -> &mut Slot {
        debug_assert!(at > self.done && at - self.done <= self.mask, "event at {at} outside the wheel after {}", self.done);
        &mut self.slots[(at & self.mask) as usize]
    }

    #[inline(always)]
    fn set_net_work(&mut self, r: usize) {
        self.net_work[r >> 6] |= 1 << (r & 63);
    }

    #[inline(always)]
    fn set_ej_work(&mut self, r: usize) {
        self.ej_work[r >> 6] |= 1 << (r & 63);
    }

    /// Is there nothing at all in the routers (no flit buffered or on its way)?
    pub fn is_empty(&self) -> bool {
        self.flits == 0
    }

    /// Start cycle `t`: everything due by `t` happens (flits become readable, credits
    /// visible, VCs become requesters and bidders), and heads that reached the front in the
    /// previous cycle are routed.
    pub fn begin_cycle<E: RouterEnv>(&mut self, routers: &mut Routers, t: u64, env: &E) {
        // Nothing is filed further ahead than the wheel spans: past that, no slot holds anything.
        let last = t.min(self.done + self.mask);
        while self.done < last {
            let c = self.done + 1;
            self.done = c;
            let i = (c & self.mask) as usize;
            let mut slot = std::mem::take(&mut self.slots[i]);
            for &ov in &slot.credits {
                routers.outputs.add_credit(ov as usize, self.depth);
            }
            for &(x, flit) in &slot.arrivals {
                let (r, l) = unvcr(x);
                self.arrive(routers, r, l, flit, c, env);
            }
            for &x in &slot.va_joins {
                let (r, l) = unvcr(x);
                self.va_join(routers, r, l);
            }
            for &x in &slot.sa_joins {
                let (r, l) = unvcr(x);
                self.check_bid(routers, r, l, c);
            }
            slot.credits.clear();
            slot.arrivals.clear();
            slot.va_joins.clear();
            slot.sa_joins.clear();
            self.slots[i] = slot;
        }
        self.done = self.done.max(t);
        if !self.rc_next.is_empty() {
            std::mem::swap(&mut self.rc_next, &mut self.rc_now);
            for i in 0..self.rc_now.len() {
                let (r, l) = unvcr(self.rc_now[i]);
                self.route_front(routers, r, l, t, env);
            }
            self.rc_now.clear();
        }
    }

    /// A flit becomes readable in input VC `l` of router `r` in cycle `t`.
    #[inline]
    fn arrive<E: RouterEnv>(&mut self, routers: &mut Routers, r: usize, l: usize, flit: Flit, t: u64, env: &E) {
        let iv = r * self.npv + l;
        let was_empty = routers.inputs.ctl[iv].len == 0;
        routers.inputs.write_ready(iv, flit, t);
        if was_empty {
            self.front_arrived(routers, r, l, t, env);
        } else if self.switching == Switching::StoreAndForward {
            // A store-and-forward head may bid once its whole packet is in.
            self.check_bid(routers, r, l, t);
        }
    }

    /// Input VC `l` of router `r` was empty and has a flit at its front in cycle `t`.
    #[inline]
    fn front_arrived<E: RouterEnv>(&mut self, routers: &mut Routers, r: usize, l: usize, t: u64, env: &E) {
        if routers.inputs.ctl[r * self.npv + l].stage == VcStage::Idle {
            self.route_front(routers, r, l, t, env);
        } else {
            self.check_bid(routers, r, l, t);
        }
    }

    /// Route computation for the head at the front of idle input VC `l` of router `r` in
    /// cycle `t`.
    fn route_front<E: RouterEnv>(&mut self, routers: &mut Routers, r: usize, l: usize, t: u64, env: &E) {
        let iv = r * self.npv + l;
        let head = routers.inputs.ctl[iv].front.flit;
        assert!(head.is_head(), "router {r} input VC {l}: body flit {head:?} at the front of an idle VC");
        let (rd, meta) = env.route(NodeId(r as u32), PortId(self.port_of[l]), head.packet);
        assert!(rd.ports.bits().is_power_of_two(), "router {r}: the event kernel routes unicast packets only, got {:?}", rd.ports);
        routers.inputs.ctl[iv].routed(rd.ports, rd.vc_mask, meta.len, false, t + self.rc_delay);
        routers.inputs.rank[iv] = (meta.key, meta.birth);
        if self.rc_delay == 0 {
            self.va_join(routers, r, l);
        } else {
            self.slot(t + self.rc_delay).va_joins.push(vcr(r, l));
        }
    }

    /// Routed input VC `l` of router `r` may now be allocated its output VC or ejection
    /// channel.
    #[inline]
    fn va_join(&mut self, routers: &Routers, r: usize, l: usize) {
        let w = &mut self.work[r];
        if routers.inputs.ctl[r * self.npv + l].route == PortSet::LOCAL {
            w.ej_req |= 1 << l;
            w.ej_dirty = true;
            self.set_ej_work(r);
        } else {
            w.va_req |= 1 << l;
            w.va_dirty = true;
            self.set_net_work(r);
        }
    }

    /// Make input VC `l` of router `r` a bidder (or ejector) in cycle `t` if it is one:
    /// routed, holding its output VC or channel, able, a flit buffered, and a
    /// store-and-forward head at a network input with its whole packet in.
    #[inline]
    fn check_bid(&mut self, routers: &Routers, r: usize, l: usize, t: u64) {
        let c = &routers.inputs.ctl[r * self.npv + l];
        if c.stage != VcStage::Routed || c.granted.is_empty() || c.sa_ready > t || c.len == 0 {
            return;
        }
        if c.route == PortSet::LOCAL {
            self.work[r].ejbid |= 1 << l;
            self.set_ej_work(r);
            return;
        }
        if self.switching == Switching::StoreAndForward && l < self.net_vcs && c.front.flit.is_head() && c.len < c.pkt_len {
            return;
        }
        self.work[r].bid |= 1 << l;
        self.set_net_work(r);
    }

    /// A flit sent in cycle `t` towards input VC `l` of router `r`, readable there from
    /// `t + link_latency`: counted in the buffer from `t + 1`.
    #[inline]
    pub fn send(&mut self, routers: &mut Routers, r: usize, l: usize, flit: Flit, t: u64) {
        let iv = r * self.npv + l;
        self.count_in(routers, iv, t);
        let at = t + self.link_latency;
        self.slot(at).arrivals.push((vcr(r, l), flit));
    }

    /// A flit written towards input VC `iv` in cycle `t`: the occupancy statistics count it
    /// from `t + 1`.
    #[inline(always)]
    fn count_in(&mut self, routers: &mut Routers, iv: usize, t: u64) {
        let level = self.occ[iv];
        routers.inputs.count_up(iv, level, t + 1);
        self.occ[iv] = level + 1;
        self.flits += 1;
    }

    /// The credit for a slot of output VC `ov` (global index) freed downstream in cycle `t`:
    /// visible from `t + 1 + credit_delay`.
    #[inline]
    pub fn credit(&mut self, ov: usize, t: u64) {
        let at = t + 1 + self.credit_delay;
        self.slot(at).credits.push(ov as u32);
    }

    /// Can the NIC write a flit into injection channel `ch` of router `r`?
    #[inline]
    pub fn injection_has_room(&self, r: NodeId, ch: usize) -> bool {
        let iv = r.idx() * self.npv + (self.net + ch) * self.v;
        self.occ[iv] < self.depth
    }

    /// The NIC writes a flit into injection channel `ch` of router `r` in cycle `t`,
    /// readable from `t + inject_latency`. False when full. Heads written with no latency are
    /// routed by [`EventEval::after_injection`].
    pub fn inject(&mut self, routers: &mut Routers, r: NodeId, ch: usize, flit: Flit, t: u64) -> bool {
        if !self.injection_has_room(r, ch) {
            return false;
        }
        let l = (self.net + ch) * self.v;
        let iv = r.idx() * self.npv + l;
        self.count_in(routers, iv, t);
        if self.inject_latency == 0 {
            let was_empty = routers.inputs.ctl[iv].len == 0;
            routers.inputs.write_ready(iv, flit, t);
            if was_empty {
                self.inj_front.push(vcr(r.idx(), l));
            }
        } else {
            let at = t + self.inject_latency;
            self.slot(at).arrivals.push((vcr(r.idx(), l), flit));
        }
        true
    }

    /// After the NICs' injections of cycle `t`: route computation for heads that reached the
    /// front of their injection VC (stage 2's route computation).
    pub fn after_injection<E: RouterEnv>(&mut self, routers: &mut Routers, t: u64, env: &E) {
        for i in 0..self.inj_front.len() {
            let (r, l) = unvcr(self.inj_front[i]);
            self.front_arrived(routers, r, l, t, env);
        }
        self.inj_front.clear();
    }

    /// Stage 1 of cycle `t` in every router with work there: ejection-channel allocation and
    /// ejection. Ejected flits are appended to `ejected` with their router.
    pub fn eject_stage(&mut self, routers: &mut Routers, t: u64, ejected: &mut Vec<(NodeId, Ejection)>, out: &mut Outbox) {
        for wi in 0..self.ej_work.len() {
            let mut m = self.ej_work[wi];
            while m != 0 {
                let r = wi * 64 + m.trailing_zeros() as usize;
                m &= m - 1;
                self.eject_router(routers, r, t, ejected, out);
                let w = &self.work[r];
                if w.ejbid == 0 && !w.ej_dirty {
                    self.ej_work[wi] &= !(1 << (r & 63));
                }
            }
        }
    }

    fn eject_router(&mut self, routers: &mut Routers, r: usize, t: u64, ejected: &mut Vec<(NodeId, Ejection)>, out: &mut Outbox) {
        let w = &mut self.work[r];
        if w.ej_dirty {
            w.ej_dirty = false;
            if w.ej_req != 0 && !w.ej_owned & self.all_channels != 0 {
                self.allocate_ejection(routers, r, t);
            }
        }
        let base = r * self.npv;
        let mut owned = self.work[r].ej_owned;
        while owned != 0 {
            let ch = owned.trailing_zeros() as usize;
            owned &= owned - 1;
            let ov = (r * self.p + self.net + ch) * self.v;
            let iv = routers.outputs.owner[ov] as usize;
            let l = iv - base;
            let w = &mut self.work[r];
            if w.ejbid & (1 << l) == 0 {
                continue;
            }
            // The crossbar reads one flit of an input port a cycle.
            if w.blocked_at == t && w.blocked & (1 << l) != 0 {
                continue;
            }
            if w.blocked_at != t {
                w.blocked_at = t;
                w.blocked = 0;
            }
            w.blocked |= self.port_vcs[l];
            let c = &mut routers.inputs.ctl[iv];
            let flit = c.front.flit;
            ejected.push((NodeId(r as u32), Ejection { channel: ch as u8, flit }));
            c.pending.remove(PortSet::LOCAL);
            if flit.is_tail() {
                c.granted.remove(PortSet::LOCAL);
                routers.outputs.owner[ov] = NONE;
                w.ej_owned &= !(1 << ch);
                if w.ej_req != 0 {
                    w.ej_dirty = true;
                }
            }
            self.pop_front(routers, r, l, t, out);
        }
    }

    /// Give each free ejection channel of router `r` to one able requester.
    fn allocate_ejection(&mut self, routers: &mut Routers, r: usize, t: u64) {
        let base = r * self.npv;
        let policy = routers.params.arbiter;
        let mut free = !self.work[r].ej_owned & self.all_channels;
        while free != 0 && self.work[r].ej_req != 0 {
            let ch = free.trailing_zeros() as usize;
            free &= free - 1;
            let op = r * self.p + self.net + ch;
            let want = self.work[r].ej_req;
            let inputs = &routers.inputs;
            let Some(l) = routers.outputs.va_arb[op].arbitrate(policy, want, |l| inputs.rank[base + l]) else {
                break;
            };
            let iv = base + l;
            routers.outputs.owner[op * self.v] = iv as u32;
            let c = &mut routers.inputs.ctl[iv];
            c.granted |= PortSet::LOCAL;
            c.va_open = true;
            c.eject_ch = ch as u8;
            c.sa_ready = c.sa_ready.max(t + self.va_delay);
            routers.outputs.va_arb[op].grant_accepted(self.npv, l);
            let w = &mut self.work[r];
            w.ej_req &= !(1 << l);
            w.ej_owned |= 1 << ch;
            self.granted(routers, r, l, t);
        }
    }

    /// Input VC `l` of router `r` was granted its output VC or channel in cycle `t`: it may
    /// bid from `t + va_delay`.
    #[inline]
    fn granted(&mut self, routers: &Routers, r: usize, l: usize, t: u64) {
        if self.va_delay == 0 {
            self.check_bid(routers, r, l, t);
        } else {
            self.slot(t + self.va_delay).sa_joins.push(vcr(r, l));
        }
    }

    /// Stage 2 of cycle `t` in every router with work there: VC allocation and switch
    /// allocation with crossbar traversal. Departures and freed slots go to `out`.
    pub fn network_stage(&mut self, routers: &mut Routers, t: u64, out: &mut Outbox) {
        for wi in 0..self.net_work.len() {
            let mut m = self.net_work[wi];
            while m != 0 {
                let r = wi * 64 + m.trailing_zeros() as usize;
                m &= m - 1;
                if self.work[r].va_dirty {
                    self.work[r].va_dirty = false;
                    if self.work[r].va_req != 0 {
                        self.allocate_network_vcs(routers, r, t);
                    }
                }
                if self.work[r].bid != 0 {
                    self.allocate_switch(routers, r, t, out);
                }
                let w = &self.work[r];
                if w.bid == 0 && !w.va_dirty {
                    self.net_work[wi] &= !(1 << (r & 63));
                }
            }
        }
    }

    /// Give each free output VC of router `r`'s network ports to one able requester whose
    /// `vc_mask` allows it.
    fn allocate_network_vcs(&mut self, routers: &mut Routers, r: usize, t: u64) {
        let base = r * self.npv;
        let policy = routers.params.arbiter;
        let req = &mut self.req;
        let mut outs = 0u64;
        for l in bits(self.work[r].va_req) {
            let o = routers.inputs.ctl[base + l].route.bits().trailing_zeros() as usize;
            if outs & (1 << o) == 0 {
                outs |= 1 << o;
                req[o] = 0;
            }
            req[o] |= 1 << l;
        }
        for o in bits(outs) {
            let op = r * self.p + o;
            for vc in 0..self.v {
                let ov = op * self.v + vc;
                if routers.outputs.owner[ov] != NONE {
                    continue;
                }
                if self.req[o] == 0 {
                    break;
                }
                let mut want = 0u64;
                for l in bits(self.req[o]) {
                    if routers.inputs.ctl[base + l].vc_mask & (1 << vc) != 0 {
                        want |= 1 << l;
                    }
                }
                if want == 0 {
                    continue;
                }
                let inputs = &routers.inputs;
                let Some(l) = routers.outputs.va_arb[op].arbitrate(policy, want, |l| inputs.rank[base + l]) else {
                    continue;
                };
                self.req[o] &= !(1 << l);
                let iv = base + l;
                routers.outputs.owner[ov] = iv as u32;
                let c = &mut routers.inputs.ctl[iv];
                c.granted |= PortSet::port(o);
                c.va_open = true;
                c.ovc = vc as u8;
                c.sa_ready = c.sa_ready.max(t + self.va_delay);
                routers.outputs.va_arb[op].grant_accepted(self.npv, l);
                self.work[r].va_req &= !(1 << l);
                self.granted(routers, r, l, t);
            }
        }
    }

    /// Switch allocation on router `r`'s network outputs (separable, output first; outputs
    /// take turns by cycle at picking first; an input port's flits cross one a cycle) and
    /// crossbar traversal of the winners.
    fn allocate_switch(&mut self, routers: &mut Routers, r: usize, t: u64, out: &mut Outbox) {
        let base = r * self.npv;
        let pbase = r * self.p;
        let v = self.v;
        let policy = routers.params.arbiter;
        let w = self.work[r];
        let mut readable = if w.blocked_at == t { !w.blocked } else { !0 };
        let req = &mut self.req;
        let mut outs = 0u64;
        let mut requested = 0u64;
        for l in bits(w.bid & readable) {
            let iv = base + l;
            let c = &routers.inputs.ctl[iv];
            let o = c.route.bits().trailing_zeros() as usize;
            let need = if c.front.flit.is_head() && self.switching != Switching::Wormhole { c.pkt_len } else { 1 };
            if routers.outputs.credits[(pbase + o) * v + c.ovc as usize] < need {
                routers.inputs.stall_credit[iv] += 1;
                continue;
            }
            if outs & (1 << o) == 0 {
                outs |= 1 << o;
                req[o] = 0;
            }
            req[o] |= 1 << l;
            requested |= 1 << l;
        }
        if outs == 0 {
            return;
        }
        if self.sa_cycle != t {
            self.sa_cycle = t;
            self.sa_first = (t % self.net as u64) as u32;
        }
        let start = self.sa_first;
        let mut rest = outs.rotate_right(start);
        let mut read = 0u64;
        while rest != 0 {
            let o = (rest.trailing_zeros() + start) as usize & 63;
            rest &= rest - 1;
            let want = self.req[o] & readable;
            if want == 0 {
                continue;
            }
            let op = pbase + o;
            let inputs = &routers.inputs;
            let Some(l) = routers.outputs.sa_arb[op].arbitrate(policy, want, |l| inputs.rank[base + l]) else {
                continue;
            };
            readable &= !self.port_vcs[l];
            read |= 1 << l;
            let iv = base + l;
            let c = &mut routers.inputs.ctl[iv];
            let flit = c.front.flit;
            let ovc = c.ovc as usize;
            out.departures.push(Departure { out_port: op as u32, vc: ovc as u8, flit });
            routers.outputs.credits[op * v + ovc] -= 1;
            c.pending.remove(PortSet::port(o));
            if flit.is_tail() {
                c.granted.remove(PortSet::port(o));
                routers.outputs.owner[op * v + ovc] = NONE;
                if self.work[r].va_req != 0 {
                    self.work[r].va_dirty = true;
                }
            }
            routers.outputs.sa_arb[op].grant_accepted(self.npv, l);
            self.pop_front(routers, r, l, t, out);
        }
        for l in bits(requested & !read) {
            routers.inputs.stall_arb[base + l] += 1;
        }
    }

    /// The front flit of local VC `l` of router `r` has been taken by its branch in cycle `t`:
    /// pop it (a credit upstream for a network port) and get the VC ready for the next flit.
    #[inline]
    fn pop_front(&mut self, routers: &mut Routers, r: usize, l: usize, t: u64, out: &mut Outbox) {
        let iv = r * self.npv + l;
        let level = self.occ[iv];
        let e = routers.inputs.pop_ready(iv);
        routers.inputs.count_down(iv, level, t + 1);
        self.occ[iv] = level - 1;
        self.flits -= 1;
        if l < self.net_vcs {
            out.freed.push(Freed { in_port: (r * self.p + self.port_of[l] as usize) as u32, vc: self.vc_of[l] });
        }
        let c = &mut routers.inputs.ctl[iv];
        let w = &mut self.work[r];
        if e.flit.is_tail() {
            debug_assert!(c.granted.is_empty(), "router {r} VC {l}: tail left with branches still granted: {c:?}");
            c.stage = VcStage::Idle;
            c.route = PortSet::empty();
            c.async_rep = false;
            w.bid &= !(1 << l);
            w.ejbid &= !(1 << l);
            if c.len > 0 {
                self.rc_next.push(vcr(r, l));
            }
        } else {
            c.pending = c.route;
            if c.len == 0 {
                w.bid &= !(1 << l);
                w.ejbid &= !(1 << l);
            }
        }
    }

    /// Hand the state back to the scan kernel's form at cycle `now` (the run stopped, or the
    /// watchdog fired): flits on their way are written into their buffers with the cycle they
    /// become readable, credits on their way go onto the return lines, and the routers'
    /// registers are rebuilt. Nothing the statistics count changes.
    pub fn finish(&mut self, routers: &mut Routers) {
        let v = self.v;
        for c in self.done + 1..=self.done + self.mask {
            let i = (c & self.mask) as usize;
            let slot = std::mem::take(&mut self.slots[i]);
            for &(x, flit) in &slot.arrivals {
                let (r, l) = unvcr(x);
                routers.inputs.write_ready(r * self.npv + l, flit, c);
            }
            for &ov in &slot.credits {
                routers.return_credit(ov as usize / v, (ov as usize % v) as u8, c);
            }
        }
        debug_assert!(self.occ.iter().zip(&routers.inputs.ctl).all(|(&o, c)| o == c.len), "flits on their way outside the wheel");
        routers.rebuild_registers();
        debug_assert_eq!(routers.buffered, self.flits);
    }
}
