//! K-port store-and-forward single-node broadcast (`snb --ports K`, the nodes forwarding)
//! on hypercubes, meshes and tori: the lecture notes' lower bound max(eccentricity,
//! ⌈log_{K+1} N⌉) (computed here from the sides) reported as the lower bound, the tree's
//! K-port slots as the paper bound and met by the run on the ideal router, every node
//! reached once, and no node starting more than K packets at once (counted from the packet
//! heads leaving each router, by a probe).

use fabric::probe::{CycleView, Probe};
use std::collections::HashMap;
use testbenches::config::{Config, Raw};
use testbenches::run;

/// The most packet heads one router sent on its links in one cycle.
struct HeadsPerCycle {
    ports_per_router: u32,
    most: u32,
}

impl Probe for HeadsPerCycle {
    fn cycle(&mut self, view: &CycleView<'_>) {
        let mut per_router: HashMap<u32, u32> = HashMap::new();
        for d in view.departures.iter().filter(|d| d.flit.is_head()) {
            *per_router.entry(d.out_port / self.ports_per_router).or_default() += 1;
        }
        self.most = self.most.max(per_router.values().copied().max().unwrap_or(0));
    }
    fn as_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}

/// ⌈log_b n⌉ by repeated multiplication.
fn log_ceil(b: u64, n: u64) -> u64 {
    let (mut r, mut p) = (0, 1);
    while p < n {
        p *= b;
        r += 1;
    }
    r
}

/// (slots, paper bound, lower bound) of `snb` with `k` ports, after checking deliveries and
/// the port limit.
fn run_k(topology: &str, dims: &str, root: u32, k: u32) -> (f64, u64, u64) {
    let mut raw = Raw::default();
    for (f, v) in [("topology", topology.to_string()), ("dims", dims.to_string()), ("root", root.to_string()), ("ports", k.to_string())] {
        raw.values.insert(f.to_string(), v);
    }
    let what = format!("snb --ports {k} on {topology} {dims} from {root}");
    let cfg = Config::resolve(&raw).unwrap_or_else(|e| panic!("{what}: {e}"));
    let (mut f, _) = run::build(&cfg);
    let ports_per_router = (f.output_ports() / f.topo.nodes()) as u32;
    f.add_probe(Box::new(HeadsPerCycle { ports_per_router, most: 0 }));
    f.run();
    let probe = f.take_probes().pop().unwrap().as_any().downcast::<HeadsPerCycle>().unwrap();
    assert!(probe.most <= k, "{what}: a node started {} packets at once", probe.most);
    let v: serde_json::Value = serde_json::from_str(&testbenches::json::to_string(&run::run(&cfg))).unwrap();
    assert_eq!(v["missing_deliveries"], 0, "{what}");
    assert_eq!(v["duplicate_deliveries"], 0, "{what}");
    let g = |key: &str| v[key].as_f64().unwrap_or_else(|| panic!("{what}: {key}"));
    (g("slots"), g("paper_bound_slots") as u64, g("lower_bound_slots") as u64)
}

/// Hypercubes: d slots for every K (the binomial tree, highest dimension first, is already
/// optimal one-port), the bound max(d, ⌈log_{K+1} 2^d⌉) = d.
#[test]
fn k_port_hypercubes_take_d_slots() {
    for d in 3..=7u32 {
        for k in [2, 3] {
            for root in [0, (1 << d) - 1, 5 % (1 << d)] {
                let (slots, paper, lower) = run_k("hypercube", &d.to_string(), root, k);
                assert_eq!(lower, d as u64);
                assert_eq!(paper, d as u64, "d={d} K={k}");
                assert_eq!(slots, d as f64, "d={d} K={k}");
            }
        }
    }
}

/// Meshes and tori: the lower bound from the sides; the tree's K-port slots are met by the
/// run, lie between the bound and the one-port tree's, and shrink (never grow) with K.
#[test]
fn k_port_meshes_and_tori_meet_their_tree_bound() {
    for (topo, dims) in [("mesh", "8x8"), ("mesh", "5x7"), ("mesh", "3x4x5"), ("torus", "5x5"), ("torus", "7x4"), ("torus", "3x3")] {
        let sides: Vec<u32> = dims.split('x').map(|s| s.parse().unwrap()).collect();
        let n: u32 = sides.iter().product();
        for root in [0, n / 2, n - 1, (n * 2) / 7] {
            // Eccentricity from the sides: farthest corner on a mesh, half of every ring on a torus.
            let mut rest = root;
            let ecc: u64 = sides
                .iter()
                .map(|&s| {
                    let c = rest % s;
                    rest /= s;
                    if topo == "torus" { (s / 2) as u64 } else { c.max(s - 1 - c) as u64 }
                })
                .sum();
            let mut previous = u64::MAX;
            for k in [1, 2, 3] {
                let (slots, paper, lower) = run_k(topo, dims, root, k);
                let what = format!("{topo} {dims} root {root} K={k}");
                assert_eq!(lower, ecc.max(log_ceil(k as u64 + 1, n as u64)), "{what}");
                assert!(paper >= lower, "{what}: tree {paper} below the bound {lower}");
                assert!(paper <= previous, "{what}: {paper} slots, {previous} with fewer ports");
                assert_eq!(slots, paper as f64, "{what}");
                previous = paper;
            }
        }
    }
}
