//! Values: whole numbers, fractions, switches, node lists, sizes, router files; waveform time.

use super::*;

/// A node list: `all`, or ids and ranges like `0-3,7,12`.
pub(super) fn parse_node_list(field: &str, v: &str, nodes: u64) -> Result<Option<Vec<u32>>, ConfigError> {
    if v.trim() == "all" {
        return Ok(None);
    }
    let allowed = || format!("all, or node ids below {nodes} as a list like 0-3,7,12");
    let mut out = Vec::new();
    for part in v.split(',') {
        let part = part.trim();
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (part, part),
        };
        let (a, b): (u64, u64) = match (a.parse(), b.parse()) {
            (Ok(a), Ok(b)) if a <= b && b < nodes => (a, b),
            _ => return Err(err(field, v, allowed())),
        };
        out.extend((a..=b).map(|x| x as u32));
    }
    out.sort_unstable();
    out.dedup();
    if out.is_empty() {
        return Err(err(field, v, allowed()));
    }
    Ok(Some(out))
}

pub(super) fn uint(field: &str, v: &str, min: u64, max: u64) -> Result<u64, ConfigError> {
    let allowed = || format!("a whole number from {min} to {max}");
    let n: u64 = v.trim().parse().map_err(|_| err(field, v, allowed()))?;
    if n < min || n > max {
        return Err(err(field, v, allowed()));
    }
    Ok(n)
}

/// A decimal number with at most three decimals, in thousandths, from `min` to `max`
/// thousandths (`0.8` is 800), described to the user as `what`.
pub(super) fn thousandths(field: &str, v: &str, min: u64, max: u64, what: &str) -> Result<u64, ConfigError> {
    let bad = || err(field, v, what);
    let t = v.trim();
    let (whole, frac) = t.split_once('.').unwrap_or((t, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (whole.is_empty() && frac.is_empty()) || !digits(whole) || !digits(frac) || frac.len() > 3 || whole.len() > 12 {
        return Err(bad());
    }
    let w: u64 = if whole.is_empty() { 0 } else { whole.parse().map_err(|_| bad())? };
    let f: u64 = if frac.is_empty() { 0 } else { format!("{frac:0<3}").parse().map_err(|_| bad())? };
    let n = w * 1000 + f;
    if n < min || n > max {
        return Err(bad());
    }
    Ok(n)
}

/// A number in `range`, described to the user as `what` (for example "a fraction in [0, 1]").
pub(super) fn float(field: &str, v: &str, range: std::ops::RangeInclusive<f64>, what: &str) -> Result<f64, ConfigError> {
    match v.trim().parse::<f64>() {
        Ok(x) if range.contains(&x) => Ok(x),
        _ => Err(err(field, v, what)),
    }
}

pub(crate) fn on_off(field: &str, v: &str) -> Result<bool, ConfigError> {
    match v {
        "on" | "true" | "yes" => Ok(true),
        "off" | "false" | "no" => Ok(false),
        _ => Err(err(field, v, "on or off")),
    }
}

pub(super) fn parse_dims(kind: &TopologyKind, v: &str) -> Result<Vec<u32>, ConfigError> {
    let allowed = match kind {
        TopologyKind::Hypercube => "the dimension d, like 6",
        TopologyKind::Linear => "the number of nodes, like 16",
        _ => "sizes separated by x, like 16x32",
    };
    let parts: Vec<&str> = v.split(['x', 'X']).collect();
    let mut dims = Vec::new();
    for p in parts {
        let n: i64 = p.trim().parse().map_err(|_| err("dims", v, allowed))?;
        if n <= 0 {
            return Err(err("dims", v, format!("{allowed}; every size must be at least 1")));
        }
        dims.push(u32::try_from(n).map_err(|_| err("dims", v, allowed))?);
    }
    if matches!(kind, TopologyKind::Hypercube | TopologyKind::Linear) && dims.len() != 1 {
        return Err(err("dims", v, format!("a {} takes one number: {allowed}", kind.name())));
    }
    Ok(dims)
}

pub(super) fn parse_node(field: &str, v: &str, topo: &fabric::Topology) -> Result<u32, ConfigError> {
    let n = topo.nodes() as u64;
    if v.contains(',') {
        let coords: Result<Vec<u32>, _> = v.split(',').map(|c| c.trim().parse::<u32>()).collect();
        let dims = topo.sizes.iter().map(|s| s.to_string()).collect::<Vec<_>>().join("x");
        let allowed = format!("{} coordinates, each below its size in {dims}", topo.ndims());
        if topo.kind == TopologyKind::Hypercube {
            return Err(err(field, v, format!("a hypercube node is given by its id, from 0 to {}", n - 1)));
        }
        let coords = coords.map_err(|_| err(field, v, &allowed))?;
        if coords.len() != topo.ndims() || coords.iter().zip(&topo.sizes).any(|(c, s)| c >= s) {
            return Err(err(field, v, allowed));
        }
        Ok(topo.node_at(&coords).0)
    } else {
        let id: i64 = v.trim().parse().map_err(|_| err(field, v, format!("a node id from 0 to {}, or coordinates like 1,5", n - 1)))?;
        if id < 0 || id as u64 >= n {
            return Err(err(field, v, format!("a node id from 0 to {} ({} nodes)", n - 1, n)));
        }
        Ok(id as u32)
    }
}

pub(super) fn read_router_file(path: &str) -> Result<Pipeline, ConfigError> {
    let text = crate::input::read_text(Path::new(path))
        .map_err(|e| err("router", path, format!("{}, or a router TOML file (cannot read it: {e})", Pipeline::PRESET_NAMES)))?;
    let _: toml::Table = text.parse().map_err(|e: toml::de::Error| toml_error("router", "malformed TOML: ", &text, path, &e))?;
    let f: RouterFile = toml::from_str(&text).map_err(|e| toml_error("router", "", &text, path, &e))?;
    let mut p = match f.preset.as_deref() {
        None => Pipeline::IDEAL,
        Some(name) => Pipeline::preset(name)
            .ok_or_else(|| err("router", format!("{path}: preset = {name}"), format!("one of {}", Pipeline::PRESET_NAMES)))?,
    };
    if let Some(v) = f.rc_delay {
        p.rc_delay = v;
    }
    if let Some(v) = f.va_delay {
        p.va_delay = v;
    }
    if let Some(v) = f.link_latency {
        if v == 0 {
            return Err(err("router", format!("{path}: link_latency = 0"), "at least 1 cycle"));
        }
        p.link_latency = v;
    }
    if let Some(v) = f.credit_delay {
        p.credit_delay = v;
    }
    if let Some(v) = f.inject_latency {
        p.inject_latency = v;
    }
    Ok(p)
}

/// Refuse a waveform whose times would pass 2^64 of its timescale unit before the last
/// cycle it may trace (the run's `max_cycles`, or `--trace-to`): the nearest clock below
/// with fewer digits that fits is named, and how far to trace with this one.
pub(super) fn check_waveform_time(out: &Outputs, max_cycles: u64) -> Result<(), ConfigError> {
    let last = out.trace_to.map_or(max_cycles, |t| t.min(max_cycles));
    let clock = out.clock_ps();
    let fits = |ps: u64| traces::sink::last_timed_cycle(ps) >= last;
    if !out.tracing() || fits(clock) {
        return Ok(());
    }
    // Rounded down to ever fewer digits; the first that fits is the largest of them.
    let shorter = (1..=9).map(|k| clock / 10u64.pow(k) * 10u64.pow(k)).find(|&ps| ps > 0 && fits(ps));
    let instead = shorter
        .map_or(String::new(), |ps| format!("the largest --clock-ns below it with fewer digits that fits is {}; or ", ps as f64 / 1000.0));
    Err(err(
        "clock-ns",
        out.clock_ns,
        format!(
            "waveform times to cycle {last} overflow the 64 bits of its time unit with this clock; {instead}trace to cycle {} at most (--trace-to or --max-cycles)",
            traces::sink::last_timed_cycle(clock)
        ),
    ))
}
