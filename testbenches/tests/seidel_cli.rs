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

/// The whole reproduction, as CI runs it: Table I's ST and BST within 2% of the model, the
/// figures and the crossovers written, the ST -> BST crossover of the 16-node array near
/// the model's 2^(nu+1) b / (a (d - nu - 1)) = 625 B.
#[test]
fn reproduce_seidel_1993_agrees_with_table_one() {
    let out = std::env::temp_dir().join(format!("flitwave-seidel-repro-{}", std::process::id()));
    let o = flitwave(&["reproduce", "seidel-1993", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = std::fs::read_to_string(out.join("table1.csv")).unwrap();
    let mut checked = 0;
    for line in csv.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        if f[0] == "st" || f[0] == "bst" {
            let ratio: f64 = f[6].parse().unwrap();
            assert!((ratio - 1.0).abs() < 0.02, "{line}");
            checked += 1;
        }
    }
    assert!(checked >= 24, "{checked} ST/BST rows");
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
