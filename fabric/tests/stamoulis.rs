//! Stamoulis & Tsitsiklis, "An efficient algorithm for multiple simultaneous broadcasts in
//! the hypercube": the parallel prefix and the K-broadcast variants against their bounds.

use fabric::algorithms::kbcast::{ActiveSet, KBcast, Variant, bounds};
use fabric::algorithms::prefix::{Learned, Prefix};
use fabric::*;
use router::NodeId;
use std::cell::RefCell;
use std::rc::Rc;

/// Per node: the cycle it learned its rank (or the total) and the value.
type LearnedLog = Rc<RefCell<Vec<Option<(u64, u32)>>>>;

/// Runs the prefix alone and records when and what every node learns.
struct PrefixOnly {
    p: Prefix,
    learned: LearnedLog,
}

impl PrefixOnly {
    fn note(&self, cx: &NodeCtx<'_>, l: Learned) {
        match l {
            Learned::Rank(r) | Learned::Total(r) => self.learned.borrow_mut()[cx.node.idx()] = Some((cx.now, r)),
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
        let l = self.p.receive(cx, m.src.0, m.aux, 0);
        self.note(cx, l);
    }
}

/// The prefix gives every node Σ_{y ≥ x} a_y after exactly 2d steps (d up, d down), each a
/// prefix packet of t_p flits.
#[test]
fn prefix_takes_2d_steps_and_ranks_correctly() {
    for d in 1..=8u32 {
        for tp in [1u16, 3] {
            let n = 1usize << d;
            let a: Vec<u32> = (0..n).map(|x| ((x * 7 + 3) % 5 == 0) as u32 + (x % 11 == 0) as u32).collect();
            let learned = Rc::new(RefCell::new(vec![None; n]));
            let spec = FabricSpec::ideal(TopologyKind::Hypercube, &[d]);
            let mut spec = spec;
            spec.packet_flits = tp;
            spec.buffer_flits = 2 * tp;
            let mut f = Fabric::new(&spec, Box::new(PrefixOnly { p: Prefix::new(d, a.clone(), tp), learned: learned.clone() }));
            assert_eq!(f.run(), Ending::Quiescent);
            let l = learned.borrow();
            let mut last = 0;
            for x in 0..n {
                let (t, r) = l[x].unwrap_or_else(|| panic!("d={d}: node {x} never learned its rank"));
                let expect: u32 = a[x..].iter().sum();
                assert_eq!(r, expect, "d={d} node {x}");
                last = last.max(t);
            }
            assert_eq!(last, 2 * d as u64 * tp as u64, "d={d} tp={tp}: 2d steps");
        }
    }
}

fn run(variant: Variant, d: u32, active: &[u32], tp: u16, seed: u64) -> Fabric {
    let mut spec = FabricSpec::ideal(TopologyKind::Hypercube, &[d]);
    spec.ports = PortModel::All;
    let mut f = Fabric::new(&spec, Box::new(KBcast::new(variant, d, active, 1, tp, seed)));
    assert_eq!(f.run(), Ending::Quiescent);
    assert!(f.scoreboard.ok(), "{variant:?} d={d} K={}: {:?} {:?}", active.len(), f.scoreboard.counts(), f.scoreboard.problems);
    assert_eq!(f.scoreboard.counts().expected, active.len() as u64 * ((1 << d) - 1));
    f
}

/// Every variant meets its bound and the lower bound on random, clustered and adversarial
/// sets; the prefix variant with t_p = 1 and t_p = 0 (ranks known).
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
                for (variant, tp) in [(Variant::Prefix, 1u16), (Variant::Prefix, 0), (Variant::Random, 0), (Variant::SameTree, 0)] {
                    let f = run(variant, d, &active, tp, 5);
                    let b = bounds(variant, d, k, tp as f64);
                    let t = f.counters.last_delivery;
                    let ctx = format!("{variant:?} tp={tp} d={d} K={k} {set:?}");
                    assert!(t >= b.lower.unwrap(), "{ctx}: {t} below the lower bound {:?}", b.lower);
                    if let Some(p) = b.paper {
                        assert!(t <= p, "{ctx}: {t} slots > bound {p}");
                    }
                }
            }
        }
    }
}

/// With every node active and the ranks known, the prefix algorithm is a multinode
/// broadcast within 2⌈2^d/d⌉ + 2d − 1 slots.
#[test]
fn all_nodes_active_without_prefix() {
    for d in 2..=8u32 {
        let n = 1u32 << d;
        let all: Vec<u32> = (0..n).collect();
        let f = run(Variant::Prefix, d, &all, 0, 1);
        assert!(f.counters.last_delivery < 2 * n.div_ceil(d) as u64 + 2 * d as u64);
    }
}

/// §3.3.2: K = d broadcasters with known ranks finish in exactly d slots; with the prefix
/// in 3d + 1 (the prefix's 2d + 1 steps, then d).
#[test]
fn rank_rotated_takes_d_slots() {
    for d in 2..=8u32 {
        for seed in 0..3 {
            let active = ActiveSet::Random.choose(d, d, seed);
            assert_eq!(run(Variant::RankRotated, d, &active, 0, 0).counters.last_delivery, d as u64);
            assert!(run(Variant::RankRotated, d, &active, 1, 0).counters.last_delivery <= 3 * d as u64 + 1);
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
    let _ = NodeId(0);
}
