//! The routers of a fabric: their state in flat vectors, and the cycle that evaluates them.
//!
//! A cycle runs in stages over every router, each stage reading only what the routers held
//! at its start and what the delay lines ([`crate::wheel`]) delivered, and writing only its
//! own router's state and the delay lines, so that the order routers are visited in never
//! changes a result:
//!
//! ```text
//!  begin_cycle(t):    flits due become readable, credits visible, RC and VA delays end;
//!                     heads at the front of idle VCs are routed (route_compute)
//!  eject_stage(t):    ejection-VC allocation, ejection (vc_allocator, switch_allocator)
//!  (the fabric runs the nodes' programs here; the NICs write flits: inject)
//!  after_injection(t): RC for heads the NICs just wrote with no injection latency
//!  network_stage(t):  VC allocation, switch allocation, crossbar: flits onto the links,
//!                     credits onto the return wires (vc_allocator, switch_allocator, crossbar)
//!  end_cycle(t):      credits due in t + 1 become visible (what a probe reads at the end of t)
//! ```
//!
//! Every rule (routing, allocation, replication, credits) is one function, in the file
//! named after its hardware. What is scheduling, not a rule: which routers a stage visits.
//! Under [`Schedule::Busy`] each router keeps registers of its input VCs by what they wait
//! for (able VC-allocation requesters, switch bidders, ejectors; [`Work`]) which the events
//! that make them so keep up to date, and a stage visits only routers with such work and
//! runs an allocation only when a requester arrived or a resource was freed (an allocation
//! that grants nothing changes no state: arbiters move only on grants). Under
//! [`Schedule::All`] every router is visited in every stage of every cycle, its registers
//! rebuilt from its VCs' state and every allocation run. Results are the same (tested).

use crate::arbiter::Arbiter;
use crate::flit::Flit;
use crate::ids::{NONE, NodeId};
use crate::input_unit::{Branches, InputUnits, Vc, VcStage};
use crate::output_unit::{FREE, OutputUnits};
use crate::params::{MulticastVa, RouterParams, Switching};
use crate::port_set::PortSet;
use crate::route_compute::RouterEnv;
use crate::vc_set::{EMPTY, MAX_ROUTER_VCS, VcBits, VcSet, members};
use crate::wheel::{Slot, Wheel, unvcr, vcr};

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

/// A flit handed to the NIC on an ejection channel, from the packet holding its ejection
/// VC `vc` (the NIC reassembles each VC's packet apart).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ejection {
    pub channel: u8,
    pub vc: u8,
    pub flit: Flit,
}

/// A VC allocation logged for probes ([`Routers::set_log`]): input VC `iv` (global index)
/// was granted VC `vc` of its router's output `port` in this cycle (a network port, or
/// `net_ports + ch` for ejection channel `ch`, whose ejection VC `vc` it got).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VaGrant {
    pub iv: u32,
    pub port: u8,
    pub vc: u8,
}

/// What the allocators did in one cycle, logged for probes ([`Routers::set_log`]): VC
/// allocation grants, switch allocation requests (router, a bit per local input VC; a router
/// may appear twice, for ejection and for the network ports) and switch grants (the input
/// VCs, global index, whose flit crossed the crossbar; a replicated flit once per branch).
#[derive(Clone, Debug, Default)]
pub struct AllocLog {
    pub va_grants: Vec<VaGrant>,
    pub sa_requests: Vec<(u32, u128)>,
    pub sa_grants: Vec<u32>,
}

impl AllocLog {
    /// Empty it for the next cycle (keeping the room).
    pub fn clear(&mut self) {
        self.va_grants.clear();
        self.sa_requests.clear();
        self.sa_grants.clear();
    }
}

/// A VC set as one `u128` (a bit per local input VC).
#[inline(always)]
pub(crate) fn wide<S: VcBits>(x: S) -> u128 {
    let mut s = EMPTY;
    x.store_into(&mut s);
    s[0] as u128 | (s[1] as u128) << 64
}

/// Which routers the stages visit. Results never depend on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Schedule {
    /// Only routers with work, allocations only when they can grant.
    #[default]
    Busy,
    /// Every router in every stage of every cycle, every allocation run.
    All,
}

impl Schedule {
    pub const NAMES: &'static str = "busy, all";
    pub fn parse(s: &str) -> Option<Schedule> {
        match s {
            "busy" => Some(Schedule::Busy),
            "all" => Some(Schedule::All),
            _ => None,
        }
    }
}

/// One router's work registers: sets of its input VCs (bit `port * vcs + vc`) by what they
/// wait for, and what its stage 1 read. One cache line for routers of up to 64 input VCs.
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(64))]
pub(crate) struct Work<S> {
    /// Unicast to a network output, holding its output VC, able to bid (`sa_ready` passed),
    /// a flit buffered (and, store-and-forward at a network input, the whole packet).
    pub bid: S,
    /// Unicast to ejection, holding an ejection VC, able, a flit buffered.
    pub ejbid: S,
    /// Able VC-allocation requesters for a network output (`rc_delay` passed, a branch
    /// still without an output VC).
    pub va_req: S,
    /// Able requesters of an ejection channel.
    pub ej_req: S,
    /// VCs read through the crossbar by ejection in stage 1 of cycle `s1_at`.
    pub s1_read: S,
    /// Ejection channels whose every VC is held (bit per channel).
    pub ej_full: u64,
    pub s1_at: u64,
    /// Allocations that must run at their next stage: [`VA_DIRTY`], [`EJ_DIRTY`], [`MC_DIRTY`].
    pub dirty: u8,
}

pub(crate) const VA_DIRTY: u8 = 1;
pub(crate) const EJ_DIRTY: u8 = 2;
pub(crate) const MC_DIRTY: u8 = 4;

/// A router's registers for the packets it replicates (allocated at the first such packet).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct McWork<S> {
    /// Replicated packets that may bid in switch allocation: routed, past their VA delay, a
    /// flit buffered, some network branch holding its output VC (the allocation looks at
    /// each branch).
    pub mc_bid: S,
    /// Replicated packets whose LOCAL branch holds an ejection VC, past their VA delay, a
    /// flit buffered (ejection looks at where the branch is).
    pub mc_ej: S,
    /// Able requesters of atomic allocation (every branch in one cycle or none).
    pub mc_req: S,
    /// VCs popped in stage 1 of cycle `s1_at` (of [`Work`]).
    pub s1_popped: S,
    /// Heads routed after injection in cycle `new_at` that request atomic allocation then.
    pub mc_new: S,
    pub new_at: u64,
}

/// The width stages compute VC sets in, and the registers kept in it.
pub(crate) trait Width: VcBits + Default {
    fn w(r: &Routers) -> &[Work<Self>];
    fn w_mut(r: &mut Routers) -> &mut [Work<Self>];
    fn m(r: &Routers) -> &[McWork<Self>];
    fn m_mut(r: &mut Routers) -> &mut Vec<McWork<Self>>;
}

impl Width for u64 {
    #[inline(always)]
    fn w(r: &Routers) -> &[Work<u64>] {
        &r.w64
    }
    #[inline(always)]
    fn w_mut(r: &mut Routers) -> &mut [Work<u64>] {
        &mut r.w64
    }
    #[inline(always)]
    fn m(r: &Routers) -> &[McWork<u64>] {
        &r.m64
    }
    #[inline(always)]
    fn m_mut(r: &mut Routers) -> &mut Vec<McWork<u64>> {
        &mut r.m64
    }
}

impl Width for u128 {
    #[inline(always)]
    fn w(r: &Routers) -> &[Work<u128>] {
        &r.w128
    }
    #[inline(always)]
    fn w_mut(r: &mut Routers) -> &mut [Work<u128>] {
        &mut r.w128
    }
    #[inline(always)]
    fn m(r: &Routers) -> &[McWork<u128>] {
        &r.m128
    }
    #[inline(always)]
    fn m_mut(r: &mut Routers) -> &mut Vec<McWork<u128>> {
        &mut r.m128
    }
}

/// The state of the router a stage is evaluating: what its crossbar has read this cycle.
#[derive(Clone, Debug)]
pub(crate) struct Scratch {
    /// VCs whose front flit went through the crossbar this cycle, and VCs popped this cycle
    /// (one flit per VC per cycle).
    pub read: VcSet,
    pub popped: VcSet,
    /// VCs of input ports that have used up their crossbar reads this cycle.
    pub port_full: VcSet,
    /// Crossbar reads per input port this cycle (links wider than a flit), and which ports
    /// have read.
    pub port_reads: [u8; MAX_PORTS],
    pub ports_read: u64,
    /// Per output port: the VCs requesting it (valid for the outputs a stage marked).
    pub req: [VcSet; MAX_PORTS],
}

/// The slots of the delay lines a stage files into while it runs: the arrivals of the flits
/// it sends (all `link_latency` on) and the credits for the slots it frees (all
/// `1 + credit_delay` on).
pub(crate) struct Filing {
    pub arrivals: Vec<(u32, Flit)>,
    pub credits: Vec<u32>,
}

/// The routers of a fabric, all with the same parameters, state in flat vectors.
#[derive(Clone, Debug)]
pub struct Routers {
    pub params: RouterParams,
    pub n: usize,
    pub(crate) inputs: InputUnits,
    pub(crate) outputs: OutputUnits,
    /// Per router, the arbiter of atomic multicast allocation.
    pub(crate) mc_arb: Vec<Arbiter>,
    w64: Vec<Work<u64>>,
    w128: Vec<Work<u128>>,
    m64: Vec<McWork<u64>>,
    m128: Vec<McWork<u128>>,
    /// Routers whose stage 2 (VC allocation, switch allocation) / stage 1 (ejection-VC
    /// allocation, ejection) has work: bit `r`.
    net_work: Vec<u64>,
    ej_work: Vec<u64>,
    schedule: Schedule,
    /// A permutation of the routers to visit them in (tests of order independence).
    order: Option<Vec<u32>>,
    visit: Vec<u32>,
    pub(crate) wheel: Wheel,
    /// Idle VCs whose next head reached the front by a tail leaving in the previous cycle:
    /// routed at the start of this one.
    pub(crate) rc_next: Vec<u32>,
    rc_now: Vec<u32>,
    /// Injection VCs written this cycle with no injection latency whose front changed.
    inj_front: Vec<u32>,
    /// Per output port: the [`vcr`] of VC 0 of the input port it feeds (`NONE` if none).
    /// Per input port: the [`vcr`] of VC 0 of the output port feeding it (`NONE` if none).
    pub(crate) down: Vec<u32>,
    pub(crate) up: Vec<u32>,
    /// Flits sent on each output port; flits over router-to-router links, and those that were
    /// tails (packets over links).
    pub(crate) sent: Vec<u64>,
    pub hops: u64,
    pub tails: u64,
    /// The routers this evaluation runs (all, or one part of a fabric split between
    /// threads): flits and credits for the others leave through `remote_flits` and
    /// `remote_credits` (this cycle's) and come back through [`Routers::receive_flit`] and
    /// [`Routers::receive_credit`].
    pub(crate) lo: u32,
    pub(crate) hi: u32,
    pub remote_flits: Vec<(u32, Flit)>,
    pub remote_credits: Vec<u32>,
    /// Per input VC fed from another part: the last cycle a flit left it.
    popped_at: Vec<u64>,
    /// Flits buffered or on their way into a buffer.
    pub flits: u64,
    /// Departures logged for probes (when `log` is set), this cycle's.
    pub departures: Vec<Departure>,
    /// Allocations logged for probes (when `log` is set), this cycle's.
    pub allocs: AllocLog,
    pub(crate) log: bool,
    /// For probes (when `log` is set): credits on their way back per output VC, and the
    /// latest cycle one becomes visible.
    pub(crate) in_flight: Vec<u16>,
    pub(crate) horizon: u64,
    /// For probes: the routers a stage visited this cycle (bit `r`).
    visited: Vec<u64>,
    pub(crate) scratch: Scratch,
    /// The network output that picks first in switch allocation in cycle `sa_cycle`.
    pub(crate) sa_first: u32,
    pub(crate) sa_cycle: u64,
    // Shape: VCs per port, ports, input VCs per router, network ports, NIC channels, network
    // input VCs, buffer depth, the set of all ejection channels.
    pub(crate) nv: usize,
    pub(crate) np: usize,
    pub(crate) npv: usize,
    pub(crate) nnet: usize,
    pub(crate) nk: usize,
    pub(crate) net_vcs: usize,
    pub(crate) depth: u16,
    /// Depth of the injection VCs (the NICs write while there is room).
    pub(crate) inj_depth: u16,
    pub(crate) all_channels: u64,
    /// Ejection VCs per channel.
    pub(crate) ejv: usize,
    /// Per injection channel (`router * channels + channel`), the VC its NIC writes the
    /// current packet into.
    inj_vc: Vec<u8>,
    /// The input port and VC of each local VC index (no division on the hot path), and the
    /// VCs of each port.
    pub(crate) port_of: [u8; MAX_ROUTER_VCS],
    pub(crate) vc_of: [u8; MAX_ROUTER_VCS],
    pub(crate) port_mask: [VcSet; MAX_PORTS],
    // The pipeline.
    pub(crate) switching: Switching,
    pub(crate) rc_delay: u64,
    pub(crate) va_delay: u64,
    pub(crate) link_latency: u64,
    pub(crate) credit_delay: u64,
    pub(crate) inject_latency: u64,
    pub(crate) width: u8,
}

/// Input VC `l` of router `r` as seen from outside: what deadlock reports and waveforms read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VcView {
    /// Flits in the FIFO or on their way into it.
    pub occupancy: u16,
    pub stage: VcStage,
    /// The front flit, once readable.
    pub front: Option<Flit>,
    pub route: PortSet,
    pub granted: PortSet,
    pub pending: PortSet,
    pub vc_mask: u16,
    pub pkt_len: u16,
    /// The whole front packet is in the FIFO.
    pub whole_packet: bool,
}

impl Routers {
    pub fn new(params: RouterParams, n: usize) -> Routers {
        let p = params.ports();
        let v = params.vcs as usize;
        let npv = p * v;
        assert!(npv <= MAX_ROUTER_VCS, "a router has {npv} input VCs, at most {MAX_ROUTER_VCS}");
        assert!(p <= MAX_PORTS, "a router has {p} ports, at most {MAX_PORTS}");
        assert!(n < 1 << 25, "{n} routers: at most 2^25");
        let mut port_of = [0u8; MAX_ROUTER_VCS];
        let mut vc_of = [0u8; MAX_ROUTER_VCS];
        for l in 0..npv {
            port_of[l] = (l / v) as u8;
            vc_of[l] = (l % v) as u8;
        }
        let port_vcs = (1u128 << v) - 1;
        let mut port_mask = [EMPTY; MAX_PORTS];
        for (o, m) in port_mask.iter_mut().enumerate().take(p) {
            let w = port_vcs << (o * v);
            *m = [w as u64, (w >> 64) as u64];
        }
        let pl = params.pipeline;
        let longest = [pl.rc_delay, pl.va_delay, pl.link_latency, pl.credit_delay.saturating_add(1), pl.inject_latency]
            .into_iter()
            .max()
            .unwrap_or(0);
        let k = params.nic_channels as usize;
        let narrow = npv <= 64;
        Routers {
            params,
            n,
            // Every input VC has the storage of the deepest class; the network VCs are held
            // to their depth by the upstream credits, the injection VCs by `inj_depth`.
            inputs: InputUnits::new(n * npv, params.deepest_buffer()),
            outputs: OutputUnits::new(n * p, v, params.buffer_flits, n * k, params.ejection_vcs as usize),
            mc_arb: vec![Arbiter::default(); n],
            w64: if narrow { vec![Work::default(); n] } else { Vec::new() },
            w128: if narrow { Vec::new() } else { vec![Work::default(); n] },
            m64: Vec::new(),
            m128: Vec::new(),
            net_work: vec![0; n.div_ceil(64)],
            ej_work: vec![0; n.div_ceil(64)],
            schedule: Schedule::Busy,
            order: None,
            visit: Vec::new(),
            wheel: Wheel::new(longest as u64),
            rc_next: Vec::new(),
            rc_now: Vec::new(),
            inj_front: Vec::new(),
            down: vec![NONE; n * p],
            up: vec![NONE; n * p],
            sent: vec![0; n * p],
            hops: 0,
            tails: 0,
            lo: 0,
            hi: n as u32,
            remote_flits: Vec::new(),
            remote_credits: Vec::new(),
            popped_at: Vec::new(),
            flits: 0,
            departures: Vec::new(),
            allocs: AllocLog::default(),
            log: false,
            in_flight: Vec::new(),
            horizon: 0,
            visited: Vec::new(),
            scratch: Scratch {
                read: EMPTY,
                popped: EMPTY,
                port_full: EMPTY,
                port_reads: [0; MAX_PORTS],
                ports_read: 0,
                req: [EMPTY; MAX_PORTS],
            },
            sa_first: 0,
            sa_cycle: u64::MAX,
            nv: v,
            np: p,
            npv,
            nnet: params.net_ports as usize,
            nk: k,
            net_vcs: params.net_ports as usize * v,
            depth: params.buffer_flits,
            inj_depth: params.inject_buffer_flits,
            all_channels: if k >= 64 { !0 } else { (1u64 << k) - 1 },
            ejv: params.ejection_vcs as usize,
            inj_vc: vec![0; n * k],
            port_of,
            vc_of,
            port_mask,
            switching: params.switching,
            rc_delay: pl.rc_delay as u64,
            va_delay: pl.va_delay as u64,
            link_latency: pl.link_latency as u64,
            credit_delay: pl.credit_delay as u64,
            inject_latency: pl.inject_latency as u64,
            width: params.link_width,
        }
    }

    /// Wire the routers: `down` gives the input port (global index) each output port feeds,
    /// `up` the output port feeding each input port (`NONE` where unconnected).
    pub fn connect(&mut self, down: &[u32], up: &[u32]) {
        let (p, v) = (self.np as u32, self.nv);
        let named = |x: u32| if x == NONE { NONE } else { vcr((x / p) as usize, (x % p) as usize * v) };
        self.down = down.iter().map(|&x| named(x)).collect();
        self.up = up.iter().map(|&x| named(x)).collect();
    }

    /// Log what probes read (departures, credits on their way) from now on, or stop. Turned
    /// on before the first cycle.
    pub fn set_log(&mut self, on: bool) {
        if on && self.in_flight.is_empty() {
            debug_assert!(self.wheel.entries().all(|(_, s)| s.credits.is_empty()), "probes attached with credits on their way");
            self.in_flight = vec![0; self.outputs.ovs.len()];
            self.visited = vec![0; self.n.div_ceil(64)];
        }
        self.log = on;
    }

    /// A credit for output VC [`vcr`] `x` goes on its way, visible from cycle `at`.
    #[inline(always)]
    pub(crate) fn credit_sent(&mut self, x: u32, at: u64) {
        if self.log {
            let (r, k) = unvcr(x);
            self.in_flight[r * self.npv + k] += 1;
            self.horizon = self.horizon.max(at);
        }
    }

    /// Visit routers under `schedule` from now on (results do not depend on it).
    pub fn set_schedule(&mut self, schedule: Schedule) {
        self.schedule = schedule;
    }

    /// Visit routers in the order of `perm` (a permutation of the router ids) in every stage
    /// from now on; None: in id order (results do not depend on it).
    pub fn set_order(&mut self, perm: Option<Vec<u32>>) {
        self.order = perm;
    }

    /// Run only routers `lo..hi` (one part of a fabric split between threads).
    pub fn set_part(&mut self, lo: usize, hi: usize) {
        (self.lo, self.hi) = (lo as u32, hi as u32);
        self.popped_at = vec![u64::MAX; self.inputs.vcs.len()];
    }

    /// Rebase the in-line buffer histograms every `span` cycles instead of every 2^30 (for
    /// tests: results do not depend on it).
    #[doc(hidden)]
    pub fn set_hist_span(&mut self, span: u64) {
        self.inputs.hist_span = span.clamp(1, crate::input_unit::HIST_SPAN);
    }

    /// Bytes the routers of a fabric of `n` routers would need (checked before building).
    pub fn bytes_needed(params: &RouterParams, n: usize) -> u128 {
        let p = params.ports() as u128;
        let v = params.vcs as u128;
        let work = if p * v > 64 { 128 } else { 64 };
        let channels = params.nic_channels as u128;
        let per_router = p * v * InputUnits::bytes_per_vc(params.deepest_buffer()) as u128
            + p * OutputUnits::bytes_per_port(params.vcs as usize) as u128
            + channels * (params.ejection_vcs as u128 + 1)
            + 2 * p * 4
            + work
            + 8;
        per_router * n as u128
    }

    /// Bytes of the state replication allocates at the first packet a router replicates
    /// (fabrics of `n` routers).
    pub fn branch_pos_bytes(params: &RouterParams, n: usize) -> u128 {
        let vcs = n as u128 * params.ports() as u128 * params.vcs as u128;
        vcs * (params.net_ports as u128 + 1) * 2 + vcs * (2 + std::mem::size_of::<Branches>() as u128) + n as u128 * 64
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
        r.idx() * self.np + p
    }
    /// Global input VC index.
    #[inline(always)]
    pub fn ivc_index(&self, r: NodeId, p: usize, v: usize) -> usize {
        (r.idx() * self.np + p) * self.nv + v
    }
    /// The router, port and VC of a global input VC index.
    pub fn ivc_location(&self, iv: usize) -> (NodeId, usize, usize) {
        let v = iv % self.nv;
        let ip = iv / self.nv;
        (NodeId((ip / self.np) as u32), ip % self.np, v)
    }
    /// Input VCs in the fabric.
    pub fn input_vcs(&self) -> usize {
        self.inputs.vcs.len()
    }
    /// Does the fabric compute VC sets in 64 bits (every router has at most 64 input VCs)?
    #[inline(always)]
    pub fn narrow(&self) -> bool {
        self.npv <= 64
    }

    // ---- What observers read ----

    /// Flits in input VC `iv` (global index) or on their way into it.
    #[inline]
    pub fn occupancy_of(&self, iv: usize) -> u16 {
        self.inputs.vcs[iv].occ
    }
    /// Flits in router `r`'s input VCs or on their way into them.
    pub fn occupancy(&self, r: usize) -> u32 {
        self.inputs.vcs[r * self.npv..(r + 1) * self.npv].iter().map(|c| c.occ as u32).sum()
    }
    /// Cycles input VC `iv` spent at each occupancy 0..=depth up to cycle `now`.
    pub fn occupancy_histogram(&self, iv: usize, now: u64) -> Vec<u64> {
        self.inputs.occupancy_histogram(iv, now)
    }
    /// The occupancy histograms of routers `routers`' input VCs up to cycle `now`, summed per
    /// class (network, injection); the VCs of unconnected network ports are left out. `now`
    /// may be any cycle from the last one stepped on (nothing changes in cycles not stepped).
    pub fn class_occupancy(&self, routers: std::ops::Range<usize>, now: u64) -> crate::PortClasses {
        let mut s = crate::PortClasses::default();
        for r in routers {
            for port in 0..self.np {
                let class = if port < self.nnet {
                    if self.up.get(r * self.np + port) == Some(&NONE) {
                        continue;
                    }
                    &mut s.network
                } else {
                    &mut s.injection
                };
                for vc in 0..self.nv {
                    class.vcs += 1;
                    self.inputs.add_histogram((r * self.np + port) * self.nv + vc, now, class);
                }
            }
        }
        s
    }
    /// The most flits input VC `iv` held at the end of a cycle up to `now`.
    pub fn held_max(&self, iv: usize, now: u64) -> u16 {
        self.inputs.held_max(iv, now)
    }
    /// The high-water mark of input VC `iv` (a flit written and read in one cycle counts).
    pub fn max_occupancy(&self, iv: usize) -> u16 {
        self.inputs.vcs[iv].max_len
    }
    /// Cycles input VC `iv`'s front flit could not go for lack of credits / lost switch
    /// arbitration.
    pub fn stall_credit(&self, iv: usize) -> u64 {
        self.inputs.stall_credit[iv]
    }
    pub fn stall_arbitration(&self, iv: usize) -> u64 {
        self.inputs.stall_arb[iv]
    }
    /// Flits sent so far on each output port (global index).
    pub fn port_flits(&self) -> &[u64] {
        &self.sent
    }

    /// The branches of the packet at VC `iv` (unicast packets have one).
    #[inline]
    pub(crate) fn branches_of(&self, iv: usize) -> Branches {
        let c = &self.inputs.vcs[iv];
        if !c.routed() {
            return Branches::default();
        }
        if c.multicast() {
            return self.inputs.branches[iv];
        }
        let route = if c.out == crate::input_unit::LOCAL_OUT { PortSet::LOCAL } else { PortSet::port(c.out as usize) };
        Branches { route, granted: if c.granted() { route } else { PortSet::empty() }, pending: route, ..Branches::default() }
    }

    /// Input VC `iv` (global index) as seen from outside.
    pub fn vc_view(&self, iv: usize) -> VcView {
        let c = &self.inputs.vcs[iv];
        let b = self.branches_of(iv);
        VcView {
            occupancy: c.occ,
            stage: if c.routed() { VcStage::Routed } else { VcStage::Idle },
            front: (c.len > 0).then_some(c.front),
            route: b.route,
            granted: b.granted,
            pending: b.pending,
            vc_mask: c.vc_mask,
            pkt_len: c.pkt_len,
            whole_packet: c.len >= c.pkt_len,
        }
    }

    /// The flits of input VC `iv` in order (those on their way last), with `len_of` giving a
    /// packet's length.
    pub fn vc_flits(&self, iv: usize, len_of: impl Fn(crate::ids::PacketId) -> u16) -> Vec<Flit> {
        let mut flits = self.inputs.flits(iv, &len_of);
        flits.extend(self.arriving(iv));
        flits
    }

    /// The flits on their way into input VC `iv` (on its link), first due first.
    pub fn arriving(&self, iv: usize) -> Vec<Flit> {
        let (r, l) = (iv / self.npv, iv % self.npv);
        let x = vcr(r, l);
        let mut coming: Vec<(u64, Flit)> =
            self.wheel.entries().flat_map(|(c, s)| s.arrivals.iter().filter(|a| a.0 == x).map(move |a| (c, a.1))).collect();
        coming.sort_by_key(|a| a.0);
        coming.into_iter().map(|a| a.1).collect()
    }

    /// What input VC `iv` is doing.
    pub fn vc_activity(&self, iv: usize) -> VcActivity {
        let c = &self.inputs.vcs[iv];
        if !c.routed() {
            return if c.occ == 0 { VcActivity::Idle } else { VcActivity::Routing };
        }
        let b = self.branches_of(iv);
        if b.pending.difference(b.granted).is_empty() { VcActivity::Active } else { VcActivity::VcAlloc }
    }

    /// The injection VC channel `ch` of router `r` writes its current packet into (where its
    /// last flit went).
    pub fn injection_vc_in_use(&self, r: NodeId, ch: usize) -> usize {
        self.inj_vc[r.idx() * self.nk + ch] as usize
    }
    /// Ejection VCs per channel.
    pub fn ejection_vcs(&self) -> usize {
        self.ejv
    }
    /// The input VC (global index) holding ejection VC `vc` of channel `ch` of router `r`.
    pub fn ejection_owner(&self, r: NodeId, ch: usize, vc: usize) -> Option<usize> {
        let o = self.outputs.ej_owner[(r.idx() * self.nk + ch) * self.ejv + vc];
        (o != FREE).then(|| r.idx() * self.npv + o as usize)
    }
    /// The input VC (global index) holding output VC `vc` of network output port `op`
    /// (global index).
    pub fn output_owner(&self, op: usize, vc: usize) -> Option<usize> {
        let o = self.outputs.ovs[op * self.nv + vc].owner;
        (o != FREE).then(|| op / self.np * self.npv + o as usize)
    }
    /// The output VC of port `op` held by input VC `iv` (both global), if any.
    pub fn output_vc_of(&self, op: usize, iv: usize) -> Option<usize> {
        self.outputs.vc_owned_by(op, self.nv, iv % self.npv).filter(|_| iv / self.npv == op / self.np)
    }
    /// Credits of output VC `vc` of port `op` that the router sees in the next cycle.
    #[inline]
    pub fn credits(&self, op: usize, vc: usize) -> u16 {
        self.outputs.ovs[op * self.nv + vc].credits
    }
    /// Credits of output VC `vc` of port `op` as the router will see them in cycle `t`.
    pub fn credits_at(&self, op: usize, vc: usize, t: u64) -> u16 {
        let x = vcr(op / self.np, op % self.np * self.nv + vc);
        self.credits(op, vc) + self.wheel.credits_due(x, t) as u16
    }
    /// Credits on their way back to output port `op` (counted as they go with probes
    /// attached, [`Routers::set_log`]; otherwise looked up in the wheel).
    pub fn credits_in_flight(&self, op: usize) -> usize {
        match self.in_flight.get(op * self.nv..(op + 1) * self.nv) {
            Some(c) => c.iter().map(|&c| c as usize).sum(),
            None => {
                let lo = vcr(op / self.np, op % self.np * self.nv);
                let hi = lo + self.nv as u32;
                self.wheel.entries().map(|(_, s)| s.credits.iter().filter(|&&x| x >= lo && x < hi).count()).sum()
            }
        }
    }
    /// The latest cycle at which a credit put on a return wire since probes were attached
    /// becomes visible.
    pub fn credit_horizon(&self) -> u64 {
        self.horizon
    }
    /// The input VCs of router `r` that request VC allocation (a bit per local VC): routed,
    /// their RC delay passed, some branch without its output VC or ejection VC.
    pub fn va_requesters(&self, r: NodeId) -> u128 {
        if self.narrow() { self.va_requesters_in::<u64>(r.idx()) } else { self.va_requesters_in::<u128>(r.idx()) }
    }
    fn va_requesters_in<S: Width>(&self, r: usize) -> u128 {
        let w = &S::w(self)[r];
        let mc = if self.has_mc::<S>() { S::m(self)[r].mc_req } else { S::ZERO };
        wide(w.va_req | w.ej_req | mc)
    }

    /// Log a VC allocation for probes.
    #[inline(always)]
    pub(crate) fn log_va(&mut self, r: usize, l: usize, port: usize, vc: usize) {
        if self.log {
            self.allocs.va_grants.push(VaGrant { iv: (r * self.npv + l) as u32, port: port as u8, vc: vc as u8 });
        }
    }
    /// Log switch-allocation requests `req` of router `r` for probes.
    #[inline(always)]
    pub(crate) fn log_sa_req<S: VcBits>(&mut self, r: usize, req: S) {
        if self.log && !req.is_empty() {
            self.allocs.sa_requests.push((r as u32, wide(req)));
        }
    }
    /// Log a switch grant (local VC `l` of router `r`) for probes.
    #[inline(always)]
    pub(crate) fn log_sa_gnt(&mut self, r: usize, l: usize) {
        if self.log {
            self.allocs.sa_grants.push((r * self.npv + l) as u32);
        }
    }

    /// Could router `r`'s state differ from the last cycle: does it hold flits, or have
    /// credits coming back?
    pub fn may_change(&self, r: NodeId) -> bool {
        self.occupancy(r.idx()) > 0 || (0..self.np).any(|o| self.credits_in_flight(r.idx() * self.np + o) > 0)
    }
    /// Does router `r` have work registered for its next stages?
    pub fn has_work(&self, r: NodeId) -> bool {
        let i = r.idx();
        (self.net_work[i >> 6] | self.ej_work[i >> 6]) & (1 << (i & 63)) != 0
    }
    /// Was router `r` visited by a stage this cycle (probes attached: [`Routers::set_log`])?
    pub fn visited(&self, r: NodeId) -> bool {
        let i = r.idx();
        self.visited.get(i >> 6).is_some_and(|w| w & (1 << (i & 63)) != 0)
    }
    /// The next cycle at which the delay lines make anything true (a flit readable, a credit
    /// visible, a VC joining an allocation), if any: after the cycle last begun.
    pub fn next_due(&self) -> Option<u64> {
        self.wheel.next_pending()
    }
    /// Has no stage work for the next cycle: no router in a stage's set, no head to route?
    /// Then nothing changes in the routers until [`Routers::next_due`]. Never under
    /// [`Schedule::All`], which visits every router every cycle (and so stays the reference
    /// that the busy schedule's skipping is tested against).
    pub fn stages_idle(&self) -> bool {
        self.schedule == Schedule::Busy
            && self.rc_next.is_empty()
            && self.net_work.iter().all(|&w| w == 0)
            && self.ej_work.iter().all(|&w| w == 0)
    }
    /// How many cycles in a row in which no flit moves prove, with nothing due in the delay
    /// lines, that none ever will: each such cycle can at most grant VCs whose flits then
    /// wait for credits that are not coming, a VC of each output port a cycle.
    pub fn still_cycles_for_certainty(&self) -> u64 {
        16 + 2 * self.npv as u64
    }
    /// Is there nothing at all in the routers (no flit buffered or on its way)?
    pub fn is_empty(&self) -> bool {
        self.flits == 0
    }

    // ---- Work registers ----

    #[inline(always)]
    pub(crate) fn set_net_work(&mut self, r: usize) {
        self.net_work[r >> 6] |= 1 << (r & 63);
    }
    #[inline(always)]
    pub(crate) fn set_ej_work(&mut self, r: usize) {
        self.ej_work[r >> 6] |= 1 << (r & 63);
    }
    /// Router `r` replicates packets: its multicast registers, allocated at the first one.
    #[inline(always)]
    pub(crate) fn has_mc<S: Width>(&self) -> bool {
        !S::m(self).is_empty()
    }
    /// Router `r`'s replicated packets that may bid in switch allocation.
    #[inline(always)]
    pub(crate) fn mc_bid<S: Width>(&self, r: usize) -> S {
        if self.has_mc::<S>() { S::m(self)[r].mc_bid } else { S::ZERO }
    }
    /// Router `r`'s replicated packets whose LOCAL branch may eject.
    #[inline(always)]
    pub(crate) fn mc_ej<S: Width>(&self, r: usize) -> S {
        if self.has_mc::<S>() { S::m(self)[r].mc_ej } else { S::ZERO }
    }
    /// Allocate the state of replicated packets (at the first one).
    #[cold]
    #[inline(never)]
    pub(crate) fn start_multicast(&mut self) {
        let nvcs = self.inputs.vcs.len();
        if self.inputs.branches.is_empty() {
            self.inputs.branches = vec![Branches::default(); nvcs];
        }
        if self.narrow() {
            if self.m64.is_empty() {
                self.m64 = vec![McWork::default(); self.n];
            }
        } else if self.m128.is_empty() {
            self.m128 = vec![McWork::default(); self.n];
        }
    }
    #[cold]
    #[inline(never)]
    pub(crate) fn start_async(&mut self) {
        if self.inputs.branch_pos.is_empty() {
            self.inputs.branch_pos = vec![0; self.inputs.vcs.len() * (self.nnet + 1)];
            self.inputs.read_at = vec![0; self.inputs.vcs.len()];
        }
    }

    /// Index of branch `o` (a network port, or LOCAL's slot) of input VC `iv` in `branch_pos`.
    #[inline(always)]
    pub(crate) fn branch_slot(&self, iv: usize, local: bool, o: usize) -> usize {
        iv * (self.nnet + 1) + if local { self.nnet } else { o }
    }

    /// Something an allocation of router `r` waits for was freed: the allocations with
    /// requesters must run at their next stage.
    #[inline(always)]
    pub(crate) fn freed<S: Width>(&mut self, r: usize, network: bool) {
        let w = &mut S::w_mut(self)[r];
        if network {
            if !w.va_req.is_empty() {
                w.dirty |= VA_DIRTY;
            }
        } else if !w.ej_req.is_empty() {
            w.dirty |= EJ_DIRTY;
        }
        if self.has_mc::<S>() && !S::m(self)[r].mc_req.is_empty() {
            S::w_mut(self)[r].dirty |= MC_DIRTY;
            self.set_ej_work(r);
        }
    }

    /// Routed input VC `l` of router `r` may now be allocated what it lacks (its `rc_delay`
    /// passed): it joins the requesters of the allocations that give it.
    #[inline]
    pub(crate) fn va_join<S: Width>(&mut self, r: usize, l: usize) {
        let iv = r * self.npv + l;
        let c = self.inputs.vcs[iv];
        if !c.multicast() {
            let w = &mut S::w_mut(self)[r];
            if c.out == crate::input_unit::LOCAL_OUT {
                w.ej_req |= S::bit(l);
                w.dirty |= EJ_DIRTY;
                self.set_ej_work(r);
            } else {
                w.va_req |= S::bit(l);
                w.dirty |= VA_DIRTY;
                self.set_net_work(r);
            }
            return;
        }
        let b = self.inputs.branches[iv];
        if self.waits_atomic(&c, &b) {
            S::m_mut(self)[r].mc_req |= S::bit(l);
            S::w_mut(self)[r].dirty |= MC_DIRTY;
            self.set_ej_work(r);
            return;
        }
        let lacking = b.pending.difference(b.granted);
        let w = &mut S::w_mut(self)[r];
        if !lacking.network().is_empty() {
            w.va_req |= S::bit(l);
            w.dirty |= VA_DIRTY;
        }
        if lacking.contains(PortSet::LOCAL) {
            w.ej_req |= S::bit(l);
            w.dirty |= EJ_DIRTY;
        }
        self.set_net_work(r);
        self.set_ej_work(r);
    }

    /// Does the replicated packet at VC `c` wait for atomic allocation (every branch in one
    /// cycle or none)? Multi-flit packets under [`MulticastVa::Atomic`] until granted.
    #[inline]
    pub(crate) fn waits_atomic(&self, c: &Vc, b: &Branches) -> bool {
        c.pkt_len > 1 && self.params.multicast_va == MulticastVa::Atomic && b.granted.is_empty()
    }

    /// Make input VC `l` of router `r` a bidder (or ejector) in cycle `t` if it is one:
    /// routed, holding its output VC or channel, able, a flit buffered, and a
    /// store-and-forward head at a network input with its whole packet in. A replicated
    /// packet's VC bids for what its branches hold ([`Routers::replica_bids`]); switch
    /// allocation and ejection look at each branch.
    #[inline]
    pub(crate) fn check_bid<S: Width>(&mut self, r: usize, l: usize, t: u64) {
        let c = &self.inputs.vcs[r * self.npv + l];
        if c.multicast() {
            if c.sa_ready <= t && c.len > 0 {
                self.replica_bids::<S>(r, l);
            }
            return;
        }
        if !c.granted() || c.sa_ready > t || c.len == 0 {
            return;
        }
        if c.out == crate::input_unit::LOCAL_OUT {
            S::w_mut(self)[r].ejbid |= S::bit(l);
            self.set_ej_work(r);
            return;
        }
        if !self.may_cross(l, c) {
            return;
        }
        S::w_mut(self)[r].bid |= S::bit(l);
        self.set_net_work(r);
    }

    /// The replicated packet at local VC `l` of router `r` (routed, able, a flit buffered)
    /// bids for the network outputs and the ejection VC its branches hold.
    #[cold]
    #[inline(never)]
    fn replica_bids<S: Width>(&mut self, r: usize, l: usize) {
        let g = self.inputs.branches[r * self.npv + l].granted;
        if !g.network().is_empty() {
            S::m_mut(self)[r].mc_bid |= S::bit(l);
            self.set_net_work(r);
        }
        if g.contains(PortSet::LOCAL) {
            S::m_mut(self)[r].mc_ej |= S::bit(l);
            self.set_ej_work(r);
        }
    }

    /// May the front flit of local VC `l` (state `c`) cross now, as far as its own buffer
    /// goes: not a store-and-forward head at a network input whose tail is not in (the NIC
    /// holds the whole packet already).
    #[inline(always)]
    pub(crate) fn may_cross(&self, l: usize, c: &Vc) -> bool {
        !(self.switching == Switching::StoreAndForward && l < self.net_vcs && c.front.is_head() && c.len < c.pkt_len)
    }

    /// Input VC `l` of router `r` was granted its output VC or channel in cycle `t`: it may
    /// bid from `t + va_delay`.
    #[inline]
    pub(crate) fn granted<S: Width>(&mut self, r: usize, l: usize, t: u64) {
        if self.va_delay == 0 {
            self.check_bid::<S>(r, l, t);
        } else {
            self.wheel.slot(t + self.va_delay).sa_joins.push(vcr(r, l));
        }
    }

    /// Rebuild router `r`'s work registers from its VCs' state in cycle `t`, every allocation
    /// to run ([`Schedule::All`]); an unrouted head at a front is routed.
    fn refresh<S: Width, E: RouterEnv>(&mut self, r: usize, t: u64, env: &E) {
        for l in 0..self.npv {
            let c = self.inputs.vcs[r * self.npv + l];
            if !c.routed() && c.len > 0 {
                self.route_front::<S, E>(r, l, t, env);
            }
        }
        let mut full = 0u64;
        for ch in 0..self.nk {
            let e = (r * self.nk + ch) * self.ejv;
            if self.outputs.ej_owner[e..e + self.ejv].iter().all(|&o| o != FREE) {
                full |= 1 << ch;
            }
        }
        let s1 = &S::w(self)[r];
        let (s1_read, s1_at) = (s1.s1_read, s1.s1_at);
        S::w_mut(self)[r] = Work { ej_full: full, s1_read, s1_at, dirty: VA_DIRTY | EJ_DIRTY | MC_DIRTY, ..Work::default() };
        if self.has_mc::<S>() {
            let m = &mut S::m_mut(self)[r];
            (m.mc_bid, m.mc_ej, m.mc_req) = (S::ZERO, S::ZERO, S::ZERO);
        }
        for l in 0..self.npv {
            let iv = r * self.npv + l;
            let c = self.inputs.vcs[iv];
            if !c.routed() {
                continue;
            }
            let b = self.branches_of(iv);
            if !b.pending.difference(b.granted).is_empty() && c.va_may_start(t) {
                self.va_join::<S>(r, l);
            }
            self.check_bid::<S>(r, l, t);
        }
        self.set_net_work(r);
        self.set_ej_work(r);
    }

    // ---- The cycle ----

    /// Start cycle `t`: everything due by `t` happens (flits become readable, credits
    /// visible, VCs become requesters and bidders), and heads that reached the front in the
    /// previous cycle are routed.
    pub fn begin_cycle<E: RouterEnv>(&mut self, t: u64, env: &E) {
        if self.narrow() { self.begin_cycle_in::<u64, E>(t, env) } else { self.begin_cycle_in::<u128, E>(t, env) }
    }

    fn begin_cycle_in<S: Width, E: RouterEnv>(&mut self, t: u64, env: &E) {
        self.visited.fill(0);
        if t - self.inputs.hist_epoch >= self.inputs.hist_span {
            self.inputs.rebase_hist(t);
        }
        while let Some(c) = self.wheel.next_due(t) {
            let slot = self.wheel.take(c);
            self.take_slot::<S, E>(&slot, c, env);
            self.wheel.put_back(c, slot);
        }
        if !self.rc_next.is_empty() {
            std::mem::swap(&mut self.rc_next, &mut self.rc_now);
            for i in 0..self.rc_now.len() {
                let (r, l) = unvcr(self.rc_now[i]);
                self.route_front::<S, E>(r, l, t, env);
            }
            self.rc_now.clear();
        }
        if self.schedule == Schedule::All {
            for r in self.lo as usize..self.hi as usize {
                self.refresh::<S, E>(r, t, env);
            }
        }
    }

    /// What slot `slot` of cycle `c` holds happens.
    #[inline]
    fn take_slot<S: Width, E: RouterEnv>(&mut self, slot: &Slot, c: u64, env: &E) {
        for &x in &slot.credits {
            let (r, k) = unvcr(x);
            if self.log {
                self.in_flight[r * self.npv + k] -= 1;
            }
            let o = &mut self.outputs.ovs[r * self.npv + k];
            o.credits += 1;
            debug_assert!(o.credits <= self.depth, "output VC {k} of router {r} has more credits than the downstream buffer holds");
        }
        for &(x, flit) in &slot.arrivals {
            let (r, l) = unvcr(x);
            self.arrive::<S, E>(r, l, flit, c, env);
        }
        for &x in &slot.va_joins {
            let (r, l) = unvcr(x);
            self.va_join::<S>(r, l);
        }
        for &x in &slot.sa_joins {
            let (r, l) = unvcr(x);
            self.check_bid::<S>(r, l, c);
        }
    }

    /// A flit becomes readable in input VC `l` of router `r` in cycle `t`.
    #[inline]
    fn arrive<S: Width, E: RouterEnv>(&mut self, r: usize, l: usize, flit: Flit, t: u64, env: &E) {
        if self.inputs.write(r * self.npv + l, flit) {
            self.front_arrived::<S, E>(r, l, t, env);
        } else if self.switching == Switching::StoreAndForward || self.inputs.vcs[r * self.npv + l].multicast() {
            // A store-and-forward head may bid once its whole packet is in; a replicated
            // packet's branches may go on.
            self.check_bid::<S>(r, l, t);
        }
    }

    /// Input VC `l` of router `r` was empty and has a flit at its front in cycle `t`.
    #[inline]
    pub(crate) fn front_arrived<S: Width, E: RouterEnv>(&mut self, r: usize, l: usize, t: u64, env: &E) {
        if !self.inputs.vcs[r * self.npv + l].routed() {
            self.route_front::<S, E>(r, l, t, env);
        } else {
            self.check_bid::<S>(r, l, t);
        }
    }

    /// Does a stage visit just the routers with work, in id order (with no probe to tell)?
    /// Then it walks its set of them itself (a loop over the set's words, the router's
    /// evaluation inlined in it); otherwise [`Routers::visit`].
    #[inline(always)]
    fn busy_in_order(&self) -> bool {
        self.schedule == Schedule::Busy && self.order.is_none() && !self.log
    }

    /// Visit the routers a stage works on: those whose bit is set in `work` (all of them
    /// under [`Schedule::All`]), in id order or the order set, calling `each`; a router
    /// whose work is done leaves the set (`each` returns false).
    #[inline(always)]
    fn visit(&mut self, network: bool, mut each: impl FnMut(&mut Routers, usize) -> bool) {
        if self.log {
            let set = if network { &self.net_work } else { &self.ej_work };
            for (v, w) in self.visited.iter_mut().zip(set) {
                *v |= w;
            }
            if self.schedule == Schedule::All {
                self.visited.fill(!0);
            }
        }
        let mut list = std::mem::take(&mut self.visit);
        list.clear();
        let all = self.schedule == Schedule::All;
        let set = if network { &self.net_work } else { &self.ej_work };
        let wanted = |r: usize| all || set[r >> 6] & (1 << (r & 63)) != 0;
        match &self.order {
            Some(perm) => list.extend(perm.iter().copied().filter(|&r| (self.lo..self.hi).contains(&r) && wanted(r as usize))),
            None => list.extend((self.lo..self.hi).filter(|&r| wanted(r as usize))),
        }
        for &r in &list {
            let r = r as usize;
            if !each(self, r) {
                let set = if network { &mut self.net_work } else { &mut self.ej_work };
                set[r >> 6] &= !(1 << (r & 63));
            }
        }
        self.visit = list;
    }

    /// Stage 1 of cycle `t` in every router with work there: ejection-VC allocation and
    /// ejection. Ejected flits are appended to `ejected` with their router.
    pub fn eject_stage(&mut self, t: u64, ejected: &mut Vec<(NodeId, Ejection)>) {
        if self.narrow() { self.eject_stage_in::<u64>(t, ejected) } else { self.eject_stage_in::<u128>(t, ejected) }
    }

    fn eject_stage_in<S: Width>(&mut self, t: u64, ejected: &mut Vec<(NodeId, Ejection)>) {
        let mut filing = self.open_filing(t);
        if self.busy_in_order() {
            for wi in 0..self.ej_work.len() {
                let mut m = self.ej_work[wi];
                while m != 0 {
                    let r = wi * 64 + m.trailing_zeros() as usize;
                    m &= m - 1;
                    if !self.eject_router::<S>(r, t, ejected, &mut filing.credits) {
                        self.ej_work[wi] &= !(1 << (r & 63));
                    }
                }
            }
        } else {
            self.visit(false, |rs, r| rs.eject_router::<S>(r, t, ejected, &mut filing.credits));
        }
        self.close_filing(t, filing);
    }

    /// Stage 1 in router `r`: atomic multicast allocation, ejection-VC allocation (each only
    /// when it can grant), then ejection. True while it has work there.
    #[inline(always)]
    fn eject_router<S: Width>(&mut self, r: usize, t: u64, ejected: &mut Vec<(NodeId, Ejection)>, credits: &mut Vec<u32>) -> bool {
        self.eject_router_once::<S>(r, t, ejected, credits);
        let w = &S::w(self)[r];
        !(w.ejbid.is_empty() && w.dirty & (EJ_DIRTY | MC_DIRTY) == 0 && self.mc_ej::<S>(r).is_empty())
    }

    /// [`Routers::eject_router`]'s work.
    #[inline(always)]
    fn eject_router_once<S: Width>(&mut self, r: usize, t: u64, ejected: &mut Vec<(NodeId, Ejection)>, credits: &mut Vec<u32>) {
        let dirty = S::w(self)[r].dirty;
        if dirty & (EJ_DIRTY | MC_DIRTY) != 0 {
            S::w_mut(self)[r].dirty &= !(EJ_DIRTY | MC_DIRTY);
            if dirty & MC_DIRTY != 0 && self.has_mc::<S>() {
                let want = S::m(self)[r].mc_req;
                if !want.is_empty() {
                    self.allocate_multicast::<S>(r, t, want);
                }
            }
            if !S::w(self)[r].ej_req.is_empty() && !S::w(self)[r].ej_full & self.all_channels != 0 {
                self.allocate_ejection::<S>(r, t);
            }
        }
        if S::w(self)[r].ejbid.is_empty() && self.mc_ej::<S>(r).is_empty() {
            return;
        }
        self.clear_scratch::<S>();
        self.eject::<S>(r, t, ejected, credits);
        let read = S::load(self.scratch.read);
        if !read.is_empty() {
            let w = &mut S::w_mut(self)[r];
            (w.s1_read, w.s1_at) = (read, t);
            if self.has_mc::<S>() {
                S::m_mut(self)[r].s1_popped = S::load(self.scratch.popped);
            }
        }
    }

    /// The injection VC of channel `ch` of router `r` the NIC writes `flit` into now, if one
    /// has room: a head starts its packet in a VC chosen by [`InjectionVc`]
    /// (crate::InjectionVc), the flits behind it follow into the same VC.
    #[inline]
    fn injection_vc(&self, r: usize, ch: usize, flit: Flit) -> Option<usize> {
        let (base, cur) = (r * self.npv + (self.nnet + ch) * self.nv, self.inj_vc[r * self.nk + ch] as usize);
        let room = |vc: usize| self.inputs.vcs[base + vc].occ < self.inj_depth;
        if !flit.is_head() || self.params.injection == crate::params::InjectionVc::Vc0 {
            return room(cur).then_some(cur);
        }
        (1..=self.nv).map(|k| (cur + k) % self.nv).find(|&vc| room(vc))
    }

    /// The NIC writes a flit into injection channel `ch` of router `r` in cycle `t`,
    /// readable from `t + inject_latency`. False when no VC it may go into has room. Heads
    /// written with no latency are routed by [`Routers::after_injection`].
    pub fn inject(&mut self, r: NodeId, ch: usize, flit: Flit, t: u64) -> bool {
        let Some(vc) = self.injection_vc(r.idx(), ch, flit) else {
            return false;
        };
        self.inj_vc[r.idx() * self.nk + ch] = vc as u8;
        let l = (self.nnet + ch) * self.nv + vc;
        let iv = r.idx() * self.npv + l;
        self.count_in(iv, t);
        if self.inject_latency == 0 {
            if self.inputs.write(iv, flit) {
                self.inj_front.push(vcr(r.idx(), l));
            } else if self.inputs.vcs[iv].multicast() {
                self.set_net_work(r.idx());
                self.set_ej_work(r.idx());
            }
        } else {
            let at = t + self.inject_latency;
            self.wheel.slot(at).arrivals.push((vcr(r.idx(), l), flit));
        }
        true
    }

    /// After the NICs' injections of cycle `t`: route computation for heads that reached the
    /// front of their injection VC (stage 2's route computation), and atomic allocation for
    /// the replicated packets among them that may take their branches at once.
    pub fn after_injection<E: RouterEnv>(&mut self, t: u64, env: &E) {
        if self.narrow() { self.after_injection_in::<u64, E>(t, env) } else { self.after_injection_in::<u128, E>(t, env) }
    }

    fn after_injection_in<S: Width, E: RouterEnv>(&mut self, t: u64, env: &E) {
        for i in 0..self.inj_front.len() {
            let (r, l) = unvcr(self.inj_front[i]);
            self.front_arrived::<S, E>(r, l, t, env);
            // A replicated packet that may take its branches at once tries in this stage.
            let iv = r * self.npv + l;
            let c = self.inputs.vcs[iv];
            if c.multicast() && self.waits_atomic(&c, &self.inputs.branches[iv]) && c.va_may_start(t) {
                let m = &mut S::m_mut(self)[r];
                if m.new_at != t {
                    (m.new_at, m.mc_new) = (t, S::ZERO);
                }
                m.mc_new |= S::bit(l);
                self.set_net_work(r);
            }
        }
        self.inj_front.clear();
    }

    /// Stage 2 of cycle `t` in every router with work there: VC allocation, and switch
    /// allocation with crossbar traversal (flits onto their links, credits for the slots
    /// they free back upstream).
    pub fn network_stage(&mut self, t: u64) {
        if self.narrow() { self.network_stage_in::<u64>(t) } else { self.network_stage_in::<u128>(t) }
    }

    fn network_stage_in<S: Width>(&mut self, t: u64) {
        let mut filing = self.open_filing(t);
        let sent_from = filing.arrivals.len();
        if self.busy_in_order() {
            for wi in 0..self.net_work.len() {
                let mut m = self.net_work[wi];
                while m != 0 {
                    let r = wi * 64 + m.trailing_zeros() as usize;
                    m &= m - 1;
                    if !self.network_router::<S>(r, t, &mut filing) {
                        self.net_work[wi] &= !(1 << (r & 63));
                    }
                }
            }
        } else {
            self.visit(true, |rs, r| rs.network_router::<S>(r, t, &mut filing));
        }
        // The flits sent this cycle are counted in their downstream buffers once every router
        // has popped its own (a slot's occupancy goes down before it goes up within a cycle).
        for i in sent_from..filing.arrivals.len() {
            let (r, l) = unvcr(filing.arrivals[i].0);
            self.count_in(r * self.npv + l, t);
        }
        self.close_filing(t, filing);
    }

    /// Stage 2 in router `r`. True while it has work there.
    #[inline(always)]
    fn network_router<S: Width>(&mut self, r: usize, t: u64, filing: &mut Filing) -> bool {
        if self.has_mc::<S>() {
            let m = S::m(self)[r];
            if m.new_at == t && !m.mc_new.is_empty() {
                S::m_mut(self)[r].mc_new = S::ZERO;
                self.allocate_multicast::<S>(r, t, m.mc_new);
            }
        }
        if S::w(self)[r].dirty & VA_DIRTY != 0 {
            S::w_mut(self)[r].dirty &= !VA_DIRTY;
            if !S::w(self)[r].va_req.is_empty() {
                self.allocate_network_vcs::<S>(r, t);
            }
        }
        let mc_bid = self.mc_bid::<S>(r);
        if !(S::w(self)[r].bid | mc_bid).is_empty() {
            self.allocate_switch::<S>(r, t, mc_bid, filing);
        }
        let w = &S::w(self)[r];
        !(w.bid.is_empty() && w.dirty & VA_DIRTY == 0 && self.mc_bid::<S>(r).is_empty())
    }

    /// The end of cycle `t`: with probes attached ([`Routers::set_log`]), credits due in
    /// `t + 1` become visible now (what the routers will see then, and what a probe reads);
    /// otherwise at the start of the next cycle stepped.
    pub fn end_cycle(&mut self, t: u64) {
        if !self.log {
            return;
        }
        let at = t + 1;
        if self.wheel.has_far() {
            self.wheel.pull_far(at);
        }
        let slot = self.wheel.slot(at);
        if slot.credits.is_empty() {
            return;
        }
        let credits = std::mem::take(&mut slot.credits);
        for &x in &credits {
            let (r, k) = unvcr(x);
            if self.log {
                self.in_flight[r * self.npv + k] -= 1;
            }
            self.outputs.ovs[r * self.npv + k].credits += 1;
        }
        let mut credits = credits;
        credits.clear();
        self.wheel.slot(at).credits = credits;
    }

    /// Take the delay-line slots a stage of cycle `t` files into for its duration.
    #[inline]
    fn open_filing(&mut self, t: u64) -> Filing {
        let a = t + self.link_latency;
        let c = t + 1 + self.credit_delay;
        let arrivals = if a - self.wheel.done <= self.wheel.mask { std::mem::take(&mut self.wheel.slot(a).arrivals) } else { Vec::new() };
        let credits = if c - self.wheel.done <= self.wheel.mask { std::mem::take(&mut self.wheel.slot(c).credits) } else { Vec::new() };
        Filing { arrivals, credits }
    }

    #[inline]
    fn close_filing(&mut self, t: u64, f: Filing) {
        let a = t + self.link_latency;
        let c = t + 1 + self.credit_delay;
        if a - self.wheel.done <= self.wheel.mask {
            self.wheel.slot(a).arrivals = f.arrivals;
        } else {
            self.wheel.slot(a).arrivals.extend(f.arrivals);
        }
        if c - self.wheel.done <= self.wheel.mask {
            self.wheel.slot(c).credits = f.credits;
        } else {
            self.wheel.slot(c).credits.extend(f.credits);
        }
    }

    /// Clear what the crossbar has read (a new router's stage).
    #[inline(always)]
    pub(crate) fn clear_scratch<S: Width>(&mut self) {
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
    }

    /// Stage 2 starts where stage 1 left router `r`'s crossbar in cycle `t`: what ejection
    /// read counts against the input ports' reads.
    #[inline(always)]
    pub(crate) fn scratch_from_stage1<S: Width>(&mut self, r: usize, t: u64) {
        self.clear_scratch::<S>();
        let w = S::w(self)[r];
        if w.s1_at != t || w.s1_read.is_empty() {
            return;
        }
        let popped = if self.has_mc::<S>() { S::m(self)[r].s1_popped } else { S::ZERO };
        for l in members(w.s1_read) {
            self.take_read::<S>(l);
        }
        popped.store_into(&mut self.scratch.popped);
    }

    // ---- Statistics and the flit count ----

    /// A flit sent towards input VC `iv` in cycle `t` (counted from `t + 1`).
    #[inline(always)]
    pub(crate) fn count_in(&mut self, iv: usize, t: u64) {
        self.inputs.count_in(iv, t);
        self.flits += 1;
    }

    // ---- For tests of one router driven by hand ----

    /// A flit sent in cycle `sent` into input VC `iv` (global index), readable from `ready`
    /// (later than the last cycle begun). The VC must have room.
    #[doc(hidden)]
    pub fn arrive_by_hand(&mut self, iv: usize, flit: Flit, sent: u64, ready: u64) {
        self.count_in(iv, sent);
        let (r, l) = (iv / self.npv, iv % self.npv);
        self.wheel.slot(ready).arrivals.push((vcr(r, l), flit));
    }

    /// A credit for output VC `vc` of output port `op` (global index), visible from cycle
    /// `at` (later than the last cycle begun).
    #[doc(hidden)]
    pub fn credit_by_hand(&mut self, op: usize, vc: usize, at: u64) {
        let x = vcr(op / self.np, op % self.np * self.nv + vc);
        self.credit_sent(x, at);
        self.wheel.slot(at).credits.push(x);
    }

    /// Set the credits of output VC `vc` of output port `op`.
    #[doc(hidden)]
    pub fn set_credits_by_hand(&mut self, op: usize, vc: usize, credits: u16) {
        self.outputs.ovs[op * self.nv + vc].credits = credits;
    }

    // ---- A fabric split between threads ----

    /// Is router [`vcr`] `x`'s another part's?
    #[inline(always)]
    pub(crate) fn remote(&self, x: u32) -> bool {
        let r = x >> 7;
        r < self.lo || r >= self.hi
    }

    /// Per input VC fed from another part: a flit left it in cycle `t`.
    #[inline(always)]
    pub(crate) fn popped_remote(&mut self, iv: usize, t: u64) {
        self.popped_at[iv] = t;
    }

    /// A flit another part sent in cycle `sent` into input VC `l` of this part's router `r`
    /// (its packet id already this part's), taken in after this part's cycle `now` (`sent`,
    /// or `sent + 1` when the parts meet every other cycle: the flit cannot be read before
    /// `sent + 2`, and the statistics are made those of a write in time).
    pub fn receive_flit(&mut self, r: usize, l: usize, flit: Flit, sent: u64, now: u64) {
        let iv = r * self.npv + l;
        if sent == now {
            self.count_in(iv, sent);
        } else {
            debug_assert!(sent + 1 == now && self.link_latency >= 2, "a flit of cycle {sent} taken in after cycle {now}");
            self.inputs.count_up_late(iv, sent + 1, self.popped_at[iv] == now);
            self.flits += 1;
        }
        let at = sent + self.link_latency;
        self.wheel.slot(at).arrivals.push((vcr(r, l), flit));
    }

    /// A credit for output VC `k` (`port * vcs + vc`) of this part's router `r`, for a slot
    /// another part freed in cycle `freed`.
    pub fn receive_credit(&mut self, r: usize, k: usize, freed: u64) {
        let at = freed + 1 + self.credit_delay;
        self.credit_sent(vcr(r, k), at);
        self.wheel.slot(at).credits.push(vcr(r, k));
    }

    /// Take routers `routers` (all their state, flits and credits on their way included)
    /// from `theirs`, a copy of this fabric's routers that ran them while these did not (the
    /// parts of a fabric split between threads, joined after the run).
    pub fn copy_routers_from(&mut self, theirs: &mut Routers, routers: std::ops::Range<usize>) {
        let (npv, np) = (self.npv, self.np);
        let epoch = self.inputs.hist_epoch.max(theirs.inputs.hist_epoch);
        for x in [&mut self.inputs, &mut theirs.inputs] {
            if x.hist_epoch != epoch {
                x.rebase_hist(epoch);
            }
        }
        self.inputs.copy_vcs_from(&theirs.inputs, routers.start * npv..routers.end * npv);
        self.outputs.copy_ports_from(
            &theirs.outputs,
            routers.start * np..routers.end * np,
            self.nv,
            routers.start * self.nk..routers.end * self.nk,
        );
        let inj = routers.start * self.nk..routers.end * self.nk;
        self.inj_vc[inj.clone()].copy_from_slice(&theirs.inj_vc[inj]);
        self.mc_arb[routers.clone()].copy_from_slice(&theirs.mc_arb[routers.clone()]);
        for op in routers.start * np..routers.end * np {
            self.sent[op] = theirs.sent[op];
        }
        let own = (routers.start as u32)..(routers.end as u32);
        self.wheel.join(&theirs.wheel, |x| own.contains(&(x >> 7)));
        self.flits = self.inputs.vcs.iter().map(|c| c.occ as u64).sum();
        if self.narrow() {
            self.w64[routers.clone()].copy_from_slice(&theirs.w64[routers.clone()]);
            if !theirs.m64.is_empty() {
                self.start_multicast();
                self.m64[routers.clone()].copy_from_slice(&theirs.m64[routers.clone()]);
            }
        } else {
            self.w128[routers.clone()].copy_from_slice(&theirs.w128[routers.clone()]);
            if !theirs.m128.is_empty() {
                self.start_multicast();
                self.m128[routers.clone()].copy_from_slice(&theirs.m128[routers.clone()]);
            }
        }
        for r in routers {
            if theirs.has_work(NodeId(r as u32)) {
                self.set_net_work(r);
                self.set_ej_work(r);
            }
        }
        self.hops += theirs.hops;
        self.tails += theirs.tails;
    }
}

const _: () = assert!(std::mem::size_of::<Work<u64>>() == 64, "a router's work registers in one cache line");
