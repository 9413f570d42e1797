//! The wormhole broadcasts of the lecture notes (`rd`, `dta`, `ho-kao`), simulated: every
//! node informed exactly once (the scoreboard), the rounds measured from the run equal to
//! the construction's for every size and source tried, and no link carrying two worms of
//! one round (from the head flits crossing each link in the run); and the wormhole lower
//! bounds in the reports.

use fabric::algorithms::wormhole::{self, Scheme};
use fabric::probe::{CycleView, Probe};
use std::collections::HashMap;
use testbenches::config::{Config, Raw};
use testbenches::run;

fn config(flags: &[(&str, String)]) -> Config {
    let raw = Raw::from_given(flags.iter().cloned()).unwrap();
    Config::resolve(&raw).unwrap_or_else(|e| panic!("{flags:?}: {e}"))
}

/// The links each round's worms cross, from the head flits leaving on them: a link taken by
/// two worms (source, destination) of one round is a conflict.
#[derive(Default)]
struct RoundLinks {
    used: HashMap<(u64, u32), (u32, u32)>,
    conflicts: Vec<String>,
}

impl Probe for RoundLinks {
    fn cycle(&mut self, v: &CycleView<'_>) {
        for d in v.departures.iter().filter(|d| d.flit.is_head()) {
            let p = v.fabric.packets.get(d.flit.packet);
            let worm = (p.src().0, p.dest().0);
            if let Some(other) = self.used.insert((p.aux, d.out_port), worm)
                && other != worm
            {
                self.conflicts.push(format!("round {}: output {} carries {other:?} and {worm:?}", p.aux, d.out_port));
            }
        }
    }
    fn as_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}

/// Run `algorithm` from `root` and check the scoreboard, the rounds against the
/// construction's and the links of each round.
fn check(algorithm: &str, topology: &str, dims: &str, root: u32, ports: &str) {
    let cfg = config(&[
        ("topology", topology.into()),
        ("dims", dims.into()),
        ("algorithm", algorithm.into()),
        ("root", root.to_string()),
        ("ports", ports.into()),
        ("switching", "wh".into()),
        ("packet-flits", "4".into()),
    ]);
    let what = format!("{algorithm} on {topology} {dims} from {root}");
    let (mut f, bounds) = run::build(&cfg);
    f.add_probe(Box::new(RoundLinks::default()));
    let ending = f.run();
    let probe = f.take_probes().pop().unwrap().as_any().downcast::<RoundLinks>().unwrap();
    let r = run::report(&cfg, &f, bounds, ending, 0.0);
    assert_eq!(r.exit_code(), 0, "{what}: {:?} {:?}", r.problems, r.algorithm_failures);
    assert_eq!((r.deliveries, r.duplicate_deliveries, r.missing_deliveries), (f.topo.nodes() as u64 - 1, 0, 0), "{what}");
    let scheme = Scheme::parse(algorithm).unwrap();
    assert_eq!(r.rounds, Some(scheme.rounds(&f.topo) as u64), "{what}");
    assert!(r.rounds >= r.lower_bound_rounds, "{what}");
    assert!(probe.conflicts.is_empty(), "{what}: {:?}", &probe.conflicts[..probe.conflicts.len().min(5)]);
    // Every worm was seen: one round-1 link per worm at least.
    assert!(!probe.used.is_empty());
}

/// Sources spread over the nodes (a fixed linear congruential sequence).
fn sources(nodes: u32, count: usize, seed: u64) -> Vec<u32> {
    let mut x = seed;
    (0..count)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((x >> 33) % nodes as u64) as u32
        })
        .collect()
}

#[test]
fn dta_and_ho_kao_on_hypercubes_of_dimension_3_to_12() {
    for d in 3..=12u32 {
        for root in sources(1 << d, 3, d as u64) {
            check("dta", "hypercube", &d.to_string(), root, "all");
            check("ho-kao", "hypercube", &d.to_string(), root, "all");
        }
    }
}

#[test]
fn rd_on_meshes_and_tori_of_any_sides() {
    let shapes = ["64x64", "63x37", "5x3", "2x2", "17x1", "3x5x6", "6x7", "31x8"];
    for topology in ["mesh", "torus"] {
        for dims in shapes {
            let n: u32 = dims.split('x').map(|s| s.parse::<u32>().unwrap()).product();
            for root in sources(n, 3, n as u64).into_iter().chain([0, n - 1]) {
                check("rd", topology, dims, root, "one");
            }
        }
    }
    check("rd", "linear", "13", 6, "one");
}

#[test]
fn wormhole_runs_report_the_wormhole_bounds() {
    let run = |sw: &str, ports: &str, alg: &str, topology: &str, dims: &str| {
        run::run(&config(&[
            ("topology", topology.into()),
            ("dims", dims.into()),
            ("switching", sw.into()),
            ("ports", ports.into()),
            ("algorithm", alg.into()),
        ]))
    };
    // The case: one-port 16x16, ⌈log2 256⌉ = 8 under wormhole; the eccentricity 30
    // under store-and-forward.
    let wh = run("wh", "one", "snb", "mesh", "16x16");
    assert_eq!((wh.lower_bound_slots, wh.lower_bound_rounds, wh.rounds), (Some(8.0), Some(8), Some(30)));
    let sf = run("sf", "one", "snb", "mesh", "16x16");
    assert_eq!((sf.lower_bound_slots, sf.lower_bound_rounds), (Some(30.0), None));
    // All-port: Q7 ⌈7/log2 8⌉ = 3 rounds; an all-port 2-D mesh of 25 ⌈log5 25⌉ = 2, but the
    // corner source has 2 links: 1 + 2 then ×5: 3 rounds.
    assert_eq!(run("wh", "all", "ho-kao", "hypercube", "7").lower_bound_rounds, Some(3));
    let m = run("wh", "all", "snb", "mesh", "5x5");
    let topo = fabric::Topology::new(fabric::TopologyKind::Mesh, &[5, 5]);
    assert_eq!((wormhole::notes_lower_bound_rounds(&topo, None), m.lower_bound_rounds), (2, Some(3)));
    // The one-port rd on 16x16: 8 rounds, the bound.
    assert_eq!(run("wh", "one", "rd", "mesh", "16x16").rounds, Some(8));
}

#[test]
fn ho_kao_rounds_against_the_lower_bound() {
    // The notes: Q7 in 3 rounds; DTA ⌈n/2⌉ optimal for n ≤ 6 but n = 5, where the bound
    // ⌈5/log2 6⌉ = 2 is below it (Ho–Kao's subcubes cannot beat it either: 2 rounds need
    // every subcube of size ≤ 2, 16 of them, from 6 worms).
    let bound = |n: u32| (n as f64 / ((n + 1) as f64).log2()).ceil() as u32;
    for n in 3..=14u32 {
        let hk = wormhole::ho_kao_rounds(n);
        assert!(hk >= bound(n) && hk <= wormhole::dta_rounds(n), "n={n}");
    }
    assert_eq!(wormhole::ho_kao_rounds(7), 3);
    assert_eq!(bound(7), 3);
}

#[test]
fn reproduce_lecture_notes_small() {
    let dir = std::env::temp_dir().join(format!("flitwave-lecture-notes-{}", std::process::id()));
    assert_eq!(testbenches::reproduce_notes::reproduce(&dir, 4).unwrap(), 0);
    let hyper = std::fs::read_to_string(dir.join("hypercube.md")).unwrap();
    // Q4: DTA in ⌈4/2⌉ = 2 rounds, the lower bound ⌈4/log2 5⌉ = 2.
    assert!(hyper.contains("| hypercube 4 | DTA | ⌈n/2⌉; optimal for n ≤ 6 = 2 | 2 | 2 |"), "{hyper}");
    let mesh = std::fs::read_to_string(dir.join("mesh-one-port.md")).unwrap();
    // M(5,3): rd takes ⌈log2 5⌉ + ⌈log2 3⌉ = 5 rounds, the notes' optimum ⌈log2 15⌉ = 4.
    assert!(mesh.contains("| mesh 5x3 | rd | Σ⌈log₂ z_i⌉, optimal: ⌈log₂ N⌉ = 4 | 4 | 5 |"), "{mesh}");
    for f in ["hypercube.svg", "mesh-one-port.csv", "mesh-all-port.svg"] {
        assert!(dir.join(f).exists(), "{f}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The fewest one-port wormhole rounds broadcasting from `root` on `topo` with its
/// dimension-order routes, by exhaustive search: in a round every informed node sends at
/// most one worm, every node receives at most one, and the worms' routes share no link.
/// Failed (informed set, round) states are remembered; at most 64 nodes and 256 links.
fn one_port_optimum(topo: &fabric::Topology, root: u32, most: u32) -> Option<u32> {
    use std::collections::HashSet;
    let n = topo.nodes();
    let paths = route_masks(topo);
    let full = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
    struct S<'a> {
        paths: &'a [Vec<Links>],
        full: u64,
        failed: HashSet<(u64, u32)>,
    }
    // Round `r` of `rounds` from the informed set `informed`.
    fn rounds_from(s: &mut S, informed: u64, r: u32, rounds: u32) -> bool {
        if informed == s.full {
            return true;
        }
        let left = rounds - r;
        // Each round at most doubles the informed.
        if left == 0 || (informed.count_ones() as u64) << left < s.full.count_ones() as u64 || s.failed.contains(&(informed, r)) {
            return false;
        }
        let senders: Vec<usize> = (0..64).filter(|&i| informed >> i & 1 == 1).collect();
        let ok = choose(s, &senders, 0, informed, informed, [0; 4], r, rounds);
        if !ok {
            s.failed.insert((informed, r));
        }
        ok
    }
    // Sender `k` onwards picks a target (or none), then the next round.
    #[allow(clippy::too_many_arguments)]
    fn choose(s: &mut S, senders: &[usize], k: usize, before: u64, now: u64, links: Links, r: u32, rounds: u32) -> bool {
        if k == senders.len() {
            return now != before && rounds_from(s, now, r + 1, rounds);
        }
        let a = senders[k];
        for b in 0..64 {
            if s.full >> b & 1 == 1
                && now >> b & 1 == 0
                && !meets(&s.paths[a][b], &links)
                && choose(s, senders, k + 1, before, now | 1 << b, union(&links, &s.paths[a][b]), r, rounds)
            {
                return true;
            }
        }
        choose(s, senders, k + 1, before, now, links, r, rounds)
    }
    let mut s = S { paths: &paths, full, failed: HashSet::new() };
    (0..=most).find(|&rounds| rounds_from(&mut s, 1 << root, 0, rounds))
}

#[test]
fn exhaustive_one_port_optimum_on_small_meshes() {
    // rd's Σ⌈log2 z_i⌉ against the true one-port wormhole optimum (XY routes, link-disjoint
    // rounds), from every source: the notes call rd optimal; where Σ⌈log2 z_i⌉ exceeds
    // ⌈log2 N⌉, the search decides whether ⌈log2 N⌉ is reachable.
    for (kind, sizes) in
        [(fabric::TopologyKind::Mesh, [3u32, 3]), (fabric::TopologyKind::Mesh, [5, 3]), (fabric::TopologyKind::Torus, [5, 3])]
    {
        let topo = fabric::Topology::new(kind.clone(), &sizes);
        let log = (topo.nodes() as u64).next_power_of_two().trailing_zeros();
        for root in 0..topo.nodes() as u32 {
            let best = one_port_optimum(&topo, root, wormhole::rd_rounds(&sizes)).expect("rd's rounds suffice");
            assert_eq!(best, log, "{kind:?} {sizes:?} from {root}");
        }
    }
}

#[test]
fn the_link_check_sees_two_worms_of_a_round_on_one_link() {
    // Node 0 of Q2 sends two round-1 worms, to 3 (e-cube: across dimension 0, then 1) and
    // to 1 (across dimension 0): both cross the link 0 -> 1.
    struct Two;
    impl fabric::Program for Two {
        fn start(&mut self, cx: &mut fabric::NodeCtx<'_>) {
            if cx.node.0 == 0 {
                for to in [3, 1] {
                    cx.send(fabric::Send { dest: fabric::Dest::Node(router::NodeId(to)), msg: u32::MAX, aux: 1, key: 0, flits: 4 });
                }
            }
        }
        fn receive(&mut self, _: &mut fabric::NodeCtx<'_>, _: &fabric::Received) {}
    }
    let cfg = config(&[("topology", "hypercube".into()), ("dims", "2".into()), ("switching", "wh".into())]);
    let mut f = fabric::Fabric::new(&cfg.spec(), Box::new(Two));
    f.add_probe(Box::new(RoundLinks::default()));
    f.run();
    let probe = f.take_probes().pop().unwrap().as_any().downcast::<RoundLinks>().unwrap();
    assert_eq!(probe.conflicts.len(), 1, "{:?}", probe.conflicts);
}

/// A set of up to 256 directed links.
type Links = [u64; 4];

fn meets(a: &Links, b: &Links) -> bool {
    a.iter().zip(b).any(|(x, y)| x & y != 0)
}

fn union(a: &Links, b: &Links) -> Links {
    [a[0] | b[0], a[1] | b[1], a[2] | b[2], a[3] | b[3]]
}

/// Every ordered pair's route on `topo` as the set of the directed links it crosses.
fn route_masks(topo: &fabric::Topology) -> Vec<Vec<Links>> {
    let n = topo.nodes();
    let mut ids: HashMap<(usize, usize), u32> = HashMap::new();
    let mut masks = vec![vec![[0u64; 4]; n]; n];
    for (a, row) in masks.iter_mut().enumerate() {
        for (b, mask) in row.iter_mut().enumerate() {
            let mut at = a;
            while at != b {
                let (ra, rb) = (router::NodeId(at as u32), router::NodeId(b as u32));
                let p = topo.route_unicast(ra, router::NodeId(a as u32), rb).ports.net_ports().next().unwrap();
                let k = ids.len() as u32;
                let id = *ids.entry((at, p)).or_insert(k) as usize;
                mask[id / 64] |= 1 << (id % 64);
                at = topo.neighbor(ra, p).unwrap().0 as usize;
            }
        }
    }
    assert!(ids.len() <= 256 && n <= 64);
    masks
}

/// Can an all-port wormhole broadcast from `root` finish in `rounds` rounds? Exhaustive: in
/// a round every uninformed node gets a worm from one informed node or waits, the worms'
/// routes sharing no link (so a node sends at most one worm a link).
fn all_port_feasible(topo: &fabric::Topology, root: u32, rounds: u32) -> bool {
    use std::collections::HashSet;
    struct S {
        masks: Vec<Vec<Links>>,
        /// Each node's outgoing links.
        out: Vec<Links>,
        full: u64,
        growth: u64,
        failed: HashSet<(u64, u32)>,
    }
    fn round(s: &mut S, informed: u64, left: u32) -> bool {
        if informed == s.full {
            return true;
        }
        if left == 0 || (informed.count_ones() as u64).saturating_mul(s.growth.pow(left)) < s.full.count_ones() as u64 {
            return false;
        }
        if s.failed.contains(&(informed, left)) {
            return false;
        }
        let targets: Vec<usize> = (0..64).filter(|&b| s.full >> b & 1 == 1 && informed >> b & 1 == 0).collect();
        let senders: Vec<usize> = (0..64).filter(|&a| informed >> a & 1 == 1).collect();
        if left == 1 {
            return last(s, s.full & !informed, &senders, [0; 4]);
        }
        let ok = assign(s, &targets, &senders, 0, informed, informed, [0; 4], left);
        if !ok {
            s.failed.insert((informed, left));
        }
        ok
    }
    // The last round: every target left gets a worm, the most constrained target first.
    fn last(s: &S, left: u64, senders: &[usize], links: Links) -> bool {
        if left == 0 {
            return true;
        }
        let mut best: Option<(u32, usize)> = None;
        for b in (0..64).filter(|&b| left >> b & 1 == 1) {
            let options = senders.iter().filter(|&&a| !meets(&s.masks[a][b], &links)).count() as u32;
            if options == 0 {
                return false;
            }
            if best.is_none_or(|(o, _)| options < o) {
                best = Some((options, b));
            }
        }
        let b = best.expect("a target is left").1;
        senders.iter().any(|&a| {
            let m = s.masks[a][b];
            !meets(&m, &links) && last(s, left & !(1 << b), senders, union(&links, &m))
        })
    }
    // Target `k` onwards: a sender or none, then the next round.
    #[allow(clippy::too_many_arguments)]
    fn assign(s: &mut S, targets: &[usize], senders: &[usize], k: usize, before: u64, now: u64, links: Links, left: u32) -> bool {
        if k == targets.len() {
            return now != before && round(s, now, left - 1);
        }
        // In the last round every target left needs a free link out of a sender.
        if left == 1 {
            let free: u32 = senders.iter().map(|&a| s.out[a].iter().zip(&links).map(|(o, l)| (o & !l).count_ones()).sum::<u32>()).sum();
            if (free as usize) < targets.len() - k {
                return false;
            }
        }
        let b = targets[k];
        for &a in senders {
            let m = s.masks[a][b];
            if !meets(&m, &links) && assign(s, targets, senders, k + 1, before, now | 1 << b, union(&links, &m), left) {
                return true;
            }
        }
        left > 1 && assign(s, targets, senders, k + 1, before, now, links, left)
    }
    let n = topo.nodes();
    let degree =
        (0..n as u32).map(|v| (0..topo.net_ports()).filter(|&p| topo.neighbor(router::NodeId(v), p).is_some()).count()).max().unwrap_or(1);
    let full = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
    let masks = route_masks(topo);
    let out = (0..n)
        .map(|a| {
            (0..topo.net_ports())
                .filter_map(|p| topo.neighbor(router::NodeId(a as u32), p))
                .fold([0; 4], |m, b| union(&m, &masks[a][b.0 as usize]))
        })
        .collect();
    let mut s = S { masks, out, full, growth: 1 + degree as u64, failed: HashSet::new() };
    round(&mut s, 1 << root, rounds)
}

#[test]
fn exhaustive_all_port_optimum_on_small_cubes_and_meshes() {
    // The true all-port optimum from node 0 (a mesh corner) equals the degree-aware bound
    // of the reports, which is above the notes' ⌈log_{2n+1} N⌉ on M(2,2) and M(4,4): the
    // corner has n links, not 2n.
    use fabric::TopologyKind::{Hypercube, Mesh, Torus};
    for (kind, sizes) in
        [(Mesh, vec![2u32, 2]), (Mesh, vec![3, 3]), (Mesh, vec![4, 4]), (Torus, vec![3, 3]), (Hypercube, vec![3]), (Hypercube, vec![4])]
    {
        let t = fabric::Topology::new(kind.clone(), &sizes);
        let best = (0..=4).find(|&r| all_port_feasible(&t, 0, r)).expect("4 rounds suffice");
        let bound = wormhole::lower_bound_rounds(&t, router::NodeId(0), None);
        assert_eq!(best as u64, bound, "{kind:?} {sizes:?}");
        let notes = wormhole::notes_lower_bound_rounds(&t, None);
        assert_eq!(notes < bound, matches!(sizes.as_slice(), [2, 2] | [4, 4]), "{kind:?} {sizes:?}: notes' {notes}");
    }
}

/// docs/papers.md shows the tables `reproduce lecture-notes` writes, as this build writes them.
#[test]
fn docs_papers_has_this_builds_lecture_notes_tables() {
    let docs = include_str!("../../docs/papers.md");
    let dir = std::env::temp_dir().join(format!("flitwave-lecture-notes-docs-{}", std::process::id()));
    testbenches::reproduce_notes::reproduce(&dir, 12).unwrap();
    for f in ["ho-kao.md", "hypercube.md", "mesh-one-port.md", "mesh-all-port.md"] {
        let text = std::fs::read_to_string(dir.join(f)).unwrap();
        for line in text.lines().filter(|l| l.starts_with('|')) {
            assert!(docs.contains(line), "docs/papers.md lacks this line of {f}: {line}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
