//! What the CLI does with hostile input and a hostile environment: arguments that are not
//! UTF-8, output into a pipe nobody reads, input files that never end. Each is refused in
//! one line with exit 2, or ends the way a Unix tool ends, never by a panic.

use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

mod common;
use common::TORNADO_RING;
use common::refusal::{BIN, refused};

fn os(s: &str) -> &std::ffi::OsStr {
    std::ffi::OsStr::new(s)
}

#[test]
fn an_argument_that_is_not_utf8_is_a_bad_value() {
    let bad = std::ffi::OsStr::from_bytes(b"\xff");
    refused(&[os("run"), os("--dims"), bad], &["--dims", "not UTF-8"]);
    let inline = std::ffi::OsStr::from_bytes(b"--dims=3\xff");
    refused(&[os("run"), inline], &["--dims: \"3\u{fffd}\"", "not UTF-8"]);
}

#[test]
fn output_into_a_closed_pipe_ends_by_sigpipe_without_a_message() {
    for args in [&["list"][..], &["run", "--dims", "12", "--quiet", "--json", "-"][..]] {
        // A pipe whose reader is gone before the process starts: its first write fails.
        let mut fds = [0; 2];
        // SAFETY: pipe() fills two new descriptors, each then owned by exactly one OwnedFd.
        let (read, write) = unsafe {
            assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
            (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1]))
        };
        drop(read);
        let o = Command::new(BIN).args(args).stdout(Stdio::from(write)).stderr(Stdio::piped()).output().unwrap();
        assert_eq!(o.status.signal(), Some(libc::SIGPIPE), "{args:?}: {:?}", o.status);
        assert!(o.stderr.is_empty(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    }
}

#[test]
fn an_endless_input_file_is_refused_at_16_mib() {
    refused(&[os("run"), os("/dev/zero")], &["scenario: /dev/zero", "larger than 16 MiB"]);
    refused(&[os("run"), os("--router"), os("/dev/zero")], &["router: /dev/zero", "larger than 16 MiB"]);
    refused(&[os("sweep"), os("/dev/zero"), os("--out"), os("/nonexistent-dir/x")], &["spec: /dev/zero", "larger than 16 MiB"]);
}

fn run_json(args: &[&str]) -> (i32, serde_json::Value) {
    let o = Command::new(BIN).args(args).args(["--quiet", "--json", "-"]).output().unwrap();
    let v = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&o.stderr)));
    (o.status.code().unwrap(), v)
}

/// A deadlock is certain when flits are buffered, none has moved for a while and nothing is
/// due in any delay line or timer: the run ends there (exit 3), whatever the watchdog says,
/// on one thread and on two alike. The tornado deadlock of docs/examples.md stops moving at cycle 5; its
/// sources create packets up to cycle 399, so that is when nothing is due any more.
#[test]
fn a_certain_deadlock_ends_the_run_at_once_whatever_the_watchdog() {
    let args = [&["run"][..], TORNADO_RING, &["--vcs", "1", "--deadlock-avoidance", "off", "--watchdog", "1099511627776"]].concat();
    let (code, one) = run_json(&args);
    assert_eq!(code, 3, "{one}");
    let d = &one["deadlock"];
    assert_eq!(d["last_move"], 5, "{d}");
    assert_eq!(d["cycle"], 399, "{d}");
    assert_eq!(d["wait_for_cycle"].as_array().unwrap().len(), 16, "{d}");
    let (code, two) = run_json(&[&args[..], &["--threads", "2"]].concat());
    assert_eq!(code, 3);
    assert_eq!(two["deadlock"], one["deadlock"]);
}

/// Cycles in which flits only wait out a delay cost nothing: a route computation of 2^32 − 1
/// cycles on a 3-cube (one-flit packets, the binomial tree forwarded by the nodes: three
/// packets one after the other) finishes, on one thread and on two, at the cycle the
/// preset's zero-load latency gives.
/// A one-hop packet on `realistic` pays route computation at both routers it visits, and
/// 5 cycles besides (7 at `rc_delay = 1`: 4H + 3 + (L − 1) with H = L = 1).
#[test]
fn waiting_out_a_long_delay_costs_nothing() {
    let dir = std::env::temp_dir().join(format!("flitwave-slow-rc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let router = dir.join("rc.toml");
    std::fs::write(&router, "preset = \"realistic\"\nrc_delay = 4294967295\n").unwrap();
    let args = ["run", "--dims", "3", "--router", router.to_str().unwrap()];
    let (code, v) = run_json(&args);
    // On two threads the parts agree on the same skips.
    let (code2, v2) = run_json(&[&args[..], &["--threads", "2"]].concat());
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(code, 0, "{v}");
    let hop = 2 * 4_294_967_295u64 + 5;
    assert_eq!(v["completion_cycles"], 3 * hop, "{v}");
    assert_eq!((code2, &v2["completion_cycles"], &v2["deliveries"]), (0, &v["completion_cycles"], &v["deliveries"]), "{v2}");
}
