//! The routers of a fabric: input units, output units and the per-cycle pipeline.
//!
//! A router's cycle runs in two calls, so that a node can react to what it receives in the
//! same cycle (the papers' slot model: received in `t`, forwarded in `t + 1`):
//!
//! ```text
//!  stage_eject(t):   RC for front heads; ejection-channel allocation; flits to the NIC
//!  (the fabric runs the node's program and its NIC injection here)
//!  stage_network(t): RC for new heads; VC allocation; switch allocation; crossbar
//! ```
//!
//! Both read only this router's state at the end of `t - 1` plus what the NIC wrote in
//! between, and write departures and freed buffer slots to an [`Outbox`] that the fabric
//! commits after every router has been evaluated, so the order routers are visited in never
//! changes a result.

use crate::arbiter::Request;
use crate::flit::Flit;
use crate::ids::{NONE, NodeId, PortId};
use crate::input_unit::{InputUnits, VcStage};
use crate::output_unit::OutputUnits;
use crate::params::RouterParams;
use crate::port_set::PortSet;
use crate::route_compute::RouterEnv;

/// A flit leaving on a network output port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Departure {
    /// Global output port index (`router * ports + port`).
    pub out_port: u32,
    /// Output VC (the VC it will occupy in the downstream input buffer).
    pub vc: u8,
    pub flit: Flit,
}

/// A flit handed to the NIC on an ejection channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ejection {
    pub channel: u8,
    pub flit: Flit,
}

/// What routers produce in a cycle, committed by the fabric after all are evaluated.
#[derive(Clone, Debug, Default)]
pub struct Outbox {
    pub departures: Vec<Departure>,
    /// Global input VC index of every flit popped from a network input buffer (a credit to return).
    pub freed: Vec<u32>,
}

/// Per-evaluation scratch space, reused across routers and cycles (no allocation per cycle).
#[derive(Clone, Debug, Default)]
pub(crate) struct Scratch {
    /// Per local input VC, this cycle: [`UNREAD`], [`READ_LISTED`], [`READ`] or [`POPPED`].
    pub read: Vec<u8>,
    /// Local input VCs whose `read` is not [`UNREAD`] (reset at the next evaluation).
    pub dirty: Vec<u16>,
    /// Local input VCs holding flits, collected at the start of a stage.
    pub list: Vec<u16>,
    /// Per local input port: crossbar reads left this cycle.
    pub budget: Vec<u8>,
    /// Per output port: requests (flat, `ports * vcs_per_router` capacity each) and counts.
    pub reqs: Vec<Request>,
    pub nreq: Vec<u16>,
    /// Per request: the output VC it would use (switch allocation).
    pub req_ovc: Vec<u8>,
    /// Local input VCs read this cycle (to pop the finished ones).
    pub touched: Vec<u16>,
}

/// Crossbar read state of a local input VC within a cycle: not read yet.
pub(crate) const UNREAD: u8 = 0;
/// Read, and listed in `touched` for popping.
pub(crate) const READ_LISTED: u8 = 1;
/// Read, its front flit still owed to some branch, not listed.
pub(crate) const READ: u8 = 2;
/// Its front flit was popped: no further read this cycle (one flit per VC per cycle).
pub(crate) const POPPED: u8 = 3;

/// Which input VCs of a router a stage looks at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sel {
    /// Holding flits, no packet routed yet (a head may wait for RC).
    Unrouted,
    /// A packet routed and a flit of it here (competing for the switch).
    Routed,
    /// A routed packet with a network branch still lacking an output VC.
    NeedVa,
    /// A routed packet waiting for an ejection channel.
    NeedEj,
}

/// The routers of a fabric, all with the same parameters, state in flat vectors.
///
/// Besides the input and output units, each router keeps bitmasks (`words` u64s) over its
/// input VCs saying which need which stage, so that a cycle touches only VCs with work.
#[derive(Clone, Debug)]
pub struct Routers {
    pub params: RouterParams,
    pub n: usize,
    pub inputs: InputUnits,
    pub outputs: OutputUnits,
    /// Flits buffered in each router (all input VCs).
    pub occupancy: Vec<u32>,
    /// Flits buffered in the whole fabric.
    pub buffered: u64,
    words: usize,
    nonempty: Vec<u64>,
    routed: Vec<u64>,
    need_va: Vec<u64>,
    need_ej: Vec<u64>,
    /// Per router: network output ports with credits in flight; ejection channels held.
    credit_ports: Vec<u64>,
    ej_owned: Vec<u64>,
    pub(crate) scratch: Scratch,
}

impl Routers {
    pub fn new(params: RouterParams, n: usize) -> Routers {
        let p = params.ports();
        let v = params.vcs as usize;
        let local_vcs = p * v;
        let words = local_vcs.div_ceil(64);
        Routers {
            params,
            n,
            inputs: InputUnits::new(n * local_vcs, params.buffer_flits),
            outputs: OutputUnits::new(n * p, v, params.buffer_flits),
            occupancy: vec![0; n],
            buffered: 0,
            words,
            nonempty: vec![0; n * words],
            routed: vec![0; n * words],
            need_va: vec![0; n * words],
            need_ej: vec![0; n * words],
            credit_ports: vec![0; n],
            ej_owned: vec![0; n],
            scratch: Scratch {
                read: vec![UNREAD; local_vcs],
                dirty: Vec::with_capacity(local_vcs),
                list: Vec::with_capacity(local_vcs),
                budget: vec![0; p],
                reqs: vec![Request { who: 0, key: 0, birth: 0 }; p * local_vcs],
                nreq: vec![0; p],
                req_ovc: vec![0; p * local_vcs],
                touched: Vec::with_capacity(local_vcs),
            },
        }
    }

    #[inline(always)]
    pub(crate) fn set_bit(mask: &mut [u64], words: usize, r: usize, l: usize) {
        mask[r * words + l / 64] |= 1u64 << (l % 64);
    }
    #[inline(always)]
    pub(crate) fn clear_bit(mask: &mut [u64], words: usize, r: usize, l: usize) {
        mask[r * words + l / 64] &= !(1u64 << (l % 64));
    }

    /// Collect the local input VCs of router `r` selected by `sel` into `scratch.list`
    /// (ascending); returns how many.
    #[inline]
    pub(crate) fn collect(&mut self, r: usize, sel: Sel) -> usize {
        self.scratch.list.clear();
        for w in 0..self.words {
            let i = r * self.words + w;
            let mut b = match sel {
                Sel::Unrouted => self.nonempty[i] & !self.routed[i],
                Sel::Routed => self.routed[i] & self.nonempty[i],
                Sel::NeedVa => self.need_va[i],
                Sel::NeedEj => self.need_ej[i],
            };
            while b != 0 {
                self.scratch.list.push((w * 64 + b.trailing_zeros() as usize) as u16);
                b &= b - 1;
            }
        }
        self.scratch.list.len()
    }

    /// Local VC `l` of router `r` got its VCs / ejection channel: clear its request bits.
    #[inline]
    pub(crate) fn va_done(&mut self, r: usize, l: usize) {
        Self::clear_bit(&mut self.need_va, self.words, r, l);
    }
    #[inline]
    pub(crate) fn ej_granted(&mut self, r: usize, l: usize, ch: usize) {
        Self::clear_bit(&mut self.need_ej, self.words, r, l);
        self.ej_owned[r] |= 1u64 << ch;
    }
    #[inline]
    pub(crate) fn ej_released(&mut self, r: usize, ch: usize) {
        self.ej_owned[r] &= !(1u64 << ch);
    }
    #[inline]
    pub(crate) fn ej_owned(&self, r: usize) -> u64 {
        self.ej_owned[r]
    }

    /// A credit for `vc` of output port `op` (global index), usable from cycle `ready`.
    #[inline]
    pub fn return_credit(&mut self, op: usize, vc: u8, ready: u64) {
        self.outputs.return_credit(op, vc, ready);
        let p = self.ports();
        self.credit_ports[op / p] |= 1u64 << (op % p);
    }

    /// Bytes the routers of a fabric of `n` routers would need (checked before building).
    pub fn bytes_needed(params: &RouterParams, n: usize) -> u128 {
        let p = params.ports() as u128;
        let v = params.vcs as u128;
        let per_router = p * v * InputUnits::bytes_per_vc(params.buffer_flits) as u128
            + p * OutputUnits::bytes_per_port(params.vcs as usize, params.buffer_flits) as u128
            + 4;
        per_router * n as u128
    }

    #[inline(always)]
    pub fn ports(&self) -> usize {
        self.params.ports()
    }
    #[inline(always)]
    pub fn vcs(&self) -> usize {
        self.params.vcs as usize
    }
    /// Global input (or output) port index.
    #[inline(always)]
    pub fn port_index(&self, r: NodeId, p: usize) -> usize {
        r.idx() * self.ports() + p
    }
    /// Global input VC index.
    #[inline(always)]
    pub fn ivc_index(&self, r: NodeId, p: usize, v: usize) -> usize {
        (r.idx() * self.ports() + p) * self.vcs() + v
    }
    /// The router, port and VC of a global input VC index.
    pub fn ivc_location(&self, iv: usize) -> (NodeId, usize, usize) {
        let v = iv % self.vcs();
        let ip = iv / self.vcs();
        (NodeId((ip / self.ports()) as u32), ip % self.ports(), v)
    }

    /// The NIC writes a flit into injection channel `ch`'s buffer (VC 0 of input port
    /// `net_ports + ch`), readable from `t + inject_latency`. Returns false when full.
    pub fn inject(&mut self, r: NodeId, ch: usize, flit: Flit, t: u64) -> bool {
        let iv = self.ivc_index(r, self.params.net_ports as usize + ch, 0);
        if self.inputs.is_full(iv) {
            return false;
        }
        self.inputs.push(iv, flit, t + self.params.pipeline.inject_latency as u64);
        self.occupancy[r.idx()] += 1;
        self.buffered += 1;
        let l = iv % (self.ports() * self.vcs());
        Self::set_bit(&mut self.nonempty, self.words, r.idx(), l);
        true
    }

    /// Can injection channel `ch` of router `r` take a flit now?
    pub fn injection_has_room(&self, r: NodeId, ch: usize) -> bool {
        !self.inputs.is_full(self.ivc_index(r, self.params.net_ports as usize + ch, 0))
    }

    /// Write a flit arriving from a link into input VC `iv` (the fabric's commit phase).
    #[inline]
    pub fn arrive(&mut self, iv: usize, flit: Flit, ready: u64) {
        self.inputs.push(iv, flit, ready);
        let pv = self.ports() * self.vcs();
        let r = iv / pv;
        self.occupancy[r] += 1;
        self.buffered += 1;
        Self::set_bit(&mut self.nonempty, self.words, r, iv % pv);
    }

    /// Route computation for every unrouted input VC of router `r` whose front head is
    /// readable; with `injection_only`, just the NIC's injection VCs (the only ones that can
    /// have gained a head since stage 1).
    fn route_fronts<E: RouterEnv>(&mut self, r: NodeId, t: u64, env: &E, injection_only: bool) {
        let v = self.vcs();
        let pv = self.ports() * v;
        let first = if injection_only { self.params.net_ports as usize * v } else { 0 };
        if self.collect(r.idx(), Sel::Unrouted) == 0 {
            return;
        }
        let base = r.idx() * pv;
        let rc = self.params.pipeline.rc_delay as u64;
        for i in 0..self.scratch.list.len() {
            let l = self.scratch.list[i] as usize;
            if l < first {
                continue;
            }
            let iv = base + l;
            let e = *self.inputs.entry(iv, 0);
            if e.ready > t {
                continue;
            }
            assert!(e.flit.is_head(), "router {r} input VC {l}: body flit {:?} at the front of an idle VC", e.flit);
            let (rd, meta) = env.route(r, PortId((l / v) as u8), e.flit.packet);
            debug_assert!(!rd.ports.is_empty(), "route computation returned no output for {:?}", e.flit);
            let c = &mut self.inputs.ctl[iv];
            c.stage = VcStage::Routed;
            c.route = rd.ports;
            c.vc_mask = rd.vc_mask;
            c.granted = PortSet::empty();
            c.pending = rd.ports;
            c.pkt_len = meta.len;
            c.key = meta.key;
            c.birth = meta.birth;
            c.va_ready = t + rc;
            c.sa_ready = t + rc;
            let w = self.words;
            Self::set_bit(&mut self.routed, w, r.idx(), l);
            if !rd.ports.network().is_empty() {
                Self::set_bit(&mut self.need_va, w, r.idx(), l);
            }
            if rd.ports.contains(PortSet::LOCAL) {
                Self::set_bit(&mut self.need_ej, w, r.idx(), l);
            }
        }
    }

    /// Stage 1 of a cycle: route computation, ejection-channel allocation and ejection.
    /// Ejected flits are appended to `ejected`; freed buffer slots to `out.freed`.
    pub fn stage_eject<E: RouterEnv>(&mut self, r: NodeId, t: u64, env: &E, ejected: &mut Vec<Ejection>, out: &mut Outbox) {
        let width = self.params.link_width;
        for b in self.scratch.budget.iter_mut() {
            *b = width;
        }
        for i in 0..self.scratch.dirty.len() {
            let l = self.scratch.dirty[i] as usize;
            self.scratch.read[l] = UNREAD;
        }
        self.scratch.dirty.clear();
        self.scratch.touched.clear();
        if self.occupancy[r.idx()] == 0 {
            return;
        }
        self.route_fronts(r, t, env, false);
        let ri = r.idx() * self.words;
        if self.need_ej[ri..ri + self.words].iter().any(|&w| w != 0) {
            self.allocate_ejection(r, t);
        }
        if self.ej_owned[r.idx()] != 0 {
            self.eject(r, t, ejected);
        }
        if !self.scratch.touched.is_empty() {
            self.pop_finished(r, out);
        }
    }

    /// Stage 2 of a cycle: route computation for heads the NIC just injected, VC allocation,
    /// switch allocation and crossbar traversal on the network ports. Must follow
    /// [`Routers::stage_eject`] for the same router and cycle.
    pub fn stage_network<E: RouterEnv>(&mut self, r: NodeId, t: u64, env: &E, out: &mut Outbox) {
        let depth = self.params.buffer_flits;
        let mut ports = self.credit_ports[r.idx()];
        while ports != 0 {
            let o = ports.trailing_zeros() as usize;
            ports &= ports - 1;
            let op = self.port_index(r, o);
            self.outputs.absorb_credits(op, t, depth);
            if self.outputs.credits_in_flight(op) == 0 {
                self.credit_ports[r.idx()] &= !(1u64 << o);
            }
        }
        if self.occupancy[r.idx()] == 0 {
            return;
        }
        self.scratch.touched.clear();
        if self.params.nic_channels > 0 {
            self.route_fronts(r, t, env, true);
        }
        let ri = r.idx() * self.words;
        if self.need_va[ri..ri + self.words].iter().any(|&w| w != 0) {
            self.allocate_network_vcs(r, t);
        }
        self.allocate_switch(r, t, out);
        self.pop_finished(r, out);
    }

    /// Pop the front flit of every VC read this cycle whose branches have all taken it.
    fn pop_finished(&mut self, r: NodeId, out: &mut Outbox) {
        let (pv, v, net) = (self.ports() * self.vcs(), self.vcs(), self.params.net_ports as usize);
        let base = r.idx() * pv;
        for i in 0..self.scratch.touched.len() {
            let l = self.scratch.touched[i] as usize;
            let iv = base + l;
            if !self.inputs.ctl[iv].pending.is_empty() {
                self.scratch.read[l] = READ;
                continue;
            }
            self.scratch.read[l] = POPPED;
            let e = self.inputs.pop(iv);
            self.occupancy[r.idx()] -= 1;
            self.buffered -= 1;
            if self.inputs.ctl[iv].len == 0 {
                Self::clear_bit(&mut self.nonempty, self.words, r.idx(), l);
            }
            if l / v < net {
                out.freed.push(iv as u32);
            }
            let c = &mut self.inputs.ctl[iv];
            if e.flit.is_tail() {
                debug_assert!(c.granted.is_empty(), "router {r} VC {l}: tail left with branches still granted: {c:?}");
                c.stage = VcStage::Idle;
                c.route = PortSet::empty();
                Self::clear_bit(&mut self.routed, self.words, r.idx(), l);
            } else {
                c.pending = c.route;
            }
        }
        self.scratch.touched.clear();
    }

    /// Mark local VC `l` read through the crossbar this cycle; false if its port has no
    /// crossbar bandwidth left.
    #[inline]
    pub(crate) fn take_read(&mut self, l: usize) -> bool {
        match self.scratch.read[l] {
            READ_LISTED => true,
            READ => {
                self.scratch.read[l] = READ_LISTED;
                self.scratch.touched.push(l as u16);
                true
            }
            POPPED => false,
            _ => {
                let port = l / self.vcs();
                if self.scratch.budget[port] == 0 {
                    return false;
                }
                self.scratch.budget[port] -= 1;
                self.scratch.read[l] = READ_LISTED;
                self.scratch.touched.push(l as u16);
                self.scratch.dirty.push(l as u16);
                true
            }
        }
    }

    /// Could local VC `l` be read now (already read, or its port has crossbar bandwidth)?
    #[inline]
    pub(crate) fn can_read(&self, l: usize) -> bool {
        match self.scratch.read[l] {
            READ_LISTED | READ => true,
            POPPED => false,
            _ => self.scratch.budget[l / self.vcs()] > 0,
        }
    }

    /// Is output VC `ov` free?
    pub fn output_vc_free(&self, ov: usize) -> bool {
        self.outputs.owner[ov] == NONE
    }
}
