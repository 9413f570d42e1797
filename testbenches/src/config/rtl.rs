//! `--rtl` and its flags: which RTL router, at which nodes, checked or not; refused where
//! the RTL cannot stand in for the model's router, and Verilated here (so a router that
//! does not build is refused before the run).

use super::*;
use crate::rtl::RtlConfig;

/// The flags that need `--rtl`.
const NEEDS_RTL: [&str; 5] = ["rtl-top", "rtl-nodes", "rtl-compare", "rtl-window", "rtl-adapter"];

/// The RTL routers `raw` asks for in the run `cfg` (resolved but for them), built. A
/// waveform traces the model's routers only (the RTL's own signals are Verilator's to
/// trace): every node but the RTL's unless `--trace-nodes` says which.
/// `given`: the keys of `raw` by name.
pub(super) fn resolve(raw: &Raw, given: &Given, cfg: &mut Config) -> Result<Option<RtlConfig>, ConfigError> {
    let Some(path) = raw.rtl.rtl.as_deref() else {
        if let Some((f, v)) = NEEDS_RTL.iter().find_map(|f| Some((f, given.get(*f)?))) {
            return Err(err(f, v, "only applies with --rtl FILE (a router's SystemVerilog, e.g. rtl/router.sv)"));
        }
        return Ok(None);
    };
    if path.trim().is_empty() {
        return Err(err("rtl", path, "the router's top SystemVerilog file, e.g. rtl/router.sv"));
    }
    // What the RTL implements, or what the co-simulation can carry (docs/rtl.md).
    if cfg.topology == TopologyKind::Torus {
        return Err(err(
            "topology",
            "torus",
            "mesh, linear or hypercube with --rtl: the RTL routes by dimension order without the torus's dateline VC classes",
        ));
    }
    if cfg.pipeline != Pipeline::REALISTIC {
        return Err(err("router", &cfg.router, "realistic with --rtl: the RTL router keeps the realistic preset's timing (docs/rtl.md)"));
    }
    if cfg.arbiter != ArbiterPolicy::RoundRobin {
        return Err(err(
            "arbiter",
            raw.router.arbiter.as_deref().unwrap_or(""),
            "round-robin with --rtl: the RTL router's arbiters are round-robin",
        ));
    }
    if cfg.va_policy != VaPolicy::RoundRobin {
        return Err(err(
            "va-policy",
            raw.router.va_policy.as_deref().unwrap_or(""),
            "round-robin with --rtl: the RTL router offers its free VCs round-robin",
        ));
    }
    if cfg.nu != 0 {
        return Err(err("nu", cfg.nu, "0 with --rtl: the RTL router's links are one flit wide"));
    }
    if cfg.workload.replicates() {
        return Err(err("forwarding", "router", "node with --rtl: replicating packets in the router is the model's only"));
    }
    // The partial multinode broadcasts' phases (and the dynamic scheme's, built on them)
    // are timed to the model router's latency to the cycle; an RTL router hands what it
    // ejects to its node a cycle later, and the phases overrun.
    if let Workload::Algorithm { name, pmnb, dynamic, .. } = &cfg.workload
        && (pmnb.is_some() || dynamic.is_some())
    {
        return Err(err(
            "algorithm",
            name,
            "one not timed to the model router's latency with --rtl: its phases are timed to the cycle, and an RTL router hands what it ejects to its node a cycle later (docs/rtl.md)",
        ));
    }
    if !cfg.fault_list.is_empty() {
        return Err(err("fault", cfg.faults.join("; "), "none with --rtl: faults act on the model's links and routers"));
    }
    if cfg.threads > 1 {
        return Err(err("threads", cfg.threads, "1 with --rtl: the RTL routers run beside one thread of the model"));
    }
    let nodes = match raw.rtl.rtl_nodes.as_deref() {
        Some(v) => parse_node_list("rtl-nodes", v, cfg.nodes)?.unwrap_or_else(|| (0..cfg.nodes as u32).collect()),
        None => (0..cfg.nodes as u32).collect(),
    };
    if cfg.outputs.tracing() {
        let field = if cfg.outputs.vcd.is_some() { "vcd" } else { "fst" };
        match &cfg.outputs.trace_nodes {
            Some(t) => {
                if let Some(x) = t.iter().find(|x| nodes.binary_search(x).is_ok()) {
                    return Err(err(
                        "trace-nodes",
                        raw.outputs.trace_nodes.as_deref().unwrap_or(""),
                        format!(
                            "nodes whose router is the model's with --rtl (node {x} is the RTL's: its signals are in Verilator's own waveform)"
                        ),
                    ));
                }
            }
            None => {
                let model: Vec<u32> = (0..cfg.nodes as u32).filter(|x| nodes.binary_search(x).is_err()).collect();
                if model.is_empty() {
                    return Err(err(
                        field,
                        cfg.outputs.vcd.as_ref().or(cfg.outputs.fst.as_ref()).unwrap(),
                        "a waveform of the model's routers, and with --rtl at every node there is none: give --rtl-nodes fewer nodes",
                    ));
                }
                cfg.outputs.trace_nodes = Some(model);
            }
        }
    }
    let file = Path::new(path);
    let adapter = raw.rtl.rtl_adapter.as_deref().map(crate::rtl::adapter::load).transpose()?;
    let top = match (raw.rtl.rtl_top.as_deref(), &adapter) {
        (Some(t), Some(a)) => {
            return Err(err("rtl-top", t, format!("not with --rtl-adapter, whose module key names the router ({})", a.module)));
        }
        (None, Some(a)) => a.module.clone(),
        (t, None) => match t {
            Some(t) if is_identifier(t) => t.to_string(),
            Some(t) => return Err(err("rtl-top", t, "a module name (letters, digits, _ and $, not starting with a digit or $)")),
            None => match file.file_stem().and_then(|s| s.to_str()).filter(|s| is_identifier(s)) {
                Some(s) => s.to_string(),
                None => return Err(err("rtl", path, "a file named after its top module, or give the module with --rtl-top")),
            },
        },
    };
    let compare = raw.rtl.rtl_compare.as_deref().map(|v| on_off("rtl-compare", v)).transpose()?.unwrap_or(false);
    let window = raw.rtl.rtl_window.as_deref().unwrap_or("rtl-mismatch.vcd").to_string();
    if raw.rtl.rtl_window.as_deref().is_some() && !compare {
        return Err(err("rtl-window", &window, "only applies with --rtl-compare (the waveform around a difference from the model)"));
    }
    if !window.ends_with(".vcd") {
        return Err(err("rtl-window", &window, "a path ending in .vcd (the GTKWave save file goes beside it, .gtkw)"));
    }
    let spec = cfg.spec();
    let program = crate::rtl::build(path, &top, &spec.topology(), &spec.router_params(), adapter.as_ref())?;
    Ok(Some(RtlConfig { path: path.to_string(), top, nodes, compare, mismatch_vcd: window, program }))
}

/// Is `s` a SystemVerilog simple identifier?
fn is_identifier(s: &str) -> bool {
    let mut c = s.chars();
    c.next().is_some_and(|f| f.is_ascii_alphabetic() || f == '_') && c.all(|x| x.is_ascii_alphanumeric() || x == '_' || x == '$')
}
