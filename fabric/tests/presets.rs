//! Each router preset's zero-load latency ([`Pipeline::zero_load_latency`]) against the
//! simulator: every ordered pair of nodes of several meshes sends one packet, alone in the
//! network, and each packet's latency (creation to the tail's ejection) must be the formula's
//! for the links it crosses, counted from the two nodes' coordinates.

use fabric::*;
use router::{Pipeline, Switching};
use std::sync::{Arc, Mutex};

mod scheduled;
use scheduled::{Delivery, Scheduled};

/// Node `n`'s coordinates on a mesh of `sizes` (the first dimension varies fastest).
fn coords(n: u32, sizes: &[u32]) -> Vec<u32> {
    let mut x = n;
    sizes
        .iter()
        .map(|&s| {
            let c = x % s;
            x /= s;
            c
        })
        .collect()
}

/// Links a dimension-order route crosses between `a` and `b`: the Manhattan distance.
fn hops(a: u32, b: u32, sizes: &[u32]) -> u64 {
    coords(a, sizes).iter().zip(coords(b, sizes)).map(|(&x, y)| x.abs_diff(y) as u64).sum()
}

/// Every ordered pair of distinct nodes sends an `flits`-flit packet, one packet at a time,
/// `gap` cycles apart; returns each delivery.
fn one_at_a_time(sizes: &[u32], pipeline: Pipeline, switching: Switching, flits: u16, gap: u64) -> Vec<Delivery> {
    let mut spec = FabricSpec::ideal(TopologyKind::Mesh, sizes);
    spec.pipeline = pipeline;
    spec.switching = switching;
    spec.vcs = 2;
    spec.packet_flits = flits;
    // The least the formula allows: a packet fits in every buffer, so it never waits for a credit.
    spec.buffer_flits = flits;
    spec.ports = PortModel::K(1);
    spec.validate().unwrap();
    let n: u32 = sizes.iter().product();
    let mut sends = vec![Vec::new(); n as usize];
    let mut t = 0;
    for s in 0..n {
        for d in (0..n).filter(|&d| d != s) {
            sends[s as usize].push((t, d));
            t += gap;
        }
    }
    let got = Arc::new(Mutex::new(Vec::new()));
    let program = Scheduled { sends, next: vec![0; n as usize], flits, got: got.clone() };
    let mut f = Fabric::new(&spec, Box::new(program));
    assert_eq!(f.run(), Ending::Quiescent);
    assert!(f.scoreboard.ok(), "{:?} {:?}", f.scoreboard.counts(), f.scoreboard.problems);
    let got = got.lock().unwrap().clone();
    assert_eq!(got.len() as u64, (n as u64) * (n as u64 - 1));
    got
}

#[test]
fn every_packet_alone_takes_the_presets_zero_load_latency() {
    let meshes: [&[u32]; 4] = [&[2, 2], &[4, 4], &[8, 8], &[3, 5]];
    for (name, pipeline, _) in Pipeline::PRESETS {
        for switching in [Switching::Wormhole, Switching::VirtualCutThrough, Switching::StoreAndForward] {
            for flits in [1u16, 2, 4, 7] {
                for &sizes in &meshes {
                    let diameter = sizes.iter().map(|&k| k as u64 - 1).sum();
                    // Longer than the slowest packet, its credits' return included.
                    let gap = 2 * pipeline.zero_load_latency(switching, diameter, flits as u64) + 20;
                    for (s, d, born, at, _) in one_at_a_time(sizes, pipeline, switching, flits, gap) {
                        let h = hops(s, d, sizes);
                        assert_eq!(
                            at - born,
                            pipeline.zero_load_latency(switching, h, flits as u64),
                            "{name} {} {sizes:?}, {flits}-flit packet {s} -> {d} ({h} hops, created in cycle {born})",
                            switching.name()
                        );
                    }
                }
            }
        }
    }
}

/// BookSim 2's numbers as measured (`docs/presets.md`): 5(H + 1) + 2 + (L − 1) cycles for
/// its iq router with default delays, here on one 8×8 mesh, every source to every
/// destination, without the general formula.
#[test]
fn booksim_preset_gives_booksims_zero_load_latency() {
    for flits in [1u16, 2, 4, 8] {
        for (s, d, born, at, _) in one_at_a_time(&[8, 8], Pipeline::BOOKSIM, Switching::Wormhole, flits, 200) {
            let h = hops(s, d, &[8, 8]);
            assert_eq!(at - born, 5 * (h + 1) + 2 + (flits as u64 - 1), "{s} -> {d}, {flits} flits");
        }
    }
}
