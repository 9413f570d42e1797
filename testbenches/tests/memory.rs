//! Memory: runs too large for the limits the process lives under (`prlimit --as`, the
//! address-space limit `ulimit -v` sets) are refused up front in one line with exit 2 —
//! the estimate, the limit, the largest size that fits — and an allocation the estimate did
//! not foresee ends the run with exit 2 too, never with an abort. The estimate is compared
//! with the peak RSS of real runs.

use std::os::unix::process::ExitStatusExt;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_flitwave");

/// `flitwave` under `prlimit --as=BYTES`: exit code (None if killed by a signal), stderr.
fn limited(bytes: u64, args: &[&str]) -> (Option<i32>, Option<i32>, String) {
    let o = Command::new("prlimit").arg(format!("--as={bytes}")).arg(BIN).args(args).output().expect("prlimit (util-linux) runs");
    (o.status.code(), o.status.signal(), String::from_utf8_lossy(&o.stderr).into_owned())
}

fn refused_in_one_line(bytes: u64, args: &[&str], needles: &[&str]) {
    let (code, signal, err) = limited(bytes, args);
    assert_eq!((code, signal), (Some(2), None), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: one line, got {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: {n:?} not in {err}");
    }
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

/// Peak RSS of a run of the real binary as the kernel counts it for the process's own
/// memory (VmHWM, which the report carries; the rusage of a child spawned from this test
/// process would include this process's peak, which exec carries over), and its estimate.
fn peak_and_estimate(args: &[&str]) -> (f64, f64) {
    let o = Command::new(BIN).args(args).args(["--quiet", "--stats", "summary", "--json", "-"]).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    (j["memory_peak_bytes"].as_f64().unwrap(), j["memory_estimate_bytes"].as_f64().unwrap())
}

/// The estimate is within 25 % of the measured peak on sizes that fit (docs/performance.md
/// has the table over more sizes).
#[test]
fn the_estimate_is_within_25_percent_of_peak_rss() {
    for args in [
        &["run", "--dims", "14"][..],
        &["run", "--topology", "mesh", "--dims", "128x128"],
        &["run", "--dims", "12", "--algorithm", "kbcast", "--active-count", "4096"],
    ] {
        let (rss, est) = peak_and_estimate(args);
        assert!(rss > 1e6, "{args:?}: measured {rss}");
        let ratio = rss / est;
        assert!((0.75..=1.25).contains(&ratio), "{args:?}: peak RSS {rss:.0} B, estimate {est:.0} B, ratio {ratio:.2}");
    }
}
