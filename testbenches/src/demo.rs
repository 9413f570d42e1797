//! The built-in demo: what `flitwave` with no arguments runs. A few small scenarios that
//! show what the tool does, each written as JSON under the output folder, with a summary.

use crate::config::{Config, ConfigError, Raw};
use crate::run;
use std::path::Path;

/// One demo scenario: file stem, what it shows, and its settings (flag name, value).
pub struct DemoScenario(pub &'static str, pub &'static str, pub &'static [(&'static str, &'static str)]);

/// The demo scenarios.
pub const SCENARIOS: &[DemoScenario] = &[
    DemoScenario("snb-hypercube6-allport", "binomial-tree broadcast, all-port: d slots", &[("topology", "hypercube"), ("dims", "6")]),
    DemoScenario(
        "snb-hypercube6-oneport",
        "the same tree, one-port, highest dimension first: still d slots",
        &[("topology", "hypercube"), ("dims", "6"), ("ports", "one")],
    ),
    DemoScenario(
        "snb-hypercube6-multicast",
        "one packet replicated by the routers (hardware multicast)",
        &[("topology", "hypercube"), ("dims", "6"), ("forwarding", "router")],
    ),
    DemoScenario(
        "snb-mesh8x8-allport",
        "dimension-order tree from (3,4): the root's eccentricity",
        &[("topology", "mesh"), ("dims", "8x8"), ("root", "3,4")],
    ),
    DemoScenario(
        "snb-mesh8x8-oneport",
        "the same tree, one-port, farthest-first",
        &[("topology", "mesh"), ("dims", "8x8"), ("root", "3,4"), ("ports", "one")],
    ),
    DemoScenario(
        "mnb-hypercube6",
        "optimal multinode broadcast (Bertsekas et al.): ceil(63/6) = 11 slots",
        &[("topology", "hypercube"), ("dims", "6"), ("algorithm", "mnb")],
    ),
    DemoScenario(
        "kbcast-hypercube6",
        "12 simultaneous broadcasts, prefix ranking and d edge-disjoint trees (Stamoulis & Tsitsiklis)",
        &[("topology", "hypercube"), ("dims", "6"), ("algorithm", "kbcast"), ("active-count", "12")],
    ),
    DemoScenario(
        "pmnb3-hypercube6",
        "partial multinode broadcast of 20 packets, no splitting (Varvarigos & Bertsekas IV-C)",
        &[("topology", "hypercube"), ("dims", "6"), ("algorithm", "pmnb-3"), ("active-count", "20")],
    ),
    DemoScenario(
        "bst-linear16",
        "Seidel's bidirectional spanning tree, 16-node array, 4 KB, Intel Delta costs (cost_us vs model_us)",
        &[("topology", "linear"), ("dims", "16"), ("algorithm", "bst"), ("message-bytes", "4096")],
    ),
    DemoScenario(
        "uniform-mesh8x8",
        "uniform traffic, 0.1 flits/node/cycle, wormhole, realistic router",
        &[("topology", "mesh"), ("dims", "8x8"), ("traffic", "uniform"), ("rate", "0.025"), ("cycles", "5000")],
    ),
];

/// The demo's waveform: a broadcast the routers replicate, small enough to read cycle by
/// cycle in GTKWave (`<stem>.fst` and `<stem>.gtkw`).
pub const WAVEFORM: DemoScenario = DemoScenario(
    "snb-mesh4x4-router-wave",
    "one 4-flit worm replicated by realistic routers, as a waveform (FST + GTKWave save file)",
    &[("topology", "mesh"), ("dims", "4x4"), ("forwarding", "router"), ("router", "realistic"), ("switching", "wh"), ("packet-flits", "4")],
);

pub fn run_demo(out: &Path) -> Result<i32, ConfigError> {
    std::fs::create_dir_all(out).map_err(|e| ConfigError::new("out", out.display(), format!("cannot create it: {e}")))?;
    println!("flitwave demo: {} scenarios, results in {}/", SCENARIOS.len() + 1, out.display());
    let mut table = String::from(
        "| scenario | what it shows | completion (cycles) | slots | paper bound | lower bound | link transmissions | latency avg / p99 (cycles) | delivered |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    let mut code = 0;
    let (fst, gtkw) = (out.join(format!("{}.fst", WAVEFORM.0)), out.join(format!("{}.gtkw", WAVEFORM.0)));
    for DemoScenario(stem, what, settings) in SCENARIOS.iter().chain([&WAVEFORM]) {
        let mut raw = Raw::from_given(settings.iter().copied())?;
        let wave = *stem == WAVEFORM.0;
        if wave {
            raw.outputs.fst = Some(fst.display().to_string());
            raw.outputs.gtkw = Some(gtkw.display().to_string());
        }
        let cfg = Config::resolve(&raw)?;
        let r = if wave {
            let ran = run::run_with_outputs(&cfg, false)?;
            crate::output::commit_all(ran.outputs).map_err(ConfigError::Outputs)?;
            ran.report
        } else {
            run::run(&cfg)
        };
        code = code.max(r.exit_code());
        crate::output::write_file("out", out.join(format!("{stem}.json")), crate::json::to_string(&r) + "\n")?;
        let lat = match (r.latency_avg_cycles, r.latency_p99_cycles) {
            (Some(a), Some(p)) if r.accepted_flits_per_node_cycle.is_some() => format!("{a:.1} / {p}"),
            _ => "-".into(),
        };
        let traffic = r.accepted_flits_per_node_cycle.is_some();
        // Slots measure broadcasts; a traffic run reports latency instead.
        let slots = if traffic || r.seidel.is_some() { "-".to_string() } else { r.slots.to_string() };
        if let Some(c) = &r.seidel {
            // A cost-model run: time in µs against the paper's formula.
            println!(
                "  {:<26} {:>6} cycles = {:.1} µs (Table I model {:.1} µs, {:.3}x)  {:>6} transmissions  {}/{} delivered",
                stem, r.completion_cycles, c.cost_us, c.model_us, c.vs_model, r.link_transmissions, r.deliveries, r.expected_deliveries
            );
        } else if traffic {
            println!(
                "  {:<26} {:>6} cycles (last delivery)  {:>6} transmissions  {}/{} delivered  latency avg/p99 {lat} cycles",
                stem, r.completion_cycles, r.link_transmissions, r.deliveries, r.expected_deliveries
            );
        } else {
            println!(
                "  {:<26} {:>6} cycles = {:>3} slots (paper bound {}, lower bound {})  {:>6} transmissions  {}/{} delivered",
                stem,
                r.completion_cycles,
                slots,
                crate::run::slots_text(r.paper_bound_slots),
                crate::run::slots_text(r.lower_bound_slots),
                r.link_transmissions,
                r.deliveries,
                r.expected_deliveries
            );
        }
        table += &format!(
            "| {stem} | {what} | {} | {slots} | {} | {} | {} | {lat} | {}/{} |\n",
            r.completion_cycles,
            crate::run::slots_text(r.paper_bound_slots),
            crate::run::slots_text(r.lower_bound_slots),
            r.link_transmissions,
            r.deliveries,
            r.expected_deliveries
        );
    }
    let summary = out.join("summary.md");
    crate::output::write_file("out", &summary, table)?;
    println!("summary table: {}", summary.display());
    println!("waveform of {}: gtkwave {} {}", WAVEFORM.0, fst.display(), gtkw.display());
    println!("next: flitwave list; flitwave run --help");
    Ok(code)
}
