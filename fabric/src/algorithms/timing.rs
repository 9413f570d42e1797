//! The timings the synchronous algorithms measure on the configured router: how it moves
//! pieces between neighbours, so that their steps stretch by what the router takes.

use crate::program::{Dest, NodeCtx, Program, Received, Send};
use crate::{Fabric, FabricSpec, PortModel, TopologyKind};
use router::NodeId;

/// How this router moves pieces of `piece` flits between neighbours: the cycles a lone
/// piece takes beyond its length (0 on the ideal router) and the sustained interval between
/// back-to-back pieces on one link (`piece` when the buffers cover the credit round trip).
/// Measured on a two-node fabric with the same router.
pub fn hop_timing(spec: &FabricSpec, piece: u16) -> (u64, u64) {
    let one = burst_delivery(spec, &[piece]);
    let burst = 16;
    let gap = (burst_delivery(spec, &vec![piece; burst + 1]) - one).div_ceil(burst as u64);
    (one - piece as u64, gap.max(piece as u64))
}

/// The cycles a piece of `piece` flits sent right after a prefix packet of `prefix` flits
/// over one link arrives later than alone: how soon after the prefix packet the link, and
/// the buffer behind it, take the piece (the prefix packet's own length when the buffer
/// holds both; more when it holds only the piece).
pub fn handover_timing(spec: &FabricSpec, prefix: u16, piece: u16) -> u64 {
    burst_delivery(spec, &[prefix, piece]) - burst_delivery(spec, &[piece])
}

/// On a 1-cube of this router, node 0 sends packets of the given lengths to node 1 at cycle
/// 0, in order: the cycle of the last delivery.
fn burst_delivery(spec: &FabricSpec, pieces: &[u16]) -> u64 {
    struct Burst {
        pieces: Vec<u16>,
    }
    impl Program for Burst {
        fn start(&mut self, cx: &mut NodeCtx<'_>) {
            if cx.node.0 == 0 {
                for &flits in &self.pieces {
                    cx.send(Send { dest: Dest::Node(NodeId(1)), msg: u32::MAX, aux: 0, key: 0, flits });
                }
            }
        }
        fn receive(&mut self, _: &mut NodeCtx<'_>, _: &Received) {}
    }
    let mut spec = spec.clone();
    spec.kind = TopologyKind::Hypercube;
    spec.sizes = vec![1];
    spec.ports = PortModel::All;
    let mut f = Fabric::new(&spec, Box::new(Burst { pieces: pieces.to_vec() }));
    f.run();
    f.counters.last_delivery
}
