//! `flitwave compare-forwarding`: is hardware multicast worth it? Every case (a packet
//! length, a software start-up cost, a per-flit copy cost) of one broadcast workload, run
//! forwarded by the nodes (`--forwarding node`: each receiver sends the packet on) and
//! replicated by the routers (`--forwarding router`: one packet, copied by the crossbars),
//! side by side, with the speed-up of the routers over the nodes.
//!
//! The figure compared is the completion time (the last delivery) of an algorithm such as
//! `snb` or `mnb-sbt`; a run that reports a broadcast latency (broadcast traffic) is compared
//! on its mean broadcast latency instead. Cases the configuration refuses, and runs that
//! deadlock or lose packets, are rows with their outcome and get no speed-up.

use crate::cli::RunArgs;
use crate::config::{Config, ConfigError, Raw};
use crate::run::{self, Report};
use crate::size_buffers::{bad, parse_jobs, prepare_out};
use clap::Args;
use fabric::algorithms::seidel::model;
use plotters::prelude::*;
use serde::Serialize;
use std::path::{Path, PathBuf};

#[derive(Args, Debug, Default)]
#[command(
    mut_arg("packet_flits", |a| a.value_name("L1,L2,…").help("Packet lengths in flits to compare [default: 1,4,16,64]")),
    mut_arg("startup_cycles", |a| a
        .value_name("S1,S2,…")
        .help("Software start-up costs per message in cycles [default: 0,50,938; 938 is the Intel Delta's b]")),
    mut_arg("copy_cycles_per_flit", |a| a.value_name("C1,C2,…").help("Copy costs per flit in cycles [default: 0]")),
    mut_arg("forwarding", |a| a.hide(true)),
)]
pub struct CompareArgs {
    /// Run flags, the same for every case (--packet-flits, --startup-cycles and
    /// --copy-cycles-per-flit take lists here).
    #[command(flatten)]
    pub run: RunArgs,
    /// Runs at once (default: the machine's cores).
    #[arg(long, help_heading = "Comparison", allow_hyphen_values = true)]
    pub jobs: Option<String>,
    /// A directory for compare.txt, compare.json and compare.svg.
    #[arg(long, help_heading = "Comparison")]
    pub out: Option<PathBuf>,
    /// Several fabrics in one comparison, instead of --topology and --dims: TOPOLOGY:DIMS,…
    /// (like hypercube:6,mesh:8x8,torus:4x4).
    #[arg(long, help_heading = "Comparison", value_name = "T:D,…", allow_hyphen_values = true)]
    pub fabrics: Option<String>,
}

/// The packet lengths compared by default, flits.
pub const DEFAULT_PACKET_FLITS: [u64; 4] = [1, 4, 16, 64];

/// The Intel Delta's start-up in cycles, as `--cost-model delta` simulates it: b = 75 µs
/// over a cycle of a × flit = 0.08 µs/byte × 1 byte (the flit the model takes for its
/// default 1 KB message), 937.5 rounded: 938.
pub fn delta_startup_cycles() -> u64 {
    let d = model::DELTA;
    (d.b / (d.a * model::flit_bytes(1024) as f64)).round() as u64
}

/// One case run one way.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// The fabric: `hypercube`, `linear`, `mesh` or `torus`, and its sides (`6`, `8x8`).
    pub topology: String,
    pub dims: String,
    /// `node` or `router`.
    pub forwarding: &'static str,
    pub packet_flits: u64,
    pub startup_cycles: u64,
    pub copy_cycles_per_flit: u64,
    /// ok, deadlock, incomplete (packets missing or the cycle limit) or refused.
    pub outcome: &'static str,
    /// Why a case was refused or failed, in one line.
    pub reason: Option<String>,
    /// The last delivery's cycle (ok runs only).
    pub completion_cycles: Option<u64>,
    /// Broadcast traffic: the mean and p99 broadcast latency (ok runs that report them).
    pub broadcast_latency_avg_cycles: Option<f64>,
    pub broadcast_latency_p99_cycles: Option<u64>,
    /// Packets the NICs started (a replicated packet counts once).
    pub nic_packets: Option<u64>,
    /// Most packets queued in any node's NIC.
    pub max_nic_queue: Option<u64>,
    /// Flits over router-to-router links.
    pub flit_hops: Option<u64>,
    /// Network input VC occupancy (the report's `occupancy.network`), flits per VC.
    pub occupancy_p99_flits: Option<u64>,
    pub occupancy_max_flits: Option<u64>,
    /// Router rows: the node-forwarded figure over the router-replicated one, when both ran
    /// to the end; null on node rows.
    pub speedup: Option<f64>,
}

impl Row {
    /// A case run one way, before it ran: refused, no figures.
    fn new(topology: &str, dims: &str, forwarding: &'static str, packet_flits: u64, startup_cycles: u64, copy_cycles_per_flit: u64) -> Row {
        Row {
            topology: topology.to_string(),
            dims: dims.to_string(),
            forwarding,
            packet_flits,
            startup_cycles,
            copy_cycles_per_flit,
            outcome: "refused",
            reason: None,
            completion_cycles: None,
            broadcast_latency_avg_cycles: None,
            broadcast_latency_p99_cycles: None,
            nic_packets: None,
            max_nic_queue: None,
            flit_hops: None,
            occupancy_p99_flits: None,
            occupancy_max_flits: None,
            speedup: None,
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    /// The workload and fabric, as `flitwave run` titles it, without the forwarding (the
    /// fabrics' titles joined by "; " when several are compared).
    pub title: String,
    /// Each fabric's title, in the order of the rows.
    pub titles: Vec<String>,
    /// The router, switching, VCs, buffers and ports every case shares.
    pub fabric: String,
    /// What the speed-up divides: `completion_cycles` or `broadcast_latency_avg_cycles`.
    pub figure: &'static str,
    /// Each case by the nodes, then by the routers: start-up, copy cost, packet length.
    pub rows: Vec<Row>,
    pub runs: usize,
    pub jobs: usize,
    pub wall_seconds: f64,
}

const FORWARDINGS: [&str; 2] = ["node", "router"];

/// `F1,F2,…` of whole numbers from `min` to `max`, distinct.
fn list(field: &str, v: &str, min: u64, max: u64, example: &str) -> Result<Vec<u64>, ConfigError> {
    let allowed = || format!("whole numbers from {min} to {max}, separated by commas (like {example})");
    let mut out = Vec::new();
    for part in v.split(',') {
        match part.trim().parse::<u64>() {
            Ok(x) if (min..=max).contains(&x) => {
                if out.contains(&x) {
                    return Err(bad(field, v, &format!("{x} is given twice; {}", allowed())));
                }
                out.push(x)
            }
            _ => return Err(bad(field, v, &allowed())),
        }
    }
    Ok(out)
}

/// A case: its values, and the run's settings.
struct Case {
    /// Its fabric, named as the rows name it.
    topology: String,
    dims: String,
    forwarding: &'static str,
    packet_flits: u64,
    startup: u64,
    copy: u64,
    raw: Raw,
}

/// The configuration of a case, or why it is refused.
fn resolve(raw: &Raw) -> Result<Config, ConfigError> {
    let cfg = Config::resolve(raw)?;
    run::check_threads(&cfg)?;
    Ok(cfg)
}

/// Parsed options.
struct Plan {
    cases: Vec<Case>,
    jobs: usize,
    json: Option<String>,
    quiet: bool,
    titles: Vec<String>,
    fabric: String,
}

/// `--fabrics T:D,…`: each fabric's topology and sides, as `--topology` and `--dims` take them.
fn fabrics(v: &str) -> Result<Vec<(String, String)>, ConfigError> {
    let allowed = "TOPOLOGY:DIMS separated by commas, like hypercube:6,mesh:8x8 (topologies hypercube, linear, mesh, torus)";
    let mut out: Vec<(String, String)> = Vec::new();
    for part in v.split(',') {
        let Some((t, d)) = part.trim().split_once(':') else { return Err(bad("fabrics", v, allowed)) };
        if !["hypercube", "linear", "mesh", "torus"].contains(&t) || d.is_empty() {
            return Err(bad("fabrics", v, &format!("{part}: {allowed}")));
        }
        if out.iter().any(|(a, b)| a == t && b == d) {
            return Err(bad("fabrics", v, &format!("{part} is given twice; {allowed}")));
        }
        out.push((t.to_string(), d.to_string()));
    }
    Ok(out)
}

fn plan(args: &CompareArgs) -> Result<Plan, ConfigError> {
    let mut base = args.run.settings_of_many_runs("compare-forwarding", "one case")?;
    if let Some(v) = base.workload.forwarding.as_deref() {
        return Err(bad("forwarding", v, "compare-forwarding runs every case both ways, node and router; leave it out"));
    }
    let json = base.outputs.json.take();
    if json.as_deref() == Some("") {
        return Err(bad("json", "\"\"", "a file path, or - for standard output"));
    }
    let quiet = base.outputs.is_quiet()?;
    base.outputs.quiet = None;
    let packet_flits = match base.workload.packet_flits.take() {
        Some(v) => list("packet-flits", &v, 1, 65535, "1,4,16,64")?,
        None => DEFAULT_PACKET_FLITS.to_vec(),
    };
    let startups = match base.workload.startup_cycles.take() {
        Some(v) => list("startup-cycles", &v, 0, 1 << 40, "0,50")?,
        None => vec![0, 50, delta_startup_cycles()],
    };
    let copies = match base.workload.copy_cycles_per_flit.take() {
        Some(v) => list("copy-cycles-per-flit", &v, 0, 1 << 20, "0,1")?,
        None => vec![0],
    };
    let jobs = parse_jobs(args.jobs.as_deref())?;
    // The fabrics: --fabrics, or the one of --topology and --dims (or their defaults).
    let fabrics = match &args.fabrics {
        Some(v) => {
            if let Some((flag, given)) = [("topology", &args.run.keys.topology.topology), ("dims", &args.run.keys.topology.dims)]
                .into_iter()
                .find_map(|(flag, given)| given.as_ref().map(|g| (flag, g)))
            {
                return Err(bad(flag, given, "either --fabrics or --topology and --dims, not both"));
            }
            fabrics(v)?.into_iter().map(Some).collect()
        }
        None => vec![None],
    };
    let mut cases = Vec::new();
    let mut titles = Vec::new();
    let mut router = None;
    for fab in &fabrics {
        let mut raw = base.clone();
        if let Some((topology, dims)) = fab {
            raw.topology.topology = Some(topology.clone());
            raw.topology.dims = Some(dims.clone());
        }
        let first = cases.len();
        for &startup in &startups {
            for &copy in &copies {
                for &packet_flits in &packet_flits {
                    for forwarding in FORWARDINGS {
                        let mut raw = raw.clone();
                        raw.workload.packet_flits = Some(packet_flits.to_string());
                        raw.workload.startup_cycles = Some(startup.to_string());
                        raw.workload.copy_cycles_per_flit = Some(copy.to_string());
                        raw.workload.forwarding = Some(forwarding.to_string());
                        let (topology, dims) = (String::new(), String::new());
                        cases.push(Case { topology, dims, forwarding, packet_flits, startup, copy, raw });
                    }
                }
            }
        }
        // A fabric no case of which can run is bad input: its one line.
        let mut first_error = None;
        let mut found = None;
        for c in &cases[first..] {
            match resolve(&c.raw) {
                Ok(cfg) => {
                    found = Some(cfg);
                    break;
                }
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        let Some(cfg) = found else { return Err(first_error.expect("at least one case")) };
        let buffers = match base.router.buffer_flits.as_deref() {
            Some(_) => format!("{} flits", cfg.buffer_flits),
            None => "2 x packet flits".to_string(),
        };
        router.get_or_insert_with(|| {
            format!("router {} ({}), {} VCs of {buffers}, ports {}", cfg.router, cfg.switching.name(), cfg.vcs, cfg.ports)
        });
        let forwarding = cases[first].forwarding;
        titles.push(cfg.title().replace(&format!(" ({forwarding} forwarding)"), ""));
        let dims = cfg.dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("x");
        for c in &mut cases[first..] {
            (c.topology, c.dims) = (cfg.topology.name().to_string(), dims.clone());
        }
    }
    let fabric = router.expect("at least one fabric");
    Ok(Plan { cases, jobs, json, quiet, titles, fabric })
}

/// Run one case.
fn run_case(c: &Case) -> Row {
    let mut row = Row::new(&c.topology, &c.dims, c.forwarding, c.packet_flits, c.startup, c.copy);
    let cfg = match resolve(&c.raw) {
        Ok(cfg) => cfg,
        Err(e) => {
            row.reason = Some(e.to_string());
            return row;
        }
    };
    let r: Report = run::run(&cfg);
    let (outcome, reason) = crate::sweep::outcome_of(&r);
    row.outcome = outcome;
    row.reason = reason;
    row.nic_packets = Some(r.packets_sent);
    row.max_nic_queue = Some(r.max_nic_queue.into());
    row.flit_hops = Some(r.flit_hops);
    row.occupancy_p99_flits = Some(r.occupancy.network.p99_flits);
    row.occupancy_max_flits = Some(r.occupancy.network.max_flits);
    if outcome == "ok" {
        row.completion_cycles = Some(r.completion_cycles);
        // Broadcast traffic's own fields (an algorithm's broadcasts are compared by the
        // completion of the whole run).
        if !matches!(cfg.workload, crate::config::Workload::Traffic { .. }) {
            return row;
        }
        let v = serde_json::to_value(&r).expect("a report serializes");
        row.broadcast_latency_avg_cycles = v.get("broadcast_latency_avg_cycles").and_then(|x| x.as_f64());
        row.broadcast_latency_p99_cycles = v.get("broadcast_latency_p99_cycles").and_then(|x| x.as_f64()).map(|x| x.round() as u64);
    }
    row
}

/// Each router row's speed-up over the node row before it: the mean broadcast latencies
/// where both runs report one, else the completion times; none unless both ran to the end.
fn speedups(rows: &mut [Row]) {
    for k in (0..rows.len()).step_by(2) {
        let (node, router) = (&rows[k], &rows[k + 1]);
        debug_assert!(node.forwarding == "node" && router.forwarding == "router" && node.packet_flits == router.packet_flits);
        let figures = match (node.broadcast_latency_avg_cycles, router.broadcast_latency_avg_cycles) {
            (Some(n), Some(r)) => Some((n, r)),
            _ => node.completion_cycles.zip(router.completion_cycles).map(|(n, r)| (n as f64, r as f64)),
        };
        rows[k + 1].speedup = figures.filter(|&(_, r)| r > 0.0).map(|(n, r)| n / r);
    }
}

/// Run every case of `plan`; rows in the order of the cases, speed-ups on the router rows.
fn compare(plan: &Plan) -> Comparison {
    let started = std::time::Instant::now();
    let mut rows = crate::parallel::map(plan.jobs, &plan.cases, run_case);
    speedups(&mut rows);
    let latency = rows.iter().any(|r| r.broadcast_latency_avg_cycles.is_some());
    Comparison {
        title: plan.titles.join("; "),
        titles: plan.titles.clone(),
        fabric: plan.fabric.clone(),
        figure: if latency { "broadcast_latency_avg_cycles" } else { "completion_cycles" },
        runs: rows.iter().filter(|r| r.outcome != "refused").count(),
        rows,
        jobs: plan.jobs,
        wall_seconds: started.elapsed().as_secs_f64(),
    }
}

/// The table people read.
pub fn table(c: &Comparison) -> String {
    let latency = c.figure == "broadcast_latency_avg_cycles";
    let runs = if c.runs == 1 { "1 run".to_string() } else { format!("{} runs", c.runs) };
    let mut t = format!("flitwave compare-forwarding: {}; {runs} on {} jobs, {:.1} s\n", c.title, c.jobs, c.wall_seconds);
    t += &format!("  {}\n", c.fabric);
    let dash = || "-".to_string();
    let n = |x: Option<u64>| x.map_or_else(dash, |x| x.to_string());
    t += &format!(
        "{:<10} {:>6} {:>8} {:>6} {:>14} {:>11} {:>9} {:>10} {:>9} {:>8}  {}\n",
        "forwarding",
        "flits",
        "startup",
        "copy",
        if latency { "bcast avg/p99" } else { "completion" },
        "nic_packets",
        "max_queue",
        "flit_hops",
        "occ p99/max",
        "speed-up",
        "outcome"
    );
    let mut reasons: Vec<String> = Vec::new();
    // Several fabrics: each one's rows under its title.
    let mut titles = c.titles.iter();
    let mut fabric: Option<(&str, &str)> = None;
    for r in &c.rows {
        if c.titles.len() > 1 && fabric != Some((&r.topology, &r.dims)) {
            fabric = Some((&r.topology, &r.dims));
            t += &format!("{}:\n", titles.next().expect("a title per fabric"));
        }
        let figure = if latency {
            match (r.broadcast_latency_avg_cycles, r.broadcast_latency_p99_cycles) {
                (Some(a), Some(p)) => format!("{a:.1}/{p}"),
                _ => n(r.completion_cycles),
            }
        } else {
            n(r.completion_cycles)
        };
        let occ = match (r.occupancy_p99_flits, r.occupancy_max_flits) {
            (Some(a), Some(b)) => format!("{a}/{b}"),
            _ => dash(),
        };
        let speedup = r.speedup.map_or_else(dash, |s| format!("{s:.2}x"));
        t += &format!(
            "{:<10} {:>6} {:>8} {:>6} {:>14} {:>11} {:>9} {:>10} {:>9} {:>8}  {}\n",
            r.forwarding,
            r.packet_flits,
            r.startup_cycles,
            r.copy_cycles_per_flit,
            figure,
            n(r.nic_packets),
            n(r.max_nic_queue),
            n(r.flit_hops),
            occ,
            if r.forwarding == "router" { speedup } else { String::new() },
            r.outcome
        );
        if let Some(why) = &r.reason {
            let line = format!("{}: {why}", r.outcome);
            if !reasons.contains(&line) {
                reasons.push(line);
            }
        }
    }
    for line in reasons {
        t += &format!("  {line}\n");
    }
    t
}

fn write(path: &Path, text: &str) -> Result<(), ConfigError> {
    crate::output::write_file("out", path, text)
}

/// The series of the plot: one per fabric, start-up and copy cost, (packet flits, speed-up).
fn series(c: &Comparison) -> Vec<(String, Vec<(f64, f64)>)> {
    let copies: Vec<u64> = c.rows.iter().map(|r| r.copy_cycles_per_flit).fold(Vec::new(), |mut v, x| {
        if !v.contains(&x) {
            v.push(x);
        }
        v
    });
    let mut out: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for r in c.rows.iter().filter(|r| r.forwarding == "router") {
        let label = if copies.len() > 1 {
            format!("start-up {}, copy {}/flit", r.startup_cycles, r.copy_cycles_per_flit)
        } else {
            format!("start-up {} cycles", r.startup_cycles)
        };
        let label = if c.titles.len() > 1 { format!("{} {}, {label}", r.topology, r.dims) } else { label };
        let k = match out.iter().position(|(l, _)| *l == label) {
            Some(k) => k,
            None => {
                out.push((label, Vec::new()));
                out.len() - 1
            }
        };
        if let Some(s) = r.speedup {
            out[k].1.push((r.packet_flits as f64, s));
        }
    }
    out
}

/// Speed-up against packet length, log x axis, a line per start-up cost.
fn plot(path: &Path, c: &Comparison) -> Result<(), ConfigError> {
    let fail = |e: String| ConfigError::new("out", path.display(), format!("cannot draw it: {e}"));
    let lines = series(c);
    let flits = c.rows.iter().map(|r| r.packet_flits as f64);
    let (xmin, xmax) = flits.fold((f64::MAX, 1.0f64), |(lo, hi), x| (lo.min(x), hi.max(x)));
    let (xmin, xmax) = (xmin.min(xmax) / 1.5, xmax * 1.5);
    let ymax = lines.iter().flat_map(|(_, p)| p.iter().map(|&(_, y)| y)).fold(1.0f64, f64::max) * 1.15;
    crate::plot::svg_file(path, (720, 480), |root| {
        root.fill(&WHITE).map_err(|e| fail(e.to_string()))?;
        let figure = if c.figure == "completion_cycles" { "completion time" } else { "mean broadcast latency" };
        let mut chart = ChartBuilder::on(&root)
            .caption(format!("router replication vs node forwarding: {figure}, node / router"), ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(56)
            .build_cartesian_2d((xmin..xmax).log_scale().with_key_points(crate::plot::pow2_ticks_all(1.0, xmax)), 0f64..ymax)
            .map_err(|e| fail(e.to_string()))?;
        chart
            .configure_mesh()
            .x_desc("packet length (flits)")
            .y_desc("speed-up of router replication")
            .x_label_formatter(&|x| crate::plot::tick_label(*x))
            .draw()
            .map_err(|e| fail(e.to_string()))?;
        // Break-even: above it the routers are faster.
        chart
            .draw_series(LineSeries::new(vec![(xmin, 1.0), (xmax, 1.0)], BLACK.mix(0.4).stroke_width(1)))
            .map_err(|e| fail(e.to_string()))?;
        for (k, (label, pts)) in lines.into_iter().enumerate() {
            crate::reproduce::marked_line(&mut chart, k, label, pts, &fail)?;
        }
        crate::reproduce::legend_and_present(&mut chart, &root, &fail)
    })
}

/// `flitwave compare-forwarding`: returns the process exit code (0 every case ran to the
/// end both ways, 1 some case was refused, deadlocked or lost packets).
pub fn cmd_compare_forwarding(args: &CompareArgs) -> Result<i32, ConfigError> {
    if let Some(out) = &args.out
        && (out.as_os_str() == "-" || out.as_os_str().is_empty())
    {
        return Err(bad("out", &format!("{:?}", out.display().to_string()), "a directory to write into (for standard output, --json -)"));
    }
    let plan = plan(args)?;
    let mut outputs: Vec<(&str, String)> = plan.json.iter().map(|p| ("json", p.clone())).collect();
    for name in ["compare.txt", "compare.json", "compare.svg"] {
        outputs.extend(args.out.as_ref().map(|o| ("out", o.join(name).display().to_string())));
    }
    args.run.check_outputs(&args.run.settings()?, &outputs)?;
    if let Some(out) = &args.out {
        prepare_out(out)?;
    }
    let c = compare(&plan);
    let text = table(&c);
    if let Some(out) = &args.out {
        write(&out.join("compare.txt"), &text)?;
        write(&out.join("compare.json"), &format!("{}\n", serde_json::to_string_pretty(&c).expect("serializable")))?;
        plot(&out.join("compare.svg"), &c)?;
    }
    let json = serde_json::to_string(&c).expect("serializable");
    match plan.json.as_deref() {
        Some("-") => {
            if !plan.quiet {
                eprint!("{text}");
            }
            println!("{json}");
        }
        Some(path) => {
            crate::output::write_file("json", path, format!("{json}\n"))?;
            if !plan.quiet {
                print!("{text}");
            }
        }
        None if !plan.quiet => print!("{text}"),
        None => {}
    }
    Ok(if c.rows.iter().all(|r| r.outcome == "ok") { 0 } else { 1 })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(forwarding: &'static str, completion: Option<u64>, latency: Option<f64>) -> Row {
        let mut r = Row::new("hypercube", "3", forwarding, 4, 0, 0);
        r.outcome = if completion.is_some() { "ok" } else { "deadlock" };
        (r.completion_cycles, r.broadcast_latency_avg_cycles) = (completion, latency);
        r
    }

    /// Broadcast latency where both runs report it, else completion; nothing from a failed run.
    #[test]
    fn speedups_prefer_the_broadcast_latency() {
        let mut rows = vec![
            row("node", Some(300), None),
            row("router", Some(100), None),
            row("node", Some(900), Some(60.0)),
            row("router", Some(1000), Some(20.0)),
            row("node", Some(300), Some(60.0)),
            row("router", Some(150), None),
            row("node", Some(300), None),
            row("router", None, None),
        ];
        speedups(&mut rows);
        let s: Vec<Option<f64>> = rows.iter().map(|r| r.speedup).collect();
        assert_eq!(s, [None, Some(3.0), None, Some(3.0), None, Some(2.0), None, None]);
    }

    #[test]
    fn the_delta_start_up_is_938_cycles() {
        assert_eq!(delta_startup_cycles(), 938);
    }

    #[test]
    fn lists_name_the_flag_and_what_is_allowed() {
        assert_eq!(list("packet-flits", "1, 4,64", 1, 65535, "1,4").unwrap(), vec![1, 4, 64]);
        for v in ["0", "x", "1,,4", "", "4,4"] {
            let e = list("packet-flits", v, 1, 65535, "1,4").unwrap_err().to_string();
            // A blank value is shown quoted.
            let shown = if v.is_empty() { "\"\"" } else { v };
            assert!(e.starts_with(&format!("packet-flits: {shown}: ")) && e.contains("whole numbers from 1 to 65535"), "{e}");
        }
    }
}
