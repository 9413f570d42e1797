//! Run one configured scenario and produce its report.

use crate::config::{Config, ConfigError, Workload};
use crate::output::Output;
use fabric::algorithms::traffic::Traffic;
use fabric::algorithms::{Bounds, Forwarding};
use fabric::{Deadlock, Ending, Fabric, Program};
use router::NodeId;
use serde::Serialize;
use std::path::Path;
use std::time::Instant;
use traces::stats::{BufferStats, Occupancy, Stats};
use traces::{FstSink, SizeLimit, Threaded, TraceOptions, Tracer, VcdSink};

mod execute;
mod program;
pub use execute::*;
pub use program::*;

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
    /// Runs with `--rtl`: the RTL routers' nodes, and why the run stopped early if it did
    /// (the first difference from the model, or the simulator's failure).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rtl: Option<crate::rtl::RtlReport>,
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
            Ending::CycleLimit | Ending::RtlStopped => 1,
            Ending::Quiescent if self.duplicate_deliveries + self.misrouted_deliveries > 0 => 1,
            // With faults, the deliveries they cost are missing: complete when every one is
            // accounted for.
            Ending::Quiescent if self.missing_deliveries > 0 && !self.faults.as_ref().is_some_and(|f| f.accounted()) => 1,
            Ending::Quiescent if !self.algorithm_failures.is_empty() => 1,
            Ending::Quiescent => 0,
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
        rtl: cfg.rtl.as_ref().map(|r| crate::rtl::RtlReport::new(r, f)),
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
        Ending::RtlStopped => {
            let why = r.rtl.as_ref().and_then(|x| x.stopped.as_deref()).unwrap_or("the RTL routers stopped");
            s += &format!("  RTL STOPPED at cycle {}: {why}\n", r.simulated_cycles)
        }
        Ending::Quiescent => {}
    }
    if let Some(x) = &r.rtl {
        s += &format!("  RTL router at {}{}\n", x.nodes_text, if x.compared { ", checked against the model every cycle" } else { "" });
        if let Some(m) = &x.mismatch
            && let (Some(vcd), Some(gtkw)) = (&m.vcd, &m.gtkw)
        {
            s += &format!("  the cycles around the difference, model and RTL side by side: {vcd} (gtkwave {gtkw})\n");
        }
        s += "  buffer statistics: the model's routers only (the RTL's buffers are its own)\n";
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
