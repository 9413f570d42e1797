//! Synthetic traffic for designers and benchmarks: each node generates packets by a
//! Bernoulli process (probability `rate` per cycle) during cycles `[0, cycles)`, to
//! destinations chosen by a pattern; then the network drains.
//!
//! Patterns (a pattern that maps a node to itself generates nothing at that node):
//! - `uniform`: any other node, uniformly.
//! - `transpose`: swap the two halves of the address (hypercube of even d), or (x, y) → (y, x)
//!   on a square 2-D mesh or torus.
//! - `bit-complement`: every address bit inverted (hypercube); every coordinate c → k−1−c.
//! - `tornado`: every coordinate c → (c + ⌈k/2⌉ − 1) mod k (meshes, tori, linear arrays).
//! - `hotspot`: to the hotspot node with probability `hotspot_fraction`, else uniform.
//!
//! Broadcast traffic ([`Traffic::with_broadcasts`]): each node also starts broadcasts by a
//! Bernoulli process of its own (a random stream apart from the unicast one), each to every
//! other node on the source's broadcast tree (the tree `snb` uses from it,
//! [`super::snb::tree_sends`]): one packet the routers replicate, or relays the nodes
//! re-send along the tree. The scoreboard times each broadcast from its creation to its
//! last delivery; relays are not unicast latency samples.

use super::Forwarding;
use super::snb::tree_sends;
use crate::program::{Dest, NodeCtx, Program, Received, Send};
use crate::scoreboard::DestSet;
use crate::spec::SpecError;
use crate::topology::{Topology, TopologyKind};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use router::NodeId;

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pattern {
    Uniform,
    Transpose,
    BitComplement,
    Tornado,
    Hotspot,
}

impl Pattern {
    pub const NAMES: &'static str = "uniform, transpose, bit-complement, tornado, hotspot";

    /// Node `n`'s destination under a permutation pattern (possibly `n` itself, which then
    /// sends nothing); None for the patterns that draw (uniform, hotspot).
    pub fn fixed_destination(self, topo: &Topology, n: NodeId) -> Option<NodeId> {
        let nodes = topo.nodes() as u32;
        Some(match self {
            Pattern::Uniform | Pattern::Hotspot => return None,
            Pattern::BitComplement => match topo.kind {
                TopologyKind::Hypercube => NodeId(n.0 ^ (nodes - 1)),
                _ => topo.node_at(&topo.coords(n).iter().zip(&topo.sizes).map(|(c, k)| k - 1 - c).collect::<Vec<_>>()),
            },
            Pattern::Transpose => match topo.kind {
                TopologyKind::Hypercube => {
                    let h = topo.ndims() / 2;
                    let lo = n.0 & ((1 << h) - 1);
                    NodeId((lo << h) | (n.0 >> h))
                }
                _ => {
                    let c = topo.coords(n);
                    topo.node_at(&[c[1], c[0]])
                }
            },
            Pattern::Tornado => {
                topo.node_at(&topo.coords(n).iter().zip(&topo.sizes).map(|(c, k)| (c + k.div_ceil(2) - 1) % k).collect::<Vec<_>>())
            }
        })
    }

    /// The nodes that generate packets: all of them, but for the nodes a permutation
    /// pattern maps to themselves (the diagonal of a transpose, the middle of an odd
    /// bit-complement), which send nothing.
    pub fn senders(self, topo: &Topology) -> u64 {
        (0..topo.nodes() as u32).filter(|&n| self.fixed_destination(topo, NodeId(n)).is_none_or(|d| d.0 != n)).count() as u64
    }
    pub fn parse(s: &str) -> Option<Pattern> {
        match s {
            "uniform" => Some(Pattern::Uniform),
            "transpose" => Some(Pattern::Transpose),
            "bit-complement" | "bitcomp" => Some(Pattern::BitComplement),
            "tornado" => Some(Pattern::Tornado),
            "hotspot" => Some(Pattern::Hotspot),
            _ => None,
        }
    }

    /// Is the pattern defined on this topology?
    pub fn check(self, topo: &Topology) -> Result<(), SpecError> {
        let name = serde_json::to_value(self).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default();
        match (self, &topo.kind) {
            (Pattern::Transpose, TopologyKind::Hypercube) if !topo.ndims().is_multiple_of(2) => {
                Err(SpecError::new("traffic", name, "transpose needs a hypercube of even dimension or a square 2-D mesh or torus"))
            }
            (Pattern::Transpose, TopologyKind::Mesh | TopologyKind::Torus) if topo.ndims() != 2 || topo.sizes[0] != topo.sizes[1] => {
                Err(SpecError::new("traffic", name, "transpose needs a hypercube of even dimension or a square 2-D mesh or torus"))
            }
            (Pattern::Transpose, TopologyKind::Linear) => {
                Err(SpecError::new("traffic", name, "transpose needs a hypercube of even dimension or a square 2-D mesh or torus"))
            }
            (Pattern::Tornado, TopologyKind::Hypercube) => Err(SpecError::new(
                "traffic",
                name,
                "tornado is defined on linear arrays, meshes and tori (on a hypercube it would not move)",
            )),
            (Pattern::Tornado, _) if topo.sizes.iter().all(|&k| k <= 2) => Err(SpecError::new(
                "traffic",
                name,
                "tornado sends ceil(k/2) - 1 hops along each side of k nodes: it needs a side of at least 3 (here every node would send to itself)",
            )),
            _ => Ok(()),
        }
    }
}

/// Traffic generator settings.
#[derive(Clone, Copy, Debug)]
pub struct TrafficSpec {
    pub pattern: Pattern,
    /// Packets per node per cycle (Bernoulli), 0 < rate <= 1.
    pub rate: f64,
    pub cycles: u64,
    pub flits: u16,
    pub seed: u64,
    pub hotspot: NodeId,
    pub hotspot_fraction: f64,
}

pub struct Traffic {
    spec: TrafficSpec,
    /// ln(1 − rate), the denominator of every gap (computed once).
    ln_q: f64,
    /// One random stream per node, so results do not depend on the order nodes are visited
    /// (nor on how the fabric is split between threads).
    rng: Vec<ChaCha8Rng>,
    /// Packets a node may have waiting for its NIC before it stops generating.
    queue_cap: u32,
    /// The first node (by cycle, then id) that reached `queue_cap`: cycle, node, packets.
    saturated: Option<(u64, u32, u32)>,
    /// Broadcast traffic, if any.
    bcast: Option<Broadcasts>,
}

/// `aux` of a relay of a broadcast the nodes forward: this bit, the root in the low 32 bits
/// and the port the relay left its sender on above them (unicast packets carry 0).
const RELAY_AUX: u64 = 1 << 63;

/// Broadcast traffic: a second Bernoulli process per node.
struct Broadcasts {
    /// Broadcasts per node per cycle, in [0, 1].
    rate: f64,
    ln_q: f64,
    forwarding: Forwarding,
    /// A random stream per node, apart from the unicast ones (so adding broadcasts changes
    /// no unicast draw).
    rng: Vec<ChaCha8Rng>,
    /// Per node: the cycle of its next unicast packet and of its next broadcast (`u64::MAX`:
    /// none), which tell a timer which is due.
    next_unicast: Vec<u64>,
    next_broadcast: Vec<u64>,
    /// The children of the tree being forwarded (reused).
    order: Vec<(u64, usize)>,
}

/// Packets all source queues together may hold (about 100 bytes each, with their scoreboard
/// records): an offered load above what the network accepts fills them at a steady rate,
/// and a long run must end with a report, not run out of memory.
pub const SOURCE_QUEUE_BUDGET: u64 = 1 << 23;

/// `x.floor() as u64`, without a call to `floor`: the same for every `x` (the cast
/// saturates: below 0, NaN and −∞ to 0, +∞ and beyond u64 to `u64::MAX`; from 0 up,
/// truncating is the floor).
#[inline]
fn floor_u64(x: f64) -> u64 {
    x as u64
}

impl Traffic {
    pub fn new(spec: TrafficSpec, nodes: usize) -> Traffic {
        let rng = (0..nodes)
            .map(|n| {
                let mut r = ChaCha8Rng::seed_from_u64(spec.seed);
                r.set_stream(n as u64);
                r
            })
            .collect();
        let queue_cap = (SOURCE_QUEUE_BUDGET / nodes as u64).max(64) as u32;
        // ln(1 − p) as ln_1p(−p): below about 1e-16, 1 − p rounds to 1, its logarithm to 0,
        // and every gap came out 0 (a packet every cycle).
        let ln_q = (-spec.rate).ln_1p();
        Traffic { spec, ln_q, rng, queue_cap, saturated: None, bcast: None }
    }

    /// Add broadcast traffic: each node starts a broadcast with probability `rate` (in
    /// [0, 1]) per cycle during the same cycles as the unicast packets, forwarded by the
    /// routers or by the nodes.
    pub fn with_broadcasts(mut self, rate: f64, forwarding: Forwarding) -> Traffic {
        let nodes = self.rng.len();
        let rng = (0..nodes)
            .map(|n| {
                let mut r = ChaCha8Rng::seed_from_u64(self.spec.seed);
                r.set_stream((1 << 32) | n as u64);
                r
            })
            .collect();
        self.bcast = Some(Broadcasts {
            rate,
            ln_q: (-rate).ln_1p(),
            forwarding,
            rng,
            next_unicast: vec![u64::MAX; nodes],
            next_broadcast: vec![u64::MAX; nodes],
            order: Vec::new(),
        });
        self
    }

    /// Packets a node may have waiting for its NIC before it stops generating (by default
    /// [`SOURCE_QUEUE_BUDGET`] shared by the nodes, at least 64 each).
    pub fn with_queue_cap(mut self, packets: u32) -> Traffic {
        self.queue_cap = packets;
        self
    }

    /// The first node (by cycle, then id) whose source queue filled: cycle, node, packets.
    pub fn saturated(&self) -> Option<(u64, u32, u32)> {
        self.saturated
    }

    /// A source queue filled (cycle, node, packets): keep the first, by cycle then node.
    fn saturated_at(&mut self, at: (u64, u32, u32)) {
        if self.saturated.is_none_or(|s| (at.0, at.1) < (s.0, s.1)) {
            self.saturated = Some(at);
        }
    }

    /// Cycles until the next Bernoulli success (0 = this cycle).
    fn gap(&mut self, n: NodeId) -> u64 {
        bernoulli_gap(&mut self.rng[n.idx()], self.spec.rate, self.ln_q)
    }

    fn destination(&mut self, topo: &Topology, n: NodeId) -> Option<NodeId> {
        let nodes = topo.nodes() as u32;
        let uniform = |rng: &mut ChaCha8Rng| {
            let d = rng.random_range(0..nodes - 1);
            NodeId(if d >= n.0 { d + 1 } else { d })
        };
        let d = match self.spec.pattern {
            Pattern::Uniform => uniform(&mut self.rng[n.idx()]),
            Pattern::Hotspot => {
                let rng = &mut self.rng[n.idx()];
                if n != self.spec.hotspot && rng.random_bool(self.spec.hotspot_fraction) { self.spec.hotspot } else { uniform(rng) }
            }
            p => p.fixed_destination(topo, n).expect("a permutation pattern"),
        };
        (d != n).then_some(d)
    }

    /// The cycle of node `n`'s next packet from cycle `from` on, if it is one that generates.
    fn next_packet(&mut self, n: NodeId, from: u64) -> Option<u64> {
        if self.spec.rate <= 0.0 {
            return None;
        }
        let at = from.saturating_add(self.gap(n));
        let next = (at < self.spec.cycles).then_some(at);
        if let Some(b) = self.bcast.as_mut() {
            b.next_unicast[n.idx()] = next.unwrap_or(u64::MAX);
        }
        next
    }

    /// The cycle of node `n`'s next broadcast from cycle `from` on, if any.
    fn next_broadcast(&mut self, n: NodeId, from: u64) -> Option<u64> {
        let cycles = self.spec.cycles;
        let b = self.bcast.as_mut()?;
        let next = if b.rate <= 0.0 {
            None
        } else {
            let at = from.saturating_add(bernoulli_gap(&mut b.rng[n.idx()], b.rate, b.ln_q));
            (at < cycles).then_some(at)
        };
        b.next_broadcast[n.idx()] = next.unwrap_or(u64::MAX);
        next
    }

    /// Node `cx.node` starts a broadcast now, then schedules its next one.
    fn broadcast(&mut self, cx: &mut NodeCtx<'_>) {
        if cx.queued >= self.queue_cap {
            self.saturated_at((cx.now, cx.node.0, cx.queued));
            return;
        }
        let msg = cx.declare_timed(DestSet::Broadcast { root: cx.node, span: cx.topo.full_span() });
        let b = self.bcast.as_mut().expect("broadcast traffic");
        match b.forwarding {
            Forwarding::Router => {
                cx.send(Send { dest: Dest::Broadcast { span: cx.topo.full_span() }, msg, aux: 0, key: 0, flits: self.spec.flits })
            }
            Forwarding::Node => forward(&mut b.order, cx, cx.node, cx.topo.net_ports(), msg, self.spec.flits),
        }
        if let Some(at) = self.next_broadcast(cx.node, cx.now + 1) {
            cx.wake_at(at);
        }
    }

    fn generate(&mut self, cx: &mut NodeCtx<'_>) {
        if cx.queued >= self.queue_cap {
            // The network does not take this node's packets as fast as they come: stop
            // here (the run fails, saying so) rather than fill the memory.
            self.saturated_at((cx.now, cx.node.0, cx.queued));
            return;
        }
        if let Some(d) = self.destination(cx.topo, cx.node) {
            let msg = cx.declare(DestSet::One(d));
            cx.send(Send { dest: Dest::Node(d), msg, aux: 0, key: 0, flits: self.spec.flits });
        }
        if let Some(at) = self.next_packet(cx.node, cx.now + 1) {
            cx.wake_at(at);
        }
    }
}

/// Send the broadcast `msg` from `root`, received at `cx.node` on input port `in_port`
/// (`net_ports()` at the root), to the node's children in the root's tree, in the one-port
/// order, as relays.
fn forward(order: &mut Vec<(u64, usize)>, cx: &mut NodeCtx<'_>, root: NodeId, in_port: usize, msg: u32, flits: u16) {
    tree_sends(cx.topo, cx.node, in_port, root, order);
    for (i, &(_, p)) in order.iter().enumerate() {
        let to = cx.topo.neighbor(cx.node, p).expect("tree edge over a missing link");
        cx.send(Send { dest: Dest::Relay(to), msg, aux: RELAY_AUX | root.0 as u64 | (p as u64) << 32, key: i as u32, flits });
    }
}

/// Cycles until the next success of a Bernoulli process of probability `p` per cycle
/// (0 = this cycle), `ln_q` = ln(1 − p), drawn from `rng`.
fn bernoulli_gap(rng: &mut ChaCha8Rng, p: f64, ln_q: f64) -> u64 {
    if p >= 1.0 {
        return 0;
    }
    let u: f64 = rng.random::<f64>();
    // The floor of the quotient: the cast truncates towards zero, which for every f64
    // gives what `.floor() as u64` gives (the same below 1, where both make 0; NaN 0).
    // A gap beyond u64 saturates.
    floor_u64((1.0 - u).ln() / ln_q)
}

impl Program for Traffic {
    fn start(&mut self, cx: &mut NodeCtx<'_>) {
        match self.next_packet(cx.node, 0) {
            Some(at) if at == cx.now => self.generate(cx),
            Some(at) => cx.wake_at(at),
            None => {}
        }
        match self.next_broadcast(cx.node, 0) {
            Some(at) if at == cx.now => self.broadcast(cx),
            Some(at) => cx.wake_at(at),
            None => {}
        }
    }
    fn receive(&mut self, cx: &mut NodeCtx<'_>, m: &Received) {
        cx.accept(m.msg);
        if m.aux & RELAY_AUX != 0 {
            let b = self.bcast.as_mut().expect("relays only with broadcast traffic");
            // The sender's output port tells which of our input ports it arrived on.
            let in_port = cx.topo.reverse_port((m.aux >> 32 & 0xff) as usize);
            forward(&mut b.order, cx, NodeId(m.aux as u32), in_port, m.msg, m.flits);
        }
    }
    fn timer(&mut self, cx: &mut NodeCtx<'_>) {
        let Some(b) = self.bcast.as_ref() else {
            self.generate(cx);
            return;
        };
        // Both may be due in one cycle (one call).
        let (u, bc) = (b.next_unicast[cx.node.idx()], b.next_broadcast[cx.node.idx()]);
        if u == cx.now {
            self.generate(cx);
        }
        if bc == cx.now {
            self.broadcast(cx);
        }
    }
    fn splits(&self) -> bool {
        true
    }
    fn report(&self) -> Option<serde_json::Value> {
        let (cycle, node, queued) = self.saturated?;
        Some(serde_json::json!({ "source_saturated": { "cycle": cycle, "node": node, "queued_packets": queued } }))
    }
    fn failures(&self) -> Vec<String> {
        let Some((cycle, node, queued)) = self.saturated else { return Vec::new() };
        vec![format!(
            "source queues full: node {node}'s reached {queued} packets at cycle {cycle} (the first), and a node stops generating \
             when its queue is full: the offered load ({} packets/node/cycle) is more than the network accepts; lower --rate or --cycles",
            self.spec.rate
        )]
    }
    fn join(&mut self, other: Box<dyn Program>) {
        let other = (other as Box<dyn std::any::Any>).downcast::<Traffic>().expect("the same program in every part");
        if let Some(o) = other.saturated {
            self.saturated_at(o);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `floor_u64` against `floor` then the cast, on edge values and random bit patterns.
    #[test]
    fn floor_u64_is_the_floor_cast() {
        let mut xs = vec![
            0.0,
            -0.0,
            0.5,
            -0.5,
            -1.0,
            -1.5,
            1.0,
            1.0 - f64::EPSILON,
            2.5,
            f64::MIN_POSITIVE,
            -f64::MIN_POSITIVE,
            f64::MAX,
            f64::MIN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            u64::MAX as f64,
            (u64::MAX as f64).next_down(),
            2f64.powi(63),
            2f64.powi(53) + 1.0,
        ];
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        xs.extend((0..200_000).map(|_| f64::from_bits(rng.random::<u64>())));
        xs.extend((0..200_000).map(|_| rng.random::<f64>() * 1e6 - 10.0));
        for x in xs {
            assert_eq!(floor_u64(x), x.floor() as u64, "{x:e}");
        }
    }
}
