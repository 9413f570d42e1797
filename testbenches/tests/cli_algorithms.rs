//! End-to-end tests of the `flitwave` binary running the papers' hypercube algorithms:
//! Bertsekas et al.'s, kbcast (Stamoulis & Tsitsiklis), the PMNBs and the dynamic broadcast
//! (Varvarigos & Bertsekas), their bounds, what each refuses, and `reproduce`.

mod common;

use common::{Temp, bad, describe, f64_of, flitwave, run_json, run_ok, u64_of};

/// The Bertsekas et al. algorithms through the CLI: Table 1 time and Table 2 transmissions
/// (written out here), and the report's paper columns.
#[test]
fn bertsekas_algorithms_report_their_tables() {
    // (algorithm, ports, slots, transmissions) on the 4-cube.
    let cases: &[(&str, &str, f64, u64)] = &[
        ("mnb", "all", 4.0, 240),
        ("mnb", "one", 15.0, 240),
        ("mnb-ring", "one", 15.0, 240),
        ("multi-accumulate", "all", 4.0, 240),
        ("scatter", "all", 4.0, 32),
        ("gather", "one", 15.0, 32),
        ("accumulate", "one", 4.0, 15),
        ("total-exchange", "all", 8.0, 512),
        ("total-exchange", "one", 32.0, 512),
    ];
    for &(alg, ports, slots, tx) in cases {
        let v = run_ok(&["--dims", "4", "--algorithm", alg, "--ports", ports]);
        assert_eq!(f64_of(&v, "slots"), slots, "{alg} {ports}");
        assert_eq!(u64_of(&v, "paper_bound_slots") as f64, slots, "{alg} {ports}");
        assert_eq!(u64_of(&v, "link_transmissions"), tx, "{alg} {ports}");
        assert_eq!(u64_of(&v, "paper_transmissions"), tx, "{alg} {ports}");
        assert_eq!(f64_of(&v, "vs_slot_model"), 1.0);
    }
    // The realistic router is slower than the slot model, and says by how much.
    let v = run_ok(&["--dims", "4", "--algorithm", "mnb", "--router", "realistic", "--switching", "wh", "--packet-flits", "2"]);
    assert!(f64_of(&v, "vs_slot_model") > 1.0);
    assert_eq!(u64_of(&v, "missing_deliveries"), 0);
}

#[test]
fn bertsekas_algorithms_reject_what_they_do_not_define() {
    bad(&["run", "--dims", "6", "--algorithm", "mnb", "--ports", "2"], &["ports: 2", "mnb", "all", "one"]);
    bad(&["run", "--dims", "6", "--algorithm", "total-exchange", "--root", "3"], &["root: 3", "total-exchange"]);
    bad(&["run", "--dims", "6", "--algorithm", "scatter", "--forwarding", "router"], &["forwarding: router", "scatter"]);
    bad(&["run", "--topology", "mesh", "--algorithm", "scatter"], &["algorithm: scatter", "mesh", "hypercube"]);
    bad(&["reproduce", "nope"], &["reproduce: nope", "bertsekas-1991"]);
}

#[test]
fn kbcast_variants_report_their_bounds() {
    // (variant extra flags, bound from Stamoulis & Tsitsiklis for d = 6, K = 12).
    let d = 6u64;
    let k = 12u64;
    let cases: &[(&[&str], Option<u64>)] = &[
        (&["--variant", "prefix", "--tp", "1"], Some(2 * k.div_ceil(d) + 4 * d)),
        (&["--variant", "prefix", "--tp", "0"], Some(2 * k.div_ceil(d) + 2 * d - 1)),
        (&["--variant", "same-tree"], Some(d + k - 1)),
        (&["--variant", "random"], None),
    ];
    for (extra, bound) in cases {
        let mut args = vec!["--dims", "6", "--algorithm", "kbcast", "--active-count", "12", "--active-set", "adversarial", "--seed", "3"];
        args.extend_from_slice(extra);
        let v = run_ok(&args);
        assert_eq!(u64_of(&v, "missing_deliveries"), 0, "{extra:?}");
        assert_eq!(u64_of(&v, "deliveries"), k * (64 - 1), "{extra:?}");
        let slots = f64_of(&v, "slots");
        // Every node must receive K packets (K - 1 if it is active) over d links.
        assert!(slots >= d as f64, "{extra:?}: {slots}");
        assert!(u64_of(&v, "lower_bound_slots") >= d);
        match bound {
            Some(b) => {
                assert_eq!(u64_of(&v, "paper_bound_slots"), *b, "{extra:?}");
                assert!(slots <= *b as f64, "{extra:?}: {slots} > {b}");
            }
            None => assert!(v["paper_bound_slots"].is_null(), "{extra:?}"),
        }
    }
    // K = d broadcasters with known ranks and rotated dimension orders never collide: d
    // slots; computing the ranks first adds the prefix's 2d steps (§3.3.2: "3d slots").
    let v = run_ok(&["--dims", "6", "--algorithm", "kbcast", "--variant", "rank-rotated", "--active", "3,17,40,41,50,63", "--tp", "0"]);
    assert_eq!(f64_of(&v, "slots"), 6.0);
    let v = run_ok(&["--dims", "6", "--algorithm", "kbcast", "--variant", "rank-rotated", "--active", "3,17,40,41,50,63"]);
    assert_eq!(f64_of(&v, "slots"), 3.0 * 6.0);
    assert_eq!(v["config"]["workload"]["kbcast"]["active"], serde_json::json!([3, 17, 40, 41, 50, 63]));
}

/// `--tp X` with X ≥ 2 once deadlocked (a prefix packet X flits long cannot enter the
/// default 2-flit buffer under store-and-forward) or lost deliveries (X-flit packets in
/// X-flit buffers cannot follow each other on a link within a step, so the synchronous
/// scans read stale counts). Every t_p from 0 to 3 slots, the default buffers, d = 6,
/// K = M = 12 (6 for rank-rotated): everything delivered, no schedule failure, within the
/// papers' bounds written out (t_p in slots):
/// kbcast prefix (2d + 1)t_p + 2⌈K/d⌉ + 2d − 1; rank-rotated 2d t_p + d;
/// PMNB I ⌈(2^m − 1)/m⌉ + 2d + 2d t_p − m, m = ⌈log2 M⌉; II (N − 1)M/(Nd) + 2d t_p + 2;
/// III ⌈M/d⌉ + 2d + 4d t_p − 1.
#[test]
fn prefix_steps_of_0_to_3_slots_work_with_the_default_buffers() {
    let (d, k, n) = (6.0f64, 12.0f64, 64.0f64);
    let m = k.log2().ceil();
    for tp in 0..=3u32 {
        let t = tp as f64;
        let ts = tp.to_string();
        let cases: [(&[&str], f64); 5] = [
            (&["--algorithm", "kbcast", "--active-count", "12"], (2.0 * d + 1.0) * t + 2.0 * (k / d).ceil() + 2.0 * d - 1.0),
            (&["--algorithm", "kbcast", "--variant", "rank-rotated", "--active-count", "6"], 2.0 * d * t + d),
            (&["--algorithm", "pmnb-1", "--active-count", "12"], ((2f64.powf(m) - 1.0) / m).ceil() + 2.0 * d + 2.0 * d * t - m),
            (&["--algorithm", "pmnb-2", "--active-count", "12"], (n - 1.0) / n * k / d + 2.0 * d * t + 2.0),
            (&["--algorithm", "pmnb-3", "--active-count", "12", "--seed", "3"], (k / d).ceil() + 2.0 * d + 4.0 * d * t - 1.0),
        ];
        for (extra, bound) in cases {
            let mut args = vec!["--dims", "6", "--tp", ts.as_str()];
            args.extend_from_slice(extra);
            let v = run_ok(&args);
            let ctx = format!("{} --tp {tp}", extra.join(" "));
            assert_eq!(u64_of(&v, "missing_deliveries") + u64_of(&v, "duplicate_deliveries"), 0, "{ctx}");
            assert!(v["deadlock"].is_null(), "{ctx}");
            assert_eq!(v["algorithm_failures"], serde_json::json!([]), "{ctx}");
            assert!(f64_of(&v, "slots") <= bound + 1e-9, "{ctx}: {} > {bound}", f64_of(&v, "slots"));
            // The defaults: buffers of 2 × packet-flits.
            assert_eq!(u64_of(&v["config"], "buffer_flits"), 2 * u64_of(&v["config"], "packet_flits"), "{ctx}");
        }
        for pmnb in ["pmnb-2", "pmnb-3"] {
            let v = run_ok(&["--dims", "5", "--algorithm", "dynamic", "--pmnb", pmnb, "--load", "0.05", "--cycles", "20000", "--tp", &ts]);
            assert_eq!(v["algorithm_failures"], serde_json::json!([]), "dynamic {pmnb} --tp {tp}");
            assert_eq!(v["stable"], true, "dynamic {pmnb} --tp {tp}");
        }
    }
}

/// With every node active the ranks are the node ids: no prefix, whatever t_p (here the
/// default 1). kbcast is the multinode broadcast of §3.2, 2⌈2^d/d⌉ + 2d − 1 slots (33 at
/// d = 6); pmnb-3 the paper's new MNB, ⌈N/d⌉ + 2d − 1 (47 at d = 8).
#[test]
fn every_node_active_skips_the_prefix() {
    let v = run_ok(&["--dims", "6", "--algorithm", "kbcast", "--active", "all"]);
    assert!(f64_of(&v, "slots") <= 33.0, "{}", f64_of(&v, "slots"));
    assert_eq!(u64_of(&v, "paper_bound_slots"), 33);
    assert_eq!(u64_of(&v, "prefix_steps"), 0);
    let v = run_ok(&["--dims", "8", "--algorithm", "pmnb-3", "--active", "all"]);
    assert!(f64_of(&v, "slots") <= 47.0, "{}", f64_of(&v, "slots"));
    assert_eq!(u64_of(&v, "paper_bound_slots"), 47);
    assert_eq!(u64_of(&v, "prefix_steps"), 0);
    // One node short of all: the prefix runs (2 × 2d steps for pmnb-3).
    let v = run_ok(&["--dims", "6", "--algorithm", "pmnb-3", "--active", "0-62"]);
    assert_eq!(u64_of(&v, "prefix_steps"), 24);
}

#[test]
fn kbcast_rejects_what_it_does_not_define() {
    let base = ["run", "--dims", "6", "--algorithm", "kbcast"];
    let with = |extra: &[&'static str]| -> Vec<&'static str> { base.iter().copied().chain(extra.iter().copied()).collect() };
    bad(&with(&["--ports", "one"]), &["ports: one", "kbcast", "--ports all"]);
    bad(&with(&["--variant", "random", "--tp", "1"]), &["tp: 1", "random", "no prefix"]);
    bad(&with(&["--variant", "tree"]), &["variant: tree", "prefix", "random", "same-tree", "rank-rotated"]);
    bad(&with(&["--active-count", "65"]), &["active-count: 65", "1 to 64"]);
    bad(&with(&["--active-count", "40", "--active-set", "adversarial"]), &["active-count: 40", "1 to 32", "one half of the cube"]);
    bad(&with(&["--active-set", "corner"]), &["active-set: corner", "random", "subcube", "adversarial"]);
    bad(&with(&["--active", "1,2", "--active-count", "3"]), &["active-count: 3", "not both"]);
    bad(&with(&["--active", "64"]), &["active: 64", "below 64"]);
    bad(&with(&["--variant", "rank-rotated", "--active-count", "7"]), &["active: 7", "rank-rotated", "d = 6"]);
    bad(&with(&["--tp", "-1"]), &["tp: -1", "number"]);
    bad(&with(&["--tp", "nan"]), &["tp: nan"]);
    bad(&["run", "--dims", "6", "--algorithm", "snb", "--variant", "random"], &["variant: random", "kbcast"]);
    bad(&["run", "--topology", "mesh", "--dims", "4x4", "--algorithm", "kbcast"], &["algorithm: kbcast", "mesh", "hypercube"]);
}

/// `flitwave reproduce PAPER --max-d MAX_D` into a scratch folder, which must succeed and
/// write `TABLE.md` containing `md_has`: the folder, `TABLE.md` and `TABLE.csv`.
fn reproduce(paper: &str, max_d: &str, table: &str, md_has: &str) -> (Temp, String, String) {
    let out = Temp::dir(table);
    let o = flitwave(&["reproduce", paper, "--out", out.s(), "--max-d", max_d]);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&["reproduce", paper], &o));
    let md = std::fs::read_to_string(out.0.join(format!("{table}.md"))).unwrap();
    assert!(md.contains(md_has), "{md}");
    let csv = std::fs::read_to_string(out.0.join(format!("{table}.csv"))).unwrap();
    (out, md, csv)
}

#[test]
fn reproduce_stamoulis_tsitsiklis_writes_its_table() {
    let (_out, _md, csv) = reproduce("stamoulis-tsitsiklis", "7", "kbcast", "| K | active set |");
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("no column {name} in {header:?}"));
    let (slots, bound, lower) = (col("slots"), col("bound"), col("lower_bound"));
    let mut rows = 0;
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        let s: f64 = f[slots].parse().unwrap();
        let lb: f64 = f[lower].parse().unwrap();
        assert!(s >= lb, "{line}");
        if !f[bound].is_empty() {
            assert!(s <= f[bound].parse::<f64>().unwrap(), "{line}");
        }
        rows += 1;
    }
    assert!(rows > 10);
}

#[test]
fn reproduce_rejects_a_dimension_outside_the_papers_range() {
    bad(&["reproduce", "stamoulis-tsitsiklis", "--max-d", "5"], &["max-d: 5", "6 to 10"]);
    bad(&["reproduce", "bertsekas-1991", "--max-d", "11"], &["max-d: 11", "1 to 10"]);
}

#[test]
fn pmnb_variants_report_the_papers_bounds() {
    // (algorithm, the paper's bound for d = 6, M = 20, t_p = 1, written out from §IV).
    let (d, m, n) = (6.0f64, 20.0f64, 64.0f64);
    let mm = m.log2().ceil();
    let cases = [
        ("pmnb-1", ((2f64.powf(mm) - 1.0) / mm).ceil() + 2.0 * d + 2.0 * d - mm),
        ("pmnb-2", (n - 1.0) / n * m / d + 2.0 * d + 2.0),
        ("pmnb-3", (m / d).ceil() + 2.0 * d + 4.0 * d - 1.0),
    ];
    for (alg, bound) in cases {
        let v = run_ok(&["--dims", "6", "--algorithm", alg, "--active-count", "20", "--active-set", "adversarial"]);
        let pieces = if alg == "pmnb-2" { 6 } else { 1 };
        assert_eq!(u64_of(&v, "deliveries"), pieces * 20 * 63, "{alg}");
        // The formula itself (PMNB II's is fractional: 16.625 here was reported as 17).
        assert!((f64_of(&v, "paper_bound_slots") - bound).abs() < 1e-9, "{alg}: {} against {bound}", v["paper_bound_slots"]);
        assert!(f64_of(&v, "slots") <= bound, "{alg}: {} > {bound}", f64_of(&v, "slots"));
        assert_eq!(u64_of(&v, "lower_bound_slots"), if alg == "pmnb-2" { 4 } else { 6 }, "{alg}");
        assert_eq!(u64_of(&v, "packing_delays"), 0, "{alg}");
        assert_eq!(v["algorithm_failures"], serde_json::json!([]));
    }
    // pmnb-2 splits a 6-flit packet into six one-flit mini-packets by default.
    let v = run_ok(&["--dims", "6", "--algorithm", "pmnb-2"]);
    assert_eq!(u64_of(&v, "slot_cycles"), 6);
    // The paper's new MNB: pmnb-3 with every node active and ranks known.
    let v = run_ok(&["--dims", "5", "--algorithm", "pmnb-3", "--active", "all", "--tp", "0"]);
    assert!(f64_of(&v, "slots") <= (32f64 / 5.0).ceil() + 2.0 * 5.0 - 1.0);
    assert_eq!(u64_of(&v, "deliveries"), 32 * 31);
}

#[test]
fn dynamic_reports_delay_bound_and_stability() {
    let v = run_ok(&["--dims", "5", "--algorithm", "dynamic", "--load", "0.2", "--cycles", "10000", "--tp", "0"]);
    let th = &v["theorem"];
    let avg = f64_of(&v, "avg_delay_slots");
    // The theorem (§II, eqs. 17-19) for pmnb-2, d = 5, t_p = 0, rho = 0.2, written out:
    // X = (N-1)/(dN), V = 2d t_p + 2, lambda = rho d/(N-1), s = 1 - rho - lambda V,
    // W(a) = rho X/(2s) + (1-rho)V/(2s) + (1 - rho a - lambda V)V/s,
    // T <= W + X + min((N-1)X/2, rho W) for the worst a in
    // [(M + (K-1)(2M - K))/(2NM) - 1/(2N), 1/2 - 1/(2N)], M = lambda N V/(1-rho), K = floor(M) + 1.
    let (n, d, rho) = (32.0f64, 5.0f64, 0.2f64);
    let (x, vv, lambda) = ((n - 1.0) / (d * n), 2.0, rho * d / (n - 1.0));
    let s = 1.0 - rho - lambda * vv;
    let m = lambda * n * vv / (1.0 - rho);
    let kk = m.floor() + 1.0;
    let (a_lo, a_hi) = ((m + (kk - 1.0) * (2.0 * m - kk)) / (2.0 * n * m) - 1.0 / (2.0 * n), 0.5 - 0.5 / n);
    let bound = (0..=100)
        .map(|i| a_lo + (a_hi - a_lo) * i as f64 / 100.0)
        .map(|a| {
            let w = rho * x / (2.0 * s) + (1.0 - rho) * vv / (2.0 * s) + (1.0 - rho * a - lambda * vv) * vv / s;
            w + x + ((n - 1.0) * x / 2.0).min(rho * w)
        })
        .fold(f64::MIN, f64::max);
    assert!((th["delay_bound_slots"].as_f64().unwrap() - bound).abs() < 1e-9, "{th} against {bound}");
    assert!(avg < bound, "{v}");
    assert_eq!(v["stable"], true);
    let ci = v["avg_delay_ci95"].as_array().unwrap();
    assert!(ci[0].as_f64().unwrap() <= avg && avg <= ci[1].as_f64().unwrap());
    for k in ["delay_p50_slots", "delay_p90_slots", "delay_p99_slots", "throughput", "mean_backlog"] {
        assert!(v[k].is_number(), "{k} in {v}");
    }
    // pmnb-2, d = 5, t_p = 0: X = 31/160, V = 2; the limit 1/(1 + V/(NX)) in eq. 17's load.
    let limit = 1.0 / (1.0 + 2.0 * 5.0 / 31.0);
    assert!((th["stability_limit_load"].as_f64().unwrap() - limit).abs() < 1e-9);
    let v = run_ok(&["--dims", "5", "--algorithm", "dynamic", "--load", "0.95", "--cycles", "10000", "--tp", "0"]);
    assert_eq!(v["stable"], false, "{v}");
    assert!(v["theorem"]["delay_bound_slots"].is_null());
}

/// The synchronous PMNBs on routers slower than the slot model (1-flit buffers halve a
/// link's rate; the realistic pipeline adds latency): every step is stretched to what the
/// router measurably does, so everything is still delivered, with no late prefix packet and
/// no packing collision (they lost deliveries when only the broadcast subphases were).
#[test]
fn pmnbs_keep_their_schedule_on_slow_routers() {
    for router in ["ideal", "realistic"] {
        for (alg, flits) in [("pmnb-1", "1"), ("pmnb-2", "4"), ("pmnb-3", "1"), ("pmnb-3", "4"), ("dynamic", "4")] {
            for tp in ["0", "1", "3"] {
                let mut args = vec!["--dims", "4", "--algorithm", alg, "--router", router, "--switching", "wh"];
                args.extend(["--packet-flits", flits, "--buffer-flits", "1", "--tp", tp]);
                if alg == "dynamic" {
                    args.extend(["--cycles", "300"]);
                }
                let (code, v) = run_json(&args);
                assert_eq!(code, 0, "{args:?}: {v:#}");
                assert_eq!(v["missing_deliveries"], 0, "{args:?}");
            }
        }
    }
}

#[test]
fn pmnb_and_dynamic_reject_what_they_do_not_define() {
    bad(&["run", "--dims", "6", "--algorithm", "pmnb-2", "--packet-flits", "4"], &["packet-flits: 4", "multiple of 6"]);
    bad(&["run", "--dims", "6", "--algorithm", "pmnb-3", "--ports", "one"], &["ports: one", "pmnb-3", "--ports all"]);
    bad(&["run", "--dims", "6", "--algorithm", "pmnb-1", "--variant", "random"], &["variant: random", "kbcast"]);
    bad(&["run", "--dims", "6", "--algorithm", "pmnb-1", "--load", "0.5"], &["load: 0.5", "dynamic"]);
    bad(&["run", "--dims", "6", "--algorithm", "dynamic", "--pmnb", "pmnb-1"], &["pmnb: pmnb-1", "pmnb-2 or pmnb-3"]);
    bad(&["run", "--dims", "6", "--algorithm", "dynamic", "--load", "-0.1"], &["load: -0.1", "utilization"]);
    bad(&["run", "--dims", "6", "--algorithm", "dynamic", "--active-count", "3"], &["active-count: 3", "pmnb-1"]);
    bad(&["run", "--dims", "6", "--algorithm", "snb", "--cycles", "10"], &["cycles: 10", "--traffic", "dynamic"]);
    bad(&["run", "--topology", "mesh", "--algorithm", "dynamic"], &["algorithm: dynamic", "mesh", "hypercube"]);
}

#[test]
fn reproduce_varvarigos_bertsekas_checks_the_paper() {
    let (out, md, csv) = reproduce("varvarigos-bertsekas", "6", "pmnb-example", "PMNB III");
    // Each row's lower bound is the one for its algorithm (§IV): at d = 6 the example's
    // M is 2^round(6 * 10/16) = 16; split packets (PMNB II) ceil((M-1)/d) = 3 (eq. 13),
    // unsplit max{d, ceil((M-1)/d)} = 6, the full MNB max{d, ceil((N-1)/d)} = 11.
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let lb = header.iter().position(|h| *h == "lower_bound").expect("a lower_bound column");
    for r in csv.lines().skip(1) {
        let f: Vec<&str> = r.split(',').collect();
        let expect = match f[0] {
            "mnb" => 11,
            "pmnb-2" => 3,
            _ => 6,
        };
        assert_eq!(f[lb].parse::<u64>().unwrap(), expect, "{r}");
    }
    assert!(!md.contains("Lower bound max{d, ceil((M-1)/d)} ="), "{md}");
    let csv = std::fs::read_to_string(out.0.join("dynamic.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert!(rows.len() >= 8);
    // Every stable point below its bound, and the table says which loads were unstable.
    for r in rows {
        let f: Vec<&str> = r.split(',').collect();
        if let (Ok(avg), Ok(bound)) = (f[5].parse::<f64>(), f[9].parse::<f64>()) {
            assert!(avg < bound, "{r}");
        }
    }
    assert!(out.0.join("delay-d6.svg").exists());
}

/// On a pipelined router the synchronous PMNB schedule stretches each step by the measured
/// hop latency: everything still arrives, later than the slot model says.
#[test]
fn pmnb_runs_on_the_realistic_router() {
    for alg in ["pmnb-1", "pmnb-2", "pmnb-3"] {
        for sw in ["sf", "wh"] {
            let v = run_ok(&["--dims", "5", "--algorithm", alg, "--active-count", "12", "--router", "realistic", "--switching", sw]);
            assert_eq!(u64_of(&v, "missing_deliveries"), 0, "{alg} {sw}");
            assert!(f64_of(&v, "vs_slot_model") > 1.0, "{alg} {sw}");
            assert_eq!(v["algorithm_failures"], serde_json::json!([]));
        }
    }
    let v = run_ok(&["--dims", "5", "--algorithm", "dynamic", "--load", "0.1", "--cycles", "50000", "--router", "realistic"]);
    assert_eq!(v["algorithm_failures"], serde_json::json!([]));
    assert!(v["avg_delay_slots"].as_f64().unwrap() > 0.0);
}

/// PMNBs whose buffers hold exactly one packet, with prefix steps shorter than a slot: the
/// last prefix packet on a link still sat in the buffer behind it when the packing piece
/// was sent, so the piece waited and the run failed (the paths of §IV-A are disjoint only if
/// every piece leaves on time). The packing now starts once a piece can follow a prefix
/// packet over the link.
#[test]
fn pmnb_packing_waits_for_the_last_prefix_packet_to_clear() {
    for alg in ["pmnb-1", "pmnb-3"] {
        for (sw, flits) in [("sf", "2"), ("vct", "4"), ("sf", "8")] {
            let args =
                ["--dims", "3", "--algorithm", alg, "--active-count", "5", "--switching", sw, "--packet-flits", flits, "--tp", "0.5"];
            let mut tight = args.to_vec();
            tight.extend_from_slice(&["--buffer-flits", flits]);
            let v = run_ok(&tight);
            assert_eq!((v["packing_delays"].as_u64(), v["missing_deliveries"].as_u64()), (Some(0), Some(0)), "{alg} {sw} {flits}");
        }
    }
}

/// An unstable dynamic run serves few requests, so few batches hold delays: its 95 %
/// interval of the mean delay must still hold only delays (none below 0), contain the mean,
/// and the summary must say how many requests were never served.
#[test]
fn dynamic_unstable_run_reports_a_valid_interval_and_its_unserved_requests() {
    let args = [
        "--dims",
        "3",
        "--algorithm",
        "dynamic",
        "--switching",
        "wh",
        "--tp",
        "3",
        "--pmnb",
        "pmnb-3",
        "--load",
        "0.5",
        "--cycles",
        "300",
        "--seed",
        "599",
    ];
    let v = run_ok(&args);
    assert_eq!(v["stable"], false);
    let (avg, ci) = (f64_of(&v, "avg_delay_slots"), &v["avg_delay_ci95"]);
    let (lo, hi) = (ci[0].as_f64().unwrap(), ci[1].as_f64().unwrap());
    assert!(0.0 <= lo && lo <= avg && avg <= hi, "interval [{lo}, {hi}] around {avg}");
    let unserved = u64_of(&v, "unserved");
    assert!(unserved > 0);
    let mut all = vec!["run"];
    all.extend_from_slice(&args);
    let o = flitwave(&all);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains(&format!("{unserved} never")) && text.contains("UNSTABLE"), "{text}");
}

/// A prefix step of a decimal number of slots is whole in cycles although its product in
/// floating point is not (2.3 x 100 = 229.99999999999997).
#[test]
fn decimal_prefix_steps_are_whole_cycles() {
    let v = run_ok(&["--dims", "3", "--algorithm", "pmnb-3", "--packet-flits", "100", "--buffer-flits", "200", "--tp", "2.3"]);
    assert_eq!(v["missing_deliveries"], 0);
    bad(&["run", "--dims", "3", "--algorithm", "pmnb-3", "--packet-flits", "100", "--tp", "2.305"], &["tp: 2.305", "multiple of 0.01"]);
}
