//! `flitwave reproduce seidel-1993`: Table I with simulated and model costs side by side,
//! Figures 16 (linear array of 16) and 18 (2^4 × 2^5 mesh) with the simulated points on
//! the model's curves, and the crossovers the paper reports, found by the simulation.

use crate::config::{Config, ConfigError, Raw};
use crate::reproduce::{legend_and_present, parallel, write};
use crate::run;
use fabric::algorithms::seidel::{Alg, model};
use plotters::prelude::*;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

/// One simulated broadcast.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Job {
    alg: &'static str,
    mesh: bool,
    nu: u32,
    m: u64,
}

/// The two machines of Section 6: a linear array of 16 and the 2^4 × 2^5 mesh.
const LINEAR: &str = "16";
const MESH: &str = "16x32";

/// (simulated µs, model µs, everything delivered).
type Cost = (f64, f64, bool);

fn measure(j: &Job) -> Result<Cost, ConfigError> {
    let (topo, dims) = if j.mesh { ("mesh", MESH) } else { ("linear", LINEAR) };
    let raw = Raw::from_given([
        ("topology", topo.to_string()),
        ("dims", dims.to_string()),
        ("algorithm", j.alg.to_string()),
        ("nu", j.nu.to_string()),
        ("message-bytes", j.m.to_string()),
        ("cost-model", "delta".to_string()),
    ])?;
    let r = run::run(&Config::resolve(&raw)?);
    let c = r.seidel.as_ref().expect("a Seidel run reports its cost");
    Ok((c.cost_us, c.model_us, r.exit_code() == 0))
}

/// The model's cost (Table I, Delta constants) of `alg` at m bytes.
fn model_at(alg: &str, mesh: bool, nu: u32, m: f64) -> f64 {
    let e: &[u32] = if mesh { &[4, 5] } else { &[4] };
    model::table_cost(Alg::parse(alg).unwrap(), !mesh, e, nu, m, model::DELTA)
}

/// Table I's rows: (label, algorithm, mesh, the formula as printed).
const TABLE: &[(&str, &str, bool, &str)] = &[
    ("linear ST", "st", false, "(2 + (d-nu-2)/2^nu) ma + (d+nu) b"),
    ("linear BST", "bst", false, "(2 + (d-nu-3)/2^(nu+1)) ma + (d+nu+1) b"),
    ("linear RH", "rh", false, "(2 + (d-nu-2)/2^(nu+1) - 1/2^d) ma + 2d b + m rho"),
    ("mesh ST", "st", true, "(2 + (max(d1,d2)-nu-2)/2^(2nu+1)) ma + (2max(d1,d2)+2nu+2) b"),
    ("mesh BST", "bst", true, "(2 + (2max(d1,d2)-2nu-5)/2^(2nu+3)) ma + (2max(d1,d2)+2nu+3) b"),
    ("mesh RH", "rh", true, "(2 + (2(d2-d1)-3)/2^(d1+nu+2) + 1/2^(2nu+3) - 1/2^(d1+d2)) ma + 2(d1+d2) b + m rho (sec. 3.6's sums)"),
];

const TABLE_M: &[u64] = &[8, 1024, 65536];
const FIG_ALGS: &[&str] = &["st", "bst", "rh"];

fn fig_m() -> impl Iterator<Item = u64> {
    (3..=16).map(|k| 1u64 << k)
}

/// A crossover the paper reports: where `b` becomes cheaper than `a`.
struct Crossover {
    what: &'static str,
    mesh: bool,
    a: &'static str,
    b: &'static str,
    paper: &'static str,
}

const CROSSOVERS: &[Crossover] = &[
    Crossover {
        what: "ST -> BST, linear array of 16",
        mesh: false,
        a: "st",
        b: "bst",
        paper: "model: m > 2^(nu+1) b / (a (d-nu-1)) = 625 B; measured on the Delta between 256 and 512 B (Fig. 17)",
    },
    Crossover { what: "ST -> BST, 2^4 x 2^5 mesh", mesh: true, a: "st", b: "bst", paper: "between 512 B and 1 KB (Fig. 18, predicted)" },
    Crossover { what: "BST -> RH, 2^4 x 2^5 mesh", mesh: true, a: "bst", b: "rh", paper: "more than 12 KB (Fig. 18, predicted)" },
];

/// Where the model's `b` gets cheaper than `a` (bisection on m over 8 B .. 64 KB).
fn model_crossover(c: &Crossover) -> Option<f64> {
    let diff = |m: f64| model_at(c.b, c.mesh, 0, m) - model_at(c.a, c.mesh, 0, m);
    let (mut lo, mut hi) = (8.0f64, 65536.0f64);
    if diff(lo) <= 0.0 || diff(hi) > 0.0 {
        return None;
    }
    while hi - lo > 0.5 {
        let mid = (lo + hi) / 2.0;
        if diff(mid) > 0.0 { lo = mid } else { hi = mid }
    }
    Some(hi)
}

/// Where the simulated `b` gets cheaper than `a`: the first of Figure 16/18's message
/// lengths at which it is, refined by bisection on whole bytes to 1 %.
fn simulated_crossover(c: &Crossover, fig: &HashMap<Job, Cost>) -> Result<Option<(u64, u64)>, ConfigError> {
    let at = |alg: &'static str, m: u64| fig[&Job { alg, mesh: c.mesh, nu: 0, m }].0;
    let ms: Vec<u64> = fig_m().collect();
    let Some(i) = ms.iter().position(|&m| at(c.b, m) < at(c.a, m)) else { return Ok(None) };
    if i == 0 {
        return Ok(Some((0, ms[0])));
    }
    let (mut lo, mut hi) = (ms[i - 1], ms[i]);
    let cheaper = |m: u64| -> Result<bool, ConfigError> {
        Ok(measure(&Job { alg: c.b, mesh: c.mesh, nu: 0, m })?.0 < measure(&Job { alg: c.a, mesh: c.mesh, nu: 0, m })?.0)
    };
    while (hi - lo) as f64 > 0.01 * lo as f64 && hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if cheaper(mid)? { hi = mid } else { lo = mid }
    }
    Ok(Some((lo, hi)))
}

pub fn seidel(out: &Path) -> Result<i32, ConfigError> {
    std::fs::create_dir_all(out).map_err(|e| ConfigError::new("out", out.display(), format!("cannot create it: {e}")))?;
    let mut jobs: Vec<Job> = Vec::new();
    for &(_, alg, mesh, _) in TABLE {
        for nu in 0..=2 {
            for &m in TABLE_M {
                jobs.push(Job { alg, mesh, nu, m });
            }
        }
    }
    for mesh in [false, true] {
        for &alg in FIG_ALGS {
            jobs.extend(fig_m().map(|m| Job { alg, mesh, nu: 0, m }));
        }
    }
    jobs.sort_by_key(|j| (j.m, j.mesh));
    jobs.dedup();
    eprintln!(
        "reproduce seidel-1993: {} broadcasts (Table I for nu = 0..2, Figures 16 and 18), then 3 crossovers, on 2 threads",
        jobs.len()
    );
    let results: Vec<Cost> = parallel(&jobs, measure).into_iter().collect::<Result<_, _>>()?;
    let res: HashMap<Job, Cost> = jobs.iter().copied().zip(results).collect();
    let delivered = res.values().all(|r| r.2);

    // Table I.
    let mut t = String::from("# Table I: broadcast costs, simulated and by the model (µs)\n\n");
    t += "Intel Delta constants (Table II): a = 0.08 µs/byte, b = 75 µs, ρ = 0.01 µs/byte; links 2^ν times faster than the gateway. \
          Linear array of 2^4 nodes, mesh of 2^4 × 2^5 nodes, source node 0. One-port wormhole nodes, per-node programs; \
          the model column is Table I's formula (mesh RH: Section 3.6's sums).\n\n";
    t += "| algorithm | ν | m (bytes) | simulated | model | simulated / model |\n|---|---|---|---|---|---|\n";
    let mut csv = String::from("algorithm,topology,nu,message_bytes,simulated_us,model_us,ratio\n");
    let mut worst: HashMap<&str, f64> = HashMap::new();
    for &(label, alg, mesh, _) in TABLE {
        for nu in 0..=2 {
            for &m in TABLE_M {
                let (sim, mdl, _) = res[&Job { alg, mesh, nu, m }];
                writeln!(t, "| {label} | {nu} | {m} | {sim:.1} | {mdl:.1} | {:.3} |", sim / mdl).unwrap();
                writeln!(csv, "{alg},{},{nu},{m},{sim:.3},{mdl:.3},{:.5}", if mesh { "mesh" } else { "linear" }, sim / mdl).unwrap();
                let w = worst.entry(label).or_insert(0.0);
                *w = w.max((sim / mdl - 1.0).abs());
            }
        }
    }
    t += "\n## Formulas\n\n";
    for &(label, _, _, f) in TABLE {
        writeln!(t, "- {label}: {f}").unwrap();
    }
    t += "\n## Largest deviation from the model\n\n";
    for &(label, ..) in TABLE {
        writeln!(t, "- {label}: {:.1} %", 100.0 * worst[label]).unwrap();
    }
    write(&out.join("table1.md"), &t)?;
    write(&out.join("table1.csv"), &csv)?;

    // Figures 16 and 18.
    let mut fcsv = String::from("figure,algorithm,message_bytes,simulated_us,model_us\n");
    for (fig, mesh) in [("fig16", false), ("fig18", true)] {
        for &alg in FIG_ALGS {
            for m in fig_m() {
                let (sim, mdl, _) = res[&Job { alg, mesh, nu: 0, m }];
                writeln!(fcsv, "{fig},{alg},{m},{sim:.3},{mdl:.3}").unwrap();
            }
        }
        let title = if mesh {
            "Figure 18: broadcast cost, 2^4 x 2^5 mesh, nu = 0 (lines: model, marks: simulated)"
        } else {
            "Figure 16: broadcast cost, linear array of 2^4, nu = 0 (lines: model, marks: simulated)"
        };
        plot(&out.join(format!("{fig}.svg")), title, mesh, &res)?;
    }
    write(&out.join("figures.csv"), &fcsv)?;

    // Crossovers.
    eprintln!("reproduce seidel-1993: crossovers");
    let found: Vec<Result<Option<(u64, u64)>, ConfigError>> = parallel(CROSSOVERS, |c| simulated_crossover(c, &res));
    let mut x = String::from("# Crossovers (ν = 0, Delta constants)\n\n| crossover | simulated | model | paper |\n|---|---|---|---|\n");
    for (c, f) in CROSSOVERS.iter().zip(found) {
        let sim = match f? {
            None => "none up to 64 KB".to_string(),
            Some((0, hi)) => format!("at or below {hi} B"),
            Some((lo, hi)) => format!("between {lo} and {hi} B"),
        };
        let mdl = model_crossover(c).map_or("none in 8 B .. 64 KB".to_string(), |m| format!("{m:.0} B"));
        writeln!(x, "| {} | {sim} | {mdl} | {} |", c.what, c.paper).unwrap();
    }
    write(&out.join("crossovers.md"), &x)?;
    println!("reproduce seidel-1993: {} broadcasts, all delivered: {delivered}", jobs.len());
    for &(label, ..) in TABLE {
        println!("  {label:<10} largest deviation from Table I: {:5.1} %", 100.0 * worst[label]);
    }
    print!("{}", x.lines().skip(4).map(|l| format!("  {l}\n")).collect::<String>());
    println!("  {}/table1.md, table1.csv, fig16.svg, fig18.svg, figures.csv, crossovers.md", out.display());
    Ok(if delivered { 0 } else { 1 })
}

fn plot(path: &Path, title: &str, mesh: bool, res: &HashMap<Job, Cost>) -> Result<(), ConfigError> {
    let fail = |e: String| ConfigError::new("out", path.display(), format!("cannot draw it: {e}"));
    crate::plot::svg_file(path, (760, 520), |root| {
        root.fill(&WHITE).map_err(|e| fail(e.to_string()))?;
        let ymax =
            FIG_ALGS.iter().map(|a| res[&Job { alg: a, mesh, nu: 0, m: 65536 }].0.max(model_at(a, mesh, 0, 65536.0))).fold(0.0, f64::max);
        let ymin = FIG_ALGS.iter().map(|a| model_at(a, mesh, 0, 8.0)).fold(f64::MAX, f64::min);
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d(
                (6.0f64..90000.0).log_scale().with_key_points(crate::plot::pow2_ticks(6.0, 90000.0)),
                (ymin * 0.8..ymax * 1.3).log_scale().with_key_points(crate::plot::log_ticks(ymin * 0.8, ymax * 1.3)),
            )
            .map_err(|e| fail(e.to_string()))?;
        chart
            .configure_mesh()
            .x_desc("message length m (bytes)")
            .y_desc("cost (µs)")
            .x_label_formatter(&|x| crate::plot::bytes_label(*x))
            .y_label_formatter(&|y| crate::plot::tick_label(*y))
            .draw()
            .map_err(|e| fail(e.to_string()))?;
        for (&alg, color) in FIG_ALGS.iter().zip([BLUE, RED, GREEN]) {
            let curve = (0..=260).map(|i| {
                let m = 8.0 * 2f64.powf(i as f64 / 20.0);
                (m, model_at(alg, mesh, 0, m))
            });
            let name = alg.to_uppercase();
            chart
                .draw_series(LineSeries::new(curve, color.stroke_width(2)))
                .map_err(|e| fail(e.to_string()))?
                .label(format!("{name}: model"))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color));
            chart
                .draw_series(fig_m().map(|m| Cross::new((m as f64, res[&Job { alg, mesh, nu: 0, m }].0), 6, color.stroke_width(2))))
                .map_err(|e| fail(e.to_string()))?
                .label(format!("{name}: simulated"))
                .legend(move |(x, y)| Cross::new((x + 9, y), 5, color));
        }
        legend_and_present(&mut chart, &root, &fail)
    })
}
