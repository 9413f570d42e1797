//! The algorithms, as per-node programs, and their registry: what `--algorithm` takes,
//! `flitwave list` shows and the CLI validates, builds and sizes, each entry beside its code.

pub mod accumulate;
pub mod dilated_diagonal;
pub mod dynamic;
pub mod edn;
pub mod entry;
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
pub mod timing;
pub mod total_exchange;
pub mod traffic;
pub mod wormhole;

pub use entry::{Algorithm, Input, Need, Ports, Settings};

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

/// The registry: every algorithm `--algorithm` takes, in the order `flitwave list` shows
/// them. Each entry is defined beside its algorithm's code.
pub const ALGORITHMS: &[Algorithm] = &[
    snb::SNB,
    accumulate::ACCUMULATE,
    mnb::MNB,
    mnb::MNB_RING,
    mnb::MULTI_ACCUMULATE,
    scatter::SCATTER,
    scatter::GATHER,
    total_exchange::TOTAL_EXCHANGE,
    kbcast::KBCAST,
    pmnb::PMNB_1,
    pmnb::PMNB_2,
    pmnb::PMNB_3,
    dynamic::DYNAMIC,
    mnb_sbt::MNB_SBT,
    edn::EDN,
    wormhole::RD,
    dilated_diagonal::DILATED_DIAGONAL,
    wormhole::DTA,
    wormhole::HO_KAO,
    seidel::ST,
    seidel::BST,
    seidel::RH,
    seidel::ST_SIMPLE,
    seidel::BST_SIMPLE,
];

/// The algorithm a run without `--algorithm` runs.
pub const DEFAULT: &Algorithm = &snb::SNB;

/// Look an algorithm up by name.
pub fn find(name: &str) -> Option<&'static Algorithm> {
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
