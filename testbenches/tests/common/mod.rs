//! What the tests of the CLI share. For the property tests over random configurations
//! (`schedules.rs`): the strategies that draw a configuration as flags, the same fix-ups
//! before resolving them, and the report as JSON. For the end-to-end tests of the binary
//! (`cli_*.rs`): running it, its JSON report, a refusal of bad input, scratch files, and the
//! tornado traffic that deadlocks a torus ring.
#![allow(dead_code, reason = "each test binary uses a part of these")]

#[path = "../refusal/mod.rs"]
pub mod refusal;

use proptest::prelude::*;
pub use refusal::BIN;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use testbenches::config::{Config, Raw};
use testbenches::{json, run};

/// The report of `cfg` as JSON, without its wall time.
pub fn report_json(cfg: &Config) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_str(&json::to_string(&run::run(cfg))).unwrap();
    v.as_object_mut().unwrap().remove("wall_seconds");
    v
}

pub fn pick(options: &'static [&'static str]) -> impl Strategy<Value = &'static str> {
    proptest::sample::select(options)
}

/// A topology and its sizes: hypercubes from `min_dims` to 6 dimensions, linear arrays
/// from `min_nodes` to 12 nodes, meshes of 1–3 dimensions (2–5 a side), tori of 1–2
/// dimensions (3–5 a side).
pub fn topology(min_dims: u32, min_nodes: u32) -> impl Strategy<Value = (&'static str, String)> {
    prop_oneof![
        (min_dims..=6).prop_map(|d| ("hypercube", d.to_string())),
        (min_nodes..=12).prop_map(|n| ("linear", n.to_string())),
        proptest::collection::vec(2u32..=5, 1..=3).prop_map(|s| ("mesh", s.iter().map(u32::to_string).collect::<Vec<_>>().join("x"))),
        proptest::collection::vec(3u32..=5, 1..=2).prop_map(|s| ("torus", s.iter().map(u32::to_string).collect::<Vec<_>>().join("x"))),
    ]
}

/// A traffic workload: a pattern, one of `rates`, one of `cycles`, and a measurement window:
/// no warm-up, or a warm-up of a third or of all but one of the cycles, in the default
/// batches or in 3; in a quarter of the draws broadcasts too (`--broadcast-rate`, forwarded
/// as `--forwarding` says), in a tenth broadcasts alone.
pub fn traffic(rates: &'static [&'static str], cycles: &'static [&'static str]) -> impl Strategy<Value = Vec<(&'static str, String)>> {
    let patterns = pick(&["uniform", "transpose", "bit-complement", "tornado", "hotspot"]);
    let broadcasts = (0u32..20, pick(&["0.001", "0.01", "0.05"]));
    (patterns, pick(rates), pick(cycles), 0u32..3, any::<bool>(), broadcasts).prop_map(|(p, r, c, warmup, batches, (b, br))| {
        let mut w = if b < 2 {
            vec![("broadcast-rate", br.to_string()), ("cycles", c.to_string())]
        } else {
            vec![("traffic", p.to_string()), ("rate", r.to_string()), ("cycles", c.to_string())]
        };
        if (2..5).contains(&b) {
            w.push(("broadcast-rate", br.to_string()));
        }
        let cycles: u64 = c.parse().expect("cycles are numbers");
        match warmup {
            1 => w.push(("warmup", (cycles / 3).to_string())),
            2 => w.push(("warmup", (cycles - 1).to_string())),
            _ => {}
        }
        if batches {
            w.push(("batches", "3".to_string()));
        }
        w
    })
}

/// An algorithm of `algorithms`, forwarded by the nodes or (asked for) by the routers.
pub fn algorithm(algorithms: &'static [&'static str]) -> impl Strategy<Value = Vec<(&'static str, String)>> {
    (pick(algorithms), any::<bool>()).prop_map(|(a, router)| {
        let mut w = vec![("algorithm", a.to_string())];
        if router {
            w.push(("forwarding", "router".to_string()));
        }
        w
    })
}

/// The flag `name`: absent (left to its default), or one of `values`.
pub fn option(name: &'static str, values: &'static [&'static str]) -> impl Strategy<Value = Option<(&'static str, String)>> {
    proptest::option::of(pick(values)).prop_map(move |v| v.map(|v| (name, v.to_string())))
}

/// `flags` resolved as the CLI would, with the raw values it resolved; None for the
/// combinations the CLI refuses (exit 2), which are not runs. Off the hypercube the
/// algorithm becomes `snb` (the one that runs everywhere; `mnb-sbt` stays on meshes and
/// tori), and only `snb`, `mnb-sbt` and broadcast traffic keep `--forwarding router`.
pub fn resolve(flags: &[(&'static str, String)]) -> Option<(Raw, Config)> {
    let mut raw = Raw::from_given(flags.iter().cloned()).unwrap();
    let topology = raw.topology.topology.clone().unwrap_or_default();
    let algorithm = raw.workload.algorithm.clone();
    let mnb_sbt = algorithm.as_deref() == Some("mnb-sbt") && matches!(topology.as_str(), "mesh" | "torus");
    if topology != "hypercube" && algorithm.is_some() && !mnb_sbt {
        raw.workload.algorithm = Some("snb".to_string());
    }
    let broadcasts = raw.workload.broadcast_rate.as_ref().is_some_and(|r| r != "0");
    if !matches!(raw.workload.algorithm.as_deref(), Some("snb" | "mnb-sbt")) && !broadcasts {
        raw.workload.forwarding = None;
    }
    let cfg = Config::resolve(&raw).ok()?;
    Some((raw, cfg))
}

/// Saturating tornado traffic on an 8-node torus ring, 8-flit packets in 2-flit buffers: with
/// one VC and no deadlock avoidance it deadlocks (docs/examples.md), with dateline VCs it drains.
pub const TORNADO_RING: &[&str] = &[
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
];

/// A file or folder under the system temp dir, unique to this process and call, removed on drop.
pub struct Temp(pub PathBuf);

impl Temp {
    pub fn path(name: &str) -> Temp {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        Temp(std::env::temp_dir().join(format!("flitwave-cli-test-{}-{n}-{name}", std::process::id())))
    }
    pub fn file(name: &str, contents: &str) -> Temp {
        let t = Temp::path(name);
        std::fs::write(&t.0, contents).unwrap();
        t
    }
    pub fn dir(name: &str) -> Temp {
        let t = Temp::path(name);
        std::fs::create_dir_all(&t.0).unwrap();
        t
    }
    pub fn s(&self) -> &str {
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

/// `flitwave ARGS`, in `dir` if given.
pub fn flitwave_in(dir: Option<&Path>, args: &[&str]) -> Output {
    let mut c = Command::new(BIN);
    c.args(args);
    if let Some(d) = dir {
        c.current_dir(d);
    }
    c.output().expect("flitwave runs")
}

pub fn flitwave(args: &[&str]) -> Output {
    flitwave_in(None, args)
}

/// The command, its exit code and both outputs, for a failed assertion.
pub fn describe(args: &[&str], o: &Output) -> String {
    format!(
        "flitwave {}\nexit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        args.join(" "),
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `flitwave run ARGS --json -`: the exit code and the parsed JSON result.
pub fn run_json(args: &[&str]) -> (i32, Value) {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--json", "-"]);
    let o = flitwave(&all);
    let code = o.status.code().unwrap_or_else(|| panic!("killed by a signal\n{}", describe(&all, &o)));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("stdout is not JSON ({e})\n{}", describe(&all, &o)));
    (code, v)
}

/// Run, expect exit 0, return the JSON.
pub fn run_ok(args: &[&str]) -> Value {
    let (code, v) = run_json(args);
    assert_eq!(code, 0, "flitwave run {} exited {code}: {v:#}", args.join(" "));
    v
}

pub fn f64_of(v: &Value, k: &str) -> f64 {
    v[k].as_f64().unwrap_or_else(|| panic!("{k} is not a number: {}", v[k]))
}

pub fn u64_of(v: &Value, k: &str) -> u64 {
    v[k].as_u64().unwrap_or_else(|| panic!("{k} is not a whole number: {}", v[k]))
}

/// Bad input: refused ([`refusal::assert_refused`]: exit 2, one line on stderr containing
/// every one of `needles`: the field, the value, what is allowed), nothing on stdout, and
/// the line is `flitwave: error: ...`.
pub fn bad(args: &[&str], needles: &[&str]) {
    let o = flitwave(args);
    refusal::assert_refused(args, &o, needles);
    let d = describe(args, &o);
    assert!(o.stdout.is_empty(), "stdout not empty: {d}");
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.ends_with('\n'));
    assert!(err.starts_with("flitwave: error: "), "{d}");
    assert!(!err.contains("panicked"), "{d}");
}
