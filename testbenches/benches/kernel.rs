//! Kernel benchmarks (issue 2, item 8). Each scenario is measured twice, once with
//! criterion's throughput in simulated cycles and once in flit-hops, so the report shows
//! both rates. Fabrics are built outside the timed part.
//!
//! (a) hypercube d=10, every node broadcasts one 1-flit packet on its spanning binomial
//!     tree, store-and-forward, ideal router (`mnb-sbt`);
//! (b) 8x8 mesh, uniform traffic at 0.1 flits/node/cycle (4-flit packets, 0.025
//!     packets/node/cycle), wormhole, dimension-order routing, 2 VCs x 8-flit buffers,
//!     realistic router, 20,000 cycles of injection, then drain.

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use testbenches::config::{Config, Raw};
use testbenches::run;

fn config(settings: &[(&str, &str)]) -> Config {
    let mut raw = Raw::default();
    for (k, v) in settings {
        raw.values.insert(k.to_string(), v.to_string());
    }
    Config::resolve(&raw).expect("benchmark configuration is valid")
}

pub const HYPERCUBE_MNB: &[(&str, &str)] =
    &[("topology", "hypercube"), ("dims", "10"), ("algorithm", "mnb-sbt"), ("switching", "sf"), ("router", "ideal")];

pub const MESH_UNIFORM: &[(&str, &str)] = &[
    ("topology", "mesh"),
    ("dims", "8x8"),
    ("traffic", "uniform"),
    ("rate", "0.025"),
    ("packet-flits", "4"),
    ("switching", "wh"),
    ("vcs", "2"),
    ("buffer-flits", "8"),
    ("router", "realistic"),
    ("cycles", "20000"),
    ("seed", "1"),
];

fn bench(c: &mut Criterion, name: &str, settings: &[(&str, &str)]) {
    let cfg = config(settings);
    // One untimed run for the amounts of work (the runs are deterministic).
    let probe = run::run(&cfg);
    assert_eq!(probe.missing_deliveries, 0);
    let mut g = c.benchmark_group(name);
    g.sample_size(10);
    for (unit, amount) in [("cycles", probe.simulated_cycles), ("flit-hops", probe.flit_hops)] {
        g.throughput(Throughput::Elements(amount));
        g.bench_function(unit, |b| {
            b.iter_batched(
                || run::build(&cfg).0,
                |mut f| {
                    black_box(f.run());
                    f
                },
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

/// Issue 3: tracing a 16x16 mesh run must cost at most 4 times the untraced run. `discard`
/// traces into a sink that drops every value, on the simulation thread: what tracing costs
/// the simulation by itself; `vcd` and `fst` encode on a second thread.
pub const MESH16_UNIFORM: &[(&str, &str)] =
    &[("topology", "mesh"), ("dims", "16x16"), ("traffic", "uniform"), ("rate", "0.025"), ("cycles", "2000"), ("seed", "1")];

fn tracing(c: &mut Criterion) {
    use traces::{Discard, FstSink, Threaded, TraceOptions, Tracer, VcdSink};
    let cfg = config(MESH16_UNIFORM);
    let dir = std::env::temp_dir().join(format!("flitwave-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut g = c.benchmark_group("c_mesh16x16_tracing");
    g.sample_size(10);
    for kind in ["untraced", "discard", "vcd", "fst"] {
        let path = dir.join(format!("t.{kind}"));
        g.bench_function(kind, |b| {
            b.iter_batched(
                || {
                    let mut f = run::build(&cfg).0;
                    let sink: Option<Box<dyn traces::WaveSink + Send>> = match kind {
                        "vcd" => Some(Box::new(VcdSink::create(&path, 1, "bench").unwrap())),
                        "fst" => Some(Box::new(FstSink::create(&path, 1).unwrap())),
                        _ => None,
                    };
                    if let Some(s) = sink {
                        f.add_probe(Box::new(Tracer::new(&f, TraceOptions::default(), Box::new(Threaded::new(s))).unwrap()));
                    } else if kind == "discard" {
                        f.add_probe(Box::new(Tracer::new(&f, TraceOptions::default(), Box::new(Discard::default())).unwrap()));
                    }
                    f
                },
                |mut f| {
                    black_box(f.run());
                    for p in f.take_probes() {
                        p.as_any().downcast::<Tracer>().unwrap().finish(f.now).unwrap();
                    }
                    f
                },
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
    std::fs::remove_dir_all(&dir).ok();
}

fn benches(c: &mut Criterion) {
    bench(c, "a_hypercube10_mnb_sbt", HYPERCUBE_MNB);
    bench(c, "b_mesh8x8_uniform_wh", MESH_UNIFORM);
    tracing(c);
}

criterion_group!(kernel, benches);
criterion_main!(kernel);
