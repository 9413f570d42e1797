//! Statistics for buffer sizing, read from the routers' high-water marks and occupancy
//! histograms: network-wide figures per port class always, per-VC and per-link detail on
//! request ([`Detail`]).

use fabric::Fabric;
use router::{ClassOccupancy, PortClasses};
use serde::Serialize;

/// How much of the statistics a report carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Detail {
    /// The network-wide occupancy per port class and the scalar figures.
    Summary,
    /// Also every input VC's histogram and stalls, every link's load, every router's
    /// high-water marks (and the statistics CSV).
    Full,
}

impl Detail {
    pub const NAMES: &str = "summary or full";
    /// Above this many routers the default is [`Detail::Summary`].
    pub const FULL_UP_TO_ROUTERS: u64 = 4096;

    pub fn parse(s: &str) -> Option<Detail> {
        match s {
            "summary" => Some(Detail::Summary),
            "full" => Some(Detail::Full),
            _ => None,
        }
    }

    /// The default for a fabric of `routers` routers.
    pub fn default_for(routers: u64) -> Detail {
        if routers > Detail::FULL_UP_TO_ROUTERS { Detail::Summary } else { Detail::Full }
    }
}

/// `h` without its trailing zeros.
fn trimmed(mut h: Vec<u64>) -> Vec<u64> {
    while h.last() == Some(&0) {
        h.pop();
    }
    h
}

/// One port class's buffer occupancy over a span of cycles, network-wide.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ClassStats {
    /// Input VCs of the class (those of unconnected network ports left out).
    pub vcs: u64,
    /// VC-cycles counted: `vcs` x the cycles covered.
    pub vc_cycles: u64,
    pub mean_flits: f64,
    /// The smallest k such that the VC-cycles at k flits or fewer are at least the share
    /// (0.5, 0.99, 0.999) of all.
    pub p50_flits: u64,
    pub p99_flits: u64,
    pub p999_flits: u64,
    pub max_flits: u64,
    /// `histogram[k]`: VC-cycles holding exactly k flits (the per-VC histograms summed), up
    /// to the last nonzero entry.
    pub histogram: Vec<u64>,
}

impl ClassStats {
    pub fn new(c: &ClassOccupancy) -> ClassStats {
        ClassStats {
            vcs: c.vcs,
            vc_cycles: c.vc_cycles(),
            mean_flits: c.mean(),
            p50_flits: c.percentile(0.5),
            p99_flits: c.percentile(0.99),
            p999_flits: c.percentile(0.999),
            max_flits: c.max(),
            histogram: c.histogram.clone(),
        }
    }
}

/// Buffer occupancy per port class over cycles `[from, to)`: a traffic run's measurement
/// window, else the whole run.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Occupancy {
    pub from: u64,
    pub to: u64,
    /// Input VCs fed by links.
    pub network: ClassStats,
    /// Input VCs fed by the nodes' NICs.
    pub injection: ClassStats,
}

impl Occupancy {
    pub fn from_fabric(f: &Fabric) -> Occupancy {
        let end = f.end();
        let read = |at: u64| f.routers.class_occupancy(0..f.routers.count(), at);
        let (from, to, classes) = match f.measure.window() {
            None => (0, end, read(end)),
            Some(w) => {
                // A boundary the run did not step past is read now, at the run's end if sooner.
                let (taken_from, taken_to) = f.measure.occupancy_readings();
                let to = if taken_to.is_some() { w.to } else { w.to.min(end) };
                let from = if taken_from.is_some() { w.from } else { w.from.min(to) };
                let at_from = taken_from.cloned().unwrap_or_else(|| read(from));
                let at_to = taken_to.cloned().unwrap_or_else(|| read(to));
                (from, to, at_to.since(&at_from))
            }
        };
        Occupancy::new(from, to, &classes)
    }

    pub fn new(from: u64, to: u64, c: &PortClasses) -> Occupancy {
        Occupancy { from, to, network: ClassStats::new(&c.network), injection: ClassStats::new(&c.injection) }
    }
}

/// Maximum input-buffer occupancy (flits in one VC FIFO), overall and per router port.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct BufferStats {
    /// Over every VC of every router.
    pub overall: u16,
    /// Over the network input ports / the NIC injection ports.
    pub network: u16,
    pub injection: u16,
    /// Port names, in the order of the rows of `per_router_port`.
    pub ports: Vec<String>,
    /// Per port name, the maximum over all routers.
    pub per_port: Vec<u16>,
    /// `per_router_port[node][port]`: the maximum over that port's VCs (with
    /// [`Detail::Full`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_router_port: Option<Vec<Vec<u16>>>,
}

impl BufferStats {
    pub fn from_fabric(f: &Fabric, detail: Detail) -> BufferStats {
        let r = &f.routers;
        let now = f.end();
        let (p, v, net) = (r.ports(), r.vcs(), r.params.net_ports as usize);
        let ports: Vec<String> = (0..p).map(|i| if i < net { format!("in{i}") } else { format!("inj{}", i - net) }).collect();
        let mut s = BufferStats { ports, per_port: vec![0; p], ..Default::default() };
        let per_router_port: Vec<Vec<u16>> = (0..r.count())
            .map(|node| {
                (0..p)
                    .map(|port| {
                        let m = (0..v).map(|vc| r.held_max((node * p + port) * v + vc, now)).max().unwrap_or(0);
                        s.per_port[port] = s.per_port[port].max(m);
                        m
                    })
                    .collect()
            })
            .collect();
        s.per_router_port = (detail == Detail::Full).then_some(per_router_port);
        s.network = s.per_port[..net].iter().copied().max().unwrap_or(0);
        s.injection = s.per_port[net..].iter().copied().max().unwrap_or(0);
        s.overall = s.network.max(s.injection);
        s
    }
}

/// One input VC's statistics for buffer sizing.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct VcStat {
    pub node: u32,
    /// `in<p>` (network) or `inj<k>` (NIC injection buffer).
    pub port: String,
    pub vc: u8,
    pub max_occupancy: u16,
    /// `histogram[k]`: cycles spent holding exactly k flits, up to the last nonzero entry.
    pub histogram: Vec<u64>,
    /// Cycles its front flit was ready but an output lacked credits.
    pub stall_credit_cycles: u64,
    /// Cycles it requested the switch and got nothing (lost arbitration or crossbar bandwidth).
    pub stall_arbitration_cycles: u64,
}

/// One router-to-router link.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LinkStat {
    pub node: u32,
    pub port: String,
    pub to_node: u32,
    pub flits: u64,
    /// flits / (cycles × flits per cycle the link carries).
    pub utilization: f64,
}

/// Statistics for buffer sizing and link load, over cycles `[0, cycles)`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Stats {
    pub cycles: u64,
    /// `full` (with `vcs` and `links`) or `summary`.
    pub detail: Detail,
    /// Input VCs that ever held a flit (the others are all zero); with [`Detail::Full`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vcs: Option<Vec<VcStat>>,
    /// Links that carried at least one flit (the others carried none); with [`Detail::Full`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub links: Option<Vec<LinkStat>>,
    pub max_link_utilization: f64,
    pub mean_link_utilization: f64,
}

impl Stats {
    pub fn from_fabric(f: &Fabric, detail: Detail) -> Stats {
        let r = &f.routers;
        let cycles = f.end().max(1);
        let (p, net) = (r.ports(), r.params.net_ports as usize);
        let full = detail == Detail::Full;
        let name = |port: usize| if port < net { format!("in{port}") } else { format!("inj{}", port - net) };
        let mut vcs = Vec::new();
        for iv in (0..r.input_vcs()).filter(|_| full) {
            let max_len = r.held_max(iv, cycles);
            if max_len == 0 {
                continue;
            }
            let (node, port, vc) = r.ivc_location(iv);
            vcs.push(VcStat {
                node: node.0,
                port: name(port),
                vc: vc as u8,
                max_occupancy: max_len,
                histogram: trimmed(r.occupancy_histogram(iv, cycles)),
                stall_credit_cycles: r.stall_credit(iv),
                stall_arbitration_cycles: r.stall_arbitration(iv),
            });
        }
        let width = r.params.link_width as f64;
        let mut links = Vec::new();
        let (mut sum, mut max, mut count) = (0.0, 0.0f64, 0usize);
        for op in 0..f.output_ports() {
            if op % p >= net {
                continue;
            }
            let Some(ip) = f.downstream(op) else { continue };
            let u = f.port_flits(op) as f64 / (cycles as f64 * width);
            count += 1;
            sum += u;
            max = max.max(u);
            if full && f.port_flits(op) > 0 {
                links.push(LinkStat {
                    node: (op / p) as u32,
                    port: format!("out{}", op % p),
                    to_node: (ip / p) as u32,
                    flits: f.port_flits(op),
                    utilization: u,
                });
            }
        }
        Stats {
            cycles,
            detail,
            vcs: full.then_some(vcs),
            links: full.then_some(links),
            max_link_utilization: max,
            mean_link_utilization: if count > 0 { sum / count as f64 } else { 0.0 },
        }
    }

    /// Every input VC and every link, one row each (`kind` = `input_vc` or `link`).
    pub fn write_csv(f: &Fabric, path: &std::path::Path) -> std::io::Result<()> {
        use std::io::Write;
        let r = &f.routers;
        let cycles = f.end().max(1);
        let (p, net) = (r.ports(), r.params.net_ports as usize);
        let mut w = std::io::BufWriter::new(std::fs::File::create(path)?);
        writeln!(
            w,
            "kind,node,port,vc,max_occupancy,occupancy_histogram,stall_credit_cycles,stall_arbitration_cycles,to_node,flits,utilization"
        )?;
        for iv in 0..r.input_vcs() {
            let (node, port, vc) = r.ivc_location(iv);
            if port < net && f.upstream(r.port_index(node, port)).is_none() {
                continue;
            }
            let name = if port < net { format!("in{port}") } else { format!("inj{}", port - net) };
            let h: Vec<String> = trimmed(r.occupancy_histogram(iv, cycles)).iter().map(|x| x.to_string()).collect();
            writeln!(
                w,
                "input_vc,{},{name},{vc},{},{},{},{},,,",
                node.0,
                r.held_max(iv, cycles),
                h.join(";"),
                r.stall_credit(iv),
                r.stall_arbitration(iv)
            )?;
        }
        let width = r.params.link_width as f64;
        for op in 0..f.output_ports() {
            if op % p >= net {
                continue;
            }
            let Some(ip) = f.downstream(op) else { continue };
            let u = f.port_flits(op) as f64 / (cycles as f64 * width);
            writeln!(w, "link,{},out{},,,,,,{},{},{u:.6}", op / p, op % p, ip / p, f.port_flits(op))?;
        }
        w.flush()
    }
}
