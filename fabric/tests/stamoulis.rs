//! Stamoulis & Tsitsiklis, "An efficient algorithm for multiple simultaneous broadcasts in
//! the hypercube": the parallel prefix and the K-broadcast variants against their bounds,
//! the bounds written out from the paper (§3.1–§3.3), never taken from the code.

use fabric::algorithms::kbcast::{ActiveSet, KBcast, Variant};
use fabric::algorithms::prefix::{Learned, Prefix};
use fabric::*;
use std::sync::{Arc, Mutex};

/// Per node: the cycle it learned its rank (or the total) and the value.
type LearnedLog = Arc<Mutex<Vec<Option<(u64, u32)>>>>;

/// Runs the prefix alone and records when and what every node learns.
struct PrefixOnly {
    p: Prefix,
    learned: LearnedLog,
    /// A step, in cycles, and the prefix packets' length.
    step: u64,
    flits: u16,
}

impl PrefixOnly {
    fn note(&self, cx: &NodeCtx<'_>, l: Learned) {
        match l {
            Learned::Rank(r) | Learned::Total(r) => self.learned.lock().unwrap()[cx.node.idx()] = Some((cx.now, r)),
            Learned::Nothing => {}
        }
    }
}

impl Program for PrefixOnly {
    fn start(&mut self, cx: &mut NodeCtx<'_>) {
        let l = self.p.start(cx, 0);
        self.note(cx, l);
    }
    fn receive(&mut self, cx: &mut NodeCtx<'_>, m: &Received) {
        // Sent when its step began, in before the next one: never late, never long.
        assert!(cx.now - m.birth <= self.step, "node {}: a prefix packet from {} took {} cycles", cx.node.0, m.src.0, cx.now - m.birth);
        assert_eq!(m.flits, self.flits);
        let l = self.p.receive(cx, m.src.0, m.aux, 0);
        self.note(cx, l);
    }
    fn timer(&mut self, cx: &mut NodeCtx<'_>) {
        self.p.flush(cx);
    }
}

/// The prefix gives every node Σ_{y ≥ x} a_y after exactly 2d steps (d up, d down) of
/// t_p slots each, with the CLI's default buffers (2 × packet-flits): a prefix packet is
/// min(step, packet) flits long and a step starts every t_p slots, so the last packet of
/// step 2d − 1 lands at (2d − 1)·step + its length.
#[test]
fn prefix_takes_2d_steps_and_ranks_correctly() {
    for d in 1..=8u32 {
        for (packet, step) in [(1u16, 1u64), (1, 2), (1, 3), (4, 1), (4, 4), (4, 8), (4, 12)] {
            let n = 1usize << d;
            let flits = step.min(packet as u64);
            let a: Vec<u32> = (0..n).map(|x| ((x * 7 + 3) % 5 == 0) as u32 + (x % 11 == 0) as u32).collect();
            let learned = Arc::new(Mutex::new(vec![None; n]));
            let mut spec = FabricSpec::ideal(TopologyKind::Hypercube, &[d]);
            spec.packet_flits = packet;
            spec.buffer_flits = 2 * packet;
            let p = Prefix::new(d, a.clone(), step, flits as u16);
            let prog = PrefixOnly { p, learned: learned.clone(), step, flits: flits as u16 };
            let mut f = Fabric::new(&spec, Box::new(prog));
            assert_eq!(f.run(), Ending::Quiescent, "d={d} packet={packet} step={step}");
            let l = learned.lock().unwrap();
            let mut last = 0;
            for x in 0..n {
                let (t, r) = l[x].unwrap_or_else(|| panic!("d={d}: node {x} never learned its rank"));
                let expect: u32 = a[x..].iter().sum();
                assert_eq!(r, expect, "d={d} node {x}");
                last = last.max(t);
            }
            assert_eq!(last, (2 * d as u64 - 1) * step + flits, "d={d} packet={packet} step={step}: 2d steps");
        }
    }
}

/// Runs a variant on the ideal all-port d-cube with `flits`-flit packets and the CLI's
/// default buffers (2 × packet-flits); a prefix step of `tp` slots.
fn run_with(variant: Variant, d: u32, active: &[u32], flits: u16, tp: u64, seed: u64) -> Fabric {
    let mut spec = FabricSpec::ideal(TopologyKind::Hypercube, &[d]);
    spec.ports = PortModel::All;
    spec.packet_flits = flits;
    spec.buffer_flits = 2 * flits;
    let mut f = Fabric::new(&spec, Box::new(KBcast::new(variant, d, active, flits, tp * flits as u64, seed)));
    let ctx = format!("{variant:?} d={d} K={} flits={flits} tp={tp}", active.len());
    assert_eq!(f.run(), Ending::Quiescent, "{ctx}");
    assert!(f.scoreboard.ok(), "{ctx}: {:?} {:?}", f.scoreboard.counts(), f.scoreboard.problems);
    assert_eq!(f.scoreboard.counts().expected, active.len() as u64 * ((1 << d) - 1), "{ctx}");
    assert!(f.program().failures().is_empty(), "{ctx}: {:?}", f.program().failures());
    f
}

fn run(variant: Variant, d: u32, active: &[u32], tp: u64, seed: u64) -> Fabric {
    run_with(variant, d, active, 1, tp, seed)
}

/// §3.1's lower bound max{d, (2^d − 1)K/(d 2^d)}, in whole slots.
fn lower_bound(d: u32, k: u32) -> u64 {
    let (d, k, n) = (d as u64, k as u64, 1u64 << d);
    d.max(((n - 1) * k).div_ceil(d * n))
}

/// The paper's bound for each variant, t_p in slots (None: the paper gives none).
/// - prefix (§3.2): phase 1 is 2d + 1 prefix steps (2d for the prefix, one for node 0 to
///   tell the roots K), phases 2 and 3 at most 2⌈K/d⌉ + 2d − 1 slots ("2⌈K/d⌉ + 4d" with
///   t_p = 1); with K = 2^d phase 1 is not needed (r_x = 2^d − x): 2⌈2^d/d⌉ + 2d − 1.
/// - same-tree (§3.3.1): d + K − 1.
/// - rank-rotated (§3.3.2): d, after the prefix's 2d steps when the ranks are computed
///   ("3d slots" with t_p = 1).
fn paper_bound(variant: Variant, d: u32, k: u32, tp: u64) -> Option<u64> {
    let (d, k) = (d as u64, k as u64);
    let tp = if k == 1 << d { 0 } else { tp };
    match variant {
        Variant::Prefix => Some((2 * d + 1) * tp + 2 * k.div_ceil(d) + 2 * d - 1),
        Variant::SameTree => Some(d + k - 1),
        Variant::RankRotated => Some(2 * d * tp + d),
        Variant::Random => None,
    }
}

/// Every variant meets its bound and the lower bound on random, clustered and adversarial
/// sets; the ranked variants with t_p = 0 (ranks known), 1, 2 and 3 slots, with the default
/// buffers.
#[test]
fn variants_meet_their_bounds() {
    for d in 3..=7u32 {
        let n = 1u32 << d;
        for set in [ActiveSet::Random, ActiveSet::Subcube, ActiveSet::Adversarial] {
            for k in [1, d, 2 * d, n / 4, n / 2, n] {
                if k > set.capacity(d) {
                    continue;
                }
                let active = set.choose(d, k, 17 + k as u64);
                let mut runs = vec![(Variant::Random, 0u64), (Variant::SameTree, 0)];
                for tp in 0..=3 {
                    runs.push((Variant::Prefix, tp));
                    if k <= d {
                        runs.push((Variant::RankRotated, tp));
                    }
                }
                for (variant, tp) in runs {
                    let t = run(variant, d, &active, tp, 5).counters.last_delivery;
                    let ctx = format!("{variant:?} tp={tp} d={d} K={k} {set:?}");
                    let lower = lower_bound(d, k);
                    assert!(t >= lower, "{ctx}: {t} below the lower bound {lower}");
                    if let Some(b) = paper_bound(variant, d, k, tp) {
                        assert!(t <= b, "{ctx}: {t} slots > bound {b}");
                    }
                }
            }
        }
    }
}

/// Longer packets: a slot of 4 flits, a prefix step of t_p slots (a 4-flit prefix packet
/// and waiting), the default 8-flit buffers; the bounds in slots are the same.
#[test]
fn ranked_variants_with_multi_flit_packets() {
    for d in [4u32, 6] {
        for tp in 0..=3u64 {
            let active = ActiveSet::Random.choose(d, 3 * d, 9);
            let t = run_with(Variant::Prefix, d, &active, 4, tp, 1).counters.last_delivery;
            let b = paper_bound(Variant::Prefix, d, 3 * d, tp).unwrap();
            assert!(t <= 4 * b, "prefix d={d} tp={tp}: {t} cycles > {b} slots");
            let active = ActiveSet::Random.choose(d, d, 9);
            let t = run_with(Variant::RankRotated, d, &active, 4, tp, 1).counters.last_delivery;
            assert_eq!(t, 4 * paper_bound(Variant::RankRotated, d, d, tp).unwrap(), "rank-rotated d={d} tp={tp}");
        }
    }
}

/// §3.2: with every node active (K = 2^d, the multinode broadcast) the ranks are known,
/// r_x = 2^d − x, so phase 1 is skipped whatever t_p is: at most 2⌈2^d/d⌉ + 2d − 1 slots.
#[test]
fn all_nodes_active_skip_the_prefix() {
    for d in 2..=8u32 {
        let n = 1u32 << d;
        let all: Vec<u32> = (0..n).collect();
        let bound = 2 * n.div_ceil(d) as u64 + 2 * d as u64 - 1;
        for tp in 0..=3 {
            let f = run(Variant::Prefix, d, &all, tp, 1);
            let t = f.counters.last_delivery;
            assert!(t <= bound, "d={d} tp={tp}: {t} slots > {bound}");
            assert_eq!(f.program().report().unwrap()["prefix_steps"], 0, "d={d} tp={tp}");
        }
    }
}

/// §3.3.2: K = d broadcasters with known ranks finish in exactly d slots; computing the
/// ranks first takes the prefix's 2d steps of t_p ("3d slots" with t_p = 1).
#[test]
fn rank_rotated_takes_d_slots() {
    for d in 2..=8u32 {
        for seed in 0..3 {
            let active = ActiveSet::Random.choose(d, d, seed);
            for tp in 0..=3u64 {
                let t = run(Variant::RankRotated, d, &active, tp, 0).counters.last_delivery;
                assert_eq!(t, 2 * d as u64 * tp + d as u64, "d={d} tp={tp} seed={seed}");
            }
        }
    }
}

/// §3.1: against fixed increasing-order trees an adversary sends every packet into node 0
/// through one arc: same-tree needs at least K slots, the prefix algorithm O(K/d + d).
#[test]
fn adversarial_sets_defeat_fixed_trees() {
    let d = 8;
    let k = 96;
    let active = ActiveSet::Adversarial.choose(d, k, 0);
    assert!(active.iter().all(|&x| x >> (d - 1) == 1));
    let same = run(Variant::SameTree, d, &active, 0, 0).counters.last_delivery;
    let pre = run(Variant::Prefix, d, &active, 1, 0).counters.last_delivery;
    assert!(same >= k as u64, "same-tree {same}");
    assert!(pre <= 2 * (k as u64).div_ceil(d as u64) + 4 * d as u64, "prefix {pre}");
    assert!(pre < same);
}
