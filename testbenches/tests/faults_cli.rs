//! `flitwave run --fault` and `--link-failure-rate`, through the real binary: bad fault
//! specifications refused in one line with exit 2, runs with faults that account for every
//! packet and exit 0, and waveforms that show the failed link.

use std::process::Command;

mod refusal;
use refusal::{BIN, refused};

fn dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("flitwave-faults-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn bad_fault_specs_exit_2_with_one_line() {
    let mesh = ["run", "--topology", "mesh", "--dims", "6x6", "--traffic", "uniform", "--cycles", "100"];
    let with = |extra: &[&'static str]| -> Vec<&str> { mesh.iter().copied().chain(extra.iter().copied()).collect() };
    refused(&with(&["--fault", "link 36.0 at 5"]), &["fault", "36", "nodes are 0 to 35"]);
    refused(&with(&["--fault", "router 40"]), &["fault", "nodes are 0 to 35"]);
    refused(&with(&["--fault", "link 0.0 at 5"]), &["fault", "no link on port", "1 (xp)"]);
    refused(&with(&["--fault", "link 3.7 at 5"]), &["fault", "no link on port \"7\""]);
    refused(&with(&["--fault", "cable 3.0"]), &["fault", "link NODE.PORT at CYCLE"]);
    refused(&with(&["--link-failure-rate", "1.5"]), &["link-failure-rate", "1.5", "from 0 to 1"]);
    refused(&with(&["--link-failure-rate", "-0.1"]), &["link-failure-rate", "from 0 to 1"]);
    refused(&with(&["--fault", "@/nonexistent/faults.txt"]), &["fault", "cannot read it"]);
    refused(&with(&["--fault", "router 3", "--threads", "2"]), &["threads", "1 with faults"]);
    refused(&with(&["--fault", ""]), &["fault: \"\"", "@FILE"]);
}

fn json_run(args: &[&str], out: &std::path::Path) -> (i32, serde_json::Value) {
    let o = Command::new(BIN).args(args).args(["--quiet", "--json", out.to_str().unwrap()]).output().unwrap();
    assert!(o.stderr.is_empty(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    (o.status.code().unwrap(), serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap())
}

/// Uniform traffic on a 6x6 mesh, with one link failed from the start, a fault file with a
/// router failing mid-run, and random link failures: every packet is delivered, lost or
/// undeliverable, the missing deliveries are exactly those, and the run exits 0.
#[test]
fn runs_with_faults_account_for_every_packet_and_exit_0() {
    let d = dir("account");
    let file = d.join("faults.txt");
    std::fs::write(&file, "# a router, then a link\nrouter 14 at 600\n\nlink 20.1 at 900  # late\n").unwrap();
    let at_file = format!("@{}", file.display());
    let base = ["run", "--topology", "mesh", "--dims", "6x6", "--traffic", "uniform", "--rate", "0.04", "--cycles", "2000"];
    let cases: [&[&str]; 3] = [
        &["--fault", "link 14.1 at 0"],
        &["--fault", &at_file, "--router", "realistic", "--switching", "wh", "--packet-flits", "8", "--buffer-flits", "4"],
        &["--link-failure-rate", "0.1", "--seed", "7"],
    ];
    for extra in cases {
        let args: Vec<&str> = base.iter().chain(extra.iter()).copied().collect();
        let (code, j) = json_run(&args, &d.join("r.json"));
        let f = &j["faults"];
        let n = |k: &str| f[k].as_u64().unwrap();
        assert_eq!(code, 0, "{extra:?}: {f}");
        assert_eq!(j["ending"], "quiescent");
        assert_eq!(n("delivered") + n("lost_to_faults") + n("undeliverable"), n("sent"), "{extra:?}: {f}");
        assert_eq!(n("in_network"), 0);
        assert_eq!(n("sent"), j["packets_sent"].as_u64().unwrap(), "unicast traffic: one delivery a packet");
        assert_eq!(j["missing_deliveries"].as_u64().unwrap(), n("lost_to_faults") + n("undeliverable"), "{extra:?}: {f}");
        assert!(n("undeliverable") > 0, "{extra:?}: {f}");
        let faults = f["faults"].as_array().unwrap();
        assert!(!faults.is_empty());
        let per: u64 = faults.iter().map(|c| c["lost_to_faults"].as_u64().unwrap() + c["undeliverable"].as_u64().unwrap()).sum();
        assert_eq!(per, n("lost_to_faults") + n("undeliverable"), "each fault's cost adds up to the totals");
        assert!(faults.iter().all(|c| c["happened"] == true), "{f}");
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// A broadcast the routers replicate loses the branch behind a dead router: reported as
/// incomplete (the missing deliveries, which the faults account for), not as a hang.
#[test]
fn a_broadcast_that_does_not_know_the_faults_is_incomplete_not_hung() {
    let d = dir("bcast");
    let args = ["run", "--topology", "mesh", "--dims", "6x6", "--forwarding", "router", "--packet-flits", "4", "--switching", "wh"];
    let (code, j) = json_run(&[&args[..], &["--fault", "router 2 at 0", "--fault", "link 30.1 at 1000000"]].concat(), &d.join("r.json"));
    assert_eq!(code, 0, "{j}");
    assert_eq!(j["ending"], "quiescent");
    // The root 0's tree runs along row 0 in x, then up every column: node 2 and the column
    // above it (5 nodes), and the rows behind it in x (3, 4, 5 with their columns: 18) are
    // cut off.
    assert_eq!(j["faults"]["undeliverable"], 24, "{}", j["faults"]);
    assert_eq!(j["missing_deliveries"], 24);
    assert_eq!(j["faults"]["delivered"], 35 - 24);
    // The run ends long before the second fault: listed, not reached, no cost.
    let late = &j["faults"]["faults"][1];
    assert_eq!(
        (late["fault"].as_str(), late["happened"].as_bool(), late["undeliverable"].as_u64()),
        (Some("link 30.1 at 1000000"), Some(false), Some(0))
    );
    std::fs::remove_dir_all(&d).unwrap();
}

/// The waveform has a `failed` bit on each traced link, low before the link fails and high
/// from its cycle on, at both ends.
#[test]
fn waveforms_show_the_failed_link() {
    let d = dir("wave");
    let vcd = d.join("f.vcd");
    let o = Command::new(BIN)
        .args(["run", "--topology", "mesh", "--dims", "3x3", "--traffic", "uniform", "--rate", "0.05", "--cycles", "200"])
        .args(["--fault", "link 4.1 at 50", "--quiet", "--vcd", vcd.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&vcd).unwrap();
    // The identifier of `failed` in a scope path (top.<node>.router.<port>).
    let mut path: Vec<String> = Vec::new();
    let mut ids = std::collections::BTreeMap::new();
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.as_slice() {
            ["$scope", _, name, ..] => path.push(name.to_string()),
            ["$upscope", ..] => {
                path.pop();
            }
            ["$var", _, _, id, "failed", ..] => {
                ids.insert(path.join("."), id.to_string());
            }
            _ => {}
        }
    }
    assert_eq!(ids.len(), 12 * 2, "one failed bit per output link of the 3x3 mesh: {ids:?}");
    // Node 4 is x1_y1; port 1 leaves up in x to node 5 (x2_y1), which sends back on xm.
    let watched = [ids["top.x1_y1.router.out_xp"].clone(), ids["top.x2_y1.router.out_xm"].clone()];
    let other = ids["top.x0_y0.router.out_xp"].clone();
    let mut time = 0u64;
    let mut rose = Vec::new();
    for line in text.lines() {
        if let Some(t) = line.strip_prefix('#') {
            time = t.parse().unwrap();
        } else if line.len() > 1 && (line.starts_with('1') || line.starts_with('0')) {
            let (v, id) = line.split_at(1);
            if watched.iter().any(|w| w == id) && v == "1" {
                rose.push(time);
            }
            assert!(!(id == other && v == "1"), "a healthy link never fails");
        }
    }
    assert_eq!(rose.len(), 2, "both ends rise once: {rose:?}");
    assert_eq!(rose[0], rose[1]);
    assert!(rose[0] > 0, "low before the fault");
    std::fs::remove_dir_all(&d).unwrap();
}
