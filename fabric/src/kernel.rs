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

mod cosim;
mod cycle;
mod deadlock;
mod placement;
mod run;
pub mod split;
mod stats;
mod timers;

pub use cosim::{
    ExternalRouters, Mismatch, PortCredit, PortFlit, Ports, PortsCycle, WINDOW_AFTER, WINDOW_BEFORE, Window as PortsWindow, WireFlit,
};
pub use deadlock::Deadlock;
pub use run::Ending;
pub use stats::{Counters, Latencies};

use crate::faults::FaultState;
use crate::measure::Measurement;
use crate::nic::Nics;
use crate::packet::PacketTable;
use crate::probe::Probe;
use crate::program::{NodeOut, Program};
use crate::scoreboard::Scoreboard;
use crate::spec::FabricSpec;
use crate::topology::Topology;
use rand::SeedableRng;
use router::{Ejection, Flit, NONE, NodeId, Routers};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use timers::Timers;

pub(crate) const WAKE: u8 = 0;
pub(crate) const PROGRAM_TIMER: u8 = 1;

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
    /// External routers co-simulated in place of the model's at some nodes ([`cosim`]).
    rtl: Option<Box<cosim::Cosim>>,
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
            rtl: None,
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
}
