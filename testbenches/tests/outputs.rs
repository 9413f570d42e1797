//! Outputs are transactions (docs/robustness.md): a refused, failed or interrupted run
//! leaves every file that existed before as it was, or replaced by a complete new one;
//! outputs may not overwrite inputs or each other; a write that fails names the path and
//! the OS's reason. Each test runs the real binary in a directory of its own.

use std::path::PathBuf;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_flitwave");

/// A directory of its own, removed at the end.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("flitwave-outputs-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }
    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
    /// Write `name` with `text` and return its path as text.
    fn file(&self, name: &str, text: &str) -> String {
        std::fs::write(self.path(name), text).unwrap();
        self.path(name).display().to_string()
    }
    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
    }
    /// The names in the directory, sorted (temporary files included).
    fn names(&self) -> Vec<String> {
        let mut v: Vec<String> =
            std::fs::read_dir(&self.0).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    }
    fn run(&self, args: &[&str]) -> Output {
        Command::new(BIN).current_dir(&self.0).args(args).output().unwrap()
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Exit 2 with one line holding every needle.
fn refused(o: &Output, needles: &[&str]) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    for n in needles {
        assert!(err.contains(n), "{n:?} not in {err}");
    }
}

/// The case: a save file that cannot be created refuses the run, and the JSON and
/// VCD that were there stay as they were.
#[test]
fn a_refused_run_keeps_the_files_that_were_there() {
    let d = Dir::new("refused");
    d.file("r.json", "keep\n");
    d.file("a.vcd", "keep vcd\n");
    let o = d.run(&["run", "--dims", "3", "--json", "r.json", "--vcd", "a.vcd", "--gtkw", "/proc/x.gtkw"]);
    refused(&o, &["gtkw: /proc/x.gtkw: cannot create it"]);
    assert_eq!(d.read("r.json"), "keep\n");
    assert_eq!(d.read("a.vcd"), "keep vcd\n");
    assert_eq!(d.names(), ["a.vcd", "r.json"], "no temporary file left");
    // A bad value found after the paths are checked leaves them too.
    let o = d.run(&["run", "--dims", "3", "--json", "r.json", "--stats-csv", "a.vcd", "--stats", "summary"]);
    refused(&o, &["stats-csv"]);
    assert_eq!(d.read("r.json"), "keep\n");
    assert_eq!(d.read("a.vcd"), "keep vcd\n");
}

#[test]
fn an_output_may_not_be_an_input() {
    let d = Dir::new("inputs");
    let s = d.file("s.toml", "dims = 3\n");
    refused(&d.run(&["run", &s, "--json", &s]), &["json: ", "the scenario file this command reads"]);
    // The same file by another name.
    refused(&d.run(&["run", "s.toml", "--stats-csv", "./s.toml"]), &["stats-csv: ./s.toml", "the scenario file"]);
    let r = d.file("r.toml", "preset = \"realistic\"\n");
    refused(&d.run(&["run", "--dims", "3", "--router", &r, "--vcd", &r]), &["vcd: ", "the router file this command reads"]);
    assert_eq!(d.read("s.toml"), "dims = 3\n");
    assert_eq!(d.read("r.toml"), "preset = \"realistic\"\n");
}

/// The save file's translate filters (`<stem>.flags.txt`, `.state.txt`, `.route.txt`, `.owner.txt`) are
/// outputs like the others.
#[test]
fn the_save_files_filters_are_checked_like_any_output() {
    let d = Dir::new("side");
    d.file("x.flags.txt", "mine\n");
    let o = d.run(&["run", "--dims", "3", "--json", "x.flags.txt", "--vcd", "a.vcd", "--gtkw", "x.gtkw"]);
    refused(&o, &["gtkw: x.flags.txt: the same file as --json x.flags.txt"]);
    refused(&d.run(&["run", "--dims", "3", "--vcd", "x.route.txt", "--gtkw", "x.gtkw"]), &["x.route.txt: the same file as --vcd"]);
    refused(&d.run(&["run", "--dims", "3", "--fst", "x.owner.txt", "--gtkw", "x.gtkw"]), &["x.owner.txt: the same file as --fst"]);
    assert_eq!(d.names(), ["x.flags.txt"]);
    assert_eq!(d.read("x.flags.txt"), "mine\n");
    // Written, they are the five files of the save file.
    let o = d.run(&["run", "--dims", "3", "--quiet", "--vcd", "a.vcd", "--gtkw", "x.gtkw"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(d.names(), ["a.vcd", "x.flags.txt", "x.gtkw", "x.owner.txt", "x.route.txt", "x.state.txt"]);
    assert!(d.read("x.gtkw").contains(&d.path("x.flags.txt").display().to_string()));
}

/// `/dev/full` is refused before the run, with the OS's reason; other outputs stay.
#[cfg(target_os = "linux")]
#[test]
fn a_full_device_is_refused_with_the_reason() {
    let d = Dir::new("full");
    d.file("a.vcd", "keep\n");
    let o = d.run(&["run", "--dims", "3", "--vcd", "a.vcd", "--json", "/dev/full"]);
    refused(&o, &["json: /dev/full: cannot write it: No space left on device"]);
    assert_eq!(d.read("a.vcd"), "keep\n");
    assert_eq!(d.names(), ["a.vcd"]);
}

/// A waveform that cannot be written after the run (the file-size limit stands in for a
/// full disk): exit 1, the path and the reason named, the file that was there kept, the
/// other outputs written.
#[test]
fn a_write_that_fails_after_the_run_keeps_the_old_file() {
    let d = Dir::new("fsize");
    d.file("a.vcd", "keep\n");
    d.file("r.json", "old\n");
    let mut c = Command::new(BIN);
    c.current_dir(&d.0).args(["run", "--dims", "3", "--traffic", "uniform", "--rate", "0.1", "--cycles", "20000"]);
    c.args(["--quiet", "--vcd", "a.vcd", "--json", "r.json"]);
    // 256 kB: the JSON (about 17 kB) and the waveform's declarations fit, its 20,000 cycles
    // (about 11 MB) do not.
    limit_file_size(&mut c, 256 << 10);
    let o = c.output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("vcd: a.vcd: cannot write it: File too large") && err.contains("left as it was before the run"), "{err}");
    assert!(err.trim_end().ends_with("written: r.json"), "{err}");
    assert_eq!(d.read("a.vcd"), "keep\n");
    let json: serde_json::Value = serde_json::from_str(&d.read("r.json")).unwrap();
    assert_eq!(json["ending"], "quiescent");
    assert_eq!(d.names(), ["a.vcd", "r.json"]);
}

fn limit_file_size(c: &mut Command, bytes: u64) {
    use std::os::unix::process::CommandExt;
    // SAFETY: setrlimit is async-signal-safe, and the closure touches nothing else.
    unsafe {
        c.pre_exec(move || {
            let l = libc::rlimit { rlim_cur: bytes, rlim_max: bytes };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &l) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// An 8x8 mesh under traffic, interrupted after about 3 s: exit 130, a complete JSON marked
/// interrupted at the cycle reached, a VCD that reads back to that cycle, the statistics.
#[test]
fn an_interrupted_run_writes_everything_marked_interrupted() {
    let d = Dir::new("interrupt");
    d.file("r.json", "old\n");
    let cycles = 2_000_000u64;
    let child = Command::new(BIN)
        .current_dir(&d.0)
        .args(["run", "--topology", "mesh", "--dims", "8x8", "--traffic", "uniform", "--rate", "0.1"])
        .args(["--cycles", &cycles.to_string(), "--quiet", "--json", "r.json", "--vcd", "a.vcd", "--stats-csv", "s.csv"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(3));
    assert_eq!(d.read("r.json"), "old\n", "not replaced while it runs");
    signal(&child, libc::SIGINT);
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{err}");
    let json: serde_json::Value = serde_json::from_str(&d.read("r.json")).unwrap();
    assert_eq!((&json["ending"], &json["interrupted"]), (&"interrupted".into(), &true.into()));
    let reached = json["simulated_cycles"].as_u64().unwrap();
    assert!(reached > 0 && reached < cycles, "{reached}");
    assert!(json["deliveries"].as_u64().unwrap() > 0);
    // Offered per cycle run: 0.1 packets of 4 flits per node and cycle (Bernoulli, over
    // thousands of cycles on 64 nodes: within a few per cent).
    let offered = json["offered_flits_per_node_cycle"].as_f64().unwrap();
    assert!((offered - 0.4).abs() < 0.02, "{offered}");
    // The waveform reads back and ends at the clock edges of cycle `reached`, which show the
    // state the last cycle run left (as a run that ends does).
    let w = wellen::simple::read(d.path("a.vcd")).unwrap_or_else(|e| panic!("{e:?}"));
    let last = *w.time_table().last().unwrap();
    let half = w.time_table()[1] - w.time_table()[0];
    assert_eq!(last, (2 * reached + 1) * half, "times {:?}", &w.time_table()[..4]);
    let csv = d.read("s.csv");
    assert!(csv.starts_with("kind,node,port") && csv.lines().count() > 64, "{}", csv.len());
    assert_eq!(d.names(), ["a.vcd", "r.json", "s.csv"]);
}

/// A second signal ends the process at once: whatever it had not completed is not there,
/// and the file that was there is either as it was or a complete new one.
#[test]
fn a_second_signal_ends_at_once_and_leaves_no_partial_file() {
    let d = Dir::new("twice");
    d.file("r.json", "old\n");
    let child = Command::new(BIN)
        .current_dir(&d.0)
        .args(["run", "--topology", "mesh", "--dims", "8x8", "--traffic", "uniform", "--rate", "0.1", "--cycles", "2000000"])
        .args(["--quiet", "--json", "r.json", "--vcd", "a.vcd"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(2));
    signal(&child, libc::SIGINT);
    signal(&child, libc::SIGTERM);
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", String::from_utf8_lossy(&o.stderr));
    let json = d.read("r.json");
    if json != "old\n" {
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["interrupted"], true);
    }
    assert!(d.names().iter().all(|n| !n.ends_with(".tmp")), "{:?}", d.names());
}

fn signal(child: &std::process::Child, sig: i32) {
    // SAFETY: kill() on our own child's pid.
    assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
}

/// Waveform times count in 64 bits of the timescale unit: a run that could pass that is
/// refused up front, naming a clock that fits (the case wrote times that went back).
#[test]
fn waveform_time_that_would_overflow_is_refused() {
    let d = Dir::new("time");
    let args = ["run", "--dims", "3", "--startup-cycles", "1099511627776", "--max-cycles", "281474976710656", "--clock-ns", "999999"];
    for wave in ["--vcd", "--fst"] {
        let o = d.run(&[&args[..], &[wave, "w"]].concat());
        refused(&o, &["clock-ns: 999999", "overflow", "--clock-ns below it with fewer digits that fits is 999000"]);
    }
    // That clock: half a period is 999,000,000 ps / 2 = 4995 × 10^8 fs, a timescale of
    // 100 ps (10^8 fs, the largest power of ten it is a whole number of) and 4995 units;
    // the falling edge after the last cycle fits in 64 bits.
    assert_eq!(999_000_000u128 * 1000 / 2, 4995 * 100_000_000);
    assert!((2 * 281_474_976_710_656u128 + 1) * 4995 <= u64::MAX as u128);
    // The clock given does not: 999,999,000 ps / 2 = 4,999,995 × 10^5 fs.
    assert!((2 * 281_474_976_710_656u128 + 1) * 4_999_995 > u64::MAX as u128);
    assert!(d.names().is_empty());
}

/// A sweep interrupted lets the runs under way finish, starts no more, says so and exits
/// 130; every row written is whole, and the same command then runs the rest.
#[test]
fn an_interrupted_sweep_finishes_its_rows_and_resumes() {
    let d = Dir::new("sweep");
    // 20 rows of 100,000 cycles, interrupted once the first is written.
    d.file("spec.toml", "topology = \"mesh\"\ndims = \"4x4\"\ntraffic = \"uniform\"\ncycles = 100000\nseeds = 2\n[grid]\nrate = [0.02, 0.04]\nbuffer_flits = [2, 4, 8, 16, 32]\n");
    let args = ["sweep", "spec.toml", "--jobs", "2", "--out", "out", "--quiet"];
    let mut child = Command::new(BIN).current_dir(&d.0).args(args).stderr(std::process::Stdio::piped()).spawn().unwrap();
    while std::fs::read_to_string(d.path("out/results.jsonl")).map_or(true, |t| t.is_empty()) {
        assert!(child.try_wait().unwrap().is_none(), "the sweep ended before its first row");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    signal(&child, libc::SIGINT);
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(err.contains("flitwave sweep: interrupted: ") && err.contains("of 20 rows done"), "{err}");
    let ids = |d: &Dir| -> Vec<u64> {
        d.read("out/results.jsonl").lines().map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["id"].as_u64().unwrap()).collect()
    };
    let first = ids(&d);
    assert!(!first.is_empty() && first.len() < 20, "{} rows", first.len());
    assert_eq!(first, (0..first.len() as u64).collect::<Vec<_>>(), "whole rows, in order");
    let o = d.run(&args);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(ids(&d), (0..20).collect::<Vec<_>>());
}

/// Standard output on `/dev/full`: `--json -` is refused before the run; the report
/// printed after it fails in one line, exit 1, the files written.
#[cfg(target_os = "linux")]
#[test]
fn a_full_standard_output_is_reported_not_a_crash() {
    let d = Dir::new("stdout");
    let full = || std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let run = |args: &[&str]| Command::new(BIN).current_dir(&d.0).args(args).stdout(full()).output().unwrap();
    refused(
        &run(&["run", "--dims", "3", "--quiet", "--json", "-"]),
        &["json: - (standard output): cannot write it: No space left on device"],
    );
    for args in [&["list"][..], &["run", "--dims", "3", "--json", "r.json"][..]] {
        let o = run(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(err, "flitwave: error: standard output: cannot write it: No space left on device (os error 28)\n", "{args:?}");
    }
    let json: serde_json::Value = serde_json::from_str(&d.read("r.json")).unwrap();
    assert_eq!(json["completion_cycles"], 3);
}
