//! `flitwave run` with the Seidel 1993 broadcasts and their cost model: the JSON's cost_us
//! and model_us against Table I written out here, and one-line errors (exit 2) for
//! everything the model cannot take.

use serde_json::Value;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_flitwave");

fn flitwave(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("flitwave runs")
}

fn json(args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.extend(["--json", "-", "--quiet"]);
    let o = flitwave(&a);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn close(got: f64, want: f64, tol: f64, what: &str) {
    assert!((got / want - 1.0).abs() < tol, "{what}: {got} vs {want}");
}

/// Linear BST (eq. 7) and ST (eq. 2) with the Delta constants and with custom ones.
#[test]
fn cost_and_model_in_the_json() {
    let (a, b) = (0.08, 75.0);
    let m = 65536.0;
    let v = json(&["run", "--topology", "linear", "--dims", "16", "--algorithm", "bst", "--message-bytes", "65536"]);
    let eq7 = 5.0 * (m * a / 2.0 + b);
    close(v["model_us"].as_f64().unwrap(), eq7, 1e-9, "model_us, eq. 7");
    close(v["cost_us"].as_f64().unwrap(), eq7, 0.02, "cost_us vs eq. 7");
    assert_eq!(v["config"]["cost"]["model"], "delta");
    assert_eq!(v["steps"], 5);
    // Custom constants, nu = 1, 8 nodes: eq. 2 = (2 + (d-nu-2)/2^nu) ma + (d+nu) b.
    let (a, b, m) = (0.02, 10.0, 8192.0);
    let v = json(&[
        "run",
        "--topology",
        "linear",
        "--dims",
        "8",
        "--algorithm",
        "st",
        "--a",
        "0.02",
        "--b",
        "10",
        "--nu",
        "1",
        "--message-bytes",
        "8192",
    ]);
    let eq2 = (2.0 + 0.0 / 2.0) * m * a + 4.0 * b;
    close(v["model_us"].as_f64().unwrap(), eq2, 1e-9, "model_us, eq. 2");
    close(v["cost_us"].as_f64().unwrap(), eq2, 0.02, "cost_us vs eq. 2");
    assert_eq!(v["config"]["cost"]["model"], "custom");
    assert_eq!(v["config"]["vcs"], 2);
    // A mesh from another source, with companions: 6x12 -> 4x8 plus the 2 x 2 step.
    let v = json(&[
        "run",
        "--topology",
        "mesh",
        "--dims",
        "6x12",
        "--algorithm",
        "st",
        "--fill",
        "companions",
        "--root",
        "2,4",
        "--message-bytes",
        "512",
    ]);
    let (a, b, m) = (0.08f64, 75.0f64, 512.0f64);
    let eq6 = (2.0 + (3.0 - 2.0) / 2.0) * m * a + 8.0 * b;
    let extra = (2.0 * (m * a + b)).min(3.0 * (m * a / 2.0 + b));
    close(v["model_us"].as_f64().unwrap(), eq6 + extra, 1e-9, "model_us, eq. 6 + companions");
    close(v["cost_us"].as_f64().unwrap(), eq6 + extra, 0.02, "cost_us vs eq. 6 + companions");
}

/// Every bad input is one line on stderr and exit code 2.
#[test]
fn bad_input_is_one_line() {
    let cases: &[(&[&str], &str)] = &[
        (&["--topology", "linear", "--algorithm", "st", "--switching", "sf"], "switching: sf: set by the cost model"),
        (&["--topology", "linear", "--algorithm", "st", "--startup-cycles", "5"], "startup-cycles: 5: set by the cost model"),
        (&["--topology", "linear", "--dims", "11", "--algorithm", "rh", "--fill", "virtual"], "fill: virtual: sec. 5.1"),
        (&["--topology", "linear", "--dims", "16", "--algorithm", "st", "--fill", "companions"], "fill: companions: every side"),
        (&["--topology", "mesh", "--dims", "12x10", "--algorithm", "bst"], "dims: 12x10: sides must be powers of two"),
        (&["--topology", "mesh", "--dims", "12x10", "--algorithm", "bst", "--fill", "companions", "--root", "1"], "root: 1:"),
        (&["--topology", "mesh", "--dims", "4x4x4", "--algorithm", "st"], "dims: 4x4x4:"),
        (&["--topology", "mesh", "--dims", "4x4", "--algorithm", "bst", "--nu", "1"], "dims: 4x4: bst with nu = 1 needs"),
        (&["--topology", "linear", "--algorithm", "st", "--message-bytes", "0"], "message-bytes: 0:"),
        (&["--topology", "mesh", "--dims", "128x64", "--algorithm", "rh"], "dims: 128x64: rh with nu = 0 needs at most 4096 nodes"),
        (&["--topology", "linear", "--algorithm", "st", "--cost-model", "paragon"], "cost-model: paragon:"),
        (&["--topology", "linear", "--algorithm", "st", "--a", "0"], "a: 0:"),
        (&["--topology", "linear", "--algorithm", "st", "--nu", "5"], "nu: 5:"),
        // The Seidel algorithms are defined on linear arrays and meshes: any other topology
        // is refused as such, before a torus's dateline VCs ask for --vcs 2.
        (
            &["--topology", "torus", "--algorithm", "st"],
            "topology: torus: st (Seidel 1993) is defined on linear arrays and meshes only: --topology linear or mesh",
        ),
        (&["--topology", "torus", "--dims", "4x4", "--algorithm", "rh", "--vcs", "2"], "topology: torus: rh (Seidel 1993)"),
        (&["--topology", "hypercube", "--algorithm", "st"], "topology: hypercube: st (Seidel 1993) is defined on linear arrays and meshes"),
        (&["--algorithm", "bst"], "topology: hypercube (the default): bst (Seidel 1993)"),
        (
            &["--topology", "linear", "--algorithm", "st-simple"],
            "topology: linear: st-simple (Seidel 1993) is defined on meshes only: --topology mesh",
        ),
        // The constants, each on its own field and range.
        (
            &["--topology", "linear", "--algorithm", "st", "--a", "1e-300"],
            "a: 1e-300: the node-to-network cost in us per byte, a number from 1e-6 to 1000",
        ),
        (&["--topology", "linear", "--algorithm", "st", "--a", "nan"], "a: nan: "),
        (&["--topology", "linear", "--algorithm", "st", "--a", "2000"], "a: 2000: "),
        (&["--topology", "linear", "--algorithm", "st", "--b", "-1"], "b: -1: the start-up in us, a number from 0 to 1e6"),
        (&["--topology", "linear", "--algorithm", "st", "--b", "inf"], "b: inf: "),
        (
            &["--topology", "linear", "--algorithm", "rh", "--rho", "1e9"],
            "rho: 1e9: the permutation cost in us per byte, a number from 0 to 1000",
        ),
        // In range, but too many cycles together with a: the field given is named.
        (&["--topology", "linear", "--algorithm", "st", "--a", "1e-6", "--b", "1e6"], "b: 1e6: the start-up b would take 1e12 cycles"),
        (
            &["--topology", "linear", "--algorithm", "rh", "--a", "1e-6", "--rho", "1000", "--message-bytes", "65536"],
            "rho: 1000: the permutation m rho would take 4.096e12 cycles",
        ),
        (&["--algorithm", "snb", "--b", "3"], "b: 3: only applies to the Seidel"),
        (&["--traffic", "uniform", "--fill", "virtual"], "fill: virtual: only applies"),
    ];
    for (args, want) in cases {
        let mut a = vec!["run"];
        a.extend_from_slice(args);
        let o = flitwave(&a);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{a:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{a:?}: {err}");
        assert!(err.starts_with(&format!("flitwave: error: {want}")), "{a:?}: {err}");
        assert!(err.len() < 300, "{a:?}: {err}");
    }
    // The smallest a and the largest b simulate (each with the other at its default).
    for (f, v) in [("--a", "1e-6"), ("--b", "1e6")] {
        let o = flitwave(&["run", "--topology", "linear", "--dims", "4", "--algorithm", "st", f, v, "--quiet"]);
        assert_eq!(o.status.code(), Some(0), "{f} {v}: {}", String::from_utf8_lossy(&o.stderr));
    }
    // Help names every paper there is a reproduction of.
    let o = flitwave(&["reproduce", "--help"]);
    let help = String::from_utf8_lossy(&o.stdout);
    let known = ["bertsekas-1991", "stamoulis-tsitsiklis", "varvarigos-bertsekas", "seidel-1993"];
    for paper in known.iter().chain(testbenches::reproduce::PAPERS.iter().map(|(p, _)| p)) {
        assert!(help.contains(paper), "reproduce --help does not name {paper}: {help}");
    }
    let o = flitwave(&["reproduce", "seidel-1993", "--out", "/nonexistent-never", "--max-d", "3"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("max-d: 3:"));
}

/// Table I as printed (Intel Delta constants, Table II), µs: the linear array of 2^4 and the
/// 2^4 × 2^5 mesh of Section 6, written out here independently of the code's model.
fn table_one(alg: &str, mesh: bool, nu: u32, m: f64) -> f64 {
    let (a, b, rho) = (0.08, 75.0, 0.01);
    let ma = m * a;
    let nu = nu as f64;
    let p = |x: f64| 2f64.powf(x);
    if !mesh {
        let d = 4.0;
        return match alg {
            "st" => (2.0 + (d - nu - 2.0) / p(nu)) * ma + (d + nu) * b,
            "bst" => (2.0 + (d - nu - 3.0) / p(nu + 1.0)) * ma + (d + nu + 1.0) * b,
            "rh" => (2.0 + (d - nu - 2.0) / p(nu + 1.0) - 1.0 / p(d)) * ma + 2.0 * d * b + m * rho,
            _ => panic!("{alg}"),
        };
    }
    let (d1, d2) = (4.0, 5.0f64);
    match alg {
        "st" => (2.0 + (d2 - nu - 2.0) / p(2.0 * nu + 1.0)) * ma + (2.0 * d2 + 2.0 * nu + 2.0) * b,
        "bst" => (2.0 + (2.0 * d2 - 2.0 * nu - 5.0) / p(2.0 * nu + 3.0)) * ma + (2.0 * d2 + 2.0 * nu + 3.0) * b,
        "rh" => {
            (2.0 + (2.0 * (d2 - d1) - 3.0) / p(d1 + nu + 2.0) + 1.0 / p(2.0 * nu + 3.0) - 1.0 / p(d1 + d2)) * ma
                + 2.0 * (d1 + d2) * b
                + m * rho
        }
        _ => panic!("{alg}"),
    }
}

/// The whole reproduction, as CI runs it: its model columns are Table I as printed, its
/// ST and BST costs within 2 % of Table I (Table I's rows for ν = 0, 1, 2 and the figures'
/// 8 B … 64 KB), the figures and the crossovers written, the ST -> BST crossover of the
/// 16-node array near the model's 2^(nu+1) b / (a (d - nu - 1)) = 625 B.
#[test]
fn reproduce_seidel_1993_agrees_with_table_one() {
    let out = std::env::temp_dir().join(format!("flitwave-seidel-repro-{}", std::process::id()));
    let o = flitwave(&["reproduce", "seidel-1993", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    // Table I: algorithm,topology,nu,message_bytes,simulated_us,model_us,ratio.
    let csv = std::fs::read_to_string(out.join("table1.csv")).unwrap();
    let (mut rows, mut st_bst) = (0, 0);
    for line in csv.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let (alg, mesh, nu, m) = (f[0], f[1] == "mesh", f[2].parse::<u32>().unwrap(), f[3].parse::<f64>().unwrap());
        let (sim, model): (f64, f64) = (f[4].parse().unwrap(), f[5].parse().unwrap());
        let want = table_one(alg, mesh, nu, m);
        close(model, want, 1e-6, &format!("model column, {line}"));
        if alg == "st" || alg == "bst" {
            close(sim, want, 0.02, &format!("simulated vs Table I, {line}"));
            st_bst += 1;
        }
        rows += 1;
    }
    assert_eq!((rows, st_bst), (54, 36), "Table I rows: 6 algorithms x nu = 0..2 x 3 lengths");
    // Figures 16 and 18: figure,algorithm,message_bytes,simulated_us,model_us (nu = 0).
    let csv = std::fs::read_to_string(out.join("figures.csv")).unwrap();
    let mut points = 0;
    for line in csv.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let (mesh, alg, m) = (f[0] == "fig18", f[1], f[2].parse::<f64>().unwrap());
        let (sim, model): (f64, f64) = (f[3].parse().unwrap(), f[4].parse().unwrap());
        let want = table_one(alg, mesh, 0, m);
        close(model, want, 1e-6, &format!("model column, {line}"));
        if alg != "rh" {
            close(sim, want, 0.02, &format!("simulated vs Table I, {line}"));
        }
        points += 1;
    }
    assert_eq!(points, 2 * 3 * 14, "two figures, three algorithms, 8 B .. 64 KB");
    for f in ["fig16.svg", "fig18.svg", "crossovers.md"] {
        assert!(out.join(f).exists(), "{f}");
    }
    let cross = std::fs::read_to_string(out.join("crossovers.md")).unwrap();
    let model = 2.0 * 75.0 / (0.08 * 3.0);
    let row = cross.lines().find(|l| l.contains("linear array of 16")).unwrap();
    let lo: f64 = row.split("between ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
    assert!((lo - model).abs() / model < 0.05, "{row}");
    std::fs::remove_dir_all(&out).ok();
}
