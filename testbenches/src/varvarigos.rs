//! `flitwave reproduce varvarigos-bertsekas`: the paper's numerical example (§IV: N = 2^16,
//! M = 2^10, t_p = 1 and 0) simulated against its formulas, and the dynamic scheme's mean
//! delay against the load with the theorem's bound (§V) for d = 6 and 8.

use crate::config::{Config, ConfigError, Raw};
use crate::reproduce::{parallel, parallel_on, write};
use crate::run::{self, Report};
use plotters::prelude::*;
use std::fmt::Write as _;
use std::path::Path;

fn run_flags(flags: &[(&str, String)]) -> Result<Report, ConfigError> {
    let raw = Raw::from_given(std::iter::once(("topology", "hypercube".to_string())).chain(flags.iter().cloned()))?;
    Ok(run::run(&Config::resolve(&raw)?))
}

/// One row of the example: algorithm, t_p, the paper's printed number (d = 16 only).
struct ExampleRow {
    label: &'static str,
    algorithm: &'static str,
    printed: [Option<u64>; 2],
}

const EXAMPLE: &[ExampleRow] = &[
    ExampleRow { label: "full MNB (Bertsekas et al.)", algorithm: "mnb", printed: [Some(4096), Some(4096)] },
    ExampleRow { label: "PMNB I (§IV-A)", algorithm: "pmnb-1", printed: [Some(157), Some(125)] },
    ExampleRow { label: "PMNB II, split packets (§IV-B)", algorithm: "pmnb-2", printed: [Some(98), Some(66)] },
    ExampleRow { label: "PMNB III, no splitting (§IV-C)", algorithm: "pmnb-3", printed: [Some(160), Some(96)] },
];

/// Simulating more deliveries than this is left to `flitwave run` (minutes, not seconds).
const MAX_DELIVERIES: f64 = 1.2e8;

pub fn reproduce(out: &Path, d: u32) -> Result<i32, ConfigError> {
    std::fs::create_dir_all(out).map_err(|e| ConfigError::new("out", out.display(), format!("cannot create it: {e}")))?;
    let n = 1u64 << d;
    // The paper's M = 2^10 of N = 2^16, scaled to other cubes as N^(10/16).
    let m = 1u64 << ((d * 10) as f64 / 16.0).round() as u32;
    let mut ok = true;

    // The example.
    let mut jobs = Vec::new();
    for (ri, row) in EXAMPLE.iter().enumerate() {
        for (ti, tp) in [1u32, 0].into_iter().enumerate() {
            let pieces = if row.algorithm == "pmnb-2" { d as f64 } else { 1.0 };
            let msgs = if row.algorithm == "mnb" { n as f64 } else { m as f64 };
            let deliveries = msgs * pieces * (n - 1) as f64;
            if row.algorithm == "mnb" && ti == 1 {
                continue; // no prefix: one run serves both columns
            }
            jobs.push((ri, ti, tp, deliveries <= MAX_DELIVERIES, deliveries));
        }
    }
    eprintln!("reproduce varvarigos-bertsekas: the example on the {d}-cube, M = {m} ({} runs)", jobs.iter().filter(|j| j.3).count());
    // One run at a time, each split between two threads: the wall time per run is what the
    // example is about (these algorithms split; results do not depend on it).
    let results = parallel_on(1, &jobs, |&(ri, _, tp, simulate, _)| -> Result<Option<Report>, ConfigError> {
        if !simulate {
            return Ok(None);
        }
        let alg = EXAMPLE[ri].algorithm;
        let mut flags = vec![("dims", d.to_string()), ("algorithm", alg.to_string()), ("threads", "2".to_string())];
        if alg != "mnb" {
            flags.push(("active-count", m.to_string()));
            flags.push(("tp", tp.to_string()));
            flags.push(("seed", "16".to_string()));
        }
        run_flags(&flags).map(Some)
    });
    // The paper states two lower bounds (§IV): with packets split, eq. (13), (M − 1)/d
    // (whole slots: ceil((M − 1)/d)); without splitting max{d, ceil((M − 1)/d)}, the
    // diameter included. The full MNB is the case M = N without splitting.
    let (split_lb, whole_lb, mnb_lb) =
        ((m - 1).div_ceil(d as u64), (d as u64).max((m - 1).div_ceil(d as u64)), (d as u64).max((n - 1).div_ceil(d as u64)));
    let mut md = format!(
        "# Varvarigos & Bertsekas: partial multinode broadcast on the {d}-cube (N = {n}, M = {m})\n\n\
         Ideal router, all-port, store-and-forward, one slot per packet (PMNB II: d mini-packets of 1/d slot). \
         Random active set (seed 16). Formula: the paper's bound (§IV); printed: the number the paper's example gives (d = 16). \
         Lower bound (§IV): without splitting max{{d, ceil((M-1)/d)}} = {whole_lb} (PMNB I and III; the full MNB, M = N: {mnb_lb}); \
         with packets split (PMNB II), eq. (13), (M-1)/d, in whole slots ceil((M-1)/d) = {split_lb}.\n\n\
         | algorithm | t_p | printed | formula | simulated | lower bound | wall s |\n|---|---|---|---|---|---|---|\n"
    );
    let mut csv = String::from("algorithm,tp,printed,formula,simulated,lower_bound,wall_seconds\n");
    for (i, &(ri, ti, tp, _, deliveries)) in jobs.iter().enumerate() {
        let row = &EXAMPLE[ri];
        let formula = match row.algorithm {
            "mnb" => (n - 1).div_ceil(d as u64) as f64,
            a => {
                let v = fabric::algorithms::pmnb::Variant::parse(a).unwrap();
                fabric::algorithms::pmnb::formula(v, d, m, tp as f64)
            }
        };
        let printed = if d == 16 { row.printed[ti].map_or("—".into(), |p| p.to_string()) } else { "—".into() };
        let (lower, lower_label) = match row.algorithm {
            "mnb" => (mnb_lb, "max{d, ceil((N-1)/d)}"),
            "pmnb-2" => (split_lb, "ceil((M-1)/d), split"),
            _ => (whole_lb, "max{d, ceil((M-1)/d)}"),
        };
        let tp_label = if row.algorithm == "mnb" { "—".to_string() } else { tp.to_string() };
        let (sim, wall) = match &results[i] {
            Err(e) => return Err(e.clone()),
            Ok(Some(r)) => {
                // Within the formula, above the lower bound, and the JSON gives the same one.
                let good =
                    r.exit_code() == 0 && r.slots <= formula + 1e-9 && r.slots >= lower as f64 && r.lower_bound_slots == Some(lower as f64);
                ok &= good;
                (if good { format!("{}", r.slots) } else { format!("**{}**", r.slots) }, format!("{:.1}", r.wall_seconds))
            }
            Ok(None) => {
                let cmd = if row.algorithm == "mnb" {
                    format!("flitwave run --dims {d} --algorithm mnb")
                } else {
                    format!("flitwave run --dims {d} --algorithm {} --active-count {m} --tp {tp}", row.algorithm)
                };
                (format!("not run here ({deliveries:.1e} deliveries; `{cmd}`)"), "—".into())
            }
        };
        writeln!(md, "| {} | {tp_label} | {printed} | {} | {sim} | {lower} ({lower_label}) | {wall} |", row.label, fmt2(formula)).unwrap();
        let simv = results[i].as_ref().ok().and_then(|r| r.as_ref()).map_or(String::new(), |r| r.slots.to_string());
        writeln!(csv, "{},{tp_label},{printed},{formula},{simv},{lower},{wall}", row.algorithm).unwrap();
    }
    // The paper's own numbers are for its example, the 16-cube.
    if d == 16 {
        md += "\nThe paper prints 160 and 96 for PMNB III, one more than its own formula ceil(M/d) + 2d + 4d t_p - 1 gives (159, 95); \
           the simulation, which runs the algorithm as described, needs fewer still: its broadcast phase lasts sum_l ceil(ceil(M/d)/2^l) \
           slots, below Lemma 1's bound ceil(M/d) + d - 1.\n";
    }

    // Delay against load.
    let configs: Vec<(u32, &str, u32, u64)> =
        [(6, "pmnb-2", 0, 4000), (6, "pmnb-3", 0, 4000), (6, "pmnb-2", 1, 4000), (8, "pmnb-2", 0, 1500), (8, "pmnb-3", 0, 2500)]
            .into_iter()
            .filter(|c| c.0 <= d)
            .collect();
    let fracs = [0.1, 0.3, 0.5, 0.7, 0.85, 0.95, 1.15, 1.4];
    let mut djobs = Vec::new();
    for (ci, c) in configs.iter().enumerate() {
        for &f in &fracs {
            djobs.push((ci, f, c.3));
        }
    }
    eprintln!("reproduce varvarigos-bertsekas: dynamic broadcasting, {} runs", djobs.len());
    let dres = parallel(&djobs, |&(ci, frac, slots)| -> Result<Report, ConfigError> {
        let (dd, pmnb, tp, _) = configs[ci];
        let flits = if pmnb == "pmnb-2" { dd as u64 } else { 1 };
        let limit = stability_limit(dd, pmnb, tp);
        run_flags(&[
            ("dims", dd.to_string()),
            ("algorithm", "dynamic".into()),
            ("pmnb", pmnb.into()),
            ("tp", tp.to_string()),
            ("load", format!("{:.6}", (limit * frac).min(10.0))),
            ("cycles", (slots * flits).to_string()),
            ("seed", "7".into()),
        ])
    });
    let mut dcsv = String::from(
        "d,pmnb,tp,load,stability_limit,avg_delay_slots,ci_low,ci_high,p99,delay_bound_slots,throughput,offered,mean_backlog,stable\n",
    );
    md += "\n# Dynamic broadcasting (§V)\n\nPoisson arrivals at every node, load rho = lambda (N-1)/d (eq. 17); \
           delay in slots from arrival to the end of the period that served the packet; bound: eq. 18, W + X + min((N-1)X/2, rho W), \
           with W of eq. 19 at the low end of the theorem's range of a (the largest W it allows), X = (N-1)/(dN), \
           V = 2d t_p + 2 (PMNB II) or 2d + 4d t_p (PMNB III); limit: 1/(1 + V/(NX)) in eq. 17's units.\n\n\
           | d | PMNB | t_p | load | mean delay (95% CI) | p99 | bound | stable |\n|---|---|---|---|---|---|---|---|\n";
    for (i, &(ci, _, _)) in djobs.iter().enumerate() {
        let (dd, pmnb, tp, _) = configs[ci];
        let r = dres[i].as_ref().map_err(|e| e.clone())?;
        let g = |k: &str| r.results.get(k).cloned().unwrap_or(serde_json::Value::Null);
        let th = g("theorem");
        let avg = g("avg_delay_slots").as_f64();
        let ci95 = g("avg_delay_ci95");
        let bound = th["delay_bound_slots"].as_f64();
        let stable = g("stable").as_bool().unwrap_or(false);
        let load = r.config_load();
        let limit = th["stability_limit_load"].as_f64().unwrap_or(0.0);
        // Inside the region the mean must sit below the bound and the backlog stay bounded;
        // well above the limit the scheme must be found unstable.
        let good = r.exit_code() == 0
            && match bound {
                Some(b) => avg.is_some_and(|a| a < b) && (load > 0.9 * limit || stable),
                None => load < 1.1 * limit || !stable,
            };
        ok &= good;
        let mark = |s: String| if good { s } else { format!("**{s}**") };
        writeln!(
            md,
            "| {dd} | {pmnb} | {tp} | {load:.3} | {} | {} | {} | {} |",
            mark(format!(
                "{} ({}–{})",
                avg.map_or("—".into(), fmt2),
                ci95[0].as_f64().map_or("—".into(), fmt2),
                ci95[1].as_f64().map_or("—".into(), fmt2)
            )),
            g("delay_p99_slots").as_f64().map_or("—".into(), fmt2),
            bound.map_or("unstable".into(), fmt2),
            if stable { "yes" } else { "no" }
        )
        .unwrap();
        writeln!(
            dcsv,
            "{dd},{pmnb},{tp},{load},{limit},{},{},{},{},{},{},{},{},{stable}",
            avg.map_or(String::new(), |v| v.to_string()),
            ci95[0].as_f64().map_or(String::new(), |v| v.to_string()),
            ci95[1].as_f64().map_or(String::new(), |v| v.to_string()),
            g("delay_p99_slots").as_f64().map_or(String::new(), |v| v.to_string()),
            bound.map_or(String::new(), |v| v.to_string()),
            g("throughput"),
            g("offered"),
            g("mean_backlog"),
        )
        .unwrap();
    }
    for dd in [6u32, 8].into_iter().filter(|&x| x <= d) {
        let pts: Vec<(usize, &Report)> = djobs
            .iter()
            .enumerate()
            .filter(|(_, j)| configs[j.0].0 == dd)
            .map(|(i, j)| (j.0, dres[i].as_ref().expect("checked above")))
            .collect();
        plot_delay(&out.join(format!("delay-d{dd}.svg")), dd, &configs, &pts)?;
    }
    let verdict = if ok {
        "Every simulated PMNB is within its formula; every stable load's mean delay is below the theorem's bound, and loads above the limit are unstable."
    } else {
        "Entries in bold break the paper's claims (see the CSV)."
    };
    writeln!(md, "\n{verdict}").unwrap();
    write(&out.join("pmnb-example.md"), &md)?;
    write(&out.join("pmnb-example.csv"), &csv)?;
    write(&out.join("dynamic.csv"), &dcsv)?;
    println!("reproduce varvarigos-bertsekas: {verdict}");
    println!("  {}/pmnb-example.md, pmnb-example.csv, dynamic.csv, delay-d<d>.svg", out.display());
    Ok(if ok { 0 } else { 1 })
}

fn fmt2(x: f64) -> String {
    if x.fract() == 0.0 { format!("{x}") } else { format!("{x:.3}") }
}

/// The stability limit in eq. 17's load: λ(NX + V) < 1 with λ = ρd/(N − 1).
fn stability_limit(d: u32, pmnb: &str, tp: u32) -> f64 {
    fabric::algorithms::dynamic::theorem(&dynamic_spec(d, pmnb, tp, 0.0)).stability_limit_load
}

/// The dynamic scheme's parameters on the ideal router (for the theorem's numbers).
fn dynamic_spec(d: u32, pmnb: &str, tp: u32, load: f64) -> fabric::algorithms::dynamic::DynamicSpec {
    let flits = if pmnb == "pmnb-2" { d as u16 } else { 1 };
    fabric::algorithms::dynamic::DynamicSpec {
        variant: fabric::algorithms::pmnb::Variant::parse(pmnb).expect("pmnb-2 or pmnb-3"),
        d,
        load,
        window: 1,
        warmup: 0,
        flits,
        tp_cycles: tp as u64 * flits as u64,
        seed: 0,
        hop: (0, flits as u64 / if pmnb == "pmnb-2" { d as u64 } else { 1 }),
        prefix_hop: (0, fabric::algorithms::prefix::packet_flits(tp as u64 * flits as u64, flits) as u64),
        handover: 0,
    }
}

trait LoadOf {
    fn config_load(&self) -> f64;
}

impl LoadOf for Report {
    fn config_load(&self) -> f64 {
        match &self.config.workload {
            crate::config::Workload::Algorithm { dynamic: Some(c), .. } => c.load,
            _ => 0.0,
        }
    }
}

fn plot_delay(path: &Path, d: u32, configs: &[(u32, &str, u32, u64)], pts: &[(usize, &Report)]) -> Result<(), ConfigError> {
    let fail = |e: String| ConfigError::new("out", path.display(), format!("cannot draw it: {e}"));
    crate::plot::svg_file(path, (760, 500), |root| {
        root.fill(&WHITE).map_err(|e| fail(e.to_string()))?;
        let ymax = pts.iter().filter_map(|(_, r)| r.results.get("avg_delay_slots").and_then(|v| v.as_f64())).fold(10.0f64, f64::max) * 2.0;
        let xmax = pts.iter().map(|(_, r)| r.config_load()).fold(0.1f64, f64::max) * 1.05;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("Dynamic broadcasting on the {d}-cube: mean delay vs load (marks: simulated, lines: bound)"),
                ("sans-serif", 16),
            )
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(56)
            .build_cartesian_2d(0f64..xmax, (0.5f64..ymax).log_scale().with_key_points(crate::plot::log_ticks(0.5, ymax)))
            .map_err(|e| fail(e.to_string()))?;
        chart
            .configure_mesh()
            .x_desc("load rho = lambda (N-1)/d")
            .y_desc("mean delay, slots")
            .y_label_formatter(&|y| crate::plot::tick_label(*y))
            .draw()
            .map_err(|e| fail(e.to_string()))?;
        let colors = [BLUE, RED, GREEN, MAGENTA, BLACK];
        for (ci, c) in configs.iter().enumerate().filter(|(_, c)| c.0 == d) {
            let color = colors[ci % colors.len()];
            let label = format!("{} t_p={}", c.1, c.2);
            let limit = stability_limit(d, c.1, c.2);
            let spec = dynamic_spec(d, c.1, c.2, 0.0);
            let curve: Vec<(f64, f64)> = (1..200)
                .map(|i| limit * i as f64 / 200.0)
                .filter_map(|l| {
                    let th = fabric::algorithms::dynamic::theorem(&fabric::algorithms::dynamic::DynamicSpec { load: l, ..spec });
                    th.delay_bound_slots.filter(|&b| b < ymax).map(|b| (l, b))
                })
                .collect();
            chart
                .draw_series(LineSeries::new(curve, color.stroke_width(2)))
                .map_err(|e| fail(e.to_string()))?
                .label(format!("{label}: bound (limit {limit:.2})"))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color));
            let marks: Vec<(f64, f64, bool)> = pts
                .iter()
                .filter(|(i, _)| *i == ci)
                .filter_map(|(_, r)| {
                    let a = r.results.get("avg_delay_slots")?.as_f64()?;
                    Some((r.config_load(), a.min(ymax * 0.9), r.results.get("stable")?.as_bool()?))
                })
                .collect();
            chart
                .draw_series(marks.iter().map(|&(x, y, stable)| {
                    if stable {
                        Circle::new((x, y), 4, color.filled()).into_dyn()
                    } else {
                        Cross::new((x, y), 6, color.stroke_width(2)).into_dyn()
                    }
                }))
                .map_err(|e| fail(e.to_string()))?
                .label(format!("{label}: simulated (x: unstable)"))
                .legend(move |(x, y)| Circle::new((x + 9, y), 4, color.filled()));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .position(SeriesLabelPosition::LowerRight)
            .draw()
            .map_err(|e| fail(e.to_string()))?;
        root.present().map_err(|e| fail(e.to_string()))?;
        Ok(())
    })
}
