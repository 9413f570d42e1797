//! The reference RTL router (`rtl/`, docs/rtl.md) against the model: Verilator lints it with
//! `-Wall` and no warning, and one Verilated router, driven with flits and credits, sends
//! the same flits on the same output VCs and the same credits upstream in the same cycles
//! as one model router (`router::Routers`, the `realistic` preset) fed the same inputs, and
//! its zero-load delays add up to the preset's formula.
//!
//! Without `verilator` on PATH the tests say so in one line and pass, unless
//! FLITWAVE_REQUIRE_VERILATOR is set (as `.ci/run` does after installing it).

use fabric::{Topology, TopologyKind};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use router::{
    ArbiterPolicy, Flit, Header, InjectionVc, MulticastVa, NodeId, PacketId, PacketMeta, Pipeline, PortId, Replication, RouteDecision,
    RouterEnv, RouterParams, Routers, Switching, VaPolicy,
};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use testbenches::rtl::{WIDTHS, Widths, generics, vc_width};

#[path = "rtl_shared/mod.rs"]
mod rtl_shared;
use rtl_shared::{MUTANTS, SOURCES, have_verilator, rtl_dir, write_mutant};

/// Widths of the flit's fields (docs/rtl.md), from the model's types.
const W: Widths = WIDTHS;

/// One router: the RTL's parameters and the model's.
#[derive(Clone)]
struct Shape {
    name: &'static str,
    kind: TopologyKind,
    sizes: Vec<u32>,
    /// The router's node.
    node: u32,
    vcs: u8,
    ejection_vcs: u8,
    channels: u8,
    depth: u16,
    inject_depth: u16,
    switching: Switching,
}

impl Shape {
    fn mesh() -> Shape {
        Shape {
            name: "mesh4x4",
            kind: TopologyKind::Mesh,
            sizes: vec![4, 4],
            node: 5,
            vcs: 2,
            ejection_vcs: 2,
            channels: 1,
            depth: 4,
            inject_depth: 4,
            switching: Switching::Wormhole,
        }
    }
    /// A 3-cube router with two NIC channels of one ejection VC each, cut-through.
    fn cube() -> Shape {
        Shape {
            name: "cube3",
            kind: TopologyKind::Hypercube,
            sizes: vec![3],
            node: 6,
            vcs: 3,
            ejection_vcs: 1,
            channels: 2,
            depth: 5,
            inject_depth: 6,
            switching: Switching::VirtualCutThrough,
        }
    }
    /// A router inside an 8x3x2 mesh with three NIC channels of three ejection VCs each,
    /// store-and-forward.
    fn mesh3d() -> Shape {
        Shape {
            name: "mesh8x3x2",
            kind: TopologyKind::Mesh,
            sizes: vec![8, 3, 2],
            node: 8 * 3 + 8 + 3,
            vcs: 2,
            ejection_vcs: 3,
            channels: 3,
            depth: 6,
            inject_depth: 5,
            switching: Switching::StoreAndForward,
        }
    }
    /// The corner router of a 4x4 mesh with one VC, buffers shorter than the longer packets
    /// and four ejection VCs, wormhole.
    fn narrow() -> Shape {
        Shape {
            name: "mesh4x4-1vc",
            kind: TopologyKind::Mesh,
            sizes: vec![4, 4],
            node: 0,
            vcs: 1,
            ejection_vcs: 4,
            channels: 1,
            depth: 2,
            inject_depth: 3,
            switching: Switching::Wormhole,
        }
    }
    fn topo(&self) -> Topology {
        Topology::new(self.kind.clone(), &self.sizes)
    }
    fn net(&self) -> usize {
        self.topo().net_ports()
    }
    fn ports(&self) -> usize {
        self.net() + self.channels as usize
    }
    fn vc_w(&self) -> u32 {
        vc_width(&self.params())
    }
    fn params(&self) -> RouterParams {
        RouterParams {
            switching: self.switching,
            pipeline: Pipeline::REALISTIC,
            arbiter: ArbiterPolicy::RoundRobin,
            vcs: self.vcs,
            buffer_flits: self.depth,
            inject_buffer_flits: self.inject_depth,
            net_ports: self.net() as u8,
            nic_channels: self.channels,
            link_width: 1,
            multicast_va: MulticastVa::Atomic,
            replication: Replication::Sync,
            injection: InjectionVc::RoundRobin,
            ejection_vcs: self.ejection_vcs,
            va_policy: VaPolicy::RoundRobin,
        }
    }
    /// The RTL's parameters as Verilator's -G flags.
    fn generics(&self) -> Vec<String> {
        generics(&self.topo(), &self.params())
    }
}

/// Verilator's diagnostics on the RTL at `shape` with every warning on (empty when clean).
fn lint(shape: &Shape) -> String {
    let dir = rtl_dir();
    let o = Command::new("verilator")
        .args(["--lint-only", "-Wall", "--top-module", "router"])
        .args(shape.generics())
        .args(SOURCES.iter().map(|s| dir.join(s)))
        .output()
        .expect("run verilator");
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    if o.status.success() { text } else { format!("exit {}\n{text}", o.status) }
}

/// The Verilated router at `shape` with the testbench, built once per shape.
fn build(shape: &Shape) -> PathBuf {
    static BUILT: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("rtl-{}", shape.name));
    if !built.contains(&shape.name) {
        build_from(shape, &rtl_dir(), &out);
        built.push(shape.name);
    }
    out.join("tb")
}

/// Build the router whose sources are in `src` (and the testbench) at `shape` into `out`.
fn build_from(shape: &Shape, src: &Path, out: &Path) {
    let o = Command::new("verilator")
        .args(["--cc", "--exe", "--build", "-j", "2", "--top-module", "router", "-o", "tb", "--Mdir"])
        .arg(out)
        // The generated C++ compiled without optimisation: a test runs a few thousand cycles.
        .args(["-MAKEFLAGS", "OPT_FAST=-O0 OPT_SLOW=-O0 OPT_GLOBAL=-O0"])
        .args(shape.generics())
        .args(SOURCES.iter().map(|s| src.join(s)))
        .arg(rtl_dir().join("tb/tb.cpp"))
        .output()
        .expect("run verilator");
    assert!(o.status.success(), "verilator build of {} from {}: {}", shape.name, src.display(), String::from_utf8_lossy(&o.stderr));
}

/// A packet the test sends into the router: on input `port` (a network port, or an
/// injection channel at `net` and above), in VC `vc`, from cycle `release` on.
#[derive(Clone, Debug)]
struct Packet {
    id: u32,
    src: u32,
    dest: u32,
    /// Header fields the router carries without reading them.
    key: u32,
    span: u32,
    len: u16,
    port: usize,
    vc: usize,
    release: u64,
}

impl Packet {
    /// A packet from node 0 with key and span 0.
    fn plain(id: u32, dest: u32, len: u16, port: usize, vc: usize, release: u64) -> Packet {
        Packet { id, src: 0, dest, key: 0, span: 0, len, port, vc, release }
    }
}

/// What leaves the router in a cycle, as the testbench prints it: `o PORT VC PACKET SEQ
/// HEAD TAIL KIND SRC DEST KEY LEN SPAN` (a flit on an output port: its header fields as it
/// carries them) or `k PORT VC` (a credit upstream).
type Trace = BTreeMap<u64, Vec<String>>;

/// Routes as the fabric's topology computes them, for the router at `node`.
struct Env<'a> {
    topo: Topology,
    node: u32,
    vcs: u8,
    packets: &'a HashMap<u32, Packet>,
}

impl RouterEnv for Env<'_> {
    fn route(&self, _at: NodeId, _in_port: PortId, p: PacketId) -> (RouteDecision, PacketMeta) {
        let pk = &self.packets[&p.0];
        let hop = self.topo.route_unicast(NodeId(self.node), NodeId(pk.src), NodeId(pk.dest));
        (RouteDecision::new(hop.ports, (1u16 << self.vcs) - 1), PacketMeta { len: pk.len, key: 0, birth: 0 })
    }
}

/// Cycles a downstream router takes to free the slot of a flit sent on `port` (jitter from
/// the flit, so that credits run short now and then).
fn sink_delay(f: &Flit, port: usize) -> u64 {
    (f.packet.0 as u64 * 7 + f.seq as u64 * 3 + port as u64) % 5
}

/// Run the model router at `shape` on `packets`: sources that send each input port a flit a
/// cycle while they hold credits for its VC, sinks that return each network output's credits
/// a few cycles after its flits. Returns the testbench's stimulus (what went in) and the
/// trace the model says must come out, in RTL cycles (docs/rtl.md: a decision of the model's
/// cycle t is on the RTL's outputs in t + 1), and how much contention there was: cycles
/// input VCs lost switch arbitration, and cycles they waited for credits.
fn run_model(shape: &Shape, packets: &[Packet]) -> (String, Trace, (u64, u64)) {
    let params = shape.params();
    let pl = params.pipeline;
    let (net, ports, v) = (shape.net(), shape.ports(), shape.vcs as usize);
    let by_id: HashMap<u32, Packet> = packets.iter().map(|p| (p.id, p.clone())).collect();
    let env = Env { topo: shape.topo(), node: shape.node, vcs: shape.vcs, packets: &by_id };
    let mut r = Routers::new(params, 1);
    r.set_log(true);
    // The sources: per input VC its packets in order, the next flit's sequence number, and
    // the credits the upstream router holds for the VC.
    let mut queue: Vec<VecDeque<&Packet>> = vec![VecDeque::new(); ports * v];
    for p in packets {
        queue[p.port * v + p.vc].push_back(p);
    }
    let mut next_seq = vec![0u16; ports * v];
    let mut credits: Vec<u16> = (0..ports * v).map(|i| if i / v < net { shape.depth } else { shape.inject_depth }).collect();
    let mut credit_back: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    let mut last_vc = vec![0usize; ports];
    // The sinks: the next cycle each output may return a credit (one a cycle).
    let mut sink_free = vec![0u64; net];
    let mut stim =
        format!("w {ports} {net} {} {} {} {} {} {} {}\nn {}\n", shape.vc_w(), W.pkt, W.seq, W.node, W.key, W.len, W.span, shape.node);
    let mut want: Trace = BTreeMap::new();
    let total: u64 = packets.iter().map(|p| p.len as u64).sum();
    let (mut left, mut t, mut quiet) = (total, 0u64, 0);
    // Each packet's flits out, in order, exactly once.
    let mut got: HashMap<u32, u16> = HashMap::new();
    while left > 0 || quiet < 8 {
        assert!(t < 100_000, "{}: the model router has not delivered every flit by cycle {t}", shape.name);
        for back in credit_back.remove(&t).unwrap_or_default() {
            credits[back] += 1;
        }
        // The sources' flits of cycle t, readable in t + 1 (link, or the NIC's injection
        // latency: equal on `realistic`).
        assert_eq!(pl.link_latency - 1, pl.inject_latency);
        for (port, last) in last_vc.iter_mut().enumerate() {
            let pick = (1..=v).map(|k| (*last + k) % v).find(|&vc| {
                let i = port * v + vc;
                credits[i] > 0 && queue[i].front().is_some_and(|p| p.release <= t)
            });
            let Some(vc) = pick else { continue };
            let i = port * v + vc;
            let p = queue[i].front().copied().unwrap();
            let seq = next_seq[i];
            let f = Flit::of(PacketId(p.id), seq, p.len);
            r.arrive_by_hand(r.ivc_index(NodeId(0), port, vc), f, t, t + 1);
            stim += &format!(
                "f {t} {port} {vc} {} {seq} {} {} 0 {} {} {} {} {}\n",
                p.id,
                f.is_head() as u8,
                f.is_tail() as u8,
                p.src,
                p.dest,
                p.key,
                p.len,
                p.span
            );
            (credits[i], *last) = (credits[i] - 1, vc);
            next_seq[i] += 1;
            if next_seq[i] == p.len {
                next_seq[i] = 0;
                queue[i].pop_front();
            }
        }
        r.begin_cycle(t, &env);
        let mut ejected = Vec::new();
        r.eject_stage(t, &mut ejected);
        r.after_injection(t, &env);
        r.network_stage(t);
        r.end_cycle(t);
        let mut out: Vec<(usize, u8, Flit)> = r.departures.drain(..).map(|d| (d.out_port as usize, d.vc, d.flit)).collect();
        out.extend(ejected.iter().map(|(_, e)| (net + e.channel as usize, e.vc, e.flit)));
        quiet = if out.is_empty() { quiet + 1 } else { 0 };
        for (port, vc, f) in out {
            let p = &by_id[&f.packet.0];
            let seq = got.entry(p.id).or_default();
            assert_eq!(f.seq, *seq, "{}: packet {} out of order", shape.name, p.id);
            *seq += 1;
            left -= 1;
            // On the output port in t + 1 (link_latency 2: readable downstream in t + 2).
            let (head, tail) = (f.is_head() as u8, f.is_tail() as u8);
            let line = format!("o {port} {vc} {} {} {head} {tail} 0 {} {} {} {} {}", p.id, f.seq, p.src, p.dest, p.key, p.len, p.span);
            want.entry(t + 1).or_default().push(line);
            // The slot freed: the credit upstream in t + credit_delay, usable by the source
            // when the upstream router's switch allocation sees it (t + 1 + credit_delay),
            // whose flit is on the link a cycle later.
            want.entry(t + pl.credit_delay as u64).or_default().push(format!("k {} {}", p.port, p.vc));
            credit_back.entry(t + 2 + pl.credit_delay as u64).or_default().push(p.port * v + p.vc);
            if port < net {
                // The sink frees the slot once the flit is readable there (t + link_latency)
                // or later; its credit is on the wire a cycle after, visible a cycle later.
                let c = (t + pl.link_latency as u64 + 1 + sink_delay(&f, port)).max(sink_free[port]);
                sink_free[port] = c + 1;
                stim += &format!("c {c} {port} {vc}\n");
                r.credit_by_hand(port, vc as usize, c + 1);
            }
        }
        t += 1;
    }
    assert!(got.iter().all(|(id, &n)| n == by_id[id].len), "{}: every flit of every packet out once", shape.name);
    stim += &format!("r {}\n", t + 2);
    for lines in want.values_mut() {
        lines.sort();
    }
    let lost = (0..r.input_vcs()).map(|iv| r.stall_arbitration(iv)).sum();
    let starved = (0..r.input_vcs()).map(|iv| r.stall_credit(iv)).sum();
    (stim, want, (lost, starved))
}

/// Run the Verilated router on a stimulus: its trace.
fn run_rtl(exe: &Path, stim: &str) -> Trace {
    let mut child =
        Command::new(exe).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("run the testbench");
    child.stdin.take().unwrap().write_all(stim.as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "testbench: {}", String::from_utf8_lossy(&o.stderr));
    let mut trace: Trace = BTreeMap::new();
    for line in String::from_utf8(o.stdout).unwrap().lines() {
        let (tag, rest) = line.split_once(' ').unwrap();
        let (cycle, rest) = rest.split_once(' ').unwrap();
        trace.entry(cycle.parse().unwrap()).or_default().push(format!("{tag} {rest}"));
    }
    for lines in trace.values_mut() {
        lines.sort();
    }
    trace
}

/// Where the RTL's outputs first depart from the model's.
struct Difference {
    cycle: u64,
    /// The first port whose outputs differ then: `("output", o)` for a flit on output port
    /// o, `("credit", p)` for a credit upstream from input port p.
    port: (&'static str, usize),
    message: String,
}

/// The first cycle and port where the RTL's outputs differ from the model's, with a message
/// naming the node, port and cycle and what each sent there (None if they agree everywhere).
fn first_difference(shape: &Shape, want: &Trace, got: &Trace) -> Option<Difference> {
    let cycles: std::collections::BTreeSet<u64> = want.keys().chain(got.keys()).copied().collect();
    let none = Vec::new();
    let at = |lines: &Vec<String>, tag: &str, port: usize| -> Vec<String> {
        let prefix = format!("{tag} {port} ");
        lines.iter().filter(|l| l.starts_with(&prefix)).cloned().collect()
    };
    cycles.into_iter().find_map(|cycle| {
        let (w, g) = (want.get(&cycle).unwrap_or(&none), got.get(&cycle).unwrap_or(&none));
        let ports = (0..shape.ports()).flat_map(|p| [("o", "output", p), ("k", "credit", p)]);
        ports.into_iter().find_map(|(tag, what, p)| {
            let (w, g) = (at(w, tag, p), at(g, tag, p));
            (w != g).then(|| Difference {
                cycle,
                port: (what, p),
                message: format!(
                    "{} (node {}): cycle {cycle}, {what} port {p}: the model sends {w:?}, the RTL {g:?}",
                    shape.name, shape.node
                ),
            })
        })
    })
}

/// `n` packets on random inputs and VCs, 1 to 5 flits, to random destinations (a quarter
/// of them to this node: ejection), released over `spread` cycles.
fn random_packets(shape: &Shape, seed: u64, n: u32, spread: u64) -> Vec<Packet> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let nodes = shape.topo().nodes() as u32;
    (0..n)
        .map(|id| {
            let dest = if rng.random_range(0..4) == 0 { shape.node } else { rng.random_range(0..nodes) };
            Packet {
                id,
                src: rng.random_range(0..nodes),
                dest,
                key: rng.random_range(0..=Header::MAX_KEY),
                span: rng.random(),
                len: rng.random_range(1..=5),
                port: rng.random_range(0..shape.ports()),
                vc: rng.random_range(0..shape.vcs as usize),
                release: rng.random_range(0..spread.max(1)),
            }
        })
        .collect()
}

/// The cycles and sequence numbers of the flits on output `port` of a trace, in order.
fn flits_on(trace: &Trace, port: usize) -> Vec<(u64, u16)> {
    let tag = format!("o {port} ");
    let mut flits = Vec::new();
    for (&c, lines) in trace {
        for l in lines.iter().filter(|l| l.starts_with(&tag)) {
            flits.push((c, l.split(' ').nth(4).unwrap().parse().unwrap()));
        }
    }
    flits
}

/// The model's trace and the RTL's for `packets`, compared: the trace, and the contention
/// of [`run_model`].
fn compare(shape: &Shape, exe: &Path, packets: &[Packet]) -> (Trace, (u64, u64)) {
    let (stim, want, contention) = run_model(shape, packets);
    let got = run_rtl(exe, &stim);
    if let Some(d) = first_difference(shape, &want, &got) {
        panic!("{}", d.message);
    }
    (got, contention)
}

#[test]
fn rtl_lints_clean_under_verilator_wall() {
    if !have_verilator() {
        return;
    }
    for shape in [Shape::mesh(), Shape::cube(), Shape::mesh3d(), Shape::narrow()] {
        let out = lint(&shape);
        assert!(out.trim().is_empty(), "verilator --lint-only -Wall on {}:\n{out}", shape.name);
    }
}

/// Zero-load delays through the RTL router, measured one stage at a time, add up to the
/// `realistic` preset's formula 4H + 3 + (L - 1) for every H and L.
#[test]
fn rtl_zero_load_latency_is_the_presets() {
    if !have_verilator() {
        return;
    }
    let shape = Shape::mesh();
    let exe = build(&shape);
    let net = shape.net();
    // Node 5 is (1, 1): node 7 is two steps up in x (output 1), node 5 itself ejects.
    for len in 1..=5u16 {
        let created = 3u64;
        let through = Packet::plain(1, 7, len, net, 0, created);
        let (trace, _) = compare(&shape, &exe, &[through]);
        // The NIC writes the head in `created`; the next router can read it a cycle after
        // it is on the output port.
        let first_hop = flits_on(&trace, 1)[0].0 + 1 - created;
        // A flit on a network input in cycle s is readable in s + 1; its next router reads it
        // `hop` cycles later.
        let arrives = 2u64;
        let hop_pkt = Packet::plain(2, 7, len, 0, 1, arrives);
        let hop = flits_on(&compare(&shape, &exe, &[hop_pkt]).0, 1)[0].0 + 1 - (arrives + 1);
        // A head readable in a (arrived on a network input in a - 1): its tail ejected, on the
        // ejection port in the cycle after the model ejects it.
        let eject_pkt = Packet::plain(3, shape.node, len, 0, 0, arrives);
        let ejected = flits_on(&compare(&shape, &exe, &[eject_pkt]).0, net);
        assert_eq!(ejected.len(), len as usize);
        let last = ejected[len as usize - 1].0 - 1 - (arrives + 1);
        for h in 1..=8u64 {
            let rtl = first_hop + (h - 1) * hop + last;
            let model = Pipeline::REALISTIC.zero_load_latency(Switching::Wormhole, h, len as u64);
            assert_eq!(rtl, model, "H = {h}, L = {len}: the RTL's zero-load latency, the preset's 4H + 3 + (L-1)");
        }
    }
}

/// Random traffic at three loads on contending inputs, on a 4x4 mesh router (wormhole), a
/// 3-cube router (cut-through, two NIC channels), an 8x3x2 mesh router (store-and-forward,
/// three NIC channels) and a 4x4 mesh corner router with one VC and 2-flit buffers: the same
/// flits on the same output VCs and the same credits as the model, cycle by cycle.
#[test]
fn rtl_matches_the_model_cycle_by_cycle() {
    if !have_verilator() {
        return;
    }
    for shape in [Shape::mesh(), Shape::cube(), Shape::mesh3d(), Shape::narrow()] {
        let exe = build(&shape);
        for (seed, spread) in [(1, 2000), (2, 400), (3, 60)] {
            let packets = random_packets(&shape, seed, 300, spread);
            let (trace, (lost, starved)) = compare(&shape, &exe, &packets);
            if spread < 100 {
                // With one VC an output's VC is held by one packet at a time: switch
                // allocation never has two requesters for an output (VC allocation has).
                let contended = lost > 0 || shape.vcs == 1;
                assert!(contended && starved > 0, "{} seed {seed}: contention for outputs ({lost}) and credits ({starved})", shape.name);
            }
            let flits: u64 = packets.iter().map(|p| p.len as u64).sum();
            let out = trace.values().flatten().filter(|s| s.starts_with("o ")).count() as u64;
            assert_eq!(out, flits, "{} seed {seed}: every flit out once", shape.name);
        }
    }
}

/// Bugs seeded into copies of the RTL: each makes the RTL depart from the model, and the
/// comparison finds it (a credit sent a cycle late, in the cycle the model sends it).
#[test]
fn seeded_rtl_bugs_are_caught() {
    if !have_verilator() {
        return;
    }
    let shape = Shape::mesh();
    let packets = random_packets(&shape, 3, 120, 60);
    let (stim, want, _) = run_model(&shape, &packets);
    // The model's first credit: its cycle and input port.
    let (first_credit, credit_port) = want
        .iter()
        .find_map(|(&c, l)| l.iter().find(|s| s.starts_with("k ")).map(|s| (c, s.split(' ').nth(1).unwrap().parse::<usize>().unwrap())))
        .unwrap();
    for (name, edits) in MUTANTS {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("rtl-mutant-{name}"));
        write_mutant(name, edits, &dir);
        build_from(&shape, &dir, &dir.join("obj"));
        let got = run_rtl(&dir.join("obj/tb"), &stim);
        let d = first_difference(&shape, &want, &got).unwrap_or_else(|| panic!("{name}: the seeded bug went unnoticed"));
        eprintln!("{name}: {}", d.message);
        if name == "late-credit" {
            assert_eq!((d.cycle, d.port), (first_credit, ("credit", credit_port)), "{name}: caught at the first credit");
        }
    }
}
