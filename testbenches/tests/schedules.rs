//! Results do not depend on which routers the kernel visits: random configurations of every
//! workload (traffic patterns and all the algorithms, node- or router-forwarded), topology,
//! switching mode, router, VC count, buffer depths, link width, port model and arbiter a user
//! may combine, each run with `--schedule busy` and `--schedule all`, must give the same
//! report (wall time aside), on one thread and split between two or three.

mod common;

use common::{algorithm, option, topology, traffic};
use proptest::prelude::*;
use testbenches::config::{Config, Raw};
use testbenches::run;

/// The report of `cfg` under `schedule`, as JSON without what may differ.
fn report(cfg: &Config, schedule: fabric::Schedule) -> serde_json::Value {
    let mut c = cfg.clone();
    c.schedule = schedule;
    let mut v = common::report_json(&c);
    v["config"].as_object_mut().unwrap().remove("schedule");
    v
}

/// A configuration as flags: the topology and its sizes, a workload, and router options
/// (each present or left to its default).
fn flags() -> impl Strategy<Value = Vec<(&'static str, String)>> {
    let topology = topology(1, 3);
    let workload = prop_oneof![
        traffic(&["0.01", "0.05", "0.2", "0.6"], &["60", "300"]),
        algorithm(&[
            "snb",
            "accumulate",
            "mnb",
            "mnb-ring",
            "multi-accumulate",
            "scatter",
            "gather",
            "total-exchange",
            "kbcast",
            "pmnb-1",
            "pmnb-3",
            "mnb-sbt",
        ]),
    ];
    let options = (
        option("switching", &["sf", "vct", "wh"]),
        option("router", &["ideal", "realistic"]),
        option("packet-flits", &["1", "2", "3", "5"]),
        option("buffer-flits", &["1", "2", "4", "8"]),
        option("vcs", &["1", "2", "3"]),
        option("nu", &["0", "0", "1", "2"]),
        option("ports", &["all", "one", "2"]),
        option("arbiter", &["round-robin", "fixed", "oldest", "key"]),
        option("startup-cycles", &["0", "3"]),
        option("copy-cycles-per-flit", &["0", "1"]),
        option("seed", &["1", "7"]),
        option("forwarding", &["node", "router"]),
    );
    let hardware = (
        option("va-policy", &["round-robin", "lowest", "most-credits"]),
        option("injection-vc", &["round-robin", "vc0"]),
        option("ejection-vcs", &["1", "2", "3"]),
        option("inject-buffer-flits", &["1", "2", "4", "8"]),
    );
    (topology, workload, options, hardware, any::<bool>()).prop_map(|((t, dims), w, o, h, deadlock)| {
        let mut f = vec![("topology", t.to_string()), ("dims", dims), ("max-cycles", "20000".to_string()), ("watchdog", "300".to_string())];
        if deadlock && t == "torus" {
            f.push(("deadlock-avoidance", "off".to_string()));
        }
        f.extend(w);
        f.extend([o.0, o.1, o.2, o.3, o.4, o.5, o.6, o.7, o.8, o.9, o.10, o.11, h.0, h.1, h.2, h.3].into_iter().flatten());
        f
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 384, ..ProptestConfig::default() })]

    #[test]
    fn every_schedule_gives_the_same_report(flags in flags(), threads in 2u32..=3) {
        let Some((_, cfg)) = common::resolve(&flags) else { return Ok(()) };
        let busy = report(&cfg, fabric::Schedule::Busy);
        let all = report(&cfg, fabric::Schedule::All);
        if cfg.nodes >= threads as u64 {
            let mut split = cfg.clone();
            split.threads = threads;
            if run::check_threads(&split).is_ok() {
                let mut v = report(&split, fabric::Schedule::Busy);
                v["config"].as_object_mut().unwrap().insert("threads".into(), 1.into());
                prop_assert_eq!(v, busy.clone(), "{:?} on {} threads", flags, threads);
            }
        }
        // SCHEDULES_SHOW_RUNS=1 lists the runs (to see what the strategy covers).
        if std::env::var_os("SCHEDULES_SHOW_RUNS").is_some() {
            eprintln!("run: {} cycles {} deliveries {} ending {}", flags.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" "), busy["simulated_cycles"], busy["deliveries"], busy["ending"]);
        }
        prop_assert_eq!(all, busy, "{:?}", flags);
    }
}

/// `--schedule` takes busy or all; anything else is refused in one line.
#[test]
fn an_unknown_schedule_is_refused() {
    let raw = Raw::from_given([("topology", "hypercube"), ("dims", "4"), ("algorithm", "mnb"), ("schedule", "fast")]).unwrap();
    let e = Config::resolve(&raw).expect_err("unknown schedule").to_string();
    assert_eq!(e, "schedule: fast: busy, all");
}
