//! What the property tests over random CLI configurations share (`threads.rs`,
//! `kernels.rs`): the strategies that draw a configuration as flags, the same fix-ups
//! before resolving them, and the report as JSON.

use proptest::prelude::*;
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
    let mut raw = Raw::default();
    for (k, v) in flags {
        raw.values.insert(k.to_string(), v.clone());
    }
    let topology = raw.values.get("topology").cloned().unwrap_or_default();
    let algorithm = raw.values.get("algorithm").cloned();
    let mnb_sbt = algorithm.as_deref() == Some("mnb-sbt") && matches!(topology.as_str(), "mesh" | "torus");
    if topology != "hypercube" && algorithm.is_some() && !mnb_sbt {
        raw.values.insert("algorithm".into(), "snb".into());
    }
    let broadcasts = raw.values.get("broadcast-rate").is_some_and(|r| r != "0");
    if !matches!(raw.values.get("algorithm").map(String::as_str), Some("snb" | "mnb-sbt")) && !broadcasts {
        raw.values.remove("forwarding");
    }
    let cfg = Config::resolve(&raw).ok()?;
    Some((raw, cfg))
}
