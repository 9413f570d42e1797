//! Varvarigos & Bertsekas, "Partial multinode broadcast and partial exchange algorithms for
//! d-dimensional meshes / hypercubes": PMNB I, II, III against the closed forms of §IV,
//! the packing phase's disjoint paths, and the MNB through PMNB III.

use fabric::algorithms::kbcast::ActiveSet;
use fabric::algorithms::pmnb::{Pmnb, Variant};
use fabric::*;

/// The paper's closed forms (§IV), in slots, written out from the text.
fn paper_bound(v: Variant, d: u32, m: u64, tp: f64) -> f64 {
    let (d, n) = (d as f64, (1u64 << d) as f64);
    match v {
        Variant::One => {
            // m = ceil(log2 M) and M replaced by 2^m; with M = 1 no subcube MNB.
            let mm = (m as f64).log2().ceil();
            let p4 = if mm == 0.0 { 0.0 } else { ((2f64.powf(mm) - 1.0) / mm).ceil() };
            p4 + 2.0 * d + 2.0 * d * tp - mm
        }
        Variant::Two => (n - 1.0) / n * m as f64 / d + 2.0 * d * tp + 2.0,
        Variant::Three => (m as f64 / d).ceil() + 2.0 * d + 4.0 * d * tp - 1.0,
    }
}

/// The ideal all-port `d`-cube with `flits`-flit packets and the CLI's default buffers
/// (2 × packet-flits).
fn cube_spec(d: u32, flits: u16) -> FabricSpec {
    let mut spec = FabricSpec::ideal(TopologyKind::Hypercube, &[d]);
    spec.ports = PortModel::All;
    spec.packet_flits = flits;
    spec.buffer_flits = 2 * flits;
    spec
}

/// Runs a PMNB with the CLI's default buffers (2 × packet-flits) and a prefix step of `tp`
/// slots; returns its completion in slots (packets are `flits` long) and the link
/// transmissions. Every run must deliver everything and report no algorithm failure.
fn run(v: Variant, d: u32, active: &[u32], flits: u16, tp: u64) -> (f64, u64) {
    let spec = cube_spec(d, flits);
    let prefix_hop = (0, fabric::algorithms::prefix::packet_flits(tp * flits as u64, flits) as u64);
    let p = Pmnb::new(v, d, active, flits, tp * flits as u64, (0, flits as u64 / v.pieces(d) as u64), prefix_hop);
    let mut f = Fabric::new(&spec, Box::new(p));
    let ctx = format!("{v:?} d={d} M={} tp={tp}", active.len());
    assert_eq!(f.run(), Ending::Quiescent, "{ctx}");
    assert!(f.scoreboard.ok(), "{ctx}: {:?} {:?}", f.scoreboard.counts(), f.scoreboard.problems);
    assert!(f.program().failures().is_empty(), "{ctx}: {:?}", f.program().failures());
    let pieces = v.pieces(d) as u64;
    assert_eq!(f.scoreboard.counts().expected, pieces * active.len() as u64 * ((1 << d) - 1), "{ctx}");
    (f.counters.last_delivery as f64 / flits as f64, f.counters.link_transmissions)
}

/// Each variant within the paper's closed form and above the lower bound, t_p = 0 and 1 on
/// d = 2..7, t_p = 2 and 3 (steps longer than a packet) on d = 3 and 6.
#[test]
fn every_variant_meets_its_closed_form_on_random_clustered_and_adversarial_sets() {
    for d in 2..=7u32 {
        let n = 1u32 << d;
        for set in [ActiveSet::Random, ActiveSet::Subcube, ActiveSet::Adversarial] {
            for m in [1, 2, 3, d, d + 1, n / 4, n / 2 - 1, n / 2, n] {
                if m == 0 || m > set.capacity(d) {
                    continue;
                }
                let active = set.choose(d, m, 31 + m as u64);
                for v in [Variant::One, Variant::Two, Variant::Three] {
                    let flits = if v == Variant::Two { d as u16 } else { 1 };
                    let tps: &[u64] = if d == 3 || d == 6 { &[0, 1, 2, 3] } else { &[0, 1] };
                    for &tp in tps {
                        let (slots, _) = run(v, d, &active, flits, tp);
                        let bound = paper_bound(v, d, m as u64, tp as f64);
                        let ctx = format!("{v:?} d={d} M={m} {set:?} tp={tp}");
                        assert!(slots <= bound + 1e-9, "{ctx}: {slots} slots > {bound}");
                        let lower = ((m as f64 - 1.0) / d as f64).max(if v == Variant::Two { 1.0 } else { d as f64 });
                        assert!(slots >= lower.ceil() - 1e-9 || v == Variant::Two && slots >= lower, "{ctx}: {slots} below {lower}");
                    }
                }
            }
        }
    }
}

/// §IV-C: with every node active the ranks are the node ids, so no prefix runs whatever t_p
/// is, and PMNB III is the paper's new multinode broadcast, at most ⌈N/d⌉ + 2d − 1 slots.
/// PMNB I and II skip it too: with M = N = 2^d (m = d) their closed forms without the
/// prefix are ⌈(N − 1)/d⌉ + d and (N − 1)/d + 2.
#[test]
fn mnb_through_pmnb3() {
    for d in 3..=8u32 {
        let n = 1u32 << d;
        let all: Vec<u32> = (0..n).collect();
        for tp in 0..=3 {
            let (slots, tx) = run(Variant::Three, d, &all, 1, tp);
            assert!(slots <= (n.div_ceil(d) + 2 * d - 1) as f64, "d={d} tp={tp}: {slots}");
            // Each packet is packed (at most d hops) and then crosses N − 1 links.
            assert!(tx >= n as u64 * (n as u64 - 1));
            let (slots, _) = run(Variant::One, d, &all, 1, tp);
            assert!(slots <= ((n - 1).div_ceil(d) + d) as f64, "pmnb-1 d={d} tp={tp}: {slots}");
            let (slots, _) = run(Variant::Two, d, &all, d as u16, tp);
            assert!(slots <= (n - 1) as f64 / d as f64 + 2.0 + 1e-9, "pmnb-2 d={d} tp={tp}: {slots}");
        }
    }
}

fn dynamic(variant: Variant, d: u32, load: f64, slots: u64, tp: u64) -> serde_json::Value {
    use fabric::algorithms::dynamic::{Dynamic, DynamicSpec};
    let flits = if variant == Variant::Two { d as u16 } else { 1 };
    let spec = cube_spec(d, flits);
    let window = slots * flits as u64;
    let hop = (0, flits as u64 / variant.pieces(d) as u64);
    let prefix_hop = (0, fabric::algorithms::prefix::packet_flits(tp * flits as u64, flits) as u64);
    let ds = DynamicSpec {
        variant,
        d,
        load,
        window,
        warmup: window / 10,
        flits,
        tp_cycles: tp * flits as u64,
        seed: 9,
        hop,
        prefix_hop,
        handover: 0,
    };
    let mut f = Fabric::new(&spec, Box::new(Dynamic::new(ds)));
    assert_eq!(f.run(), Ending::Quiescent);
    assert!(f.scoreboard.ok(), "{:?} {:?}", f.scoreboard.counts(), f.scoreboard.problems);
    assert!(f.program().failures().is_empty(), "{:?}", f.program().failures());
    f.program().report().unwrap()
}

/// X and V of §V, written out: X = (N − 1)/(dN) (the broadcast interval (M/d)(N − 1)/N);
/// V = 2dt_p + 2 for PMNB II, 2d + 4dt_p for PMNB III ("V should be replaced by 2d + 4dt_p
/// throughout this section").
fn x_v(v: Variant, d: u32, tp: u64) -> (f64, f64) {
    let (d, n, tp) = (d as f64, (1u64 << d) as f64, tp as f64);
    let x = (n - 1.0) / (d * n);
    if v == Variant::Two { (x, 2.0 * d * tp + 2.0) } else { (x, 2.0 * d + 4.0 * d * tp) }
}

/// Stable iff ρ < 1 − λV with ρ = λ(N − 1)/d (eq. 17): ρ < 1/(1 + Vd/(N − 1)).
fn stability_limit(v: Variant, d: u32, tp: u64) -> f64 {
    let (_, vv) = x_v(v, d, tp);
    1.0 / (1.0 + vv * d as f64 / ((1u64 << d) as f64 - 1.0))
}

/// The theorem's bound at eq.-17 load ρ, written out from §II and eqs. 17–19:
/// T = W + X + aNX ≤ W + X + min((N − 1)X/2, ρW), with
/// W = ρX/(2s) + (1 − ρ)V/(2s) + (1 − ρa − λV)V/s, s = 1 − ρ − λV, λ = ρd/(N − 1),
/// and a anywhere in [(M̄ + (M̂ − 1)(2M̄ − M̂))/(2NM̄) − 1/(2N), 1/2 − 1/(2N)], M̄ = λNV/(1 − ρ)
/// (eq. 9), M̂ the smallest integer above M̄. a is unknown within its range, so the bound is
/// the largest value over it (a sweep of the range, not an argument about which end).
fn theorem_bound(v: Variant, d: u32, tp: u64, rho: f64) -> f64 {
    let n = (1u64 << d) as f64;
    let (x, vv) = x_v(v, d, tp);
    let lambda = rho * d as f64 / (n - 1.0);
    let s = 1.0 - rho - lambda * vv;
    assert!(s > 0.0, "outside the stability region");
    let m_bar = lambda * n * vv / (1.0 - rho);
    let m_hat = m_bar.floor() + 1.0;
    let a_hi = 0.5 - 0.5 / n;
    let a_lo = ((m_bar + (m_hat - 1.0) * (2.0 * m_bar - m_hat)) / (2.0 * n * m_bar) - 0.5 / n).max(0.0);
    (0..=1000)
        .map(|i| a_lo + (a_hi - a_lo) * i as f64 / 1000.0)
        .map(|a| {
            let w = rho * x / (2.0 * s) + (1.0 - rho) * vv / (2.0 * s) + (1.0 - rho * a - lambda * vv) * vv / s;
            w + x + ((n - 1.0) * x / 2.0).min(rho * w)
        })
        .fold(f64::MIN, f64::max)
}

/// Inside the stability region the simulated mean delay sits below the theorem's bound
/// (eqs. 18–19), and the backlog stays bounded; above 1/(1 + V/(NX)) it grows.
#[test]
fn dynamic_scheme_below_the_bound_and_unstable_above_the_limit() {
    for (v, d, tp) in [(Variant::Two, 5, 1u64), (Variant::Two, 6, 0), (Variant::Three, 6, 0)] {
        let limit = stability_limit(v, d, tp);
        for frac in [0.2, 0.6, 0.85] {
            let load = limit * frac;
            let r = dynamic(v, d, load, 6000, tp);
            let ctx = format!("{v:?} d={d} tp={tp} load={load}");
            let th = &r["theorem"];
            assert!((th["stability_limit_load"].as_f64().unwrap() - limit).abs() < 1e-9, "{ctx}: {th}");
            let bound = theorem_bound(v, d, tp, load);
            assert!((th["delay_bound_slots"].as_f64().unwrap() - bound).abs() < 1e-9, "{ctx}: {th} against {bound}");
            let avg = r["avg_delay_slots"].as_f64().unwrap();
            assert!(avg < bound, "{ctx}: mean delay {avg} above the bound {bound}");
            assert!(r["stable"].as_bool().unwrap(), "{ctx}: {r}");
            assert_eq!(r["unserved"], 0, "{ctx}");
        }
        let r = dynamic(v, d, (limit * 1.4).min(0.99), 6000, tp);
        assert!(!r["stable"].as_bool().unwrap(), "{v:?} d={d} above the limit: {r}");
        assert!(r["theorem"]["delay_bound_slots"].is_null());
        // The network serves at most 1/(NX + V) per node per slot, as periods of M = N show.
        assert!(r["throughput"].as_f64().unwrap() < r["offered"].as_f64().unwrap());
    }
}

/// Every t_p from 0 to 3 slots with the default buffers: everything delivered, no schedule
/// failure, the mean delay below the theorem's bound at half the stability limit.
#[test]
fn dynamic_scheme_with_prefix_steps_of_0_to_3_slots() {
    for v in [Variant::Two, Variant::Three] {
        for tp in 0..=3u64 {
            let d = 5;
            let load = 0.5 * stability_limit(v, d, tp);
            let r = dynamic(v, d, load, 4000, tp);
            let bound = theorem_bound(v, d, tp, load);
            let avg = r["avg_delay_slots"].as_f64().unwrap();
            assert!(avg < bound, "{v:?} tp={tp}: mean delay {avg} above the bound {bound}");
            assert_eq!(r["unserved"], 0, "{v:?} tp={tp}");
        }
    }
}

/// At light load the bound is the paper's 1.5V + X ("T ≤ 1.5V + X, ρ ≈ 0"; §V: 3dt_p + 3 +
/// 1/d with X rounded up to 1/d), and the simulated delay below it: at d = 8, t_p = 0,
/// PMNB II, ρ = 0.094 the bound is about 3.65 slots.
#[test]
fn dynamic_bound_at_light_load() {
    let (d, tp) = (8, 0);
    let (x, vv) = x_v(Variant::Two, d, tp);
    assert!((theorem_bound(Variant::Two, d, tp, 1e-9) - (1.5 * vv + x)).abs() < 1e-6);
    let r = dynamic(Variant::Two, d, 0.094, 1500, tp);
    let bound = r["theorem"]["delay_bound_slots"].as_f64().unwrap();
    assert!((bound - theorem_bound(Variant::Two, d, tp, 0.094)).abs() < 1e-9);
    assert!((bound - 3.65).abs() < 0.01, "{bound}");
    assert!(r["avg_delay_slots"].as_f64().unwrap() < bound, "{r}");
}

/// The synchronized prefix of §IV-A: 2d steps of t_p, after which every node knows its rank
/// in class c's order (node w renamed rotl(w, c)) and the total, for d classes at once
/// without two classes ever sharing a link in a step. With the default buffers (2 ×
/// packet-flits) and steps of 1, 2 and 3 slots: a prefix packet is min(step, packet) flits
/// and crosses its link undelayed, well within its step.
#[test]
fn scan_takes_2d_steps_for_every_class_at_once() {
    use fabric::algorithms::pmnb::{Scan, rotl};
    use std::sync::{Arc, Mutex};
    struct ScanOnly {
        scan: Scan,
        d: u32,
        /// A step in cycles, and the prefix packets' length.
        tp: u64,
        flits: u16,
        step: Vec<u32>,
        /// Per (class, node): (rank, total) read at cycle 2d t_p.
        out: Arc<Mutex<Vec<(u32, u32)>>>,
    }
    impl ScanOnly {
        fn due(&mut self, cx: &mut NodeCtx<'_>) {
            let u = cx.node.idx();
            while self.step[u] < 2 * self.d && self.step[u] as u64 * self.tp <= cx.now {
                self.scan.step(cx, self.step[u], self.flits);
                self.step[u] += 1;
            }
            let end = 2 * self.d as u64 * self.tp;
            if self.step[u] < 2 * self.d {
                cx.wake_at(self.step[u] as u64 * self.tp);
            } else if cx.now < end {
                cx.wake_at(end);
            } else {
                let n = 1usize << self.d;
                for c in 0..self.d {
                    self.out.lock().unwrap()[c as usize * n + u] = (self.scan.rank(c, cx.node.0), self.scan.total(c, cx.node.0));
                }
            }
        }
    }
    impl Program for ScanOnly {
        fn start(&mut self, cx: &mut NodeCtx<'_>) {
            self.due(cx);
        }
        fn timer(&mut self, cx: &mut NodeCtx<'_>) {
            self.due(cx);
        }
        fn receive(&mut self, cx: &mut NodeCtx<'_>, m: &Received) {
            // Each scan packet takes exactly its length: no two classes met on a link.
            assert_eq!(cx.now - m.birth, self.flits as u64, "a scan packet was delayed");
            self.scan.receive(cx.node.0, m.src.0, m.aux);
        }
    }
    for (d, packet, tp) in (1..=7u32).flat_map(|d| [(1u16, 1u64), (1, 2), (1, 3), (6, 3), (6, 6), (6, 12), (6, 18)].map(|(p, t)| (d, p, t)))
    {
        let n = 1u32 << d;
        let input = |c: u32, u: u32| (u * 7 + c * 3) % 5 < 2;
        let flits = tp.min(packet as u64) as u16;
        let mut scan = Scan::new(d, d, (1, 2));
        for c in 0..d {
            for u in 0..n {
                scan.set_input(c, u, input(c, u));
            }
        }
        let out = Arc::new(Mutex::new(vec![(u32::MAX, u32::MAX); (d * n) as usize]));
        let mut spec = FabricSpec::ideal(TopologyKind::Hypercube, &[d]);
        spec.ports = PortModel::All;
        spec.packet_flits = packet;
        spec.buffer_flits = 2 * packet;
        let prog = ScanOnly { scan, d, tp, flits, step: vec![0; n as usize], out: out.clone() };
        let mut f = Fabric::new(&spec, Box::new(prog));
        assert_eq!(f.run(), Ending::Quiescent);
        // The last scan packet is sent when step 2d − 1 begins.
        assert_eq!(f.counters.last_delivery, (2 * d as u64 - 1) * tp + flits as u64, "d={d} packet={packet} tp={tp}");
        // Class c's order: node w of A_0 is node rotl(w, c); the rank counts the active
        // nodes before it in that order.
        for c in 0..d {
            let order: Vec<u32> = (0..n).map(|w| rotl(w, c, d)).collect();
            let total = order.iter().filter(|&&u| input(c, u)).count() as u32;
            let mut before = 0;
            for &u in &order {
                assert_eq!(out.lock().unwrap()[(c * n + u) as usize], (before, total), "d={d} class {c} node {u}");
                before += input(c, u) as u32;
            }
        }
    }
}
