//! `flitwave list`.

use fabric::algorithms::traffic::Pattern;
use fabric::algorithms::{ALGORITHMS, Algorithm, Ports, Settings};
use router::{Pipeline, Switching};

/// What an algorithm takes besides the common flags, from its registry entry.
fn takes(a: &Algorithm) -> String {
    let mut t = Vec::new();
    if a.rooted {
        t.push("--root".to_string());
    }
    // The Seidel cost model sets the port model (one port) with the rest of the fabric.
    let ports = match a.ports {
        _ if a.settings == Settings::Seidel => None,
        Ports::Any => Some("--ports all, one or K"),
        Ports::AllOrOne => Some("--ports all or one"),
        Ports::All(_) => Some("--ports all"),
    };
    t.extend(ports.map(String::from));
    if a.router_forwarding {
        t.push("--forwarding node or router".to_string());
    }
    let own = if a.settings == Settings::Seidel { crate::cost_model::FIELDS } else { a.settings.flags() };
    if !own.is_empty() {
        t.push(own.iter().map(|f| format!("--{f}")).collect::<Vec<_>>().join(", "));
    }
    t.join("; ")
}

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
        s += &format!("  {:<10}  {}\n              on: {}\n", a.name, a.summary, tops.join(", "));
        s += &format!("              takes: {}\n              implements: {}\n", takes(a), a.reference);
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
