//! The report's network-wide buffer occupancy per port class (`occupancy`), the separate
//! injection buffer depth (`--inject-buffer-flits`) and the statistics' detail (`--stats`),
//! through the `flitwave` binary.

use serde_json::Value;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_flitwave");

fn flitwave(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("flitwave runs")
}

/// `flitwave run ARGS --quiet --json -`: the report, and the JSON's length in bytes.
fn run(args: &[&str]) -> (Value, usize) {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--quiet", "--json", "-"]);
    let o = flitwave(&all);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "flitwave {}\n{}", all.join(" "), String::from_utf8_lossy(&o.stderr));
    (serde_json::from_str(text.trim()).unwrap(), text.len())
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("a whole number: {v}"))
}

/// Percentile q of a histogram, computed here: the first level whose cumulative count
/// reaches q of the total.
fn percentile(h: &[u64], q: f64) -> u64 {
    let total: u64 = h.iter().sum();
    let mut acc = 0;
    for (k, &c) in h.iter().enumerate() {
        acc += c;
        if acc as f64 >= q * total as f64 {
            return k as u64;
        }
    }
    unreachable!("the last level reaches the total")
}

/// The class figures against the per-VC histograms of the same run (`--stats full`, whole
/// run: an algorithm), summed and read here.
#[test]
fn class_percentiles_are_those_of_the_summed_per_vc_histograms() {
    let cases: [&[&str]; 4] = [
        &[
            "--dims",
            "4",
            "--algorithm",
            "mnb",
            "--router",
            "realistic",
            "--switching",
            "wh",
            "--packet-flits",
            "4",
            "--buffer-flits",
            "6",
            "--inject-buffer-flits",
            "3",
        ],
        &[
            "--dims",
            "4",
            "--algorithm",
            "total-exchange",
            "--ports",
            "one",
            "--packet-flits",
            "3",
            "--switching",
            "vct",
            "--buffer-flits",
            "5",
        ],
        &[
            "--topology",
            "torus",
            "--dims",
            "4x4",
            "--vcs",
            "2",
            "--packet-flits",
            "2",
            "--switching",
            "wh",
            "--buffer-flits",
            "2",
            "--stats",
            "full",
        ],
        &[
            "--topology",
            "mesh",
            "--dims",
            "5x3",
            "--router",
            "realistic",
            "--switching",
            "wh",
            "--packet-flits",
            "6",
            "--buffer-flits",
            "3",
        ],
    ];
    for args in cases {
        let (v, _) = run(args);
        let o = &v["occupancy"];
        let cycles = u(&v["simulated_cycles"]);
        assert_eq!((u(&o["from"]), u(&o["to"])), (0, cycles), "{args:?}: the whole run");
        assert_eq!(v["stats"]["detail"], "full");
        for (class, inj) in [("network", false), ("injection", true)] {
            let c = &o[class];
            // The VCs that ever held a flit are listed; the others spent every cycle empty.
            let listed: Vec<&Value> =
                v["stats"]["vcs"].as_array().unwrap().iter().filter(|vc| vc["port"].as_str().unwrap().starts_with("inj") == inj).collect();
            let mut sum = vec![0u64; 1];
            for vc in &listed {
                let h: Vec<u64> = vc["histogram"].as_array().unwrap().iter().map(u).collect();
                assert_ne!(h.last(), Some(&0), "per-VC histograms end at their last nonzero entry: {vc}");
                if sum.len() < h.len() {
                    sum.resize(h.len(), 0);
                }
                for (k, x) in h.iter().enumerate() {
                    sum[k] += x;
                }
            }
            let vcs = u(&c["vcs"]);
            sum[0] += (vcs - listed.len() as u64) * cycles;
            let total: u64 = sum.iter().sum();
            assert_eq!(u(&c["vc_cycles"]), total, "{args:?} {class}");
            assert_eq!(total, vcs * cycles, "{args:?} {class}");
            let hist: Vec<u64> = c["histogram"].as_array().unwrap().iter().map(u).collect();
            assert_eq!(hist, sum, "{args:?} {class}");
            assert_eq!(u(&c["p50_flits"]), percentile(&sum, 0.5), "{args:?} {class}");
            assert_eq!(u(&c["p99_flits"]), percentile(&sum, 0.99), "{args:?} {class}");
            assert_eq!(u(&c["p999_flits"]), percentile(&sum, 0.999), "{args:?} {class}");
            assert_eq!(u(&c["max_flits"]), sum.len() as u64 - 1, "{args:?} {class}");
            assert_eq!(u(&c["max_flits"]), u(&v["max_buffer_occupancy"][class]), "{args:?} {class}");
            let mean = sum.iter().enumerate().map(|(k, &x)| k as f64 * x as f64).sum::<f64>() / total as f64;
            assert!((c["mean_flits"].as_f64().unwrap() - mean).abs() < 1e-9, "{args:?} {class}");
        }
    }
}

/// A traffic run's occupancy covers its measurement window `[--warmup, --cycles)` only,
/// every VC every cycle of it, whether the run is split between threads or not; the VCs of
/// a mesh's unconnected edge ports are not counted.
#[test]
fn traffic_occupancy_covers_the_window() {
    let args = ["--topology", "mesh", "--dims", "4x4", "--traffic", "uniform", "--rate", "0.1", "--cycles", "1500", "--warmup", "300"];
    let (v, _) = run(&args);
    let o = &v["occupancy"];
    assert_eq!((u(&o["from"]), u(&o["to"])), (300, 1500));
    // 4x4 mesh: 48 links and 16 NIC channels, 2 VCs each.
    assert_eq!((u(&o["network"]["vcs"]), u(&o["injection"]["vcs"])), (96, 32));
    for class in ["network", "injection"] {
        assert_eq!(u(&o[class]["vc_cycles"]), u(&o[class]["vcs"]) * 1200, "{class}");
        assert!(u(&o[class]["max_flits"]) <= u(&v["max_buffer_occupancy"][class]), "{class}");
    }
    let mut split = args.to_vec();
    split.extend_from_slice(&["--threads", "2"]);
    assert_eq!(run(&split).0["occupancy"], *o, "split between two threads");
    // Far beyond the window's end the network has drained: the whole run's histograms
    // (the per-VC ones) hold more empty cycles than the window.
    assert!(u(&v["simulated_cycles"]) > 1500);
}

/// The injection VCs hold at most `--inject-buffer-flits` flits, the network VCs keep their
/// own depth, and one-flit injection buffers throttle a loaded network.
#[test]
fn the_injection_depth_applies_to_the_injection_vcs() {
    let base = ["--topology", "mesh", "--dims", "4x4", "--traffic", "uniform", "--rate", "0.15", "--cycles", "2000", "--warmup", "200"];
    let at = |inject: &str| {
        let mut a = base.to_vec();
        a.extend_from_slice(&["--buffer-flits", "8", "--inject-buffer-flits", inject]);
        run(&a).0
    };
    let (shallow, deep) = (at("1"), at("8"));
    assert_eq!(u(&shallow["config"]["inject_buffer_flits"]), 1);
    assert_eq!(u(&shallow["config"]["buffer_flits"]), 8);
    assert!(u(&shallow["max_buffer_occupancy"]["injection"]) <= 1, "{}", shallow["max_buffer_occupancy"]);
    assert!(u(&shallow["occupancy"]["injection"]["max_flits"]) <= 1);
    assert!(u(&deep["occupancy"]["injection"]["max_flits"]) > 1, "{}", deep["occupancy"]);
    assert!(u(&shallow["occupancy"]["network"]["max_flits"]) > 1, "{}", shallow["occupancy"]);
    let accepted = |v: &Value| v["accepted_flits_per_node_cycle"].as_f64().unwrap();
    assert!(accepted(&shallow) < accepted(&deep) * 0.95, "accepted {} against {}", accepted(&shallow), accepted(&deep));
    // By default the injection VCs are as deep as the network's.
    let (v, _) = run(&["--topology", "mesh", "--dims", "3x3", "--buffer-flits", "5", "--packet-flits", "2"]);
    assert_eq!(u(&v["config"]["inject_buffer_flits"]), 5);
}

/// Above 4,096 routers the report is a summary: a 2^14-node hypercube's JSON stays small
/// with the network-wide occupancy in it; `--stats full` brings the per-VC and per-link
/// detail back, and a small fabric has it by default.
#[test]
fn summary_statistics_stay_small_on_big_fabrics() {
    let (big, bytes) = run(&["--topology", "hypercube", "--dims", "14", "--algorithm", "snb"]);
    assert!(bytes < 1 << 20, "{bytes} bytes");
    assert_eq!(big["stats"]["detail"], "summary");
    assert!(big["stats"].get("vcs").is_none() && big["stats"].get("links").is_none(), "{}", big["stats"]);
    assert!(big["max_buffer_occupancy"].get("per_router_port").is_none());
    assert!(big["stats"]["max_link_utilization"].as_f64().unwrap() > 0.0);
    assert_eq!(u(&big["occupancy"]["network"]["vcs"]), 14 << 14);
    assert_eq!(u(&big["occupancy"]["injection"]["vcs"]), 14 << 14, "all-port NICs: a channel per link");
    assert_eq!(u(&big["occupancy"]["network"]["max_flits"]), 1);

    let (small, _) = run(&["--topology", "hypercube", "--dims", "3", "--algorithm", "mnb"]);
    assert_eq!(small["stats"]["detail"], "full");
    assert!(!small["stats"]["vcs"].as_array().unwrap().is_empty() && !small["stats"]["links"].as_array().unwrap().is_empty());
    assert_eq!(small["max_buffer_occupancy"]["per_router_port"].as_array().unwrap().len(), 8);
    let (summary, _) = run(&["--topology", "hypercube", "--dims", "3", "--algorithm", "mnb", "--stats", "summary"]);
    assert!(summary["stats"].get("vcs").is_none());
    assert_eq!(summary["occupancy"], small["occupancy"]);
    let (full, _) = run(&["--topology", "hypercube", "--dims", "13", "--stats", "full"]);
    assert_eq!(full["stats"]["detail"], "full");
    assert!(!full["stats"]["vcs"].as_array().unwrap().is_empty());
}

/// Bad values: one line and exit 2.
#[test]
fn bad_values_are_one_line_and_exit_2() {
    for (args, expect) in [
        (&["--stats", "foo"][..], &["stats: foo", "summary or full"][..]),
        (&["--inject-buffer-flits", "0"], &["inject-buffer-flits: 0", "1 to 4096"]),
        (&["--inject-buffer-flits", "4097"], &["inject-buffer-flits: 4097", "1 to 4096"]),
        (
            &["--packet-flits", "4", "--switching", "sf", "--inject-buffer-flits", "2"],
            &["inject-buffer-flits: 2", "whole packet", "--inject-buffer-flits 4"],
        ),
        (&["--stats", "summary", "--stats-csv", "s.csv"], &["stats-csv: s.csv", "--stats full"]),
    ] {
        let mut all = vec!["run", "--dims", "3"];
        all.extend_from_slice(args);
        let o = flitwave(&all);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{all:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{all:?}: {err}");
        assert!(err.starts_with("flitwave: error: "), "{all:?}: {err}");
        for w in expect {
            assert!(err.contains(w), "{all:?}: {err} lacks {w}");
        }
    }
    assert!(!std::path::Path::new("s.csv").exists());
}
