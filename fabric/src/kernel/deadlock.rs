//! The watchdog's diagnosis: the wait-for graph of blocked input VCs and a cycle in it
//! ([`Deadlock`]), with the input VCs named as in RTL.

use super::Fabric;
use router::{NONE, PortSet};
use serde::Serialize;

/// A deadlock found by the watchdog.
#[derive(Clone, Debug, Serialize)]
pub struct Deadlock {
    /// Cycle the watchdog fired.
    pub cycle: u64,
    /// Last cycle any flit moved.
    pub last_move: u64,
    pub flits_stuck: u64,
    /// Input VCs waiting on each other in a cycle (`n<node>.in<port>.vc<vc>`, each waiting on the next).
    pub wait_for_cycle: Vec<String>,
    /// Input VCs holding flits that cannot move.
    pub blocked_vcs: usize,
}

impl Fabric {
    /// Build the wait-for graph of blocked input VCs and find a cycle in it.
    pub(super) fn find_deadlock(&self, t: u64) -> Deadlock {
        let r = &self.routers;
        let v = r.vcs();
        let n_iv = r.input_vcs();
        let mut edges: Vec<Vec<u32>> = vec![Vec::new(); n_iv];
        let mut blocked = 0;
        for (iv, out) in edges.iter_mut().enumerate() {
            let c = r.vc_view(iv);
            if c.stage != router::VcStage::Routed {
                continue;
            }
            // An edge to the upstream VC sending the rest of this VC's packet into it.
            let wait_upstream = |out: &mut Vec<u32>| {
                let ip = iv / v;
                if self.wiring.up[ip] != NONE
                    && let Some(owner) = r.output_owner(self.wiring.up[ip] as usize, iv % v)
                {
                    out.push(owner as u32);
                }
            };
            if c.front.is_none() {
                // Mid-packet with nothing buffered: it holds its output VCs (or ejection
                // channel) and waits for the rest of its packet from upstream.
                wait_upstream(out);
                continue;
            }
            blocked += 1;
            let (node, _, _) = r.ivc_location(iv);
            if r.waits_for_tail(iv) {
                // A store-and-forward head waits for its tail from upstream (and for the
                // credits of the whole packet downstream, below).
                wait_upstream(out);
            }
            for o in c.pending.network().net_ports() {
                let op = r.port_index(node, o);
                if c.granted.has_port(o) {
                    // Its next flit lacks credits: it waits on the VC downstream.
                    if let Some(ovc) = r.short_of_credits(iv, o)
                        && self.wiring.down[op] != NONE
                    {
                        out.push(self.wiring.down[op] * v as u32 + ovc as u32);
                    }
                } else {
                    for ovc in 0..v {
                        if r.may_take_vc(iv, o, ovc)
                            && let Some(owner) = r.output_owner(op, ovc)
                        {
                            out.push(owner as u32);
                        }
                    }
                }
            }
            if c.pending.contains(PortSet::LOCAL) && !c.granted.contains(PortSet::LOCAL) {
                for ch in 0..r.nic_channels() {
                    for evc in 0..r.ejection_vcs() {
                        if let Some(owner) = r.ejection_owner(node, ch, evc) {
                            out.push(owner as u32);
                        }
                    }
                }
            }
        }
        // Iterative DFS for a cycle.
        let mut color = vec![0u8; n_iv];
        let mut parent = vec![NONE; n_iv];
        let mut cycle = Vec::new();
        'outer: for s in 0..n_iv {
            if color[s] != 0 || edges[s].is_empty() {
                continue;
            }
            let mut stack = vec![(s as u32, 0usize)];
            color[s] = 1;
            while let Some(&mut (u, ref mut i)) = stack.last_mut() {
                if *i < edges[u as usize].len() {
                    let w = edges[u as usize][*i];
                    *i += 1;
                    match color[w as usize] {
                        0 => {
                            color[w as usize] = 1;
                            parent[w as usize] = u;
                            stack.push((w, 0));
                        }
                        1 => {
                            let mut x = u;
                            cycle.push(w);
                            while x != w {
                                cycle.push(x);
                                x = parent[x as usize];
                            }
                            cycle.reverse();
                            break 'outer;
                        }
                        _ => {}
                    }
                } else {
                    color[u as usize] = 2;
                    stack.pop();
                }
            }
        }
        Deadlock {
            cycle: t,
            last_move: self.step.last_move,
            flits_stuck: r.flits,
            wait_for_cycle: cycle.iter().map(|&iv| self.ivc_name(iv as usize)).collect(),
            blocked_vcs: blocked,
        }
    }

    /// RTL-style name of a global input VC: `n0005.in1.vc0` (injection ports are `inj<k>`).
    pub fn ivc_name(&self, iv: usize) -> String {
        let (node, p, v) = self.routers.ivc_location(iv);
        let net = self.routers.params.net_ports as usize;
        let width = (self.topo.nodes().max(2) - 1).to_string().len().max(4);
        if p < net { format!("n{:0width$}.in{}.vc{}", node.0, p, v) } else { format!("n{:0width$}.inj{}.vc{}", node.0, p - net, v) }
    }
}
