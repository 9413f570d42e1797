//! The Seidel 1993 cost model on the command line: `--cost-model delta` (Table II),
//! `--a`, `--b`, `--rho` (µs per byte, µs, µs per byte), `--nu`, `--message-bytes`, `--fill`.
//!
//! It sets the fabric the paper assumes (one-port NICs, wormhole, 2^ν VCs per link, the
//! ideal router: one cycle per hop), a flit of [`model::flit_bytes`] bytes, a cycle of
//! a × flit µs and a start-up of round(b / cycle) cycles, and checks the sizes against what
//! each algorithm needs. The fields it sets itself may not be given.

use crate::config::{ConfigError, Given, Raw};
use fabric::TopologyKind;
use fabric::algorithms::seidel::{Alg, Fill, Setup, model};
use router::NodeId;
use serde::Serialize;

/// The fields only the Seidel algorithms take.
pub const FIELDS: &[&str] = &["cost-model", "a", "b", "rho", "message-bytes", "fill"];

/// Fields the cost model sets (a user value would be silently overridden).
const SET_BY_MODEL: &[&str] = &[
    "switching",
    "ports",
    "packet-flits",
    "buffer-flits",
    "inject-buffer-flits",
    "vcs",
    "startup-cycles",
    "copy-cycles-per-flit",
    "router",
];

/// The resolved cost model of a run (echoed in the JSON config).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CostConfig {
    /// "delta" or "custom" (any of --a, --b, --rho given).
    pub model: String,
    pub a_us_per_byte: f64,
    pub abar_us_per_byte: f64,
    pub b_us: f64,
    pub rho_us_per_byte: f64,
    pub message_bytes: u64,
    pub flit_bytes: u64,
    /// One cycle: a × flit_bytes.
    pub cycle_us: f64,
    pub startup_cycles: u64,
    /// RH's permutation at the source, mρ, in cycles.
    pub permute_cycles: u64,
    pub fill: Fill,
    /// Companions in both dimensions of a mesh: the 2 × 2 BST (else the ST), §5.2's minimum.
    pub companions_bst: bool,
    #[serde(skip)]
    pub alg: Alg,
}

impl CostConfig {
    pub fn costs(&self) -> model::Costs {
        model::Costs { a: self.a_us_per_byte, b: self.b_us, rho: self.rho_us_per_byte }
    }

    pub fn message_flits(&self) -> f64 {
        self.message_bytes as f64 / self.flit_bytes as f64
    }

    /// The plan's setup for a topology and source.
    pub fn setup(&self, kind: TopologyKind, sizes: &[u32], nu: u8, root: u32) -> Setup {
        Setup {
            alg: self.alg,
            kind,
            sizes: sizes.to_vec(),
            nu: nu as u32,
            root: NodeId(root),
            fill: self.fill,
            message_flits: self.message_flits(),
            startup_cycles: self.startup_cycles,
            permute_cycles: self.permute_cycles,
            companions_bst: self.companions_bst,
        }
    }

    /// The model's cost of this run, µs (Table I, §5 for fills).
    pub fn model_us(&self, kind: &TopologyKind, sizes: &[u32], nu: u8) -> f64 {
        model::model_cost(self.alg, *kind == TopologyKind::Linear, sizes, self.fill, nu as u32, self.message_bytes as f64, self.costs())
    }
}

fn err(field: &str, value: impl std::fmt::Display, allowed: impl std::fmt::Display) -> ConfigError {
    ConfigError::new(field, value, allowed)
}

/// The constants' ranges: a from 1e-6 µs/byte (1 TB/s) to 1000 µs/byte (1 KB/s), b up to
/// a second, ρ up to 1000 µs/byte.
const A_RANGE: (f64, f64) = (1e-6, 1e3);
const B_RANGE: (f64, f64) = (0.0, 1e6);
const RHO_RANGE: (f64, f64) = (0.0, 1e3);

/// The most cycles a start-up or RH's permutation may take (b / cycle, mρ / cycle): runs
/// stay well inside the watchdog's and the cycle limit's 2^40.
const MAX_COST_CYCLES: u64 = 1 << 32;

/// A constant given on the command line (or its default), within `range`.
fn number(given: &Given, field: &str, default: f64, range: (f64, f64), what: &str) -> Result<f64, ConfigError> {
    let Some(v) = given.get(field) else { return Ok(default) };
    match v.trim().parse::<f64>() {
        Ok(x) if (range.0..=range.1).contains(&x) => Ok(x),
        _ => Err(err(field, v, format!("{what}, a number from {} to {}", short(range.0), short(range.1)))),
    }
}

/// What a constant costs in cycles: `value` (µs, or µs per byte times `per` bytes) over a
/// cycle of a × flit µs. Above [`MAX_COST_CYCLES`] the error names the field given, `field`
/// or else a, and how far `field` may go with this a.
fn cycles_of(given: &Given, field: &str, value: f64, per: f64, a: f64, flit: u64, what: &str) -> Result<u64, ConfigError> {
    let cycle = a * flit as f64;
    let c = (value * per / cycle).round();
    if c <= MAX_COST_CYCLES as f64 {
        return Ok(c as u64);
    }
    let most = MAX_COST_CYCLES as f64 * cycle / per;
    let blame = if given.contains_key(field) { field } else { "a" };
    Err(err(
        blame,
        given.get(blame).map_or("", String::as_str),
        format!(
            "{what} would take {} cycles of a x flit = {} us/byte x {flit} bytes, at most {MAX_COST_CYCLES} are simulated: {field} up to {} with this a",
            short(c),
            short(a),
            short(most)
        ),
    ))
}

/// A number in four significant digits, in exponent form when very large or small.
fn short(x: f64) -> String {
    let trim = |s: &str| s.trim_end_matches('0').trim_end_matches('.').to_string();
    if x == 0.0 || (1e-3..1e6).contains(&x.abs()) {
        trim(&format!("{x:.4}"))
    } else {
        let s = format!("{x:.3e}");
        let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
        format!("{}e{exp}", trim(mantissa))
    }
}

/// Before resolution: for a Seidel algorithm, check the flags and fill in the fabric the
/// model implies; for any other, refuse the model's flags.
pub fn prepare(raw: &Raw) -> Result<(Raw, Option<CostConfig>), ConfigError> {
    let given = raw.given();
    let alg = raw.workload.algorithm.as_deref().and_then(Alg::parse);
    let Some(alg) = alg.filter(|_| raw.workload.traffic.as_deref().is_none()) else {
        for f in FIELDS {
            if let Some(v) = given.get(*f) {
                return Err(err(f, v, "only applies to the Seidel 1993 broadcasts (--algorithm st, bst, rh, st-simple, bst-simple)"));
            }
        }
        return Ok((raw.clone(), None));
    };
    // The paper's algorithms are defined on linear arrays and meshes: say so before the
    // defaults of another topology (a torus's dateline VCs) ask for flags the model sets.
    let info = fabric::algorithms::find(alg.name()).expect("every Seidel algorithm is listed");
    let allowed = info.topologies.iter().map(|t| t.name()).collect::<Vec<_>>().join(" or ");
    let plural = |t: &TopologyKind| match t {
        TopologyKind::Linear => "linear arrays",
        TopologyKind::Mesh => "meshes",
        _ => t.name(),
    };
    let defined = info.topologies.iter().map(plural).collect::<Vec<_>>().join(" and ");
    let fits = |t: &str| TopologyKind::parse(t).is_some_and(|k| info.topologies.contains(&k));
    match raw.topology.topology.as_deref() {
        Some(t) if fits(t) => {}
        given => {
            return Err(err(
                "topology",
                given.unwrap_or("hypercube (the default)"),
                format!("{} (Seidel 1993) is defined on {defined} only: --topology {allowed}", alg.name()),
            ));
        }
    }
    for f in SET_BY_MODEL {
        if let Some(v) = given.get(*f) {
            return Err(err(
                f,
                v,
                format!(
                    "set by the cost model for {} (one-port, wormhole, 2^nu VCs, ideal router); change --a, --b, --rho, --nu or --message-bytes instead",
                    alg.name()
                ),
            ));
        }
    }
    let model = match raw.algorithm.cost_model.as_deref() {
        None | Some("delta") => "delta",
        Some(v) => return Err(err("cost-model", v, "delta (Table II: a = 0.08 us/byte, b = 75 us, rho = 0.01 us/byte, nu = 0)")),
    };
    let d = model::DELTA;
    let a = number(&given, "a", d.a, A_RANGE, "the node-to-network cost in us per byte")?;
    let b = number(&given, "b", d.b, B_RANGE, "the start-up in us")?;
    let rho = number(&given, "rho", d.rho, RHO_RANGE, "the permutation cost in us per byte")?;
    if let Some(v) = raw.algorithm.rho.as_deref()
        && alg != Alg::Rh
    {
        return Err(err("rho", v, format!("the permutation cost of rh only ({} does not permute its message)", alg.name())));
    }
    let custom = ["a", "b", "rho"].iter().any(|f| given.contains_key(*f));
    let m = match raw.algorithm.message_bytes.as_deref() {
        None => 1024,
        Some(v) => match v.trim().parse::<u64>() {
            Ok(x) if (1..=1 << 24).contains(&x) => x,
            _ => return Err(err("message-bytes", v, "the message length in bytes, from 1 to 16777216")),
        },
    };
    let fill = match raw.algorithm.fill.as_deref() {
        None => Fill::None,
        Some(v) => Fill::parse(v).ok_or_else(|| err("fill", v, format!("one of {}", Fill::NAMES)))?,
    };
    let nu: u32 = match raw.router.nu.as_deref() {
        None => 0,
        Some(v) => match v.trim().parse::<u32>() {
            Ok(x) if x <= 4 => x,
            _ => return Err(err("nu", v, "0 to 4 for the Seidel broadcasts (2^nu VCs per link, at most 16)")),
        },
    };
    let flit = model::flit_bytes(m);
    let cycle = a * flit as f64;
    let startup = cycles_of(&given, "b", b, 1.0, a, flit, "the start-up b")?;
    let permute = if alg == Alg::Rh { cycles_of(&given, "rho", rho, m as f64, a, flit, "the permutation m rho")? } else { 0 };
    let mflits = (m as f64 / flit as f64).ceil() as u64;
    let mut out = raw.clone();
    out.router.switching = Some("wh".into());
    out.router.ports = Some("one".into());
    out.router.vcs = Some((1u32 << nu).to_string());
    out.router.buffer_flits = Some((4u32 << nu).to_string());
    out.workload.packet_flits = Some(mflits.to_string());
    out.workload.startup_cycles = Some(startup.to_string());
    // A worm may wait behind a whole message (and its start-up) for a link or a port.
    out.control.watchdog.get_or_insert_with(|| (10_000 + 4 * (startup + mflits)).to_string());
    let cfg = CostConfig {
        model: if custom { "custom".into() } else { model.into() },
        a_us_per_byte: a,
        abar_us_per_byte: a / (1u64 << nu) as f64,
        b_us: b,
        rho_us_per_byte: rho,
        message_bytes: m,
        flit_bytes: flit,
        cycle_us: cycle,
        startup_cycles: startup,
        permute_cycles: permute,
        fill,
        companions_bst: model::companions_2x2(m as f64, model::Costs { a, b, rho }).0,
        alg,
    };
    Ok((out, Some(cfg)))
}

/// After resolution: the sizes, the fill and the source must suit the algorithm.
pub fn check(cfg: &CostConfig, kind: &TopologyKind, sizes: &[u32], nu: u8, root: u32) -> Result<(), ConfigError> {
    let linear = *kind == TopologyKind::Linear;
    let dims = sizes.iter().map(|s| s.to_string()).collect::<Vec<_>>().join("x");
    if !linear && sizes.len() != 2 {
        return Err(err("dims", dims, "the Seidel broadcasts run on linear arrays and 2-D meshes, like 16x32"));
    }
    let pow2 = sizes.iter().all(|s| s.is_power_of_two());
    match cfg.fill {
        Fill::None if !pow2 => {
            return Err(err("dims", dims, "sides must be powers of two; or --fill companions (any algorithm) or --fill virtual (sec. 5)"));
        }
        Fill::Virtual | Fill::Companions if pow2 => {
            return Err(err("fill", fill_name(cfg.fill), format!("every side of {dims} is a power of two: there is nothing to fill")));
        }
        Fill::Virtual if !model::virtual_allowed(cfg.alg, linear, nu as u32) => {
            return Err(err(
                "fill",
                "virtual",
                "sec. 5.1 allows virtual nodes only for the linear st and bst and the mesh st-simple and bst-simple, with nu = 0; use --fill companions",
            ));
        }
        _ => {}
    }
    let e: Vec<u32> = sizes
        .iter()
        .map(|&n| match cfg.fill {
            Fill::Virtual => n.next_power_of_two().trailing_zeros(),
            _ => 31 - n.leading_zeros(),
        })
        .collect();
    if let Some(what) = model::size_limits(cfg.alg, linear, &e, nu as u32) {
        return Err(err("dims", dims, format!("{} with nu = {nu} needs {what}", cfg.alg.name())));
    }
    if cfg.fill == Fill::Companions {
        let n0 = sizes[0];
        let coords = if linear { vec![root] } else { vec![root % n0, root / n0] };
        if coords.iter().zip(sizes).any(|(&c, &n)| fabric::algorithms::seidel::plan::logical_coord(n, Fill::Companions, c).is_none()) {
            return Err(err(
                "root",
                root,
                "with --fill companions the source must be a full-size node, not a companion (an odd node among the first 2c)",
            ));
        }
    }
    Ok(())
}

fn fill_name(f: Fill) -> &'static str {
    match f {
        Fill::None => "none",
        Fill::Virtual => "virtual",
        Fill::Companions => "companions",
    }
}

/// The JSON fields a Seidel run adds.
#[derive(Clone, Debug, Serialize)]
pub struct CostReport {
    /// The simulated cost: the last delivery's cycle times the cycle.
    pub cost_us: f64,
    /// Table I's formula for this algorithm (§5 for fills), with the run's constants.
    pub model_us: f64,
    /// cost_us / model_us.
    pub vs_model: f64,
    /// Steps of the paper's schedule.
    pub steps: u32,
}
