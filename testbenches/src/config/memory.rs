//! What a run needs in memory at its peak, against what the machine and its limits leave.

use super::*;

/// More nodes than a header can address: say so, and how much memory it would take anyway.
pub(super) fn check_addressable(spec: &FabricSpec) -> Result<(), ConfigError> {
    let nodes = spec.nodes();
    let max = router::Header::MAX_NODE as u128 + 1;
    if nodes <= max {
        return Ok(());
    }
    Err(err(
        "dims",
        algorithms::entry::dims_text(spec),
        format!(
            "a {} of {nodes} nodes would need {} of router state (this machine has {} available), \
             and the header's 24-bit node field addresses at most {max} nodes",
            spec.kind.name(),
            gib(spec.bytes_needed()),
            gib(fabric::spec::available_memory() as u128)
        ),
    ))
}

/// What sizes a run's memory beside its fabric: the workload, the cycle limit, the threads
/// (each builds the fabric's state), whether routers keep a read position per VC and branch
/// (asynchronous replication of multi-flit packets), and the waveform.
#[derive(Clone, Copy, Debug)]
pub(super) struct Sizing<'a> {
    pub workload: &'a Workload,
    pub max_cycles: u64,
    pub threads: u32,
    pub positions: bool,
    pub waves: Option<Waves>,
}

/// Memory the run needs at its peak, the fabric and the workload (the scoreboard's records):
/// refuse runs that cannot fit instead of aborting in the allocator; the estimate if it fits.
pub(super) fn check_workload_memory(spec: &FabricSpec, sizing: Sizing) -> Result<u128, ConfigError> {
    let (field, value, what, need) = memory_need(spec, sizing)?;
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
            match memory_need(&smaller, sizing) {
                Ok((_, v, _, n)) if n <= room => break format!("--dims {v}"),
                _ => {}
            }
        }
    } else {
        let base = if field == "active-count" {
            fixed_memory(spec, sizing)
        } else {
            memory_need(spec, Sizing { max_cycles: 0, ..sizing }).map_or(0, |x| x.3)
        };
        let have: u128 = value.parse().unwrap_or(0);
        let most = if need > base { have * room.saturating_sub(base) / (need - base) } else { 0 };
        format!("--{field} {most}")
    };
    let traced = match sizing.waves {
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
pub(super) fn fixed_memory(spec: &FabricSpec, sizing: Sizing) -> u128 {
    let positions = if sizing.positions { router::Routers::branch_pos_bytes(&spec.router_params(), spec.nodes() as usize) } else { 0 };
    spec.fixed_bytes(sizing.threads, positions) + sizing.waves.map_or(0, |w| wave_memory(spec, w).1)
}

/// The signals a traced run declares, and what they hold in memory.
fn wave_memory(spec: &FabricSpec, w: Waves) -> (u128, u128) {
    let signals = w.nodes.unwrap_or(spec.nodes()) * traces::Tracer::signals_per_node(&spec.router_params(), w.faults) as u128;
    (signals, signals * traces::Tracer::bytes_per_signal(w.fst) as u128)
}

/// The memory a run needs at its peak: the field that sizes it, its value, what it is, and
/// the bytes.
pub(super) fn memory_need(spec: &FabricSpec, sizing: Sizing) -> Result<(&'static str, String, String, u128), ConfigError> {
    let max_cycles = sizing.max_cycles;
    let nodes = spec.nodes();
    // One record per declared message, plus a bitset over the nodes per broadcast.
    let (record, bitset) = (algorithms::entry::RECORD_BYTES, algorithms::entry::bitset_bytes(spec));
    let (field, value, what, bytes) = match sizing.workload {
        Workload::Algorithm { name, forwarding, root, kbcast, pmnb, dynamic, .. } => {
            // The algorithm's own estimate, in its registry entry (the Seidel broadcasts'
            // plan is not needed for it, and it draws nothing).
            let a = algorithms::find(name).expect("the algorithm passed validation");
            let input = algorithms::Input {
                spec,
                root: NodeId(*root),
                forwarding: *forwarding,
                seed: 0,
                kbcast: kbcast.as_ref(),
                pmnb: pmnb.as_ref(),
                dynamic: dynamic.as_ref(),
                seidel: None,
            };
            let need = a.memory_need(&input, max_cycles)?;
            (need.field, need.value, need.what, need.bytes)
        }
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
    Ok((field, value, what, fixed_memory(spec, sizing) + bytes))
}
