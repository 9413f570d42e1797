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
//!
//! Each router keeps sets ([`VcSet`]) of its input VCs by what they need — occupied,
//! routed, waiting for an output VC, waiting for an ejection channel — so that a cycle
//! touches only VCs with work, and idle routers cost nothing; and from which cycle route
//! computation and VC allocation can next act, so that they run only then.

use crate::arbiter::Arbiter;
use crate::credit_line::CreditLine;
use crate::flit::Flit;
use crate::ids::{NONE, NodeId, PortId};
use crate::input_unit::{InputUnits, VcStage};
use crate::output_unit::OutputUnits;
use crate::params::{MulticastVa, Replication, RouterParams};
use crate::port_set::PortSet;
use crate::route_compute::RouterEnv;
use crate::vc_set::{EMPTY, MAX_ROUTER_VCS, VcBits, VcSet, members};

/// The most ports (links plus NIC channels) one router may have: port sets are 64 bits wide.
pub const MAX_PORTS: usize = 64;

/// What an input VC is doing, as a waveform shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum VcActivity {
    /// No flits, no packet.
    Idle = 0,
    /// A head waits for route computation.
    Routing = 1,
    /// Routed; some branch waits for an output VC or ejection channel.
    VcAlloc = 2,
    /// Every branch holds its VC; flits compete for the switch.
    Active = 3,
}

impl VcActivity {
    pub const NAMES: [&'static str; 4] = ["IDLE", "RC", "VA", "ACTIVE"];
}

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

/// A buffer slot freed in a network input VC: the credit to send upstream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Freed {
    /// Global input port index (`router * ports + port`).
    pub in_port: u32,
    pub vc: u8,
}

/// What routers produce in a cycle, committed by the fabric after all are evaluated.
#[derive(Clone, Debug, Default)]
pub struct Outbox {
    pub departures: Vec<Departure>,
    /// Every flit popped from a network input buffer (a credit to return).
    pub freed: Vec<Freed>,
}

/// Per-evaluation scratch state of the router being evaluated (reset at `stage_eject`).
#[derive(Clone, Debug)]
pub(crate) struct Scratch {
    /// VCs whose front flit went through the crossbar this cycle, and VCs popped this cycle
    /// (one flit per VC per cycle).
    pub read: VcSet,
    pub popped: VcSet,
    /// VCs of input ports that have used up their crossbar reads this cycle.
    pub port_full: VcSet,
    /// Crossbar reads per input port this cycle, and which ports have read.
    pub port_reads: [u8; MAX_PORTS],
    pub ports_read: u64,
    /// The cycle `sa_first` was computed for, and the output that picks first in it.
    pub sa_cycle: u64,
    pub sa_first: u32,
    /// Per output port: the VCs requesting it (valid for the outputs a stage marked).
    pub req: [VcSet; MAX_PORTS],
    /// Per local VC read this cycle (in `read`) with asynchronous replication: the FIFO
    /// position it read (one entry a cycle, replicated to every branch at it).
    pub read_at: [u16; MAX_ROUTER_VCS],
}

/// Per router, what its pipeline looks at first every cycle, in one cache line: the sets
/// (`sets[NONEMPTY..=BIDS]`, VCs 0..64; 64..128 in [`Routers::regs_hi`]) of its input VCs
/// that hold flits, hold a routed packet, have a network branch lacking an output VC, wait
/// for stage 1's allocation (an ejection channel, or every branch at once), and may bid in
/// switch allocation; the ejection channels held; the flits buffered; when route
/// computation and VC allocation may next act ([`Wake`]); the round-robin pointer of the
/// multicast allocator. `sets[BIDS]` are the VCs switch allocation looks at, so that it skips
/// packets still waiting for an output VC: packets with several branches from their RC,
/// unicast packets from the first cycle they may bid with their output VC (`t + va_delay`
/// after the grant), each until its tail is popped.
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(64))]
struct RouterRegs {
    sets: [u64; REG_SETS],
    ej_owned: u64,
    occupancy: u32,
    wake: Wake,
    mc_arb: Arbiter,
}

/// Per router, from which cycle each stage that waits for a time or an event could act:
/// lower bounds, so that a stage skipped before its bound would have done nothing.
/// - `rc`: route computation: the earliest cycle the front head of an unrouted VC is readable.
/// - `va`: VC allocation on the network ports. After a pass, every output VC an able
///   requester (`va_may_start`) may take is held (`va_blocked`: some requester waits so), so
///   the next grant needs a new requester, one becoming able (at the end of its RC delay: a
///   grant, which opens allocation early, needs it able), or a tail freeing an output VC
///   while one is blocked.
///
/// (Ejection-channel allocation could wait likewise, but costs too little to gain.)
///
/// A pass that grants nothing changes no state (arbiters move only on a grant), so skipping
/// it is exact. Bounds count cycles from [`Routers::epoch`] (16 bits, to stay in the
/// registers' cache line): [`NEVER`] when nothing waits.
#[derive(Clone, Copy, Debug, Default)]
struct Wake {
    rc: u16,
    va: u16,
    va_blocked: bool,
}

/// A [`Wake`] bound meaning no stage work waits for a time or an event.
pub(crate) const NEVER: u16 = u16::MAX;

/// The epoch of the [`Wake`] bounds moves up to the current cycle when it falls this far
/// behind (bounds too far ahead are stored nearer: they wake a stage early, still exact).
const EPOCH_SPAN: u64 = 1 << 14;

/// Cycle `at` as a [`Wake`] bound counted from `epoch` (never [`NEVER`]).
#[inline(always)]
fn wake_bound(at: u64, epoch: u64) -> u16 {
    at.saturating_sub(epoch).min(NEVER as u64 - 1) as u16
}

impl Wake {
    /// Every stage may act now.
    const NOW: Wake = Wake { rc: 0, va: 0, va_blocked: true };

    /// The same bounds counted from `to` instead of `from`.
    fn moved(self, from: u64, to: u64) -> Wake {
        let m = |w: u16| if w == NEVER { NEVER } else { wake_bound(from.saturating_add(w as u64), to) };
        Wake { rc: m(self.rc), va: m(self.va), ..self }
    }
}

const _: () = assert!(std::mem::size_of::<RouterRegs>() == 64, "a router's registers fill one cache line");

/// The sets in [`RouterRegs`].
const NONEMPTY: usize = 0;
const ROUTED: usize = 1;
const NEED_VA: usize = 2;
const NEED_EJ: usize = 3;
const BIDS: usize = 4;
const REG_SETS: usize = 5;
/// The VCs waiting for every branch at once (atomic multicast allocation): a set like those
/// in [`RouterRegs`] but kept apart, in [`Routers::need_mc`], since unicast runs never look at it.
const NEED_MC: usize = REG_SETS;

/// The routers of a fabric, all with the same parameters, state in flat vectors.
#[derive(Clone, Debug)]
pub struct Routers {
    pub params: RouterParams,
    pub n: usize,
    pub inputs: InputUnits,
    pub outputs: OutputUnits,
    /// The registers the pipeline consults every cycle, one entry per router.
    regs: Vec<RouterRegs>,
    /// The second words (VCs 64..128) of each router's register sets: only for routers with
    /// more than 64 input VCs (empty otherwise).
    regs_hi: Vec<[u64; REG_SETS]>,
    /// Per router, the set `NEED_MC` (all 128 VCs).
    need_mc: Vec<VcSet>,
    /// The cycle the routers' [`Wake`] bounds count from.
    epoch: u64,
    /// Flits buffered in the whole fabric.
    pub buffered: u64,
    /// Input VCs waiting for atomic multicast allocation in the whole fabric (`NEED_MC`
    /// members), so that unicast-only runs skip the check.
    mc_waiting: usize,
    /// The credit return lines of every output port: credits freed downstream, by the cycle
    /// they become visible.
    credit_line: CreditLine,
    /// The input VCs of the injection ports.
    injection_vcs: VcSet,
    /// The input VCs of the network ports (not the injection ports): local VC indices
    /// below this (network ports come first).
    pub(crate) net_vcs: usize,
    /// Cached shape: VCs per port, ports, input VCs per router, network ports, NIC channels.
    pub(crate) nv: usize,
    pub(crate) np: usize,
    pub(crate) npv: usize,
    pub(crate) nnet: usize,
    pub(crate) nk: usize,
    /// The input port of each local VC index `l = port * vcs + vc` (no division on the hot path).
    pub(crate) port_of: [u8; MAX_ROUTER_VCS],
    pub(crate) vc_of: [u8; MAX_ROUTER_VCS],
    /// The VCs of each port.
    port_mask: [VcSet; MAX_PORTS],
    pub(crate) scratch: Scratch,
    /// Asynchronous replication: per input VC and branch (network port, or `net_ports` for
    /// LOCAL), how many flits of the front packet the branch has read beyond the front
    /// (allocated at the first such packet; `iv * (net_ports + 1) + branch`).
    branch_pos: Vec<u16>,
}

impl Routers {
    pub fn new(params: RouterParams, n: usize) -> Routers {
        let p = params.ports();
        let v = params.vcs as usize;
        let local_vcs = p * v;
        assert!(local_vcs <= MAX_ROUTER_VCS, "a router has {local_vcs} input VCs, at most {MAX_ROUTER_VCS}");
        assert!(p <= MAX_PORTS, "a router has {p} ports, at most {MAX_PORTS}");
        assert!(n * local_vcs <= u32::MAX as usize, "{n} routers of {local_vcs} VCs: VC indices must fit in 32 bits");
        let port_vcs = (1u128 << v) - 1;
        let stored = |w: u128| -> VcSet { [w as u64, (w >> 64) as u64] };
        let net = params.net_ports as usize;
        let injection_vcs = stored((0..params.nic_channels as usize).fold(0, |m, k| m | port_vcs << ((net + k) * v)));
        let net_vcs = net * v;
        let mut port_of = [0u8; MAX_ROUTER_VCS];
        let mut vc_of = [0u8; MAX_ROUTER_VCS];
        for l in 0..local_vcs {
            port_of[l] = (l / v) as u8;
            vc_of[l] = (l % v) as u8;
        }
        let mut port_mask = [EMPTY; MAX_PORTS];
        for (o, m) in port_mask.iter_mut().enumerate().take(p) {
            *m = stored(port_vcs << (o * v));
        }
        Routers {
            params,
            n,
            inputs: InputUnits::new(n * local_vcs, params.buffer_flits),
            outputs: OutputUnits::new(n * p, v, params.buffer_flits),
            regs: vec![RouterRegs::default(); n],
            regs_hi: vec![[0; REG_SETS]; if local_vcs > 64 { n } else { 0 }],
            need_mc: vec![EMPTY; n],
            epoch: 0,
            buffered: 0,
            mc_waiting: 0,
            credit_line: CreditLine::new(params.pipeline.credit_delay),

            injection_vcs,
            net_vcs,
            nv: v,
            np: p,
            npv: local_vcs,
            nnet: net,
            nk: params.nic_channels as usize,
            port_of,
            vc_of,
            port_mask,
            scratch: Scratch {
                read: EMPTY,
                popped: EMPTY,
                port_full: EMPTY,
                port_reads: [0; MAX_PORTS],
                ports_read: 0,
                sa_cycle: u64::MAX,
                sa_first: 0,
                req: [EMPTY; MAX_PORTS],
                read_at: [0; MAX_ROUTER_VCS],
            },
            branch_pos: Vec::new(),
        }
    }

    /// Take routers `routers` (all their state, credits on their return lines included) from
    /// `other`, a copy of this fabric's routers that ran them while these did not (the
    /// parts of a fabric split between threads, joined after the run).
    pub fn copy_routers_from(&mut self, other: &Routers, routers: std::ops::Range<usize>) {
        self.inputs.copy_vcs_from(&other.inputs, routers.start * self.npv..routers.end * self.npv);
        self.outputs.copy_ports_from(&other.outputs, routers.start * self.np..routers.end * self.np);
        self.regs[routers.clone()].copy_from_slice(&other.regs[routers.clone()]);
        for g in &mut self.regs[routers.clone()] {
            g.wake = g.wake.moved(other.epoch, self.epoch);
        }
        if !self.regs_hi.is_empty() {
            self.regs_hi[routers.clone()].copy_from_slice(&other.regs_hi[routers.clone()]);
        }
        self.buffered += other.regs[routers.clone()].iter().map(|g| g.occupancy as u64).sum::<u64>();
        self.need_mc[routers.clone()].copy_from_slice(&other.need_mc[routers.clone()]);
        self.mc_waiting = self.need_mc.iter().map(|m| (m[0].count_ones() + m[1].count_ones()) as usize).sum::<usize>();
        let ovs = (routers.start * self.npv) as u32..(routers.end * self.npv) as u32;
        self.credit_line.join(&other.credit_line, |ov| ovs.contains(&ov));
        if !other.branch_pos.is_empty() {
            let per_router = self.npv * (self.nnet + 1);
            self.branch_pos.resize(self.n * per_router, 0);
            let span = routers.start * per_router..routers.end * per_router;
            self.branch_pos[span.clone()].copy_from_slice(&other.branch_pos[span]);
        }
    }

    /// Index of branch `o` (a network port, or `PortSet::LOCAL`'s slot) of input VC `iv` in
    /// `branch_pos`.
    #[inline(always)]
    pub(crate) fn branch_slot(&self, iv: usize, local: bool, o: usize) -> usize {
        iv * (self.nnet + 1) + if local { self.nnet } else { o }
    }

    /// Flits of its front packet that branch slot `b` of an asynchronously replicated VC has
    /// read beyond the front (the FIFO position it reads next).
    #[inline(always)]
    pub(crate) fn branch_pos(&self, b: usize) -> u16 {
        self.branch_pos[b]
    }

    #[inline(always)]
    pub(crate) fn advance_branch(&mut self, b: usize) {
        self.branch_pos[b] += 1;
    }

    /// Bytes the routers of a fabric of `n` routers would need (checked before building).
    pub fn bytes_needed(params: &RouterParams, n: usize) -> u128 {
        let p = params.ports() as u128;
        let v = params.vcs as u128;
        let per_router = p * v * InputUnits::bytes_per_vc(params.buffer_flits) as u128
            + p * OutputUnits::bytes_per_port(params.vcs as usize) as u128
            + std::mem::size_of::<RouterRegs>() as u128
            + if p * v > 64 { std::mem::size_of::<[u64; REG_SETS]>() as u128 } else { 0 }
            + std::mem::size_of::<VcSet>() as u128;
        per_router * n as u128
    }

    /// Bytes of the branch positions that asynchronous replication allocates at the first
    /// multi-flit packet a router replicates (fabrics of `n` routers).
    pub fn branch_pos_bytes(params: &RouterParams, n: usize) -> u128 {
        n as u128 * params.ports() as u128 * params.vcs as u128 * (params.net_ports as u128 + 1) * 2
    }

    #[inline(always)]
    pub fn ports(&self) -> usize {
        self.np
    }
    #[inline(always)]
    pub fn vcs(&self) -> usize {
        self.nv
    }
    /// Network ports per router.
    #[inline(always)]
    pub fn net_ports(&self) -> usize {
        self.nnet
    }
    /// NIC channels per router.
    #[inline(always)]
    pub fn nic_channels(&self) -> usize {
        self.nk
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
        let l = (self.nnet + ch) * self.nv;
        let iv = r.idx() * self.npv + l;
        if self.inputs.is_full(iv) {
            return false;
        }
        let ready = t + self.params.pipeline.inject_latency as u64;
        self.inputs.push(iv, flit, ready, t + 1);
        self.flit_written(r.idx(), l, ready);
        true
    }

    /// Can injection channel `ch` of router `r` take a flit now?
    #[inline]
    pub fn injection_has_room(&self, r: NodeId, ch: usize) -> bool {
        !self.inputs.is_full(r.idx() * self.npv + (self.nnet + ch) * self.nv)
    }

    /// Write a flit that crossed a link in cycle `t` into input VC `iv` (the fabric's
    /// commit phase), readable from cycle `ready`.
    #[inline]
    pub fn arrive(&mut self, iv: usize, flit: Flit, t: u64, ready: u64) {
        let r = iv / self.npv;
        self.arrive_at(r, iv - r * self.npv, flit, t, ready);
    }

    /// [`Routers::arrive`] with the router `r` and its local VC index `l` known.
    #[inline(always)]
    pub fn arrive_at(&mut self, r: usize, l: usize, flit: Flit, t: u64, ready: u64) {
        self.inputs.push(r * self.npv + l, flit, ready, t + 1);
        self.flit_written(r, l, ready);
    }

    /// Router `r`'s registers after a flit readable from `ready` was written into its local
    /// VC `l`.
    #[inline(always)]
    fn flit_written(&mut self, r: usize, l: usize, ready: u64) {
        let c = &self.inputs.ctl[r * self.npv + l];
        // A head at the front of an unrouted VC? (Computed without a branch: it is data.)
        let head = (c.len == 1) & (c.stage == VcStage::Idle);
        let w = if head { self.wake_bound(ready) } else { NEVER };
        let g = &mut self.regs[r].wake;
        g.rc = g.rc.min(w);
        self.regs[r].occupancy += 1;
        // Any width: the commit does not know the pipeline's.
        self.reg_insert::<u128>(r, NONEMPTY, l);
        self.buffered += 1;
    }

    /// [`Routers::arrive_at`] of a flit that crossed a link in cycle `t`, written only after
    /// the commit of cycle `t + 1` (which took a flit from the front of this VC if `popped`):
    /// see [`InputUnits::push_late`]. The flit must not be readable before `t + 2`.
    pub fn arrive_late(&mut self, r: usize, l: usize, flit: Flit, t: u64, ready: u64, popped: bool) {
        debug_assert!(ready >= t + 2, "a flit written late must not be readable before it is written");
        self.inputs.push_late(r * self.npv + l, flit, ready, t + 1, popped);
        self.flit_written(r, l, ready);
    }

    /// A credit for `vc` of output port `op` (global index) goes onto the return line, usable
    /// from cycle `ready`: it becomes visible when [`Routers::deliver_credits`] reaches
    /// `ready`.
    #[inline(always)]
    pub fn return_credit(&mut self, op: usize, vc: u8, ready: u64) {
        self.return_credits(ready, std::iter::once((op, vc)));
    }

    /// [`Routers::return_credit`] for a cycle's credits, all usable from cycle `ready`: each
    /// a (global output port, VC).
    #[inline(always)]
    pub fn return_credits(&mut self, ready: u64, credits: impl Iterator<Item = (usize, u8)>) {
        let (in_flight, nv) = (self.outputs.in_flight_mut(), self.nv);
        self.credit_line.push_all(
            ready,
            credits.map(move |(op, vc)| {
                let ov = op * nv + vc as usize;
                in_flight[ov] += 1;
                ov as u32
            }),
        );
    }

    /// A credit for `vc` of output port `op` that is visible from the next cycle on (a
    /// return line of no delay): no queueing.
    #[inline]
    pub fn credit_now(&mut self, op: usize, vc: u8) {
        self.outputs.add_credit(op * self.nv + vc as usize, self.params.buffer_flits);
    }

    /// The credit for a slot of `vc` downstream of output port `op` (global index) freed in
    /// cycle `t`: usable upstream from `t + 1 + credit_delay` (with no delay, from the next
    /// cycle on, without queueing).
    #[inline(always)]
    pub fn credit_freed(&mut self, op: usize, vc: u8, t: u64) {
        self.credits_freed(t, std::iter::once((op, vc)));
    }

    /// [`Routers::credit_freed`] for a cycle's credits (each a global output port and VC),
    /// the return line's delay looked at once for all.
    #[inline(always)]
    pub fn credits_freed(&mut self, t: u64, credits: impl Iterator<Item = (usize, u8)>) {
        match self.params.pipeline.credit_delay {
            0 => credits.for_each(|(op, vc)| self.credit_now(op, vc)),
            d => self.return_credits(t + 1 + d as u64, credits),
        }
    }

    /// Make the credits on the return lines that are usable by cycle `t` visible. The fabric
    /// calls it before cycle `t` is evaluated (after the previous cycle's commit, with `t`
    /// the next cycle), so a router sees in cycle `t` exactly the credits that have arrived.
    #[inline]
    pub fn deliver_credits(&mut self, t: u64) {
        if t.wrapping_sub(self.epoch) >= EPOCH_SPAN {
            self.move_epoch(t);
        }
        let (outputs, depth) = (&mut self.outputs, self.params.buffer_flits);
        self.credit_line.deliver(t, |ovs| outputs.credits_arrived(ovs, depth));
    }

    /// Credits of output VC `vc` of port `op` as the router will see them in cycle `t`.
    pub fn credits_at(&self, op: usize, vc: usize, t: u64) -> u16 {
        let ov = op * self.nv + vc;
        self.outputs.credits[ov] + self.credit_line.count(ov as u32, t) as u16
    }

    /// The latest cycle at which a credit now on a return line becomes visible.
    pub fn credit_horizon(&self) -> u64 {
        self.credit_line.horizon()
    }

    /// Could router `r`'s registers differ from the last cycle it was idle in: does it hold
    /// flits, or credits on its return lines?
    pub fn may_change(&self, r: NodeId) -> bool {
        self.regs[r.idx()].occupancy > 0 || (0..self.np).any(|o| self.outputs.credits_in_flight(r.idx() * self.np + o) > 0)
    }

    /// Flits buffered in router `r` (all its input VCs).
    #[inline(always)]
    pub fn occupancy(&self, r: usize) -> u32 {
        self.regs[r].occupancy
    }

    /// The local VCs of router `r` switch allocation looks at (bit `l`): routed packets with
    /// several branches, and unicast packets holding their network output VC since an earlier
    /// cycle or, with no VA delay, this one.
    pub fn switch_bidders(&self, r: NodeId) -> u128 {
        self.reg::<u128>(r.idx(), BIDS)
    }

    /// Does the fabric compute VC sets in 64 bits (every router has at most 64 input VCs)?
    #[inline(always)]
    pub fn narrow(&self) -> bool {
        self.npv <= 64
    }

    /// What input VC `iv` (global index) is doing.
    pub fn vc_activity(&self, iv: usize) -> VcActivity {
        let c = &self.inputs.ctl[iv];
        match c.stage {
            VcStage::Idle if c.len == 0 => VcActivity::Idle,
            VcStage::Idle => VcActivity::Routing,
            VcStage::Routed if !c.pending.difference(c.granted).is_empty() => VcActivity::VcAlloc,
            VcStage::Routed => VcActivity::Active,
        }
    }

    /// Is output VC `ov` free?
    pub fn output_vc_free(&self, ov: usize) -> bool {
        self.outputs.owner[ov] == NONE
    }

    /// Route computation for the VCs in `which` whose front head is readable.
    #[inline(always)]
    fn route_fronts<S: VcBits, E: RouterEnv>(&mut self, r: NodeId, t: u64, env: &E, which: S) {
        let ri = r.idx();
        let base = ri * self.npv;
        let rc = self.params.pipeline.rc_delay as u64;
        let n_iv = self.inputs.ctl.len();
        for l in members(which) {
            let iv = base + l;
            let e = *self.inputs.front_entry(iv);
            if e.ready > t {
                self.rc_may_act(ri, e.ready);
                continue;
            }
            assert!(e.flit.is_head(), "router {r} input VC {l}: body flit {:?} at the front of an idle VC", e.flit);
            let (rd, meta) = env.route(r, PortId(self.port_of[l]), e.flit.packet);
            debug_assert!(!rd.ports.is_empty(), "route computation returned no output for {:?}", e.flit);
            let async_rep = meta.len > 1 && self.params.replication == Replication::Async && !rd.ports.bits().is_power_of_two();
            self.inputs.ctl[iv].routed(rd.ports, rd.vc_mask, meta.len, async_rep, t + rc);
            if async_rep && self.branch_pos.is_empty() {
                self.branch_pos = vec![0; n_iv * (self.nnet + 1)];
            }
            self.inputs.rank[iv] = (meta.key, meta.birth);
            self.reg_insert::<S>(ri, ROUTED, l);
            // A new VC allocation requester, able from `t + rc`.
            if rd.ports.bits().is_power_of_two() {
                // Unicast: one network branch or ejection.
                if rd.ports == PortSet::LOCAL {
                    self.reg_insert::<S>(ri, NEED_EJ, l);
                } else {
                    self.va_may_act(ri, t + rc);
                    self.reg_insert::<S>(ri, NEED_VA, l);
                }
            } else if meta.len > 1 && self.params.multicast_va == MulticastVa::Atomic {
                self.reg_insert::<S>(ri, BIDS, l);
                // Stage 1 allocates it (`NEED_EJ` is the stage's "something to allocate").
                self.reg_insert::<S>(ri, NEED_MC, l);
                self.reg_insert::<S>(ri, NEED_EJ, l);
                self.mc_waiting += 1;
            } else {
                self.reg_insert::<S>(ri, BIDS, l);
                if !rd.ports.network().is_empty() {
                    self.va_may_act(ri, t + rc);
                    self.reg_insert::<S>(ri, NEED_VA, l);
                }
                if rd.ports.contains(PortSet::LOCAL) {
                    self.reg_insert::<S>(ri, NEED_EJ, l);
                }
            }
        }
    }

    /// Stage 1 of a cycle: route computation, ejection-channel allocation and ejection.
    /// Ejected flits are appended to `ejected`; freed buffer slots to `out.freed`.
    pub fn stage_eject<E: RouterEnv>(&mut self, r: NodeId, t: u64, env: &E, ejected: &mut Vec<Ejection>, out: &mut Outbox) {
        if self.narrow() {
            self.stage_eject_in::<u64, E>(r, t, env, ejected, out)
        } else {
            self.stage_eject_in::<u128, E>(r, t, env, ejected, out)
        }
    }

    /// [`Routers::stage_eject`] computing VC sets in width `S` (which must hold all the
    /// router's input VCs).
    pub fn stage_eject_in<S: VcBits, E: RouterEnv>(&mut self, r: NodeId, t: u64, env: &E, ejected: &mut Vec<Ejection>, out: &mut Outbox) {
        debug_assert!(S::WIDTH >= self.npv, "{} input VCs computed in {} bits", self.npv, S::WIDTH);
        let s = &mut self.scratch;
        let mut pr = s.ports_read;
        while pr != 0 {
            s.port_reads[pr.trailing_zeros() as usize] = 0;
            pr &= pr - 1;
        }
        s.ports_read = 0;
        S::ZERO.store_into(&mut s.read);
        S::ZERO.store_into(&mut s.popped);
        S::ZERO.store_into(&mut s.port_full);
        let ri = r.idx();
        if self.regs[ri].occupancy == 0 {
            return;
        }
        let now = self.wake_now(t);
        if self.regs[ri].wake.rc as u64 <= now {
            // Recomputed over every unrouted VC.
            self.regs[ri].wake.rc = NEVER;
            let unrouted = self.reg::<S>(ri, NONEMPTY) & !self.reg::<S>(ri, ROUTED);
            if !unrouted.is_empty() {
                self.route_fronts(r, t, env, unrouted);
            }
        }
        if !self.reg::<S>(ri, NEED_EJ).is_empty() {
            if self.mc_waiting != 0 {
                let multicast = self.reg::<S>(ri, NEED_MC);
                if !multicast.is_empty() {
                    self.allocate_multicast::<S>(r, t, multicast);
                }
            }
            self.allocate_ejection::<S>(r, t);
        }
        if self.regs[ri].ej_owned != 0 {
            self.eject::<S>(r, t, ejected, out);
        }
    }

    /// Stage 2 of a cycle: route computation for heads the NIC just injected, VC allocation,
    /// switch allocation and crossbar traversal on the network ports. Must follow
    /// [`Routers::stage_eject`] for the same router and cycle.
    pub fn stage_network<E: RouterEnv>(&mut self, r: NodeId, t: u64, env: &E, out: &mut Outbox) {
        if self.narrow() { self.stage_network_in::<u64, E>(r, t, env, out) } else { self.stage_network_in::<u128, E>(r, t, env, out) }
    }

    /// [`Routers::stage_network`] computing VC sets in width `S`.
    pub fn stage_network_in<S: VcBits, E: RouterEnv>(&mut self, r: NodeId, t: u64, env: &E, out: &mut Outbox) {
        let ri = r.idx();
        if self.regs[ri].occupancy == 0 {
            return;
        }
        let now = self.wake_now(t);
        if self.regs[ri].wake.rc as u64 <= now {
            let new_heads = self.reg::<S>(ri, NONEMPTY) & !self.reg::<S>(ri, ROUTED) & S::load(self.injection_vcs);
            if !new_heads.is_empty() {
                self.route_fronts(r, t, env, new_heads);
                // Replicated packets the NIC just injected; those routed earlier were offered
                // their branches in stage 1.
                let multicast = self.reg::<S>(ri, NEED_MC) & new_heads;
                if !multicast.is_empty() {
                    self.allocate_multicast::<S>(r, t, multicast);
                }
            }
        }
        // Unicast packets granted their output VC in this cycle bid from `t + va_delay`: in
        // this cycle's switch allocation only with no VA delay.
        let mut later = S::ZERO;
        if self.regs[ri].wake.va as u64 <= now {
            let granted = self.allocate_network_vcs::<S>(r, t);
            if self.params.pipeline.va_delay == 0 {
                self.reg_add(ri, BIDS, granted);
            } else {
                later = granted;
            }
        }
        if !self.switch_candidates::<S>(ri).is_empty() {
            self.allocate_switch::<S>(r, t, out);
        }
        self.reg_add(ri, BIDS, later);
    }

    /// Every branch of local VC `l` has taken its front flit: pop it, free its buffer slot
    /// (a credit upstream for a network port), and get the VC ready for the next flit (or,
    /// after a tail, the next packet).
    #[inline(always)]
    pub(crate) fn pop_front<S: VcBits>(&mut self, ri: usize, l: usize, t: u64, out: &mut Outbox) {
        let iv = ri * self.npv + l;
        S::insert_into(&mut self.scratch.popped, l);
        let e = self.inputs.pop(iv, t + 1);
        self.buffered -= 1;
        if l < self.net_vcs {
            out.freed.push(Freed { in_port: (ri * self.np + self.port_of[l] as usize) as u32, vc: self.vc_of[l] });
        }
        self.regs[ri].occupancy -= 1;
        let c = &mut self.inputs.ctl[iv];
        let emptied = c.len == 0;
        let tail = e.flit.is_tail();
        if c.async_rep {
            self.branches_step_forward(iv, tail);
        }
        let c = &mut self.inputs.ctl[iv];
        if tail {
            debug_assert!(c.granted.is_empty(), "router {ri} VC {l}: tail left with branches still granted: {c:?}");
            c.stage = VcStage::Idle;
            c.route = PortSet::empty();
            c.async_rep = false;
        } else if !c.async_rep {
            c.pending = c.route;
        }
        if emptied {
            self.reg_remove::<S>(ri, NONEMPTY, l);
        }
        if tail {
            self.reg_remove::<S>(ri, ROUTED, l);
            self.reg_remove::<S>(ri, BIDS, l);
            if !emptied {
                // The next packet's head is at the front.
                self.rc_may_act(ri, self.inputs.ctl[iv].front.ready);
            }
        }
    }

    /// The front of asynchronously replicated VC `iv` was popped: every branch moves one
    /// place nearer the front, and those now at it are pending (none after the tail).
    #[cold]
    #[inline(never)]
    fn branches_step_forward(&mut self, iv: usize, tail: bool) {
        let route = self.inputs.ctl[iv].route;
        let mut pending = PortSet::empty();
        for o in route.net_ports() {
            let b = self.branch_slot(iv, false, o);
            self.branch_pos[b] -= 1;
            if self.branch_pos[b] == 0 {
                pending |= PortSet::port(o);
            }
        }
        if route.contains(PortSet::LOCAL) {
            let b = self.branch_slot(iv, true, 0);
            self.branch_pos[b] -= 1;
            if self.branch_pos[b] == 0 {
                pending |= PortSet::LOCAL;
            }
        }
        debug_assert!(!tail || pending == route, "input VC {iv}: a branch went past its tail");
        self.inputs.ctl[iv].pending = if tail { PortSet::empty() } else { pending };
    }

    /// Read FIFO position `k` of local VC `l` (asynchronous replication) through the crossbar
    /// this cycle: a VC reads one entry a cycle, which every branch at that position may take.
    #[inline]
    pub(crate) fn take_read_at<S: VcBits>(&mut self, l: usize, k: u16) -> bool {
        if S::is_in(&self.scratch.read, l) {
            return !S::is_in(&self.scratch.popped, l) && self.scratch.read_at[l] == k;
        }
        if !self.take_read::<S>(l) {
            return false;
        }
        self.scratch.read_at[l] = k;
        true
    }

    /// Read local VC `l`'s front flit through the crossbar this cycle (once per cycle; it
    /// counts against its input port's `link_width` reads). False if that is not possible.
    #[inline]
    pub(crate) fn take_read<S: VcBits>(&mut self, l: usize) -> bool {
        let s = &mut self.scratch;
        if S::is_in(&s.popped, l) {
            return false;
        }
        if S::is_in(&s.read, l) {
            return true;
        }
        if S::is_in(&s.port_full, l) {
            return false;
        }
        let port = self.port_of[l] as usize;
        S::insert_into(&mut s.read, l);
        if self.params.link_width == 1 {
            // One read per input port per cycle: no count to keep.
            (S::load(s.port_full) | S::load(self.port_mask[port])).store_into(&mut s.port_full);
            return true;
        }
        s.ports_read |= 1u64 << port;
        s.port_reads[port] += 1;
        if s.port_reads[port] >= self.params.link_width {
            (S::load(s.port_full) | S::load(self.port_mask[port])).store_into(&mut s.port_full);
        }
        true
    }

    /// The network output that picks first in switch allocation in cycle `t` (`t mod
    /// net_ports`, computed once per cycle).
    #[inline]
    pub(crate) fn sa_start(&mut self, t: u64) -> u32 {
        if self.scratch.sa_cycle != t {
            self.scratch.sa_cycle = t;
            self.scratch.sa_first = (t % self.nnet as u64) as u32;
        }
        self.scratch.sa_first
    }

    /// The VCs that could be read through the crossbar now.
    #[inline(always)]
    pub(crate) fn readable<S: VcBits>(&self) -> S {
        let s = &self.scratch;
        !S::load(s.popped) & (S::load(s.read) | !S::load(s.port_full))
    }

    #[inline(always)]
    pub(crate) fn clear_need_va<S: VcBits>(&mut self, r: usize, l: usize) {
        self.reg_remove::<S>(r, NEED_VA, l);
    }
    #[inline(always)]
    pub(crate) fn need_va_set<S: VcBits>(&self, r: usize) -> S {
        self.reg(r, NEED_VA)
    }
    #[inline(always)]
    pub(crate) fn need_ej_set<S: VcBits>(&self, r: usize) -> S {
        let ej = self.reg(r, NEED_EJ);
        if self.mc_waiting != 0 { ej & !self.reg::<S>(r, NEED_MC) } else { ej }
    }
    /// Local VC `l` of router `r` has all its branches: no longer waits for atomic allocation.
    #[inline(always)]
    pub(crate) fn multicast_granted<S: VcBits>(&mut self, r: usize, l: usize) {
        self.reg_remove::<S>(r, NEED_MC, l);
        self.reg_remove::<S>(r, NEED_EJ, l);
        self.mc_waiting -= 1;
    }
    /// Router `r`'s multicast allocator (its round-robin pointer).
    #[inline(always)]
    pub(crate) fn mc_arb(&self, r: usize) -> Arbiter {
        self.regs[r].mc_arb
    }
    #[inline(always)]
    pub(crate) fn mc_arb_mut(&mut self, r: usize) -> &mut Arbiter {
        &mut self.regs[r].mc_arb
    }
    #[inline(always)]
    pub(crate) fn ej_granted<S: VcBits>(&mut self, r: usize, l: usize, ch: usize) {
        self.reg_remove::<S>(r, NEED_EJ, l);
        self.regs[r].ej_owned |= 1u64 << ch;
    }
    #[inline(always)]
    pub(crate) fn ej_released(&mut self, r: usize, ch: usize) {
        self.regs[r].ej_owned &= !(1u64 << ch);
    }
    /// An output VC of router `r`'s network ports is free from the next cycle on.
    #[inline(always)]
    pub(crate) fn ovc_released(&mut self, r: usize, t: u64) {
        if self.regs[r].wake.va_blocked {
            self.va_may_act(r, t + 1);
        }
    }
    /// Cycle `t` counted from the epoch, to compare with [`Wake`] bounds: a bound `w` is
    /// reached when `w as u64 <= self.wake_now(t)`.
    #[inline(always)]
    fn wake_now(&self, t: u64) -> u64 {
        // Wrapping: a cycle before the epoch (none is) would find every bound reached.
        t.wrapping_sub(self.epoch)
    }
    /// Cycle `at` as a [`Wake`] bound.
    #[inline(always)]
    pub(crate) fn wake_bound(&self, at: u64) -> u16 {
        wake_bound(at, self.epoch)
    }
    /// Route computation in router `r` may act from cycle `at` on.
    #[inline(always)]
    fn rc_may_act(&mut self, r: usize, at: u64) {
        let w = self.wake_bound(at);
        let g = &mut self.regs[r].wake;
        g.rc = g.rc.min(w);
    }
    /// VC allocation on router `r`'s network ports may grant from cycle `at` on.
    #[inline(always)]
    pub(crate) fn va_may_act(&mut self, r: usize, at: u64) {
        let w = self.wake_bound(at);
        let g = &mut self.regs[r].wake;
        g.va = g.va.min(w);
    }
    /// After a pass of VC allocation in router `r`: the bound from the requesters waiting
    /// for their RC delay ([`NEVER`] if none; no other event can make the pass grant before
    /// it), and whether able requesters wait for an output VC.
    #[inline(always)]
    pub(crate) fn va_rests_until(&mut self, r: usize, w: u16, blocked: bool) {
        let g = &mut self.regs[r].wake;
        (g.va, g.va_blocked) = (w, blocked);
    }
    /// Count the [`Wake`] bounds from cycle `t` on.
    #[cold]
    #[inline(never)]
    fn move_epoch(&mut self, t: u64) {
        let from = self.epoch;
        for g in &mut self.regs {
            g.wake = g.wake.moved(from, t);
        }
        self.epoch = t;
    }
    /// Rebuild every router's registers (the sets of its input VCs by what they need, the
    /// ejection channels held, the flits buffered) from its input and output units, every
    /// stage free to act at once: after [`crate::EventEval`] ran the routers without them.
    pub fn rebuild_registers(&mut self) {
        let (v, np, npv, net) = (self.nv, self.np, self.npv, self.nnet);
        self.buffered = 0;
        self.mc_waiting = 0;
        for r in 0..self.n {
            let mut g = RouterRegs { wake: Wake::NOW, mc_arb: self.regs[r].mc_arb, ..RouterRegs::default() };
            let mut hi = [0u64; REG_SETS];
            let mut mc = EMPTY;
            for l in 0..npv {
                let c = &self.inputs.ctl[r * npv + l];
                let mut set = |f: usize| if l < 64 { g.sets[f] |= 1 << l } else { hi[f] |= 1 << (l - 64) };
                g.occupancy += c.len as u32;
                if c.len > 0 {
                    set(NONEMPTY);
                }
                if c.stage != VcStage::Routed {
                    continue;
                }
                set(ROUTED);
                let unicast = c.route.bits().is_power_of_two();
                if !c.pending.network().difference(c.granted).is_empty() {
                    set(NEED_VA);
                }
                let lacks_local = c.pending.contains(PortSet::LOCAL) && !c.granted.contains(PortSet::LOCAL);
                if !unicast && c.pkt_len > 1 && self.params.multicast_va == MulticastVa::Atomic && c.granted.is_empty() {
                    set(NEED_EJ);
                    crate::vc_set::insert(&mut mc, l);
                    self.mc_waiting += 1;
                } else if lacks_local {
                    set(NEED_EJ);
                }
                if !unicast || !c.granted.network().is_empty() {
                    set(BIDS);
                }
            }
            for ch in 0..self.nk {
                if self.outputs.owner[(r * np + net + ch) * v] != NONE {
                    g.ej_owned |= 1 << ch;
                }
            }
            self.buffered += g.occupancy as u64;
            self.regs[r] = g;
            if !self.regs_hi.is_empty() {
                self.regs_hi[r] = hi;
            }
            self.need_mc[r] = mc;
        }
    }

    /// Make every stage of every router act at its next evaluation, as if nothing were known
    /// about when it can: the plain path, for tests comparing with it.
    pub fn wake_all(&mut self) {
        self.regs.iter_mut().for_each(|g| g.wake = Wake::NOW);
    }
    #[inline(always)]
    pub(crate) fn ej_owned(&self, r: usize) -> u64 {
        self.regs[r].ej_owned
    }
    /// The ejection channels of router `r` no packet holds.
    #[inline(always)]
    pub(crate) fn free_ej_channels(&self, r: usize) -> u64 {
        let k = self.nk;
        !self.regs[r].ej_owned & if k >= 64 { !0 } else { (1u64 << k) - 1 }
    }
    /// The VCs that may bid in switch allocation now: a superset of those whose packet
    /// holds an output VC on a branch still owed the front flit, not popped this cycle.
    #[inline(always)]
    pub(crate) fn switch_candidates<S: VcBits>(&self, r: usize) -> S {
        self.reg::<S>(r, BIDS) & self.reg::<S>(r, NONEMPTY) & !S::load(self.scratch.popped)
    }

    /// Register set `f` of router `r` in width `S`.
    #[inline(always)]
    fn reg<S: VcBits>(&self, r: usize, f: usize) -> S {
        if f == NEED_MC {
            return S::load(self.need_mc[r]);
        }
        let hi = if S::WIDTH > 64 && !self.regs_hi.is_empty() { self.regs_hi[r][f] } else { 0 };
        S::from_words(self.regs[r].sets[f], hi)
    }

    /// Add local VC `l` to register set `f` of router `r` (which computes in width `S`).
    #[inline(always)]
    fn reg_insert<S: VcBits>(&mut self, r: usize, f: usize, l: usize) {
        if f == NEED_MC {
            S::insert_into(&mut self.need_mc[r], l);
        } else if S::WIDTH <= 64 || l < 64 {
            self.regs[r].sets[f] |= 1 << (l & 63);
        } else {
            self.regs_hi[r][f] |= 1 << (l & 63);
        }
    }

    /// Add the VCs `set` to register set `f` of router `r`.
    #[inline(always)]
    fn reg_add<S: VcBits>(&mut self, r: usize, f: usize, set: S) {
        debug_assert!(f < REG_SETS, "reg_add on a set outside the registers");
        let mut w = EMPTY;
        set.store_into(&mut w);
        self.regs[r].sets[f] |= w[0];
        if S::WIDTH > 64 && !self.regs_hi.is_empty() {
            self.regs_hi[r][f] |= w[1];
        }
    }

    /// Remove local VC `l` from register set `f` of router `r` (which computes in width `S`).
    #[inline(always)]
    fn reg_remove<S: VcBits>(&mut self, r: usize, f: usize, l: usize) {
        if f == NEED_MC {
            S::remove_from(&mut self.need_mc[r], l);
        } else if S::WIDTH <= 64 || l < 64 {
            self.regs[r].sets[f] &= !(1 << (l & 63));
        } else {
            self.regs_hi[r][f] &= !(1 << (l & 63));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn router_regs_are_one_cache_line() {
        assert_eq!(std::mem::size_of::<RouterRegs>(), 64);
    }

    /// The cycle a stored bound stands for (None for [`NEVER`]).
    fn cycle(w: u16, epoch: u64) -> Option<u64> {
        (w != NEVER).then_some(epoch + w as u64)
    }

    proptest! {
        /// Counted from a later epoch, a bound stands for the same cycle, or for the epoch
        /// if that is later (reached either way), or for a nearer cycle if too far to store
        /// (still a lower bound); no bound stays no bound.
        #[test]
        fn moving_the_epoch_keeps_every_bound(from in 0u64..1 << 40, step in 0u64..1 << 18, ws in proptest::array::uniform2(any::<u16>())) {
            let to = from + step;
            let w = Wake { rc: ws[0], va: ws[1], ..Wake::NOW };
            let m = w.moved(from, to);
            for (a, b) in [(w.rc, m.rc), (w.va, m.va)] {
                match cycle(a, from) {
                    None => prop_assert_eq!(b, NEVER),
                    Some(at) => {
                        let got = cycle(b, to).expect("a bound stays a bound");
                        prop_assert!(got == at.max(to) || (got < at && b == NEVER - 1), "{at} became {got}");
                    }
                }
            }
        }
    }

    /// The routers move the epoch as cycles pass, keeping the cycles the bounds stand for.
    #[test]
    fn delivering_credits_moves_the_epoch_and_keeps_the_bounds() {
        use crate::params::*;
        let p = RouterParams {
            switching: Switching::Wormhole,
            pipeline: Pipeline::REALISTIC,
            arbiter: ArbiterPolicy::RoundRobin,
            vcs: 2,
            buffer_flits: 4,
            net_ports: 2,
            nic_channels: 1,
            link_width: 1,
            multicast_va: MulticastVa::Atomic,
            replication: Replication::Sync,
        };
        let mut r = Routers::new(p, 3);
        for g in &mut r.regs {
            (g.wake.rc, g.wake.va) = (NEVER, NEVER);
        }
        let t = 10 + EPOCH_SPAN;
        r.deliver_credits(10);
        r.rc_may_act(0, t + 5);
        r.va_may_act(1, 12);
        let w = r.wake_bound(t + 70_000);
        r.va_rests_until(0, w, false);
        r.va_rests_until(2, NEVER, false);
        r.deliver_credits(t);
        assert_eq!(r.epoch, t);
        assert_eq!(cycle(r.regs[0].wake.rc, r.epoch), Some(t + 5));
        assert_eq!(cycle(r.regs[1].wake.va, r.epoch), Some(t), "reached before the move: reached after it");
        assert!(cycle(r.regs[0].wake.va, r.epoch).is_some_and(|c| c > t && c <= t + 70_000), "a far bound stays a bound");
        assert_eq!(r.regs[2].wake.va, NEVER);
        r.rc_may_act(2, t + 7);
        r.deliver_credits(t + EPOCH_SPAN - 1);
        assert_eq!(r.epoch, t, "the epoch moves once it is EPOCH_SPAN behind");
        r.deliver_credits(t + EPOCH_SPAN + 3);
        assert_eq!(cycle(r.regs[2].wake.rc, r.epoch), Some(t + EPOCH_SPAN + 3));
    }
}
