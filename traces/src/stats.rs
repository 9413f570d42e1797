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
        let (p, v, net) = (r.ports(), r.vcs(), r.params.net_ports as usize);
        let ports: Vec<String> = (0..p).map(|i| if i < net { format!("in{i}") } else { format!("inj{}", i - net) }).collect();
        let mut s = BufferStats { ports, per_port: vec![0; p], ..Default::default() };
        s.per_router_port = (0..r.n)
            .map(|node| {
                (0..p)
                    .map(|port| {
                        let m = (0..v).map(|vc| r.inputs.ctl[(node * p + port) * v + vc].max_len).max().unwrap_or(0);
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
