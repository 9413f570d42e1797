//! Memory: runs too large for the limits the process lives under (`prlimit --as`, the
//! address-space limit `ulimit -v` sets) are refused up front in one line with exit 2 —
//! the estimate, the limit, the largest size that fits — and an allocation the estimate did
//! not foresee ends the run with exit 2 too, never with an abort. The estimate is compared
//! with the peak RSS of real runs.

use std::os::unix::process::ExitStatusExt;
use std::process::Command;

mod common;
use common::Temp;
use common::refusal::{BIN, refused_by};

/// `flitwave` under `prlimit --as=BYTES`: exit code (None if killed by a signal), stderr.
fn limited(bytes: u64, args: &[&str]) -> (Option<i32>, Option<i32>, String) {
    let o = Command::new("prlimit").arg(format!("--as={bytes}")).arg(BIN).args(args).output().expect("prlimit (util-linux) runs");
    (o.status.code(), o.status.signal(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// Refused under `prlimit --as=BYTES`.
fn refused_in_one_line(bytes: u64, args: &[&str], needles: &[&str]) {
    let mut prlimit = Command::new("prlimit");
    prlimit.arg(format!("--as={bytes}")).arg(BIN);
    refused_by(prlimit, args, needles);
}

#[test]
fn kbcast_with_a_bitset_per_broadcast_is_refused_under_an_address_space_limit() {
    // 262,144 broadcasts each with a 32 KiB delivered-to bitset: 8 GiB of bitsets alone.
    refused_in_one_line(
        4 << 30,
        &["run", "--dims", "18", "--algorithm", "kbcast", "--active-count", "262144"],
        &[
            "active-count: 262144",
            "GiB of memory",
            "the address-space limit (ulimit -v) leaves",
            "the largest that fits is --active-count ",
        ],
    );
    // d = 20 with every node broadcasting: about 0.5 TiB, refused anywhere.
    let o = Command::new(BIN).args(["run", "--dims", "20", "--algorithm", "kbcast", "--active-count", "1048576"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn a_fabric_too_large_for_the_limit_names_the_largest_that_fits() {
    refused_in_one_line(300 << 20, &["run", "--dims", "16"], &["dims: 16", "ulimit -v", "the largest that fits is --dims 15"]);
    refused_in_one_line(
        300 << 20,
        &["run", "--topology", "mesh", "--dims", "512x512"],
        &["dims: 512x512", "the largest that fits is --dims "],
    );
    // What it names does fit under the same limit.
    let (_, _, err) = limited(300 << 20, &["run", "--topology", "mesh", "--dims", "512x512"]);
    let fits = err.trim().rsplit(' ').next().unwrap().to_string();
    let (code, signal, err) = limited(300 << 20, &["run", "--topology", "mesh", "--dims", &fits, "--quiet"]);
    assert_eq!((code, signal), (Some(0), None), "{fits}: {err}");
}

/// A waveform's signals count too: tracing every node of a 12-cube (1.6 million signals,
/// about 400 MiB with an FST) does not fit in 300 MiB; the refusal says what the waveform
/// takes, and the size it names fits.
#[test]
fn a_waveform_too_large_for_the_limit_is_refused_up_front() {
    let fst = Temp::path("limit.fst");
    refused_in_one_line(
        300 << 20,
        &["run", "--dims", "12", "--fst", fst.s()],
        &["dims: 12", "its waveform's 1585152 signals take ", "--trace-nodes traces fewer", "the largest that fits is --dims 11"],
    );
    let (code, signal, err) = limited(300 << 20, &["run", "--dims", "11", "--fst", fst.s(), "--quiet"]);
    assert_eq!((code, signal), (Some(0), None), "{err}");
    // Tracing a few nodes of the 12-cube fits.
    let (code, signal, err) = limited(300 << 20, &["run", "--dims", "12", "--fst", fst.s(), "--trace-nodes", "0-15", "--quiet"]);
    assert_eq!((code, signal), (Some(0), None), "{err}");
}

/// Saturated traffic piles packets up at the sources beyond what the estimate counts: the
/// allocation that fails ends the run in one line with exit 2, not SIGABRT.
#[test]
fn an_allocation_failure_is_exit_2_not_an_abort() {
    let args = ["run", "--topology", "mesh", "--dims", "8x8", "--traffic", "uniform", "--rate", "0.9", "--cycles", "100000"];
    let (code, signal, err) = limited(200 << 20, &[&args[..], &["--quiet", "--stats", "summary"]].concat());
    assert_eq!((code, signal), (Some(2), None), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("flitwave: error: memory: out of memory allocating "), "{err}");
}

/// Peak RSS of a run of the real binary, as GNU time measures it (its own child: the
/// rusage of a child spawned from this test process would carry this process's peak over
/// exec), and the estimate the run's configuration is checked with.
fn peak_and_estimate(args: &[&str]) -> (f64, f64) {
    let o = Command::new("/usr/bin/time")
        .args(["-f", "%M", BIN])
        .args(args)
        .args(["--quiet", "--stats", "summary"])
        .stdout(std::process::Stdio::null())
        .output()
        .expect("GNU time (Debian package time; .ci/run installs it)");
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    let kb: f64 = String::from_utf8_lossy(&o.stderr).lines().last().unwrap().trim().parse().unwrap();
    (kb * 1024.0, config(&args[1..]).memory_estimate as f64)
}

/// The configuration `flitwave run` resolves from flags given as `--name value` pairs.
fn config(flags: &[&str]) -> testbenches::config::Config {
    let raw = testbenches::config::Raw::from_given(flags.chunks(2).map(|pair| (pair[0].trim_start_matches("--"), pair[1]))).unwrap();
    testbenches::config::Config::resolve(&raw).unwrap()
}

/// The estimate is within 25 % of the measured peak on sizes that fit, waveforms included
/// (docs/performance.md has the table over more sizes).
#[test]
fn the_estimate_is_within_25_percent_of_peak_rss() {
    let (vcd, fst) = (Temp::path("peak.vcd"), Temp::path("peak.fst"));
    for args in [
        &["run", "--dims", "14"][..],
        &["run", "--topology", "mesh", "--dims", "128x128"],
        &["run", "--dims", "12", "--algorithm", "kbcast", "--active-count", "4096"],
        &["run", "--dims", "10", "--algorithm", "total-exchange"],
        &["run", "--dims", "10", "--algorithm", "multi-accumulate"],
        &["run", "--dims", "11", "--algorithm", "pmnb-2", "--active-count", "1024"],
        &["run", "--dims", "11", "--algorithm", "mnb"],
        &["run", "--dims", "11", "--algorithm", "mnb-ring"],
        &["run", "--dims", "10", "--vcd", vcd.s()],
        &["run", "--topology", "mesh", "--dims", "32x32", "--fst", fst.s()],
    ] {
        let (rss, est) = peak_and_estimate(args);
        assert!(rss > 1e6, "{args:?}: measured {rss}");
        let ratio = rss / est;
        assert!((0.75..=1.25).contains(&ratio), "{args:?}: peak RSS {rss:.0} B, estimate {est:.0} B, ratio {ratio:.2}");
    }
}

/// The table of docs/performance.md ("Memory estimate"): peak RSS against the estimate
/// over more sizes and workloads (`cargo test -p testbenches --test memory -- --ignored
/// --nocapture estimate_table`; `FLITWAVE_MEMORY_ROWS` measures other runs instead).
#[test]
#[ignore]
fn estimate_table() {
    let (vcd, fst) = (Temp::path("table.vcd"), Temp::path("table.fst"));
    let rows: &[&[&str]] = &[
        &["run", "--dims", "12"],
        &["run", "--dims", "16"],
        &["run", "--topology", "mesh", "--dims", "256x256"],
        &["run", "--dims", "12", "--algorithm", "kbcast", "--active-count", "4096"],
        &["run", "--dims", "11", "--algorithm", "mnb"],
        &["run", "--dims", "12", "--algorithm", "mnb"],
        &["run", "--dims", "11", "--algorithm", "mnb-sbt"],
        &["run", "--dims", "12", "--algorithm", "mnb-sbt"],
        &["run", "--dims", "12", "--algorithm", "mnb-ring"],
        &["run", "--dims", "12", "--vcd", vcd.s()],
        &["run", "--dims", "12", "--fst", fst.s()],
        &["run", "--topology", "mesh", "--dims", "16x16", "--vcd", vcd.s()],
        &["run", "--dims", "10", "--algorithm", "total-exchange"],
        &["run", "--dims", "11", "--algorithm", "total-exchange"],
        &["run", "--dims", "9", "--algorithm", "total-exchange"],
        &["run", "--dims", "10", "--algorithm", "multi-accumulate"],
        &["run", "--dims", "11", "--algorithm", "multi-accumulate"],
        &["run", "--dims", "11", "--algorithm", "pmnb-1", "--active-count", "1024"],
        &["run", "--dims", "12", "--algorithm", "pmnb-1", "--active-count", "256"],
        &["run", "--dims", "11", "--algorithm", "pmnb-2", "--active-count", "1024"],
        &["run", "--dims", "12", "--algorithm", "pmnb-2", "--active-count", "256"],
        &["run", "--dims", "11", "--algorithm", "pmnb-3", "--active-count", "1024"],
        &["run", "--dims", "12", "--algorithm", "pmnb-3", "--active-count", "256"],
        &["run", "--dims", "12", "--algorithm", "pmnb-1", "--active-count", "1024"],
        &["run", "--dims", "12", "--algorithm", "pmnb-2", "--active-count", "1024"],
        &["run", "--dims", "12", "--algorithm", "pmnb-3", "--active-count", "1024"],
        &["run", "--dims", "8", "--algorithm", "dynamic", "--load", "0.5", "--cycles", "20000"],
        &["run", "--dims", "14", "--threads", "2"],
        &["run", "--topology", "mesh", "--dims", "64x64", "--traffic", "uniform", "--rate", "0.02", "--cycles", "2000"],
        &["run", "--dims", "10", "--algorithm", "dynamic", "--load", "0.8", "--cycles", "5000"],
        &["run", "--dims", "12", "--algorithm", "mnb-sbt", "--forwarding", "router"],
        &["run", "--dims", "14", "--algorithm", "scatter"],
        &["run", "--dims", "14", "--algorithm", "dta"],
        &["run", "--topology", "linear", "--dims", "100000"],
        &["run", "--topology", "torus", "--dims", "128x128"],
        &["run", "--topology", "mesh", "--dims", "128x128", "--algorithm", "rd"],
        &["run", "--topology", "mesh", "--dims", "64x64", "--algorithm", "rh"],
        &["run", "--topology", "mesh", "--dims", "64x64", "--algorithm", "bst"],
        &["run", "--topology", "linear", "--dims", "4096", "--algorithm", "st"],
        &["run", "--topology", "torus", "--dims", "32x32", "--traffic", "uniform", "--rate", "0.01", "--cycles", "5000"],
        &[
            "run",
            "--topology",
            "mesh",
            "--dims",
            "32x32",
            "--traffic",
            "uniform",
            "--rate",
            "0.005",
            "--broadcast-rate",
            "0.0002",
            "--cycles",
            "3000",
        ],
    ];
    // Other rows from the environment: FLITWAVE_MEMORY_ROWS="run --dims 8; run --dims 9".
    let asked: Vec<Vec<String>> = std::env::var("FLITWAVE_MEMORY_ROWS")
        .map(|v| v.split(';').map(|r| r.split_whitespace().map(String::from).collect()).collect())
        .unwrap_or_default();
    let asked: Vec<Vec<&str>> = asked.iter().map(|r| r.iter().map(String::as_str).collect()).collect();
    let asked: Vec<&[&str]> = asked.iter().map(Vec::as_slice).collect();
    let rows = if asked.is_empty() { rows } else { &asked[..] };
    println!("| run (ARGS) | peak RSS | estimate | peak / estimate |\n|---|---|---|---|");
    for args in rows {
        let (rss, est) = peak_and_estimate(args);
        let mib = |b: f64| b / (1u64 << 20) as f64;
        println!("| `{}` | {:.1} MiB | {:.1} MiB | {:.2} |", args[1..].join(" "), mib(rss), mib(est), rss / est);
    }
}

/// The waveform's part of the estimate counts the signals [`traces::Tracer::new`] declares:
/// exactly where every port has a link (hypercubes, tori); on a mesh, less those of the
/// ports without one: at each end of each line of nodes along a dimension, an output link
/// (6 signals and 2 per VC, with one lane) and an input port (2, and 6 per VC).
#[test]
fn the_estimate_counts_the_signals_a_waveform_declares() {
    let path = Temp::path("count.vcd");
    for (args, missing_ports) in [
        (&["--dims", "5"][..], 0),
        (&["--dims", "4", "--vcs", "3", "--ports", "one"], 0),
        (&["--dims", "4", "--nu", "1", "--vcs", "2", "--fault", "link 0.1 at 5"], 0),
        (&["--topology", "torus", "--dims", "4x3", "--vcs", "2"], 0),
        // Lines of 4 along x (3 of them) and of 3 along y (4 of them), two ends each.
        (&["--topology", "mesh", "--dims", "4x3"], 2 * (3 + 4)),
    ] {
        let o = Command::new(BIN).arg("run").args(args).args(["--quiet", "--vcd", path.s()]).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        let vcd = std::fs::read_to_string(&path.0).unwrap();
        let declared =
            vcd.lines().take_while(|l| !l.contains("$enddefinitions")).filter(|l| l.trim_start().starts_with("$var")).count() as u64;
        let spec = config(args).spec();
        let counted = 1 + spec.nodes() as u64 * traces::Tracer::signals_per_node(&spec.router_params(), args.contains(&"--fault"));
        let vcs = spec.vcs as u64;
        assert_eq!(declared, counted - missing_ports * (6 + 2 * vcs + 2 + 6 * vcs), "{args:?}");
    }
}
