//! `flitwave size-buffers`: the smallest buffer depth per port class that keeps a workload
//! within a tolerance of a deep-buffer reference.
//!
//! For each load (a traffic rate, or the algorithm once), a reference run with every class at
//! `--max-depth`; then, for each class with the other classes left at the reference depth,
//! runs at the powers of two up to `--max-depth` (the curve of the plot, and the bracket),
//! and a bisection inside the bracket: the recommended depth is the smallest one found to
//! pass with every deeper power of two passing too. A run passes when it delivers everything
//! without deadlock and, for traffic, its mean and p99 latency stay within the tolerance of
//! the reference and its accepted throughput within 1 % of it; for an algorithm, its
//! completion time within the tolerance. A depth the configuration refuses (a
//! store-and-forward buffer shorter than a packet) or that deadlocks never passes.
//! Finally the recommended depths of all classes together are run once, and the report says
//! whether that combination passes too.
//!
//! The classes are the network input VCs (`--buffer-flits`, fed by links) and the injection
//! VCs (`--inject-buffer-flits`, fed by the NICs). Each trial and recommendation carries its
//! class's network-wide occupancy percentiles (the report's `occupancy`, over the
//! measurement window of a traffic run). The runs report summary statistics only (no
//! per-VC detail) unless `--stats` says otherwise.

use crate::cli::RunArgs;
use crate::config::{Config, ConfigError, Raw, Workload};
use crate::run::{self, Report};
use clap::Args;
use plotters::prelude::*;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use traces::stats::ClassStats;

#[derive(Args, Debug, Default)]
pub struct SizeArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// Traffic loads to size for, in packets per node per cycle like --rate: R1,R2,…
    /// (default: --rate alone; not with an algorithm).
    #[arg(long, help_heading = "Buffer sizing", allow_hyphen_values = true)]
    pub rates: Option<String>,
    /// How far above the reference latency (or completion time) a depth may be, as a fraction.
    #[arg(long, help_heading = "Buffer sizing", allow_hyphen_values = true)]
    pub tolerance: Option<String>,
    /// The reference (deep-buffer) depth, and the deepest depth tried.
    #[arg(long, help_heading = "Buffer sizing", allow_hyphen_values = true)]
    pub max_depth: Option<String>,
    /// Runs at once (default: the machine's cores).
    #[arg(long, help_heading = "Buffer sizing", allow_hyphen_values = true)]
    pub jobs: Option<String>,
    /// A directory for sizing.txt, sizing.json and sizing.svg.
    #[arg(long, help_heading = "Buffer sizing")]
    pub out: Option<PathBuf>,
}

/// A class of input buffers sized on its own, and the run key that sets its depth.
#[derive(Clone, Copy, Debug)]
struct Class {
    name: &'static str,
    key: &'static str,
    /// Its key's value in the run keys.
    depth: fn(&mut Raw) -> &mut Option<String>,
    /// The class's network-wide occupancy over the run's window (or the whole run).
    occupancy: fn(&Report) -> &ClassStats,
}

/// The network input VCs (fed by links) and the injection VCs (fed by the NICs).
const CLASSES: [Class; 2] = [
    Class { name: "network", key: "buffer-flits", depth: |r| &mut r.router.buffer_flits, occupancy: |r| &r.occupancy.network },
    Class {
        name: "injection",
        key: "inject-buffer-flits",
        depth: |r| &mut r.router.inject_buffer_flits,
        occupancy: |r| &r.occupancy.injection,
    },
];

/// A class's occupancy percentiles in a trial or recommendation, flits per VC.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct OccupancyFigures {
    pub occupancy_p50: Option<u64>,
    pub occupancy_p99: Option<u64>,
    pub occupancy_p999: Option<u64>,
    pub occupancy_max: Option<u64>,
}

impl OccupancyFigures {
    fn of(c: Option<&ClassStats>) -> OccupancyFigures {
        OccupancyFigures {
            occupancy_p50: c.map(|c| c.p50_flits),
            occupancy_p99: c.map(|c| c.p99_flits),
            occupancy_p999: c.map(|c| c.p999_flits),
            occupancy_max: c.map(|c| c.max_flits),
        }
    }
}

/// One run at one depth of one class.
#[derive(Clone, Debug, Serialize)]
pub struct Trial {
    pub depth: u32,
    /// ok, deadlock, incomplete (packets missing or the cycle limit) or refused.
    pub outcome: String,
    /// Why a run was refused or failed, in one line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub passes: bool,
    pub latency_avg_cycles: Option<f64>,
    pub latency_p99_cycles: Option<u64>,
    pub accepted_flits_per_node_cycle: Option<f64>,
    pub completion_cycles: Option<u64>,
    /// The class's occupancy at this depth.
    #[serde(flatten)]
    pub occupancy: OccupancyFigures,
}

/// The answer for one load and one class.
#[derive(Clone, Debug, Serialize)]
pub struct Recommendation {
    /// The traffic rate in packets per node per cycle (None for an algorithm).
    pub rate: Option<f64>,
    pub class: &'static str,
    /// The smallest passing depth (None: not even the reference depth passes).
    pub depth: Option<u32>,
    pub latency_avg_cycles: Option<f64>,
    pub reference_latency_avg_cycles: Option<f64>,
    pub latency_p99_cycles: Option<u64>,
    pub reference_latency_p99_cycles: Option<u64>,
    pub completion_cycles: Option<u64>,
    pub reference_completion_cycles: Option<u64>,
    /// The class's occupancy at the recommended depth.
    #[serde(flatten)]
    pub occupancy: OccupancyFigures,
    /// Every depth run, in increasing depth.
    pub trials: Vec<Trial>,
}

/// The recommended depths of all classes run together, for one load.
#[derive(Clone, Debug, Serialize)]
pub struct Combined {
    pub rate: Option<f64>,
    pub depths: Vec<(&'static str, u32)>,
    pub trial: Trial,
}

#[derive(Clone, Debug, Serialize)]
pub struct Sizing {
    /// What is compared with the reference: `latency` (traffic) or `completion` (an algorithm).
    pub figure: &'static str,
    pub tolerance: f64,
    pub reference_depth: u32,
    pub recommendations: Vec<Recommendation>,
    pub combined: Vec<Combined>,
    pub runs: usize,
    pub wall_seconds: f64,
}

/// What a run measured, and whether it passes against a reference.
#[derive(Clone, Debug)]
enum Outcome {
    Refused(String),
    Ran(Box<Report>),
}

impl Outcome {
    fn report(&self) -> Option<&Report> {
        match self {
            Outcome::Ran(r) => Some(r),
            Outcome::Refused(_) => None,
        }
    }

    /// Delivered everything, no deadlock.
    fn complete(&self) -> bool {
        self.report().is_some_and(|r| r.exit_code() == 0)
    }

    fn trial(&self, class: Class, depth: u32, reference: &Outcome, tol: f64) -> Trial {
        let (outcome, reason) = match self {
            Outcome::Refused(why) => ("refused", Some(why.clone())),
            Outcome::Ran(r) => match r.exit_code() {
                0 => ("ok", None),
                3 => ("deadlock", Some("the watchdog found input VCs waiting on each other".to_string())),
                _ => ("incomplete", Some(format!("{} deliveries missing, ending {:?}", r.missing_deliveries, r.ending))),
            },
        };
        let r = self.report();
        Trial {
            depth,
            outcome: outcome.to_string(),
            reason,
            passes: passes(self, reference, tol),
            latency_avg_cycles: r.and_then(|r| r.latency_avg_cycles),
            latency_p99_cycles: r.and_then(|r| r.latency_p99_cycles),
            accepted_flits_per_node_cycle: r.and_then(|r| r.accepted_flits_per_node_cycle),
            completion_cycles: r.map(|r| r.completion_cycles),
            occupancy: OccupancyFigures::of(r.map(|r| (class.occupancy)(r))),
        }
    }
}

/// Does `run` stay within `tol` of `reference`? Traffic: mean and p99 latency within `tol`,
/// accepted throughput within 1 %; an algorithm: completion time within `tol`.
fn passes(run: &Outcome, reference: &Outcome, tol: f64) -> bool {
    let (Some(r), Some(reference)) = (run.report(), reference.report()) else { return false };
    if !run.complete() {
        return false;
    }
    let within = |x: f64, base: f64| x <= base * (1.0 + tol) + 1e-9;
    if !matches!(r.config.workload, Workload::Traffic { .. }) {
        return within(r.completion_cycles as f64, reference.completion_cycles as f64);
    }
    match (r.latency_avg_cycles, reference.latency_avg_cycles) {
        (Some(avg), Some(ref_avg)) => {
            let p99 = r.latency_p99_cycles.unwrap_or(u64::MAX) as f64;
            let ref_p99 = reference.latency_p99_cycles.unwrap_or(0) as f64;
            let acc = r.accepted_flits_per_node_cycle.unwrap_or(0.0);
            let ref_acc = reference.accepted_flits_per_node_cycle.unwrap_or(0.0);
            within(avg, ref_avg) && within(p99, ref_p99) && acc >= ref_acc * 0.99 - 1e-12
        }
        // No packet born in the window: nothing to compare.
        _ => false,
    }
}

/// Parsed options.
struct Plan {
    base: Raw,
    traffic: bool,
    rates: Vec<Option<f64>>,
    tolerance: f64,
    max_depth: u32,
    jobs: usize,
}

pub(crate) fn bad(field: &str, value: &str, allowed: &str) -> ConfigError {
    ConfigError::new(field, value, allowed)
}

fn plan(args: &SizeArgs) -> Result<Plan, ConfigError> {
    let mut base = args.run.settings_of_many_runs("size-buffers", "the recommended depth")?;
    if let (Some(v), Some(_)) = (base.workload.rate.as_deref(), &args.rates) {
        return Err(bad("rate", v, "given with --rates: give every load in --rates"));
    }
    for c in CLASSES {
        if let Some(v) = (c.depth)(&mut base) {
            return Err(bad(c.key, v, "size-buffers chooses this depth; leave it out"));
        }
    }
    let tolerance = match &args.tolerance {
        None => 0.1,
        Some(v) => match v.trim().parse::<f64>() {
            Ok(x) if (0.0..=10.0).contains(&x) => x,
            _ => return Err(bad("tolerance", v, "a fraction from 0 to 10 (0.1 = within 10 %)")),
        },
    };
    let max_depth = match &args.max_depth {
        None => 64,
        Some(v) => match v.trim().parse::<u32>() {
            Ok(x) if (1..=4096).contains(&x) => x,
            _ => return Err(bad("max-depth", v, "a whole number from 1 to 4096")),
        },
    };
    let jobs = parse_jobs(args.jobs.as_deref())?;
    // The configuration at the reference depth: the workload, and any refusal, before any run.
    let reference = Config::resolve(&with(&base, &[], max_depth))?;
    let rates = match (&reference.workload, &args.rates) {
        (Workload::Algorithm { name, .. }, Some(v)) => {
            return Err(bad("rates", v, &format!("traffic loads; the algorithm {name} has none (leave --rates out)")));
        }
        (Workload::Algorithm { .. }, None) => vec![None],
        (Workload::Traffic { rate, .. }, None) => vec![Some(*rate)],
        (Workload::Traffic { .. }, Some(v)) => {
            let mut rates = Vec::new();
            for part in v.split(',') {
                let x = part.trim();
                let mut raw = base.clone();
                raw.workload.rate = Some(x.to_string());
                // Each rate as `--rate` would take it (the same range and message).
                let cfg = Config::resolve(&with(&raw, &[], max_depth)).map_err(|e| ConfigError::new("rates", v, e))?;
                let Workload::Traffic { rate, .. } = cfg.workload else { unreachable!("a traffic run stays one") };
                rates.push(Some(rate));
            }
            if rates.is_empty() || v.trim().is_empty() {
                return Err(bad("rates", v, "rates in packets per node per cycle, separated by commas"));
            }
            rates
        }
    };
    let traffic = matches!(reference.workload, Workload::Traffic { .. });
    Ok(Plan { base, traffic, rates, tolerance, max_depth, jobs })
}

/// `--jobs`: runs at once (default: the machine's cores).
pub(crate) fn parse_jobs(v: Option<&str>) -> Result<usize, ConfigError> {
    match v {
        None => Ok(std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)),
        Some(v) => match v.trim().parse::<usize>() {
            Ok(x) if (1..=256).contains(&x) => Ok(x),
            _ => Err(bad("jobs", v, "a whole number from 1 to 256")),
        },
    }
}

/// `raw` with every class at `reference` depth but those in `depths`.
fn with(raw: &Raw, depths: &[(Class, u32)], reference: u32) -> Raw {
    let mut raw = raw.clone();
    for c in CLASSES {
        let d = depths.iter().find(|(k, _)| k.key == c.key).map_or(reference, |&(_, d)| d);
        *(c.depth)(&mut raw) = Some(d.to_string());
    }
    raw
}

/// A job: a rate, some class depths.
#[derive(Clone, Debug)]
struct Job {
    rate: Option<f64>,
    depths: Vec<(Class, u32)>,
}

/// Run `jobs` on `plan.jobs` threads; results in the order of `jobs`.
fn run_all(plan: &Plan, jobs: &[Job], runs: &AtomicUsize) -> Vec<Outcome> {
    crate::parallel::map(plan.jobs, jobs, |job| {
        let mut raw = with(&plan.base, &job.depths, plan.max_depth);
        if let Some(rate) = job.rate {
            raw.workload.rate = Some(rate.to_string());
        }
        match Config::resolve(&raw) {
            Ok(cfg) => {
                runs.fetch_add(1, Ordering::Relaxed);
                Outcome::Ran(Box::new(run::run(&cfg)))
            }
            Err(e) => Outcome::Refused(e.to_string()),
        }
    })
}

/// The depths the search runs first: the powers of two below `max`, and `max`.
fn ladder(max: u32) -> Vec<u32> {
    let mut v: Vec<u32> = (0..32).map(|k| 1u32 << k).take_while(|&d| d < max).collect();
    v.push(max);
    v
}

/// The search for one (rate, class): the depths run so far and their verdicts.
struct Search {
    rate: Option<f64>,
    class: Class,
    tried: Vec<(u32, Outcome)>,
    /// The bracket: `lo` fails (or is 0), `hi` passes, every ladder depth above `hi` passes.
    lo: u32,
    hi: Option<u32>,
}

impl Search {
    fn verdict(&self, d: u32, reference: &Outcome, tol: f64) -> bool {
        self.tried.iter().find(|(x, _)| *x == d).is_some_and(|(_, o)| passes(o, reference, tol))
    }

    /// The next depth to run, if the bracket is not closed.
    fn next(&self) -> Option<u32> {
        let hi = self.hi?;
        (hi > self.lo + 1).then(|| self.lo + (hi - self.lo) / 2)
    }
}

/// Size the buffers as `args` asks; returns the process exit code.
pub fn cmd_size_buffers(args: &SizeArgs) -> Result<i32, ConfigError> {
    let plan = plan(args)?;
    let json_to = plan.base.outputs.json.as_deref().map(str::to_string);
    let quiet = plan.base.outputs.is_quiet()?;
    let mut outputs: Vec<(&str, String)> = json_to.iter().map(|p| ("json", p.clone())).collect();
    for name in ["sizing.txt", "sizing.json", "sizing.svg"] {
        outputs.extend(args.out.as_ref().map(|o| ("out", o.join(name).display().to_string())));
    }
    args.run.check_outputs(&plan.base, &outputs)?;
    if let Some(out) = &args.out {
        prepare_out(out)?;
    }
    let started = std::time::Instant::now();
    let runs = AtomicUsize::new(0);
    let sizing = size(&plan, &runs, started);
    let text = table(&sizing);
    if let Some(out) = &args.out {
        write(&out.join("sizing.txt"), &text)?;
        write(&out.join("sizing.json"), &format!("{}\n", serde_json::to_string_pretty(&sizing).expect("serializable")))?;
        plot(&out.join("sizing.svg"), &sizing)?;
    }
    let json = serde_json::to_string(&sizing).expect("serializable");
    match json_to.as_deref() {
        Some("-") => {
            if !quiet {
                eprint!("{text}");
            }
            println!("{json}");
        }
        Some(path) => {
            crate::output::write_file("json", path, format!("{json}\n"))?;
            if !quiet {
                print!("{text}");
            }
        }
        None if !quiet => print!("{text}"),
        None => {}
    }
    Ok(if sizing.recommendations.iter().all(|r| r.depth.is_some()) { 0 } else { 1 })
}

fn size(plan: &Plan, runs: &AtomicUsize, started: std::time::Instant) -> Sizing {
    let tol = plan.tolerance;
    // References and the ladders, all at once.
    let mut jobs: Vec<Job> = plan.rates.iter().map(|&rate| Job { rate, depths: vec![] }).collect();
    let ladder = ladder(plan.max_depth);
    for &rate in &plan.rates {
        for c in CLASSES {
            jobs.extend(ladder.iter().filter(|&&d| d < plan.max_depth).map(|&d| Job { rate, depths: vec![(c, d)] }));
        }
    }
    let mut done = run_all(plan, &jobs, runs).into_iter();
    let references: Vec<Outcome> = plan.rates.iter().map(|_| done.next().expect("a reference per rate")).collect();
    let mut searches: Vec<(usize, Search)> = Vec::new();
    for (i, &rate) in plan.rates.iter().enumerate() {
        for class in CLASSES {
            let mut tried: Vec<(u32, Outcome)> =
                ladder.iter().filter(|&&d| d < plan.max_depth).map(|&d| (d, done.next().expect("a run per depth"))).collect();
            tried.push((plan.max_depth, references[i].clone()));
            let mut s = Search { rate, class, tried, lo: 0, hi: None };
            // The smallest ladder depth from which every deeper one passes.
            for &d in ladder.iter().rev() {
                if !s.verdict(d, &references[i], tol) {
                    s.lo = d;
                    break;
                }
                s.hi = Some(d);
            }
            searches.push((i, s));
        }
    }
    // Bisection inside each bracket, every search one step a round.
    loop {
        let step: Vec<(usize, u32)> = searches.iter().enumerate().filter_map(|(k, (_, s))| s.next().map(|d| (k, d))).collect();
        if step.is_empty() {
            break;
        }
        let jobs: Vec<Job> = step.iter().map(|&(k, d)| Job { rate: searches[k].1.rate, depths: vec![(searches[k].1.class, d)] }).collect();
        for ((k, d), o) in step.into_iter().zip(run_all(plan, &jobs, runs)) {
            let (i, s) = &mut searches[k];
            let ok = passes(&o, &references[*i], tol);
            s.tried.push((d, o));
            if ok { s.hi = Some(d) } else { s.lo = d }
        }
    }
    let mut recommendations = Vec::new();
    for (i, s) in &searches {
        let reference = &references[*i];
        let mut trials: Vec<Trial> = s.tried.iter().map(|(d, o)| o.trial(s.class, *d, reference, tol)).collect();
        trials.sort_by_key(|t| t.depth);
        let at = s.hi.and_then(|d| trials.iter().find(|t| t.depth == d)).cloned();
        let r = reference.report();
        recommendations.push(Recommendation {
            rate: s.rate,
            class: s.class.name,
            depth: s.hi,
            latency_avg_cycles: at.as_ref().and_then(|t| t.latency_avg_cycles),
            reference_latency_avg_cycles: r.and_then(|r| r.latency_avg_cycles),
            latency_p99_cycles: at.as_ref().and_then(|t| t.latency_p99_cycles),
            reference_latency_p99_cycles: r.and_then(|r| r.latency_p99_cycles),
            completion_cycles: at.as_ref().and_then(|t| t.completion_cycles),
            reference_completion_cycles: r.map(|r| r.completion_cycles),
            occupancy: at.as_ref().map_or_else(OccupancyFigures::default, |t| t.occupancy),
            trials,
        });
    }
    // The recommended depths together, where every class has one.
    let mut combined_jobs = Vec::new();
    for &rate in &plan.rates {
        let depths: Option<Vec<(Class, u32)>> = CLASSES
            .iter()
            .map(|&c| searches.iter().find(|(_, s)| s.rate == rate && s.class.key == c.key).and_then(|(_, s)| s.hi.map(|d| (c, d))))
            .collect();
        if let Some(depths) = depths {
            combined_jobs.push(Job { rate, depths });
        }
    }
    let combined = combined_jobs
        .iter()
        .zip(run_all(plan, &combined_jobs, runs))
        .map(|(job, o)| {
            let i = plan.rates.iter().position(|&r| r == job.rate).expect("a rate of the plan");
            let depth = job.depths.iter().map(|&(_, d)| d).max().unwrap_or(plan.max_depth);
            Combined {
                rate: job.rate,
                depths: job.depths.iter().map(|&(c, d)| (c.name, d)).collect(),
                trial: o.trial(job.depths[0].0, depth, &references[i], tol),
            }
        })
        .collect();
    Sizing {
        figure: if plan.traffic { "latency" } else { "completion" },
        tolerance: tol,
        reference_depth: plan.max_depth,
        recommendations,
        combined,
        runs: runs.load(Ordering::Relaxed),
        wall_seconds: started.elapsed().as_secs_f64(),
    }
}

/// The table people read.
fn table(s: &Sizing) -> String {
    let mut t = format!(
        "flitwave size-buffers: smallest depth within {:.0} % of the {}-flit reference ({} runs, {:.1} s)\n",
        s.tolerance * 100.0,
        s.reference_depth,
        s.runs,
        s.wall_seconds
    );
    t += &format!(
        "{:>8}  {:<9} {:>6}  {:>21}  {:>17}  {:>21}  {:>22}\n",
        "rate", "class", "depth", "latency avg (ref)", "p99 (ref)", "completion (ref)", "occ. p50/p99/p99.9/max"
    );
    for r in &s.recommendations {
        let rate = r.rate.map_or_else(|| "-".to_string(), |x| format!("{x}"));
        let pair = |a: Option<String>, b: Option<String>| match (a, b) {
            (None, None) => "-".to_string(),
            (a, b) => format!("{} ({})", a.unwrap_or_else(|| "-".into()), b.unwrap_or_else(|| "-".into())),
        };
        let f1 = |x: Option<f64>| x.map(|x| format!("{x:.1}"));
        let depth = match r.depth {
            Some(d) => d.to_string(),
            None => "none".to_string(),
        };
        let traffic = s.figure == "latency";
        let completion = pair(r.completion_cycles.map(|x| x.to_string()), r.reference_completion_cycles.map(|x| x.to_string()));
        let avg = pair(f1(r.latency_avg_cycles), f1(r.reference_latency_avg_cycles));
        let p99 = pair(r.latency_p99_cycles.map(|x| x.to_string()), r.reference_latency_p99_cycles.map(|x| x.to_string()));
        let dash = || "-".to_string();
        let o = &r.occupancy;
        let occ = match (o.occupancy_p50, o.occupancy_p99, o.occupancy_p999, o.occupancy_max) {
            (Some(a), Some(b), Some(c), Some(d)) => format!("{a}/{b}/{c}/{d}"),
            _ => "-".to_string(),
        };
        t += &format!(
            "{:>8}  {:<9} {:>6}  {:>21}  {:>17}  {:>21}  {:>22}\n",
            rate,
            r.class,
            depth,
            if traffic { avg } else { dash() },
            if traffic { p99 } else { dash() },
            if traffic { dash() } else { completion },
            occ
        );
        let failing: Vec<String> = r.trials.iter().filter(|t| t.outcome != "ok").map(|t| format!("{} {}", t.depth, t.outcome)).collect();
        if !failing.is_empty() {
            t += &format!("{:>8}  {:<9} depths that did not complete: {}\n", "", "", failing.join(", "));
        }
    }
    // With one class, its own search ran the combination already.
    for c in s.combined.iter().filter(|c| c.depths.len() > 1) {
        let depths: Vec<String> = c.depths.iter().map(|(n, d)| format!("{n} {d}")).collect();
        t += &format!(
            "together at rate {}: {} {}\n",
            c.rate.map_or_else(|| "-".to_string(), |x| format!("{x}")),
            depths.join(", "),
            if c.trial.passes { "pass" } else { "do NOT pass together: size with more margin" }
        );
    }
    t
}

/// Refuse an `--out` that is a file; create the directory.
pub(crate) fn prepare_out(out: &Path) -> Result<(), ConfigError> {
    if out.exists() && !out.is_dir() {
        return Err(bad("out", &out.display().to_string(), "a directory (this is a file)"));
    }
    std::fs::create_dir_all(out).map_err(|e| bad("out", &out.display().to_string(), &format!("a directory it can create ({e})")))
}

fn write(path: &Path, text: &str) -> Result<(), ConfigError> {
    crate::output::write_file("out", path, text)
}

/// Latency (or completion time) against depth, one line per rate and class.
fn plot(path: &Path, s: &Sizing) -> Result<(), ConfigError> {
    let fail = |e: String| ConfigError::new("out", path.display(), format!("cannot draw it: {e}"));
    let traffic = s.figure == "latency";
    let y_of = |t: &Trial| if traffic { t.latency_avg_cycles } else { t.completion_cycles.map(|c| c as f64) };
    let points: Vec<(String, Vec<(f64, f64)>)> = s
        .recommendations
        .iter()
        .map(|r| {
            let label = match r.rate {
                Some(x) => format!("rate {x}, {}", r.class),
                None => r.class.to_string(),
            };
            (label, r.trials.iter().filter(|t| t.outcome == "ok").filter_map(|t| y_of(t).map(|y| (t.depth as f64, y))).collect())
        })
        .collect();
    let ymax = points.iter().flat_map(|(_, p)| p.iter().map(|&(_, y)| y)).fold(1.0f64, f64::max) * 1.1;
    let xmax = s.reference_depth as f64 * 1.5;
    crate::plot::svg_file(path, (720, 480), |root| {
        root.fill(&WHITE).map_err(|e| fail(e.to_string()))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!(
                    "{} against buffer depth (marks: runs; ref. depth {})",
                    if traffic { "mean latency" } else { "completion time" },
                    s.reference_depth
                ),
                ("sans-serif", 18),
            )
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(56)
            .build_cartesian_2d((0.8f64..xmax).log_scale().with_key_points(crate::plot::pow2_ticks_all(1.0, xmax)), 0f64..ymax)
            .map_err(|e| fail(e.to_string()))?;
        chart
            .configure_mesh()
            .x_desc("buffer depth (flits per VC)")
            .y_desc(if traffic { "latency (cycles)" } else { "completion (cycles)" })
            .x_label_formatter(&|x| crate::plot::tick_label(*x))
            .draw()
            .map_err(|e| fail(e.to_string()))?;
        for (k, (label, pts)) in points.into_iter().enumerate() {
            crate::reproduce::marked_line(&mut chart, k, label, pts, &fail)?;
        }
        crate::reproduce::legend_and_present(&mut chart, &root, &fail)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ladder_ends_at_the_reference_depth() {
        assert_eq!(ladder(64), vec![1, 2, 4, 8, 16, 32, 64]);
        assert_eq!(ladder(48), vec![1, 2, 4, 8, 16, 32, 48]);
        assert_eq!(ladder(1), vec![1]);
    }

    #[test]
    fn a_closed_bracket_asks_for_nothing() {
        let s = |lo, hi| Search { rate: None, class: CLASSES[0], tried: vec![], lo, hi };
        assert_eq!(s(4, Some(8)).next(), Some(6));
        assert_eq!(s(4, Some(5)).next(), None);
        assert_eq!(s(0, Some(1)).next(), None);
        assert_eq!(s(32, None).next(), None);
    }
}
