//! Statistics for buffer sizing, read from the routers' high-water marks.

use fabric::Fabric;
use serde::Serialize;

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
    /// `per_router_port[node][port]`: the maximum over that port's VCs.
    pub per_router_port: Vec<Vec<u16>>,
}

impl BufferStats {
    pub fn from_fabric(f: &Fabric) -> BufferStats {
        let r = &f.routers;
        let now = f.end();
        let (p, v, net) = (r.ports(), r.vcs(), r.params.net_ports as usize);
        let ports: Vec<String> = (0..p).map(|i| if i < net { format!("in{i}") } else { format!("inj{}", i - net) }).collect();
        let mut s = BufferStats { ports, per_port: vec![0; p], ..Default::default() };
        s.per_router_port = (0..r.n)
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
    /// `histogram[k]`: cycles spent holding exactly k flits.
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
    /// Input VCs that ever held a flit (the others are all zero).
    pub vcs: Vec<VcStat>,
    /// Links that carried at least one flit (the others carried none).
    pub links: Vec<LinkStat>,
    pub max_link_utilization: f64,
    pub mean_link_utilization: f64,
}

impl Stats {
    pub fn from_fabric(f: &Fabric) -> Stats {
        let r = &f.routers;
        let cycles = f.end().max(1);
        let (p, v, net) = (r.ports(), r.vcs(), r.params.net_ports as usize);
        let name = |port: usize| if port < net { format!("in{port}") } else { format!("inj{}", port - net) };
        let mut vcs = Vec::new();
        for iv in 0..r.input_vcs() {
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
                histogram: r.occupancy_histogram(iv, cycles),
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
            if f.port_flits(op) > 0 {
                links.push(LinkStat {
                    node: (op / p) as u32,
                    port: format!("out{}", op % p),
                    to_node: (ip / p) as u32,
                    flits: f.port_flits(op),
                    utilization: u,
                });
            }
        }
        let _ = v;
        Stats { cycles, vcs, links, max_link_utilization: max, mean_link_utilization: if count > 0 { sum / count as f64 } else { 0.0 } }
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
            let h: Vec<String> = r.occupancy_histogram(iv, cycles).iter().map(|x| x.to_string()).collect();
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
