//! Splitting a run between threads never changes its result: random configurations (the
//! topologies, sizes, workloads that split, switching modes, routers, VCs, buffer depths,
//! port models, link speeds and arbiters a user may combine), each run on one thread and
//! on two or three, must give the same report, wall time and thread count aside.

mod common;

use common::{algorithm, option, topology, traffic};
use proptest::prelude::*;
use testbenches::config::Config;
use testbenches::run;

/// The report of `cfg` on `threads` threads, as JSON without what may differ.
fn report(cfg: &Config, threads: u32) -> serde_json::Value {
    let mut c = cfg.clone();
    c.threads = threads;
    let mut v = common::report_json(&c);
    // One thread may take the event kernel, a split run the scan kernel.
    v.as_object_mut().unwrap().remove("kernel");
    v["config"].as_object_mut().unwrap().remove("threads");
    v
}

/// A configuration as flags: the topology and its sizes, a workload, and router options
/// (each present or left to its default).
fn flags() -> impl Strategy<Value = Vec<(&'static str, String)>> {
    let topology = topology(2, 3);
    let workload = prop_oneof![
        traffic(&["0.01", "0.05", "0.2"], &["100", "400"]),
        algorithm(&["snb", "mnb", "mnb-sbt", "mnb-ring", "scatter", "gather", "total-exchange", "pmnb-1", "pmnb-3"]),
    ];
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
        let Some((_, mut cfg)) = common::resolve(&flags) else { return Ok(()) };
        cfg.threads = threads;
        prop_assume!(run::check_threads(&cfg).is_ok());
        let one = report(&cfg, 1);
        prop_assert_eq!(report(&cfg, threads), one, "{:?}", flags);
    }
}
