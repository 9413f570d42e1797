//! The simulation kernel: the cycle loop over the fabric's routers, links and NICs.
//!
//! Each cycle (the routers' stages are [`router::Routers`]'):
//!
//! ```text
//!  routers: flits readable, credits visible, heads routed ──► timers due
//!   ──► routers: stage 1 (ejection) ──► NICs reassemble, programs receive; programs' timers
//!   ──► NIC injection ──► routers: stage 2 (VC and switch allocation, crossbar)
//!   ──► probes ──► watchdog
//! ```
//!
//! A stage reads only state as it was at the end of the previous cycle (plus the node's own
//! same-cycle NIC activity) and writes only its own router's state and the delay lines, so
//! the order routers are visited in never changes a result. Only routers with work and NICs
//! with something to send are visited, and stretches in which nothing can happen are
//! skipped. [`split`] runs the same cycle on several threads, each owning a range of routers.

mod placement;
pub mod split;
mod timers;

use crate::faults::{Ejected, FaultState};
use crate::measure::Measurement;
use crate::nic::{NewPacket, Nics, PREFETCH_AHEAD};
use crate::packet::PacketTable;
use crate::probe::{CycleView, Probe};
use crate::program::{Dest, NodeCtx, NodeOut, Program, Received};
use crate::scoreboard::Scoreboard;
use crate::spec::FabricSpec;
use crate::topology::Topology;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use router::{
    Ejection, Flit, Header, NONE, NodeId, PacketId, PacketMeta, PortId, PortSet, RouteDecision, RouteKind, RouterEnv, Routers, Switching,
};
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
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
    /// Stopped from outside ([`Fabric::stop_when`]) with work left, at the cycle reached.
    Interrupted,
}

pub(crate) const WAKE: u8 = 0;
pub(crate) const PROGRAM_TIMER: u8 = 1;

/// The route computation the routers see: the topology's routing functions applied to the
/// packet table's headers, with dateline VC classes.
struct Env<'a> {
    topo: &'a Topology,
    packets: &'a PacketTable,
    class_mask: [u16; 2],
    faults: Option<&'a FaultState>,
}

impl RouterEnv for Env<'_> {
    #[inline(always)]
    fn route(&self, at: NodeId, in_port: PortId, packet: PacketId) -> (RouteDecision, PacketMeta) {
        let p = self.packets.get(packet);
        let hop = match p.header.kind {
            RouteKind::Unicast => self.topo.route_unicast(at, p.src(), p.dest()),
            RouteKind::Broadcast => self.topo.route_broadcast(at, in_port, p.dest(), p.header.span),
        };
        let hop = match self.faults {
            Some(f) => f.route(at, packet, p.header.kind, hop),
            None => hop,
        };
        (
            RouteDecision {
                ports: hop.ports,
                vc_mask: self.class_mask[hop.class as usize],
                other: hop.high,
                other_mask: self.class_mask[1],
            },
            PacketMeta { len: p.flits(), key: p.key(), birth: p.birth },
        )
    }
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

/// How the fabric's routers and NICs are wired: the links between ports and the output
/// VCs a route's class may use.
struct Wiring {
    /// Downstream input port of each output port, upstream output port of each input port
    /// (global indices, `NONE` where unconnected).
    down: Vec<u32>,
    up: Vec<u32>,
    class_mask: [u16; 2],
}

/// What steps the fabric from one cycle to the next, beside the state it steps: who has
/// work, the timers, this cycle's scratch and logs, and the watchdog's memory.
struct Stepper {
    /// Nodes whose NIC has something to do from this cycle (`in_active` marks them).
    nic_active: Vec<u32>,
    in_active: Vec<bool>,
    timers: Timers,
    /// Nodes whose program timer fired this cycle.
    fired: Vec<bool>,
    fired_list: Vec<u32>,
    ejected: Vec<(NodeId, Ejection)>,
    node_out: NodeOut,
    /// For probes: this cycle's ejections (with their packet's message) and injections.
    eject_log: Vec<(NodeId, Ejection, u32)>,
    inject_log: Vec<(NodeId, u8, Flit)>,
    shuffle: Option<rand_chacha::ChaCha8Rng>,
    /// With probes attached, the cycle from which the run only went on to show credits
    /// coming back ([`Fabric::end`]).
    probe_tail_from: Option<u64>,
    last_move: u64,
}

/// This fabric's share when the fabric is split between threads ([`split`]).
struct Part {
    /// Part `part` of `parts`: routers `part * chunk ..`, which are routers `lo..hi` (one
    /// part: everything).
    part: u32,
    parts: u32,
    chunk: u32,
    lo: u32,
    hi: u32,
    /// What this part sends each other part, per round parity (`parity * parts + part`),
    /// and where the current round's begins.
    mail: Vec<split::Mail>,
    mail_at: usize,
    /// Per input VC fed from another part: this part's id of the packet arriving on it.
    xlat: Vec<u32>,
    /// Scratch stack of [`Fabric::part_reach`]'s walk down a broadcast tree.
    reach_stack: Vec<(NodeId, usize)>,
}

impl Part {
    /// The whole fabric of `n` routers, on one thread.
    fn whole(n: usize) -> Part {
        Part {
            part: 0,
            parts: 1,
            chunk: n as u32,
            lo: 0,
            hi: n as u32,
            mail: Vec::new(),
            mail_at: 0,
            xlat: Vec::new(),
            reach_stack: Vec::new(),
        }
    }
}

/// A fabric of routers, links and NICs running one program on every node: its wiring, its
/// state (routers, NICs, packets, scoreboard, statistics, the program) and its stepper.
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
    wiring: Wiring,
    step: Stepper,
    part: Part,
    /// The next cycle to simulate.
    pub now: u64,
    pub deadlock: Option<Deadlock>,
    /// Set from outside (an interrupt) to stop the run at the cycle it is in.
    stop: Option<Arc<AtomicBool>>,
    /// Modelled faults ([`crate::faults`]), if the spec has any.
    pub faults: Option<Box<FaultState>>,
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
        let all = ((1u32 << spec.vcs) - 1) as u16;
        let class_mask = if topo.dateline {
            let half = spec.vcs / 2;
            let low = ((1u32 << half) - 1) as u16;
            [low, all & !low]
        } else {
            [all, all]
        };
        let mut routers = Routers::new(params, n);
        routers.connect(&down, &up);
        routers.set_schedule(spec.schedule);
        if let Some(span) = spec.hist_span {
            routers.set_hist_span(span);
        }
        // Faults read the departures: the flits that leave on a dead link.
        let faults = (!spec.faults.is_empty()).then(|| Box::new(FaultState::new(&topo, &spec.faults)));
        if faults.is_some() {
            routers.set_log(true);
        }
        Fabric {
            spec: spec.clone(),
            routers,
            nics: Nics::new(
                n,
                net,
                params.nic_channels as usize,
                params.ejection_vcs as usize,
                spec.startup_cycles,
                spec.copy_cycles_per_flit,
            ),
            packets: PacketTable::new(n),
            scoreboard,
            counters: Counters::default(),
            latencies: Latencies::default(),
            measure: Measurement::new(spec.measure), // measure:
            program,
            probes: Vec::new(),
            wiring: Wiring { down, up, class_mask },
            step: Stepper {
                nic_active: Vec::new(),
                in_active: vec![false; n],
                timers: Timers::default(),
                fired: vec![false; n],
                fired_list: Vec::new(),
                ejected: Vec::new(),
                node_out: NodeOut::default(),
                eject_log: Vec::new(),
                inject_log: Vec::new(),
                shuffle: spec.shuffle_seed.map(rand_chacha::ChaCha8Rng::seed_from_u64),
                probe_tail_from: None,
                last_move: 0,
            },
            part: Part::whole(n),
            now: 0,
            deadlock: None,
            stop: None,
            faults,
            topo,
        }
    }

    /// Attach a probe that sees every simulated cycle.
    pub fn add_probe(&mut self, probe: Box<dyn Probe>) {
        self.probes.push(probe);
        self.routers.set_log(true);
    }

    /// Take the probes back, in the order they were added (to finish their output).
    pub fn take_probes(&mut self) -> Vec<Box<dyn Probe>> {
        self.routers.set_log(self.faults.is_some());
        std::mem::take(&mut self.probes)
    }

    /// Access the program (e.g. to read its results after the run).
    pub fn program(&self) -> &dyn Program {
        self.program.as_ref()
    }

    /// Downstream input port (global index) of output port `op`, if connected.
    pub fn downstream(&self, op: usize) -> Option<usize> {
        let d = self.wiring.down[op];
        (d != NONE).then_some(d as usize)
    }

    /// Output ports in the fabric (routers × ports, NIC channels included).
    pub fn output_ports(&self) -> usize {
        self.wiring.down.len()
    }

    /// Flits sent on output port `op` (global index) so far.
    pub fn port_flits(&self, op: usize) -> u64 {
        self.routers.port_flits()[op]
    }

    /// Upstream output port (global index) of input port `ip`, if connected.
    pub fn upstream(&self, ip: usize) -> Option<usize> {
        let u = self.wiring.up[ip];
        (u != NONE).then_some(u as usize)
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

    /// Is nothing happening: no flit in the routers, no NIC with work (cycle 0 always runs:
    /// the programs start)?
    fn idle(&self) -> bool {
        self.now > 0 && self.routers.is_empty() && self.step.nic_active.is_empty()
    }

    /// Stop [`Fabric::run`] before the next cycle once `flag` is set (by a signal handler,
    /// say): it then returns [`Ending::Interrupted`], the fabric as of the cycle reached.
    pub fn stop_when(&mut self, flag: Arc<AtomicBool>) {
        self.stop = Some(flag);
    }

    /// Has [`Fabric::stop_when`]'s flag been set?
    #[inline]
    pub(crate) fn stop_asked(&self) -> bool {
        self.stop.as_ref().is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed))
    }

    fn run_loop<W: FnMut(&Fabric)>(&mut self, watch: Option<(Duration, W)>) -> Ending {
        let mut watch = Watch::new(watch);
        loop {
            if self.deadlock.is_some() {
                return Ending::Deadlock;
            }
            // One relaxed load a cycle: next to a cycle's work, nothing.
            if self.stop_asked() {
                return Ending::Interrupted;
            }
            // Skip cycles in which nothing can happen; with probes attached, not while
            // credits are still coming back (a waveform shows when they arrive).
            let credits_due = !self.probes.is_empty() && self.now <= self.routers.credit_horizon();
            let idle = self.idle();
            if idle && !credits_due {
                match self.step.timers.next() {
                    None => return Ending::Quiescent,
                    // Not past the cycle limit: a run stopped there has simulated to it.
                    Some(t) => self.now = self.now.max(t.min(self.spec.max_cycles)),
                }
            } else if self.still() {
                // Flits wait in the routers for their delays and nothing else goes on: on to
                // the next cycle anything is due, or to the watchdog's.
                let fault = self.faults.as_ref().and_then(|f| f.next_due());
                let due = [self.routers.next_due(), self.step.timers.next(), fault].into_iter().flatten().min();
                let watchdog = self.step.last_move.saturating_add(self.spec.watchdog_cycles);
                self.now = self.now.max(due.unwrap_or(u64::MAX).min(watchdog).min(self.spec.max_cycles));
            }
            // Without probes the run would end here: the cycles after it only show credits
            // coming back, and do not count as simulated.
            if !self.idle() || !self.step.timers.is_empty() {
                self.step.probe_tail_from = None;
            } else if self.step.probe_tail_from.is_none() {
                self.step.probe_tail_from = Some(self.now);
            }
            if self.now >= self.spec.max_cycles {
                return if self.step.probe_tail_from.is_some() { Ending::Quiescent } else { Ending::CycleLimit };
            }
            self.step();
            watch.stepped(self);
        }
    }

    /// Flits are in the routers but no stage, NIC or probe has anything to do until the
    /// delay lines or the timers bring something (one thread: a split fabric steps its
    /// parts' cycles together).
    fn still(&self) -> bool {
        // Nothing moved in the last cycle stepped (the cheap test first: under load, a move).
        self.step.last_move + 1 < self.now
            && self.part.parts == 1
            && self.probes.is_empty()
            && self.step.nic_active.is_empty()
            && self.step.fired_list.is_empty()
            && self.routers.stages_idle()
    }

    /// Can nothing in this part ever move again: flits in the routers, none moved for
    /// [`Routers::still_cycles_for_certainty`] cycles up to `t`, and nothing due in the
    /// delay lines or the timers? (NICs that still stream wait for room only a move makes.)
    pub(crate) fn stuck_for_good(&self, t: u64, last_move: u64) -> bool {
        !self.routers.is_empty() && t - last_move >= self.routers.still_cycles_for_certainty() && self.nothing_due()
    }

    /// Is nothing due in this part's delay lines or timers?
    pub(crate) fn nothing_due(&self) -> bool {
        self.step.timers.is_empty() && self.routers.next_due().is_none()
    }

    /// Node `n`'s NIC may have something to do this cycle.
    #[inline]
    fn nic_wakes(&mut self, n: u32) {
        if !self.step.in_active[n as usize] {
            self.step.in_active[n as usize] = true;
            self.step.nic_active.push(n);
        }
    }

    /// Simulate cycle `self.now`.
    pub fn step(&mut self) {
        let t = self.now;
        // measure: the source queues at the batch boundaries reached
        let (lo, hi) = (self.part.lo, self.part.hi);
        self.measure.sample_queues(t, || (lo..hi).map(|n| self.nics.queued(NodeId(n)) as u64).sum());
        let routers = &self.routers;
        self.measure.sample_occupancy(t, |at| routers.class_occupancy(lo as usize..hi as usize, at)); // measure:
        let ejected_before = self.counters.flits_ejected;
        let injected_before = self.counters.flits_injected;
        let hops_before = self.routers.hops;
        if let Some(rng) = self.step.shuffle.as_mut() {
            let mut perm: Vec<u32> = (0..self.topo.nodes() as u32).collect();
            perm.shuffle(rng);
            self.routers.set_order(Some(perm));
        }
        if let Some(f) = self.faults.as_mut() {
            f.apply_due(t, &self.topo, &self.routers, &self.wiring.down, &self.packets);
        }
        {
            let env = Env { topo: &self.topo, packets: &self.packets, class_mask: self.wiring.class_mask, faults: self.faults.as_deref() };
            self.routers.begin_cycle(t, &env);
        }
        self.settle_faulty_routes();
        let Stepper { timers, fired, fired_list, in_active, nic_active, .. } = &mut self.step;
        timers.pop_due(t, |n, kind| {
            if kind == PROGRAM_TIMER {
                if !fired[n as usize] {
                    fired[n as usize] = true;
                    fired_list.push(n);
                }
            } else {
                debug_assert_eq!(kind, WAKE);
                if !in_active[n as usize] {
                    in_active[n as usize] = true;
                    nic_active.push(n);
                }
            }
        });
        // Stage 1: ejection; the NICs reassemble, the programs receive.
        let mut ejected = std::mem::take(&mut self.step.ejected);
        ejected.clear();
        self.routers.eject_stage(t, &mut ejected);
        for &(r, ej) in &ejected {
            self.counters.flits_ejected += 1;
            if !self.probes.is_empty() {
                let msg = self.packets.get(ej.flit.packet).msg;
                self.step.eject_log.push((r, ej, msg));
            }
            if let Some(pid) = self.nics.receive(r, ej.channel, ej.vc, ej.flit) {
                self.deliver(r, pid, t);
                if self.nics.busy(r) {
                    self.nic_wakes(r.0);
                }
            }
        }
        self.step.ejected = ejected;
        let fired_list = std::mem::take(&mut self.step.fired_list);
        for &n in &fired_list {
            self.step.fired[n as usize] = false;
            self.call_program(NodeId(n), t, |p, cx| p.timer(cx));
            if self.nics.busy(NodeId(n)) {
                self.nic_wakes(n);
            }
        }
        self.step.fired_list = fired_list;
        self.step.fired_list.clear();
        if t == 0 {
            for n in self.part.lo..self.part.hi {
                self.call_program(NodeId(n), t, |p, cx| p.start(cx));
                if self.nics.busy(NodeId(n)) {
                    self.nic_wakes(n);
                }
            }
        }
        // NIC injection; NICs with nothing to do from the next cycle on leave the set, one
        // waiting out a start-up cost gets a timer. Then route computation for the heads
        // written with no latency.
        {
            let Fabric { step, nics, packets, counters, routers, probes, .. } = self;
            let Stepper { nic_active, in_active, timers, inject_log, .. } = step;
            let mut log = (!probes.is_empty()).then_some(inject_log);
            let mut kept = 0;
            for i in 0..nic_active.len() {
                let n = nic_active[i];
                nics.prefetch(nic_active.get(i + PREFETCH_AHEAD).copied(), nic_active.get(i + 2 * PREFETCH_AHEAD).copied());
                let injected = nics.inject(NodeId(n), t, routers, packets, log.as_deref_mut());
                counters.flits_injected += injected.flits as u64;
                let next = injected.next;
                if next == Some(t + 1) {
                    nic_active[kept] = n;
                    kept += 1;
                } else {
                    in_active[n as usize] = false;
                    if let Some(at) = next {
                        timers.push(at, n, WAKE);
                    }
                }
            }
            nic_active.truncate(kept);
        }
        {
            let env = Env { topo: &self.topo, packets: &self.packets, class_mask: self.wiring.class_mask, faults: self.faults.as_deref() };
            self.routers.after_injection(t, &env);
        }
        self.settle_faulty_routes();
        // Stage 2: the flits that cross go onto their links, their credits back upstream.
        self.routers.network_stage(t);
        if let Some(f) = self.faults.as_mut() {
            f.departed(&self.routers.departures, self.routers.ports());
            if self.probes.is_empty() {
                self.routers.departures.clear();
                self.routers.allocs.clear();
            }
        }
        self.counters.flit_hops = self.routers.hops;
        self.counters.link_transmissions = self.routers.tails;
        let moved = self.routers.hops != hops_before
            || self.counters.flits_ejected != ejected_before
            || self.counters.flits_injected != injected_before;
        if self.part.parts > 1 {
            self.post_mail(t);
        }
        self.routers.end_cycle(t);
        if !self.probes.is_empty() {
            let mut probes = std::mem::take(&mut self.probes);
            let departures = std::mem::take(&mut self.routers.departures);
            let allocs = std::mem::take(&mut self.routers.allocs);
            let view = CycleView {
                t,
                departures: &departures,
                ejections: &self.step.eject_log,
                injections: &self.step.inject_log,
                allocs: &allocs,
                fabric: self,
            };
            for p in probes.iter_mut() {
                p.cycle(&view);
            }
            self.probes = probes;
            self.routers.departures = departures;
            self.routers.departures.clear();
            self.routers.allocs = allocs;
            self.routers.allocs.clear();
            self.step.eject_log.clear();
            self.step.inject_log.clear();
        }
        if moved {
            self.step.last_move = t;
        }
        // A split fabric's watchdog looks at every part ([`split`]).
        if self.part.parts == 1
            && !self.routers.is_empty()
            && (t - self.step.last_move >= self.spec.watchdog_cycles || self.stuck_for_good(t, self.step.last_move))
        {
            self.deadlock = Some(self.find_deadlock(t));
        }
        self.measure.ejected(t, self.counters.flits_ejected - ejected_before); // measure:
        self.now = t + 1;
    }

    /// The tail of packet `pid` was ejected at node `r`: check it belongs here, then hand it
    /// to the node's program.
    fn deliver(&mut self, r: NodeId, pid: PacketId, t: u64) {
        if let Some(f) = self.faults.as_mut()
            && let Ejected::Discard = f.ejected(&self.topo, &self.packets, r, pid)
        {
            if self.packets.delivered(pid) {
                f.freed(pid);
            }
            return;
        }
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
        // Unicast messages only: a broadcast's latency is from its creation to its last
        // delivery, which the scoreboard records ([`crate::measure::broadcasts`]).
        if !p.is_broadcast() && !p.is_relay() {
            self.latencies.record(t - p.birth);
            self.measure.delivered(t, p.birth, p.flits()); // measure:
        }
        self.counters.packets_delivered += 1;
        self.counters.last_delivery = self.counters.last_delivery.max(t);
        let m = Received { src: p.src(), kind: p.header.kind, msg: p.msg, aux: p.aux, key: p.key(), flits: p.flits(), birth: p.birth };
        self.call_program(r, t, |p, cx| p.receive(cx, &m));
        if self.packets.delivered(pid)
            && let Some(f) = self.faults.as_mut()
        {
            f.freed(pid);
        }
    }

    /// Faults: charge the broadcast branches this cycle's route computation cut.
    fn settle_faulty_routes(&mut self) {
        if let Some(f) = self.faults.as_mut() {
            f.settle_routes(&self.topo, &mut self.packets);
        }
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
            out: &mut self.step.node_out,
            scoreboard: &mut self.scoreboard,
        };
        call(&mut *self.program, &mut cx);
        if !self.step.node_out.is_empty() {
            self.flush_node_out(r, t);
        }
    }

    /// Turn what node `r`'s program asked for into queued packets and timers.
    fn flush_node_out(&mut self, r: NodeId, t: u64) {
        // By index, cleared after (cheaper than draining the usual one or two).
        for i in 0..self.step.node_out.sends.len() {
            let s = self.step.node_out.sends[i];
            let (kind, dest, span, remaining, first, reach) = match s.dest {
                Dest::Node(d) | Dest::Relay(d) => {
                    assert!(d != r, "node {r}'s program sent a packet to itself");
                    if let Some(f) = self.faults.as_mut() {
                        f.sent(1);
                        // The NIC knows the fault map: a packet whose path needs a dead
                        // part never enters the network.
                        if let Some(fault) = f.path_blocked(&self.topo, r, d) {
                            f.refused(fault);
                            self.counters.packets_sent += 1;
                            continue;
                        }
                    }
                    let first = self.topo.route_unicast(r, r, d).ports.net_ports().next().expect("unicast with no first hop");
                    (RouteKind::Unicast, d, 0, 1, first, 1)
                }
                Dest::Broadcast { span } => {
                    let reach = self.topo.broadcast_reach(span);
                    if reach == 0 {
                        continue;
                    }
                    if let Some(f) = self.faults.as_mut() {
                        f.sent(reach);
                    }
                    let net = self.topo.net_ports();
                    let ports = self.topo.route_broadcast(r, PortId(net as u8), r, span).ports;
                    let remaining = if self.part.parts > 1 {
                        Self::part_reach(&self.topo, self.own(), &mut self.part.reach_stack, (r, net), r, span)
                    } else {
                        reach as u32
                    };
                    (RouteKind::Broadcast, r, span, remaining, ports.net_ports().next().expect("broadcast with no first hop"), reach)
                }
            };
            assert!(s.flits >= 1, "node {r}'s program sent a packet of no flits");
            let relay = matches!(s.dest, Dest::Relay(_));
            let p = NewPacket { kind, dest: dest.0, span, key: s.key.min(Header::MAX_KEY), len: s.flits, msg: s.msg, aux: s.aux, relay };
            self.nics.enqueue_new(r, p, t, remaining, first);
            self.counters.packets_sent += 1;
            self.measure.generated(t, s.flits as u64 * reach); // measure:
        }
        self.step.node_out.sends.clear();
        for i in 0..self.step.node_out.wakes.len() {
            self.step.timers.push(self.step.node_out.wakes[i], r.0, PROGRAM_TIMER);
        }
        self.step.node_out.wakes.clear();
    }

    /// Build the wait-for graph of blocked input VCs and find a cycle in it.
    fn find_deadlock(&self, t: u64) -> Deadlock {
        let r = &self.routers;
        let v = r.vcs();
        let n_iv = r.input_vcs();
        let mut edges: Vec<Vec<u32>> = vec![Vec::new(); n_iv];
        let mut blocked = 0;
        for (iv, out) in edges.iter_mut().enumerate() {
            let c = r.vc_view(iv);
            if c.stage != router::VcStage::Routed {
                continue;
            }
            // An edge to the upstream VC sending the rest of this VC's packet into it.
            let wait_upstream = |out: &mut Vec<u32>| {
                let ip = iv / v;
                if self.wiring.up[ip] != NONE
                    && let Some(owner) = r.output_owner(self.wiring.up[ip] as usize, iv % v)
                {
                    out.push(owner as u32);
                }
            };
            let Some(front) = c.front else {
                // Mid-packet with nothing buffered: it holds its output VCs (or ejection
                // channel) and waits for the rest of its packet from upstream.
                wait_upstream(out);
                continue;
            };
            blocked += 1;
            let (node, p, _) = r.ivc_location(iv);
            let head = front.is_head();
            if self.spec.switching == Switching::StoreAndForward && head && p < r.net_ports() && !c.whole_packet {
                // A store-and-forward head waits for its tail from upstream (and for the
                // credits of the whole packet downstream, below).
                wait_upstream(out);
            }
            for o in c.pending.network().net_ports() {
                let op = r.port_index(node, o);
                if c.granted.has_port(o) {
                    if let Some(ovc) = r.output_vc_of(op, iv) {
                        // A worm's flit, or any flit after the head, needs one credit; a
                        // cut-through or store-and-forward head the whole packet's.
                        let need = if self.spec.switching == Switching::Wormhole || !head { 1 } else { c.pkt_len };
                        if r.credits(op, ovc) < need && self.wiring.down[op] != NONE {
                            out.push(self.wiring.down[op] * v as u32 + ovc as u32);
                        }
                    }
                } else {
                    for ovc in 0..v {
                        if c.vc_mask & (1 << ovc) != 0
                            && let Some(owner) = r.output_owner(op, ovc)
                        {
                            out.push(owner as u32);
                        }
                    }
                }
            }
            if c.pending.contains(PortSet::LOCAL) && !c.granted.contains(PortSet::LOCAL) {
                for ch in 0..r.nic_channels() {
                    for evc in 0..r.ejection_vcs() {
                        if let Some(owner) = r.ejection_owner(node, ch, evc) {
                            out.push(owner as u32);
                        }
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
            last_move: self.step.last_move,
            flits_stuck: r.flits,
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

    /// Was router `r` or its NIC at work this cycle, or will it be in the next (probes
    /// attached)?
    pub fn is_active(&self, r: NodeId) -> bool {
        self.routers.visited(r) || self.routers.has_work(r) || self.step.in_active[r.idx()]
    }

    /// Is there still work (packets queued, flits buffered, timers)?
    pub fn busy(&self) -> bool {
        !self.idle() || !self.step.timers.is_empty()
    }

    /// The cycles the run simulated: `now`, less the cycles it went on only for probes to
    /// see the last credits come back (results never depend on whether a run is traced).
    pub fn end(&self) -> u64 {
        self.step.probe_tail_from.unwrap_or(self.now)
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
