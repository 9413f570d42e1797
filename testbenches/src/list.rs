//! `flitwave list`.

use fabric::algorithms::ALGORITHMS;
use fabric::algorithms::traffic::Pattern;
use router::{Pipeline, Switching};

pub fn text() -> String {
    let mut s = String::new();
    s += "topologies:\n";
    s += "  hypercube   --dims d (1..20); port i crosses dimension i; e-cube routing\n";
    s += "  linear      --dims n; dimension-order (shortest path) routing\n";
    s += "  mesh        --dims 16x32 (any sizes, any number of dimensions); dimension-order routing\n";
    s += "  torus       --dims 8x8 (k-ary n-cube); dimension order, shorter way round, dateline VCs (--deadlock-avoidance)\n";
    s += "\nalgorithms (--algorithm):\n";
    for a in ALGORITHMS {
        let tops: Vec<&str> = a.topologies.iter().map(|t| t.name()).collect();
        s +=
            &format!("  {:<10}  {}\n              on: {}\n              implements: {}\n", a.name, a.summary, tops.join(", "), a.reference);
    }
    s += &format!("\ntraffic patterns (--traffic, with --rate packets/node/cycle --cycles C):\n  {}\n", Pattern::NAMES);
    s += "broadcast traffic (--broadcast-rate R broadcasts/node/cycle, with or without --traffic; --forwarding node|router):\n";
    s += "  each from its source to every other node on the source's broadcast tree (as snb); its latency is from its\n";
    s += "  creation until its last destination has the tail (broadcast_latency_*), apart from unicast latency (latency_*)\n";
    s += "\nrouter presets (--router, or a TOML file with preset/rc_delay/va_delay/link_latency/credit_delay/inject_latency):\n";
    s += "  zero-load latency: cycles from a packet's creation to its tail's ejection, alone in the network,\n";
    s += "  for H links crossed and L flits (buffers of at least L flits; docs/presets.md)\n";
    for (name, p, what) in Pipeline::PRESETS {
        s += &format!(
            "  {:<10}  {what}\n              rc_delay {} va_delay {} link_latency {} credit_delay {} inject_latency {} ({} cycle{} per hop at zero load)\n",
            name,
            p.rc_delay,
            p.va_delay,
            p.link_latency,
            p.credit_delay,
            p.inject_latency,
            p.hop_cycles(),
            if p.hop_cycles() == 1 { "" } else { "s" }
        );
        s += &format!(
            "              zero-load latency: {} (wh, vct); {} (sf)\n",
            p.zero_load_formula(Switching::Wormhole),
            p.zero_load_formula(Switching::StoreAndForward)
        );
    }
    s += "\nreproductions (flitwave reproduce PAPER --out DIR):\n";
    for (name, what) in crate::reproduce::PAPERS {
        s += &format!("  {name:<16} {what}\n");
    }
    s += "\nswitching (--switching): sf (store-and-forward), vct (virtual cut-through), wh (wormhole)\n";
    s += "port models (--ports): all (a NIC channel per link), one, K\n";
    s += "forwarding (--forwarding): node (receive, then send again), router (in-router replication)\n";
    s += "arbiters (--arbiter): key (header priority key, then oldest, then round-robin; default), oldest, round-robin, fixed\n";
    s +=
        "injection VCs (--injection-vc): round-robin (a NIC channel starts each packet in the next injection VC with room; default), vc0\n";
    s += "ejection VCs (--ejection-vcs N, default --vcs): packets holding them share their ejection channel a flit a cycle\n";
    s += "buffer depths (flits per VC): --buffer-flits N the network input VCs (fed by links), --inject-buffer-flits N the injection VCs (fed by the NIC; default --buffer-flits); keys buffer-flits, inject-buffer-flits\n";
    s += "statistics (--stats, key stats): summary (network-wide occupancy per port class) or full (also per VC, link and router; default up to 4,096 routers)\n";
    s += "VC choice (--va-policy): round-robin (an output offers its free VCs in turn; default), lowest, most-credits\n";
    s += "schedules (--schedule): busy (visit only routers with work; default), all (every router, every allocation); same results\n";
    s += "multicast VC allocation (--multicast-va, with --forwarding router): atomic (every branch in one cycle or none; default), per-branch\n";
    s += "replication (--replication, with --forwarding router): async (a read pointer per branch; default), sync (each flit to every branch before the next)\n";
    s
}
