//! `flitwave size-buffers` against an exhaustive scan of depths: every depth run with
//! `flitwave run`, the criterion applied here to its JSON, independently of the command.

use serde_json::Value;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_flitwave");

/// Command-line words from one string.
fn words(s: &str) -> Vec<&str> {
    s.split_whitespace().collect()
}

fn flitwave(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("flitwave runs")
}

fn json_of(args: &[&str]) -> (i32, Value) {
    let o = flitwave(args);
    let text = String::from_utf8_lossy(&o.stdout);
    let v = serde_json::from_str(text.trim())
        .unwrap_or_else(|e| panic!("flitwave {}: {e}\n{text}\n{}", args.join(" "), String::from_utf8_lossy(&o.stderr)));
    (o.status.code().unwrap(), v)
}

/// The port classes size-buffers sizes: (name, the run flag of its depth).
const CLASSES: [(&str, &str); 2] = [("network", "--buffer-flits"), ("injection", "--inject-buffer-flits")];

/// One `flitwave run` with class `class` (an index in [`CLASSES`]) at `depth`, the other
/// at `reference`: (exit code, JSON).
fn run_at(flags: &[&str], class: usize, depth: u32, reference: u32) -> (i32, Value) {
    let (d, r) = (depth.to_string(), reference.to_string());
    let mut args = vec!["run"];
    args.extend_from_slice(flags);
    for (k, (_, flag)) in CLASSES.iter().enumerate() {
        args.extend_from_slice(&[flag, if k == class { &d } else { &r }]);
    }
    args.extend_from_slice(&["--quiet", "--json", "-"]);
    json_of(&args)
}

/// The criterion, written out: complete, and within `tol` of the reference (mean and p99
/// latency, accepted throughput within 1 %; an algorithm's completion time).
fn within(run: &(i32, Value), reference: &Value, tol: f64) -> bool {
    let (code, r) = run;
    if *code != 0 {
        return false;
    }
    let f = |v: &Value, k: &str| v[k].as_f64();
    // Traffic runs report accepted throughput; algorithms do not.
    match (f(r, "latency_avg_cycles"), f(reference, "latency_avg_cycles")) {
        (Some(avg), Some(ref_avg)) if reference["accepted_flits_per_node_cycle"].is_number() => {
            avg <= ref_avg * (1.0 + tol) + 1e-9
                && f(r, "latency_p99_cycles").unwrap() <= f(reference, "latency_p99_cycles").unwrap() * (1.0 + tol) + 1e-9
                && f(r, "accepted_flits_per_node_cycle").unwrap() >= f(reference, "accepted_flits_per_node_cycle").unwrap() * 0.99 - 1e-12
        }
        _ => f(r, "completion_cycles").unwrap() <= f(reference, "completion_cycles").unwrap() * (1.0 + tol) + 1e-9,
    }
}

/// The smallest depth of class `class` from which every depth up to `max` passes, by
/// running them all.
fn exhaustive(flags: &[&str], class: usize, max: u32, tol: f64) -> (Option<u32>, Vec<(i32, Value)>) {
    let runs: Vec<(i32, Value)> = (1..=max).map(|d| run_at(flags, class, d, max)).collect();
    let reference = &runs[max as usize - 1].1;
    let mut best = None;
    for d in (1..=max).rev() {
        if !within(&runs[d as usize - 1], reference, tol) {
            break;
        }
        best = Some(d);
    }
    (best, runs)
}

fn size(flags: &[&str], extra: &[&str]) -> (i32, Value) {
    let mut args = vec!["size-buffers"];
    args.extend_from_slice(flags);
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--quiet", "--json", "-"]);
    json_of(&args)
}

#[test]
fn traffic_depths_match_an_exhaustive_scan() {
    for rate in ["0.05", "0.1"] {
        let mut flags = words("--topology mesh --dims 4x4 --traffic uniform --packet-flits 4 --switching wh --vcs 2");
        flags.extend(words("--router realistic --cycles 3000 --warmup 500 --rate"));
        flags.push(rate);
        let (code, sizing) = size(&flags, &["--max-depth", "16"]);
        assert_eq!(code, 0, "{sizing}");
        // One recommendation per class, each against its own scan (the other class deep).
        for (k, (name, _)) in CLASSES.iter().enumerate() {
            let (expected, runs) = exhaustive(&flags, k, 16, 0.1);
            let rec = &sizing["recommendations"][k];
            assert_eq!(rec["class"], *name);
            assert_eq!(rec["rate"].as_f64().unwrap(), rate.parse::<f64>().unwrap());
            assert_eq!(rec["depth"].as_u64().map(|d| d as u32), expected, "rate {rate}: {rec}");
            let d = expected.expect("deep buffers pass") as usize;
            // The figures reported are those of `flitwave run` at that depth and at the reference.
            let at = &runs[d - 1].1;
            assert_eq!(rec["latency_avg_cycles"], at["latency_avg_cycles"]);
            assert_eq!(rec["reference_latency_avg_cycles"], runs[15].1["latency_avg_cycles"]);
            assert_eq!(rec["latency_p99_cycles"], at["latency_p99_cycles"]);
            let occ = &at["occupancy"][*name];
            for (field, of) in [("occupancy_p50", "p50_flits"), ("occupancy_p99", "p99_flits"), ("occupancy_p999", "p999_flits")] {
                assert_eq!(rec[field], occ[of], "{field}: {rec}");
            }
            assert_eq!(rec["occupancy_max"], occ["max_flits"]);
            assert!(rec["occupancy_max"].as_u64().unwrap() <= d as u64, "{rec}");
            // Every depth it ran agrees with the run of that depth.
            for t in rec["trials"].as_array().unwrap() {
                let depth = t["depth"].as_u64().unwrap() as usize;
                assert_eq!(t["passes"].as_bool().unwrap(), within(&runs[depth - 1], &runs[15].1, 0.1), "depth {depth}: {t}");
                assert_eq!(t["latency_avg_cycles"], runs[depth - 1].1["latency_avg_cycles"]);
                assert_eq!(t["occupancy_p99"], runs[depth - 1].1["occupancy"][*name]["p99_flits"]);
            }
        }
        // Fewer runs than the scans.
        assert!(sizing["runs"].as_u64().unwrap() < 2 * 16, "{sizing}");
        // The classes together: the verdict of a run at both recommended depths.
        let c = &sizing["combined"][0];
        let depth = |k: usize| c["depths"][k][1].as_u64().unwrap().to_string();
        assert_eq!((c["depths"][0][0].as_str(), c["depths"][1][0].as_str()), (Some("network"), Some("injection")), "{c}");
        let (n, i) = (depth(0), depth(1));
        let mut args = vec!["run"];
        args.extend_from_slice(&flags);
        args.extend_from_slice(&["--buffer-flits", &n, "--inject-buffer-flits", &i, "--quiet", "--json", "-"]);
        let together = json_of(&args);
        let reference = run_at(&flags, 0, 16, 16).1;
        assert_eq!(c["trial"]["passes"].as_bool().unwrap(), within(&together, &reference, 0.1), "{c}");
        assert_eq!(c["trial"]["latency_avg_cycles"], together.1["latency_avg_cycles"]);
    }
}

#[test]
fn depths_that_deadlock_are_never_recommended() {
    // Wormhole broadcasts the routers replicate with one VC, each branch allocated on its
    // own: shallow buffers deadlock.
    let flags = words(
        "--topology hypercube --dims 4 --algorithm mnb-sbt --forwarding router --multicast-va per-branch --switching wh --packet-flits 8 --vcs 1",
    );
    let (expected, runs) = exhaustive(&flags, 0, 16, 0.1);
    let deadlocking: Vec<u32> = (1..=16).filter(|&d| runs[d as usize - 1].0 == 3).collect();
    assert!(!deadlocking.is_empty(), "the case must deadlock at some depth");
    let (code, sizing) = size(&flags, &["--max-depth", "16"]);
    assert_eq!(code, 0, "{sizing}");
    let rec = &sizing["recommendations"][0];
    let depth = rec["depth"].as_u64().unwrap() as u32;
    assert_eq!(Some(depth), expected, "{rec}");
    assert!(depth > *deadlocking.iter().max().unwrap());
    assert_eq!(rec["completion_cycles"], runs[depth as usize - 1].1["completion_cycles"]);
    for t in rec["trials"].as_array().unwrap() {
        let d = t["depth"].as_u64().unwrap() as u32;
        if deadlocking.contains(&d) {
            assert_eq!(t["outcome"], "deadlock", "{t}");
            assert_eq!(t["passes"], false, "{t}");
        }
    }
}

#[test]
fn store_and_forward_depths_below_a_packet_are_refused_not_recommended() {
    let flags = ["--topology", "hypercube", "--dims", "3", "--algorithm", "snb", "--switching", "sf", "--packet-flits", "4"];
    let (code, sizing) = size(&flags, &["--max-depth", "8"]);
    assert_eq!(code, 0, "{sizing}");
    let rec = &sizing["recommendations"][0];
    assert!(rec["depth"].as_u64().unwrap() >= 4, "{rec}");
    let refused: Vec<&Value> = rec["trials"].as_array().unwrap().iter().filter(|t| t["outcome"] == "refused").collect();
    assert!(!refused.is_empty(), "{rec}");
    assert!(refused.iter().all(|t| t["depth"].as_u64().unwrap() < 4 && t["reason"].as_str().unwrap().contains("buffer-flits")));
    // The injection VCs too: a store-and-forward buffer holds a whole packet.
    let rec = &sizing["recommendations"][1];
    assert_eq!(rec["class"], "injection");
    assert!(rec["depth"].as_u64().unwrap() >= 4, "{rec}");
    let refused: Vec<&Value> = rec["trials"].as_array().unwrap().iter().filter(|t| t["outcome"] == "refused").collect();
    assert!(!refused.is_empty() && refused.iter().all(|t| t["reason"].as_str().unwrap().starts_with("inject-buffer-flits:")), "{rec}");
}

#[test]
fn writes_table_json_and_plot() {
    let dir = std::env::temp_dir().join(format!("flitwave-size-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut args = words("size-buffers --topology mesh --dims 4x4 --traffic uniform --rates 0.05,0.1 --cycles 2000");
    args.extend(["--max-depth", "8", "--out", dir.to_str().unwrap()]);
    let o = flitwave(&args);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(dir.join("sizing.txt")).unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stdout), text);
    // A row per rate and class, then a row per rate for the classes together.
    let rows = |class: &str| text.lines().filter(|l| l.split_whitespace().nth(1) == Some(class)).count();
    assert_eq!((rows("network"), rows("injection")), (2, 2), "{text}");
    assert_eq!(text.lines().filter(|l| l.starts_with("together at rate")).count(), 2, "{text}");
    assert!(text.lines().nth(1).unwrap().contains("occ. p50/p99/p99.9/max"), "{text}");
    assert_eq!(text.lines().count(), 1 + 1 + 4 + 2, "{text}");
    let json: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("sizing.json")).unwrap()).unwrap();
    let recs = json["recommendations"].as_array().unwrap();
    assert_eq!(recs.len(), 4);
    for r in recs {
        for key in ["rate", "class", "depth", "latency_avg_cycles", "reference_latency_avg_cycles", "occupancy_p99"] {
            assert!(!r[key].is_null(), "{key}: {r}");
        }
    }
    let svg = std::fs::read_to_string(dir.join("sizing.svg")).unwrap();
    for label in ["rate 0.05, network", "rate 0.1, network", "rate 0.05, injection", "rate 0.1, injection"] {
        assert!(svg.contains(label), "{label}: {svg}");
    }
    assert!(svg.starts_with("<svg"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let mesh = ["size-buffers", "--topology", "mesh", "--dims", "4x4", "--traffic", "uniform"];
    for (extra, expect) in [
        (&["--tolerance", "-1"][..], &["tolerance: -1", "fraction"][..]),
        (&["--max-depth", "0"], &["max-depth: 0", "1 to 4096"]),
        (&["--jobs", "x"], &["jobs: x"]),
        (&["--buffer-flits", "4"], &["buffer-flits: 4", "size-buffers chooses"]),
        (&["--inject-buffer-flits", "4"], &["inject-buffer-flits: 4", "size-buffers chooses"]),
        (&["--vcd", "w.vcd"], &["vcd: w.vcd"]),
        (&["--rates", "0.1,abc"], &["rates: 0.1,abc", "rate: abc"]),
        (&["--rates", "0.1", "--rate", "0.2"], &["rate: 0.2", "--rates"]),
    ] {
        let args = [&mesh[..], extra].concat();
        let o = flitwave(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        for w in expect {
            assert!(err.contains(w), "{args:?}: {err} lacks {w}");
        }
    }
    let o = flitwave(&["size-buffers", "--dims", "3", "--rates", "0.1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("rates: 0.1: traffic loads; the algorithm snb has none"));
}
