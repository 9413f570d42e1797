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
//! Where nothing can tell (no probes), the fabric moves work from one stage to a neighbouring
//! one when that reads a cache line once instead of twice: `after_injection` for each NIC's
//! heads right after its injection, and over links of one cycle the flits' arrival of
//! `begin_cycle(t + 1)` at the end of `network_stage(t)` ([`Routers::network_stage_arriving`]).
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
//!
//! The methods of [`Routers`] are spread over files by subject: this one holds the state, its
//! constructor and configuration, and the shape of a router; `stages.rs` the cycle's stages
//! and which routers they visit ([`Schedule`]); `work.rs` the work registers the busy
//! schedule keeps and the events that keep them; `views.rs` what probes, statistics and
//! deadlock reports read (and the allocators' log for probes); `split.rs` a fabric split
//! between threads.

use crate::arbiter::Arbiter;
use crate::flat::Flat;
use crate::flit::Flit;
use crate::ids::{NONE, NodeId};
use crate::input_unit::{Branches, InputUnits};
use crate::output_unit::OutputUnits;
use crate::params::{RouterParams, Switching};
use crate::prefetch::PREFETCH_FROM;
use crate::vc_set::{EMPTY, MAX_ROUTER_VCS, VcSet};
use crate::wheel::{Wheel, vcr};
use crate::work::{McWork, Work};

pub use crate::views::{AllocLog, VaGrant, VcActivity, VcView};

/// The most ports (links plus NIC channels) one router may have: port sets are 64 bits wide.
pub const MAX_PORTS: usize = 64;

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

/// The routers of a fabric, all with the same parameters, state in flat vectors.
#[derive(Clone, Debug)]
pub struct Routers {
    pub params: RouterParams,
    pub(crate) n: usize,
    pub(crate) inputs: InputUnits,
    pub(crate) outputs: OutputUnits,
    /// Per router, the arbiter of atomic multicast allocation.
    pub(crate) mc_arb: Flat<Arbiter>,
    pub(crate) w64: Flat<Work<u64>>,
    pub(crate) w128: Flat<Work<u128>>,
    pub(crate) m64: Flat<McWork<u64>>,
    pub(crate) m128: Flat<McWork<u128>>,
    /// Routers whose stage 2 (VC allocation, switch allocation) / stage 1 (ejection-VC
    /// allocation, ejection) has work: bit `r`.
    pub(crate) net_work: Flat<u64>,
    pub(crate) ej_work: Flat<u64>,
    pub(crate) schedule: Schedule,
    /// A permutation of the routers to visit them in (tests of order independence).
    pub(crate) order: Option<Vec<u32>>,
    pub(crate) visit: Vec<u32>,
    pub(crate) wheel: Wheel,
    /// Idle VCs whose next head reached the front by a tail leaving in the previous cycle:
    /// routed at the start of this one.
    pub(crate) rc_next: Vec<u32>,
    pub(crate) rc_now: Vec<u32>,
    /// Injection VCs written this cycle with no injection latency whose front changed.
    pub(crate) inj_front: Vec<u32>,
    /// Per output port: the [`vcr`] of VC 0 of the input port it feeds (`NONE` if none).
    /// Per input port: the [`vcr`] of VC 0 of the output port feeding it (`NONE` if none).
    /// Either with [`REMOTE`](crate::split::REMOTE) added where that router is another
    /// part's or external, so that sending a flit or a credit tests a bit of what it reads.
    pub(crate) down: Flat<u32>,
    pub(crate) up: Flat<u32>,
    /// Flits sent on each output port; flits over router-to-router links, and those that were
    /// tails (packets over links).
    pub(crate) sent: Flat<u64>,
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
    /// External routers ([`Routers::set_external`]): bit `r` (empty: none).
    pub(crate) external: Vec<u64>,
    /// Per input VC fed from another part: the last cycle a flit left it.
    pub(crate) popped_at: Flat<u64>,
    /// Flits buffered or on their way into a buffer.
    pub flits: u64,
    /// Departures logged for probes (when `log` is set), this cycle's.
    pub departures: Vec<Departure>,
    /// Allocations logged for probes (when `log` is set), this cycle's.
    pub allocs: AllocLog,
    pub(crate) log: bool,
    /// For probes (when `log` is set): credits on their way back per output VC, and the
    /// latest cycle one becomes visible.
    pub(crate) in_flight: Flat<u16>,
    pub(crate) horizon: u64,
    /// For probes: the routers a stage visited this cycle (bit `r`).
    pub(crate) visited: Vec<u64>,
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
    /// The ports no route may name: beyond the network ports, LOCAL aside.
    pub(crate) no_port: u64,
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
    pub(crate) inj_vc: Flat<u8>,
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
    /// The stages' loops prefetch the state of the work a few items ahead
    /// ([`crate::prefetch`]): more routers than [`PREFETCH_FROM`].
    pub(crate) prefetch: bool,
}

impl Routers {
    pub fn new(params: RouterParams, n: usize) -> Routers {
        let p = params.ports();
        let v = params.vcs as usize;
        let npv = p * v;
        assert!(npv <= MAX_ROUTER_VCS, "a router has {npv} input VCs, at most {MAX_ROUTER_VCS}");
        assert!(p <= MAX_PORTS, "a router has {p} ports, at most {MAX_PORTS}");
        assert!(n < 1 << 24, "{n} routers: at most 2^24");
        assert!(
            (1..=16).contains(&v) && (1..=16).contains(&params.ejection_vcs) && params.buffer_flits >= 1 && params.inject_buffer_flits >= 1,
            "1 to 16 VCs a port and an ejection channel, buffers of at least one flit: {params:?}"
        );
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
            mc_arb: vec![Arbiter::default(); n].into(),
            w64: if narrow { vec![Work::default(); n].into() } else { Flat::new() },
            w128: if narrow { Flat::new() } else { vec![Work::default(); n].into() },
            m64: Flat::new(),
            m128: Flat::new(),
            net_work: vec![0; n.div_ceil(64)].into(),
            ej_work: vec![0; n.div_ceil(64)].into(),
            schedule: Schedule::Busy,
            order: None,
            visit: Vec::new(),
            wheel: Wheel::new(longest as u64),
            rc_next: Vec::new(),
            rc_now: Vec::new(),
            inj_front: Vec::new(),
            down: vec![NONE; n * p].into(),
            up: vec![NONE; n * p].into(),
            sent: vec![0; n * p].into(),
            hops: 0,
            tails: 0,
            lo: 0,
            hi: n as u32,
            remote_flits: Vec::new(),
            remote_credits: Vec::new(),
            external: Vec::new(),
            popped_at: Flat::new(),
            flits: 0,
            departures: Vec::new(),
            allocs: AllocLog::default(),
            log: false,
            in_flight: Flat::new(),
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
            no_port: !crate::port_set::PortSet::LOCAL.bits() & !1u64.checked_shl(params.net_ports as u32).map_or(!0, |b| b - 1),
            nk: k,
            net_vcs: params.net_ports as usize * v,
            depth: params.buffer_flits,
            inj_depth: params.inject_buffer_flits,
            all_channels: if k >= 64 { !0 } else { (1u64 << k) - 1 },
            ejv: params.ejection_vcs as usize,
            inj_vc: vec![0; n * k].into(),
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
            prefetch: n > PREFETCH_FROM,
        }
    }

    /// Wire the routers: `down` gives the input port (global index) each output port feeds,
    /// `up` the output port feeding each input port (`NONE` where unconnected).
    pub fn connect(&mut self, down: &[u32], up: &[u32]) {
        let (p, v) = (self.np as u32, self.nv);
        let ports = self.sent.len();
        assert!(down.len() == ports && up.len() == ports, "wiring of {} and {} ports for {ports}", down.len(), up.len());
        if let Some(x) = down.iter().chain(up).find(|&&x| x != NONE && x as usize >= ports) {
            panic!("wiring names port {x} of {ports}");
        }
        let named = |x: u32| if x == NONE { NONE } else { vcr((x / p) as usize, (x % p) as usize * v) };
        self.down = down.iter().map(|&x| named(x)).collect();
        self.up = up.iter().map(|&x| named(x)).collect();
        self.mark_remote();
    }

    /// Log what probes read (departures, credits on their way) from now on, or stop. Turned
    /// on before the first cycle.
    pub fn set_log(&mut self, on: bool) {
        if on && self.in_flight.is_empty() {
            debug_assert!(self.wheel.entries().all(|(_, s)| s.credits.is_empty()), "probes attached with credits on their way");
            self.in_flight = vec![0; self.outputs.ovs.len()].into();
            self.visited = vec![0; self.n.div_ceil(64)];
        }
        self.log = on;
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
    /// Routers in the fabric.
    #[inline(always)]
    pub fn count(&self) -> usize {
        self.n
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

    // ---- The ids the public entry points take ----
    //
    // Each entry point checks the ids it is given before anything indexes the state
    // vectors with them, which release builds do without a bounds check (`flat.rs`).

    #[inline(always)]
    #[track_caller]
    pub(crate) fn check_router(&self, r: usize) {
        assert!(r < self.n, "router {r} out of range: {} routers", self.n);
    }
    /// Router `r` and its local index `l` (`port * vcs + vc`) of an input or output VC,
    /// named `what` in the message.
    #[inline(always)]
    #[track_caller]
    pub(crate) fn check_local(&self, r: usize, l: usize, what: &str) {
        self.check_router(r);
        if l >= self.npv {
            local_out_of_range(what, l, self.npv);
        }
    }
    #[inline(always)]
    #[track_caller]
    pub(crate) fn check_ivc(&self, iv: usize) {
        assert!(iv < self.inputs.vcs.len(), "input VC {iv} out of range: {} input VCs", self.inputs.vcs.len());
    }
    #[inline(always)]
    #[track_caller]
    pub(crate) fn check_ovc(&self, op: usize, vc: usize) {
        assert!(
            op < self.sent.len() && vc < self.nv,
            "output port {op} VC {vc} out of range: {} ports of {} VCs",
            self.sent.len(),
            self.nv
        );
    }
    #[inline(always)]
    #[track_caller]
    pub(crate) fn check_net_port(&self, o: usize) {
        assert!(o < self.nnet, "network port {o} out of range: {}", self.nnet);
    }
    #[inline(always)]
    #[track_caller]
    pub(crate) fn check_channel(&self, r: usize, ch: usize) {
        assert!(r < self.n && ch < self.nk, "router {r} NIC channel {ch} out of range: {} routers of {} channels", self.n, self.nk);
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
        self.check_ivc(iv);
        self.count_in(iv, sent);
        let (r, l) = (iv / self.npv, iv % self.npv);
        self.wheel.slot(ready).arrivals.push((vcr(r, l), flit));
    }

    /// A credit for output VC `vc` of output port `op` (global index), visible from cycle
    /// `at` (later than the last cycle begun).
    #[doc(hidden)]
    pub fn credit_by_hand(&mut self, op: usize, vc: usize, at: u64) {
        self.check_ovc(op, vc);
        let x = vcr(op / self.np, op % self.np * self.nv + vc);
        self.post_credit(x, at);
    }

    /// Allocate the state of replicated packets, as the first one routed does (which takes
    /// the general VC allocation in routers of one VC a port).
    #[doc(hidden)]
    pub fn start_multicast_by_hand(&mut self) {
        self.start_multicast();
    }

    /// Set the credits of output VC `vc` of output port `op`.
    #[doc(hidden)]
    pub fn set_credits_by_hand(&mut self, op: usize, vc: usize, credits: u16) {
        self.check_ovc(op, vc);
        self.outputs.ovs[op * self.nv + vc].credits = credits;
    }
}

/// The panic of [`Routers::check_local`], out of the line of its callers' hot paths.
#[cold]
#[inline(never)]
#[track_caller]
fn local_out_of_range(what: &str, l: usize, npv: usize) -> ! {
    panic!("{what} {l} out of range: {npv} a router");
}
