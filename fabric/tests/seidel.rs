//! Seidel 1993: simulated broadcast costs against Table I (written out here, independently
//! of `fabric::algorithms::seidel::model`), any source (§4), arbitrary sizes (§5), and the
//! no-contention claims (§3, §4) as checks on the simulated link usage.

use fabric::algorithms::seidel::{Alg, Fill, Seidel, Setup};
use fabric::probe::{CycleView, Probe};
use fabric::*;
use router::{NodeId, Switching};
use std::collections::HashMap;

const A: f64 = 0.08;
const B: f64 = 75.0;
const RHO: f64 = 0.01;

#[derive(Clone, Copy, Debug)]
struct Msg {
    from: u32,
    to: u32,
    flits: u64,
    injected: u64,
    ejected: u64,
}

/// Link and port contention as seen on the wires: the most worms holding any one link at
/// once (a worm holds a link from its head's departure to its tail's), and the packets
/// that took longer from head injection to tail ejection than their length plus their
/// distance (plus two cycles) — held up somewhere by another worm or a busy receiver.
#[derive(Default)]
struct Contention {
    open: HashMap<u32, u32>,
    max_worms: u32,
    heads: HashMap<u32, (u64, u32)>,
    delayed: Vec<String>,
    packets: u64,
    /// Every packet as it went: source, destination, flits, head injected, tail ejected.
    msgs: Vec<Msg>,
}

impl Probe for Contention {
    fn cycle(&mut self, v: &CycleView<'_>) {
        for d in v.departures {
            if d.flit.is_head() {
                let n = self.open.entry(d.out_port).or_insert(0);
                *n += 1;
                self.max_worms = self.max_worms.max(*n);
            }
        }
        for d in v.departures {
            if d.flit.is_tail() {
                *self.open.get_mut(&d.out_port).unwrap() -= 1;
            }
        }
        for (n, _, f) in v.injections {
            if f.is_head() {
                self.heads.insert(f.packet.0, (v.t, n.0));
            }
        }
        for (n, e, _) in v.ejections {
            if e.flit.is_tail() {
                self.packets += 1;
                let (t0, src) = self.heads.remove(&e.flit.packet.0).unwrap();
                let hops = v.fabric.topo.distance(NodeId(src), *n) as u64;
                let len = e.flit.seq as u64 + 1;
                self.msgs.push(Msg { from: src, to: n.0, flits: len, injected: t0, ejected: v.t });
                if v.t - t0 > len + hops + 2 {
                    self.delayed.push(format!("{src}->{n} ({len} flits, {hops} hops) took {}", v.t - t0));
                }
            }
        }
    }
    fn as_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}

struct Run {
    us: f64,
    /// The last delivery's cycle.
    cycles: u64,
    c: Contention,
}

/// The paper's constants on the simulation's clock for an m-byte message: (flit bytes,
/// cycle µs, message flits, start-up b in cycles, RH's permutation mρ in cycles).
fn clock(m: u64) -> (u64, f64, f64, u64, u64) {
    let flit = m.div_ceil(4096).max(1).next_power_of_two();
    let cycle = A * flit as f64;
    (flit, cycle, m as f64 / flit as f64, (B / cycle).round() as u64, (m as f64 * RHO / cycle).round() as u64)
}

/// Simulate `alg` on `sizes` (one size: a linear array) with an m-byte message under the
/// Delta constants: a flit of 2^k bytes keeps the message within 4096 flits, a cycle is
/// a * flit, b is rounded to whole cycles.
fn simulate(alg: Alg, sizes: &[u32], nu: u32, m: u64, root: u32, fill: Fill) -> Run {
    let kind = if sizes.len() == 1 { TopologyKind::Linear } else { TopologyKind::Mesh };
    let (_, cycle, mflits, startup, permute) = clock(m);
    let mut spec = FabricSpec::ideal(kind.clone(), sizes);
    spec.switching = Switching::Wormhole;
    spec.ports = PortModel::K(1);
    spec.nu = nu as u8;
    spec.vcs = 1 << nu;
    spec.buffer_flits = 4 << nu;
    spec.packet_flits = mflits.ceil() as u16;
    spec.startup_cycles = startup;
    spec.watchdog_cycles = 1 << 30;
    let setup = Setup {
        alg,
        kind,
        sizes: sizes.to_vec(),
        nu,
        root: NodeId(root),
        fill,
        message_flits: mflits,
        startup_cycles: startup,
        permute_cycles: if alg == Alg::Rh { permute } else { 0 },
        companions_bst: 3.0 * (m as f64 * A / 2.0 + B) < 2.0 * (m as f64 * A + B),
    };
    let mut f = Fabric::new(&spec, Box::new(Seidel::new(&setup)));
    f.add_probe(Box::new(Contention::default()));
    assert_eq!(f.run(), Ending::Quiescent, "{alg:?} {sizes:?} nu {nu} m {m}");
    assert!(f.scoreboard.ok(), "{alg:?} {sizes:?} nu {nu} m {m}: {:?} {:?}", f.scoreboard.counts(), f.scoreboard.problems);
    let c = *f.take_probes().pop().unwrap().as_any().downcast::<Contention>().unwrap();
    Run { us: f.counters.last_delivery as f64 * cycle, cycles: f.counters.last_delivery, c }
}

/// Table I (ν < d, ν < d1 <= d2), µs.
fn table1(alg: Alg, d: &[u32], nu: u32, m: f64) -> f64 {
    let (ma, nu) = (m * A, nu as f64);
    let t = |x: f64| 2f64.powf(x);
    if d.len() == 1 {
        let d = d[0] as f64;
        return match alg {
            Alg::St => (2.0 + (d - nu - 2.0) / t(nu)) * ma + (d + nu) * B,
            Alg::Bst => (2.0 + (d - nu - 3.0) / t(nu + 1.0)) * ma + (d + nu + 1.0) * B,
            Alg::Rh => (2.0 + (d - nu - 2.0) / t(nu + 1.0) - 1.0 / t(d)) * ma + 2.0 * d * B + m * RHO,
            _ => unreachable!(),
        };
    }
    let (d1, d2) = (d[0].min(d[1]) as f64, d[0].max(d[1]) as f64);
    match alg {
        Alg::St => (2.0 + (d2 - nu - 2.0) / t(2.0 * nu + 1.0)) * ma + (2.0 * d2 + 2.0 * nu + 2.0) * B,
        Alg::Bst => (2.0 + (2.0 * d2 - 2.0 * nu - 5.0) / t(2.0 * nu + 3.0)) * ma + (2.0 * d2 + 2.0 * nu + 3.0) * B,
        Alg::Rh => {
            (2.0 + (2.0 * (d2 - d1) - 3.0) / t(d1 + nu + 2.0) + 1.0 / t(2.0 * nu + 3.0) - 1.0 / t(d1 + d2)) * ma
                + 2.0 * (d1 + d2) * B
                + m * RHO
        }
        // Eq. 9 (BST over the mesh as one array; ν > 0: eq. 8 with d = d1 + d2).
        Alg::BstSimple => (2.0 + (d1 + d2 - nu - 3.0) / t(nu + 1.0)) * ma + (d1 + d2 + nu + 1.0) * B,
        // §3.2.1 (ν = 0); ν > 0: §3.2.2's five phases summed, first along dimension 1
        // (eq. 4 as printed is higher by (1 - 2^(1-ν) + 2^-2ν) ma).
        Alg::StSimple => {
            let (first, second) = (d[1] as f64, d[0] as f64);
            (2.0 + (first - nu) / t(nu) + (second - nu - 2.0) / t(2.0 * nu)) * ma + (first + second + 2.0 * nu) * B
        }
    }
}

fn lg(n: u32) -> u32 {
    n.trailing_zeros()
}

fn check(alg: Alg, sizes: &[u32], nu: u32, m: u64, tol: f64) -> Run {
    let r = simulate(alg, sizes, nu, m, 0, Fill::None);
    let d: Vec<u32> = sizes.iter().map(|&s| lg(s)).collect();
    let t = table1(alg, &d, nu, m as f64);
    assert!((r.us / t - 1.0).abs() < tol, "{alg:?} {sizes:?} nu {nu} m {m}: simulated {:.1} µs, Table I {t:.1} µs", r.us);
    r
}

/// ST and BST on linear arrays agree with Table I (eqs. 2 and 8) within 2 %, and neither
/// link nor port contention occurs (§3.1, §3.3): at most 2^ν worms per link, none held up.
#[test]
fn linear_st_bst_match_table_1() {
    for d in 2..=5u32 {
        for nu in 0..d.min(3) {
            for m in [8u64, 4096, 65536] {
                for alg in [Alg::St, Alg::Bst] {
                    let r = check(alg, &[1 << d], nu, m, 0.02);
                    assert!(r.c.max_worms <= 1 << nu, "{alg:?} d {d} nu {nu}: {} worms on a link", r.c.max_worms);
                    assert!(r.c.delayed.is_empty(), "{alg:?} d {d} nu {nu} m {m}: {:?}", &r.c.delayed[..r.c.delayed.len().min(5)]);
                }
            }
        }
    }
}

/// The better mesh ST (eq. 6) and BST (eq. 10, §3.4.2) and the simple ones (§3.2.1, eq. 9)
/// agree with the paper within 2 %, square and oblong, without contention.
#[test]
fn mesh_st_bst_match_table_1() {
    let cases: &[(Alg, [u32; 2], u32)] = &[
        (Alg::St, [4, 4], 0),
        (Alg::St, [8, 16], 0),
        (Alg::St, [16, 8], 0),
        (Alg::St, [8, 8], 1),
        (Alg::St, [8, 16], 2),
        (Alg::Bst, [4, 4], 0),
        (Alg::Bst, [8, 16], 0),
        (Alg::Bst, [16, 8], 0),
        (Alg::Bst, [8, 8], 1),
        (Alg::Bst, [16, 16], 2),
        (Alg::StSimple, [8, 4], 0),
        (Alg::StSimple, [8, 16], 1),
        (Alg::StSimple, [16, 8], 2),
        (Alg::BstSimple, [8, 4], 0),
        (Alg::BstSimple, [8, 8], 1),
    ];
    for &(alg, sizes, nu) in cases {
        for m in [8u64, 65536] {
            let r = check(alg, &sizes, nu, m, 0.02);
            assert!(r.c.max_worms <= 1 << nu, "{alg:?} {sizes:?} nu {nu}: {} worms on a link", r.c.max_worms);
            assert!(r.c.delayed.is_empty(), "{alg:?} {sizes:?} nu {nu} m {m}: {:?}", &r.c.delayed[..r.c.delayed.len().min(5)]);
        }
    }
}

/// RH: the model is optimistic about its exchanges; the simulation stays within 10 % of
/// Table I here and its exchanges do share links (the contention the model counts).
#[test]
fn rh_near_table_1_with_contention() {
    for (sizes, nu) in [(vec![16u32], 0u32), (vec![16], 1), (vec![8, 8], 0), (vec![4, 8], 0)] {
        for m in [8u64, 65536] {
            let r = check(Alg::Rh, &sizes, nu, m, 0.10);
            if m == 65536 {
                assert!(!r.c.delayed.is_empty(), "{sizes:?} nu {nu}: RH exchanges without contention?");
            }
        }
    }
}

/// §4: from any source the linear ST and BST cost what they cost from node 0, and that is
/// Table I's cost (eqs. 2 and 8), without contention.
#[test]
fn any_source_costs_the_same_on_linear_arrays() {
    for (alg, nu) in [(Alg::St, 0u32), (Alg::St, 1), (Alg::St, 2), (Alg::Bst, 0), (Alg::Bst, 1), (Alg::Bst, 2)] {
        let base = simulate(alg, &[16], nu, 8192, 0, Fill::None).us;
        let t = table1(alg, &[4], nu, 8192.0);
        for root in 1..16 {
            let r = simulate(alg, &[16], nu, 8192, root, Fill::None);
            assert!((r.us / base - 1.0).abs() < 0.005, "{alg:?} nu {nu} root {root}: {:.1} µs vs {base:.1} from node 0", r.us);
            assert!((r.us / t - 1.0).abs() < 0.02, "{alg:?} nu {nu} root {root}: {:.1} µs vs Table I {t:.1}", r.us);
            assert!(r.c.delayed.is_empty() && r.c.max_worms <= 1 << nu, "{alg:?} nu {nu} root {root}: {:?}", r.c.delayed);
        }
    }
}

/// The linear RH (§3.5) on 2^d nodes in cycles, for a message of `f` flits (a multiple of
/// 2^d), start-up `b` and permutation `p` cycles: (what no schedule can beat, Table I).
///
/// Both start with the distribute: the permutation, then d steps of b + f/2^i, contention-
/// free from any source (§4.1); every node's part of it ends no earlier than `dist`, and
/// its first exchange worm leaves b later. Table I then charges the exchanges in lock-step:
/// step j (partners 2^j apart, f/2^(j+1) flits, 2^j worms over the busiest link sharing its
/// 2^ν lanes) costs b + max(1, 2^(j-ν)) f/2^(j+1). The lower bound: the first exchange
/// step sends 2^(d-1) worms of f/2^d flits over the middle link into the half without the
/// source (none is left out there: only worms *into* the source are), so the last one is in
/// no earlier than dist + b + max(f/2^d, f/2^(ν+1)); the pieces it carries enter that half
/// only there, and reach the node opposite its receiver in the half only through d − 1
/// more exchanges, each sent once the previous one is in: b + f/2^(j+1) each at best,
/// j = d − 2 … 0. With ν >= d − 2 only the first step has more worms on a link than
/// lanes, and the two are equal.
fn rh_linear_cycles(d: u32, nu: u32, f: u64, b: u64, p: u64) -> (u64, u64) {
    let dist = p + (1..=d).map(|i| b + (f >> i)).sum::<u64>();
    let rest: u64 = (0..d - 1).map(|j| b + (f >> (j + 1))).sum();
    let lower = dist + b + (f >> d).max(f >> (nu + 1)) + rest;
    let table = dist + (0..d).map(|j| b + (1u64 << j.saturating_sub(nu)) * (f >> (j + 1))).sum::<u64>();
    (lower, table)
}

fn rh_linear(n: u32, nu: u32, m: u64, root: u32) -> Run {
    simulate(Alg::Rh, &[n], nu, m, root, Fill::None)
}

/// §4.4 as the plan runs it, derived here: from source k the distribute is the spanning
/// tree of node 0 with every number XOR-ed with k (logical x sends f/2^i flits to
/// x + 2^(d-i) in step i), and the exchange is the same from every source: every node p
/// sends f/2^(j+1) flits to p ⊕ 2^j for each j, except to the source, which holds the
/// message. The distribute ends when the model says, from every source. What does depend on
/// the source is when each node enters the exchange: the cycles of hop latency its piece
/// picked up along the tree, which follow the logical number, so physical node p enters it
/// from source k exactly when node p ⊕ k does from node 0.
#[test]
fn rh_any_source_sends_what_section_4_says() {
    let (n, d, m) = (16u32, 4u32, 8192u64);
    let (_, _, mf, b, p) = clock(m);
    let f = mf as u64;
    let dist_end = p + (1..=d).map(|i| b + (f >> i)).sum::<u64>();
    let mut entry0: Vec<Option<u64>> = Vec::new();
    let mut dist0 = 0;
    for k in 0..n {
        let r = rh_linear(n, 0, m, k);
        let mut want: Vec<(u32, u32, u64)> = Vec::new();
        for i in 1..=d {
            for x in (0..n).step_by(1 << (d - i + 1)) {
                want.push((x ^ k, (x + (1 << (d - i))) ^ k, f >> i));
            }
        }
        let distribute = want.len();
        for j in 0..d {
            want.extend((0..n).filter(|&q| q ^ (1 << j) != k).map(|q| (q, q ^ (1 << j), f >> (j + 1))));
        }
        let mut got: Vec<(u32, u32, u64)> = r.c.msgs.iter().map(|g| (g.from, g.to, g.flits)).collect();
        let mut sorted = want.clone();
        sorted.sort();
        got.sort();
        assert_eq!(got, sorted, "root {k}: the messages sent");
        let when = |w: &(u32, u32, u64)| *r.c.msgs.iter().find(|g| (g.from, g.to, g.flits) == *w).unwrap();
        let dist = want[..distribute].iter().map(|w| when(w).ejected).max().unwrap();
        assert!(dist >= dist_end && dist < dist_end + n as u64, "root {k}: distribute done in cycle {dist}, the model says {dist_end}");
        // When each node sends its first exchange worm (to its partner n/2 away; the node
        // whose partner is the source sends none).
        let half = 1u32 << (d - 1);
        let entry: Vec<Option<u64>> = (0..n).map(|q| (q ^ half != k).then(|| when(&(q, q ^ half, f >> d)).injected)).collect();
        if k == 0 {
            (entry0, dist0) = (entry, dist);
        } else {
            assert_eq!(dist, dist0, "root {k}: the distribute ends when it does from node 0");
            for q in 0..n {
                assert_eq!(
                    entry[q as usize],
                    entry0[(q ^ k) as usize],
                    "root {k}: node {q} enters the exchange when node {} does from node 0",
                    q ^ k
                );
            }
        }
    }
    // The skew: from node 0, node q enters the exchange after node 0 by the hops its piece
    // came (up to 8 + 2 + 1 = 11 cycles for node 15; not the same cycle everywhere).
    let e0 = entry0[0].unwrap();
    assert!(entry0.iter().flatten().all(|&e| e >= e0 && e < e0 + n as u64) && entry0[15] > Some(e0), "{entry0:?}");
}

/// With ν >= d − 2 only the first exchange step puts more worms on a link than it has
/// lanes: whatever order they cross in, the broadcast ends d − 1 contention-free steps
/// after the last of them, which is Table I (`rh_linear_cycles`), and every source costs
/// that. The simulation adds only hop latency: one cycle per hop along the distribute's
/// chain of sends and along the exchanges', at most 2(n − 1).
#[test]
fn rh_any_source_costs_table_1_when_one_exchange_step_contends() {
    for (n, nu) in [(4u32, 0u32), (8, 1), (16, 2), (32, 3)] {
        let d = n.trailing_zeros();
        for m in [8192u64, 65536] {
            let (_, cycle, f, b, p) = clock(m);
            let (lower, table) = rh_linear_cycles(d, nu, f as u64, b, p);
            assert_eq!(lower, table, "n {n} nu {nu}");
            // The cycle count is Table I's printed formula, but for b rounded to whole cycles.
            let printed = table1(Alg::Rh, &[d], nu, m as f64);
            assert!(
                (table as f64 * cycle - printed).abs() <= 2.0 * d as f64 * cycle,
                "n {n} nu {nu} m {m}: {table} cycles vs {printed:.1} µs"
            );
            for root in 0..n {
                let r = rh_linear(n, nu, m, root);
                assert!(
                    r.cycles >= table && r.cycles <= table + 2 * (n as u64 - 1),
                    "n {n} nu {nu} m {m} root {root}: {} cycles, Table I {table}",
                    r.cycles
                );
            }
        }
    }
}

/// With ν <= d − 3 two or more exchange steps contend, and §4's "no cost penalty" fails in
/// the simulation: which worm crosses a contended link first follows the few cycles by
/// which the nodes enter the exchange, and that follows the source
/// (`rh_any_source_sends_what_section_4_says`). What holds from every source: the cost is
/// at least `rh_linear_cycles`'s bound, and the sources k and n − 1 − k cost the same,
/// for XOR-ing with n − 1 reflects the array (p ↦ n − 1 − p) and the fabric is symmetric.
/// The costs measured from every source of the 16-node array at ν = 0 are pinned below, as
/// docs/papers.md lists them: neither derived nor equal to Table I (0.924 to 1.175 of it).
#[test]
fn rh_cost_depends_on_the_source_when_two_exchange_steps_contend() {
    for (n, nu) in [(8u32, 0u32), (16, 0), (16, 1)] {
        let d = n.trailing_zeros();
        for m in [8192u64, 65536] {
            let (_, _, f, b, p) = clock(m);
            let (lower, table) = rh_linear_cycles(d, nu, f as u64, b, p);
            assert!(lower < table);
            let costs: Vec<u64> = (0..n).map(|root| rh_linear(n, nu, m, root).cycles).collect();
            for root in 0..n as usize {
                assert!(costs[root] >= lower, "n {n} nu {nu} m {m} root {root}: {} cycles, below the bound {lower}", costs[root]);
                assert_eq!(costs[root], costs[n as usize - 1 - root], "n {n} nu {nu} m {m}: roots {root} and its mirror");
            }
            if (n, nu) == (16, 0) {
                // Measured (docs/papers.md, "Broadcasting on linear arrays and meshes"): roots 0..7.
                let pinned: &[u64] = if m == 8192 {
                    &[16262, 16241, 17810, 17515, 17315, 17085, 16114, 15060]
                } else {
                    &[13212, 15291, 14844, 14796, 13837, 14602, 13266, 12390]
                };
                assert_eq!(&costs[..8], pinned, "m {m}: docs/papers.md's table is out of date");
            }
        }
    }
}

/// §4's conjecture for meshes, tried: the better ST and BST (and the simple ones) from a
/// few other sources cost what they cost from node 0, and Table I.
#[test]
fn any_source_on_meshes() {
    for (alg, nu) in [(Alg::St, 0u32), (Alg::Bst, 0), (Alg::St, 1), (Alg::Bst, 1), (Alg::StSimple, 0), (Alg::BstSimple, 0)] {
        let base = simulate(alg, &[8, 16], nu, 8192, 0, Fill::None).us;
        let t = table1(alg, &[3, 4], nu, 8192.0);
        for root in [1u32, 9, 77, 127] {
            let r = simulate(alg, &[8, 16], nu, 8192, root, Fill::None);
            assert!((r.us / base - 1.0).abs() < 0.01, "{alg:?} nu {nu} root {root}: {:.1} µs vs {base:.1} from node 0", r.us);
            assert!((r.us / t - 1.0).abs() < 0.02, "{alg:?} nu {nu} root {root}: {:.1} µs vs Table I {t:.1}", r.us);
        }
    }
}

/// §5: virtual nodes cost what the next power of two costs; companions cost the previous
/// power of two plus ma + b (a line, or a mesh with companions in one dimension), or plus
/// min(2(ma + b), 3(ma/2 + b)) (companions in both).
#[test]
fn arbitrary_sizes_cost_what_section_5_says() {
    let m = 4096u64;
    let ma = m as f64 * A;
    let near = |got: f64, want: f64, what: &str| assert!((got / want - 1.0).abs() < 0.02, "{what}: {got:.1} µs, §5 says {want:.1}");
    for n in [5u32, 11, 13] {
        let up = 32 - (n - 1).leading_zeros();
        let down = 31 - n.leading_zeros();
        let st_v = simulate(Alg::St, &[n], 0, m, 0, Fill::Virtual).us;
        near(st_v, up as f64 * (ma + B), &format!("st virtual n {n}"));
        let bst_v = simulate(Alg::Bst, &[n], 0, m, 0, Fill::Virtual).us;
        near(bst_v, (up + 1) as f64 * (ma / 2.0 + B), &format!("bst virtual n {n}"));
        let st_c = simulate(Alg::St, &[n], 0, m, 0, Fill::Companions).us;
        near(st_c, (down + 1) as f64 * (ma + B), &format!("st companions n {n}"));
        let bst_c = simulate(Alg::Bst, &[n], 0, m, 0, Fill::Companions).us;
        near(bst_c, (down + 1) as f64 * (ma / 2.0 + B) + ma + B, &format!("bst companions n {n}"));
        assert!(bst_v < bst_c, "n {n}: virtual nodes beat companions for the linear BST (§5.3)");
        let rh_c = simulate(Alg::Rh, &[n], 0, m, 0, Fill::Companions).us;
        let want = table1(Alg::Rh, &[down], 0, m as f64) + ma + B;
        assert!((rh_c / want - 1.0).abs() < 0.05, "rh companions n {n}: {rh_c:.1} µs, §5 says {want:.1}");
    }
    // Meshes: companions in both dimensions, in one; virtual nodes for the simple ST.
    for m in [512u64, 16384] {
        let ma = m as f64 * A;
        let extra = (2.0 * (ma + B)).min(3.0 * (ma / 2.0 + B));
        let st = simulate(Alg::St, &[6, 12], 0, m, 0, Fill::Companions).us;
        near(st, table1(Alg::St, &[2, 3], 0, m as f64) + extra, &format!("mesh st companions 6x12 m {m}"));
        let bst = simulate(Alg::Bst, &[12, 10], 0, m, 0, Fill::Companions).us;
        near(bst, table1(Alg::Bst, &[3, 3], 0, m as f64) + extra, &format!("mesh bst companions 12x10 m {m}"));
        let one = simulate(Alg::St, &[8, 6], 0, m, 0, Fill::Companions).us;
        near(one, table1(Alg::St, &[3, 2], 0, m as f64) + ma + B, &format!("mesh st companions 8x6 m {m}"));
        let v = simulate(Alg::StSimple, &[6, 12], 0, m, 0, Fill::Virtual).us;
        near(v, table1(Alg::StSimple, &[3, 4], 0, m as f64), &format!("mesh st-simple virtual 6x12 m {m}"));
    }
}
