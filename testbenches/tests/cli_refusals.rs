//! End-to-end tests of the `flitwave` binary given bad input: flags, values, scenario and
//! router files, sizes beyond memory, combinations that mean nothing. Each is refused in one
//! line (the field, the value, what is allowed) with exit 2.

mod common;

use common::{Temp, bad, describe, flitwave, run_json};
use serde_json::Value;

#[test]
fn bad_topology_and_algorithm() {
    bad(&["run", "--topology", "ring"], &["topology", "ring", "hypercube", "mesh", "torus"]);
    bad(&["run", "--algorithm", "foo"], &["algorithm", "foo", "snb", "mnb-sbt"]);
    bad(&["run", "--topology", "mesh", "--algorithm", "mnb"], &["algorithm", "mnb", "mesh", "hypercube"]);
}

#[test]
fn bad_root() {
    bad(&["run", "--dims", "3", "--root", "8"], &["root: 8", "0 to 7"]);
    bad(&["run", "--topology", "mesh", "--dims", "4x4", "--root", "4,0"], &["root: 4,0", "4x4"]);
    bad(&["run", "--topology", "mesh", "--dims", "4x4", "--root", "-1,0"], &["root: -1,0"]);
    bad(&["run", "--dims", "6", "--root", "1,0"], &["root: 1,0", "hypercube"]);
}

#[test]
fn bad_sizes() {
    bad(&["run", "--topology", "mesh", "--dims", "4x0"], &["dims: 4x0", "at least 1"]);
    bad(&["run", "--dims", "-3"], &["dims: -3"]);
    bad(&["run", "--dims", "21"], &["dims: 21", "20"]);
    bad(&["run", "--topology", "mesh", "--dims", "4x4x"], &["dims: 4x4x"]);
    bad(&["run", "--topology", "linear", "--dims", "1"], &["dims: 1"]);
}

#[test]
fn sizes_too_big_for_memory_say_how_much_they_need() {
    bad(&["run", "--topology", "mesh", "--dims", "100000x100000"], &["dims: 100000x100000", "GiB"]);
    bad(&["run", "--topology", "mesh", "--dims", "4096x4096", "--vcs", "16", "--buffer-flits", "4096"], &["dims: 4096x4096", "GiB"]);
    // The 20-cube fits, but mnb-sbt's scoreboard (every node's broadcast at every node) does not.
    bad(&["run", "--dims", "20", "--algorithm", "mnb-sbt"], &["dims: 20", "mnb-sbt", "GiB"]);
}

#[test]
fn bad_router_parameters() {
    bad(&["run", "--buffer-flits", "-2"], &["buffer-flits: -2", "1 to 4096"]);
    bad(&["run", "--vcs", "0"], &["vcs: 0", "1 to 16"]);
    bad(&["run", "--dims", "6", "--ports", "9"], &["ports: 9", "1 to 6"]);
    bad(&["run", "--topology", "torus", "--vcs", "1"], &["vcs: 1", "deadlock-avoidance"]);
    bad(&["run", "--topology", "torus", "--vcs", "1", "--deadlock-avoidance", "on"], &["vcs: 1", "deadlock-avoidance"]);
    bad(&["run", "--switching", "cut"], &["switching: cut", "wh"]);
    bad(&["run", "--packet-flits", "4", "--buffer-flits", "2"], &["buffer-flits: 2", "whole packet"]);
}

#[test]
fn bad_workload_combinations() {
    bad(&["run", "--rate", "2"], &["rate: 2", "--traffic"]);
    bad(&["run", "--traffic", "uniform", "--rate", "2"], &["rate: 2", "(0, 1]"]);
    bad(&["run", "--traffic", "uniform", "--algorithm", "snb"], &["algorithm: snb", "traffic"]);
    bad(&["run", "--rate", "0.1"], &["rate: 0.1", "--traffic"]);
    bad(&["run", "--traffic", "zipf"], &["traffic: zipf", "uniform"]);
    bad(&["run", "--algorithm", "mnb-sbt", "--root", "3"], &["root: 3", "mnb-sbt"]);
    // What only an algorithm, or only another pattern, takes is refused, not dropped.
    let mesh = ["run", "--topology", "mesh", "--dims", "4x4", "--traffic", "uniform"];
    for (f, v) in [
        ("--root", "5"),
        ("--tp", "1"),
        ("--active", "1,2"),
        ("--active-count", "3"),
        ("--load", "0.5"),
        ("--pmnb", "pmnb-3"),
        ("--variant", "random"),
        ("--active-set", "random"),
    ] {
        bad(&[&mesh[..], &[f, v]].concat(), &[&format!("{}: {v}", &f[2..]), "--algorithm", "--traffic uniform"]);
    }
    bad(&[&mesh[..], &["--hotspot", "3"]].concat(), &["hotspot: 3", "--traffic hotspot", "uniform"]);
    bad(&[&mesh[..], &["--hotspot-fraction", "0.5"]].concat(), &["hotspot-fraction: 0.5", "--traffic hotspot"]);
    bad(&["run", "--topology", "mesh", "--deadlock-avoidance", "off"], &["deadlock-avoidance: off", "tori", "mesh"]);
}

#[test]
fn bad_flags() {
    bad(&["run", "--frobnicate", "3"], &["frobnicate", "3", "unknown flag", "--dims"]);
    bad(&["run", "--frobnicate=3"], &["frobnicate", "3", "unknown flag"]);
    bad(&["frobnicate"], &["frobnicate", "run", "list"]);
    bad(&["run", "--dims"], &["--dims"]);
    // A flag left without its value (values may begin with `-`) does not take the next flag.
    bad(&["run", "--vcs", "--dims", "3"], &["vcs: --dims", "a value is missing"]);
    bad(&["run", "--dims", "3", "--json", "--quiet"], &["json: --quiet", "a value is missing"]);
    bad(&["run", "--dims", "3", "--vcs", "--dims=4"], &["vcs: --dims=4", "a value is missing"]);
    bad(&["reproduce"], &["reproduce", "PAPER", "missing", "bertsekas-1991", "seidel-1993"]);
    bad(&["list", "--frob"], &["--frob", "unknown flag", "flitwave list takes none"]);
    for f in ["--vcd", "--fst", "--stats-csv"] {
        bad(&["run", "--dims", "3", f, "-"], &[&format!("{}: -", &f[2..]), "a file path", "--json"]);
    }
}

#[test]
fn bad_scenario_files() {
    let f = Temp::file("malformed.toml", "# a scenario\ndims = [4,\n");
    let name = f.s().to_string();
    let o = flitwave(&["run", &name]);
    bad(&["run", &name], &["scenario", &name, "TOML"]);
    // The position follows the file name as line:col.
    let err = String::from_utf8(o.stderr).unwrap();
    let after = &err[err.find(&name).unwrap() + name.len()..];
    let pos: Vec<&str> = after.split(':').skip(1).take(2).collect();
    assert!(pos.len() == 2 && pos.iter().all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit())), "no line:col in {err}");
    assert_eq!(pos[0], "2", "{err}");

    // A value TOML cannot hold names its key and says how to write it.
    let f = Temp::file("huge-seed.toml", "dims = 3\nseed = 18446744073709551615\n");
    bad(&["run", f.s()], &["scenario", f.s(), ":2:", "seed: ", "as a string"]);
    let f = Temp::file("huge-seed-string.toml", "dims = 3\nseed = \"18446744073709551615\"\n");
    assert_eq!(flitwave(&["run", f.s(), "--quiet"]).status.code(), Some(0));

    let f = Temp::file("unknown-key.toml", "topology = \"hypercube\"\nfrobnicate = 3\n");
    bad(&["run", f.s()], &["scenario", f.s(), "frobnicate", "unknown field", "dims"]);

    let f = Temp::file("twice.toml", "packet_flits = 2\npacket-flits = 3\n");
    bad(&["run", f.s()], &["scenario", f.s(), "packet-flits", "twice"]);

    let f = Temp::file("bad-value.toml", "dims = \"4x0\"\ntopology = \"mesh\"\n");
    bad(&["run", f.s()], &["dims: 4x0"]);

    let missing = Temp::path("missing.toml");
    bad(&["run", missing.s()], &["scenario", missing.s()]);
}

#[test]
fn bad_router_files() {
    let f = Temp::file("router.toml", "preset = \"realistic\"\nfoo = 1\n");
    bad(&["run", "--router", f.s()], &["router", f.s(), "foo"]);
    let f = Temp::file("router-syntax.toml", "rc_delay = \n");
    bad(&["run", "--router", f.s()], &["router", f.s(), "TOML"]);
    let f = Temp::file("router-zero-link.toml", "link_latency = 0\n");
    bad(&["run", "--router", f.s()], &["router", f.s(), "link_latency"]);
    bad(&["run", "--router", "nonexistent.toml"], &["router: nonexistent.toml", "ideal", "realistic"]);
}

#[test]
fn bad_json_path_is_reported_before_running() {
    let dir = Temp::dir("json-dir");
    let path = dir.0.join("no/such/dir/result.json");
    bad(&["run", "--json", path.to_str().unwrap()], &["json", path.to_str().unwrap()]);
}

/// Inputs found by probing that panicked, were silently ignored, or were
/// refused with a wrong or self-contradicting message.
#[test]
fn probed_inputs_get_one_clear_line() {
    // A router has at most 64 ports: 17 mesh dimensions are 34 links, so at most 30 NIC
    // channels (this panicked in the router).
    let dims17 = ["2"; 17].join("x");
    bad(&["run", "--topology", "mesh", "--dims", &dims17], &["ports: all", "at most 64 ports", "K from 1 to 30"]);
    bad(&["run", "--topology", "mesh", "--dims", &dims17, "--ports", "31"], &["ports: 31", "K from 1 to 30", "34 of them are links"]);
    // The linear BST that bst-simple runs on the whole mesh needs 2^(nu+1) nodes (panicked).
    bad(&["run", "--algorithm", "bst-simple", "--topology", "mesh", "--dims", "4x1", "--nu", "2"], &["dims: 4x1", "2^(nu+1) = 8 nodes"]);
    // Tornado on sides of 2 sends every packet to its own node.
    for (t, d) in [("torus", "2x2"), ("mesh", "2x2"), ("linear", "2")] {
        bad(&["run", "--topology", t, "--dims", d, "--traffic", "tornado", "--cycles", "100"], &["traffic: tornado", "at least 3"]);
    }
    // Flags that had no effect.
    bad(
        &["run", "--dims", "4", "--algorithm", "kbcast", "--active", "1,2", "--active-set", "subcube"],
        &["active-set: subcube", "--active LIST"],
    );
    bad(&["run", "--topology", "linear", "--dims", "16", "--algorithm", "st", "--rho", "1"], &["rho: 1", "rh only"]);
    // Router forwarding is offered by the algorithms that have it.
    bad(&["run", "--dims", "4", "--algorithm", "mnb", "--forwarding", "router"], &["forwarding: router", "snb and mnb-sbt"]);
    // Multicast VC allocation applies only to packets the routers replicate.
    bad(
        &["run", "--dims", "4", "--algorithm", "mnb-sbt", "--multicast-va", "per-branch"],
        &["multicast-va: per-branch", "--forwarding router"],
    );
    bad(
        &[
            "run",
            "--topology",
            "mesh",
            "--dims",
            "4x4",
            "--traffic",
            "uniform",
            "--rate",
            "0.1",
            "--cycles",
            "100",
            "--multicast-va",
            "atomic",
        ],
        &["multicast-va: atomic", "--forwarding router"],
    );
    bad(
        &["run", "--dims", "4", "--algorithm", "snb", "--forwarding", "router", "--multicast-va", "all"],
        &["multicast-va: all", "atomic, per-branch"],
    );
    let (code, v) = run_json(&[
        "--dims",
        "4",
        "--algorithm",
        "mnb-sbt",
        "--forwarding",
        "router",
        "--packet-flits",
        "2",
        "--multicast-va",
        "per-branch",
    ]);
    assert_eq!((code, v["config"]["multicast_va"].as_str()), (0, Some("per-branch")));
    // They would not change a run of one-flit packets (each branch's flit crosses whole).
    for opt in [["--multicast-va", "per-branch"], ["--replication", "sync"]] {
        let mut args = vec!["run", "--dims", "4", "--algorithm", "mnb-sbt", "--forwarding", "router"];
        args.extend(opt);
        bad(&args, &[&format!("{}: {}", &opt[0][2..], opt[1]), "packets of more than one flit"]);
    }
    let (code, v) = run_json(&["--dims", "4", "--algorithm", "mnb-sbt", "--forwarding", "router"]);
    assert_eq!((code, v["config"]["multicast_va"].as_str()), (0, Some("atomic")), "the default is echoed");
    let (code, v) = run_json(&["--dims", "4", "--algorithm", "mnb-sbt"]);
    assert_eq!((code, v["config"].get("multicast_va")), (0, None), "no replicated packets, no multicast_va in the config");
    assert_eq!(v["config"].get("replication"), None);
    bad(&["run", "--dims", "4", "--algorithm", "snb", "--replication", "async"], &["replication: async", "--forwarding router"]);
    bad(
        &["run", "--dims", "4", "--algorithm", "snb", "--forwarding", "router", "--replication", "lockstep"],
        &["replication: lockstep", "sync, async"],
    );
    let (code, v) = run_json(&["--dims", "4", "--algorithm", "snb", "--forwarding", "router"]);
    assert_eq!((code, v["config"]["replication"].as_str()), (0, Some("async")));
    // Faster links that one VC (one flit per cycle) can never use.
    bad(&["run", "--dims", "4", "--nu", "1"], &["nu: 1", "--vcs 2"]);
    assert_eq!(flitwave(&["run", "--dims", "4", "--nu", "1", "--vcs", "2", "--quiet"]).status.code(), Some(0));
    // A watchdog shorter than the router's own pauses reported deadlocks that were none.
    bad(&["run", "--dims", "4", "--algorithm", "mnb", "--router", "realistic", "--watchdog", "2"], &["watchdog: 2", "at least 12 cycles"]);
    // The suggested buffer must itself be allowed.
    bad(
        &["run", "--dims", "3", "--switching", "vct", "--packet-flits", "5000", "--buffer-flits", "4096"],
        &["buffer-flits: 4096", "at most 4096", "--switching wh"],
    );
    // Not standard output, and a negative dimension named as such.
    bad(&["reproduce", "bertsekas-1991", "--out", "-"], &["out", "-", "directory"]);
    bad(&["demo", "--out", "-"], &["out", "-", "directory"]);
    bad(&["reproduce", "bertsekas-1991", "--max-d", "-1"], &["-1", "--max-d"]);
    // A TOML boolean is a switch's value only (`vcd = true` wrote a file named `on`).
    let f = Temp::file("bool-path.toml", "dims = 3\nvcd = true\n");
    bad(&["run", f.s()], &["vcd: true", "not a boolean"]);
    let f = Temp::file("bool-switch.toml", "topology = \"torus\"\ndims = \"4x4\"\nvcs = 1\ndeadlock_avoidance = false\n");
    assert_eq!(flitwave(&["run", f.s(), "--quiet"]).status.code(), Some(0));
    // Every run flag is a scenario key, `load` and `pmnb` included.
    let f = Temp::file("dynamic.toml", "algorithm = \"dynamic\"\ndims = 3\nload = 0.3\npmnb = \"pmnb-3\"\ncycles = 300\n");
    let o = flitwave(&["run", f.s(), "--quiet", "--json", "-"]);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&["run", f.s()], &o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["config"]["workload"]["dynamic"]["load"], 0.3, "{v}");
}

#[test]
fn bad_threads() {
    let traffic = ["run", "--topology", "mesh", "--dims", "4x4", "--traffic", "uniform"];
    bad(&[&traffic[..], &["--threads", "0"]].concat(), &["threads: 0", "1 to 64"]);
    bad(&[&traffic[..], &["--threads", "two"]].concat(), &["threads: two"]);
    bad(&["run", "--topology", "linear", "--dims", "4", "--traffic", "uniform", "--threads", "5"], &["threads: 5", "4 nodes"]);
    bad(&["run", "--dims", "4", "--algorithm", "accumulate", "--threads", "2"], &["threads: 2", "accumulate", "--traffic", "mnb-sbt"]);
    bad(&["run", "--dims", "4", "--algorithm", "kbcast", "--active", "1,2", "--threads", "2"], &["threads: 2", "kbcast", "--traffic"]);
    bad(&[&traffic[..], &["--threads", "2", "--vcd", "/tmp/x.vcd"]].concat(), &["threads: 2", "--vcd"]);
}
