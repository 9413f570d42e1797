//! Shared by the CLI tests: the binary, and a refusal in one line with exit 2.

use std::ffi::OsStr;
use std::process::{Command, Output};

pub const BIN: &str = env!("CARGO_BIN_EXE_flitwave");

/// `command` (the binary, perhaps under a wrapper) with `args` is refused: exit 2, one line
/// on standard error, containing each of `needles`, no signal.
#[allow(dead_code, reason = "not every test file refuses under a wrapper")]
pub fn refused_by<S: AsRef<OsStr> + std::fmt::Debug>(mut command: Command, args: &[S], needles: &[&str]) {
    let o = command.args(args).output().unwrap();
    assert_refused(args, &o, needles)
}

/// `o`, the output of a command with `args`, is a refusal: exit 2, one line on standard
/// error, containing each of `needles`, no signal.
pub fn assert_refused<S: std::fmt::Debug>(args: &[S], o: &Output, needles: &[&str]) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {:?} {err}", o.status);
    assert_eq!(err.lines().count(), 1, "{args:?}: one line, got {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: {n:?} not in {err}");
    }
}

/// `flitwave ARGS` is refused ([`refused_by`]).
#[allow(dead_code, reason = "not every test file refuses without a wrapper")]
pub fn refused<S: AsRef<OsStr> + std::fmt::Debug>(args: &[S], needles: &[&str]) {
    refused_by(Command::new(BIN), args, needles)
}
