//! The algorithms, as per-node programs, and the registry `flitwave list` shows.

pub mod mnb_sbt;
pub mod snb;
pub mod traffic;

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

/// What `flitwave list` says about an algorithm.
#[derive(Clone, Copy, Debug)]
pub struct AlgorithmInfo {
    pub name: &'static str,
    pub topologies: &'static [TopologyKind],
    pub reference: &'static str,
    pub summary: &'static str,
}

pub const ALGORITHMS: &[AlgorithmInfo] = &[
    AlgorithmInfo {
        name: "snb",
        topologies: &[TopologyKind::Hypercube, TopologyKind::Linear, TopologyKind::Mesh, TopologyKind::Torus],
        reference: "Bertsekas et al. 1991, sec. 2 (hypercube spanning binomial tree, Fig. 4); one-to-all broadcast lecture notes, 'Meshes' (dimension-order tree, one-port farthest-first)",
        summary: "single-node broadcast from --root; d slots on the d-cube (all-port and one-port), the root's eccentricity on all-port meshes",
    },
    AlgorithmInfo {
        name: "mnb-sbt",
        topologies: &[TopologyKind::Hypercube],
        reference: "Bertsekas et al. 1991, sec. 2, Fig. 5 (every node broadcasts on its own translated binomial tree)",
        summary: "multinode broadcast by superposed spanning binomial trees; not optimal (links of one type collide), the baseline the optimal MNB improves on",
    },
];

/// Look an algorithm up by name.
pub fn find(name: &str) -> Option<&'static AlgorithmInfo> {
    ALGORITHMS.iter().find(|a| a.name == name)
}

/// Time bounds in slots, where the papers give them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Bounds {
    /// No algorithm can do better.
    pub lower: Option<u64>,
    /// What the paper's algorithm achieves.
    pub paper: Option<u64>,
}
