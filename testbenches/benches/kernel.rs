//! Kernel benchmarks (`docs/performance.md`). Each scenario is measured twice, once with
//! criterion's throughput in simulated cycles and once in flit-hops, so the report shows
//! both rates. Fabrics are built outside the timed part.
//!
//! (a) hypercube d=10, every node broadcasts one 1-flit packet on its spanning binomial
//!     tree, store-and-forward, ideal router (`mnb-sbt`): forwarded by the nodes (each
//!     node receives the packet and sends it on, as the papers do) and, as
//!     `a_..._router`, by the routers (hardware multicast: each node sends one packet and
//!     the crossbars copy it along its tree); both also as `..._2threads`, split between
//!     two threads;
//! (b) 8x8 mesh, uniform traffic at 0.1 flits/node/cycle (4-flit packets, 0.025
//!     packets/node/cycle), wormhole, dimension-order routing, 2 VCs x 8-flit buffers,
//!     realistic router, 20,000 cycles of injection, then drain; and, as
//!     `b_..._2threads`, the same run split between two threads (`--threads 2`; each
//!     thread builds its part inside the timed run).
//! (d) a 32x32 mesh with (b)'s router at 0.01 packets/node/cycle, 2,000 cycles, on one
//!     and on two threads: how a large fabric scales.
//! `booksim_b`: (b) for 100,000 cycles beside BookSim 2 on the same configuration, when
//!     `BOOKSIM` names its binary, both tools as whole processes.
//!
//! Every scenario runs on the one kernel, evaluating only the routers with work
//! (`--schedule busy`, the default).

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use testbenches::config::{Config, Raw};
use testbenches::run;

fn config(settings: &[(&str, &str)]) -> Config {
    let raw = Raw::from_given(settings.iter().copied()).unwrap();
    Config::resolve(&raw).expect("benchmark configuration is valid")
}

pub const HYPERCUBE_MNB: &[(&str, &str)] =
    &[("topology", "hypercube"), ("dims", "10"), ("algorithm", "mnb-sbt"), ("switching", "sf"), ("router", "ideal")];

pub const HYPERCUBE_MNB_ROUTER: &[(&str, &str)] = &[
    ("topology", "hypercube"),
    ("dims", "10"),
    ("algorithm", "mnb-sbt"),
    ("switching", "sf"),
    ("router", "ideal"),
    ("forwarding", "router"),
];

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

/// One scenario on `threads` threads (more than one: split between them, each building its
/// part inside the timed run).
fn bench(c: &mut Criterion, name: &str, settings: &[(&str, &str)], threads: u32) {
    let mut cfg = config(settings);
    cfg.threads = threads;
    // One untimed run for the amounts of work (the runs are deterministic).
    let probe = run::run(&cfg);
    assert_eq!(probe.missing_deliveries, 0);
    let mut g = c.benchmark_group(name);
    g.sample_size(10);
    for (unit, amount) in [("cycles", probe.simulated_cycles), ("flit-hops", probe.flit_hops)] {
        g.throughput(Throughput::Elements(amount));
        if threads > 1 {
            g.bench_function(unit, |b| b.iter(|| black_box(fabric::kernel::split::run_split(threads as usize, || run::build(&cfg).0))));
            continue;
        }
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

pub const MESH32_UNIFORM: &[(&str, &str)] = &[
    ("topology", "mesh"),
    ("dims", "32x32"),
    ("traffic", "uniform"),
    ("rate", "0.01"),
    ("packet-flits", "4"),
    ("switching", "wh"),
    ("vcs", "2"),
    ("buffer-flits", "8"),
    ("router", "realistic"),
    ("cycles", "2000"),
    ("seed", "1"),
];

/// Issue 3: tracing a 16x16 mesh run must cost at most 4 times the untraced run. `discard`
/// traces into a sink that drops every value, on the simulation thread: what tracing costs
/// the simulation by itself; `vcd` and `fst` encode on a second thread.
pub const MESH16_UNIFORM: &[(&str, &str)] =
    &[("topology", "mesh"), ("dims", "16x16"), ("traffic", "uniform"), ("rate", "0.025"), ("cycles", "2000"), ("seed", "1")];

/// A fabric for the tracing benchmark, with a tracer of `kind` attached (none for
/// `untraced`).
fn traced_fabric(cfg: &Config, kind: &str, path: &std::path::Path) -> fabric::Fabric {
    use traces::{Discard, FstSink, Threaded, TraceOptions, Tracer, VcdSink};
    let mut f = run::build(cfg).0;
    let sink: Option<Box<dyn traces::WaveSink + Send>> = match kind {
        "vcd" => Some(Box::new(VcdSink::create(path, 1, "bench").unwrap())),
        "fst" => Some(Box::new(FstSink::create(path, 1).unwrap())),
        _ => None,
    };
    if let Some(s) = sink {
        f.add_probe(Box::new(Tracer::new(&f, TraceOptions::default(), Box::new(Threaded::new(s))).unwrap()));
    } else if kind == "discard" {
        f.add_probe(Box::new(Tracer::new(&f, TraceOptions::default(), Box::new(Discard::default())).unwrap()));
    }
    f
}

/// Run and finish the waveforms.
fn run_traced(mut f: fabric::Fabric) -> fabric::Fabric {
    black_box(f.run());
    for p in f.take_probes() {
        p.as_any().downcast::<traces::Tracer>().unwrap().finish(f.now).unwrap();
    }
    f
}

const TRACE_KINDS: [&str; 4] = ["untraced", "discard", "vcd", "fst"];

fn tracing(c: &mut Criterion) {
    let cfg = config(MESH16_UNIFORM);
    let dir = std::env::temp_dir().join(format!("flitwave-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut g = c.benchmark_group("c_mesh16x16_tracing");
    g.sample_size(10);
    for kind in TRACE_KINDS {
        let path = dir.join(format!("t.{kind}"));
        g.bench_function(kind, |b| b.iter_batched(|| traced_fabric(&cfg, kind, &path), run_traced, BatchSize::LargeInput));
    }
    g.finish();
    if std::env::var_os("FLITWAVE_THREAD_SPLIT").is_some() {
        thread_split(&cfg, &dir);
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// With FLITWAVE_THREAD_SPLIT set (Linux): which thread sets the pace. Per kind, the best
/// of 10 interleaved runs of the wall time, the simulation thread's CPU time
/// (`/proc/thread-self/schedstat`) and the other threads' (the process's, from
/// `/proc/self/stat`, less the simulation thread's; 10 ms resolution).
fn thread_split(cfg: &Config, dir: &std::path::Path) {
    fn main_thread_ns() -> u64 {
        std::fs::read_to_string("/proc/thread-self/schedstat").map_or(0, |s| s.split_whitespace().next().unwrap().parse().unwrap())
    }
    fn process_ns() -> u64 {
        // utime and stime, fields 14 and 15, in clock ticks (taken as 100 per second).
        let s = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
        let rest = s.rsplit_once(')').map_or("", |r| r.1);
        let f: Vec<u64> = rest.split_whitespace().map(|x| x.parse().unwrap_or(0)).collect();
        f.get(11).zip(f.get(12)).map_or(0, |(u, s)| (u + s) * 10_000_000)
    }
    let mut best = [[u64::MAX; 3]; TRACE_KINDS.len()];
    for _ in 0..10 {
        for (k, kind) in TRACE_KINDS.into_iter().enumerate() {
            let f = traced_fabric(cfg, kind, &dir.join(format!("s.{kind}")));
            let (m0, p0, t0) = (main_thread_ns(), process_ns(), std::time::Instant::now());
            run_traced(f);
            let wall = t0.elapsed().as_nanos() as u64;
            let main = main_thread_ns() - m0;
            let other = (process_ns() - p0).saturating_sub(main);
            for (b, x) in best[k].iter_mut().zip([wall, main, other]) {
                *b = (*b).min(x);
            }
        }
    }
    println!("c_mesh16x16 thread split, best of 10 (ms): wall, simulation thread CPU, other threads CPU");
    for (kind, [w, m, o]) in TRACE_KINDS.into_iter().zip(best) {
        println!("  {kind:9} {:7.1} {:7.1} {:7.1}", w as f64 / 1e6, m as f64 / 1e6, o as f64 / 1e6);
    }
}

/// (b) beside BookSim 2, when `BOOKSIM` names its binary (built apart,
/// `docs/experiments/booksim/README.md`): BookSim on `docs/experiments/booksim/mesh88_b.cfg`
/// and the `flitwave` CLI on (b)'s flags, both for 100,000 cycles and both timed as whole
/// processes, so that one report gives each tool's simulated cycles per second (each
/// tool's own count of cycles, read from an untimed run first). flitwave runs on one
/// thread and on two. `cargo bench -p testbenches --bench kernel -- booksim_b`.
fn booksim(c: &mut Criterion) {
    let Some(booksim) = std::env::var_os("BOOKSIM") else {
        println!("booksim_b: skipped; set BOOKSIM to a BookSim 2 binary to measure (b) beside it");
        return;
    };
    if !std::path::Path::new(&booksim).is_file() {
        eprintln!(
            "BOOKSIM: {} is not a file; set it to a BookSim 2 binary (docs/experiments/booksim/README.md)",
            booksim.to_string_lossy()
        );
        std::process::exit(2);
    }
    let cfg = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/experiments/booksim/mesh88_b.cfg");
    let dir = std::env::temp_dir().join(format!("flitwave-bench-booksim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("b.json");
    let flags: Vec<String> = MESH_UNIFORM
        .iter()
        .flat_map(|&(k, v)| [format!("--{k}"), if k == "cycles" { "100000".into() } else { v.into() }])
        .chain(["--quiet".into(), "--json".into(), json.to_string_lossy().into_owned()])
        .collect();
    let run_booksim = || {
        // Not its exit status: BookSim 2 exits with 255 after a run that ended normally.
        std::process::Command::new(&booksim).arg(cfg).output().expect("BOOKSIM runs").stdout
    };
    let run_flitwave = |threads: &str| {
        let st = std::process::Command::new(env!("CARGO_BIN_EXE_flitwave"))
            .arg("run")
            .args(&flags)
            .args(["--threads", threads])
            .status()
            .unwrap();
        assert!(st.success(), "flitwave failed");
    };
    // The cycles each tool counts, from one untimed run each.
    let text = String::from_utf8_lossy(&run_booksim()).into_owned();
    let bs_cycles: u64 = text
        .lines()
        .filter_map(|l| l.strip_prefix("Time taken is ")?.strip_suffix(" cycles")?.parse().ok())
        .next_back()
        .unwrap_or_else(|| panic!("BookSim printed no 'Time taken is N cycles' line:\n{text}"));
    run_flitwave("1");
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let fw_cycles = report["simulated_cycles"].as_u64().unwrap();
    let mut g = c.benchmark_group("booksim_b");
    g.sample_size(10);
    g.measurement_time(std::time::Duration::from_secs(60));
    g.throughput(Throughput::Elements(bs_cycles));
    g.bench_function("booksim", |b| b.iter(|| black_box(run_booksim())));
    g.throughput(Throughput::Elements(fw_cycles));
    g.bench_function("flitwave", |b| b.iter(|| run_flitwave("1")));
    g.bench_function("flitwave_2threads", |b| b.iter(|| run_flitwave("2")));
    g.finish();
    std::fs::remove_dir_all(&dir).ok();
}

fn benches(c: &mut Criterion) {
    bench(c, "a_hypercube10_mnb_sbt", HYPERCUBE_MNB, 1);
    bench(c, "a_hypercube10_mnb_sbt_2threads", HYPERCUBE_MNB, 2);
    bench(c, "a_hypercube10_mnb_sbt_router", HYPERCUBE_MNB_ROUTER, 1);
    bench(c, "a_hypercube10_mnb_sbt_router_2threads", HYPERCUBE_MNB_ROUTER, 2);
    bench(c, "b_mesh8x8_uniform_wh", MESH_UNIFORM, 1);
    bench(c, "b_mesh8x8_uniform_wh_2threads", MESH_UNIFORM, 2);
    bench(c, "d_mesh32x32_uniform_wh", MESH32_UNIFORM, 1);
    bench(c, "d_mesh32x32_uniform_wh_2threads", MESH32_UNIFORM, 2);
    tracing(c);
    booksim(c);
}

criterion_group!(kernel, benches);
criterion_main!(kernel);
