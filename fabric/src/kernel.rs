//! The simulation kernel: the cycle loop over the fabric's routers, links and NICs.
//!
//! Each cycle:
//!
//! ```text
//!  timers due ──► phase A, for every active router (any order):
//!                   stage_eject ─► NIC reassembly ─► node program ─► NIC injection ─► stage_network
//!             ──► phase B (commit): departures into downstream buffers, credits onto return lines
//!             ──► probe ──► retire idle routers; watchdog
//! ```
//!
//! Phase A reads only state as it was at the end of the previous cycle (plus the node's
//! own same-cycle NIC activity) and writes only its own router's state and the outbox, so the
//! order routers are visited in never changes a result. Routers with nothing buffered and
//! nothing to inject are not visited; stretches in which nothing can happen are skipped.
//! [`split`] runs the same cycle on several threads, each owning a range of routers.

pub mod event;
mod placement;
pub mod split;
mod timers;

use crate::measure::Measurement;
use crate::nic::Nics;
use crate::packet::{Packet, PacketTable};
use crate::probe::{CycleView, Probe};
use crate::program::{Dest, NodeCtx, NodeOut, Program, Received};
use crate::scoreboard::Scoreboard;
use crate::spec::FabricSpec;
use crate::topology::Topology;
use arbitrary_int::prelude::*;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use router::{
    Ejection, Flit, Header, NONE, NodeId, Outbox, PacketId, PacketMeta, PortId, PortSet, RouteDecision, RouteKind, RouterEnv, Routers,
    Switching, VcBits,
};
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use timers::Timers;

/// Always-on counters.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Counters {
    /// Flits that crossed a router-to-router link.
    pub flit_hops: u64,
    /// Packets that crossed a router-to-router link (counted at their tail flit).
    pub link_transmissions: u64,
    pub flits_injected: u64,
    pub flits_ejected: u64,
    pub packets_sent: u64,
    pub packets_delivered: u64,
    /// Cycle of the last delivery.
    pub last_delivery: u64,
}

/// Packet latencies (delivery cycle minus birth), exact, in a histogram: one counter per
/// latency below [`Latencies::DENSE`] cycles, and above it only the latencies that occurred
/// (a packet that waited a billion cycles for its start-up cost must not cost gigabytes).
#[derive(Clone, Debug, Default)]
pub struct Latencies {
    pub hist: Vec<u64>,
    pub far: BTreeMap<u64, u64>,
    pub count: u64,
    pub sum: u128,
}

impl Counters {
    /// Fold in another part's counters (of a fabric split between threads).
    pub fn join(&mut self, o: &Counters) {
        self.flit_hops += o.flit_hops;
        self.link_transmissions += o.link_transmissions;
        self.flits_injected += o.flits_injected;
        self.flits_ejected += o.flits_ejected;
        self.packets_sent += o.packets_sent;
        self.packets_delivered += o.packets_delivered;
        self.last_delivery = self.last_delivery.max(o.last_delivery);
    }
}

impl Latencies {
    /// Fold in another part's latencies.
    pub fn join(&mut self, o: &Latencies) {
        if o.hist.len() > self.hist.len() {
            self.hist.resize(o.hist.len(), 0);
        }
        for (a, b) in self.hist.iter_mut().zip(&o.hist) {
            *a += b;
        }
        for (&l, &c) in &o.far {
            *self.far.entry(l).or_default() += c;
        }
        self.count += o.count;
        self.sum += o.sum;
    }

    /// Latencies below this many cycles have a counter each.
    pub const DENSE: u64 = 1 << 16;

    pub(crate) fn record(&mut self, l: u64) {
        if l < Self::DENSE {
            let i = l as usize;
            if i >= self.hist.len() {
                self.hist.resize((i + 1).next_power_of_two(), 0);
            }
            self.hist[i] += 1;
        } else {
            *self.far.entry(l).or_default() += 1;
        }
        self.count += 1;
        self.sum += l as u128;
    }
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum as f64 / self.count as f64)
    }
    /// The smallest latency at or below which a fraction `q` of packets fall.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        let target = ((q * self.count as f64).ceil() as u64).max(1);
        let mut acc = 0;
        let dense = self.hist.iter().enumerate().map(|(l, &c)| (l as u64, c));
        for (l, c) in dense.chain(self.far.iter().map(|(&l, &c)| (l, c))) {
            acc += c;
            if acc >= target {
                return Some(l);
            }
        }
        None
    }
    pub fn max(&self) -> Option<u64> {
        self.far.keys().next_back().copied().or_else(|| self.hist.iter().rposition(|&c| c > 0).map(|l| l as u64))
    }
}

/// A deadlock found by the watchdog.
#[derive(Clone, Debug, Serialize)]
pub struct Deadlock {
    /// Cycle the watchdog fired.
    pub cycle: u64,
    /// Last cycle any flit moved.
    pub last_move: u64,
    pub flits_stuck: u64,
    /// Input VCs waiting on each other in a cycle (`n<node>.in<port>.vc<vc>`, each waiting on the next).
    pub wait_for_cycle: Vec<String>,
    /// Input VCs holding flits that cannot move.
    pub blocked_vcs: usize,
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ending {
    /// Nothing left to do.
    Quiescent,
    /// The watchdog found a deadlock.
    Deadlock,
    /// `max_cycles` reached with work left.
    CycleLimit,
}

const WAKE: u8 = 0;
const PROGRAM_TIMER: u8 = 1;

/// The route computation the routers see: the topology's routing functions applied to the
/// packet table's headers, with dateline VC classes.
struct Env<'a> {
    topo: &'a Topology,
    packets: &'a PacketTable,
    class_mask: [u16; 2],
}

impl RouterEnv for Env<'_> {
    #[inline]
    fn route(&self, at: NodeId, in_port: PortId, packet: PacketId) -> (RouteDecision, PacketMeta) {
        let p = self.packets.get(packet);
        let hop = match p.header.kind {
            RouteKind::Unicast => self.topo.route_unicast(at, p.src(), p.dest()),
            RouteKind::Broadcast => self.topo.route_broadcast(at, in_port, p.dest(), p.header.span),
        };
        (
            RouteDecision { ports: hop.ports, vc_mask: self.class_mask[hop.class as usize] },
            PacketMeta { len: p.flits(), key: p.key(), birth: p.birth },
        )
    }
}

/// An output port's link as the commit phase sees it (16 bytes, four to a cache line).
#[derive(Clone, Copy, Debug)]
struct OutLink {
    /// Downstream router, and the local index of VC 0 of its input port.
    router: u32,
    vc0: u32,
    /// Flits sent.
    flits: u64,
}

/// Who watches a run ([`Fabric::run_watched`]), and when it is next called.
pub(crate) struct Watch<W> {
    watch: Option<(Duration, W)>,
    next: Option<Instant>,
    steps: u32,
    gap: u32,
    checked: Instant,
}

impl<W: FnMut(&Fabric)> Watch<W> {
    fn new(watch: Option<(Duration, W)>) -> Watch<W> {
        let next = watch.as_ref().and_then(|(every, _)| Instant::now().checked_add(*every));
        Watch { watch, next, steps: 0, gap: 1, checked: Instant::now() }
    }

    /// A cycle was stepped: call the watcher if its time has come. The clock is read about
    /// every 10 ms: every `gap` steps, from the last gap's pace.
    #[inline]
    pub(crate) fn stepped(&mut self, f: &Fabric) {
        let (Some((every, w)), Some(at)) = (self.watch.as_mut(), self.next) else { return };
        self.steps += 1;
        if self.steps >= self.gap {
            let now = Instant::now();
            let per_step = (now - self.checked).as_nanos() / self.steps as u128;
            self.gap = (10_000_000 / per_step.max(1)).clamp(1, 4096) as u32;
            (self.steps, self.checked) = (0, now);
            if now >= at {
                w(f);
                self.next = now.checked_add(*every);
            }
        }
    }
}

/// Put router `r` on the active list (`in_active` marks those on it).
#[inline]
fn activate(in_active: &mut [bool], active: &mut Vec<u32>, r: usize) {
    if !in_active[r] {
        in_active[r] = true;
        active.push(r as u32);
    }
}

/// A fabric of routers, links and NICs running one program on every node.
pub struct Fabric {
    pub spec: FabricSpec,
    pub topo: Topology,
    pub routers: Routers,
    pub nics: Nics,
    pub packets: PacketTable,
    pub scoreboard: Scoreboard,
    pub counters: Counters,
    pub latencies: Latencies,
    /// The traffic window's statistics ([`crate::measure`]).
    pub measure: Measurement, // measure:
    program: Box<dyn Program>,
    probes: Vec<Box<dyn Probe>>,
    /// Downstream input port of each output port, upstream output port of each input port.
    down: Vec<u32>,
    up: Vec<u32>,
    /// Per output port, what the commit phase needs in one place: the downstream router and
    /// the local VC index of its VC 0 (no division), and the flits sent so far.
    links: Vec<OutLink>,
    class_mask: [u16; 2],
    active: Vec<u32>,
    in_active: Vec<bool>,
    timers: Timers,
    fired: Vec<bool>,
    outbox: Outbox,
    ejected: Vec<Ejection>,
    node_out: NodeOut,
    eject_log: Vec<(NodeId, Ejection, u32)>,
    inject_log: Vec<(NodeId, u8, Flit)>,
    shuffle: Option<rand_chacha::ChaCha8Rng>,
    /// The next cycle to simulate.
    pub now: u64,
    /// With probes attached, the cycle from which the run only went on to show credits
    /// coming back ([`Fabric::end`]).
    probe_tail_from: Option<u64>,
    last_move: u64,
    pub deadlock: Option<Deadlock>,
    /// This fabric's share when the fabric is split between threads ([`split`]): part
    /// `part` of `parts`, routers `part * chunk ..` (one part: everything), which are
    /// routers `lo..hi` and output ports `lo * ports..hi * ports`.
    part: u32,
    parts: u32,
    chunk: u32,
    lo: u32,
    hi: u32,
    /// What this part sends each other part, per round parity (`parity * parts + part`),
    /// and where the current round's begins.
    mail: Vec<split::Mail>,
    mail_at: usize,
    /// Per input VC fed from another part: this part's id of the packet arriving on it, and
    /// the last cycle a flit left it.
    xlat: Vec<u32>,
    popped_at: Vec<u64>,
    /// On a split fabric: the upstream output port of each input port when this part owns
    /// it (`NONE` otherwise), and the cycle's credits for this part's own return lines.
    up_own: Vec<u32>,
    own_credits: Vec<(usize, u8)>,
    /// Scratch stack of [`Fabric::part_reach`]'s walk down a broadcast tree.
    reach_stack: Vec<(NodeId, usize)>,
    /// The kernel that ran the fabric: "scan" or "event" ([`event`]).
    pub kernel_used: &'static str,
    /// The event kernel's state while it runs the fabric.
    event: Option<Box<event::EventKernel>>,
}

impl Fabric {
    /// Build a fabric from a validated spec.
    pub fn new(spec: &FabricSpec, mut program: Box<dyn Program>) -> Fabric {
        let topo = spec.topology();
        let mut scoreboard = Scoreboard::new(topo.nodes());
        program.setup(&topo, &mut scoreboard);
        let n = topo.nodes();
        let params = spec.router_params();
        let p = params.ports();
        let net = params.net_ports as usize;
        let mut down = vec![NONE; n * p];
        let mut up = vec![NONE; n * p];
        for r in 0..n as u32 {
            for o in 0..net {
                if let Some(m) = topo.neighbor(NodeId(r), o) {
                    let op = r as usize * p + o;
                    let ip = m.idx() * p + topo.reverse_port(o);
                    down[op] = ip as u32;
                    up[ip] = op as u32;
                }
            }
        }
        let v = spec.vcs as usize;
        let links = down
            .iter()
            .map(|&ip| {
                let (router, vc0) = if ip == NONE { (NONE, NONE) } else { (ip / p as u32, (ip % p as u32) * v as u32) };
                OutLink { router, vc0, flits: 0 }
            })
            .collect();
        let all = ((1u32 << spec.vcs) - 1) as u16;
        let class_mask = if topo.dateline {
            let half = spec.vcs / 2;
            let low = ((1u32 << half) - 1) as u16;
            [low, all & !low]
        } else {
            [all, all]
        };
        Fabric {
            spec: spec.clone(),
            routers: Routers::new(params, n),
            nics: Nics::new(n, net, params.nic_channels as usize, spec.startup_cycles, spec.copy_cycles_per_flit),
            packets: PacketTable::new(n),
            scoreboard,
            counters: Counters::default(),
            latencies: Latencies::default(),
            measure: Measurement::new(spec.measure), // measure:
            program,
            probes: Vec::new(),
            down,
            up,
            links,
            class_mask,
            active: (0..n as u32).collect(),
            in_active: vec![true; n],
            timers: Timers::default(),
            fired: vec![false; n],
            outbox: Outbox::default(),
            ejected: Vec::new(),
            node_out: NodeOut::default(),
            eject_log: Vec::new(),
            inject_log: Vec::new(),
            shuffle: spec.shuffle_seed.map(rand_chacha::ChaCha8Rng::seed_from_u64),
            now: 0,
            probe_tail_from: None,
            last_move: 0,
            deadlock: None,
            part: 0,
            parts: 1,
            chunk: n as u32,
            lo: 0,
            hi: n as u32,
            mail: Vec::new(),
            mail_at: 0,
            xlat: Vec::new(),
            popped_at: Vec::new(),
            up_own: Vec::new(),
            own_credits: Vec::new(),
            reach_stack: Vec::new(),
            kernel_used: "scan",
            event: None,
            topo,
        }
    }

    /// Attach a probe that sees every simulated cycle.
    pub fn add_probe(&mut self, probe: Box<dyn Probe>) {
        self.probes.push(probe);
    }

    /// Take the probes back, in the order they were added (to finish their output).
    pub fn take_probes(&mut self) -> Vec<Box<dyn Probe>> {
        std::mem::take(&mut self.probes)
    }

    /// Access the program (e.g. to read its results after the run).
    pub fn program(&self) -> &dyn Program {
        self.program.as_ref()
    }

    /// Downstream input port (global index) of output port `op`, if connected.
    pub fn downstream(&self, op: usize) -> Option<usize> {
        (self.down[op] != NONE).then_some(self.down[op] as usize)
    }

    /// Output ports in the fabric (routers × ports, NIC channels included).
    pub fn output_ports(&self) -> usize {
        self.links.len()
    }

    /// Flits sent on output port `op` (global index) so far.
    pub fn port_flits(&self, op: usize) -> u64 {
        self.links[op].flits
    }

    /// Upstream output port (global index) of input port `ip`, if connected.
    pub fn upstream(&self, ip: usize) -> Option<usize> {
        (self.up[ip] != NONE).then_some(self.up[ip] as usize)
    }

    /// Run until nothing is left to do, a deadlock, or `max_cycles`.
    pub fn run(&mut self) -> Ending {
        self.run_loop(None::<(Duration, fn(&Fabric))>)
    }

    /// [`Fabric::run`], calling `watch` with the fabric about every `every` of wall-clock
    /// time (the clock is read about every 10 ms), e.g. to show progress. Watching never
    /// changes a result.
    pub fn run_watched(&mut self, every: Duration, watch: impl FnMut(&Fabric)) -> Ending {
        self.run_loop(Some((every, watch)))
    }

    fn run_loop<W: FnMut(&Fabric)>(&mut self, watch: Option<(Duration, W)>) -> Ending {
        let mut watch = Watch::new(watch);
        if self.now == 0 && self.use_event_kernel() {
            return self.run_event_loop(&mut watch);
        }
        loop {
            if self.deadlock.is_some() {
                return Ending::Deadlock;
            }
            // Skip cycles in which nothing can happen; with probes attached, not while
            // credits are still coming back (a waveform shows when they arrive).
            let credits_due = !self.probes.is_empty() && self.now <= self.routers.credit_horizon();
            if self.active.is_empty() && !credits_due {
                match self.timers.next() {
                    None => return Ending::Quiescent,
                    // Not past the cycle limit: a run stopped there has simulated to it.
                    Some(t) => self.now = self.now.max(t.min(self.spec.max_cycles)),
                }
            }
            // Without probes the run would end here: the cycles after it only show credits
            // coming back, and do not count as simulated.
            if !self.active.is_empty() || !self.timers.is_empty() {
                self.probe_tail_from = None;
            } else if self.probe_tail_from.is_none() {
                self.probe_tail_from = Some(self.now);
            }
            if self.now >= self.spec.max_cycles {
                return if self.probe_tail_from.is_some() { Ending::Quiescent } else { Ending::CycleLimit };
            }
            self.step();
            watch.stepped(self);
        }
    }

    /// Simulate one cycle.
    pub fn step(&mut self) {
        // measure: the source queues at the batch boundaries reached
        self.measure.sample_queues(self.now, || (self.lo..self.hi).map(|n| self.nics.queued(NodeId(n)) as u64).sum());
        if self.event.is_some() {
            return self.step_event();
        }
        let t = self.now;
        let ejected_before = self.counters.flits_ejected;
        let injected_before = self.counters.flits_injected;
        let Fabric { timers, fired, in_active, active, .. } = self;
        timers.pop_due(t, |n, kind| {
            if kind == PROGRAM_TIMER {
                fired[n as usize] = true;
            }
            activate(in_active, active, n as usize);
        });
        // Credits due in cycles that were skipped.
        self.routers.deliver_credits(t);
        let mut list = std::mem::take(&mut self.active);
        match self.shuffle.as_mut() {
            Some(rng) => list.shuffle(rng),
            // Large fabrics in id order: the routers' state is laid out by id, so this walks
            // memory forwards (small ones fit in the caches and are not worth the sort).
            None if list.len() > 512 => list.sort_unstable(),
            None => {}
        }
        if self.routers.narrow() {
            for &r in &list {
                self.eval_router::<u64>(NodeId(r), t);
            }
        } else {
            for &r in &list {
                self.eval_router::<u128>(NodeId(r), t);
            }
        }
        self.active = list;
        if self.parts > 1 {
            self.commit::<true>(t);
        } else {
            self.commit::<false>(t);
        }
        if !self.probes.is_empty() {
            let mut probes = std::mem::take(&mut self.probes);
            let view = CycleView {
                t,
                departures: &self.outbox.departures,
                ejections: &self.eject_log,
                injections: &self.inject_log,
                fabric: self,
            };
            for p in probes.iter_mut() {
                p.cycle(&view);
            }
            self.probes = probes;
        }
        let moved = !self.outbox.departures.is_empty()
            || self.counters.flits_ejected != ejected_before
            || self.counters.flits_injected != injected_before;
        self.outbox.departures.clear();
        self.eject_log.clear();
        self.inject_log.clear();
        if moved {
            self.last_move = t;
        }
        self.retire(t);
        if self.parts == 1 && self.routers.buffered > 0 && t - self.last_move >= self.spec.watchdog_cycles {
            self.deadlock = Some(self.find_deadlock(t));
        }
        self.measure.ejected(t, self.counters.flits_ejected - ejected_before); // measure:
        self.now = t + 1;
    }

    #[inline]
    fn activate(&mut self, r: usize) {
        activate(&mut self.in_active, &mut self.active, r);
    }

    /// Drop routers with nothing to do from the active list; a NIC waiting out a start-up
    /// cost gets a wake-up timer instead.
    fn retire(&mut self, t: u64) {
        let Fabric { active, in_active, routers, nics, timers, fired, .. } = self;
        // Compacted in place, order kept (a hand-written `retain`: this runs every cycle).
        let mut kept = 0;
        for i in 0..active.len() {
            let r = active[i];
            let stays = routers.occupancy(r as usize) > 0 || fired[r as usize] || {
                let next = nics.next_work(NodeId(r), t + 1);
                let now = next == Some(t + 1);
                if !now {
                    if let Some(at) = next {
                        timers.push(at, r, WAKE);
                    }
                    in_active[r as usize] = false;
                }
                now
            };
            if stays {
                active[kept] = r;
                kept += 1;
            }
        }
        active.truncate(kept);
    }

    /// Phase A for router `r` (its pipeline computing VC sets in width `S`), its NIC and its
    /// node's program.
    #[inline(always)]
    fn eval_router<S: VcBits>(&mut self, r: NodeId, t: u64) {
        self.ejected.clear();
        {
            let env = Env { topo: &self.topo, packets: &self.packets, class_mask: self.class_mask };
            self.routers.stage_eject_in::<S, _>(r, t, &env, &mut self.ejected, &mut self.outbox);
        }
        for i in 0..self.ejected.len() {
            let ej = self.ejected[i];
            self.counters.flits_ejected += 1;
            if !self.probes.is_empty() {
                let msg = self.packets.get(ej.flit.packet).msg;
                self.eject_log.push((r, ej, msg));
            }
            if let Some(pid) = self.nics.receive(r, ej.channel, ej.flit) {
                self.deliver(r, pid, t);
            }
        }
        if std::mem::take(&mut self.fired[r.idx()]) {
            self.call_program(r, t, |p, cx| p.timer(cx));
        }
        if t == 0 {
            self.call_program(r, t, |p, cx| p.start(cx));
        }
        if self.nics.busy(r) {
            let log = (!self.probes.is_empty()).then_some(&mut self.inject_log);
            self.counters.flits_injected += self.nics.inject(r, t, &mut self.routers, &mut self.packets, log).flits as u64;
        }
        let env = Env { topo: &self.topo, packets: &self.packets, class_mask: self.class_mask };
        self.routers.stage_network_in::<S, _>(r, t, &env, &mut self.outbox);
    }

    /// The tail of packet `pid` was ejected at node `r`: check it belongs here, then hand it
    /// to the node's program.
    fn deliver(&mut self, r: NodeId, pid: PacketId, t: u64) {
        let p = *self.packets.get(pid);
        let ok = if p.is_broadcast() {
            if !self.topo.in_broadcast(r, p.dest(), p.header.span) {
                self.scoreboard.packet_error(
                    false,
                    format!("cycle {t}: broadcast packet from node {} ejected at node {r}, outside its tree", p.dest()),
                );
                false
            } else if !self.packets.mark_seen(pid, r) {
                self.scoreboard.packet_error(true, format!("cycle {t}: broadcast packet from node {} ejected at node {r} twice", p.dest()));
                false
            } else {
                true
            }
        } else if p.dest() != r {
            self.scoreboard.packet_error(false, format!("cycle {t}: packet for node {} ejected at node {r}", p.dest()));
            false
        } else {
            true
        };
        if !ok {
            return;
        }
        self.latencies.record(t - p.birth);
        self.measure.delivered(t, p.birth, p.flits()); // measure:
        self.counters.packets_delivered += 1;
        self.counters.last_delivery = self.counters.last_delivery.max(t);
        let m = Received { src: p.src(), kind: p.header.kind, msg: p.msg, aux: p.aux, key: p.key(), flits: p.flits(), birth: p.birth };
        self.call_program(r, t, |p, cx| p.receive(cx, &m));
        self.packets.delivered(pid);
    }

    /// Call node `r`'s program in cycle `t` (`call` picks the entry point), then queue what
    /// it sent.
    #[inline]
    fn call_program(&mut self, r: NodeId, t: u64, call: impl FnOnce(&mut dyn Program, &mut NodeCtx<'_>)) {
        let mut cx = NodeCtx {
            node: r,
            now: t,
            topo: &self.topo,
            queued: self.nics.queued(r),
            out: &mut self.node_out,
            scoreboard: &mut self.scoreboard,
        };
        call(&mut *self.program, &mut cx);
        if !self.node_out.is_empty() {
            self.flush_node_out(r, t);
        }
    }

    /// Turn what node `r`'s program asked for into queued packets and timers.
    fn flush_node_out(&mut self, r: NodeId, t: u64) {
        // By index, cleared after (cheaper than draining the usual one or two).
        for i in 0..self.node_out.sends.len() {
            let s = self.node_out.sends[i];
            let (kind, dest, span, remaining, first) = match s.dest {
                Dest::Node(d) => {
                    assert!(d != r, "node {r}'s program sent a packet to itself");
                    let first = self.topo.route_unicast(r, r, d).ports.net_ports().next().expect("unicast with no first hop");
                    (RouteKind::Unicast, d, 0, 1, first)
                }
                Dest::Broadcast { span } => {
                    let reach = self.topo.broadcast_reach(span);
                    if reach == 0 {
                        continue;
                    }
                    let net = self.topo.net_ports();
                    let ports = self.topo.route_broadcast(r, PortId(net as u8), r, span).ports;
                    let remaining = if self.parts > 1 {
                        Self::part_reach(&self.topo, self.own(), &mut self.reach_stack, (r, net), r, span)
                    } else {
                        reach as u32
                    };
                    (RouteKind::Broadcast, r, span, remaining, ports.net_ports().next().expect("broadcast with no first hop"))
                }
            };
            assert!(s.flits >= 1, "node {r}'s program sent a packet of no flits");
            let header =
                Header { kind, src: u24::new(r.0), dest: u24::new(dest.0), key: u24::new(s.key.min(Header::MAX_KEY)), len: s.flits, span };
            let p = Packet { header, msg: s.msg, aux: s.aux, birth: t, remaining, seen: NONE };
            self.nics.enqueue(r, p, first);
            self.counters.packets_sent += 1;
            self.measure.generated(t, s.flits); // measure:
        }
        self.node_out.sends.clear();
        for i in 0..self.node_out.wakes.len() {
            self.timers.push(self.node_out.wakes[i], r.0, PROGRAM_TIMER);
        }
        self.node_out.wakes.clear();
    }

    /// Phase B: flits into downstream buffers, credits onto return lines; then the credits
    /// usable in the next cycle become visible.
    fn commit<const SPLIT: bool>(&mut self, t: u64) {
        let lat = self.spec.pipeline.link_latency as u64;
        self.counters.flit_hops += self.outbox.departures.len() as u64;
        for i in 0..self.outbox.departures.len() {
            let d = self.outbox.departures[i];
            let link = &mut self.links[d.out_port as usize];
            let (r, l0) = (link.router, link.vc0);
            link.flits += 1;
            debug_assert!(r != NONE, "departure on unconnected port {}", d.out_port);
            // Counted without a branch: which flit is a tail is data, not a pattern.
            self.counters.link_transmissions += d.flit.is_tail() as u64;
            if SPLIT && (r < self.lo || r >= self.hi) {
                self.mail_flit(r, l0 + d.vc as u32, d.flit, t);
                continue;
            }
            self.routers.arrive_at(r as usize, l0 as usize + d.vc as usize, d.flit, t, t + lat);
            self.activate(r as usize);
        }
        if SPLIT {
            self.credits_split(t);
        } else {
            let up = self.up.as_slice();
            self.routers.credits_freed(t, self.outbox.freed.drain(..).map(move |f| (up[f.in_port as usize] as usize, f.vc)));
        }
        self.routers.deliver_credits(t + 1);
    }

    /// Build the wait-for graph of blocked input VCs and find a cycle in it.
    fn find_deadlock(&self, t: u64) -> Deadlock {
        let r = &self.routers;
        let v = r.vcs();
        let n_iv = r.inputs.ctl.len();
        let mut edges: Vec<Vec<u32>> = vec![Vec::new(); n_iv];
        let mut blocked = 0;
        for (iv, out) in edges.iter_mut().enumerate() {
            let c = &r.inputs.ctl[iv];
            if c.stage != router::input_unit::VcStage::Routed {
                continue;
            }
            // An edge to the upstream VC sending the rest of this VC's packet into it.
            let wait_upstream = |out: &mut Vec<u32>| {
                let ip = iv / v;
                if self.up[ip] != NONE {
                    let owner = r.outputs.owner[self.up[ip] as usize * v + iv % v];
                    if owner != NONE {
                        out.push(owner);
                    }
                }
            };
            if c.len == 0 {
                // Mid-packet with nothing buffered: it holds its output VCs (or ejection
                // channel) and waits for the rest of its packet from upstream.
                wait_upstream(out);
                continue;
            }
            blocked += 1;
            let (node, p, _) = r.ivc_location(iv);
            let head = c.front.flit.is_head();
            if self.spec.switching == Switching::StoreAndForward && head && p < r.net_ports() && !r.inputs.whole_packet_ready(iv, t) {
                // A store-and-forward head waits for its tail from upstream (and for the
                // credits of the whole packet downstream, below).
                wait_upstream(out);
            }
            for o in c.pending.network().net_ports() {
                let op = r.port_index(node, o);
                if c.granted.has_port(o) {
                    if let Some(ovc) = r.outputs.vc_owned_by(op, iv as u32) {
                        // A worm's flit, or any flit after the head, needs one credit; a
                        // cut-through or store-and-forward head the whole packet's.
                        let need = if self.spec.switching == Switching::Wormhole || !head { 1 } else { c.pkt_len };
                        if r.outputs.credits[op * v + ovc] < need && self.down[op] != NONE {
                            out.push(self.down[op] * v as u32 + ovc as u32);
                        }
                    }
                } else {
                    for ovc in 0..v {
                        let owner = r.outputs.owner[op * v + ovc];
                        if c.vc_mask & (1 << ovc) != 0 && owner != NONE {
                            out.push(owner);
                        }
                    }
                }
            }
            if c.pending.contains(PortSet::LOCAL) && !c.granted.contains(PortSet::LOCAL) {
                let k = r.params.nic_channels as usize;
                for ch in 0..k {
                    let owner = r.outputs.owner[r.port_index(node, r.params.net_ports as usize + ch) * v];
                    if owner != NONE {
                        out.push(owner);
                    }
                }
            }
        }
        // Iterative DFS for a cycle.
        let mut color = vec![0u8; n_iv];
        let mut parent = vec![NONE; n_iv];
        let mut cycle = Vec::new();
        'outer: for s in 0..n_iv {
            if color[s] != 0 || edges[s].is_empty() {
                continue;
            }
            let mut stack = vec![(s as u32, 0usize)];
            color[s] = 1;
            while let Some(&mut (u, ref mut i)) = stack.last_mut() {
                if *i < edges[u as usize].len() {
                    let w = edges[u as usize][*i];
                    *i += 1;
                    match color[w as usize] {
                        0 => {
                            color[w as usize] = 1;
                            parent[w as usize] = u;
                            stack.push((w, 0));
                        }
                        1 => {
                            let mut x = u;
                            cycle.push(w);
                            while x != w {
                                cycle.push(x);
                                x = parent[x as usize];
                            }
                            cycle.reverse();
                            break 'outer;
                        }
                        _ => {}
                    }
                } else {
                    color[u as usize] = 2;
                    stack.pop();
                }
            }
        }
        Deadlock {
            cycle: t,
            last_move: self.last_move,
            flits_stuck: r.buffered,
            wait_for_cycle: cycle.iter().map(|&iv| self.ivc_name(iv as usize)).collect(),
            blocked_vcs: blocked,
        }
    }

    /// RTL-style name of a global input VC: `n0005.in1.vc0` (injection ports are `inj<k>`).
    pub fn ivc_name(&self, iv: usize) -> String {
        let (node, p, v) = self.routers.ivc_location(iv);
        let net = self.routers.params.net_ports as usize;
        let width = (self.topo.nodes().max(2) - 1).to_string().len().max(4);
        if p < net { format!("n{:0width$}.in{}.vc{}", node.0, p, v) } else { format!("n{:0width$}.inj{}.vc{}", node.0, p - net, v) }
    }

    /// Was router `r` evaluated this cycle, or will it be next cycle?
    pub fn is_active(&self, r: NodeId) -> bool {
        self.in_active[r.idx()]
    }

    /// Is there still work (packets queued, flits buffered, timers)?
    pub fn busy(&self) -> bool {
        !self.active.is_empty() || !self.timers.is_empty()
    }

    /// The cycles the run simulated: `now`, less the cycles it went on only for probes to
    /// see the last credits come back (results never depend on whether a run is traced).
    pub fn end(&self) -> u64 {
        self.probe_tail_from.unwrap_or(self.now)
    }
}

#[cfg(test)]
mod tests {
    use super::Latencies;

    /// Quantiles, maximum and mean are those of the sorted latencies, on both sides of the
    /// dense range, also after joining two halves; a huge latency costs no memory.
    #[test]
    fn latencies_are_exact_and_small() {
        let mut all: Vec<u64> = (0..3000u64).map(|i| (i * 7919) % 1000).collect();
        all.extend([Latencies::DENSE - 1, Latencies::DENSE, Latencies::DENSE + 5, 1 << 40, 1 << 40, 3 << 33]);
        let (mut a, mut b) = (Latencies::default(), Latencies::default());
        for (i, &l) in all.iter().enumerate() {
            if i % 3 == 0 { b.record(l) } else { a.record(l) }
        }
        a.join(&b);
        all.sort();
        for q in [0.0, 0.01, 0.5, 0.99, 0.999, 0.9995, 1.0] {
            let k = ((q * all.len() as f64).ceil() as usize).max(1);
            assert_eq!(a.quantile(q), Some(all[k - 1]), "q = {q}");
        }
        assert_eq!(a.max(), Some(1 << 40));
        assert_eq!(a.count, all.len() as u64);
        assert_eq!(a.sum, all.iter().map(|&l| l as u128).sum::<u128>());
        assert!(a.hist.len() as u64 <= Latencies::DENSE && a.far.len() == 4, "{} {}", a.hist.len(), a.far.len());
    }
}
