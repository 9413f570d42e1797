//! What a run needs in memory at its peak, against what the machine and its limits leave.

use super::*;

/// More nodes than a header can address: say so, and how much memory it would take anyway.
pub(super) fn check_addressable(spec: &FabricSpec) -> Result<(), ConfigError> {
    let nodes = spec.nodes();
    let max = router::Header::MAX_NODE as u128 + 1;
    if nodes <= max {
        return Ok(());
    }
    let dims = spec.sizes.iter().map(|s| s.to_string()).collect::<Vec<_>>().join("x");
    Err(err(
        "dims",
        dims,
        format!(
            "a {} of {nodes} nodes would need {} of router state (this machine has {} available), \
             and the header's 24-bit node field addresses at most {max} nodes",
            spec.kind.name(),
            gib(spec.bytes_needed()),
            gib(fabric::spec::available_memory() as u128)
        ),
    ))
}

/// Memory the run needs at its peak, the fabric and the workload (the scoreboard's records):
/// refuse runs that cannot fit instead of aborting in the allocator; the estimate if it fits.
/// A run split between threads builds the fabric's state once per thread.
pub(super) fn check_workload_memory(
    spec: &FabricSpec,
    workload: &Workload,
    max_cycles: u64,
    threads: u32,
    positions: bool,
    waves: Option<Waves>,
) -> Result<u128, ConfigError> {
    let (field, value, what, need) = memory_need(spec, workload, max_cycles, threads, positions, waves)?;
    let (avail, limit) = fabric::spec::memory_limit();
    let avail = avail as u128;
    if need <= avail {
        return Ok(need);
    }
    // The largest size that fits: smaller dimensions, or (the workload's own bytes growing
    // in proportion) fewer broadcasts or cycles; with a tenth to spare, as what a process
    // already holds when it checks varies from run to run (threads, allocator arenas).
    let room = avail * 9 / 10;
    let fits = if field == "dims" {
        let mut smaller = spec.clone();
        loop {
            match smaller.shrink() {
                None => break "nothing".to_string(),
                Some(s) => smaller = s,
            }
            match memory_need(&smaller, workload, max_cycles, threads, positions, waves) {
                Ok((_, v, _, n)) if n <= room => break format!("--dims {v}"),
                _ => {}
            }
        }
    } else {
        let base = memory_need(spec, workload, 0, threads, positions, waves).map_or(0, |x| x.3);
        let base = if field == "active-count" { fixed_memory(spec, threads, positions, waves) } else { base };
        let have: u128 = value.parse().unwrap_or(0);
        let most = if need > base { have * room.saturating_sub(base) / (need - base) } else { 0 };
        format!("--{field} {most}")
    };
    let traced = match waves {
        Some(w) => {
            let (signals, bytes) = wave_memory(spec, w);
            format!(" (its waveform's {signals} signals take {}: --trace-nodes traces fewer)", gib(bytes))
        }
        None => String::new(),
    };
    Err(err(
        field,
        value,
        format!("{what} needs {} of memory{traced}; {limit} leaves {}; the largest that fits is {fits}", gib(need), gib(avail)),
    ))
}

/// What a traced run's waveform holds in memory while it runs: the format, whether the
/// run has faults (a `failed` bit per link), and the nodes traced if not all.
#[derive(Clone, Copy, Debug)]
pub(super) struct Waves {
    pub fst: bool,
    pub faults: bool,
    pub nodes: Option<u128>,
}

/// What the process needs beside the workload: its own code and libraries, the fabric's
/// state (once per thread) and the waveform's signals.
pub(super) fn fixed_memory(spec: &FabricSpec, threads: u32, positions: bool, waves: Option<Waves>) -> u128 {
    let positions = if positions { router::Routers::branch_pos_bytes(&spec.router_params(), spec.nodes() as usize) } else { 0 };
    spec.fixed_bytes(threads, positions) + waves.map_or(0, |w| wave_memory(spec, w).1)
}

/// The signals a traced run declares, and what they hold in memory.
fn wave_memory(spec: &FabricSpec, w: Waves) -> (u128, u128) {
    let signals = w.nodes.unwrap_or(spec.nodes()) * traces::Tracer::signals_per_node(&spec.router_params(), w.faults) as u128;
    (signals, signals * traces::Tracer::bytes_per_signal(w.fst) as u128)
}

/// The memory a run needs at its peak: the field that sizes it, its value, what it is, and
/// the bytes.
pub(super) fn memory_need(
    spec: &FabricSpec,
    workload: &Workload,
    max_cycles: u64,
    threads: u32,
    positions: bool,
    waves: Option<Waves>,
) -> Result<(&'static str, String, String, u128), ConfigError> {
    let nodes = spec.nodes();
    // One record per declared message (24 bytes), plus a bitset over the nodes per broadcast.
    let record = 24u128;
    let bitset = nodes.div_ceil(64) * 8;
    let dims = spec.sizes.iter().map(|s| s.to_string()).collect::<Vec<_>>().join("x");
    let (field, value, what, bytes) = match workload {
        Workload::Algorithm { name, .. } if matches!(name.as_str(), "mnb-sbt" | "mnb") => {
            // Measured (docs/performance.md): the packets the nodes hold queued for their
            // next hops, about 26 bytes per pair of nodes at the peak (3/8 of all pairs
            // queued at once in mnb-sbt, a quarter to a third in mnb, 68 bytes each).
            (
                "dims",
                dims,
                format!("{name} on {nodes} nodes tracks {nodes} broadcasts to every node and"),
                nodes * (record + bitset) + nodes * nodes * 26,
            )
        }
        // One packet at a time on its way round the ring.
        Workload::Algorithm { name, .. } if name == "mnb-ring" => {
            ("dims", dims, format!("{name} on {nodes} nodes tracks {nodes} broadcasts to every node"), nodes * (record + bitset))
        }
        Workload::Algorithm { kbcast: Some(k), .. } => {
            let m = k.active.len() as u128;
            // Measured (docs/performance.md): the scoreboard's bitset per broadcast, grown
            // by doubling, and the relays queued at the nodes.
            let bytes = m * (4 * bitset + 64) + nodes * 3072;
            ("active-count", m.to_string(), format!("kbcast: {m} broadcasts on {nodes} nodes"), bytes)
        }
        Workload::Algorithm { name, .. } if name == "multi-accumulate" => (
            "dims",
            dims,
            format!("multi-accumulate on {nodes} nodes keeps a partial result per node and root and"),
            // Measured (docs/performance.md): about 42 bytes per pair of nodes at the peak.
            nodes * nodes * 42 + nodes * record,
        ),
        Workload::Algorithm { name, .. } if name == "total-exchange" => {
            if nodes * nodes >= 1 << 31 {
                return Err(err("dims", dims, format!("total-exchange tracks {} messages; at most 2^31 (d <= 15)", nodes * nodes)));
            }
            (
                "dims",
                dims,
                format!("total-exchange on {nodes} nodes tracks {} messages and", nodes * (nodes - 1)),
                // Measured (docs/performance.md): a message's record, packet and place in a
                // queue, about 84 bytes per pair of nodes at the peak.
                nodes * nodes * 84 + nodes * 64,
            )
        }
        Workload::Algorithm { pmnb: Some(p), .. } => {
            let pieces = p.variant.pieces(spec.sizes[0]) as u128;
            let m = p.active.len() as u128;
            let d = spec.sizes[0] as u128; // the hypercube's dimension
            // Declared pieces, the prefix and phase state (16 bytes per node and d^2), and
            // what every node holds of the packets at the peak, measured
            // (docs/performance.md): 26 bytes per node and packet for PMNB I, 20 for PMNB II's
            // mini-packets, 4 for PMNB III.
            let per = match p.variant {
                fabric::algorithms::pmnb::Variant::One => 26,
                fabric::algorithms::pmnb::Variant::Two => 20,
                fabric::algorithms::pmnb::Variant::Three => 4,
            };
            let bytes = m * pieces * (record + bitset) + nodes * d * d * 16 + nodes * m * per;
            ("active-count", m.to_string(), format!("a partial multinode broadcast of {m} packets on {nodes} nodes"), bytes)
        }
        Workload::Algorithm { dynamic: Some(dc), .. } => {
            let d = spec.sizes[0]; // the hypercube's dimension
            let pieces = dc.pmnb.pieces(d) as u128;
            let slots = dc.cycles.min(max_cycles) as f64 / spec.packet_flits as f64;
            let packets = (dc.lambda * nodes as f64 * slots).ceil() as u128;
            // Measured (docs/performance.md): besides each piece's record, about 6.7 KiB
            // per node of periods' state and queued copies, and 3.5 KiB more per node for each
            // unit of rho / (1 - rho), as queues grow with the load (taken at rho = 0.8 beyond
            // it, where how long they grow depends on the run's length: a short run at rho =
            // 0.95 holds less).
            let rho = dc.load.min(0.8);
            let queueing = (rho / (1.0 - rho) * 3600.0) as u128;
            (
                "cycles",
                dc.cycles.to_string(),
                format!("about {packets} broadcasts over {} slots on {nodes} nodes", slots.round()),
                packets * pieces * (record + bitset) + nodes * (6_900 + queueing),
            )
        }
        Workload::Algorithm { name, .. } => ("dims", dims, format!("{name} on {nodes} nodes"), record + bitset),
        Workload::Traffic { rate, broadcast_rate, cycles, .. } => {
            let packets = (nodes as f64 * rate * (*cycles).min(max_cycles) as f64).ceil() as u128;
            // The scoreboard keeps every broadcast's record, bitset and timing.
            let broadcasts = (nodes as f64 * broadcast_rate * (*cycles).min(max_cycles) as f64).ceil() as u128;
            (
                "cycles",
                cycles.to_string(),
                format!("about {packets} packets and {broadcasts} broadcasts over {cycles} cycles on {nodes} nodes"),
                // The scoreboard forgets delivered unicast packets: below saturation their
                // records are those in flight, a small part of the about 1.5 KiB per node of
                // NIC, measurement and latency state (measured). Saturated sources pile
                // packets up beyond any estimate; the allocator's exit stops them.
                broadcasts * (record + bitset + 24) + nodes * 1536,
            )
        }
    };
    Ok((field, value, what, fixed_memory(spec, threads, positions, waves) + bytes))
}
