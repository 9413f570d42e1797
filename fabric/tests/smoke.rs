use fabric::algorithms::{Forwarding, snb::Snb};
use fabric::*;
use router::NodeId;

#[test]
fn snb_hypercube_smoke() {
    for d in 1..=5u32 {
        for one_port in [false, true] {
            for fwd in [Forwarding::Node, Forwarding::Router] {
                let mut spec = FabricSpec::ideal(TopologyKind::Hypercube, &[d]);
                spec.ports = if one_port { PortModel::K(1) } else { PortModel::All };
                let root = NodeId(3 % (1 << d));
                let mut f = Fabric::new(&spec, Box::new(Snb::new(root, fwd, one_port, 1)));
                let end = f.run();
                assert_eq!(end, Ending::Quiescent);
                let c = f.scoreboard.counts();
                assert!(f.scoreboard.ok(), "{c:?} {:?}", f.scoreboard.problems);
                println!(
                    "d={d} one_port={one_port} {fwd:?}: completion {} hops {} tx {}",
                    f.counters.last_delivery, f.counters.flit_hops, f.counters.link_transmissions
                );
                assert_eq!(f.counters.last_delivery, d as u64);
                assert_eq!(f.counters.link_transmissions, (1 << d) - 1);
            }
        }
    }
}
