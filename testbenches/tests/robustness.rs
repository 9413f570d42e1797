//! What the CLI does with hostile input and a hostile environment: arguments that are not
//! UTF-8, output into a pipe nobody reads, input files that never end. Each is refused in
//! one line with exit 2, or ends the way a Unix tool ends, never by a panic.

use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_flitwave");

fn refused(args: &[&std::ffi::OsStr], needles: &[&str]) {
    let o = Command::new(BIN).args(args).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: one line, got {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: {n:?} not in {err}");
    }
}

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
