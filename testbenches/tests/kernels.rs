//! The event kernel gives the scan kernel's results: random configurations of every workload
//! (traffic patterns and all the algorithms), topology, switching mode, router, VC count,
//! buffer depth, port model and arbiter a user may combine, each run on both kernels, must
//! give the same report (wall time and the kernel's name aside), on one thread and split
//! between two. Runs the event kernel does not apply to (router-replicated broadcasts, links
//! of 2^nu > 1 flits) go to the scan kernel under `auto`, and `--kernel event` refuses them.

mod common;

use common::{algorithm, option, topology, traffic};
use proptest::prelude::*;
use testbenches::config::{Config, Raw};
use testbenches::run;

/// The report of `cfg` on `kernel`, as JSON without what may differ; and which kernel ran.
fn report(cfg: &Config, kernel: fabric::KernelChoice) -> (serde_json::Value, String) {
    let mut c = cfg.clone();
    c.kernel = kernel;
    let mut v = common::report_json(&c);
    let ran = v.as_object_mut().unwrap().remove("kernel").unwrap().as_str().unwrap().to_string();
    v["config"].as_object_mut().unwrap().remove("kernel");
    (v, ran)
}

/// A configuration as flags: the topology and its sizes, a workload, and router options
/// (each present or left to its default).
fn flags() -> impl Strategy<Value = Vec<(&'static str, String)>> {
    let topology = topology(1, 2);
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
        option("nu", &["0", "0", "1"]),
        option("ports", &["all", "one", "2"]),
        option("arbiter", &["round-robin", "fixed", "oldest", "key"]),
        option("startup-cycles", &["0", "3"]),
        option("copy-cycles-per-flit", &["0", "1"]),
        option("seed", &["1", "7"]),
    );
    (topology, workload, options, any::<bool>()).prop_map(|((t, dims), w, o, deadlock)| {
        let mut f = vec![("topology", t.to_string()), ("dims", dims), ("max-cycles", "20000".to_string()), ("watchdog", "300".to_string())];
        if deadlock && t == "torus" {
            f.push(("deadlock-avoidance", "off".to_string()));
        }
        f.extend(w);
        f.extend([o.0, o.1, o.2, o.3, o.4, o.5, o.6, o.7, o.8, o.9, o.10].into_iter().flatten());
        f
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 384, ..ProptestConfig::default() })]

    #[test]
    fn the_event_kernel_gives_the_scan_kernels_results(flags in flags()) {
        let Some((raw, cfg)) = common::resolve(&flags) else { return Ok(()) };
        let (scan, ran) = report(&cfg, fabric::KernelChoice::Scan);
        prop_assert_eq!(ran, "scan");
        let (auto, ran) = report(&cfg, fabric::KernelChoice::Auto);
        let applies = !raw.values.contains_key("forwarding") && raw.values.get("nu").is_none_or(|n| n == "0");
        prop_assert_eq!(&ran, if applies { "event" } else { "scan" }, "{:?}", flags);
        if run::check_threads(&cfg).is_ok_and(|_| cfg.nodes >= 2) {
            let mut split = cfg.clone();
            split.threads = 2;
            if run::check_threads(&split).is_ok() {
                let (mut v, ran2) = report(&split, fabric::KernelChoice::Auto);
                prop_assert_eq!(&ran2, &ran, "{:?}", flags);
                v["config"].as_object_mut().unwrap().insert("threads".into(), 1.into());
                prop_assert_eq!(v, scan.clone(), "{:?} on two threads", flags);
            }
        }
        // KERNELS_SHOW_RUNS=1 lists the runs (to see what the strategy covers).
        if std::env::var_os("KERNELS_SHOW_RUNS").is_some() {
            eprintln!("run: {} {} cycles {} deliveries {} ending {}", ran, flags.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" "), scan["simulated_cycles"], scan["deliveries"], scan["ending"]);
        }
        prop_assert_eq!(auto, scan, "{:?}", flags);
    }
}

/// `--kernel event` where it does not apply is refused in one line naming why; `auto`
/// takes the scan kernel there.
#[test]
fn the_event_kernel_is_refused_where_it_does_not_apply() {
    let resolve = |extra: &[(&str, &str)]| {
        let mut raw = Raw::default();
        for (k, v) in [("topology", "hypercube"), ("dims", "4"), ("algorithm", "mnb-sbt"), ("kernel", "event")].iter().chain(extra) {
            raw.values.insert(k.to_string(), v.to_string());
        }
        Config::resolve(&raw)
    };
    assert!(resolve(&[]).is_ok());
    assert!(resolve(&[("threads", "2")]).is_ok(), "split runs take the event kernel too");
    for (extra, why) in [
        (&[("forwarding", "router")][..], "replicate"),
        (&[("nu", "1"), ("vcs", "2")][..], "nu > 0"),
        (&[("vcd", "/tmp/x.vcd")][..], "waveforms"),
    ] {
        let e = resolve(extra).expect_err("refused").to_string();
        assert!(e.starts_with("kernel: event: auto or scan for this run"), "{e}");
        assert!(e.contains(why), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }
    let mut raw = Raw::default();
    for (k, v) in [("topology", "hypercube"), ("dims", "4"), ("algorithm", "mnb"), ("kernel", "fast")] {
        raw.values.insert(k.to_string(), v.to_string());
    }
    let e = Config::resolve(&raw).expect_err("unknown kernel").to_string();
    assert_eq!(e, "kernel: fast: auto, scan, event");
}
