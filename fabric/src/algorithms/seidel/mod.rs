//! Broadcasting on linear arrays and meshes (Seidel 1993, ORNL/TM-12356).
//!
//! The fabric is the paper's §2 model of the Intel Delta: circuit-switched wormhole with
//! dimension-order routing and no wrap-around, one-port nodes (one send and one receive at
//! a time), a software start-up `b` per message paid by the sender, a gateway that streams
//! one flit per cycle (`a` per byte), links 2^ν times faster (`--nu`, up to 2^ν worms share
//! a link at full speed, one VC each). The cost model ([`model`]) maps cycles to µs.
//!
//! Every algorithm is a per-node program ([`Seidel`]): a node holds some of the message's
//! pieces; its plan is the paper's sequence of sends for that node (destination and the
//! pieces it forwards), executed in program order, each send leaving as soon as the node
//! holds what it forwards. Timing, link and port contention come from the routers and the
//! one-port NICs. The plans are built in [`plan`] from the paper's sections:
//!
//! | name | topology | paper |
//! |------|----------|-------|
//! | `st` | linear | §3.1.1 (ν = 0), §3.1.2 interleaved subarrays (ν > 0), eqs. 1–2 |
//! | `bst` | linear | §3.3.1–3.3.2, eqs. 7–8 |
//! | `rh` | linear | §3.5 (distribute, then exchanges farthest first; permutation mρ at the root) |
//! | `st-simple` | mesh | §3.2.1 (ν = 0), §3.2.2 five phases (eq. 4) |
//! | `st` | mesh | §3.2.1 "better" four interleaved submeshes, §3.2.2 eq. 6 |
//! | `bst-simple` | mesh | §3.4.1 eq. 9 (the mesh as one linear array; eq. 8 for ν > 0) |
//! | `bst` | mesh | §3.4.1 "better" (eq. 10), §3.4.2 |
//! | `rh` | mesh | §3.6 (column then row distribute; alternating exchanges) |
//!
//! Any source node (§4) by XOR-ing the logical numbering with the root; arbitrary sizes
//! (§5) by virtual nodes or companions ([`Fill`]). §4's "no cost penalty" holds in the
//! simulation for the linear ST and BST, but for the linear RH only while at most one of
//! its exchange steps has more worms on a link than the link has lanes (ν >= d − 2): with
//! more, the cost depends on the source (see `plan`'s `linear_rh`).

pub mod model;
pub mod plan;

use super::Bounds;
use super::entry::{self, Algorithm, Input, Need, Settings};
use crate::SpecError;
use crate::program::{Dest, NodeCtx, Program, Received, Send};
use crate::scoreboard::{DestSet, Scoreboard};
use crate::topology::{Topology, TopologyKind};
use router::NodeId;

/// The algorithms of the paper.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Alg {
    St,
    Bst,
    Rh,
    StSimple,
    BstSimple,
}

impl Alg {
    pub const NAMES: &'static [&'static str] = &["st", "bst", "rh", "st-simple", "bst-simple"];
    pub fn parse(s: &str) -> Option<Alg> {
        match s {
            "st" => Some(Alg::St),
            "bst" => Some(Alg::Bst),
            "rh" => Some(Alg::Rh),
            "st-simple" => Some(Alg::StSimple),
            "bst-simple" => Some(Alg::BstSimple),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Alg::St => "st",
            Alg::Bst => "bst",
            Alg::Rh => "rh",
            Alg::StSimple => "st-simple",
            Alg::BstSimple => "bst-simple",
        }
    }
}

/// How a side that is not a power of two is handled (§5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Fill {
    /// Sides must be powers of two.
    None,
    /// §5.1: the last physical node of a side simulates the virtual nodes up to 2^⌈lg n⌉.
    Virtual,
    /// §5.2: broadcast on 2^⌊lg n⌋ full-size nodes, then each sends to its companion(s).
    Companions,
}

impl Fill {
    pub const NAMES: &'static str = "none, virtual, companions";
    pub fn parse(s: &str) -> Option<Fill> {
        match s {
            "none" => Some(Fill::None),
            "virtual" => Some(Fill::Virtual),
            "companions" => Some(Fill::Companions),
            _ => None,
        }
    }
}

/// Everything a plan needs.
#[derive(Clone, Debug, PartialEq)]
pub struct Setup {
    pub alg: Alg,
    pub kind: TopologyKind,
    /// Physical sizes: `[n]` or `[n0, n1]`.
    pub sizes: Vec<u32>,
    pub nu: u32,
    pub root: NodeId,
    pub fill: Fill,
    /// Message length in flits (may be fractional per piece; a packet is at least one flit).
    pub message_flits: f64,
    pub startup_cycles: u64,
    /// Cycles of the permutation at the root (RH: mρ).
    pub permute_cycles: u64,
    /// Companions on a mesh with companions in both dimensions: the 2 × 2 BST (3 steps of
    /// half the message) instead of the ST (2 steps of the whole message), §5.2's minimum.
    pub companions_bst: bool,
}

/// One send of a node's plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlanSend {
    pub to: NodeId,
    /// The piece set it carries (an index into [`Plan::sets`]).
    pub set: u32,
    /// The paper's step number (the NIC's priority key).
    pub step: u32,
    /// Cycles to wait once the data is there (a synchronous step the paper delays).
    pub delay: u64,
}

/// The per-node plans and the piece sets they carry.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    pub pieces: u32,
    pub sends: Vec<Vec<PlanSend>>,
    /// Piece sets as bitsets over `pieces`.
    pub sets: Vec<Vec<u64>>,
    pub set_flits: Vec<u16>,
    /// Steps of the longest path through the plan (for reports).
    pub steps: u32,
    /// The start-up cost, cycles (a node knows how long its own sends take).
    pub startup_cycles: u64,
}

/// Bitset helpers.
pub(crate) fn words(pieces: u32) -> usize {
    (pieces as usize).div_ceil(64)
}

fn contains_all(have: &[u64], need: &[u64]) -> bool {
    have.iter().zip(need).all(|(h, n)| n & !h == 0)
}

/// The program every node runs.
pub struct Seidel {
    plan: Plan,
    msg0: u32,
    holds: Vec<u64>,
    w: usize,
    next: Vec<u32>,
    /// The delay of the node's next send has started (its timer is set).
    waiting: Vec<bool>,
    /// When the node's NIC will have sent everything submitted so far (start-up plus
    /// streaming, as the node itself can tell).
    busy_until: Vec<u64>,
    root: NodeId,
}

impl Seidel {
    pub fn new(setup: &Setup) -> Seidel {
        let plan = plan::build(setup);
        let n = plan.sends.len();
        let w = words(plan.pieces);
        Seidel {
            msg0: 0,
            holds: vec![0; n * w],
            w,
            next: vec![0; n],
            waiting: vec![false; n],
            busy_until: vec![0; n],
            root: setup.root,
            plan,
        }
    }

    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Submit the node's next sends while it holds what they carry.
    fn advance(&mut self, cx: &mut NodeCtx<'_>) {
        let i = cx.node.idx();
        while let Some(s) = self.plan.sends[i].get(self.next[i] as usize).copied() {
            if !contains_all(&self.holds[i * self.w..(i + 1) * self.w], &self.plan.sets[s.set as usize]) {
                return;
            }
            if s.delay > 0 && !self.waiting[i] {
                // The paper's delay is in steps of the node's own schedule: it starts once
                // the node's earlier sends are out.
                self.waiting[i] = true;
                cx.wake_at(cx.now.max(self.busy_until[i]) + s.delay);
                return;
            }
            if s.delay > 0 && self.waiting[i] {
                // Woken by the timer (a reception in between does not release it early).
                return;
            }
            self.send(cx, s);
        }
    }

    fn send(&mut self, cx: &mut NodeCtx<'_>, s: PlanSend) {
        let i = cx.node.idx();
        self.waiting[i] = false;
        self.next[i] += 1;
        let flits = self.plan.set_flits[s.set as usize] as u64;
        self.busy_until[i] = self.busy_until[i].max(cx.now) + self.plan.startup_cycles + flits;
        cx.send(Send {
            dest: Dest::Node(s.to),
            msg: self.msg0,
            aux: s.set as u64,
            key: s.step,
            flits: self.plan.set_flits[s.set as usize],
        });
    }
}

impl Program for Seidel {
    fn setup(&mut self, topo: &Topology, sb: &mut Scoreboard) {
        for p in 0..self.plan.pieces {
            let id = sb.declare(DestSet::Broadcast { root: self.root, span: topo.full_span() }, topo);
            if p == 0 {
                self.msg0 = id;
            }
        }
        let r = self.root.idx();
        let w = self.w;
        for (k, x) in self.holds[r * w..(r + 1) * w].iter_mut().enumerate() {
            let lo = k as u32 * 64;
            let n = self.plan.pieces.saturating_sub(lo).min(64);
            *x = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
        }
    }

    fn start(&mut self, cx: &mut NodeCtx<'_>) {
        self.advance(cx);
    }

    fn receive(&mut self, cx: &mut NodeCtx<'_>, m: &Received) {
        let i = cx.node.idx();
        let w = self.w;
        let set = &self.plan.sets[m.aux as usize];
        for (k, (&got, held)) in set.iter().zip(&mut self.holds[i * w..(i + 1) * w]).enumerate() {
            let mut new = got & !*held;
            *held |= new;
            while new != 0 {
                let b = new.trailing_zeros();
                new &= new - 1;
                cx.accept(self.msg0 + k as u32 * 64 + b);
            }
        }
        self.advance(cx);
    }

    fn timer(&mut self, cx: &mut NodeCtx<'_>) {
        let i = cx.node.idx();
        if self.waiting[i] {
            let s = self.plan.sends[i][self.next[i] as usize];
            self.send(cx, s);
            self.advance(cx);
        }
    }
}

/// The memory of a Seidel broadcast, measured (docs/performance.md): its plan, every send
/// with the set of pieces it carries (`bytes`), built once for the program and once for the
/// report's step count.
fn plan_memory(a: &Algorithm, i: &Input, bytes: u128) -> Result<Need, SpecError> {
    let nodes = i.nodes();
    Ok(Need { field: "dims", value: entry::dims_text(i.spec), what: format!("{} on {nodes} nodes plans every send and", a.name), bytes })
}

pub const ST: Algorithm = Algorithm {
    rooted: true,
    settings: Settings::Seidel,
    // A spanning tree's plan: about 500 bytes per node.
    memory: Some(|a, i, _| plan_memory(a, i, i.nodes() * 500)),
    ..Algorithm::new(
        "st",
        &[TopologyKind::Linear, TopologyKind::Mesh],
        "Seidel 1993, sec. 3.1 (linear: eq. 1, interleaved subarrays eq. 2), sec. 3.2 (mesh: the better four-interleaved-submesh version, eq. 6); sec. 4 any source",
        "spanning-tree broadcast of --message-bytes on a one-port wormhole mesh/array under the Delta cost model (--cost-model, --a, --b, --rho, --nu)",
        |i| {
            let setup = i.seidel.expect("the cost model is resolved for the Seidel broadcasts");
            (Box::new(Seidel::new(setup)), Bounds::default())
        },
    )
};

pub const BST: Algorithm = Algorithm {
    name: "bst",
    reference: "Seidel 1993, sec. 3.3 (linear: eqs. 7-8), sec. 3.4 (mesh: the better version, eq. 10, sec. 3.4.2)",
    summary: "bidirectional spanning-tree broadcast: two trees in opposite directions, then neighbour exchanges",
    // Two trees and the exchanges: about 1.3 KiB per node.
    memory: Some(|a, i, _| plan_memory(a, i, i.nodes() * 1300)),
    ..ST
};

pub const RH: Algorithm = Algorithm {
    name: "rh",
    reference: "Seidel 1993, sec. 3.5 (linear), sec. 3.6 (mesh): distribute, then recursive-halving exchanges; permutation m*rho",
    summary: "recursive halving broadcast; link contention in the exchanges (the model is optimistic here)",
    // Sets of up to N pieces exchanged N log N times: about 7 bytes per pair of nodes.
    memory: Some(|a, i, _| plan_memory(a, i, i.nodes() * i.nodes() * 7)),
    ..ST
};

pub const ST_SIMPLE: Algorithm = Algorithm {
    name: "st-simple",
    topologies: &[TopologyKind::Mesh],
    reference: "Seidel 1993, sec. 3.2.1 (column then rows), sec. 3.2.2 five phases (eq. 4)",
    summary: "mesh ST along the first column, then along every row",
    ..ST
};

pub const BST_SIMPLE: Algorithm = Algorithm {
    name: "bst-simple",
    topologies: &[TopologyKind::Mesh],
    reference: "Seidel 1993, sec. 3.4.1 (the mesh as one linear array, eq. 9)",
    summary: "mesh BST over the row-major order of the nodes",
    memory: BST.memory,
    ..ST
};
