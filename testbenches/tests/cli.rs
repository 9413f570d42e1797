//! End-to-end tests of the `flitwave` binary: real processes, real exit codes, real output.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

const BIN: &str = env!("CARGO_BIN_EXE_flitwave");

/// A file or folder under the system temp dir, unique to this process and call, removed on drop.
struct Temp(PathBuf);

impl Temp {
    fn path(name: &str) -> Temp {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        Temp(std::env::temp_dir().join(format!("flitwave-cli-test-{}-{n}-{name}", std::process::id())))
    }
    fn file(name: &str, contents: &str) -> Temp {
        let t = Temp::path(name);
        std::fs::write(&t.0, contents).unwrap();
        t
    }
    fn dir(name: &str) -> Temp {
        let t = Temp::path(name);
        std::fs::create_dir_all(&t.0).unwrap();
        t
    }
    fn s(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        if self.0.is_dir() {
            let _ = std::fs::remove_dir_all(&self.0);
        } else {
            let _ = std::fs::remove_file(&self.0);
        }
    }
}

fn flitwave_in(dir: Option<&Path>, args: &[&str]) -> Output {
    let mut c = Command::new(BIN);
    c.args(args);
    if let Some(d) = dir {
        c.current_dir(d);
    }
    c.output().expect("flitwave runs")
}

fn flitwave(args: &[&str]) -> Output {
    flitwave_in(None, args)
}

fn describe(args: &[&str], o: &Output) -> String {
    format!(
        "flitwave {}\nexit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        args.join(" "),
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `flitwave run ARGS --json -`: the exit code and the parsed JSON result.
fn run_json(args: &[&str]) -> (i32, Value) {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--json", "-"]);
    let o = flitwave(&all);
    let code = o.status.code().unwrap_or_else(|| panic!("killed by a signal\n{}", describe(&all, &o)));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("stdout is not JSON ({e})\n{}", describe(&all, &o)));
    (code, v)
}

/// Run, expect exit 0, return the JSON.
fn run_ok(args: &[&str]) -> Value {
    let (code, v) = run_json(args);
    assert_eq!(code, 0, "flitwave run {} exited {code}: {v:#}", args.join(" "));
    v
}

fn f64_of(v: &Value, k: &str) -> f64 {
    v[k].as_f64().unwrap_or_else(|| panic!("{k} is not a number: {}", v[k]))
}

fn u64_of(v: &Value, k: &str) -> u64 {
    v[k].as_u64().unwrap_or_else(|| panic!("{k} is not a whole number: {}", v[k]))
}

const REPORT_FIELDS: &[&str] = &[
    "completion_cycles",
    "slots",
    "link_transmissions",
    "flit_hops",
    "deliveries",
    "missing_deliveries",
    "duplicate_deliveries",
    "lower_bound_slots",
    "paper_bound_slots",
    "max_buffer_occupancy",
    "deadlock",
    "wall_seconds",
    "config",
];

fn assert_hypercube5_broadcast(v: &Value) {
    for f in REPORT_FIELDS {
        assert!(v.get(f).is_some(), "JSON result lacks {f}: {v:#}");
    }
    assert_eq!(f64_of(v, "slots"), 5.0, "{v:#}");
    assert_eq!(u64_of(v, "link_transmissions"), 31, "{v:#}");
    assert_eq!(u64_of(v, "deliveries"), 31, "{v:#}");
    assert_eq!(u64_of(v, "missing_deliveries"), 0, "{v:#}");
    assert_eq!(u64_of(v, "duplicate_deliveries"), 0, "{v:#}");
    assert!(v["deadlock"].is_null(), "{v:#}");
}

#[test]
fn hypercube_broadcast_takes_d_slots_with_n_minus_1_transmissions() {
    assert_hypercube5_broadcast(&run_ok(&["--topology", "hypercube", "--dims", "5"]));
}

#[test]
fn hypercube_broadcast_one_port_takes_d_slots() {
    let v = run_ok(&["--topology", "hypercube", "--dims", "5", "--ports", "one"]);
    assert_hypercube5_broadcast(&v);
    assert_eq!(v["config"]["ports"], "one");
}

#[test]
fn hypercube_broadcast_router_forwarding_takes_d_slots() {
    let v = run_ok(&["--topology", "hypercube", "--dims", "5", "--forwarding", "router"]);
    assert_hypercube5_broadcast(&v);
    assert_eq!(v["config"]["workload"]["forwarding"], "router");
}

#[test]
fn mesh_broadcast_takes_the_roots_eccentricity() {
    let (dims, root) = ([5u32, 7], [1u32, 5]);
    let ecc: u32 = dims.iter().zip(&root).map(|(&n, &c)| c.max(n - 1 - c)).sum();
    assert_eq!(ecc, 8);
    let v = run_ok(&["--topology", "mesh", "--dims", "5x7", "--root", "1,5"]);
    assert_eq!(f64_of(&v, "slots"), ecc as f64, "{v:#}");
    assert_eq!(u64_of(&v, "missing_deliveries"), 0);
    assert_eq!(u64_of(&v, "link_transmissions"), 5 * 7 - 1);
    assert_eq!(v["config"]["workload"]["root_coords"], serde_json::json!(root));
}

#[test]
fn uniform_traffic_reports_latency_and_throughput_deterministically() {
    let args = ["--topology", "mesh", "--dims", "4x4", "--traffic", "uniform", "--rate", "0.05", "--cycles", "2000", "--seed", "7"];
    let mut a = run_ok(&args);
    assert!(f64_of(&a, "latency_avg_cycles") > 0.0, "{a:#}");
    assert!(u64_of(&a, "latency_p99_cycles") > 0, "{a:#}");
    assert!(f64_of(&a, "accepted_flits_per_node_cycle") > 0.0, "{a:#}");
    assert_eq!(u64_of(&a, "missing_deliveries"), 0);
    let mut b = run_ok(&args);
    for v in [&mut a, &mut b] {
        v.as_object_mut().unwrap().remove("wall_seconds").expect("wall_seconds present");
    }
    assert_eq!(a, b, "two runs with the same seed differ");
}

/// Accepted throughput counts the flits ejected in cycles [0, C). With the same seed the
/// injections before C do not depend on C, so that count never falls as C grows; it must
/// not either when the window ends while the whole fabric idles, waiting out start-up costs
/// (the window's end used to be missed then, and the throughput reported as 0).
#[test]
fn accepted_throughput_counts_the_window_even_when_it_ends_idle() {
    let mut last = 0.0f64;
    for c in 100..124u32 {
        let cycles = c.to_string();
        let v = run_ok(&[
            "--topology",
            "mesh",
            "--dims",
            "2x2",
            "--traffic",
            "uniform",
            "--rate",
            "0.01",
            "--cycles",
            &cycles,
            "--startup-cycles",
            "50",
            "--seed",
            "3",
        ]);
        let flits = f64_of(&v, "accepted_flits_per_node_cycle") * 4.0 * c as f64;
        assert!(flits > 0.0 && flits + 1e-6 >= last, "C={c}: {flits} flits accepted in the window, {last} in a shorter one: {v:#}");
        last = flits;
    }
}

/// The internal copy cost holds a NIC channel for `--copy-cycles-per-flit` cycles per flit
/// of every packet before its first flit, as a start-up cost of that many cycles would (it
/// had no effect at all): same timing as `--startup-cycles c x L`, and slower than neither.
#[test]
fn copy_cost_is_a_per_flit_start_up() {
    for (alg, ports, flits, copy) in [("snb", "one", "2", 3u64), ("mnb", "all", "4", 5), ("total-exchange", "one", "1", 7)] {
        let base = ["--dims", "4", "--algorithm", alg, "--ports", ports, "--packet-flits", flits];
        let with = |extra: &[&str]| {
            let mut a = base.to_vec();
            a.extend_from_slice(extra);
            let v = run_ok(&a);
            (u64_of(&v, "completion_cycles"), v["latency_avg_cycles"].clone())
        };
        let startup = (copy * flits.parse::<u64>().unwrap()).to_string();
        let (copied, by_startup, none) =
            (with(&["--copy-cycles-per-flit", &copy.to_string()]), with(&["--startup-cycles", &startup]), with(&[]));
        assert_eq!(copied, by_startup, "{alg}: copy {copy} x {flits} flits against a start-up of {startup}");
        assert!(copied.0 > none.0, "{alg}: the copy cost took no time");
    }
}

#[test]
fn scenario_file_with_flags_overriding_it() {
    let f = Temp::file("scenario.toml", "topology = \"hypercube\"\ndims = 4\nports = \"one\"\n");
    let v = run_ok(&[f.s()]);
    assert_eq!(f64_of(&v, "slots"), 4.0);
    let v = run_ok(&[f.s(), "--dims", "3"]);
    assert_eq!(f64_of(&v, "slots"), 3.0, "{v:#}");
    assert_eq!(u64_of(&v, "link_transmissions"), 7);
    assert_eq!(v["config"]["ports"], "one");
}

#[test]
fn json_to_a_file_matches_stdout() {
    let f = Temp::path("result.json");
    let o = flitwave(&["run", "--dims", "4", "--quiet", "--json", f.s()]);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&["run", "--json", f.s()], &o));
    assert!(o.stdout.is_empty(), "--quiet printed: {}", String::from_utf8_lossy(&o.stdout));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&f.0).unwrap()).unwrap();
    assert_eq!(f64_of(&v, "slots"), 4.0);
}

/// The wormhole ring without dateline VCs under saturating tornado traffic.
const TORUS_DEADLOCK: &[&str] = &[
    "--topology",
    "torus",
    "--dims",
    "8",
    "--traffic",
    "tornado",
    "--rate",
    "1",
    "--cycles",
    "400",
    "--packet-flits",
    "8",
    "--buffer-flits",
    "2",
    "--switching",
    "wh",
    "--watchdog",
    "200",
];

#[test]
fn torus_without_deadlock_avoidance_deadlocks_and_says_where() {
    let mut args = TORUS_DEADLOCK.to_vec();
    args.extend_from_slice(&["--vcs", "1", "--deadlock-avoidance", "off"]);
    let (code, v) = run_json(&args);
    assert_eq!(code, 3, "{v:#}");
    assert_eq!(v["ending"], "deadlock");
    let d = &v["deadlock"];
    assert!(d.is_object(), "deadlock is {d}");
    let cycle = d["wait_for_cycle"].as_array().expect("wait_for_cycle is a list");
    assert!(!cycle.is_empty(), "{d:#}");
    assert!(u64_of(&v, "missing_deliveries") > 0);
}

#[test]
fn torus_with_dateline_vcs_does_not_deadlock() {
    let mut args = TORUS_DEADLOCK.to_vec();
    args.extend_from_slice(&["--vcs", "2", "--deadlock-avoidance", "on"]);
    let (code, v) = run_json(&args);
    assert_eq!(code, 0, "{v:#}");
    assert!(v["deadlock"].is_null(), "{v:#}");
    assert_eq!(u64_of(&v, "missing_deliveries"), 0);
    assert!(u64_of(&v, "deliveries") > 0);
}

#[test]
fn no_arguments_runs_the_demo_and_writes_its_outputs() {
    let dir = Temp::dir("demo");
    let o = flitwave_in(Some(&dir.0), &[]);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&[], &o));
    assert!(!o.stdout.is_empty());
    let out = dir.0.join("flitwave-out");
    let summary = std::fs::read_to_string(out.join("summary.md")).expect("summary.md written");
    assert!(summary.starts_with('|'), "{summary}");
    let mut jsons = 0;
    for e in std::fs::read_dir(&out).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "json") {
            let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            assert_eq!(u64_of(&v, "missing_deliveries"), 0, "{}", p.display());
            let stem = p.file_stem().unwrap().to_str().unwrap();
            assert!(summary.contains(stem), "summary.md does not mention {stem}");
            jsons += 1;
        }
    }
    assert!(jsons >= 2, "only {jsons} JSON files in {}", out.display());
    // The waveform of a router-replicated broadcast on a 4x4 mesh, and the command opening it.
    let (fst, gtkw) = (out.join("snb-mesh4x4-router-wave.fst"), out.join("snb-mesh4x4-router-wave.gtkw"));
    let size = std::fs::metadata(&fst).expect("the demo writes an FST").len();
    assert!(size > 0 && size < 1 << 20, "{} is {size} bytes", fst.display());
    let mut w = wellen::simple::read(&fst).unwrap_or_else(|e| panic!("wellen cannot read {}: {e:?}", fst.display()));
    let h = w.hierarchy();
    let vars: Vec<(String, wellen::SignalRef)> = h.all_vars().map(|v| (h[v].full_name(h), h[v].signal_ref())).collect();
    assert!(vars.len() > 16, "{} signals", vars.len());
    w.load_signals(&vars.iter().map(|(_, r)| *r).collect::<Vec<_>>());
    let changes: usize = vars.iter().map(|(_, r)| w.get_signal(*r).expect("loaded").iter_changes().count()).sum();
    assert!(changes > vars.len(), "the waveform hardly changes: {changes} changes of {} signals", vars.len());
    assert!(w.time_table().last().is_some_and(|&t| t > 0));
    let save = std::fs::read_to_string(&gtkw).expect("the demo writes a GTKWave save file");
    let abs = std::fs::canonicalize(&fst).unwrap();
    assert!(save.contains(&format!("[dumpfile] \"{}\"", abs.display())), "{save:.400}");
    let stdout = String::from_utf8(o.stdout).unwrap();
    let command = stdout.lines().find(|l| l.contains("gtkwave ")).unwrap_or_else(|| panic!("no gtkwave command:\n{stdout}"));
    assert!(command.ends_with("gtkwave flitwave-out/snb-mesh4x4-router-wave.fst flitwave-out/snb-mesh4x4-router-wave.gtkw"), "{command}");
}

#[test]
fn list_names_every_algorithm_and_the_paper() {
    let o = flitwave(&["list"]);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&["list"], &o));
    let text = String::from_utf8(o.stdout).unwrap();
    for a in fabric::algorithms::ALGORITHMS {
        assert!(text.contains(a.name), "flitwave list does not mention {}", a.name);
    }
    for word in ["snb", "mnb-sbt", "Bertsekas", "hypercube", "mesh", "torus", "uniform"] {
        assert!(text.contains(word), "flitwave list does not mention {word}");
    }
}

/// `--router booksim` and `preset = "booksim"`: on a 2-node array every packet crosses one
/// link, alone at this rate, and takes BookSim's zero-load latency 5(H + 1) + 2 + (L - 1),
/// 15 cycles for 4 flits; `flitwave list` gives each preset's formula.
#[test]
fn booksim_preset() {
    let run = |router: &str| {
        let mut args: Vec<&str> =
            "--topology linear --dims 2 --traffic uniform --rate 0.001 --cycles 20000 --packet-flits 4 --router".split(' ').collect();
        args.push(router);
        let v = run_ok(&args);
        assert!(v["deliveries"].as_u64().unwrap() > 10, "{v}");
        (v["config"].clone(), v["latency_avg_cycles"].as_f64().unwrap(), v["latency_max_cycles"].as_u64().unwrap())
    };
    let (config, avg, max) = run("booksim");
    assert_eq!(config["router"], "booksim");
    let delays = serde_json::json!({"rc_delay": 1, "va_delay": 1, "link_latency": 3, "credit_delay": 1, "inject_latency": 5});
    assert_eq!(config["pipeline"], delays);
    assert_eq!((avg, max), (15.0, 15));
    // A router file on the preset: BookSim's own 2-cycle injection channel, 3 cycles less.
    let f = Temp::file("booksim.toml", "preset = \"booksim\"\ninject_latency = 2\n");
    let (config, avg, max) = run(f.s());
    assert_eq!(config["pipeline"]["link_latency"], 3);
    assert_eq!((avg, max), (12.0, 12));
    let f = Temp::file("iq.toml", "preset = \"iq\"\n");
    bad(&["run", "--router", f.s()], &["router", "preset = iq", "ideal, realistic, booksim"]);
    let o = flitwave(&["list"]);
    let text = String::from_utf8(o.stdout).unwrap();
    for formula in ["H + (L-1) (wh, vct); HL (sf)", "4H + 3 + (L-1) (wh, vct)", "5H + 7 + (L-1) (wh, vct)"] {
        assert!(text.contains(formula), "flitwave list does not give {formula}:\n{text}");
    }
}

/// Bad input: exit 2, nothing on stdout, one line on stderr, `flitwave: error: ...`, and
/// the line contains every one of `needles` (the field, the value, what is allowed).
fn bad(args: &[&str], needles: &[&str]) {
    let o = flitwave(args);
    let d = describe(args, &o);
    assert_eq!(o.status.code(), Some(2), "{d}");
    assert!(o.stdout.is_empty(), "stdout not empty: {d}");
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "not one line: {d}");
    assert!(err.ends_with('\n'));
    assert!(err.starts_with("flitwave: error: "), "{d}");
    assert!(!err.contains("panicked"), "{d}");
    for n in needles {
        assert!(err.contains(n), "the message does not contain {n:?}: {err}");
    }
}

#[test]
fn bad_topology_and_algorithm() {
    bad(&["run", "--topology", "ring"], &["topology", "ring", "hypercube", "mesh", "torus"]);
    bad(&["run", "--algorithm", "foo"], &["algorithm", "foo", "snb", "mnb-sbt"]);
    bad(&["run", "--topology", "mesh", "--algorithm", "mnb"], &["algorithm", "mnb", "mesh", "hypercube"]);
}

#[test]
fn bad_root() {
    bad(&["run", "--dims", "3", "--root", "8"], &["root: 8", "0 to 7"]);
    bad(&["run", "--topology", "mesh", "--dims", "4x4", "--root", "4,0"], &["root: 4,0", "4x4"]);
    bad(&["run", "--topology", "mesh", "--dims", "4x4", "--root", "-1,0"], &["root: -1,0"]);
    bad(&["run", "--dims", "6", "--root", "1,0"], &["root: 1,0", "hypercube"]);
}

#[test]
fn bad_sizes() {
    bad(&["run", "--topology", "mesh", "--dims", "4x0"], &["dims: 4x0", "at least 1"]);
    bad(&["run", "--dims", "-3"], &["dims: -3"]);
    bad(&["run", "--dims", "21"], &["dims: 21", "20"]);
    bad(&["run", "--topology", "mesh", "--dims", "4x4x"], &["dims: 4x4x"]);
    bad(&["run", "--topology", "linear", "--dims", "1"], &["dims: 1"]);
}

#[test]
fn sizes_too_big_for_memory_say_how_much_they_need() {
    bad(&["run", "--topology", "mesh", "--dims", "100000x100000"], &["dims: 100000x100000", "GiB"]);
    bad(&["run", "--topology", "mesh", "--dims", "4096x4096", "--vcs", "16", "--buffer-flits", "4096"], &["dims: 4096x4096", "GiB"]);
    // The 20-cube fits, but mnb-sbt's scoreboard (every node's broadcast at every node) does not.
    bad(&["run", "--dims", "20", "--algorithm", "mnb-sbt"], &["dims: 20", "mnb-sbt", "GiB"]);
}

#[test]
fn bad_router_parameters() {
    bad(&["run", "--buffer-flits", "-2"], &["buffer-flits: -2", "1 to 4096"]);
    bad(&["run", "--vcs", "0"], &["vcs: 0", "1 to 16"]);
    bad(&["run", "--dims", "6", "--ports", "9"], &["ports: 9", "1 to 6"]);
    bad(&["run", "--topology", "torus", "--vcs", "1"], &["vcs: 1", "deadlock-avoidance"]);
    bad(&["run", "--topology", "torus", "--vcs", "1", "--deadlock-avoidance", "on"], &["vcs: 1", "deadlock-avoidance"]);
    bad(&["run", "--switching", "cut"], &["switching: cut", "wh"]);
    bad(&["run", "--packet-flits", "4", "--buffer-flits", "2"], &["buffer-flits: 2", "whole packet"]);
}

#[test]
fn bad_workload_combinations() {
    bad(&["run", "--rate", "2"], &["rate: 2", "--traffic"]);
    bad(&["run", "--traffic", "uniform", "--rate", "2"], &["rate: 2", "(0, 1]"]);
    bad(&["run", "--traffic", "uniform", "--algorithm", "snb"], &["algorithm: snb", "traffic"]);
    bad(&["run", "--rate", "0.1"], &["rate: 0.1", "--traffic"]);
    bad(&["run", "--traffic", "zipf"], &["traffic: zipf", "uniform"]);
    bad(&["run", "--algorithm", "mnb-sbt", "--root", "3"], &["root: 3", "mnb-sbt"]);
    // What only an algorithm, or only another pattern, takes is refused, not dropped.
    let mesh = ["run", "--topology", "mesh", "--dims", "4x4", "--traffic", "uniform"];
    for (f, v) in [
        ("--root", "5"),
        ("--tp", "1"),
        ("--active", "1,2"),
        ("--active-count", "3"),
        ("--load", "0.5"),
        ("--pmnb", "pmnb-3"),
        ("--variant", "random"),
        ("--active-set", "random"),
    ] {
        bad(&[&mesh[..], &[f, v]].concat(), &[&format!("{}: {v}", &f[2..]), "--algorithm", "--traffic uniform"]);
    }
    bad(&[&mesh[..], &["--hotspot", "3"]].concat(), &["hotspot: 3", "--traffic hotspot", "uniform"]);
    bad(&[&mesh[..], &["--hotspot-fraction", "0.5"]].concat(), &["hotspot-fraction: 0.5", "--traffic hotspot"]);
    bad(&["run", "--topology", "mesh", "--deadlock-avoidance", "off"], &["deadlock-avoidance: off", "tori", "mesh"]);
}

#[test]
fn bad_flags() {
    bad(&["run", "--frobnicate", "3"], &["frobnicate", "3", "unknown flag", "--dims"]);
    bad(&["run", "--frobnicate=3"], &["frobnicate", "3", "unknown flag"]);
    bad(&["frobnicate"], &["frobnicate", "run", "list"]);
    bad(&["run", "--dims"], &["--dims"]);
    // A flag left without its value (values may begin with `-`) does not take the next flag.
    bad(&["run", "--vcs", "--dims", "3"], &["vcs: --dims", "a value is missing"]);
    bad(&["run", "--dims", "3", "--json", "--quiet"], &["json: --quiet", "a value is missing"]);
    bad(&["run", "--dims", "3", "--vcs", "--dims=4"], &["vcs: --dims=4", "a value is missing"]);
    bad(&["reproduce"], &["reproduce", "PAPER", "missing", "bertsekas-1991", "seidel-1993"]);
    bad(&["list", "--frob"], &["--frob", "unknown flag", "flitwave list takes none"]);
    for f in ["--vcd", "--fst", "--stats-csv"] {
        bad(&["run", "--dims", "3", f, "-"], &[&format!("{}: -", &f[2..]), "a file path", "--json"]);
    }
}

#[test]
fn bad_scenario_files() {
    let f = Temp::file("malformed.toml", "# a scenario\ndims = [4,\n");
    let name = f.s().to_string();
    let o = flitwave(&["run", &name]);
    bad(&["run", &name], &["scenario", &name, "TOML"]);
    // The position follows the file name as line:col.
    let err = String::from_utf8(o.stderr).unwrap();
    let after = &err[err.find(&name).unwrap() + name.len()..];
    let pos: Vec<&str> = after.split(':').skip(1).take(2).collect();
    assert!(pos.len() == 2 && pos.iter().all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit())), "no line:col in {err}");
    assert_eq!(pos[0], "2", "{err}");

    // A value TOML cannot hold names its key and says how to write it.
    let f = Temp::file("huge-seed.toml", "dims = 3\nseed = 18446744073709551615\n");
    bad(&["run", f.s()], &["scenario", f.s(), ":2:", "seed: ", "as a string"]);
    let f = Temp::file("huge-seed-string.toml", "dims = 3\nseed = \"18446744073709551615\"\n");
    assert_eq!(flitwave(&["run", f.s(), "--quiet"]).status.code(), Some(0));

    let f = Temp::file("unknown-key.toml", "topology = \"hypercube\"\nfrobnicate = 3\n");
    bad(&["run", f.s()], &["scenario", f.s(), "frobnicate", "unknown field", "dims"]);

    let f = Temp::file("twice.toml", "packet_flits = 2\npacket-flits = 3\n");
    bad(&["run", f.s()], &["scenario", f.s(), "packet-flits", "twice"]);

    let f = Temp::file("bad-value.toml", "dims = \"4x0\"\ntopology = \"mesh\"\n");
    bad(&["run", f.s()], &["dims: 4x0"]);

    let missing = Temp::path("missing.toml");
    bad(&["run", missing.s()], &["scenario", missing.s()]);
}

#[test]
fn bad_router_files() {
    let f = Temp::file("router.toml", "preset = \"realistic\"\nfoo = 1\n");
    bad(&["run", "--router", f.s()], &["router", f.s(), "foo"]);
    let f = Temp::file("router-syntax.toml", "rc_delay = \n");
    bad(&["run", "--router", f.s()], &["router", f.s(), "TOML"]);
    let f = Temp::file("router-zero-link.toml", "link_latency = 0\n");
    bad(&["run", "--router", f.s()], &["router", f.s(), "link_latency"]);
    bad(&["run", "--router", "nonexistent.toml"], &["router: nonexistent.toml", "ideal", "realistic"]);
}

/// A slow router (links and credits of 60,000 cycles) is not a deadlock: the default
/// watchdog waits longer than its pipeline; and a packet that waits a billion cycles for
/// its start-up cost at every level of a broadcast tree is an ordinary latency (no memory
/// for every cycle in between).
#[test]
fn long_waits_are_not_failures() {
    let f = Temp::file("router-slow.toml", "link_latency = 60000\ncredit_delay = 60000\n");
    let v =
        run_ok(&["--topology", "mesh", "--dims", "3x3", "--traffic", "uniform", "--rate", "0.02", "--cycles", "500", "--router", f.s()]);
    assert_eq!(v["missing_deliveries"], 0);
    assert!(v["completion_cycles"].as_u64().unwrap() > 120_000, "{v}");
    // Each of the tree's 3 levels waits the start-up, then crosses a link (all-port: the
    // siblings at once); the broadcast's latency is to its last delivery.
    let v = run_ok(&["--dims", "3", "--algorithm", "snb", "--startup-cycles", "1000000000"]);
    assert_eq!(v["broadcast_latency_max_cycles"], 3 * 1_000_000_001u64);
    assert_eq!(v["latency_max_cycles"], serde_json::Value::Null, "no unicast message");
}

#[test]
fn bad_json_path_is_reported_before_running() {
    let dir = Temp::dir("json-dir");
    let path = dir.0.join("no/such/dir/result.json");
    bad(&["run", "--json", path.to_str().unwrap()], &["json", path.to_str().unwrap()]);
}

/// Inputs found by probing that panicked, were silently ignored, or were
/// refused with a wrong or self-contradicting message.
#[test]
fn probed_inputs_get_one_clear_line() {
    // A router has at most 64 ports: 17 mesh dimensions are 34 links, so at most 30 NIC
    // channels (this panicked in the router).
    let dims17 = ["2"; 17].join("x");
    bad(&["run", "--topology", "mesh", "--dims", &dims17], &["ports: all", "at most 64 ports", "K from 1 to 30"]);
    bad(&["run", "--topology", "mesh", "--dims", &dims17, "--ports", "31"], &["ports: 31", "K from 1 to 30", "34 of them are links"]);
    // The linear BST that bst-simple runs on the whole mesh needs 2^(nu+1) nodes (panicked).
    bad(&["run", "--algorithm", "bst-simple", "--topology", "mesh", "--dims", "4x1", "--nu", "2"], &["dims: 4x1", "2^(nu+1) = 8 nodes"]);
    // Tornado on sides of 2 sends every packet to its own node.
    for (t, d) in [("torus", "2x2"), ("mesh", "2x2"), ("linear", "2")] {
        bad(&["run", "--topology", t, "--dims", d, "--traffic", "tornado", "--cycles", "100"], &["traffic: tornado", "at least 3"]);
    }
    // Flags that had no effect.
    bad(
        &["run", "--dims", "4", "--algorithm", "kbcast", "--active", "1,2", "--active-set", "subcube"],
        &["active-set: subcube", "--active LIST"],
    );
    bad(&["run", "--topology", "linear", "--dims", "16", "--algorithm", "st", "--rho", "1"], &["rho: 1", "rh only"]);
    // Router forwarding is offered by the algorithms that have it.
    bad(&["run", "--dims", "4", "--algorithm", "mnb", "--forwarding", "router"], &["forwarding: router", "snb and mnb-sbt"]);
    // Multicast VC allocation applies only to packets the routers replicate.
    bad(
        &["run", "--dims", "4", "--algorithm", "mnb-sbt", "--multicast-va", "per-branch"],
        &["multicast-va: per-branch", "--forwarding router"],
    );
    bad(
        &[
            "run",
            "--topology",
            "mesh",
            "--dims",
            "4x4",
            "--traffic",
            "uniform",
            "--rate",
            "0.1",
            "--cycles",
            "100",
            "--multicast-va",
            "atomic",
        ],
        &["multicast-va: atomic", "--forwarding router"],
    );
    bad(
        &["run", "--dims", "4", "--algorithm", "snb", "--forwarding", "router", "--multicast-va", "all"],
        &["multicast-va: all", "atomic, per-branch"],
    );
    let (code, v) = run_json(&[
        "--dims",
        "4",
        "--algorithm",
        "mnb-sbt",
        "--forwarding",
        "router",
        "--packet-flits",
        "2",
        "--multicast-va",
        "per-branch",
    ]);
    assert_eq!((code, v["config"]["multicast_va"].as_str()), (0, Some("per-branch")));
    // They would not change a run of one-flit packets (each branch's flit crosses whole).
    for opt in [["--multicast-va", "per-branch"], ["--replication", "sync"]] {
        let mut args = vec!["run", "--dims", "4", "--algorithm", "mnb-sbt", "--forwarding", "router"];
        args.extend(opt);
        bad(&args, &[&format!("{}: {}", &opt[0][2..], opt[1]), "packets of more than one flit"]);
    }
    let (code, v) = run_json(&["--dims", "4", "--algorithm", "mnb-sbt", "--forwarding", "router"]);
    assert_eq!((code, v["config"]["multicast_va"].as_str()), (0, Some("atomic")), "the default is echoed");
    let (code, v) = run_json(&["--dims", "4", "--algorithm", "mnb-sbt"]);
    assert_eq!((code, v["config"].get("multicast_va")), (0, None), "no replicated packets, no multicast_va in the config");
    assert_eq!(v["config"].get("replication"), None);
    bad(&["run", "--dims", "4", "--algorithm", "snb", "--replication", "async"], &["replication: async", "--forwarding router"]);
    bad(
        &["run", "--dims", "4", "--algorithm", "snb", "--forwarding", "router", "--replication", "lockstep"],
        &["replication: lockstep", "sync, async"],
    );
    let (code, v) = run_json(&["--dims", "4", "--algorithm", "snb", "--forwarding", "router"]);
    assert_eq!((code, v["config"]["replication"].as_str()), (0, Some("async")));
    // Faster links that one VC (one flit per cycle) can never use.
    bad(&["run", "--dims", "4", "--nu", "1"], &["nu: 1", "--vcs 2"]);
    assert_eq!(flitwave(&["run", "--dims", "4", "--nu", "1", "--vcs", "2", "--quiet"]).status.code(), Some(0));
    // A watchdog shorter than the router's own pauses reported deadlocks that were none.
    bad(&["run", "--dims", "4", "--algorithm", "mnb", "--router", "realistic", "--watchdog", "2"], &["watchdog: 2", "at least 12 cycles"]);
    // The suggested buffer must itself be allowed.
    bad(
        &["run", "--dims", "3", "--switching", "vct", "--packet-flits", "5000", "--buffer-flits", "4096"],
        &["buffer-flits: 4096", "at most 4096", "--switching wh"],
    );
    // Not standard output, and a negative dimension named as such.
    bad(&["reproduce", "bertsekas-1991", "--out", "-"], &["out", "-", "directory"]);
    bad(&["demo", "--out", "-"], &["out", "-", "directory"]);
    bad(&["reproduce", "bertsekas-1991", "--max-d", "-1"], &["-1", "--max-d"]);
    // A TOML boolean is a switch's value only (`vcd = true` wrote a file named `on`).
    let f = Temp::file("bool-path.toml", "dims = 3\nvcd = true\n");
    bad(&["run", f.s()], &["vcd: true", "not a boolean"]);
    let f = Temp::file("bool-switch.toml", "topology = \"torus\"\ndims = \"4x4\"\nvcs = 1\ndeadlock_avoidance = false\n");
    assert_eq!(flitwave(&["run", f.s(), "--quiet"]).status.code(), Some(0));
    // Every run flag is a scenario key, `load` and `pmnb` included.
    let f = Temp::file("dynamic.toml", "algorithm = \"dynamic\"\ndims = 3\nload = 0.3\npmnb = \"pmnb-3\"\ncycles = 300\n");
    let o = flitwave(&["run", f.s(), "--quiet", "--json", "-"]);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&["run", f.s()], &o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["config"]["workload"]["dynamic"]["load"], 0.3, "{v}");
}

/// A prefix step of a decimal number of slots is whole in cycles although its product in
/// floating point is not (2.3 x 100 = 229.99999999999997).
#[test]
fn decimal_prefix_steps_are_whole_cycles() {
    let v = run_ok(&["--dims", "3", "--algorithm", "pmnb-3", "--packet-flits", "100", "--buffer-flits", "200", "--tp", "2.3"]);
    assert_eq!(v["missing_deliveries"], 0);
    bad(&["run", "--dims", "3", "--algorithm", "pmnb-3", "--packet-flits", "100", "--tp", "2.305"], &["tp: 2.305", "multiple of 0.01"]);
}

/// One-port meshes and tori: the paper bound is the slots of the notes' farthest-first tree
/// (it was the diameter, below the lower bound on tori: 2 on a 3×3 torus, whose 9 nodes
/// need 4 one-port slots), which the ideal router meets; the lower bound is max(ecc,
/// ⌈log2 N⌉), computed here.
#[test]
fn one_port_meshes_and_tori_meet_their_tree_bound() {
    for (topo, dims, ecc, n) in
        [("torus", "3x3", 2u64, 9u64), ("torus", "5", 2, 5), ("torus", "5x5", 4, 25), ("torus", "7x3", 4, 21), ("mesh", "8x8", 14, 64)]
    {
        let v = run_ok(&["--topology", topo, "--dims", dims, "--ports", "one"]);
        let (slots, paper, lower) = (f64_of(&v, "slots"), u64_of(&v, "paper_bound_slots"), u64_of(&v, "lower_bound_slots"));
        let log2n = n.next_power_of_two().trailing_zeros() as u64;
        assert_eq!(lower, ecc.max(log2n), "{topo} {dims}");
        assert!(paper >= lower, "{topo} {dims}: paper {paper} below lower {lower}");
        assert_eq!(slots, paper as f64, "{topo} {dims}");
    }
}

/// A VC's maximum occupancy is the top level of its own histogram (the most flits held at
/// the end of a cycle), and the per-port and injection maxima are those of the VCs: an
/// injection buffer that a flit went in and out of in one cycle counted it before.
#[test]
fn buffer_maxima_agree_with_the_histograms() {
    let runs: [&[&str]; 4] = [
        &["--topology", "hypercube", "--dims", "4", "--ports", "one"],
        &["--topology", "hypercube", "--dims", "4", "--algorithm", "mnb", "--router", "realistic"],
        &["--topology", "mesh", "--dims", "4x4", "--traffic", "uniform", "--rate", "0.1", "--cycles", "500"],
        &["--topology", "mesh", "--dims", "4x4", "--traffic", "uniform", "--rate", "0.05", "--cycles", "500", "--router", "ideal"],
    ];
    for args in runs {
        let v = run_ok(args);
        let (mut network, mut injection) = (0, 0);
        for vc in v["stats"]["vcs"].as_array().unwrap() {
            let h: Vec<u64> = vc["histogram"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect();
            let top = h.iter().rposition(|&c| c > 0).unwrap() as u64;
            assert_eq!(vc["max_occupancy"].as_u64().unwrap(), top, "{args:?}: {vc}");
            let m = if vc["port"].as_str().unwrap().starts_with("inj") { &mut injection } else { &mut network };
            *m = (*m).max(top);
        }
        let mb = &v["max_buffer_occupancy"];
        assert_eq!((u64_of(mb, "network"), u64_of(mb, "injection")), (network, injection), "{args:?}");
    }
}

/// Two outputs on one file would overwrite or interleave each other: refused before the
/// run, whatever the spelling of the path. And a run that stops on a bad output path leaves
/// none of the files it had created behind.
#[test]
fn outputs_need_files_of_their_own() {
    let dir = Temp::dir("same-file");
    let d = Some(dir.0.as_path());
    for (a, b) in [("--json", "--vcd"), ("--vcd", "--stats-csv"), ("--vcd", "--fst"), ("--fst", "--gtkw")] {
        let args = ["run", "--dims", "3", a, "same.out", b, "./same.out"];
        let o = flitwave_in(d, &args);
        assert_eq!(o.status.code(), Some(2), "{}", describe(&args, &o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("the same file as") && err.contains(&a[2..]), "{err}");
        assert!(!dir.0.join("same.out").exists(), "{a} {b}: a file was written");
    }
    // Devices take any number of outputs, and are never removed: here a link to
    // /dev/null (were it removed, only the link would go).
    let o = flitwave(&["run", "--dims", "3", "--quiet", "--json", "/dev/null", "--vcd", "/dev/null", "--stats-csv", "/dev/null"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    // An FST is written with seeks.
    bad(&["run", "--dims", "3", "--fst", "/dev/null"], &["fst: /dev/null", "regular file"]);
    let link = dir.0.join("null-link");
    std::os::unix::fs::symlink("/dev/null", &link).unwrap();
    let args = ["run", "--dims", "3", "--json", "null-link", "--stats-csv", "null-link", "--vcd", "/nonexistent/dir/x.vcd"];
    assert_eq!(flitwave_in(d, &args).status.code(), Some(2));
    assert!(std::fs::symlink_metadata(&link).is_ok(), "{args:?} removed a link to /dev/null");
    std::fs::remove_file(&link).unwrap();
    for bad_one in [["--vcd", "/nonexistent/dir/x.vcd"], ["--gtkw", "/nonexistent/dir/x.gtkw"]] {
        let args = ["run", "--dims", "3", "--json", "r.json", "--fst", "w.fst", "--stats-csv", "s.csv", bad_one[0], bad_one[1]];
        let o = flitwave_in(d, &args);
        assert_eq!(o.status.code(), Some(2), "{}", describe(&args, &o));
        let left: Vec<_> = std::fs::read_dir(&dir.0).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert!(left.is_empty(), "{args:?} left {left:?}");
    }
}

/// The Bertsekas et al. algorithms through the CLI: Table 1 time and Table 2 transmissions
/// (written out here), and the report's paper columns.
#[test]
fn bertsekas_algorithms_report_their_tables() {
    // (algorithm, ports, slots, transmissions) on the 4-cube.
    let cases: &[(&str, &str, f64, u64)] = &[
        ("mnb", "all", 4.0, 240),
        ("mnb", "one", 15.0, 240),
        ("mnb-ring", "one", 15.0, 240),
        ("multi-accumulate", "all", 4.0, 240),
        ("scatter", "all", 4.0, 32),
        ("gather", "one", 15.0, 32),
        ("accumulate", "one", 4.0, 15),
        ("total-exchange", "all", 8.0, 512),
        ("total-exchange", "one", 32.0, 512),
    ];
    for &(alg, ports, slots, tx) in cases {
        let v = run_ok(&["--dims", "4", "--algorithm", alg, "--ports", ports]);
        assert_eq!(f64_of(&v, "slots"), slots, "{alg} {ports}");
        assert_eq!(u64_of(&v, "paper_bound_slots") as f64, slots, "{alg} {ports}");
        assert_eq!(u64_of(&v, "link_transmissions"), tx, "{alg} {ports}");
        assert_eq!(u64_of(&v, "paper_transmissions"), tx, "{alg} {ports}");
        assert_eq!(f64_of(&v, "vs_slot_model"), 1.0);
    }
    // The realistic router is slower than the slot model, and says by how much.
    let v = run_ok(&["--dims", "4", "--algorithm", "mnb", "--router", "realistic", "--switching", "wh", "--packet-flits", "2"]);
    assert!(f64_of(&v, "vs_slot_model") > 1.0);
    assert_eq!(u64_of(&v, "missing_deliveries"), 0);
}

#[test]
fn bertsekas_algorithms_reject_what_they_do_not_define() {
    bad(&["run", "--dims", "6", "--algorithm", "mnb", "--ports", "2"], &["ports: 2", "mnb", "all", "one"]);
    bad(&["run", "--dims", "6", "--algorithm", "total-exchange", "--root", "3"], &["root: 3", "total-exchange"]);
    bad(&["run", "--dims", "6", "--algorithm", "scatter", "--forwarding", "router"], &["forwarding: router", "scatter"]);
    bad(&["run", "--topology", "mesh", "--algorithm", "scatter"], &["algorithm: scatter", "mesh", "hypercube"]);
    bad(&["reproduce", "nope"], &["reproduce: nope", "bertsekas-1991"]);
}

#[test]
fn kbcast_variants_report_their_bounds() {
    // (variant extra flags, bound from Stamoulis & Tsitsiklis for d = 6, K = 12).
    let d = 6u64;
    let k = 12u64;
    let cases: &[(&[&str], Option<u64>)] = &[
        (&["--variant", "prefix", "--tp", "1"], Some(2 * k.div_ceil(d) + 4 * d)),
        (&["--variant", "prefix", "--tp", "0"], Some(2 * k.div_ceil(d) + 2 * d - 1)),
        (&["--variant", "same-tree"], Some(d + k - 1)),
        (&["--variant", "random"], None),
    ];
    for (extra, bound) in cases {
        let mut args = vec!["--dims", "6", "--algorithm", "kbcast", "--active-count", "12", "--active-set", "adversarial", "--seed", "3"];
        args.extend_from_slice(extra);
        let v = run_ok(&args);
        assert_eq!(u64_of(&v, "missing_deliveries"), 0, "{extra:?}");
        assert_eq!(u64_of(&v, "deliveries"), k * (64 - 1), "{extra:?}");
        let slots = f64_of(&v, "slots");
        // Every node must receive K packets (K - 1 if it is active) over d links.
        assert!(slots >= d as f64, "{extra:?}: {slots}");
        assert!(u64_of(&v, "lower_bound_slots") >= d);
        match bound {
            Some(b) => {
                assert_eq!(u64_of(&v, "paper_bound_slots"), *b, "{extra:?}");
                assert!(slots <= *b as f64, "{extra:?}: {slots} > {b}");
            }
            None => assert!(v["paper_bound_slots"].is_null(), "{extra:?}"),
        }
    }
    // K = d broadcasters with known ranks and rotated dimension orders never collide: d
    // slots; computing the ranks first adds the prefix's 2d steps (§3.3.2: "3d slots").
    let v = run_ok(&["--dims", "6", "--algorithm", "kbcast", "--variant", "rank-rotated", "--active", "3,17,40,41,50,63", "--tp", "0"]);
    assert_eq!(f64_of(&v, "slots"), 6.0);
    let v = run_ok(&["--dims", "6", "--algorithm", "kbcast", "--variant", "rank-rotated", "--active", "3,17,40,41,50,63"]);
    assert_eq!(f64_of(&v, "slots"), 3.0 * 6.0);
    assert_eq!(v["config"]["workload"]["kbcast"]["active"], serde_json::json!([3, 17, 40, 41, 50, 63]));
}

/// `--tp X` with X ≥ 2 once deadlocked (a prefix packet X flits long cannot enter the
/// default 2-flit buffer under store-and-forward) or lost deliveries (X-flit packets in
/// X-flit buffers cannot follow each other on a link within a step, so the synchronous
/// scans read stale counts). Every t_p from 0 to 3 slots, the default buffers, d = 6,
/// K = M = 12 (6 for rank-rotated): everything delivered, no schedule failure, within the
/// papers' bounds written out (t_p in slots):
/// kbcast prefix (2d + 1)t_p + 2⌈K/d⌉ + 2d − 1; rank-rotated 2d t_p + d;
/// PMNB I ⌈(2^m − 1)/m⌉ + 2d + 2d t_p − m, m = ⌈log2 M⌉; II (N − 1)M/(Nd) + 2d t_p + 2;
/// III ⌈M/d⌉ + 2d + 4d t_p − 1.
#[test]
fn prefix_steps_of_0_to_3_slots_work_with_the_default_buffers() {
    let (d, k, n) = (6.0f64, 12.0f64, 64.0f64);
    let m = k.log2().ceil();
    for tp in 0..=3u32 {
        let t = tp as f64;
        let ts = tp.to_string();
        let cases: [(&[&str], f64); 5] = [
            (&["--algorithm", "kbcast", "--active-count", "12"], (2.0 * d + 1.0) * t + 2.0 * (k / d).ceil() + 2.0 * d - 1.0),
            (&["--algorithm", "kbcast", "--variant", "rank-rotated", "--active-count", "6"], 2.0 * d * t + d),
            (&["--algorithm", "pmnb-1", "--active-count", "12"], ((2f64.powf(m) - 1.0) / m).ceil() + 2.0 * d + 2.0 * d * t - m),
            (&["--algorithm", "pmnb-2", "--active-count", "12"], (n - 1.0) / n * k / d + 2.0 * d * t + 2.0),
            (&["--algorithm", "pmnb-3", "--active-count", "12", "--seed", "3"], (k / d).ceil() + 2.0 * d + 4.0 * d * t - 1.0),
        ];
        for (extra, bound) in cases {
            let mut args = vec!["--dims", "6", "--tp", ts.as_str()];
            args.extend_from_slice(extra);
            let v = run_ok(&args);
            let ctx = format!("{} --tp {tp}", extra.join(" "));
            assert_eq!(u64_of(&v, "missing_deliveries") + u64_of(&v, "duplicate_deliveries"), 0, "{ctx}");
            assert!(v["deadlock"].is_null(), "{ctx}");
            assert_eq!(v["algorithm_failures"], serde_json::json!([]), "{ctx}");
            assert!(f64_of(&v, "slots") <= bound + 1e-9, "{ctx}: {} > {bound}", f64_of(&v, "slots"));
            // The defaults: buffers of 2 × packet-flits.
            assert_eq!(u64_of(&v["config"], "buffer_flits"), 2 * u64_of(&v["config"], "packet_flits"), "{ctx}");
        }
        for pmnb in ["pmnb-2", "pmnb-3"] {
            let v = run_ok(&["--dims", "5", "--algorithm", "dynamic", "--pmnb", pmnb, "--load", "0.05", "--cycles", "20000", "--tp", &ts]);
            assert_eq!(v["algorithm_failures"], serde_json::json!([]), "dynamic {pmnb} --tp {tp}");
            assert_eq!(v["stable"], true, "dynamic {pmnb} --tp {tp}");
        }
    }
}

/// With every node active the ranks are the node ids: no prefix, whatever t_p (here the
/// default 1). kbcast is the multinode broadcast of §3.2, 2⌈2^d/d⌉ + 2d − 1 slots (33 at
/// d = 6); pmnb-3 the paper's new MNB, ⌈N/d⌉ + 2d − 1 (47 at d = 8).
#[test]
fn every_node_active_skips_the_prefix() {
    let v = run_ok(&["--dims", "6", "--algorithm", "kbcast", "--active", "all"]);
    assert!(f64_of(&v, "slots") <= 33.0, "{}", f64_of(&v, "slots"));
    assert_eq!(u64_of(&v, "paper_bound_slots"), 33);
    assert_eq!(u64_of(&v, "prefix_steps"), 0);
    let v = run_ok(&["--dims", "8", "--algorithm", "pmnb-3", "--active", "all"]);
    assert!(f64_of(&v, "slots") <= 47.0, "{}", f64_of(&v, "slots"));
    assert_eq!(u64_of(&v, "paper_bound_slots"), 47);
    assert_eq!(u64_of(&v, "prefix_steps"), 0);
    // One node short of all: the prefix runs (2 × 2d steps for pmnb-3).
    let v = run_ok(&["--dims", "6", "--algorithm", "pmnb-3", "--active", "0-62"]);
    assert_eq!(u64_of(&v, "prefix_steps"), 24);
}

#[test]
fn kbcast_rejects_what_it_does_not_define() {
    let base = ["run", "--dims", "6", "--algorithm", "kbcast"];
    let with = |extra: &[&'static str]| -> Vec<&'static str> { base.iter().copied().chain(extra.iter().copied()).collect() };
    bad(&with(&["--ports", "one"]), &["ports: one", "kbcast", "--ports all"]);
    bad(&with(&["--variant", "random", "--tp", "1"]), &["tp: 1", "random", "no prefix"]);
    bad(&with(&["--variant", "tree"]), &["variant: tree", "prefix", "random", "same-tree", "rank-rotated"]);
    bad(&with(&["--active-count", "65"]), &["active-count: 65", "1 to 64"]);
    bad(&with(&["--active-count", "40", "--active-set", "adversarial"]), &["active-count: 40", "1 to 32", "one half of the cube"]);
    bad(&with(&["--active-set", "corner"]), &["active-set: corner", "random", "subcube", "adversarial"]);
    bad(&with(&["--active", "1,2", "--active-count", "3"]), &["active-count: 3", "not both"]);
    bad(&with(&["--active", "64"]), &["active: 64", "below 64"]);
    bad(&with(&["--variant", "rank-rotated", "--active-count", "7"]), &["active: 7", "rank-rotated", "d = 6"]);
    bad(&with(&["--tp", "-1"]), &["tp: -1", "number"]);
    bad(&with(&["--tp", "nan"]), &["tp: nan"]);
    bad(&["run", "--dims", "6", "--algorithm", "snb", "--variant", "random"], &["variant: random", "kbcast"]);
    bad(&["run", "--topology", "mesh", "--dims", "4x4", "--algorithm", "kbcast"], &["algorithm: kbcast", "mesh", "hypercube"]);
}

#[test]
fn reproduce_stamoulis_tsitsiklis_writes_its_table() {
    let out = Temp::dir("st");
    let o = flitwave(&["reproduce", "stamoulis-tsitsiklis", "--out", out.s(), "--max-d", "7"]);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&["reproduce", "stamoulis-tsitsiklis"], &o));
    let md = std::fs::read_to_string(out.0.join("kbcast.md")).unwrap();
    assert!(md.contains("| K | active set |"), "{md}");
    let csv = std::fs::read_to_string(out.0.join("kbcast.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("no column {name} in {header:?}"));
    let (slots, bound, lower) = (col("slots"), col("bound"), col("lower_bound"));
    let mut rows = 0;
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        let s: f64 = f[slots].parse().unwrap();
        let lb: f64 = f[lower].parse().unwrap();
        assert!(s >= lb, "{line}");
        if !f[bound].is_empty() {
            assert!(s <= f[bound].parse::<f64>().unwrap(), "{line}");
        }
        rows += 1;
    }
    assert!(rows > 10);
}

#[test]
fn reproduce_rejects_a_dimension_outside_the_papers_range() {
    bad(&["reproduce", "stamoulis-tsitsiklis", "--max-d", "5"], &["max-d: 5", "6 to 10"]);
    bad(&["reproduce", "bertsekas-1991", "--max-d", "11"], &["max-d: 11", "1 to 10"]);
}

#[test]
fn pmnb_variants_report_the_papers_bounds() {
    // (algorithm, the paper's bound for d = 6, M = 20, t_p = 1, written out from §IV).
    let (d, m, n) = (6.0f64, 20.0f64, 64.0f64);
    let mm = m.log2().ceil();
    let cases = [
        ("pmnb-1", ((2f64.powf(mm) - 1.0) / mm).ceil() + 2.0 * d + 2.0 * d - mm),
        ("pmnb-2", (n - 1.0) / n * m / d + 2.0 * d + 2.0),
        ("pmnb-3", (m / d).ceil() + 2.0 * d + 4.0 * d - 1.0),
    ];
    for (alg, bound) in cases {
        let v = run_ok(&["--dims", "6", "--algorithm", alg, "--active-count", "20", "--active-set", "adversarial"]);
        let pieces = if alg == "pmnb-2" { 6 } else { 1 };
        assert_eq!(u64_of(&v, "deliveries"), pieces * 20 * 63, "{alg}");
        // The formula itself (PMNB II's is fractional: 16.625 here was reported as 17).
        assert!((f64_of(&v, "paper_bound_slots") - bound).abs() < 1e-9, "{alg}: {} against {bound}", v["paper_bound_slots"]);
        assert!(f64_of(&v, "slots") <= bound, "{alg}: {} > {bound}", f64_of(&v, "slots"));
        assert_eq!(u64_of(&v, "lower_bound_slots"), if alg == "pmnb-2" { 4 } else { 6 }, "{alg}");
        assert_eq!(u64_of(&v, "packing_delays"), 0, "{alg}");
        assert_eq!(v["algorithm_failures"], serde_json::json!([]));
    }
    // pmnb-2 splits a 6-flit packet into six one-flit mini-packets by default.
    let v = run_ok(&["--dims", "6", "--algorithm", "pmnb-2"]);
    assert_eq!(u64_of(&v, "slot_cycles"), 6);
    // The paper's new MNB: pmnb-3 with every node active and ranks known.
    let v = run_ok(&["--dims", "5", "--algorithm", "pmnb-3", "--active", "all", "--tp", "0"]);
    assert!(f64_of(&v, "slots") <= (32f64 / 5.0).ceil() + 2.0 * 5.0 - 1.0);
    assert_eq!(u64_of(&v, "deliveries"), 32 * 31);
}

#[test]
fn dynamic_reports_delay_bound_and_stability() {
    let v = run_ok(&["--dims", "5", "--algorithm", "dynamic", "--load", "0.2", "--cycles", "10000", "--tp", "0"]);
    let th = &v["theorem"];
    let avg = f64_of(&v, "avg_delay_slots");
    // The theorem (§II, eqs. 17-19) for pmnb-2, d = 5, t_p = 0, rho = 0.2, written out:
    // X = (N-1)/(dN), V = 2d t_p + 2, lambda = rho d/(N-1), s = 1 - rho - lambda V,
    // W(a) = rho X/(2s) + (1-rho)V/(2s) + (1 - rho a - lambda V)V/s,
    // T <= W + X + min((N-1)X/2, rho W) for the worst a in
    // [(M + (K-1)(2M - K))/(2NM) - 1/(2N), 1/2 - 1/(2N)], M = lambda N V/(1-rho), K = floor(M) + 1.
    let (n, d, rho) = (32.0f64, 5.0f64, 0.2f64);
    let (x, vv, lambda) = ((n - 1.0) / (d * n), 2.0, rho * d / (n - 1.0));
    let s = 1.0 - rho - lambda * vv;
    let m = lambda * n * vv / (1.0 - rho);
    let kk = m.floor() + 1.0;
    let (a_lo, a_hi) = ((m + (kk - 1.0) * (2.0 * m - kk)) / (2.0 * n * m) - 1.0 / (2.0 * n), 0.5 - 0.5 / n);
    let bound = (0..=100)
        .map(|i| a_lo + (a_hi - a_lo) * i as f64 / 100.0)
        .map(|a| {
            let w = rho * x / (2.0 * s) + (1.0 - rho) * vv / (2.0 * s) + (1.0 - rho * a - lambda * vv) * vv / s;
            w + x + ((n - 1.0) * x / 2.0).min(rho * w)
        })
        .fold(f64::MIN, f64::max);
    assert!((th["delay_bound_slots"].as_f64().unwrap() - bound).abs() < 1e-9, "{th} against {bound}");
    assert!(avg < bound, "{v}");
    assert_eq!(v["stable"], true);
    let ci = v["avg_delay_ci95"].as_array().unwrap();
    assert!(ci[0].as_f64().unwrap() <= avg && avg <= ci[1].as_f64().unwrap());
    for k in ["delay_p50_slots", "delay_p90_slots", "delay_p99_slots", "throughput", "mean_backlog"] {
        assert!(v[k].is_number(), "{k} in {v}");
    }
    // pmnb-2, d = 5, t_p = 0: X = 31/160, V = 2; the limit 1/(1 + V/(NX)) in eq. 17's load.
    let limit = 1.0 / (1.0 + 2.0 * 5.0 / 31.0);
    assert!((th["stability_limit_load"].as_f64().unwrap() - limit).abs() < 1e-9);
    let v = run_ok(&["--dims", "5", "--algorithm", "dynamic", "--load", "0.95", "--cycles", "10000", "--tp", "0"]);
    assert_eq!(v["stable"], false, "{v}");
    assert!(v["theorem"]["delay_bound_slots"].is_null());
}

/// The synchronous PMNBs on routers slower than the slot model (1-flit buffers halve a
/// link's rate; the realistic pipeline adds latency): every step is stretched to what the
/// router measurably does, so everything is still delivered, with no late prefix packet and
/// no packing collision (they lost deliveries when only the broadcast subphases were).
#[test]
fn pmnbs_keep_their_schedule_on_slow_routers() {
    for router in ["ideal", "realistic"] {
        for (alg, flits) in [("pmnb-1", "1"), ("pmnb-2", "4"), ("pmnb-3", "1"), ("pmnb-3", "4"), ("dynamic", "4")] {
            for tp in ["0", "1", "3"] {
                let mut args = vec!["--dims", "4", "--algorithm", alg, "--router", router, "--switching", "wh"];
                args.extend(["--packet-flits", flits, "--buffer-flits", "1", "--tp", tp]);
                if alg == "dynamic" {
                    args.extend(["--cycles", "300"]);
                }
                let (code, v) = run_json(&args);
                assert_eq!(code, 0, "{args:?}: {v:#}");
                assert_eq!(v["missing_deliveries"], 0, "{args:?}");
            }
        }
    }
}

#[test]
fn pmnb_and_dynamic_reject_what_they_do_not_define() {
    bad(&["run", "--dims", "6", "--algorithm", "pmnb-2", "--packet-flits", "4"], &["packet-flits: 4", "multiple of 6"]);
    bad(&["run", "--dims", "6", "--algorithm", "pmnb-3", "--ports", "one"], &["ports: one", "pmnb-3", "--ports all"]);
    bad(&["run", "--dims", "6", "--algorithm", "pmnb-1", "--variant", "random"], &["variant: random", "kbcast"]);
    bad(&["run", "--dims", "6", "--algorithm", "pmnb-1", "--load", "0.5"], &["load: 0.5", "dynamic"]);
    bad(&["run", "--dims", "6", "--algorithm", "dynamic", "--pmnb", "pmnb-1"], &["pmnb: pmnb-1", "pmnb-2 or pmnb-3"]);
    bad(&["run", "--dims", "6", "--algorithm", "dynamic", "--load", "-0.1"], &["load: -0.1", "utilization"]);
    bad(&["run", "--dims", "6", "--algorithm", "dynamic", "--active-count", "3"], &["active-count: 3", "pmnb-1"]);
    bad(&["run", "--dims", "6", "--algorithm", "snb", "--cycles", "10"], &["cycles: 10", "--traffic", "dynamic"]);
    bad(&["run", "--topology", "mesh", "--algorithm", "dynamic"], &["algorithm: dynamic", "mesh", "hypercube"]);
}

#[test]
fn reproduce_varvarigos_bertsekas_checks_the_paper() {
    let out = Temp::dir("vb");
    let o = flitwave(&["reproduce", "varvarigos-bertsekas", "--out", out.s(), "--max-d", "6"]);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&["reproduce", "varvarigos-bertsekas"], &o));
    let md = std::fs::read_to_string(out.0.join("pmnb-example.md")).unwrap();
    assert!(md.contains("PMNB III"), "{md}");
    // Each row's lower bound is the one for its algorithm (§IV): at d = 6 the example's
    // M is 2^round(6 * 10/16) = 16; split packets (PMNB II) ceil((M-1)/d) = 3 (eq. 13),
    // unsplit max{d, ceil((M-1)/d)} = 6, the full MNB max{d, ceil((N-1)/d)} = 11.
    let csv = std::fs::read_to_string(out.0.join("pmnb-example.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let lb = header.iter().position(|h| *h == "lower_bound").expect("a lower_bound column");
    for r in csv.lines().skip(1) {
        let f: Vec<&str> = r.split(',').collect();
        let expect = match f[0] {
            "mnb" => 11,
            "pmnb-2" => 3,
            _ => 6,
        };
        assert_eq!(f[lb].parse::<u64>().unwrap(), expect, "{r}");
    }
    assert!(!md.contains("Lower bound max{d, ceil((M-1)/d)} ="), "{md}");
    let csv = std::fs::read_to_string(out.0.join("dynamic.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert!(rows.len() >= 8);
    // Every stable point below its bound, and the table says which loads were unstable.
    for r in rows {
        let f: Vec<&str> = r.split(',').collect();
        if let (Ok(avg), Ok(bound)) = (f[5].parse::<f64>(), f[9].parse::<f64>()) {
            assert!(avg < bound, "{r}");
        }
    }
    assert!(out.0.join("delay-d6.svg").exists());
}

/// On a pipelined router the synchronous PMNB schedule stretches each step by the measured
/// hop latency: everything still arrives, later than the slot model says.
#[test]
fn pmnb_runs_on_the_realistic_router() {
    for alg in ["pmnb-1", "pmnb-2", "pmnb-3"] {
        for sw in ["sf", "wh"] {
            let v = run_ok(&["--dims", "5", "--algorithm", alg, "--active-count", "12", "--router", "realistic", "--switching", sw]);
            assert_eq!(u64_of(&v, "missing_deliveries"), 0, "{alg} {sw}");
            assert!(f64_of(&v, "vs_slot_model") > 1.0, "{alg} {sw}");
            assert_eq!(v["algorithm_failures"], serde_json::json!([]));
        }
    }
    let v = run_ok(&["--dims", "5", "--algorithm", "dynamic", "--load", "0.1", "--cycles", "50000", "--router", "realistic"]);
    assert_eq!(v["algorithm_failures"], serde_json::json!([]));
    assert!(v["avg_delay_slots"].as_f64().unwrap() > 0.0);
}

/// A long run on a terminal (a pseudo-terminal from util-linux's `script`) shows a progress
/// line on standard error and still ends with the summary; through a pipe, and with
/// `--quiet`, nothing of it is printed.
#[test]
fn progress_line_on_a_terminal_only() {
    let args = ["run", "--topology", "mesh", "--dims", "32x32", "--traffic", "uniform", "--cycles", "4000", "--json", "/dev/null"];
    let piped = flitwave(&args);
    assert_eq!(piped.status.code(), Some(0), "{}", describe(&args, &piped));
    assert!(!String::from_utf8_lossy(&piped.stderr).contains("cycles/s"), "{}", describe(&args, &piped));
    let Ok(script) = Command::new("script").args(["-qec", "true", "/dev/null"]).output() else {
        eprintln!("note: no `script` (util-linux) on this machine; the terminal half of this test is skipped");
        return;
    };
    assert!(script.status.success());
    let line = format!("{BIN} {}", args.join(" "));
    let start = std::time::Instant::now();
    let tty = Command::new("script").args(["-qec", &line, "/dev/null"]).output().expect("script runs");
    let took = start.elapsed().as_secs_f64();
    let text = String::from_utf8_lossy(&tty.stdout);
    assert_eq!(tty.status.code(), Some(0), "{text}");
    assert!(text.contains("accepted"), "no summary after the progress line: {text}");
    // The line appears once a run has taken a second (with margin for start-up).
    if took > 1.5 {
        assert!(text.contains("/4000 cycles,") && text.contains("cycles/s"), "no progress line in {took:.1} s: {text}");
    }
    let quiet = Command::new("script").args(["-qec", &format!("{line} --quiet"), "/dev/null"]).output().expect("script runs");
    assert!(quiet.stdout.is_empty(), "--quiet printed: {}", String::from_utf8_lossy(&quiet.stdout));
}

/// A traffic run split between threads gives the JSON of the same run on one thread (but
/// for the wall time and the thread count it echoes), on a deadlocking torus ring too.
#[test]
fn threads_do_not_change_results() {
    // A run on one thread may take the event kernel (results do not depend on it).
    let strip = |mut v: Value| {
        v.as_object_mut().unwrap().remove("wall_seconds");
        v["config"].as_object_mut().unwrap().remove("threads");
        v
    };
    let runs: [&[&str]; 11] = [
        &["--dims", "5", "--algorithm", "total-exchange", "--ports", "one"],
        &["--topology", "mesh", "--dims", "6x5", "--traffic", "uniform", "--rate", "0.05", "--cycles", "1500"],
        &["--dims", "6", "--algorithm", "mnb-sbt", "--forwarding", "router", "--ports", "one"],
        &[
            "--topology",
            "mesh",
            "--dims",
            "5x4",
            "--algorithm",
            "snb",
            "--forwarding",
            "router",
            "--switching",
            "wh",
            "--router",
            "realistic",
            "--packet-flits",
            "3",
            "--root",
            "2,1",
        ],
        &["--dims", "6", "--algorithm", "pmnb-3", "--active-count", "21", "--tp", "1", "--seed", "5"],
        &["--dims", "6", "--algorithm", "pmnb-2", "--active-count", "9", "--tp", "2"],
        &["--dims", "6", "--algorithm", "mnb-sbt", "--ports", "one"],
        &["--dims", "6", "--algorithm", "mnb"],
        &["--topology", "mesh", "--dims", "5x4", "--algorithm", "snb", "--ports", "one", "--root", "2,1"],
        &["--dims", "5", "--algorithm", "gather", "--root", "7"],
        &[
            "--topology",
            "torus",
            "--dims",
            "8",
            "--traffic",
            "uniform",
            "--rate",
            "0.3",
            "--cycles",
            "2000",
            "--vcs",
            "1",
            "--deadlock-avoidance",
            "off",
        ],
    ];
    for args in runs {
        let one = run_json(&[args, &["--threads", "1"]].concat());
        assert_eq!(one.1["config"]["threads"], 1);
        for th in ["2", "3"] {
            let split = run_json(&[args, &["--threads", th]].concat());
            assert_eq!(split.0, one.0, "exit code with --threads {th}: {args:?}");
            assert_eq!(split.1["config"]["threads"], th.parse::<u32>().unwrap());
            assert_eq!(strip(split.1), strip(one.1.clone()), "--threads {th}: {args:?}");
        }
    }
}

#[test]
fn bad_threads() {
    let traffic = ["run", "--topology", "mesh", "--dims", "4x4", "--traffic", "uniform"];
    bad(&[&traffic[..], &["--threads", "0"]].concat(), &["threads: 0", "1 to 64"]);
    bad(&[&traffic[..], &["--threads", "two"]].concat(), &["threads: two"]);
    bad(&["run", "--topology", "linear", "--dims", "4", "--traffic", "uniform", "--threads", "5"], &["threads: 5", "4 nodes"]);
    bad(&["run", "--dims", "4", "--algorithm", "accumulate", "--threads", "2"], &["threads: 2", "accumulate", "--traffic", "mnb-sbt"]);
    bad(&["run", "--dims", "4", "--algorithm", "kbcast", "--active", "1,2", "--threads", "2"], &["threads: 2", "kbcast", "--traffic"]);
    bad(&[&traffic[..], &["--threads", "2", "--vcd", "/tmp/x.vcd"]].concat(), &["threads: 2", "--vcd"]);
}

/// The hardware-multicast example of docs/examples.md: the routers replicate one packet per node where the
/// nodes forward N(N-1), every broadcast reaches every node either way, and the synchronous
/// replicating router deadlocks on the same worms (exit 3, a wait-for cycle named).
#[test]
fn hardware_multicast_example() {
    let base = [
        "--dims",
        "6",
        "--algorithm",
        "mnb-sbt",
        "--packet-flits",
        "4",
        "--switching",
        "wh",
        "--vcs",
        "2",
        "--buffer-flits",
        "4",
        "--router",
        "realistic",
    ];
    let n = 64u64;
    let with = |extra: &[&str]| {
        let mut a = base.to_vec();
        a.extend_from_slice(extra);
        run_json(&a)
    };
    let (code, router) = with(&["--forwarding", "router"]);
    assert_eq!(code, 0);
    assert_eq!((router["packets_sent"].as_u64(), router["deliveries"].as_u64()), (Some(n), Some(n * (n - 1))));
    let (code, node) = with(&["--forwarding", "node"]);
    assert_eq!(code, 0);
    assert_eq!((node["packets_sent"].as_u64(), node["deliveries"].as_u64()), (Some(n * (n - 1)), Some(n * (n - 1))));
    let (code, sync) = with(&["--forwarding", "router", "--replication", "sync"]);
    assert_eq!(code, 3);
    assert!(sync["deadlock"]["wait_for_cycle"].as_array().is_some_and(|c| c.len() >= 2));
}

/// PMNBs whose buffers hold exactly one packet, with prefix steps shorter than a slot: the
/// last prefix packet on a link still sat in the buffer behind it when the packing piece
/// was sent, so the piece waited and the run failed (the paths of §IV-A are disjoint only if
/// every piece leaves on time). The packing now starts once a piece can follow a prefix
/// packet over the link.
#[test]
fn pmnb_packing_waits_for_the_last_prefix_packet_to_clear() {
    for alg in ["pmnb-1", "pmnb-3"] {
        for (sw, flits) in [("sf", "2"), ("vct", "4"), ("sf", "8")] {
            let args =
                ["--dims", "3", "--algorithm", alg, "--active-count", "5", "--switching", sw, "--packet-flits", flits, "--tp", "0.5"];
            let mut tight = args.to_vec();
            tight.extend_from_slice(&["--buffer-flits", flits]);
            let v = run_ok(&tight);
            assert_eq!((v["packing_delays"].as_u64(), v["missing_deliveries"].as_u64()), (Some(0), Some(0)), "{alg} {sw} {flits}");
        }
    }
}

/// A single broadcast the routers replicate as a worm (cut-through or wormhole) is not bound
/// by the slot model's D slots: its head crosses the root's eccentricity D hops, a cycle
/// each, and its L flits follow one a cycle, so the bound is (D + L − 1)/L slots, which the
/// ideal router meets and the realistic one does not beat. Store-and-forward keeps D slots.
#[test]
fn replicated_worms_have_their_own_lower_bound() {
    // (topology, dims, root, eccentricity of the root, worked out by hand)
    let cases = [
        ("hypercube", "2", "0", 2.0),
        ("hypercube", "5", "9", 5.0),
        ("mesh", "4x4", "0", 6.0),
        ("mesh", "5x3", "2,1", 3.0),
        ("torus", "6x4", "0", 5.0),
    ];
    for (topo, dims, root, ecc) in cases {
        for (sw, l) in [("wh", 2u16), ("wh", 4), ("vct", 3), ("sf", 3)] {
            let ls = l.to_string();
            let mut args = vec!["--topology", topo, "--dims", dims, "--root", root, "--forwarding", "router", "--switching", sw];
            args.extend(["--packet-flits", &ls]);
            if topo == "torus" {
                args.extend(["--vcs", "2"]);
            }
            let lf = l as f64;
            let want = if sw == "sf" { ecc } else { (ecc + lf - 1.0) / lf };
            let v = run_ok(&args);
            let (slots, lower) = (f64_of(&v, "slots"), f64_of(&v, "lower_bound_slots"));
            assert!((lower - want).abs() < 1e-9, "{args:?}: lower bound {lower}, want {want}");
            assert!((slots - want).abs() < 1e-9, "{args:?}: the ideal router takes {slots} slots, the bound is {want}");
            args.extend(["--router", "realistic"]);
            let v = run_ok(&args);
            assert!(f64_of(&v, "slots") >= want - 1e-9, "{args:?}: {} slots beat the bound {want}", f64_of(&v, "slots"));
        }
    }
}

/// An unstable dynamic run serves few requests, so few batches hold delays: its 95 %
/// interval of the mean delay must still hold only delays (none below 0), contain the mean,
/// and the summary must say how many requests were never served.
#[test]
fn dynamic_unstable_run_reports_a_valid_interval_and_its_unserved_requests() {
    let args = [
        "--dims",
        "3",
        "--algorithm",
        "dynamic",
        "--switching",
        "wh",
        "--tp",
        "3",
        "--pmnb",
        "pmnb-3",
        "--load",
        "0.5",
        "--cycles",
        "300",
        "--seed",
        "599",
    ];
    let v = run_ok(&args);
    assert_eq!(v["stable"], false);
    let (avg, ci) = (f64_of(&v, "avg_delay_slots"), &v["avg_delay_ci95"]);
    let (lo, hi) = (ci[0].as_f64().unwrap(), ci[1].as_f64().unwrap());
    assert!(0.0 <= lo && lo <= avg && avg <= hi, "interval [{lo}, {hi}] around {avg}");
    let unserved = u64_of(&v, "unserved");
    assert!(unserved > 0);
    let mut all = vec!["run"];
    all.extend_from_slice(&args);
    let o = flitwave(&all);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains(&format!("{unserved} never")) && text.contains("UNSTABLE"), "{text}");
}

/// A rate so small that 1 − rate rounds to 1 still means (almost) no packets: it once meant
/// one every cycle. Expected packets here: 2 nodes × 100 cycles × 1e-17.
#[test]
fn a_tiny_rate_sends_next_to_nothing() {
    for rate in ["1e-17", "5e-324"] {
        let v = run_ok(&["--topology", "linear", "--dims", "2", "--traffic", "uniform", "--rate", rate, "--cycles", "100"]);
        assert_eq!(u64_of(&v, "packets_sent"), 0, "rate {rate}");
    }
}

/// Offered load counts only the nodes that send: a transpose's diagonal (4 of 16 nodes of a
/// 4×4 mesh) and the middle of an odd bit-complement (1 of 3) map to themselves. The
/// configuration's nominal offer says so exactly; the measured one (the flits generated)
/// follows it. Far below saturation, accepted then matches offered.
#[test]
fn offered_load_leaves_out_the_nodes_that_send_nothing() {
    for (dims, pattern, share) in [("4x4", "transpose", 12.0 / 16.0), ("3", "bit-complement", 2.0 / 3.0), ("4x4", "uniform", 1.0)] {
        let topo = if dims == "3" { "linear" } else { "mesh" };
        let v = run_ok(&[
            "--topology",
            topo,
            "--dims",
            dims,
            "--traffic",
            pattern,
            "--rate",
            "0.01",
            "--packet-flits",
            "2",
            "--cycles",
            "20000",
        ]);
        let (offered, accepted) = (f64_of(&v, "offered_flits_per_node_cycle"), f64_of(&v, "accepted_flits_per_node_cycle"));
        let nominal = v["config"]["workload"]["offered_flits"].as_f64().unwrap();
        assert!((nominal - 0.02 * share).abs() < 1e-12, "{pattern}: nominal offer {nominal}");
        assert!((offered / nominal - 1.0).abs() < 0.08, "{pattern}: offered {offered}, nominal {nominal}");
        // Deterministic (seed 1); against the unadjusted offer the ratio would be 25 % and 33 % off.
        assert!((accepted / offered - 1.0).abs() < 0.15, "{pattern}: accepted {accepted} of {offered}");
    }
}

/// `--max-cycles` stops the run there even when the next thing to happen is a start-up cost
/// far beyond it (the clock used to jump to it), on one thread and split; a stopped run has
/// no slot-model ratio.
#[test]
fn max_cycles_is_not_overshot_by_a_wait() {
    for threads in ["1", "2"] {
        let (code, v) = run_json(&["--dims", "1", "--startup-cycles", "50", "--max-cycles", "10", "--threads", threads]);
        assert_eq!((code, u64_of(&v, "simulated_cycles")), (1, 10), "threads {threads}: {v:#}");
        assert_eq!(v["ending"], "cycle-limit");
        assert!(v["vs_slot_model"].is_null(), "{}", v["vs_slot_model"]);
    }
    let (code, v) =
        run_json(&["--topology", "linear", "--dims", "16", "--algorithm", "st", "--a", "1", "--b", "1000000", "--max-cycles", "5"]);
    assert_eq!((code, u64_of(&v, "simulated_cycles")), (1, 5));
}

/// A 4×4 mesh of the realistic router, 1-flit packets, 2 VCs × 8 flits, uniform traffic at
/// `rate` flits/node/cycle for `cycles` cycles, the first `warmup` of them a warm-up.
fn mesh_traffic(rate: &str, cycles: &str, warmup: &str) -> Vec<String> {
    let args = ["--topology", "mesh", "--dims", "4x4", "--traffic", "uniform", "--packet-flits", "1", "--vcs", "2", "--buffer-flits", "8"];
    let mut a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    for (f, v) in [("--rate", rate), ("--cycles", cycles), ("--warmup", warmup), ("--seed", "5")] {
        a.extend([f.to_string(), v.to_string()]);
    }
    a
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// `--warmup` and `--batches`: one line naming the field, the value and what is allowed,
/// exit 2, from the flags and from a scenario file; only with traffic.
#[test]
fn warmup_bad_values_are_refused() {
    let mesh = ["run", "--topology", "mesh", "--dims", "4x4", "--traffic", "uniform", "--cycles", "100"];
    bad(&[&mesh[..], &["--warmup", "100"]].concat(), &["warmup: 100", "fewer cycles than --cycles (100)", "[warmup, cycles)"]);
    bad(&[&mesh[..], &["--warmup", "5000"]].concat(), &["warmup: 5000", "--cycles (100)"]);
    bad(&[&mesh[..], &["--warmup", "-1"]].concat(), &["warmup: -1", "a whole number from 0"]);
    bad(&[&mesh[..], &["--warmup", "ten"]].concat(), &["warmup: ten", "a whole number"]);
    bad(&[&mesh[..], &["--batches", "1"]].concat(), &["batches: 1", "from 2 to 100"]);
    bad(&[&mesh[..], &["--batches", "101"]].concat(), &["batches: 101", "from 2 to 100"]);
    bad(&["run", "--dims", "3", "--warmup", "10"], &["warmup: 10", "--traffic"]);
    bad(&["run", "--dims", "3", "--batches", "5"], &["batches: 5", "--traffic"]);
    // Without --cycles the default 10000 is the limit.
    bad(&["run", "--topology", "mesh", "--dims", "4x4", "--traffic", "uniform", "--warmup", "10000"], &["warmup: 10000", "(10000)"]);
    let f = Temp::file("warmup.toml", "topology = \"mesh\"\ndims = \"4x4\"\ntraffic = \"uniform\"\ncycles = 300\nwarmup = 300\n");
    bad(&["run", f.s()], &["warmup: 300", "(300)"]);
}

/// The JSON says the window and echoes the warm-up; the batches cover the window, their
/// packets are those born in it (all of them without a warm-up), and the mean latency is
/// theirs; the summary has a line for the window.
#[test]
fn warmup_window_is_reported() {
    let args = mesh_traffic("0.1", "2000", "500");
    let v = run_ok(&strs(&args));
    let w = &v["window"];
    assert_eq!((w["from"].as_u64(), w["to"].as_u64()), (Some(500), Some(2000)), "{w}");
    assert_eq!(v["config"]["workload"]["warmup"], 500);
    assert_eq!(v["config"]["workload"]["batches"], 10);
    let batches = w["batches"].as_array().unwrap();
    assert_eq!(batches.len(), 10);
    let mut at = 500;
    let (mut packets, mut sum) = (0, 0.0);
    for b in batches {
        assert_eq!(b["from"].as_u64(), Some(at), "{w}");
        assert_eq!(b["to"].as_u64().unwrap() - at, 150, "{w}");
        at = b["to"].as_u64().unwrap();
        let n = b["packets"].as_u64().unwrap();
        packets += n;
        sum += n as f64 * b["latency_avg_cycles"].as_f64().unwrap();
    }
    assert_eq!(at, 2000);
    assert!(packets > 0 && packets < u64_of(&v, "deliveries"), "{packets} of {} packets born in the window", u64_of(&v, "deliveries"));
    assert!((sum / packets as f64 - f64_of(&v, "latency_avg_cycles")).abs() < 1e-9, "{v:#}");
    assert!(f64_of(&v, "latency_ci95_cycles") > 0.0);
    assert_eq!(v["saturated"], false);
    // No warm-up: every packet is measured, in batches of 200 cycles.
    let v = run_ok(&strs(&mesh_traffic("0.1", "2000", "0")));
    let batches = v["window"]["batches"].as_array().unwrap();
    assert_eq!(batches.iter().map(|b| b["packets"].as_u64().unwrap()).sum::<u64>(), u64_of(&v, "deliveries"));
    assert_eq!(batches[1]["from"], 200);
    // `--batches`, and the summary's line.
    let mut args = mesh_traffic("0.1", "2000", "500");
    args.extend(["--batches".to_string(), "4".to_string()]);
    let (code, v) = run_json(&strs(&args));
    assert_eq!((code, v["window"]["batches"].as_array().unwrap().len()), (0, 4));
    let mut all = vec!["run"];
    all.extend(strs(&args));
    let o = flitwave(&all);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("window cycles [500, 2000): accepted 0.") && text.contains("saturated: no"), "{text}");
    assert!(text.contains(" cycles (95 % CI, 4 batches), p99 "), "{text}");
}

/// Far below saturation the network accepts what is offered, within a few percent, and the
/// run is not saturated; the confidence interval is narrow.
#[test]
fn warmup_light_load_accepts_what_is_offered() {
    let v = run_ok(&strs(&mesh_traffic("0.05", "10000", "1000")));
    let (accepted, offered) = (f64_of(&v, "accepted_flits_per_node_cycle"), f64_of(&v, "offered_flits_per_node_cycle"));
    assert!((offered / 0.05 - 1.0).abs() < 0.05, "offered {offered}");
    assert!((accepted / offered - 1.0).abs() < 0.03, "accepted {accepted} of {offered}");
    assert_eq!(v["saturated"], false, "{}", v["window"]);
    let (mean, ci) = (f64_of(&v, "latency_avg_cycles"), f64_of(&v, "latency_ci95_cycles"));
    assert!(ci > 0.0 && ci < 0.05 * mean, "{mean} ± {ci}");
}

/// Far beyond saturation the source queues grow through the window: saturated, with the
/// network accepting far less than offered; the summary says so.
#[test]
fn warmup_saturated_beyond_saturation() {
    let args = mesh_traffic("0.9", "3000", "1000");
    let v = run_ok(&strs(&args));
    let (accepted, offered) = (f64_of(&v, "accepted_flits_per_node_cycle"), f64_of(&v, "offered_flits_per_node_cycle"));
    assert_eq!(v["saturated"], true, "{}", v["window"]);
    assert!(accepted < 0.8 * offered, "accepted {accepted} of {offered}");
    let w = &v["window"];
    let first = w["batches"][0]["source_queue_packets"].as_u64().unwrap();
    assert!(w["source_queue_packets_at_end"].as_u64().unwrap() > first, "{w}");
    assert!(w["source_queue_growth_packets"].as_f64().unwrap() > 0.05 * offered * 16.0 * 2000.0, "{w}");
    let mut all = vec!["run"];
    all.extend(strs(&args));
    let text = String::from_utf8(flitwave(&all).stdout).unwrap();
    assert!(text.contains("saturated: YES"), "{text}");
}

/// The window's statistics are the same on one thread and split between two, below and
/// beyond saturation.
#[test]
fn warmup_threads_give_the_same_measurement() {
    for rate in ["0.05", "0.9"] {
        let mut runs = Vec::new();
        for threads in ["1", "2"] {
            let mut args = mesh_traffic(rate, "2000", "700");
            args.extend(["--threads".to_string(), threads.to_string(), "--batches".to_string(), "7".to_string()]);
            let mut v = run_ok(&strs(&args));
            let o = v.as_object_mut().unwrap();
            for k in ["wall_seconds", "kernel"] {
                o.remove(k);
            }
            o["config"].as_object_mut().unwrap().remove("threads");
            runs.push(v);
        }
        assert!(runs[0]["window"]["batches"].as_array().is_some_and(|b| b.len() == 7));
        assert_eq!(runs[0], runs[1], "rate {rate}");
    }
}

#[test]
fn bad_injection_ejection_and_va_policy() {
    let traffic = ["run", "--topology", "mesh", "--dims", "4x4", "--traffic", "uniform"];
    bad(&[&traffic[..], &["--ejection-vcs", "0"]].concat(), &["ejection-vcs: 0", "1 to 16"]);
    bad(&[&traffic[..], &["--ejection-vcs", "17"]].concat(), &["ejection-vcs: 17", "1 to 16"]);
    bad(&[&traffic[..], &["--injection-vc", "first"]].concat(), &["injection-vc: first", "round-robin, vc0"]);
    bad(&[&traffic[..], &["--va-policy", "random"]].concat(), &["va-policy: random", "round-robin, lowest, most-credits"]);
}
