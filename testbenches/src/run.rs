//! Run one configured scenario and produce its report.

use crate::config::{Config, ConfigError, Workload};
use crate::output::Output;
use fabric::algorithms::mnb_sbt::MnbSbt;
use fabric::algorithms::snb::Snb;
use fabric::algorithms::traffic::Traffic;
use fabric::algorithms::{Bounds, Forwarding};
use fabric::{Deadlock, Ending, Fabric, PortModel, Program};
use router::NodeId;
use serde::Serialize;
use std::path::Path;
use std::time::Instant;
use traces::stats::{BufferStats, Occupancy, Stats};
use traces::{FstSink, SizeLimit, Threaded, TraceOptions, Tracer, VcdSink};

/// Everything a run reports (the JSON result).
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub flitwave: &'static str,
    pub title: String,
    /// quiescent, deadlock, cycle-limit or interrupted.
    pub ending: Ending,
    /// Stopped by SIGINT or SIGTERM, at `simulated_cycles`.
    pub interrupted: bool,
    /// Cycle of the last delivery (the first cycle counts as 0; a packet delivered in
    /// cycle t was sent in cycle t - 1 over its last link in the ideal model).
    pub completion_cycles: u64,
    /// Cycles one packet takes over one link (packet length in flits, one flit per cycle per VC).
    pub slot_cycles: u64,
    /// completion_cycles / slot_cycles.
    pub slots: f64,
    /// Whole in the slot model; for a worm the routers replicate (cut-through or wormhole),
    /// (D + L − 1)/L: its head crosses D hops, its L flits follow one a cycle.
    #[serde(serialize_with = "whole_or_fraction")]
    pub lower_bound_slots: Option<f64>,
    /// One-to-all broadcasts the nodes forward: the rounds of the construction, measured
    /// from the run (the latest round any node sent in).
    pub rounds: Option<u64>,
    /// Their lower bound in rounds where the switching is wormhole or cut-through
    /// ([`round_bound`]).
    pub lower_bound_rounds: Option<u64>,
    /// `rd`: the notes' cost Σ_i (t_s + ⌈z/2^i⌉ t_d + m t_m) over the dimensions, with this
    /// router's zero-load worm latency and the NIC's start-up ([`notes_cost_cycles`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notes_cost_cycles: Option<u64>,
    /// Whole for every paper but PMNB II's fractional formula, and written as an integer
    /// when whole.
    #[serde(serialize_with = "whole_or_fraction")]
    pub paper_bound_slots: Option<f64>,
    /// slots / paper_bound_slots: how far this router is from the papers' slot model.
    pub vs_slot_model: Option<f64>,
    /// Link transmissions of the paper's algorithm (Bertsekas et al. Table 2).
    pub paper_transmissions: Option<u64>,
    /// Cycles simulated (including the drain after the last delivery).
    pub simulated_cycles: u64,
    pub link_transmissions: u64,
    pub flit_hops: u64,
    pub packets_sent: u64,
    pub expected_deliveries: u64,
    pub deliveries: u64,
    pub missing_deliveries: u64,
    pub duplicate_deliveries: u64,
    pub misrouted_deliveries: u64,
    /// Runs with faults: the faults, what each cost, and every delivery owed accounted for
    /// (delivered, lost to faults, undeliverable); the missing deliveries are theirs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub faults: Option<fabric::faults::FaultReport>,
    /// The first delivery problems, described.
    pub problems: Vec<String>,
    /// Ways the algorithm found itself broken (a schedule overrun, a collision its paper
    /// rules out); any fails the run.
    pub algorithm_failures: Vec<String>,
    /// The algorithm's own results (the dynamic scheme's delays, for instance).
    #[serde(flatten)]
    pub results: serde_json::Map<String, serde_json::Value>,
    pub max_buffer_occupancy: BufferStats,
    /// Buffer occupancy per port class, network-wide, over the measurement window (traffic)
    /// or the whole run.
    pub occupancy: Occupancy,
    /// Occupancy histograms, stall cycles and link utilization, for buffer sizing (per VC
    /// and per link with `--stats full`).
    pub stats: Stats,
    /// Most packets waiting in any node's memory (the papers' node storage).
    pub max_nic_queue: u32,
    pub deadlock: Option<Deadlock>,
    /// Traffic runs: the measurement window, cycles [`--warmup`, `--cycles`), its batches
    /// and the source queues ([`fabric::measure`]).
    pub window: Option<WindowReport>,
    /// Unicast packet latency (creation to tail ejection; not the packets of broadcasts);
    /// in traffic runs, of the packets born in the window.
    pub latency_avg_cycles: Option<f64>,
    pub latency_p99_cycles: Option<u64>,
    pub latency_max_cycles: Option<u64>,
    /// Traffic runs: the 95 % confidence half-width of `latency_avg_cycles` by batch means
    /// (None when a batch has no packet).
    pub latency_ci95_cycles: Option<f64>,
    /// Broadcast latency: from a broadcast's creation until its last destination has the
    /// tail, whichever forwarding; in traffic runs, of the broadcasts created in the window
    /// (`snb` and `mnb-sbt`: every broadcast, created in cycle 0). None without broadcasts.
    pub broadcast_latency_avg_cycles: Option<f64>,
    pub broadcast_latency_p99_cycles: Option<u64>,
    pub broadcast_latency_max_cycles: Option<u64>,
    /// Traffic runs: the 95 % confidence half-width of `broadcast_latency_avg_cycles` by
    /// batch means over the window's batches (None when a batch has no broadcast).
    pub broadcast_latency_ci95_cycles: Option<f64>,
    /// Broadcasts created (in the window) that every destination received.
    pub broadcasts_completed: Option<u64>,
    /// Traffic runs: flits ejected in the window, per node and cycle.
    pub accepted_flits_per_node_cycle: Option<f64>,
    /// Traffic runs: flits of the packets generated in the window, per node and cycle.
    pub offered_flits_per_node_cycle: Option<f64>,
    /// Traffic runs: the source queues grow without bound (more than 5 % of the offered
    /// load piles up at the sources and is missing at the sinks).
    pub saturated: Option<bool>,
    /// The waveform files written: path, estimated and written bytes, and where
    /// `--trace-limit` stopped them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub waveforms: Vec<WaveformReport>,
    pub wall_seconds: f64,
    pub config: Config,
    /// Seidel broadcasts: cost_us, model_us, vs_model, steps.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub seidel: Option<crate::cost_model::CostReport>,
}

/// A traffic run's measurement window in the report: cycles `[from, to)`, cut into batches
/// by packet birth.
#[derive(Clone, Debug, Serialize)]
pub struct WindowReport {
    pub from: u64,
    pub to: u64,
    pub batches: Vec<BatchReport>,
    /// Packets waiting at all sources at the window's end.
    pub source_queue_packets_at_end: u64,
    /// Their growth over the window, by the least-squares line through the samples at the
    /// batch boundaries.
    pub source_queue_growth_packets: f64,
}

/// One batch: the packets born in cycles `[from, to)`, their mean latency, and the packets
/// waiting at all sources at `from`.
#[derive(Clone, Debug, Serialize)]
pub struct BatchReport {
    pub from: u64,
    pub to: u64,
    pub packets: u64,
    pub latency_avg_cycles: Option<f64>,
    pub source_queue_packets: u64,
}

impl WindowReport {
    fn new(m: &fabric::measure::Summary) -> WindowReport {
        let q = &m.source_queue_packets;
        let batches = m
            .batches
            .iter()
            .zip(q)
            .map(|(b, &queued)| BatchReport {
                from: b.from,
                to: b.to,
                packets: b.packets,
                latency_avg_cycles: b.latency_avg_cycles,
                source_queue_packets: queued,
            })
            .collect();
        WindowReport {
            from: m.window.from,
            to: m.window.to,
            batches,
            source_queue_packets_at_end: *q.last().expect("a sample at every boundary"),
            source_queue_growth_packets: m.source_queue_growth_packets,
        }
    }
}

impl Report {
    /// Exit code: 0 all delivered, 1 lost/duplicated/misrouted or unfinished, 3 deadlock,
    /// 130 interrupted (as a shell reports Ctrl-C).
    pub fn exit_code(&self) -> i32 {
        match self.ending {
            Ending::Interrupted => crate::interrupt::EXIT_INTERRUPTED,
            Ending::Deadlock => 3,
            Ending::CycleLimit => 1,
            Ending::Quiescent if self.duplicate_deliveries + self.misrouted_deliveries > 0 => 1,
            // With faults, the deliveries they cost are missing: complete when every one is
            // accounted for.
            Ending::Quiescent if self.missing_deliveries > 0 && !self.faults.as_ref().is_some_and(|f| f.accounted()) => 1,
            Ending::Quiescent if !self.algorithm_failures.is_empty() => 1,
            Ending::Quiescent => 0,
        }
    }
}

/// Build the program and its bounds for a configuration.
pub fn program(cfg: &Config) -> (Box<dyn Program>, Bounds) {
    use fabric::algorithms::{accumulate::Accumulate, mnb, scatter, total_exchange, wormhole};
    let topo = cfg.spec().topology();
    let one_port = cfg.port_model == PortModel::K(1);
    let channels = cfg.port_model.limit();
    let d = topo.ndims() as u32;
    let l = cfg.packet_flits;
    match &cfg.workload {
        Workload::Algorithm { name, forwarding, root, kbcast, pmnb, dynamic, .. } => {
            let root = NodeId(*root);
            match name.as_str() {
                "pmnb-1" | "pmnb-2" | "pmnb-3" => {
                    use fabric::algorithms::pmnb;
                    let p = pmnb.as_ref().expect("pmnb settings resolved");
                    let ms = l / p.variant.pieces(d) as u16;
                    let pf = fabric::algorithms::prefix::packet_flits(p.tp_cycles as u64, l);
                    let prog = pmnb::Pmnb::new(p.variant, d, &p.active, l, p.tp_cycles as u64, hop_timing(cfg, ms), hop_timing(cfg, pf))
                        .with_handover(handover_timing(cfg, pf, ms));
                    (Box::new(prog), pmnb::bounds(p.variant, d, p.active.len() as u64, p.tp))
                }
                "dynamic" => {
                    use fabric::algorithms::dynamic::{Dynamic, DynamicSpec};
                    let c = dynamic.as_ref().expect("dynamic settings resolved");
                    let spec = DynamicSpec {
                        variant: c.pmnb,
                        d,
                        load: c.load,
                        window: c.cycles,
                        warmup: c.warmup_cycles,
                        flits: l,
                        tp_cycles: c.tp_cycles as u64,
                        seed: cfg.seed,
                        hop: hop_timing(cfg, l / c.pmnb.pieces(d) as u16),
                        prefix_hop: hop_timing(cfg, fabric::algorithms::prefix::packet_flits(c.tp_cycles as u64, l)),
                        handover: handover_timing(
                            cfg,
                            fabric::algorithms::prefix::packet_flits(c.tp_cycles as u64, l),
                            l / c.pmnb.pieces(d) as u16,
                        ),
                    };
                    (Box::new(Dynamic::new(spec)), Bounds::default())
                }
                "kbcast" => {
                    let k = kbcast.as_ref().expect("kbcast settings resolved");
                    let kb = fabric::algorithms::kbcast::KBcast::new(k.variant, d, &k.active, l, k.tp_cycles as u64, cfg.seed);
                    (Box::new(kb), fabric::algorithms::kbcast::bounds(k.variant, d, k.active.len() as u32, k.tp))
                }
                "snb" => {
                    let k_ports = match cfg.port_model {
                        PortModel::K(k) if *forwarding == Forwarding::Node => Some(k as u32),
                        _ => None,
                    };
                    let mut bounds = Snb::bounds(&topo, root, k_ports);
                    if cfg.switching != router::Switching::StoreAndForward {
                        bounds.lower = Some(match forwarding {
                            Forwarding::Router => Snb::worm_lower_bound(&topo, root, l),
                            Forwarding::Node => round_bound(cfg).expect("snb has a round bound under wormhole") as f64,
                        });
                    }
                    (Box::new(Snb::new(root, *forwarding, one_port, l)), bounds)
                }
                "rd" | "dta" | "ho-kao" => {
                    let scheme = wormhole::Scheme::parse(name).expect("a wormhole broadcast");
                    (Box::new(wormhole::WormBroadcast::new(scheme, &topo, root, channels, l)), wormhole::bounds(&topo, root, channels))
                }
                "accumulate" => (Box::new(Accumulate::new(d, root, l)), Accumulate::bounds(d)),
                "mnb" => (Box::new(mnb::Mnb::new(d, one_port, l)), mnb::bounds(d, one_port)),
                "mnb-ring" => (Box::new(mnb::MnbRing::new(d, l)), mnb::MnbRing::bounds(d)),
                "multi-accumulate" => (Box::new(mnb::MultiAccumulate::new(d, one_port, l)), mnb::bounds(d, one_port)),
                "scatter" => (Box::new(scatter::Scatter::new(d, root, l)), scatter::bounds(d, one_port)),
                "gather" => (Box::new(scatter::Gather::new(d, root, one_port, l)), scatter::bounds(d, one_port)),
                "total-exchange" => (Box::new(total_exchange::TotalExchange::new(d, one_port, l)), total_exchange::bounds(d, one_port)),
                "mnb-sbt" => (Box::new(MnbSbt::new(l, *forwarding)), MnbSbt::bounds(&topo, one_port)),
                "edn" | "dilated-diagonal" => {
                    use fabric::algorithms::{dilated_diagonal, edn, rounds};
                    let plan =
                        if name == "edn" { edn::plan(&topo, root) } else { dilated_diagonal::plan(&topo, root).expect("shape validated") };
                    (Box::new(rounds::RoundBroadcast::new(plan, rounds::round_period(&cfg.spec(), l), l)), Bounds::default())
                }
                "st" | "bst" | "rh" | "st-simple" | "bst-simple" => {
                    let c = cfg.cost.as_ref().expect("the cost model is resolved for the Seidel broadcasts");
                    let setup = c.setup(cfg.topology.clone(), &cfg.dims, cfg.nu, root.0);
                    (Box::new(fabric::algorithms::seidel::Seidel::new(&setup)), Bounds::default())
                }
                other => unreachable!("algorithm {other} passed validation"),
            }
        }
        Workload::Traffic { broadcast_rate, forwarding, .. } => {
            let mut t = Traffic::new(cfg.traffic_spec().unwrap(), topo.nodes());
            if *broadcast_rate > 0.0 {
                t = t.with_broadcasts(*broadcast_rate, *forwarding);
            }
            (Box::new(t), Bounds::default())
        }
    }
}

/// The lower bound in rounds of a one-to-all broadcast the nodes forward (`snb`, `rd`,
/// `dta`, `ho-kao`) under wormhole or cut-through switching, where a worm reaches any node
/// in one round ([`wormhole::lower_bound_rounds`]); None otherwise.
pub fn round_bound(cfg: &Config) -> Option<u64> {
    use fabric::algorithms::wormhole;
    let Workload::Algorithm { name, forwarding: Forwarding::Node, root, .. } = &cfg.workload else { return None };
    if cfg.switching == router::Switching::StoreAndForward
        || !["snb", "rd", "dta", "ho-kao", "edn", "dilated-diagonal"].contains(&name.as_str())
    {
        return None;
    }
    Some(wormhole::lower_bound_rounds(&cfg.spec().topology(), NodeId(*root), cfg.port_model.limit()))
}

/// `rd`: the notes' T(z) = Σ_{i=1}^{⌈log z⌉} (t_s + ⌈z/2^i⌉ t_d + m t_m), summed over the
/// dimensions, a round's worm costing the NIC's start-up and copy cycles plus this router's
/// zero-load latency over ⌈z/2^i⌉ hops (t_d its cycles a hop, m t_m the flits after the
/// head). Exact for a torus or a mesh with the source in the corner; elsewhere the worms
/// are shorter.
pub fn notes_cost_cycles(cfg: &Config) -> Option<u64> {
    let Workload::Algorithm { name, .. } = &cfg.workload else { return None };
    if name != "rd" {
        return None;
    }
    let start = cfg.startup_cycles + cfg.copy_cycles_per_flit * cfg.packet_flits as u64;
    let worm = |hops: u64| start + cfg.pipeline.zero_load_latency(cfg.switching, hops, cfg.packet_flits as u64);
    Some(cfg.dims.iter().flat_map(|&z| fabric::algorithms::wormhole::rd_round_hops(z)).map(|h| worm(h as u64)).sum())
}

/// How this configuration's router moves pieces of `piece` flits between neighbours:
/// the cycles a lone piece takes beyond its length (0 on the ideal router) and the
/// sustained interval between back-to-back pieces on one link (`piece` when the buffers
/// cover the credit round trip). Measured on a two-node fabric with the same router; the
/// synchronous algorithms stretch their steps by them.
pub fn hop_timing(cfg: &Config, piece: u16) -> (u64, u64) {
    let one = burst_delivery(cfg, &[piece]);
    let burst = 16;
    let gap = (burst_delivery(cfg, &vec![piece; burst + 1]) - one).div_ceil(burst as u64);
    (one - piece as u64, gap.max(piece as u64))
}

/// The cycles a piece of `piece` flits sent right after a prefix packet of `prefix` flits
/// over one link arrives later than alone: how soon after the prefix packet the link, and
/// the buffer behind it, take the piece (the prefix packet's own length when the buffer
/// holds both; more when it holds only the piece).
pub fn handover_timing(cfg: &Config, prefix: u16, piece: u16) -> u64 {
    burst_delivery(cfg, &[prefix, piece]) - burst_delivery(cfg, &[piece])
}

/// On a 1-cube of this configuration's router, node 0 sends packets of the given lengths to
/// node 1 at cycle 0, in order: the cycle of the last delivery.
fn burst_delivery(cfg: &Config, pieces: &[u16]) -> u64 {
    struct Burst {
        pieces: Vec<u16>,
    }
    impl Program for Burst {
        fn start(&mut self, cx: &mut fabric::NodeCtx<'_>) {
            if cx.node.0 == 0 {
                for &flits in &self.pieces {
                    let dest = fabric::Dest::Node(NodeId(1));
                    cx.send(fabric::Send { dest, msg: u32::MAX, aux: 0, key: 0, flits });
                }
            }
        }
        fn receive(&mut self, _: &mut fabric::NodeCtx<'_>, _: &fabric::Received) {}
    }
    let mut spec = cfg.spec();
    spec.kind = fabric::TopologyKind::Hypercube;
    spec.sizes = vec![1];
    spec.ports = PortModel::All;
    let mut f = Fabric::new(&spec, Box::new(Burst { pieces: pieces.to_vec() }));
    f.run();
    f.counters.last_delivery
}

/// Build the fabric for a configuration.
pub fn build(cfg: &Config) -> (Fabric, Bounds) {
    let (prog, bounds) = program(cfg);
    (Fabric::new(&cfg.spec(), prog), bounds)
}

/// [`build`], stopping at the cycle it is in when the process is interrupted
/// ([`crate::interrupt`]): the fabric of `flitwave run` (the commands of many runs let
/// their runs finish).
fn build_stoppable(cfg: &Config) -> (Fabric, Bounds) {
    let (mut f, bounds) = build(cfg);
    f.stop_when(crate::interrupt::flag());
    (f, bounds)
}

/// Can the run be split between `cfg.threads` threads? Only if its program's nodes keep no
/// shared state ([`fabric::Program::splits`]): synthetic traffic, and the broadcasts
/// (node- or router-forwarded) and personalized communication of the hypercube papers.
pub fn check_threads(cfg: &Config) -> Result<(), ConfigError> {
    if cfg.threads <= 1 || program(cfg).0.splits() {
        return Ok(());
    }
    let what = match &cfg.workload {
        Workload::Algorithm { name, .. } => name.clone(),
        Workload::Traffic { .. } => "this run".to_string(),
    };
    Err(ConfigError(format!(
        "threads: {}: 1 for {what} (its program keeps state or results shared between nodes); runs split between threads: \
         --traffic, snb, mnb-sbt (node- or router-forwarded), mnb, mnb-ring, scatter, gather, total-exchange, and pmnb-1, pmnb-2, pmnb-3",
        cfg.threads
    )))
}

/// Run a configuration to the end.
pub fn run(cfg: &Config) -> Report {
    if cfg.threads > 1 {
        if let Err(e) = check_threads(cfg) {
            panic!("{e}");
        }
        let (f, ending, wall) = run_split(cfg, false, build);
        return report(cfg, &f, program(cfg).1, ending, wall);
    }
    let (mut f, bounds) = build(cfg);
    let start = Instant::now();
    let ending = f.run();
    let wall = start.elapsed().as_secs_f64();
    report(cfg, &f, bounds, ending, wall)
}

/// Run a configuration split between `cfg.threads` threads: the fabric joined after the
/// run, how it ended and the wall time (each thread builds its part, in the time). With
/// `progress`, the progress line of [`run_fabric`].
fn run_split(cfg: &Config, progress: bool, build: fn(&Config) -> (Fabric, Bounds)) -> (Fabric, Ending, f64) {
    let start = Instant::now();
    let (f, ending) = if progress {
        let mut line = ProgressLine::new(cfg);
        let every = std::time::Duration::from_millis(200);
        let r = fabric::kernel::split::run_split_watched(
            cfg.threads as usize,
            || build(cfg).0,
            every,
            |p| line.show(p.now, p.deliveries, p.expected),
        );
        line.clear();
        r
    } else {
        fabric::kernel::split::run_split(cfg.threads as usize, || build(cfg).0)
    };
    (f, ending, start.elapsed().as_secs_f64())
}

/// Run `f` to the end; with `progress`, a status line on standard error for runs that take
/// more than a second (redrawn five times a second, cleared at the end): deliveries so far
/// against those expected so far (for traffic, cycles against `--cycles`, then the drain),
/// the simulated cycle and the simulation rate.
fn run_fabric(cfg: &Config, f: &mut Fabric, progress: bool) -> Ending {
    if !progress {
        return f.run();
    }
    let mut line = ProgressLine::new(cfg);
    let ending = f.run_watched(std::time::Duration::from_millis(200), |f| {
        let c = f.scoreboard.counts();
        line.show(f.now, c.deliveries, c.expected);
    });
    line.clear();
    ending
}

/// The progress line of a run.
struct ProgressLine {
    start: Instant,
    traffic_cycles: Option<u64>,
    bar: Option<indicatif::ProgressBar>,
}

impl ProgressLine {
    fn new(cfg: &Config) -> ProgressLine {
        let traffic_cycles = match cfg.workload {
            Workload::Traffic { cycles, .. } => Some(cycles),
            _ => None,
        };
        ProgressLine { start: Instant::now(), traffic_cycles, bar: None }
    }

    /// The run is at cycle `now` with `deliveries` of the `expected` so far made.
    fn show(&mut self, now: u64, deliveries: u64, expected: u64) {
        let elapsed = self.start.elapsed();
        if elapsed.as_secs_f64() < 1.0 {
            return;
        }
        let rate = now as f64 / elapsed.as_secs_f64();
        let (pos, len, msg) = match self.traffic_cycles {
            Some(cycles) if now < cycles => (now, cycles, format!("cycles, {deliveries} deliveries, {rate:.0} cycles/s")),
            _ => {
                let phase = if self.traffic_cycles.is_some() { "draining, " } else { "" };
                (deliveries, expected, format!("deliveries, {phase}cycle {now}, {rate:.0} cycles/s"))
            }
        };
        match &self.bar {
            Some(b) => {
                b.set_length(len);
                b.set_message(msg);
                b.set_position(pos);
            }
            None => {
                let style = indicatif::ProgressStyle::with_template("  [{elapsed_precise}] {wide_bar} {pos}/{len} {msg}")
                    .expect("a valid template");
                let b = indicatif::ProgressBar::new(len).with_style(style).with_elapsed(elapsed).with_message(msg).with_position(pos);
                b.tick();
                self.bar = Some(b);
            }
        }
    }

    fn clear(self) {
        if let Some(b) = self.bar {
            b.finish_and_clear();
        }
    }
}

/// A slot count: an integer when whole (as the papers' bounds mostly are), else a fraction.
fn whole_or_fraction<S: serde::Serializer>(x: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match *x {
        Some(v) if v.fract() == 0.0 && (0.0..9.0e15).contains(&v) => s.serialize_u64(v as u64),
        Some(v) => s.serialize_f64(v),
        None => s.serialize_none(),
    }
}

/// A slot count as the summary shows it: `-`, a whole number, or a fraction.
pub fn slots_text(x: Option<f64>) -> String {
    x.map_or("-".to_string(), crate::plot::tick_label)
}

/// One waveform file of a run.
#[derive(Clone, Debug, Serialize)]
pub struct WaveformReport {
    pub path: String,
    /// Estimated before the run from the expected link traffic ([`estimate_waveform_bytes`]).
    pub estimated_bytes: u64,
    pub bytes: u64,
    pub limit_bytes: Option<u64>,
    /// `--trace-limit` reached: nothing was written from this cycle on (the run went on).
    pub stopped_at_cycle: Option<u64>,
}

/// VCD bytes per flit crossing a link in a full trace (its link's, credits', buffers' and
/// allocators' value changes), per traced cycle (the clock), and per signal (the header);
/// an FST takes about a fifth of that. Measured on meshes and hypercubes under
/// traffic and broadcasts (docs/performance.md).
const VCD_BYTES_PER_FLIT_HOP: f64 = 80.0;
const VCD_BYTES_PER_CYCLE: f64 = 24.0;
const VCD_BYTES_PER_SIGNAL: f64 = 48.0;
const FST_SHARE: f64 = 0.2;

/// A waveform's size estimated before the run: the clock over the traced cycles, and the
/// value changes of the flits expected over the traced nodes' links in the traced window
/// (traffic: offered flits × mean distance; algorithms: the paper's transmissions, or one
/// per node, times the packet's flits).
pub fn estimate_waveform_bytes(cfg: &Config, f: &Fabric, bounds: &Bounds, signals: usize, fst: bool) -> u64 {
    let topo = &f.topo;
    let n = topo.nodes();
    let flits = cfg.packet_flits as f64;
    let (cycles, hops) = match &cfg.workload {
        Workload::Traffic { offered_flits, cycles, .. } => {
            // Mean distance over a sample of pairs.
            let step = |k: usize| (n / k).max(1);
            let (mut sum, mut pairs) = (0u64, 0u64);
            for a in (0..n).step_by(step(64)) {
                for b in (0..n).step_by(step(256)) {
                    sum += topo.distance(NodeId(a as u32), NodeId(b as u32)) as u64;
                    pairs += 1;
                }
            }
            let mean = sum as f64 / pairs.max(1) as f64;
            let drain = topo.diameter() as f64 + 2.0 * flits;
            (*cycles as f64 + drain, offered_flits * n as f64 * *cycles as f64 * mean)
        }
        Workload::Algorithm { .. } => {
            let slots = bounds.paper.or(bounds.lower).unwrap_or(topo.diameter() as f64);
            let transmissions = bounds.transmissions.map_or(n.saturating_sub(1) as f64, |t| t as f64);
            (slots * flits + topo.diameter() as f64 + 2.0 * flits, transmissions * flits)
        }
    };
    let out = &cfg.outputs;
    let traced = out.trace_nodes.as_ref().map_or(n, |v| v.len()) as f64 / n as f64;
    let (from, to) = (out.trace_from as f64, out.trace_to.map_or(f64::INFINITY, |t| t as f64 + 1.0));
    let window = (to.min(cycles) - from).max(0.0);
    let share = if cycles > 0.0 { window / cycles } else { 0.0 };
    let changes = VCD_BYTES_PER_CYCLE * window + VCD_BYTES_PER_FLIT_HOP * hops * traced * share;
    let vcd = VCD_BYTES_PER_SIGNAL * signals as f64 + changes;
    let bytes = if fst { vcd * FST_SHARE } else { vcd };
    bytes as u64
}

/// "12.3 MB" (10^6 bytes), "850 kB", "900 bytes".
pub fn megabytes(bytes: u64) -> String {
    match bytes {
        0..1_000 => format!("{bytes} bytes"),
        1_000..1_000_000 => format!("{:.0} kB", bytes as f64 / 1e3),
        _ => format!("{:.1} MB", bytes as f64 / 1e6),
    }
}

/// The outputs of a run (`json`: `--json`'s path, if any) as `(field, path)`, the save
/// file's translate filters included ([`crate::cli::RunArgs::check_outputs`]).
pub fn output_paths<'a>(json: Option<&'a str>, out: &'a crate::config::Outputs) -> Vec<(&'a str, String)> {
    let side = out.gtkw.iter().flat_map(|g| traces::gtkw::side_files(Path::new(g))).map(|p| ("gtkw", p.display().to_string()));
    let named = [("json", json), ("vcd", out.vcd.as_deref()), ("fst", out.fst.as_deref()), ("gtkw", out.gtkw.as_deref())];
    let mut v: Vec<(&str, String)> = named.into_iter().filter_map(|(f, p)| Some((f, p?.to_string()))).collect();
    v.extend(side);
    v.extend(out.stats_csv.as_deref().map(|p| ("stats-csv", p.to_string())));
    v
}

/// A run's report and its output files, written but not yet renamed into place
/// ([`crate::output::commit_all`]).
pub struct Ran {
    pub report: Report,
    pub outputs: Vec<Output>,
}

/// Begin the output `path` of `field`, if asked for.
fn begin(field: &str, path: &Option<String>) -> Result<Option<Output>, ConfigError> {
    path.as_ref().map(|p| Output::begin(field, p)).transpose()
}

/// Run a configuration and write the waveforms, save file and statistics it asks for, each
/// to its temporary file (all begun before the run, so a bad path is refused before it).
/// With `progress`, a status line on standard error while a long run goes on.
pub fn run_with_outputs(cfg: &Config, progress: bool) -> Result<Ran, ConfigError> {
    let out = &cfg.outputs;
    check_threads(cfg)?;
    let mut csv = begin("stats-csv", &out.stats_csv)?;
    if cfg.threads > 1 {
        // No waveforms (checked with the configuration).
        let (f, ending, wall) = run_split(cfg, progress, build_stoppable);
        write_stats_csv(&f, &mut csv);
        return Ok(Ran { report: report(cfg, &f, program(cfg).1, ending, wall), outputs: csv.into_iter().collect() });
    }
    let (vcd, fst) = (begin("vcd", &out.vcd)?, begin("fst", &out.fst)?);
    let mut gtkw: Vec<Output> = match &out.gtkw {
        Some(g) => std::iter::once(std::path::PathBuf::from(g))
            .chain(traces::gtkw::side_files(Path::new(g)))
            .map(|p| Output::begin("gtkw", p))
            .collect::<Result<_, _>>()?,
        None => Vec::new(),
    };
    let (mut f, bounds) = build_stoppable(cfg);
    let title = cfg.title();
    let opts = TraceOptions {
        nodes: out.trace_nodes.clone(),
        from: out.trace_from,
        to: out.trace_to.unwrap_or(u64::MAX),
        clock_ps: out.clock_ps(),
    };
    let limit = || out.trace_limit_bytes.map(SizeLimit::new);
    let refused = |field: &str, o: &Output, e: std::io::Error| ConfigError(format!("{field}: {}: cannot write it: {e}", o.shown()));
    // Per waveform: its output, estimate and limit.
    let mut waves: Vec<(Output, u64, Option<SizeLimit>)> = Vec::new();
    let mut probes: Vec<Tracer> = Vec::new();
    for (field, o) in [("vcd", vcd), ("fst", fst)] {
        let Some(o) = o else { continue };
        let is_fst = field == "fst";
        let l = limit();
        let sink: Box<dyn traces::WaveSink + Send> = if is_fst {
            let mut s = FstSink::create(o.path(), out.clock_ps()).map_err(|e| refused(field, &o, e))?;
            if let Some(l) = &l {
                s.set_limit(l.clone());
            }
            Box::new(s)
        } else {
            let mut s = VcdSink::create(o.path(), out.clock_ps(), &title).map_err(|e| refused(field, &o, e))?;
            if let Some(l) = &l {
                s.set_limit(l.clone());
            }
            Box::new(s)
        };
        let mut t = Tracer::new(&f, opts.clone(), Box::new(Threaded::new(sink))).map_err(|e| refused(field, &o, e))?;
        // The save file points at the first dump.
        if probes.is_empty()
            && let Some(g) = &out.gtkw
        {
            for (file, (_, text)) in gtkw.iter_mut().zip(traces::gtkw::save_files(Path::new(g), Path::new(o.shown()), &t, &title)) {
                file.write(text.as_bytes());
                if let Some(e) = file.error() {
                    return Err(ConfigError(format!("gtkw: {}: cannot write it: {e}", file.shown())));
                }
            }
        }
        let est = estimate_waveform_bytes(cfg, &f, &bounds, t.signals.len(), is_fst);
        if out.announce {
            let cap = l.as_ref().map_or(String::new(), |l| format!(" (--trace-limit {})", megabytes(l.bytes)));
            eprintln!("waveform {}: about {} estimated{cap}", o.shown(), megabytes(est));
        }
        if let Some(l) = &l {
            t.set_limit(l.clone());
        }
        waves.push((o, est, l));
        probes.push(t);
    }
    for t in probes {
        f.add_probe(Box::new(t));
    }
    let start = Instant::now();
    let ending = run_fabric(cfg, &mut f, progress);
    let wall = start.elapsed().as_secs_f64();
    for (probe, (o, _, _)) in f.take_probes().into_iter().zip(&mut waves) {
        let tracer = probe.as_any().downcast::<Tracer>().expect("the probes are tracers");
        if let Err(e) = tracer.finish(f.now) {
            o.fail(e);
        }
    }
    write_stats_csv(&f, &mut csv);
    let mut r = report(cfg, &f, bounds, ending, wall);
    r.waveforms = waves
        .iter()
        .map(|(o, estimated_bytes, l)| WaveformReport {
            bytes: std::fs::metadata(o.path()).map_or(0, |m| m.len()),
            path: o.shown().to_string(),
            estimated_bytes: *estimated_bytes,
            limit_bytes: l.as_ref().map(|l| l.bytes),
            stopped_at_cycle: l.as_ref().and_then(|l| l.stopped_at_cycle()),
        })
        .collect();
    let outputs = waves.into_iter().map(|(o, _, _)| o).chain(gtkw).chain(csv).collect();
    Ok(Ran { report: r, outputs })
}

/// Write the statistics CSV asked for into its output, after the run.
fn write_stats_csv(f: &Fabric, csv: &mut Option<Output>) {
    if let Some(o) = csv
        && let Err(e) = Stats::write_csv(f, o.path())
    {
        o.fail(e);
    }
}

/// The report of a finished fabric.
pub fn report(cfg: &Config, f: &Fabric, bounds: Bounds, ending: Ending, wall_seconds: f64) -> Report {
    let c = f.scoreboard.counts();
    let slot_cycles = cfg.packet_flits as u64;
    let completion = f.counters.last_delivery;
    let mut problems = f.scoreboard.problems.clone();
    if c.missing > 0 {
        let mut listed = f.scoreboard.describe_missing(&f.topo, 11);
        let cut = listed.len() > 10;
        listed.truncate(10);
        problems.extend(listed);
        if cut {
            problems.push(format!("(the first 10 of the missing deliveries' descriptions; {} missing in all)", c.missing));
        }
    }
    let complete = ending == Ending::Quiescent && c.missing == 0;
    let m = match cfg.workload {
        Workload::Traffic { .. } => fabric::measure::summary(f),
        _ => None,
    };
    // A traffic run's latencies are those of the packets born in its window.
    let latencies = if m.is_some() { &f.measure.latencies } else { &f.latencies };
    let b = fabric::measure::broadcasts(f.scoreboard.timings(), f.measure.window());
    let mut results = match f.program().report() {
        Some(serde_json::Value::Object(m)) => m,
        _ => serde_json::Map::new(),
    };
    Report {
        flitwave: env!("CARGO_PKG_VERSION"),
        title: cfg.title(),
        interrupted: ending == Ending::Interrupted,
        ending,
        completion_cycles: completion,
        slot_cycles,
        slots: completion as f64 / slot_cycles as f64,
        lower_bound_slots: bounds.lower,
        paper_bound_slots: bounds.paper,
        // Only for a run that completed: a stopped one has no completion time to compare.
        vs_slot_model: bounds
            .paper
            .filter(|&p| p > 0.0 && matches!(cfg.workload, Workload::Algorithm { .. }))
            .filter(|_| complete)
            .map(|p| completion as f64 / slot_cycles as f64 / p),
        paper_transmissions: bounds.transmissions,
        simulated_cycles: f.end(),
        link_transmissions: f.counters.link_transmissions,
        flit_hops: f.counters.flit_hops,
        packets_sent: f.counters.packets_sent,
        expected_deliveries: c.expected,
        deliveries: c.deliveries,
        missing_deliveries: c.missing,
        duplicate_deliveries: c.duplicates,
        misrouted_deliveries: c.misrouted,
        faults: f.faults.as_ref().map(|s| s.report()),
        problems,
        algorithm_failures: f.program().failures(),
        rounds: results.remove("rounds").and_then(|r| r.as_u64()),
        lower_bound_rounds: round_bound(cfg),
        notes_cost_cycles: notes_cost_cycles(cfg),
        results,
        max_buffer_occupancy: BufferStats::from_fabric(f, cfg.stats),
        occupancy: Occupancy::from_fabric(f),
        stats: Stats::from_fabric(f, cfg.stats),
        max_nic_queue: f.nics.max_queue,
        deadlock: f.deadlock.clone(),
        window: m.as_ref().map(WindowReport::new),
        latency_avg_cycles: latencies.mean(),
        latency_p99_cycles: latencies.quantile(0.99),
        latency_max_cycles: latencies.max(),
        latency_ci95_cycles: m.as_ref().and_then(|m| m.latency_ci95_cycles),
        broadcast_latency_avg_cycles: b.as_ref().and_then(|b| b.latencies.mean()),
        broadcast_latency_p99_cycles: b.as_ref().and_then(|b| b.latencies.quantile(0.99)),
        broadcast_latency_max_cycles: b.as_ref().and_then(|b| b.latencies.max()),
        broadcast_latency_ci95_cycles: b.as_ref().and_then(|b| b.latency_ci95_cycles),
        broadcasts_completed: b.as_ref().map(|b| b.completed),
        accepted_flits_per_node_cycle: m.as_ref().map(|m| m.accepted_flits_per_node_cycle),
        offered_flits_per_node_cycle: m.as_ref().map(|m| m.offered_flits_per_node_cycle),
        saturated: m.as_ref().map(|m| m.saturated),
        waveforms: Vec::new(),
        wall_seconds,
        config: cfg.clone(),
        seidel: cost_report(cfg, completion),
    }
}

/// The simulated and the model's cost of a Seidel broadcast.
fn cost_report(cfg: &Config, completion: u64) -> Option<crate::cost_model::CostReport> {
    let c = cfg.cost.as_ref()?;
    let Workload::Algorithm { root, .. } = &cfg.workload else { return None };
    let cost_us = completion as f64 * c.cycle_us;
    let model_us = c.model_us(&cfg.topology, &cfg.dims, cfg.nu);
    let steps = fabric::algorithms::seidel::plan::build(&c.setup(cfg.topology.clone(), &cfg.dims, cfg.nu, *root)).steps;
    Some(crate::cost_model::CostReport { cost_us, model_us, vs_model: cost_us / model_us, steps })
}

/// A few human-readable lines.
pub fn summary(r: &Report) -> String {
    let mut s = format!("flitwave: {}\n", r.title);
    let cfg = &r.config;
    s += &format!(
        "  router {} ({}), {} VCs x {} flits{}, ports {}, {}-flit packets, nu {}\n",
        cfg.router,
        cfg.switching.name(),
        cfg.vcs,
        cfg.buffer_flits,
        if cfg.inject_buffer_flits == cfg.buffer_flits { String::new() } else { format!(" (injection {})", cfg.inject_buffer_flits) },
        cfg.ports,
        cfg.packet_flits,
        cfg.nu
    );
    match r.ending {
        Ending::Deadlock => {
            let d = r.deadlock.as_ref().unwrap();
            s += &format!(
                "  DEADLOCK at cycle {} (nothing moved since cycle {}), {} flits stuck in {} VCs\n",
                d.cycle, d.last_move, d.flits_stuck, d.blocked_vcs
            );
            if !d.wait_for_cycle.is_empty() {
                s += &format!("  wait-for cycle: {} -> (back to the first)\n", d.wait_for_cycle.join(" -> "));
            }
        }
        Ending::CycleLimit => s += &format!("  STOPPED at the cycle limit {} with work left\n", r.simulated_cycles),
        Ending::Interrupted => {
            s += &format!("  INTERRUPTED at cycle {}: the results and outputs are those of the cycles run\n", r.simulated_cycles)
        }
        Ending::Quiescent => {}
    }
    if let Some(c) = &r.seidel {
        s += &format!(
            "  cost {:.1} us simulated, {:.1} us by the model ({:.3}x); {} steps; {} B message in {}-byte flits, cycle {} us\n",
            c.cost_us,
            c.model_us,
            c.vs_model,
            c.steps,
            cfg.cost.as_ref().map_or(0, |k| k.message_bytes),
            cfg.cost.as_ref().map_or(0, |k| k.flit_bytes),
            cfg.cost.as_ref().map_or(0.0, |k| k.cycle_us)
        );
    }
    let complete = r.ending == Ending::Quiescent && r.missing_deliveries == 0;
    if r.seidel.is_some() {
        // Its measure is the cost in us, above; slots of its flits mean nothing.
        s += &format!("  {} in {} cycles\n", if complete { "completed" } else { "last delivery" }, r.completion_cycles);
    } else if matches!(cfg.workload, Workload::Algorithm { .. }) {
        let when = if complete || r.deliveries > 0 {
            let what = if complete { "completed in" } else { "last delivery after" };
            format!("{what} {} cycles = {} slots", r.completion_cycles, slots_text(Some(r.slots)))
        } else {
            "no delivery".to_string()
        };
        s += &format!(
            "  {when} (paper {}, lower bound {}{})\n",
            slots_text(r.paper_bound_slots),
            slots_text(r.lower_bound_slots),
            r.vs_slot_model.filter(|&v| v != 1.0).map_or(String::new(), |v| format!("; {v:.2}x the slot model"))
        );
        if r.rounds.is_some() || r.lower_bound_rounds.is_some() {
            let text = |x: Option<u64>| x.map_or("-".to_string(), |x| x.to_string());
            s += &format!(
                "  rounds {} (lower bound {}){}\n",
                text(r.rounds),
                text(r.lower_bound_rounds),
                r.notes_cost_cycles.map_or(String::new(), |c| format!("; the notes' T(z) {c} cycles"))
            );
        }
    } else {
        // Traffic: the window's throughput and saturation, then its latency.
        if let Some(w) = &r.window {
            s += &format!(
                "  window cycles [{}, {}): accepted {:.4} of {:.4} offered flits/node/cycle; saturated: {}\n",
                w.from,
                w.to,
                r.accepted_flits_per_node_cycle.unwrap_or(0.0),
                r.offered_flits_per_node_cycle.unwrap_or(0.0),
                if r.saturated == Some(true) { "YES (the source queues grow)" } else { "no" }
            );
        }
        let avg = match (r.latency_avg_cycles, r.latency_ci95_cycles, &r.window) {
            (None, _, _) => "-".to_string(),
            (Some(a), Some(h), Some(w)) => format!("{a:.1} ± {h:.1} cycles (95 % CI, {} batches)", w.batches.len()),
            (Some(a), None, Some(_)) => format!("{a:.1} cycles (no CI: a batch has no packet)"),
            (Some(a), _, None) => format!("{a:.1} cycles"),
        };
        let broadcasts = matches!(cfg.workload, Workload::Traffic { broadcast_rate, .. } if broadcast_rate > 0.0);
        s += &format!(
            "  {}latency avg {avg}, p99 {} cycles; {} after {} cycles\n",
            if broadcasts { "unicast " } else { "" },
            r.latency_p99_cycles.map_or("-".to_string(), |x| x.to_string()),
            if r.ending == Ending::Quiescent { "drained" } else { "stopped" },
            r.simulated_cycles
        );
        if broadcasts {
            let avg = match (r.broadcast_latency_avg_cycles, r.broadcast_latency_ci95_cycles, &r.window) {
                (None, _, _) => "-".to_string(),
                (Some(a), Some(h), Some(w)) => format!("{a:.1} ± {h:.1} cycles (95 % CI, {} batches)", w.batches.len()),
                (Some(a), None, Some(_)) => format!("{a:.1} cycles (no CI: a batch has no broadcast)"),
                (Some(a), _, None) => format!("{a:.1} cycles"),
            };
            s += &format!(
                "  broadcast latency (creation to last delivery) avg {avg}, p99 {} cycles; {} broadcasts\n",
                r.broadcast_latency_p99_cycles.map_or("-".to_string(), |x| x.to_string()),
                r.broadcasts_completed.unwrap_or(0)
            );
        }
    }
    s += &format!(
        "  {} link transmissions{}, {} flit-hops; {}/{} deliveries, {} missing, {} duplicate, {} misrouted\n",
        r.link_transmissions,
        r.paper_transmissions.map_or(String::new(), |p| format!(" (paper {p})")),
        r.flit_hops,
        r.deliveries,
        r.expected_deliveries,
        r.missing_deliveries,
        r.duplicate_deliveries,
        r.misrouted_deliveries
    );
    if let Some(f) = &r.faults {
        s += &format!(
            "  faults: {} ({}); of {} deliveries owed, {} delivered, {} lost to faults, {} undeliverable{}\n",
            f.faults.len(),
            f.faults.iter().take(3).map(|c| c.fault.as_str()).collect::<Vec<_>>().join(", ")
                + if f.faults.len() > 3 { ", ..." } else { "" },
            f.sent,
            f.delivered,
            f.lost_to_faults,
            f.undeliverable,
            if f.accounted() { String::new() } else { format!(", {} still in the network", f.in_network) }
        );
        if r.missing_deliveries > 0 && f.accounted() {
            s += "  incomplete: the missing deliveries are the faults' (the program does not route around them)\n";
        }
    }
    if let Some(stable) = r.results.get("stable").and_then(|v| v.as_bool()) {
        // The dynamic scheme: what was served, how long it waited, whether the backlog grew.
        let g = |k: &str| r.results.get(k).and_then(|v| v.as_f64());
        let ci = r.results.get("avg_delay_ci95").and_then(|v| Some((v.get(0)?.as_f64()?, v.get(1)?.as_f64()?)));
        s += &format!(
            "  {} of {} requests served, {} never; average delay {} slots{}; mean backlog {:.1}; {}\n",
            g("served").unwrap_or(0.0),
            g("arrivals").unwrap_or(0.0),
            g("unserved").unwrap_or(0.0),
            g("avg_delay_slots").map_or("-".to_string(), |a| format!("{a:.2}")),
            ci.map_or(String::new(), |(lo, hi)| format!(" (95% CI {lo:.2} to {hi:.2})")),
            g("mean_backlog").unwrap_or(0.0),
            if stable { "stable" } else { "UNSTABLE (the backlog grows)" }
        );
    }
    for p in r.problems.iter().take(5) {
        s += &format!("  ! {p}\n");
    }
    if r.problems.len() > 5 {
        s += &format!("  ! ... {} more in the JSON's problems\n", r.problems.len() - 5);
    }
    for p in &r.algorithm_failures {
        s += &format!("  ! {p}\n");
    }
    let out = &cfg.outputs;
    if out.tracing() && out.trace_from >= r.simulated_cycles {
        s += &format!(
            "  note: the waveform window starts at cycle {} (--trace-from), after the run's last cycle {}: it holds only the signals' final values\n",
            out.trace_from,
            r.simulated_cycles.saturating_sub(1)
        );
    }
    for w in &r.waveforms {
        s += &format!("  waveform {}: {} (estimated {})", w.path, megabytes(w.bytes), megabytes(w.estimated_bytes));
        if let (Some(c), Some(l)) = (w.stopped_at_cycle, w.limit_bytes) {
            s += &format!("; stopped at cycle {c}: --trace-limit {} reached (the run went on)", megabytes(l));
        }
        s += "\n";
    }
    let o = &r.occupancy;
    s += &format!(
        "  buffer occupancy over cycles [{}, {}): network p99 {} flits (mean {:.2}, max {}), injection p99 {} (max {}); max NIC queue {} packets; {:.3} s\n",
        o.from,
        o.to,
        o.network.p99_flits,
        o.network.mean_flits,
        o.network.max_flits,
        o.injection.p99_flits,
        o.injection.max_flits,
        r.max_nic_queue,
        r.wall_seconds
    );
    s
}
