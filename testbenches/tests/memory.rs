//! Memory: runs too large for the limits the process lives under (`prlimit --as`, the
//! address-space limit `ulimit -v` sets) are refused up front in one line with exit 2 —
//! the estimate, the limit, the largest size that fits — and an allocation the estimate did
//! not foresee ends the run with exit 2 too, never with an abort. The estimate is compared
//! with the peak RSS of real runs.

use std::os::unix::process::ExitStatusExt;
use std::process::Command;

mod refusal;
use refusal::{BIN, refused_by};

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
    let mut raw = testbenches::config::Raw::default();
    for pair in args[1..].chunks(2) {
        raw.values.insert(pair[0].trim_start_matches("--").to_string(), pair[1].to_string());
    }
    let cfg = testbenches::config::Config::resolve(&raw).unwrap();
    (kb * 1024.0, cfg.memory_estimate as f64)
}

/// The estimate is within 25 % of the measured peak on sizes that fit (docs/performance.md
/// has the table over more sizes).
#[test]
fn the_estimate_is_within_25_percent_of_peak_rss() {
    for args in [
        &["run", "--dims", "14"][..],
        &["run", "--topology", "mesh", "--dims", "128x128"],
        &["run", "--dims", "12", "--algorithm", "kbcast", "--active-count", "4096"],
        &["run", "--dims", "10", "--algorithm", "total-exchange"],
        &["run", "--dims", "10", "--algorithm", "multi-accumulate"],
        &["run", "--dims", "11", "--algorithm", "pmnb-2", "--active-count", "1024"],
    ] {
        let (rss, est) = peak_and_estimate(args);
        assert!(rss > 1e6, "{args:?}: measured {rss}");
        let ratio = rss / est;
        assert!((0.75..=1.25).contains(&ratio), "{args:?}: peak RSS {rss:.0} B, estimate {est:.0} B, ratio {ratio:.2}");
    }
}

/// The table of docs/performance.md ("Memory estimate"): peak RSS against the estimate
/// over more sizes and workloads (`cargo test -p testbenches --test memory -- --ignored
/// --nocapture estimate_table`).
#[test]
#[ignore]
fn estimate_table() {
    let rows: &[&[&str]] = &[
        &["run", "--dims", "12"],
        &["run", "--dims", "16"],
        &["run", "--topology", "mesh", "--dims", "256x256"],
        &["run", "--dims", "12", "--algorithm", "kbcast", "--active-count", "4096"],
        &["run", "--dims", "11", "--algorithm", "mnb"],
        &["run", "--dims", "12", "--algorithm", "mnb"],
        &["run", "--dims", "11", "--algorithm", "mnb-sbt"],
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
    ];
    println!("| run (ARGS) | peak RSS | estimate | peak / estimate |\n|---|---|---|---|");
    for args in rows {
        let (rss, est) = peak_and_estimate(args);
        let mib = |b: f64| b / (1u64 << 20) as f64;
        println!("| `{}` | {:.1} MiB | {:.1} MiB | {:.2} |", args[1..].join(" "), mib(rss), mib(est), rss / est);
    }
}
