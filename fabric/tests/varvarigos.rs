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

/// Runs a PMNB; returns its completion in slots (packets are `flits` long).
fn run(v: Variant, d: u32, active: &[u32], flits: u16, tp_flits: u16) -> (f64, u64) {
    let mut spec = FabricSpec::ideal(TopologyKind::Hypercube, &[d]);
    spec.ports = PortModel::All;
    spec.packet_flits = flits;
    spec.buffer_flits = 2 * flits;
    let p = Pmnb::new(v, d, active, flits, tp_flits, (0, flits as u64 / v.pieces(d) as u64));
    let mut f = Fabric::new(&spec, Box::new(p));
    assert_eq!(f.run(), Ending::Quiescent);
    let ctx = format!("{v:?} d={d} M={} tp_flits={tp_flits}", active.len());
    assert!(f.scoreboard.ok(), "{ctx}: {:?} {:?}", f.scoreboard.counts(), f.scoreboard.problems);
    let pieces = v.pieces(d) as u64;
    assert_eq!(f.scoreboard.counts().expected, pieces * active.len() as u64 * ((1 << d) - 1), "{ctx}");
    (f.counters.last_delivery as f64 / flits as f64, f.counters.link_transmissions)
}

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
                    for tp in [0u16, 1] {
                        let tp_flits = tp * flits;
                        let (slots, _) = run(v, d, &active, flits, tp_flits);
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

/// §IV-C: with every node active and ranks known, PMNB III is a multinode broadcast in at
/// most ⌈N/d⌉ + 2d − 1 slots.
#[test]
fn mnb_through_pmnb3() {
    for d in 2..=8u32 {
        let n = 1u32 << d;
        let all: Vec<u32> = (0..n).collect();
        let (slots, tx) = run(Variant::Three, d, &all, 1, 0);
        assert!(slots <= (n.div_ceil(d) + 2 * d - 1) as f64, "d={d}: {slots}");
        // Each packet is packed (at most d hops) and then crosses N − 1 links.
        assert!(tx >= n as u64 * (n as u64 - 1));
    }
}

fn dynamic(variant: Variant, d: u32, load: f64, slots: u64, tp: u16) -> serde_json::Value {
    use fabric::algorithms::dynamic::{Dynamic, DynamicSpec};
    let flits = if variant == Variant::Two { d as u16 } else { 1 };
    let mut spec = FabricSpec::ideal(TopologyKind::Hypercube, &[d]);
    spec.ports = PortModel::All;
    spec.packet_flits = flits;
    spec.buffer_flits = 2 * flits;
    let window = slots * flits as u64;
    let hop = (0, flits as u64 / variant.pieces(d) as u64);
    let ds = DynamicSpec { variant, d, load, window, warmup: window / 10, flits, tp_flits: tp * flits, seed: 9, hop };
    let mut f = Fabric::new(&spec, Box::new(Dynamic::new(ds)));
    assert_eq!(f.run(), Ending::Quiescent);
    assert!(f.scoreboard.ok(), "{:?} {:?}", f.scoreboard.counts(), f.scoreboard.problems);
    assert!(f.program().failures().is_empty(), "{:?}", f.program().failures());
    f.program().report().unwrap()
}

/// Inside the stability region the simulated mean delay sits below the theorem's bound
/// (eqs. 18–19), and the backlog stays bounded; above 1/(1 + V/(NX)) it grows.
#[test]
fn dynamic_scheme_below_the_bound_and_unstable_above_the_limit() {
    for (v, d, tp) in [(Variant::Two, 5, 1u16), (Variant::Two, 6, 0), (Variant::Three, 6, 0)] {
        let n = (1u64 << d) as f64;
        // X and V of §V, written out: pmnb-2 X = (N-1)/(dN), V = 2d tp + 2; pmnb-3 X = 1/d, V = 2d + 4d tp.
        let (x, vv) = if v == Variant::Two {
            ((n - 1.0) / (d as f64 * n), 2.0 * d as f64 * tp as f64 + 2.0)
        } else {
            (1.0 / d as f64, 2.0 * d as f64 + 4.0 * d as f64 * tp as f64)
        };
        // Stable iff λ(NX + V) < 1, with λ = ρd/(N − 1).
        let limit = (n - 1.0) / d as f64 / (n * x + vv);
        for frac in [0.2, 0.6, 0.85] {
            let r = dynamic(v, d, limit * frac, 6000, tp);
            let ctx = format!("{v:?} d={d} tp={tp} load={}", limit * frac);
            let th = &r["theorem"];
            assert!((th["stability_limit_load"].as_f64().unwrap() - limit).abs() < 1e-9, "{ctx}: {th}");
            let bound = th["delay_bound_slots"].as_f64().unwrap();
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

/// The synchronized prefix of §IV-A: 2d steps of t_p, after which every node knows its rank
/// in class c's order (node w renamed rotl(w, c)) and the total, for d classes at once
/// without two classes ever sharing a link in a step.
#[test]
fn scan_takes_2d_steps_for_every_class_at_once() {
    use fabric::algorithms::pmnb::{Scan, rotl};
    use std::cell::RefCell;
    use std::rc::Rc;
    struct ScanOnly {
        scan: Scan,
        d: u32,
        tp: u16,
        step: Vec<u32>,
        /// Per (class, node): (rank, total) read at cycle 2d t_p.
        out: Rc<RefCell<Vec<(u32, u32)>>>,
    }
    impl ScanOnly {
        fn due(&mut self, cx: &mut NodeCtx<'_>) {
            let u = cx.node.idx();
            while self.step[u] < 2 * self.d && self.step[u] as u64 * self.tp as u64 <= cx.now {
                self.scan.step(cx, self.step[u], self.tp);
                self.step[u] += 1;
            }
            let end = 2 * self.d as u64 * self.tp as u64;
            if self.step[u] < 2 * self.d {
                cx.wake_at(self.step[u] as u64 * self.tp as u64);
            } else if cx.now < end {
                cx.wake_at(end);
            } else {
                let n = 1usize << self.d;
                for c in 0..self.d {
                    self.out.borrow_mut()[c as usize * n + u] = (self.scan.rank(c, cx.node.0), self.scan.total(c, cx.node.0));
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
            // Each scan packet takes exactly one step: no two classes met on a link.
            assert_eq!(cx.now - m.birth, self.tp as u64, "a scan packet was delayed");
            self.scan.receive(cx.node.0, m.src.0, m.aux);
        }
    }
    for d in 1..=7u32 {
        let n = 1u32 << d;
        let input = |c: u32, u: u32| (u * 7 + c * 3) % 5 < 2;
        let tp = 2u16;
        let mut scan = Scan::new(d, d, (1, 2));
        for c in 0..d {
            for u in 0..n {
                scan.set_input(c, u, input(c, u));
            }
        }
        let out = Rc::new(RefCell::new(vec![(u32::MAX, u32::MAX); (d * n) as usize]));
        let mut spec = FabricSpec::ideal(TopologyKind::Hypercube, &[d]);
        spec.ports = PortModel::All;
        spec.packet_flits = tp;
        spec.buffer_flits = 2 * tp;
        let prog = ScanOnly { scan, d, tp, step: vec![0; n as usize], out: out.clone() };
        let mut f = Fabric::new(&spec, Box::new(prog));
        assert_eq!(f.run(), Ending::Quiescent);
        // The last scan packet arrives at the end of step 2d − 1: 2d steps of t_p.
        assert_eq!(f.counters.last_delivery, 2 * d as u64 * tp as u64, "d={d}");
        // Class c's order: node w of A_0 is node rotl(w, c); the rank counts the active
        // nodes before it in that order.
        for c in 0..d {
            let order: Vec<u32> = (0..n).map(|w| rotl(w, c, d)).collect();
            let total = order.iter().filter(|&&u| input(c, u)).count() as u32;
            let mut before = 0;
            for &u in &order {
                assert_eq!(out.borrow()[(c * n + u) as usize], (before, total), "d={d} class {c} node {u}");
                before += input(c, u) as u32;
            }
        }
    }
}
