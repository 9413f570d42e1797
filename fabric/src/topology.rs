//! Topologies and their routing functions: hypercube (e-cube), linear array and mesh
//! (dimension order), torus (dimension order, shortest way round, dateline VC classes), and
//! each one's broadcast tree for in-router multicast.
//!
//! Node ids are mixed-radix coordinates with dimension 0 varying fastest:
//! `id = c0 + n0 * (c1 + n1 * (c2 + ...))`. On meshes and tori port `2i` leads to the
//! neighbour one step down in dimension `i` and port `2i + 1` one step up; on the hypercube
//! port `i` crosses dimension `i`.

use router::{NodeId, PortId, PortSet};
use serde::Serialize;

/// The shape of the network.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TopologyKind {
    Hypercube,
    Linear,
    Mesh,
    Torus,
}

impl TopologyKind {
    pub const NAMES: &'static str = "hypercube, linear, mesh, torus";
    pub fn parse(s: &str) -> Option<TopologyKind> {
        match s {
            "hypercube" | "cube" => Some(TopologyKind::Hypercube),
            "linear" | "linear-array" | "line" => Some(TopologyKind::Linear),
            "mesh" => Some(TopologyKind::Mesh),
            "torus" => Some(TopologyKind::Torus),
            _ => None,
        }
    }
    pub fn name(&self) -> &'static str {
        match self {
            TopologyKind::Hypercube => "hypercube",
            TopologyKind::Linear => "linear",
            TopologyKind::Mesh => "mesh",
            TopologyKind::Torus => "torus",
        }
    }
}

/// A topology: its kind and sizes. For the hypercube `sizes` is `[2; d]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topology {
    pub kind: TopologyKind,
    pub sizes: Vec<u32>,
    strides: Vec<u32>,
    nodes: usize,
    /// Every node's coordinates (node-major), so that routing reads them instead of
    /// dividing; empty for the hypercube and for shapes with more than
    /// [`Topology::COORD_TABLE_MAX`] entries (those divide).
    coords: Vec<u16>,
    /// Unicast routes by router and destination (`at * nodes + dest`), as the bit of the
    /// output in a [`PortSet`] (63 for LOCAL), for shapes whose route does not depend on the
    /// source (all but the torus, whose dateline class does) of at most
    /// [`Topology::ROUTE_TABLE_MAX`] pairs; empty otherwise (those compute it).
    routes: Vec<u8>,
    /// Split VCs into two dateline classes on the torus.
    pub dateline: bool,
}

/// Where a unicast head goes from a router.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hop {
    pub ports: PortSet,
    /// Dateline class of the next hop (0 or 1), for the torus.
    pub class: u8,
    /// A broadcast's branches whose next hop is in dateline class 1 (each branch has its own
    /// class: the one continuing a ring may have crossed its wrap-around link, the ones
    /// starting a new dimension have not); empty for unicast, whose class is `class`.
    pub high: PortSet,
}

impl Topology {
    /// A topology; sizes must already be validated (see `spec`).
    pub fn new(kind: TopologyKind, sizes: &[u32]) -> Topology {
        let sizes: Vec<u32> = match kind {
            TopologyKind::Hypercube => vec![2; sizes[0] as usize],
            _ => sizes.to_vec(),
        };
        let mut strides = Vec::with_capacity(sizes.len());
        let mut s: u64 = 1;
        for &n in &sizes {
            strides.push(s as u32);
            s *= n as u64;
        }
        let mut t = Topology { kind, sizes, strides, nodes: s as usize, coords: Vec::new(), routes: Vec::new(), dateline: false };
        if Self::table_entries(&t.kind, &t.sizes) > 0 {
            t.coords = (0..t.nodes as u32)
                .flat_map(|n| (0..t.ndims()).map(move |i| (n, i)))
                .map(|(n, i)| t.coord_div(NodeId(n), i) as u16)
                .collect();
        }
        if Self::route_table_entries(&t.kind, t.nodes as u128) > 0 {
            let n = t.nodes as u32;
            t.routes = (0..n)
                .flat_map(|at| (0..n).map(move |dest| (at, dest)))
                .map(|(at, dest)| t.route_unicast_computed(NodeId(at), NodeId(at), NodeId(dest)).ports.bits().trailing_zeros() as u8)
                .collect();
        }
        t
    }

    /// Router-destination pairs of the unicast route table at most (a byte each).
    pub const ROUTE_TABLE_MAX: usize = 1 << 16;

    /// Entries the unicast route table of a `kind` of `nodes` nodes has: nodes², or none.
    fn route_table_entries(kind: &TopologyKind, nodes: u128) -> usize {
        match nodes.checked_mul(nodes) {
            Some(e) if *kind != TopologyKind::Torus && e <= Self::ROUTE_TABLE_MAX as u128 => e as usize,
            _ => 0,
        }
    }

    /// Bytes the unicast route table of a `kind` of `nodes` nodes takes (memory estimates).
    pub fn route_table_bytes(kind: &TopologyKind, nodes: u128) -> u128 {
        Self::route_table_entries(kind, nodes) as u128
    }

    /// Entries of the coordinate table at most (2 bytes each).
    pub const COORD_TABLE_MAX: usize = 1 << 24;

    /// Entries the coordinate table of a `kind` of `sizes` has: nodes × dimensions, or none.
    fn table_entries(kind: &TopologyKind, sizes: &[u32]) -> usize {
        let nodes = sizes.iter().try_fold(1usize, |a, &k| a.checked_mul(k as usize));
        match nodes.map(|n| n.saturating_mul(sizes.len())) {
            Some(e) if *kind != TopologyKind::Hypercube && e <= Self::COORD_TABLE_MAX && sizes.iter().all(|&k| k <= 1 << 16) => e,
            _ => 0,
        }
    }

    /// Bytes the coordinate table of a `kind` of `sizes` takes (for memory estimates).
    pub fn coord_table_bytes(kind: &TopologyKind, sizes: &[u32]) -> u128 {
        Self::table_entries(kind, sizes) as u128 * 2
    }

    pub fn nodes(&self) -> usize {
        self.nodes
    }
    /// Number of dimensions (d for the hypercube).
    pub fn ndims(&self) -> usize {
        self.sizes.len()
    }
    /// Network ports per router.
    pub fn net_ports(&self) -> usize {
        match self.kind {
            TopologyKind::Hypercube => self.sizes.len(),
            _ => 2 * self.sizes.len(),
        }
    }
    #[inline]
    pub fn coord(&self, n: NodeId, dim: usize) -> u32 {
        if self.coords.is_empty() { self.coord_div(n, dim) } else { self.coords[n.idx() * self.sizes.len() + dim] as u32 }
    }

    #[inline]
    fn coord_div(&self, n: NodeId, dim: usize) -> u32 {
        (n.0 / self.strides[dim]) % self.sizes[dim]
    }
    pub fn coords(&self, n: NodeId) -> Vec<u32> {
        (0..self.ndims()).map(|i| self.coord(n, i)).collect()
    }
    pub fn node_at(&self, coords: &[u32]) -> NodeId {
        NodeId(coords.iter().zip(&self.strides).map(|(c, s)| c * s).sum())
    }

    /// Where network port `p` leads: its dimension, and whether one step up in it (towards
    /// the higher coordinate; on the hypercube, across). The one place port numbers meet
    /// directions: [`Topology::neighbor`] wires by it and [`Topology::port_name`] names by it.
    #[inline]
    pub fn port_direction(&self, p: usize) -> (usize, bool) {
        match self.kind {
            TopologyKind::Hypercube => (p, true),
            _ => (p / 2, p % 2 == 1),
        }
    }

    /// The name of dimension `i` in waveforms: `x`, `y`, `z` for shapes of up to three
    /// dimensions, else `d0`, `d1`, … (and always `d<i>` on the hypercube).
    pub fn dim_name(&self, i: usize) -> String {
        match self.kind {
            TopologyKind::Hypercube => format!("d{i}"),
            _ if self.ndims() <= 3 => ["x", "y", "z"][i].to_string(),
            _ => format!("d{i}"),
        }
    }

    /// The name of network port `p` by the direction its link leaves in: `xp` (one step up
    /// in x), `xm` (one step down), `yp`, …; `d0p`, `d0m`, … beyond three dimensions;
    /// `d<i>` on the hypercube (across dimension i).
    pub fn port_name(&self, p: usize) -> String {
        let (dim, up) = self.port_direction(p);
        match self.kind {
            TopologyKind::Hypercube => self.dim_name(dim),
            _ => format!("{}{}", self.dim_name(dim), if up { "p" } else { "m" }),
        }
    }

    /// The name of node `n` in waveforms: its coordinates on linear arrays, meshes and tori
    /// (`x3_y4`, `x3_y4_z1`; beyond three dimensions `d0_3_d1_4_d2_1_d3_0`), its id on the
    /// hypercube (`n0005`, at least four digits).
    pub fn scope_name(&self, n: NodeId) -> String {
        match self.kind {
            TopologyKind::Hypercube => {
                let width = (self.nodes.max(2) - 1).to_string().len().max(4);
                format!("n{:0width$}", n.0)
            }
            _ if self.ndims() <= 3 => {
                (0..self.ndims()).map(|i| format!("{}{}", self.dim_name(i), self.coord(n, i))).collect::<Vec<_>>().join("_")
            }
            _ => (0..self.ndims()).map(|i| format!("{}_{}", self.dim_name(i), self.coord(n, i))).collect::<Vec<_>>().join("_"),
        }
    }

    /// The neighbour behind output port `p`, if the link exists.
    #[inline]
    pub fn neighbor(&self, n: NodeId, p: usize) -> Option<NodeId> {
        match self.kind {
            TopologyKind::Hypercube => Some(NodeId(n.0 ^ (1 << p))),
            _ => {
                let (dim, up) = self.port_direction(p);
                let (k, s, c) = (self.sizes[dim], self.strides[dim], self.coord(n, dim));
                match self.kind {
                    TopologyKind::Torus if k > 1 => {
                        let c2 = if up { (c + 1) % k } else { (c + k - 1) % k };
                        Some(NodeId(n.0 - c * s + c2 * s))
                    }
                    _ if up && c + 1 < k => Some(NodeId(n.0 + s)),
                    _ if !up && c > 0 => Some(NodeId(n.0 - s)),
                    _ => None,
                }
            }
        }
    }

    /// The input port at `neighbor(n, p)` through which a flit sent on port `p` arrives.
    #[inline]
    pub fn reverse_port(&self, p: usize) -> usize {
        match self.kind {
            TopologyKind::Hypercube => p,
            _ => p ^ 1,
        }
    }

    /// Hop count of a shortest path.
    pub fn distance(&self, a: NodeId, b: NodeId) -> u32 {
        match self.kind {
            TopologyKind::Hypercube => (a.0 ^ b.0).count_ones(),
            _ => (0..self.ndims())
                .map(|i| {
                    let (x, y, k) = (self.coord(a, i), self.coord(b, i), self.sizes[i]);
                    let d = x.abs_diff(y);
                    if self.kind == TopologyKind::Torus { d.min(k - d) } else { d }
                })
                .sum(),
        }
    }

    /// Largest distance from `n` to any node.
    pub fn eccentricity(&self, n: NodeId) -> u32 {
        match self.kind {
            TopologyKind::Hypercube => self.ndims() as u32,
            TopologyKind::Torus => self.sizes.iter().map(|k| k / 2).sum(),
            _ => (0..self.ndims())
                .map(|i| {
                    let c = self.coord(n, i);
                    c.max(self.sizes[i] - 1 - c)
                })
                .sum(),
        }
    }

    pub fn diameter(&self) -> u32 {
        match self.kind {
            TopologyKind::Hypercube | TopologyKind::Torus => self.eccentricity(NodeId(0)),
            _ => self.sizes.iter().map(|k| k - 1).sum(),
        }
    }

    /// Dateline class of the hop from coordinate `c` one step `up` (or down) in a ring of `k`,
    /// for a packet that entered this dimension at coordinate `s`: 1 once it has crossed the
    /// wrap-around link.
    #[inline]
    fn ring_class(c: u32, up: bool, s: u32, k: u32) -> u8 {
        let next = if up { (c + 1) % k } else { (c + k - 1) % k };
        let crossed = if up { next < s } else { next > s };
        crossed as u8
    }

    /// Unicast routing from router `at` towards `dest`: e-cube on the hypercube (lowest
    /// differing dimension first), dimension order on meshes and tori (lowest dimension
    /// first; on the torus the shorter way round, ties upward). `src` is the packet's source
    /// (for the torus dateline).
    #[inline]
    pub fn route_unicast(&self, at: NodeId, src: NodeId, dest: NodeId) -> Hop {
        if self.kind == TopologyKind::Hypercube {
            // The lowest differing dimension; LOCAL (bit 63) at the destination.
            let x = (at.0 ^ dest.0) as u64 | 1 << 63;
            return Hop { ports: PortSet::from_bits_retain(1 << x.trailing_zeros()), class: 0, high: PortSet::empty() };
        }
        if !self.routes.is_empty() {
            // No branch on the way: LOCAL is bit 63 like any other.
            let bit = self.routes[at.idx() * self.nodes + dest.idx()];
            return Hop { ports: PortSet::from_bits_retain(1 << bit), class: 0, high: PortSet::empty() };
        }
        self.route_unicast_computed(at, src, dest)
    }

    /// [`Topology::route_unicast`] computed from the coordinates.
    fn route_unicast_computed(&self, at: NodeId, src: NodeId, dest: NodeId) -> Hop {
        if at == dest {
            return Hop { ports: PortSet::LOCAL, class: 0, high: PortSet::empty() };
        }
        match self.kind {
            TopologyKind::Hypercube => {
                let dim = (at.0 ^ dest.0).trailing_zeros() as usize;
                Hop { ports: PortSet::port(dim), class: 0, high: PortSet::empty() }
            }
            TopologyKind::Linear | TopologyKind::Mesh => {
                for i in 0..self.ndims() {
                    let (c, d) = (self.coord(at, i), self.coord(dest, i));
                    if c != d {
                        return Hop { ports: PortSet::port(2 * i + (d > c) as usize), class: 0, high: PortSet::empty() };
                    }
                }
                unreachable!("distinct nodes with equal coordinates")
            }
            TopologyKind::Torus => {
                for i in 0..self.ndims() {
                    let (c, d, k) = (self.coord(at, i), self.coord(dest, i), self.sizes[i]);
                    if c != d {
                        let up_dist = (d + k - c) % k;
                        let up = up_dist <= k - up_dist;
                        let class = Self::ring_class(c, up, self.coord(src, i), k);
                        return Hop { ports: PortSet::port(2 * i + up as usize), class, high: PortSet::empty() };
                    }
                }
                unreachable!("distinct nodes with equal coordinates")
            }
        }
    }

    /// The broadcast tree for in-router multicast: the outputs of router `at` for a broadcast
    /// from `root` that arrived on input port `in_port` (a port at or above `net_ports()` is
    /// the NIC: the packet starts here). Hypercube: the spanning binomial tree of
    /// Bertsekas et al. §2 (Fig. 4) within the dimensions in `span` — a packet that crossed
    /// dimension j goes on across the dimensions below j. Meshes and tori: the
    /// dimension-order tree of the lecture notes (continue in the arrival direction, and
    /// both ways in every higher dimension; on a ring of k the upward branch covers k/2
    /// nodes and the downward one the rest). Every node but the root also ejects a copy.
    pub fn route_broadcast(&self, at: NodeId, in_port: PortId, root: NodeId, span: u32) -> Hop {
        let from_nic = in_port.idx() >= self.net_ports();
        let mut ports = if from_nic { PortSet::empty() } else { PortSet::LOCAL };
        let mut high = PortSet::empty();
        match self.kind {
            TopologyKind::Hypercube => {
                let below = if from_nic { self.ndims() } else { in_port.idx() };
                let mask = span & ((1u64 << below) - 1) as u32;
                ports |= PortSet::from_bits_retain(mask as u64);
            }
            _ => {
                // The ring the packet arrived in (it goes on the same way), then every
                // higher dimension both ways: each branch of the dimension-order tree.
                let first_dim = if from_nic { 0 } else { in_port.idx() / 2 };
                for dim in first_dim..self.ndims() {
                    for up in [false, true] {
                        // Arrived from the neighbour below (port 2i) means travelling up.
                        if dim == first_dim && !from_nic && up != in_port.idx().is_multiple_of(2) {
                            continue;
                        }
                        if let Some(out) = self.tree_branch(at, root, dim, up) {
                            ports |= PortSet::port(out);
                            if self.tree_class(at, root, dim, up) == 1 {
                                high |= PortSet::port(out);
                            }
                        }
                    }
                }
            }
        }
        Hop { ports, class: 0, high }
    }

    /// On a hypercube, the part of a broadcast tree over `span` from `at` (entered on
    /// `in_port`; from the node at the root) down, `at` included: the subcube of `at` over
    /// the dimensions of `span` below the arrival one ([`Topology::route_broadcast`]), as its
    /// lowest id, highest id and number of nodes. `None` on other topologies.
    pub fn broadcast_subcube(&self, at: NodeId, in_port: PortId, span: u32) -> Option<(u32, u32, u32)> {
        if self.kind != TopologyKind::Hypercube {
            return None;
        }
        let below = in_port.idx().min(self.ndims());
        let mask = span & ((1u64 << below) - 1) as u32;
        Some((at.0 & !mask, at.0 | mask, 1 << mask.count_ones()))
    }

    /// Does the dimension-order tree continue from `at` one step `up`/down in `dim`?
    /// Returns the output port if so.
    fn tree_branch(&self, at: NodeId, root: NodeId, dim: usize, up: bool) -> Option<usize> {
        let (c, a, k) = (self.coord(at, dim), self.coord(root, dim), self.sizes[dim]);
        let port = 2 * dim + up as usize;
        let go = match self.kind {
            TopologyKind::Torus => {
                let off = if up { (c + k - a) % k } else { (a + k - c) % k };
                let reach = if up { k / 2 } else { k - 1 - k / 2 };
                off < reach
            }
            _ => {
                if up {
                    c + 1 < k
                } else {
                    c > 0
                }
            }
        };
        go.then_some(port)
    }

    /// How many nodes the broadcast tree's branch leaving `at` on port `port` covers along
    /// that port's dimension line (the "path ahead" of the farthest-first rule).
    pub fn branch_reach(&self, at: NodeId, root: NodeId, port: usize) -> u32 {
        match self.kind {
            TopologyKind::Hypercube => 1,
            _ => {
                let (dim, up) = (port / 2, port % 2 == 1);
                let mut n = at;
                let mut steps = 0;
                while self.tree_branch(n, root, dim, up).is_some() {
                    n = self.neighbor(n, port).expect("tree branch over a missing link");
                    steps += 1;
                }
                steps
            }
        }
    }

    fn tree_class(&self, at: NodeId, root: NodeId, dim: usize, up: bool) -> u8 {
        if self.kind != TopologyKind::Torus {
            return 0;
        }
        Self::ring_class(self.coord(at, dim), up, self.coord(root, dim), self.sizes[dim])
    }

    /// Nodes a broadcast from `root` over `span` reaches, root excluded.
    pub fn broadcast_reach(&self, span: u32) -> u64 {
        match self.kind {
            TopologyKind::Hypercube => (1u64 << span.count_ones()) - 1,
            _ => self.nodes as u64 - 1,
        }
    }

    /// Is `n` a destination of a broadcast from `root` over `span`?
    pub fn in_broadcast(&self, n: NodeId, root: NodeId, span: u32) -> bool {
        n != root
            && match self.kind {
                TopologyKind::Hypercube => (n.0 ^ root.0) & !span == 0,
                _ => true,
            }
    }

    /// All dimensions (the default broadcast span).
    pub fn full_span(&self) -> u32 {
        if self.ndims() >= 32 { u32::MAX } else { (1u32 << self.ndims()) - 1 }
    }

    /// Human-readable name of a node: its id, and coordinates on meshes and tori.
    pub fn node_name(&self, n: NodeId) -> String {
        match self.kind {
            TopologyKind::Hypercube | TopologyKind::Linear => n.to_string(),
            _ => format!("{} ({})", n, self.coords(n).iter().map(|c| c.to_string()).collect::<Vec<_>>().join(",")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Waveform names: nodes by coordinates (`d<i>_<c>` pairs beyond three dimensions, ids on
    /// the hypercube), ports by the direction `neighbor` takes them.
    #[test]
    fn scope_and_port_names_follow_the_wiring() {
        let mesh = Topology::new(TopologyKind::Mesh, &[4, 3]);
        assert_eq!(mesh.scope_name(mesh.node_at(&[1, 2])), "x1_y2");
        let names: Vec<String> = (0..4).map(|p| mesh.port_name(p)).collect();
        assert_eq!(names, ["xm", "xp", "ym", "yp"]);
        let at = mesh.node_at(&[1, 1]);
        for (p, to) in [(0, [0, 1]), (1, [2, 1]), (2, [1, 0]), (3, [1, 2])] {
            assert_eq!(mesh.neighbor(at, p), Some(mesh.node_at(&to)), "{}", mesh.port_name(p));
        }
        let line = Topology::new(TopologyKind::Linear, &[5]);
        assert_eq!((line.scope_name(NodeId(3)), line.port_name(1)), ("x3".to_string(), "xp".to_string()));
        let m4 = Topology::new(TopologyKind::Torus, &[3, 3, 3, 3]);
        assert_eq!(m4.scope_name(m4.node_at(&[2, 0, 1, 2])), "d0_2_d1_0_d2_1_d3_2");
        assert_eq!((m4.port_name(6), m4.port_name(7)), ("d3m".to_string(), "d3p".to_string()));
        let cube = Topology::new(TopologyKind::Hypercube, &[3]);
        assert_eq!((cube.scope_name(NodeId(5)), cube.port_name(2)), ("n0005".to_string(), "d2".to_string()));
        assert_eq!(cube.neighbor(NodeId(5), 2), Some(NodeId(1)));
    }

    /// Coordinates come out the same from the table and, for shapes too large for it, from
    /// division: node n's coordinate in dimension i is n / (product of the sizes before i)
    /// mod size i.
    #[test]
    fn coordinates_with_and_without_the_table() {
        let shapes: [(TopologyKind, &[u32]); 5] = [
            (TopologyKind::Mesh, &[5, 7, 3]),
            (TopologyKind::Torus, &[4, 6]),
            (TopologyKind::Linear, &[100]),
            (TopologyKind::Mesh, &[4096, 4097]),
            (TopologyKind::Linear, &[70_000]),
        ];
        for (kind, sizes) in shapes {
            let t = Topology::new(kind.clone(), sizes);
            let expect_table =
                sizes.iter().product::<u32>() as usize * sizes.len() <= Topology::COORD_TABLE_MAX && sizes.iter().all(|&k| k <= 65536);
            assert_eq!(!t.coords.is_empty(), expect_table, "{sizes:?}");
            assert_eq!(Topology::coord_table_bytes(&kind, sizes), if expect_table { t.coords.len() as u128 * 2 } else { 0 });
            let n = t.nodes() as u32;
            for node in (0..n).step_by((n as usize / 5000).max(1)).chain([n - 1]) {
                let mut below = 1;
                for (i, &k) in sizes.iter().enumerate() {
                    assert_eq!(t.coord(NodeId(node), i), node / below % k, "{sizes:?} node {node} dim {i}");
                    below *= k;
                }
            }
        }
    }

    /// Breadth-first distances over the links, independent of the routing functions.
    fn bfs(t: &Topology, from: NodeId) -> Vec<u32> {
        let mut dist = vec![u32::MAX; t.nodes()];
        let mut q = std::collections::VecDeque::new();
        dist[from.idx()] = 0;
        q.push_back(from);
        while let Some(n) = q.pop_front() {
            for p in 0..t.net_ports() {
                if let Some(m) = t.neighbor(n, p)
                    && dist[m.idx()] == u32::MAX
                {
                    dist[m.idx()] = dist[n.idx()] + 1;
                    q.push_back(m);
                }
            }
        }
        dist
    }

    fn shapes() -> Vec<Topology> {
        vec![
            Topology::new(TopologyKind::Hypercube, &[4]),
            Topology::new(TopologyKind::Linear, &[7]),
            Topology::new(TopologyKind::Mesh, &[3, 5]),
            Topology::new(TopologyKind::Mesh, &[2, 3, 4]),
            Topology::new(TopologyKind::Torus, &[5, 4]),
            Topology::new(TopologyKind::Torus, &[6]),
        ]
    }

    #[test]
    fn links_are_symmetric() {
        for t in shapes() {
            for n in 0..t.nodes() as u32 {
                for p in 0..t.net_ports() {
                    if let Some(m) = t.neighbor(NodeId(n), p) {
                        assert_eq!(t.neighbor(m, t.reverse_port(p)), Some(NodeId(n)), "{t:?} {n} {p}");
                    }
                }
            }
        }
    }

    #[test]
    fn unicast_follows_shortest_paths_and_eccentricity_matches_bfs() {
        for t in shapes() {
            for a in 0..t.nodes() as u32 {
                let dist = bfs(&t, NodeId(a));
                assert_eq!(*dist.iter().max().unwrap(), t.eccentricity(NodeId(a)));
                for b in 0..t.nodes() as u32 {
                    assert_eq!(t.distance(NodeId(a), NodeId(b)), dist[b as usize]);
                    let mut at = NodeId(a);
                    let mut hops = 0;
                    while at != NodeId(b) {
                        let h = t.route_unicast(at, NodeId(a), NodeId(b));
                        let p = h.ports.net_ports().next().unwrap();
                        at = t.neighbor(at, p).unwrap();
                        hops += 1;
                    }
                    assert_eq!(hops, dist[b as usize], "{t:?} {a}->{b}");
                    assert_eq!(t.route_unicast(at, NodeId(a), NodeId(b)).ports, PortSet::LOCAL);
                }
            }
        }
    }

    /// Following the broadcast tree reaches every node exactly once, in the shortest time.
    #[test]
    fn broadcast_tree_spans_once_at_shortest_depth() {
        for t in shapes() {
            for root in 0..t.nodes() as u32 {
                let root = NodeId(root);
                let dist = bfs(&t, root);
                let mut got = vec![0u32; t.nodes()];
                let mut stack = vec![(root, PortId(t.net_ports() as u8), 0u32)];
                while let Some((n, inp, depth)) = stack.pop() {
                    let h = t.route_broadcast(n, inp, root, t.full_span());
                    if h.ports.contains(PortSet::LOCAL) {
                        got[n.idx()] += 1;
                        assert_eq!(depth, dist[n.idx()], "{t:?} root {root} node {n}");
                    }
                    for p in h.ports.net_ports() {
                        let m = t.neighbor(n, p).expect("tree uses a missing link");
                        stack.push((m, PortId(t.reverse_port(p) as u8), depth + 1));
                    }
                }
                for (n, &g) in got.iter().enumerate() {
                    assert_eq!(g, (n != root.idx()) as u32, "{t:?} root {root} node {n}");
                }
            }
        }
    }

    /// On a torus each branch of a broadcast tree is in dateline class 1 exactly when it has
    /// crossed its ring's wrap-around link (from side − 1 up to 0, or from 0 down to side − 1)
    /// since it entered that ring: followed hop by hop from every root, tracking the crossing
    /// apart from the routing code. Other topologies have no class-1 branch.
    #[test]
    fn broadcast_branches_take_their_own_dateline_class() {
        let mut tori = shapes();
        tori.extend([Topology::new(TopologyKind::Torus, &[4, 4]), Topology::new(TopologyKind::Torus, &[3, 4, 2])]);
        for t in tori {
            let torus = t.kind == TopologyKind::Torus;
            for root in 0..t.nodes() as u32 {
                let root = NodeId(root);
                // (node, arrival port, dimension of the arrival hop, crossed a wrap link in it)
                let mut stack = vec![(root, PortId(t.net_ports() as u8), usize::MAX, false)];
                while let Some((n, inp, dim_in, crossed_in)) = stack.pop() {
                    let h = t.route_broadcast(n, inp, root, t.full_span());
                    assert!(h.high.difference(h.ports).is_empty(), "{t:?}: class-1 branches off the route");
                    for p in h.ports.net_ports() {
                        let m = t.neighbor(n, p).expect("tree uses a missing link");
                        let (dim, up) = (p / 2, p % 2 == 1);
                        let k = t.sizes[dim];
                        let wraps = torus && {
                            let (c, d) = (t.coord(n, dim), t.coord(m, dim));
                            (up && c == k - 1 && d == 0) || (!up && c == 0 && d == k - 1)
                        };
                        let crossed = wraps || (dim == dim_in && crossed_in);
                        let class1 = h.high.contains(PortSet::port(p));
                        assert_eq!(class1, torus && crossed, "{t:?} root {root} at {n} port {p}");
                        stack.push((m, PortId(t.reverse_port(p) as u8), dim, crossed));
                    }
                }
            }
        }
    }

    /// The unicast route table gives every router-destination pair (and any source) the hop
    /// the routing function computes; shapes above its size, and tori, have none.
    #[test]
    fn route_table_is_the_routing_function() {
        let shapes: [(TopologyKind, &[u32], bool); 7] = [
            (TopologyKind::Mesh, &[5, 7, 3], true),
            (TopologyKind::Linear, &[100], true),
            (TopologyKind::Hypercube, &[8], true),
            (TopologyKind::Mesh, &[16, 16], true),
            (TopologyKind::Mesh, &[16, 17], false),
            (TopologyKind::Hypercube, &[9], false),
            (TopologyKind::Torus, &[4, 4], false),
        ];
        for (kind, sizes, table) in shapes {
            let t = Topology::new(kind.clone(), sizes);
            assert_eq!(!t.routes.is_empty(), table, "{sizes:?}");
            assert_eq!(Topology::route_table_bytes(&kind, t.nodes() as u128), t.routes.len() as u128);
            let n = t.nodes() as u32;
            for at in 0..n {
                for dest in 0..n {
                    let src = NodeId((at * 7 + dest * 3) % n);
                    let want = t.route_unicast_computed(NodeId(at), src, NodeId(dest));
                    assert_eq!(t.route_unicast(NodeId(at), src, NodeId(dest)), want, "{sizes:?} {at} -> {dest}");
                }
            }
        }
    }

    #[test]
    fn torus_dateline_class_switches_after_wrap() {
        let t = Topology::new(TopologyKind::Torus, &[8]);
        // From 6 to 1 going up: 6->7 class 0, 7->0 crosses (class 1), 0->1 class 1.
        assert_eq!(t.route_unicast(NodeId(6), NodeId(6), NodeId(1)).class, 0);
        assert_eq!(t.route_unicast(NodeId(7), NodeId(6), NodeId(1)).class, 1);
        assert_eq!(t.route_unicast(NodeId(0), NodeId(6), NodeId(1)).class, 1);
        // From 1 to 6 going down: 1->0 class 0, 0->7 crosses.
        assert_eq!(t.route_unicast(NodeId(1), NodeId(1), NodeId(6)).class, 0);
        assert_eq!(t.route_unicast(NodeId(0), NodeId(1), NodeId(6)).class, 1);
    }
}
