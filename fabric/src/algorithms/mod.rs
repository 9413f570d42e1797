//! The algorithms, as per-node programs, and the registry `flitwave list` shows.

pub mod accumulate;
pub mod dilated_diagonal;
pub mod dynamic;
pub mod edn;
pub mod hypercube;
pub mod kbcast;
pub mod mnb;
pub mod mnb_sbt;
pub mod pmnb;
pub mod prefix;
pub mod rounds;
pub mod scatter;
pub mod seidel;
pub mod snb;
pub mod total_exchange;
pub mod traffic;
pub mod wormhole;

use crate::topology::TopologyKind;

/// How a broadcast is forwarded at intermediate nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Forwarding {
    /// Each node receives the packet, then sends new packets through its NIC (the papers' model).
    Node,
    /// The routers replicate one packet along the broadcast tree (hardware multicast).
    Router,
}

impl Forwarding {
    pub const NAMES: &'static str = "node, router";
    pub fn parse(s: &str) -> Option<Forwarding> {
        match s {
            "node" => Some(Forwarding::Node),
            "router" => Some(Forwarding::Router),
            _ => None,
        }
    }
}

/// What `flitwave list` says about an algorithm, and what it accepts.
#[derive(Clone, Copy, Debug)]
pub struct AlgorithmInfo {
    pub name: &'static str,
    pub topologies: &'static [TopologyKind],
    pub reference: &'static str,
    pub summary: &'static str,
    /// Defined only for --ports all (MLA) and one (SLA), not K in between.
    pub all_or_one_port: bool,
    /// Takes --root.
    pub rooted: bool,
    /// Can run with --forwarding router.
    pub router_forwarding: bool,
}

const HYPERCUBE: &[TopologyKind] = &[TopologyKind::Hypercube];
const LINEAR_MESH: &[TopologyKind] = &[TopologyKind::Linear, TopologyKind::Mesh];

pub const ALGORITHMS: &[AlgorithmInfo] = &[
    AlgorithmInfo {
        name: "snb",
        topologies: &[TopologyKind::Hypercube, TopologyKind::Linear, TopologyKind::Mesh, TopologyKind::Torus],
        reference: "Bertsekas et al. 1991, sec. 2 (hypercube spanning binomial tree, Fig. 4); one-to-all broadcast lecture notes, 'Meshes' (dimension-order tree, one-port farthest-first)",
        summary: "single-node broadcast from --root; d slots on the d-cube (all-port and one-port), the root's eccentricity on all-port meshes",
        all_or_one_port: false,
        rooted: true,
        router_forwarding: true,
    },
    AlgorithmInfo {
        name: "accumulate",
        topologies: HYPERCUBE,
        reference: "Bertsekas et al. 1991, sec. 1-2 (single node accumulation, the dual of the broadcast, Fig. 2)",
        summary: "single-node accumulation at --root, combining at each node along the binomial tree reversed; d slots, 2^d-1 transmissions",
        all_or_one_port: true,
        rooted: true,
        router_forwarding: false,
    },
    AlgorithmInfo {
        name: "mnb",
        topologies: HYPERCUBE,
        reference: "Bertsekas et al. 1991, sec. 2 (link sets A_1..A_q from the rotation classes R_kn, numbering n(t), m(t); SLA: the same sets one link at a time)",
        summary: "multinode broadcast; ceil((2^d-1)/d) slots all-port, 2^d-1 one-port, 2^d(2^d-1) transmissions",
        all_or_one_port: true,
        rooted: false,
        router_forwarding: false,
    },
    AlgorithmInfo {
        name: "mnb-ring",
        topologies: HYPERCUBE,
        reference: "Bertsekas et al. 1991, sec. 2 (ring embedded in the cube, SLA alternative)",
        summary: "multinode broadcast around a Gray-code ring; 2^d-1 slots",
        all_or_one_port: true,
        rooted: false,
        router_forwarding: false,
    },
    AlgorithmInfo {
        name: "multi-accumulate",
        topologies: HYPERCUBE,
        reference: "Bertsekas et al. 1991, sec. 1-2 (multinode accumulation, dual of the multinode broadcast)",
        summary: "every node accumulates a value from every other node along the MNB trees reversed; same times as mnb",
        all_or_one_port: true,
        rooted: false,
        router_forwarding: false,
    },
    AlgorithmInfo {
        name: "scatter",
        topologies: HYPERCUBE,
        reference: "Bertsekas et al. 1991, sec. 3 (spanning tree from compatible classes, farthest-first; SLA: one packet per slot)",
        summary: "single-node scatter from --root; ceil((2^d-1)/d) slots all-port, 2^d-1 one-port, d*2^(d-1) transmissions",
        all_or_one_port: true,
        rooted: true,
        router_forwarding: false,
    },
    AlgorithmInfo {
        name: "gather",
        topologies: HYPERCUBE,
        reference: "Bertsekas et al. 1991, sec. 3 (the scatter's schedule reversed in time)",
        summary: "single-node gather at --root; same times and transmissions as scatter",
        all_or_one_port: true,
        rooted: true,
        router_forwarding: false,
    },
    AlgorithmInfo {
        name: "total-exchange",
        topologies: HYPERCUBE,
        reference: "Bertsekas et al. 1991, sec. 4 (three-phase recursion, phase three overlapping phase two, and its implementation rules; SLA: MTADEA of [SaS85])",
        summary: "every node sends a distinct packet to every other; 2^(d-1) slots all-port, d*2^(d-1) one-port, d*2^(2d-1) transmissions",
        all_or_one_port: true,
        rooted: false,
        router_forwarding: false,
    },
    AlgorithmInfo {
        name: "kbcast",
        topologies: HYPERCUBE,
        reference: "Stamoulis & Tsitsiklis 1993: sec. 3.2 (prefix ranking, d edge-disjoint binomial trees, termination packets), its randomized variant, sec. 3.3.1 (same-tree), sec. 3.3.2 (rank-rotated)",
        summary: "K simultaneous broadcasts from --active / --active-count; --variant prefix (<= 2ceil(K/d)+2d-1+(2d+1)tp), random, same-tree (<= d+K-1), rank-rotated (d, K <= d); --tp prefix step in slots",
        all_or_one_port: false,
        rooted: false,
        router_forwarding: false,
    },
    AlgorithmInfo {
        name: "pmnb-1",
        topologies: HYPERCUBE,
        reference: "Varvarigos & Bertsekas, sec. IV-A (rank by parallel prefix, packing on disjoint paths, subcube single-node broadcast, subcube multinode broadcast)",
        summary: "partial multinode broadcast from --active / --active-count; <= ceil((2^m-1)/m) + 2d + 2d tp - m slots, m = ceil(log2 M)",
        all_or_one_port: false,
        rooted: false,
        router_forwarding: false,
    },
    AlgorithmInfo {
        name: "pmnb-2",
        topologies: HYPERCUBE,
        reference: "Varvarigos & Bertsekas, sec. IV-B, Theorem 3 (d mini-packets routed by the shifted algorithms A_c)",
        summary: "partial multinode broadcast, packets split into d mini-packets (--packet-flits a multiple of d); <= (N-1)/N M/d + 2d tp + 2 slots",
        all_or_one_port: false,
        rooted: false,
        router_forwarding: false,
    },
    AlgorithmInfo {
        name: "pmnb-3",
        topologies: HYPERCUBE,
        reference: "Varvarigos & Bertsekas, sec. IV-C (classes r mod d routed by A_c, no splitting); with --active all --tp 0 the paper's new MNB",
        summary: "partial multinode broadcast without splitting; <= ceil(M/d) + 2d + 4d tp - 1 slots (MNB: ceil(N/d) + 2d - 1)",
        all_or_one_port: false,
        rooted: false,
        router_forwarding: false,
    },
    AlgorithmInfo {
        name: "dynamic",
        topologies: HYPERCUBE,
        reference: "Varvarigos & Bertsekas, sec. II (dynamic broadcasting scheme and theorem), sec. V (hypercube: eqs. 17-19, stability limit)",
        summary: "Poisson broadcast requests at --load rho (eq. 17) for --cycles, served by repeated PMNBs (--pmnb pmnb-2|pmnb-3); mean delay, CI, percentiles, backlog, stability, the theorem's bound",
        all_or_one_port: false,
        rooted: false,
        router_forwarding: false,
    },
    AlgorithmInfo {
        name: "mnb-sbt",
        topologies: &[TopologyKind::Hypercube, TopologyKind::Mesh, TopologyKind::Torus],
        reference: "Bertsekas et al. 1991, sec. 2, Fig. 5 (every node broadcasts on its own translated binomial tree); meshes and tori: one-to-all broadcast lecture notes, 'Meshes' (each node on its dimension-order tree, as snb)",
        summary: "multinode broadcast by superposed spanning trees: binomial on the cube (not optimal: links of one type collide, the baseline the optimal MNB improves on), dimension-order on meshes and tori; --forwarding router: one packet per node, copied by the routers",
        all_or_one_port: false,
        rooted: false,
        router_forwarding: true,
    },
    AlgorithmInfo {
        name: "edn",
        topologies: &[TopologyKind::Mesh],
        reference: "one-to-all broadcast lecture notes, 'Extended dominating set approach' (hierarchy of extended dominating nodes on M(4^k,4^k), XY routing)",
        summary: "all-port wormhole broadcast from --root on M(4^k,4^k) in synchronous rounds: 2k rounds from the hub, 2k+1 from elsewhere (M(16,16): 5); reports rounds and lower_bound_rounds ceil(log5 N)",
        all_or_one_port: false,
        rooted: true,
        router_forwarding: false,
    },
    AlgorithmInfo {
        name: "rd",
        topologies: &[TopologyKind::Linear, TopologyKind::Mesh, TopologyKind::Torus],
        reference: "one-to-all broadcast lecture notes, 'Wormhole switching': one-port meshes (recursive doubling dimension by dimension, any sides and source) and tori (T(z))",
        summary: "one-port wormhole recursive doubling from --root; sum of ceil(log2 z_i) rounds, the notes' T(z) cost beside the measured time",
        all_or_one_port: false,
        rooted: true,
        router_forwarding: false,
    },
    AlgorithmInfo {
        name: "dilated-diagonal",
        topologies: &[TopologyKind::Torus],
        reference: "one-to-all broadcast lecture notes, 'Dilated-diagonal-based approach' (rows in five bands, align to the diagonal, diagonal bands; XY routing)",
        summary: "all-port wormhole broadcast from --root on 2-D tori T(X,Y) in synchronous rounds: ceil(log5 Y) + 1 + ceil(log5 X) when X divides Y, dilated diagonals of slope X/g otherwise (g a common divisor); reports rounds and lower_bound_rounds ceil(log5 XY)",
        all_or_one_port: false,
        rooted: true,
        router_forwarding: false,
    },
    AlgorithmInfo {
        name: "dta",
        topologies: HYPERCUBE,
        reference: "one-to-all broadcast lecture notes, 'Wormhole switching', Hypercube: the double tree algorithm (DTA), e-cube routing",
        summary: "all-port wormhole broadcast from --root through the complement node; ceil(d/2) rounds (2 on Q2), no two worms of a round on one link",
        all_or_one_port: false,
        rooted: true,
        router_forwarding: false,
    },
    AlgorithmInfo {
        name: "ho-kao",
        topologies: HYPERCUBE,
        reference: "one-to-all broadcast lecture notes, 'Wormhole switching', Hypercube: Ho-Kao (dimension-simple path, d+1 subcubes, DTA inside)",
        summary: "all-port wormhole broadcast from --root; Q7 in 3 rounds; against the lower bound ceil(d/log2(d+1))",
        all_or_one_port: false,
        rooted: true,
        router_forwarding: false,
    },
    AlgorithmInfo {
        name: "st",
        topologies: LINEAR_MESH,
        reference: "Seidel 1993, sec. 3.1 (linear: eq. 1, interleaved subarrays eq. 2), sec. 3.2 (mesh: the better four-interleaved-submesh version, eq. 6); sec. 4 any source",
        summary: "spanning-tree broadcast of --message-bytes on a one-port wormhole mesh/array under the Delta cost model (--cost-model, --a, --b, --rho, --nu)",
        all_or_one_port: false,
        rooted: true,
        router_forwarding: false,
    },
    AlgorithmInfo {
        name: "bst",
        topologies: LINEAR_MESH,
        reference: "Seidel 1993, sec. 3.3 (linear: eqs. 7-8), sec. 3.4 (mesh: the better version, eq. 10, sec. 3.4.2)",
        summary: "bidirectional spanning-tree broadcast: two trees in opposite directions, then neighbour exchanges",
        all_or_one_port: false,
        rooted: true,
        router_forwarding: false,
    },
    AlgorithmInfo {
        name: "rh",
        topologies: LINEAR_MESH,
        reference: "Seidel 1993, sec. 3.5 (linear), sec. 3.6 (mesh): distribute, then recursive-halving exchanges; permutation m*rho",
        summary: "recursive halving broadcast; link contention in the exchanges (the model is optimistic here)",
        all_or_one_port: false,
        rooted: true,
        router_forwarding: false,
    },
    AlgorithmInfo {
        name: "st-simple",
        topologies: &[TopologyKind::Mesh],
        reference: "Seidel 1993, sec. 3.2.1 (column then rows), sec. 3.2.2 five phases (eq. 4)",
        summary: "mesh ST along the first column, then along every row",
        all_or_one_port: false,
        rooted: true,
        router_forwarding: false,
    },
    AlgorithmInfo {
        name: "bst-simple",
        topologies: &[TopologyKind::Mesh],
        reference: "Seidel 1993, sec. 3.4.1 (the mesh as one linear array, eq. 9)",
        summary: "mesh BST over the row-major order of the nodes",
        all_or_one_port: false,
        rooted: true,
        router_forwarding: false,
    },
];

/// Look an algorithm up by name.
pub fn find(name: &str) -> Option<&'static AlgorithmInfo> {
    ALGORITHMS.iter().find(|a| a.name == name)
}

/// Time bounds in slots and the transmission count, where the papers give them.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct Bounds {
    /// No algorithm can do better (whole but for worms the routers replicate, see `Snb`).
    pub lower: Option<f64>,
    /// What the paper's algorithm achieves (whole but for PMNB II's (N − 1)M/(Nd) term).
    pub paper: Option<f64>,
    /// Packet transmissions over links of the paper's algorithm (Table 2).
    pub transmissions: Option<u64>,
}
