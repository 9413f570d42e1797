//! Extended dominating nodes (`edn`): one-to-all broadcast on the all-port wormhole mesh
//! M(4^k, 4^k) with XY routing, after the lecture notes' "Extended dominating set approach"
//! (a hierarchy of extended dominating nodes, level-i EDNs informed from those of the levels
//! above, the last level dominating every node).
//!
//! The hierarchy here: a block of side 4^j is a 4×4 array of sub-blocks of side 4^(j−1),
//! and its EDNs are the hubs (one node at a fixed offset) of some of its sub-blocks. In two
//! rounds the hub of a block informs the hubs of all 16 sub-blocks:
//! 1. the hub, in sub-block (1,1), informs four EDNs: the hubs of sub-blocks (1,2) and (1,0)
//!    straight up and down its column, and of (3,1) and (0,3) to its east and west;
//! 2. these five inform the other eleven sub-block hubs, at most one worm each to the
//!    east, west, north and south ([`STEP`]).
//!
//! Every worm of a step runs inside its block, and XY paths between hubs whose offsets in
//! their sub-blocks agree overlap exactly when the same paths on a 4×4 mesh of single nodes
//! do, so one pattern (found by exhaustive search over the 4×4 mesh; the tests check every
//! round's links in the run) serves every level, all blocks of a level at once. Level by
//! level, k levels take 2k rounds from the mesh's hub (the node at (h, h), h = (4^k − 1)/3);
//! from any other source one round more, the source first sending to the hub (and nobody
//! sending to the source later). M(16,16): 5 rounds from any source but the hub (4 from the
//! hub), as the notes' three-level hierarchy; M(64,64): 7 (6). The notes' lower bound
//! ⌈log_5 N⌉ is 4 and 6.

use super::Bounds;
use super::entry::{self, Algorithm, Ports};
use super::rounds::{Plan, RoundBroadcast, round_period};
use crate::topology::{Topology, TopologyKind};
use router::NodeId;

/// The hub's sub-block in its block, and the first round's four EDNs (sub-block positions
/// (x, y) in the 4×4 array).
pub const HUB: (u32, u32) = (1, 1);
pub const FIRST: [(u32, u32); 4] = [(1, 2), (1, 0), (0, 3), (3, 1)];
/// The second round: (sender, receiver) among sub-block positions.
pub const STEP: [((u32, u32), (u32, u32)); 11] = [
    ((1, 1), (0, 0)),
    ((1, 1), (1, 3)),
    ((1, 1), (2, 0)),
    ((1, 2), (0, 1)),
    ((1, 2), (2, 2)),
    ((1, 0), (0, 2)),
    ((1, 0), (2, 1)),
    ((0, 3), (3, 2)),
    ((3, 1), (2, 3)),
    ((3, 1), (3, 0)),
    ((3, 1), (3, 3)),
];

/// k if the topology is M(4^k, 4^k), k ≥ 1.
pub fn levels(topo: &Topology) -> Option<u32> {
    if topo.kind != TopologyKind::Mesh || topo.ndims() != 2 || topo.sizes[0] != topo.sizes[1] {
        return None;
    }
    let side = topo.sizes[0];
    (side >= 4 && side.is_power_of_two() && side.trailing_zeros().is_multiple_of(2)).then(|| side.trailing_zeros() / 2)
}

/// The hub's offset in a block of side 4^j: (h, h), h = (4^j − 1)/3.
pub fn hub_offset(j: u32) -> u32 {
    (4u32.pow(j) - 1) / 3
}

/// The plan from `root` on M(4^k, 4^k) (`topo` must be one: see [`levels`]).
pub fn plan(topo: &Topology, root: NodeId) -> Plan {
    let k = levels(topo).expect("edn runs on M(4^k, 4^k)");
    let side = topo.sizes[0];
    let at = |x: u32, y: u32| topo.node_at(&[x, y]);
    let hub = at(hub_offset(k), hub_offset(k));
    let mut plan = Plan::new(topo.nodes(), root);
    let mut round = 0;
    if root != hub {
        round = 1;
        plan.add(1, root, hub);
    }
    // Level j: blocks of side 4^j, sub-blocks of side s = 4^(j−1) with hubs at offset o.
    for j in (1..=k).rev() {
        let block = 4u32.pow(j);
        let (s, o) = (block / 4, hub_offset(j - 1));
        for bx in (0..side).step_by(block as usize) {
            for by in (0..side).step_by(block as usize) {
                let node = |(u, v): (u32, u32)| at(bx + u * s + o, by + v * s + o);
                let mut send = |r: u32, from: (u32, u32), to: (u32, u32)| {
                    if node(to) != root {
                        plan.add(r, node(from), node(to));
                    }
                };
                for to in FIRST {
                    send(round + 1, HUB, to);
                }
                for (from, to) in STEP {
                    send(round + 2, from, to);
                }
            }
        }
        round += 2;
    }
    plan.finish()
}

pub const EDN: Algorithm = Algorithm {
    ports: Ports::All(entry::SIMULTANEOUS),
    rooted: true,
    shape: Some(|topo| match levels(topo) {
        Some(_) => Ok(()),
        None => Err("edn runs on square meshes of side 4^k: 4x4, 16x16, 64x64, 256x256".to_string()),
    }),
    rounds: true,
    ..Algorithm::new(
        "edn",
        &[TopologyKind::Mesh],
        "one-to-all broadcast lecture notes, 'Extended dominating set approach' (hierarchy of extended dominating nodes on M(4^k,4^k), XY routing)",
        "all-port wormhole broadcast from --root on M(4^k,4^k) in synchronous rounds: 2k rounds from the hub, 2k+1 from elsewhere (M(16,16): 5); reports rounds and lower_bound_rounds ceil(log5 N)",
        |i| {
            let l = i.spec.packet_flits;
            (Box::new(RoundBroadcast::new(plan(&i.spec.topology(), i.root), round_period(i.spec, l), l)), Bounds::default())
        },
    )
};

#[cfg(test)]
mod tests {
    use super::*;

    /// The pattern on the 4×4 mesh of single nodes: the first round reaches four nodes
    /// straight up, down, and to either side; the second informs each of the other eleven
    /// once, each sender at most once per direction, on XY paths with no link in common.
    #[test]
    fn step_pattern_is_a_two_round_broadcast_of_the_4x4_mesh() {
        let topo = Topology::new(TopologyKind::Mesh, &[4, 4]);
        let p = plan(&topo, topo.node_at(&[HUB.0, HUB.1]));
        let rounds = p.informed_rounds().unwrap();
        assert_eq!(rounds.iter().max(), Some(&2));
        for r in [1, 2] {
            let mut links = std::collections::HashSet::new();
            let mut dirs = std::collections::HashSet::new();
            let round: Vec<((u32, u32), (u32, u32))> = if r == 1 { FIRST.iter().map(|&t| (HUB, t)).collect() } else { STEP.to_vec() };
            for (a, b) in round {
                // East, west, or (same column) north, south.
                let d = if a.0 != b.0 { (b.0.cmp(&a.0), std::cmp::Ordering::Equal) } else { (std::cmp::Ordering::Equal, b.1.cmp(&a.1)) };
                assert!(dirs.insert((a, d)), "{a:?} sends twice in one direction in round {r}");
                let (mut x, mut y) = a;
                while (x, y) != b {
                    let next = if x != b.0 { (if b.0 > x { x + 1 } else { x - 1 }, y) } else { (x, if b.1 > y { y + 1 } else { y - 1 }) };
                    assert!(links.insert(((x, y), next)), "round {r}: link {:?} used twice", ((x, y), next));
                    (x, y) = next;
                }
            }
        }
    }

    /// Plans inform every node once, in 2k rounds from the hub and 2k + 1 from elsewhere.
    #[test]
    fn plans_inform_every_node_once() {
        for k in 1..=3u32 {
            let side = 4u32.pow(k);
            let topo = Topology::new(TopologyKind::Mesh, &[side, side]);
            let h = hub_offset(k);
            for (x, y) in [(h, h), (0, 0), (side - 1, 3 % side), (h, 0), (side / 2, side - 1)] {
                let root = topo.node_at(&[x, y]);
                let p = plan(&topo, root);
                let rounds = p.informed_rounds().unwrap_or_else(|e| panic!("k={k} root ({x},{y}): {e}"));
                let expect = 2 * k + ((x, y) != (h, h)) as u32;
                assert_eq!(*rounds.iter().max().unwrap(), expect, "k={k} root ({x},{y})");
            }
        }
    }
}
