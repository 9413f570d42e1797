//! The workloads' own settings: faults, the hypercube papers' active sets and prefix steps,
//! the dynamic scheme.

use super::*;

/// The faults: `fault` (lines of `link NODE.PORT at CYCLE` / `router NODE at CYCLE`, or
/// `@FILE` naming a file of such lines, `#` starting a comment) and the links failed at
/// random by `link-failure-rate` and `seed`.
pub(super) fn faults(raw: &Raw, topo: &fabric::Topology, seed: u64) -> Result<(Vec<fabric::faults::Fault>, Option<f64>), ConfigError> {
    let mut list = Vec::new();
    for given in raw.faults.fault.iter().flat_map(|v| v.split('\n')) {
        if given.trim().is_empty() {
            return Err(err("fault", given, "a fault like \"link 5.0 at 100\" or \"router 5 at 100\", or @FILE of such lines"));
        }
        let text = match given.trim().strip_prefix('@') {
            Some(path) => crate::input::read_text(Path::new(path))
                .map_err(|e| err("fault", given.trim(), format!("a file of faults, one a line (cannot read it: {e})")))?,
            None => given.to_string(),
        };
        for line in text.lines() {
            let line = line.split('#').next().unwrap_or("").trim();
            if !line.is_empty() {
                list.push(fabric::faults::Fault::parse(line, topo)?);
            }
        }
    }
    let rate = match raw.faults.link_failure_rate.as_deref() {
        Some(v) => {
            let p = v.trim().parse::<f64>().ok().filter(|p| (0.0..=1.0).contains(p));
            let p = p.ok_or_else(|| {
                err("link-failure-rate", v, "a probability from 0 to 1 (each link fails at cycle 0 with it, drawn by --seed)")
            })?;
            list.extend(fabric::faults::Fault::random_links(topo, p, seed));
            Some(p)
        }
        None => None,
    };
    Ok((list, rate))
}

/// Resolve kbcast's settings.
pub(super) fn kbcast_config(raw: &Raw, topo: &fabric::Topology, packet_flits: u16, seed: u64) -> Result<KbcastConfig, ConfigError> {
    let d = topo.ndims() as u32;
    let variant = match raw.algorithm.variant.as_deref() {
        Some(v) => Variant::parse(v).ok_or_else(|| err("variant", v, format!("one of {}", Variant::NAMES)))?,
        None => Variant::Prefix,
    };
    let (active, active_set) = active_set(raw, topo, seed)?;
    if variant == Variant::RankRotated && active.len() as u32 > d {
        return Err(err("active", active.len(), format!("rank-rotated is for at most d = {d} broadcasters")));
    }
    let (tp, tp_cycles) = prefix_step(raw, packet_flits)?;
    if raw.algorithm.tp.as_deref().is_some() && !variant.ranked() {
        return Err(err("tp", tp, format!("the {} variant has no prefix phase", serde_json::to_value(variant).unwrap().as_str().unwrap())));
    }
    Ok(KbcastConfig { variant, active, active_set, tp, tp_cycles })
}

/// pmnb-2 splits each packet into d mini-packets of equal length.
pub(super) fn check_split(name: &str, packet_flits: u16, d: u32) -> Result<(), ConfigError> {
    if !(packet_flits as u32).is_multiple_of(d) {
        return Err(err(
            "packet-flits",
            packet_flits,
            format!("{name} splits each packet into d = {d} mini-packets: a multiple of {d} (default {d})"),
        ));
    }
    Ok(())
}

/// Resolve the settings of pmnb-1, -2, -3.
pub(super) fn pmnb_config(
    variant: PmnbVariant,
    name: &str,
    raw: &Raw,
    topo: &fabric::Topology,
    packet_flits: u16,
    seed: u64,
) -> Result<PmnbConfig, ConfigError> {
    if variant == PmnbVariant::Two {
        check_split(name, packet_flits, topo.ndims() as u32)?;
    }
    let (active, active_set) = active_set(raw, topo, seed)?;
    let (tp, tp_cycles) = prefix_step(raw, packet_flits)?;
    Ok(PmnbConfig { variant, active, active_set, tp, tp_cycles })
}

/// Resolve the dynamic scheme's settings.
pub(super) fn dynamic_config(raw: &Raw, topo: &fabric::Topology, packet_flits: u16) -> Result<DynamicConfig, ConfigError> {
    let d = topo.ndims() as u32;
    let pmnb = match raw.algorithm.pmnb.as_deref() {
        Some(v) => match PmnbVariant::parse(v) {
            Some(p @ (PmnbVariant::Two | PmnbVariant::Three)) => p,
            _ => return Err(err("pmnb", v, "pmnb-2 or pmnb-3 (the PMNB each period runs; pmnb-1 is not linear in M)")),
        },
        None => DEFAULT_PMNB,
    };
    if pmnb == PmnbVariant::Two {
        check_split("dynamic with pmnb-2", packet_flits, d)?;
    }
    let load = match raw.algorithm.load.as_deref() {
        Some(v) => float(
            "load",
            v,
            0.0..=10.0,
            "the hypercube utilization factor rho = lambda(N-1)/d, a number from 0 to 10 (rho < 1 is needed for stability)",
        )?,
        None => 0.5,
    };
    let cycles = match raw.workload.cycles.as_deref() {
        Some(v) => uint("cycles", v, 1, 1 << 40)?,
        None => 20_000 * packet_flits as u64,
    };
    let (tp, tp_cycles) = prefix_step(raw, packet_flits)?;
    let lambda = load * d as f64 / (topo.nodes() as f64 - 1.0);
    Ok(DynamicConfig { pmnb, load, lambda, cycles, warmup_cycles: cycles / 10, tp, tp_cycles })
}

/// The active nodes: `--active LIST`, or `--active-count K` (default d) chosen by
/// `--active-set` (random by `--seed`, subcube, adversarial).
pub(super) fn active_set(raw: &Raw, topo: &fabric::Topology, seed: u64) -> Result<(Vec<u32>, String), ConfigError> {
    let d = topo.ndims() as u32;
    let n = topo.nodes() as u64;
    Ok(match raw.algorithm.active.as_deref() {
        Some(v) => {
            if let Some(c) = raw.algorithm.active_count.as_deref() {
                return Err(err("active-count", c, "give either --active LIST or --active-count K, not both"));
            }
            if let Some(s) = raw.algorithm.active_set.as_deref() {
                return Err(err(
                    "active-set",
                    s,
                    "chooses --active-count nodes; with --active LIST the list is the set: give one or the other",
                ));
            }
            let list = parse_node_list("active", v, n)?.unwrap_or_else(|| (0..n as u32).collect());
            (list, "list".to_string())
        }
        None => {
            let set = match raw.algorithm.active_set.as_deref() {
                Some(v) => ActiveSet::parse(v).ok_or_else(|| err("active-set", v, format!("one of {}", ActiveSet::NAMES)))?,
                None => ActiveSet::Random,
            };
            let cap = set.capacity(d) as u64;
            let k = match raw.algorithm.active_count.as_deref() {
                Some(v) => uint("active-count", v, 1, cap).map_err(|e| match set {
                    // The §3.1 set lies in one half of the cube.
                    ActiveSet::Adversarial => match e {
                        ConfigError::Field { field, value, reason } => ConfigError::Field {
                            field,
                            value,
                            reason: format!("{reason} (the adversarial set of sec. 3.1 lies in one half of the cube)"),
                        },
                        e => e,
                    },
                    _ => e,
                })? as u32,
                None => d,
            };
            (set.choose(d, k, seed), serde_json::to_value(set).unwrap().as_str().unwrap().to_string())
        }
    })
}

/// `--tp`: a parallel-prefix step in slots (default 1), and in cycles.
pub(super) fn prefix_step(raw: &Raw, packet_flits: u16) -> Result<(f64, u32), ConfigError> {
    let tp = match raw.algorithm.tp.as_deref() {
        // `+ 0.0` turns -0 into 0 (the config echoes it).
        Some(v) => float("tp", v, 0.0..=1000.0, "a prefix step in slots, a number from 0 to 1000")? + 0.0,
        None => 1.0,
    };
    // Whole up to the rounding of a decimal slot count (2.3 x 100 is 229.99999999999997).
    let exact = tp * packet_flits as f64;
    let flits = exact.round();
    if tp > 0.0 && ((exact - flits).abs() > 1e-9 * flits.max(1.0) || flits < 1.0) {
        return Err(err(
            "tp",
            raw.algorithm.tp.as_deref().unwrap_or("1"),
            format!(
                "a prefix step is a whole number of cycles: with {packet_flits}-flit packets, a multiple of {}",
                1.0 / packet_flits as f64
            ),
        ));
    }
    Ok((tp, flits as u32))
}
