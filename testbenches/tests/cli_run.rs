//! End-to-end tests of the `flitwave` binary, runs and their reports: broadcasts against
//! the slot model's bounds, scenario files, outputs, the demo, `list`, router presets, long
//! waits, threads, the progress line and the hardware-multicast example.

mod common;

use common::{BIN, Temp, bad, describe, f64_of, flitwave, flitwave_in, run_json, run_ok, u64_of};
use serde_json::Value;
use std::process::Command;

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
    let runs: [&[&str]; 12] = [
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
        // Two-cycle links and rounds, the run quiescent at cycle 293, before the measurement
        // window's end (300): a split run that stepped on past where one thread ends would
        // take the window's occupancy at 300 (a kernel that let the parts run up to two
        // cycles apart between meetings did; the schedules property test found it).
        &[
            "--dims",
            "2",
            "--ports",
            "2",
            "--router",
            "realistic",
            "--arbiter",
            "key",
            "--ejection-vcs",
            "2",
            "--traffic",
            "hotspot",
            "--rate",
            "0.01",
            "--cycles",
            "300",
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
