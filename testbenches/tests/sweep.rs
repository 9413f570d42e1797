//! `flitwave sweep`, `merge` and `plot` through the binary: the rows of the product, the
//! same bytes run after run, resuming, shards merged, outcomes, bad input, the plot.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_flitwave");

/// A tiny traffic run: a 3x3 mesh for 300 cycles.
const SMALL: &str = "--topology mesh --dims 3x3 --traffic uniform --cycles 300 --quiet";

fn flitwave(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("flitwave runs")
}

/// `flitwave sweep` with `SMALL`, `extra` words and `--out dir`: the exit code.
fn sweep(extra: &str, dir: &Path) -> Output {
    let mut args = vec!["sweep"];
    args.extend(SMALL.split_whitespace());
    args.extend(extra.split_whitespace());
    let d = dir.to_str().unwrap();
    args.extend(["--out", d]);
    let o = flitwave(&args);
    assert!(o.status.code().is_some(), "{o:?}");
    o
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("flitwave-sweep-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn rows(dir: &Path) -> Vec<Value> {
    read(&dir.join("results.jsonl")).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn summary(dir: &Path) -> Value {
    serde_json::from_str(&read(&dir.join("sweep.json"))).unwrap()
}

fn same_results(a: &Path, b: &Path) {
    for f in ["results.jsonl", "results.csv"] {
        assert_eq!(read(&a.join(f)), read(&b.join(f)), "{f} of {} and {}", a.display(), b.display());
    }
}

/// One error line and exit 2.
fn refused(o: &Output, what: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{what}: {err}");
    assert_eq!(err.lines().count(), 1, "{what}: {err}");
    assert!(err.starts_with("flitwave: error: "), "{what}: {err}");
}

const GRID: &str = "--grid rate=0.05,0.1 --grid buffer-flits=4,8 --seeds 2";

#[test]
fn every_combination_in_product_order_the_same_bytes_each_time() {
    let d = scratch("product");
    let (a, b) = (d.join("a"), d.join("b"));
    let o = sweep(&format!("{GRID} --jobs 2"), &a);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let r = rows(&a);
    assert_eq!(r.len(), 8);
    let keys: Vec<(f64, u64, u64)> =
        r.iter().map(|r| (r["rate"].as_f64().unwrap(), r["buffer-flits"].as_u64().unwrap(), r["seed"].as_u64().unwrap())).collect();
    assert_eq!(keys[..3], [(0.05, 4, 1), (0.05, 4, 2), (0.05, 8, 1)]);
    assert_eq!(keys[7], (0.1, 8, 2));
    assert!(r.iter().enumerate().all(|(i, r)| r["id"] == i && r["outcome"] == "ok" && r["latency_avg_cycles"].is_f64()));
    // Seeds differ, so do their runs.
    assert_ne!(r[0]["packets_sent"], r[1]["packets_sent"]);
    let csv = read(&a.join("results.csv"));
    assert_eq!(csv.lines().count(), 9);
    assert!(csv.starts_with("id,rate,buffer-flits,seed,outcome,reason,latency_avg_cycles,"), "{csv}");
    assert!(!csv.contains("wall"), "{csv}");
    let s = summary(&a);
    assert_eq!((s["rows"].as_u64(), s["ran"].as_u64(), s["skipped"].as_u64()), (Some(8), Some(8), Some(0)));
    assert!(s["wall_seconds"].is_f64() && s["run_seconds"].is_f64(), "{s}");
    // One job or three: the same bytes.
    assert_eq!(sweep(&format!("{GRID} --jobs 3"), &b).status.code(), Some(0));
    same_results(&a, &b);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_spec_file_fixes_and_varies_keys_and_flags_override_it() {
    let d = scratch("spec");
    let spec = d.join("spec.toml");
    std::fs::write(
        &spec,
        "topology = \"mesh\"\ndims = [4, 4]\ntraffic = \"uniform\"\ncycles = 200\nseeds = 2\n[grid]\nrate = [0.05, 0.1]\nvcs = [1, 2]\n",
    )
    .unwrap();
    let out = d.join("out");
    // --dims overrides the file's; --grid vcs replaces the file's list.
    let o = flitwave(&["sweep", spec.to_str().unwrap(), "--dims", "3x3", "--grid", "vcs=2", "--quiet", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let s = summary(&out);
    assert_eq!(s["spec"]["fixed"]["dims"], "3x3", "{s}");
    assert_eq!(s["rows"], 4, "{s}");
    let r = rows(&out);
    assert!(r.iter().all(|r| r["vcs"] == 2));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_rerun_runs_only_the_rows_missing_or_cut_short() {
    let d = scratch("resume");
    let (whole, cut) = (d.join("whole"), d.join("cut"));
    assert_eq!(sweep(GRID, &whole).status.code(), Some(0));
    assert_eq!(sweep(GRID, &cut).status.code(), Some(0));
    // Nothing left to run.
    assert_eq!(sweep(GRID, &cut).status.code(), Some(0));
    assert_eq!((summary(&cut)["ran"].as_u64(), summary(&cut)["skipped"].as_u64()), (Some(0), Some(8)));
    same_results(&whole, &cut);
    // A crash in the middle of the seventh line: six rows whole, the seventh cut short.
    let text = read(&whole.join("results.jsonl"));
    let lines: Vec<&str> = text.lines().collect();
    let keep = format!("{}\n{}", lines[..6].join("\n"), &lines[6][..20]);
    std::fs::write(cut.join("results.jsonl"), keep).unwrap();
    assert_eq!(sweep(GRID, &cut).status.code(), Some(0));
    assert_eq!((summary(&cut)["ran"].as_u64(), summary(&cut)["skipped"].as_u64()), (Some(2), Some(6)));
    same_results(&whole, &cut);
    // A row taken out of the middle: it alone runs again, and goes back in its place.
    let mut middle: Vec<&str> = text.lines().collect();
    middle.remove(3);
    std::fs::write(cut.join("results.jsonl"), format!("{}\n", middle.join("\n"))).unwrap();
    assert_eq!(sweep(GRID, &cut).status.code(), Some(0));
    assert_eq!(summary(&cut)["ran"], 1);
    same_results(&whole, &cut);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn three_shards_merged_are_the_sweep_run_whole() {
    let d = scratch("shards");
    let whole = d.join("whole");
    assert_eq!(sweep(GRID, &whole).status.code(), Some(0));
    let shards: Vec<PathBuf> = (1..=3).map(|i| d.join(format!("shard{i}"))).collect();
    for (i, s) in shards.iter().enumerate() {
        assert_eq!(sweep(&format!("{GRID} --shard {}/3", i + 1), s).status.code(), Some(0));
        let ids: Vec<u64> = rows(s).iter().map(|r| r["id"].as_u64().unwrap()).collect();
        assert!(ids.iter().all(|id| id % 3 == i as u64), "{ids:?}");
    }
    let merged = d.join("merged");
    let mut args = vec!["merge"];
    args.extend(shards.iter().map(|s| s.to_str().unwrap()));
    args.extend(["--out", merged.to_str().unwrap()]);
    let o = flitwave(&args);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    same_results(&whole, &merged);
    // A shard given twice: its rows noted and kept once.
    let twice = d.join("twice");
    let mut args = vec!["merge", shards[0].to_str().unwrap()];
    args.extend(shards.iter().map(|s| s.to_str().unwrap()));
    args.extend(["--out", twice.to_str().unwrap()]);
    let o = flitwave(&args);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&o.stderr).lines().filter(|l| l.contains("(the same; kept once)")).count(), 3);
    same_results(&whole, &twice);
    // Without the second shard: its rows are missing, a line each, the rest written.
    let partial = d.join("partial");
    let o = flitwave(&["merge", shards[0].to_str().unwrap(), shards[2].to_str().unwrap(), "--out", partial.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    let missing: Vec<&str> = err.lines().filter(|l| l.ends_with(" missing")).collect();
    assert_eq!(
        missing,
        [
            "flitwave: merge: row 1 (rate=0.05, buffer-flits=4, seed=2) missing",
            "flitwave: merge: row 4 (rate=0.1, buffer-flits=4, seed=1) missing",
            "flitwave: merge: row 7 (rate=0.1, buffer-flits=8, seed=2) missing"
        ],
        "{err}"
    );
    assert_eq!(rows(&partial).len(), 5);
    // A shard of another sweep is refused.
    let other = d.join("other");
    assert_eq!(sweep("--grid rate=0.05", &other).status.code(), Some(0));
    refused(
        &flitwave(&["merge", shards[0].to_str().unwrap(), other.to_str().unwrap(), "--out", partial.to_str().unwrap()]),
        "another sweep",
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn deadlocks_and_refused_combinations_are_rows() {
    let d = scratch("outcomes");
    let dl = d.join("deadlock");
    let flags = "--topology hypercube --dims 4 --algorithm mnb-sbt --forwarding router --multicast-va per-branch --switching wh --packet-flits 8 --vcs 1 --quiet";
    let mut args: Vec<&str> = vec!["sweep"];
    args.extend(flags.split_whitespace());
    args.extend(["--grid", "buffer-flits=1,16", "--out", dl.to_str().unwrap()]);
    assert_eq!(flitwave(&args).status.code(), Some(0));
    let r = rows(&dl);
    assert_eq!((r[0]["outcome"].as_str(), r[1]["outcome"].as_str()), (Some("deadlock"), Some("ok")), "{r:?}");
    assert!(r[0]["reason"].as_str().unwrap().contains("watchdog"));
    let sf = d.join("sf");
    let o = flitwave(&[
        "sweep",
        "--dims",
        "3",
        "--switching",
        "sf",
        "--packet-flits",
        "4",
        "--grid",
        "buffer-flits=2,4",
        "--quiet",
        "--out",
        sf.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let r = rows(&sf);
    assert_eq!((r[0]["outcome"].as_str(), r[1]["outcome"].as_str()), (Some("refused"), Some("ok")), "{r:?}");
    assert!(r[0]["reason"].as_str().unwrap().starts_with("buffer-flits: 2: "), "{r:?}");
    assert!(r[0]["latency_avg_cycles"].is_null());
    let csv = read(&sf.join("results.csv"));
    assert!(csv.lines().nth(1).unwrap().starts_with("0,2,refused,buffer-flits: 2: "), "{csv}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let d = scratch("bad");
    let out = d.join("out");
    for (extra, what) in [
        ("--grid colour=1,2", "unknown key"),
        ("--grid rate=", "empty value"),
        ("--grid rate", "no values"),
        ("--grid rate=0.1,0.1", "a value twice"),
        ("--grid rate=0.1 --grid rate=0.2", "a key twice"),
        ("--grid cycles=100,200", "a flag and in the grid"),
        ("--grid vcd=a.vcd", "a per-run file"),
        ("--shard 0/3", "shard 0"),
        ("--shard 2", "shard without N"),
        ("--seeds 0", "no seeds"),
        ("--seeds 2 --seed 3", "a seed with seeds"),
        ("--jobs 0", "no jobs"),
        ("--grid rate=0.05 --topology cube", "no row a valid run"),
    ] {
        refused(&sweep(extra, &out), what);
    }
    refused(&flitwave(&["sweep", "--dims", "3", "--quiet"]), "no --out");
    let spec = d.join("bad.toml");
    for (text, what) in [
        ("dims = [3\n", "malformed TOML"),
        ("[grid]\nrate = 0.1\n", "a grid value that is not a list"),
        ("[grid]\nrate = []\n", "an empty list"),
        ("[grid]\nspeed = [1]\n", "an unknown grid key"),
        ("speed = 1\n", "an unknown fixed key"),
        ("seeds = \"two\"\n", "seeds not a number"),
        ("rate = 0.1\n[grid]\nrate = [0.2]\n", "fixed and varied"),
    ] {
        std::fs::write(&spec, text).unwrap();
        refused(&flitwave(&["sweep", spec.to_str().unwrap(), "--out", out.to_str().unwrap()]), what);
    }
    // Another sweep's directory, or a results file of someone else's, is left alone.
    assert_eq!(sweep("--grid rate=0.05", &out).status.code(), Some(0));
    let before = read(&out.join("results.jsonl"));
    refused(&sweep("--grid rate=0.1", &out), "another sweep's directory");
    assert_eq!(read(&out.join("results.jsonl")), before);
    let foreign = d.join("foreign");
    std::fs::create_dir_all(&foreign).unwrap();
    std::fs::write(foreign.join("results.csv"), "mine\n").unwrap();
    refused(&sweep("--grid rate=0.05", &foreign), "a foreign results.csv");
    assert_eq!(read(&foreign.join("results.csv")), "mine\n");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn plot_draws_a_line_per_series_value() {
    let d = scratch("plot");
    let out = d.join("out");
    assert_eq!(sweep(GRID, &out).status.code(), Some(0));
    let svg = d.join("latency.svg");
    let (o, s) = (out.to_str().unwrap(), svg.to_str().unwrap());
    let p = flitwave(&["plot", o, "--x", "rate", "--y", "latency_avg_cycles", "--series", "buffer-flits", "--out", s]);
    assert_eq!(p.status.code(), Some(0), "{}", String::from_utf8_lossy(&p.stderr));
    let text = read(&svg);
    assert!(text.contains("buffer-flits=4") && text.contains("buffer-flits=8"), "{text}");
    assert!(text.contains("latency_avg_cycles against rate"), "{text}");
    // The CSV itself, one series kept.
    let csv = out.join("results.csv");
    let p = flitwave(&[
        "plot",
        csv.to_str().unwrap(),
        "--x",
        "rate",
        "--y",
        "accepted_flits_per_node_cycle",
        "--where",
        "buffer-flits=8",
        "--out",
        s,
    ]);
    assert_eq!(p.status.code(), Some(0), "{}", String::from_utf8_lossy(&p.stderr));
    for (args, what) in [
        (vec!["--x", "speed", "--y", "latency_avg_cycles"], "an unknown x"),
        (vec!["--x", "rate", "--y", "latency"], "an unknown y"),
        (vec!["--x", "rate", "--y", "latency_avg_cycles", "--where", "vcs=2"], "an unknown where key"),
        (vec!["--x", "rate", "--y", "latency_avg_cycles", "--where", "seed=9"], "no row"),
    ] {
        let mut a = vec!["plot", o];
        a.extend(args);
        a.extend(["--out", s]);
        let p = flitwave(&a);
        refused(&p, what);
    }
    let p = flitwave(&["plot", o, "--x", "rate", "--y", "latency", "--out", s]);
    assert!(String::from_utf8_lossy(&p.stderr).contains("id, rate, buffer-flits, seed, outcome"), "{p:?}");
    std::fs::remove_dir_all(&d).unwrap();
}
