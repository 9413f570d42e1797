//! Splitting a run between threads never changes its result: random configurations (the
//! topologies, sizes, workloads that split, switching modes, routers, VCs, buffer depths,
//! port models, link speeds and arbiters a user may combine), each run on one thread and
//! on two or three, must give the same report, wall time and thread count aside.

use proptest::prelude::*;
use testbenches::config::{Config, Raw};
use testbenches::{json, run};

/// The report of `cfg` on `threads` threads, as JSON without what may differ.
fn report(cfg: &Config, threads: u32) -> serde_json::Value {
    let mut c = cfg.clone();
    c.threads = threads;
    let mut v: serde_json::Value = serde_json::from_str(&json::to_string(&run::run(&c))).unwrap();
    v.as_object_mut().unwrap().remove("wall_seconds");
    // One thread may take the event kernel, a split run the scan kernel.
    v.as_object_mut().unwrap().remove("kernel");
    v["config"].as_object_mut().unwrap().remove("threads");
    v
}

fn pick(options: &'static [&'static str]) -> impl Strategy<Value = &'static str> {
    proptest::sample::select(options)
}

/// A configuration as flags: the topology and its sizes, a workload, and router options
/// (each present or left to its default).
fn flags() -> impl Strategy<Value = Vec<(&'static str, String)>> {
    let topology = prop_oneof![
        (2u32..=6).prop_map(|d| ("hypercube", d.to_string())),
        (3u32..=12).prop_map(|n| ("linear", n.to_string())),
        proptest::collection::vec(2u32..=5, 1..=3).prop_map(|s| ("mesh", s.iter().map(u32::to_string).collect::<Vec<_>>().join("x"))),
        proptest::collection::vec(3u32..=5, 1..=2).prop_map(|s| ("torus", s.iter().map(u32::to_string).collect::<Vec<_>>().join("x"))),
    ];
    let workload = prop_oneof![
        (pick(&["uniform", "transpose", "bit-complement", "tornado", "hotspot"]), pick(&["0.01", "0.05", "0.2"]), pick(&["100", "400"]))
            .prop_map(|(p, r, c)| vec![("traffic", p.to_string()), ("rate", r.to_string()), ("cycles", c.to_string())]),
        (pick(&["snb", "mnb", "mnb-sbt", "mnb-ring", "scatter", "gather", "total-exchange", "pmnb-1", "pmnb-3"]), any::<bool>()).prop_map(
            |(a, router)| {
                let mut w = vec![("algorithm", a.to_string())];
                if router {
                    w.push(("forwarding", "router".to_string()));
                }
                w
            }
        ),
    ];
    let option = |name: &'static str, values: &'static [&'static str]| {
        proptest::option::of(pick(values)).prop_map(move |v| v.map(|v| (name, v.to_string())))
    };
    let options = (
        option("switching", &["sf", "vct", "wh"]),
        option("router", &["ideal", "realistic"]),
        option("packet-flits", &["1", "2", "3", "5"]),
        option("buffer-flits", &["1", "2", "4", "8"]),
        option("vcs", &["1", "2", "3"]),
        option("nu", &["0", "1", "2"]),
        option("ports", &["all", "one", "2"]),
        option("arbiter", &["round-robin", "fixed", "oldest", "key"]),
        option("startup-cycles", &["0", "3"]),
        option("seed", &["1", "7"]),
    );
    (topology, workload, options).prop_map(|((t, dims), w, o)| {
        let mut f = vec![("topology", t.to_string()), ("dims", dims), ("max-cycles", "20000".to_string()), ("watchdog", "300".to_string())];
        f.extend(w);
        f.extend([o.0, o.1, o.2, o.3, o.4, o.5, o.6, o.7, o.8, o.9].into_iter().flatten());
        f
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn threads_never_change_a_result(flags in flags(), threads in 2u32..=3) {
        let mut raw = Raw::default();
        for (k, v) in &flags {
            raw.values.insert(k.to_string(), v.clone());
        }
        // Off the hypercube the algorithm that splits is snb; only snb and mnb-sbt forward
        // in the routers.
        if raw.values.get("topology").map(String::as_str) != Some("hypercube") && raw.values.contains_key("algorithm") {
            raw.values.insert("algorithm".into(), "snb".into());
        }
        if !matches!(raw.values.get("algorithm").map(String::as_str), Some("snb" | "mnb-sbt")) {
            raw.values.remove("forwarding");
        }
        // Other combinations the CLI refuses (exit 2) are not runs.
        let Ok(mut cfg) = Config::resolve(&raw) else { return Ok(()) };
        cfg.threads = threads;
        prop_assume!(run::check_threads(&cfg).is_ok());
        let one = report(&cfg, 1);
        prop_assert_eq!(report(&cfg, threads), one, "{:?}", flags);
    }
}
