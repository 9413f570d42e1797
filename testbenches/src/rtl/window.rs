//! The waveform of a caught difference: the cycles around it at its node, the inputs both
//! routers took and what each put on its outputs, side by side in one GTKWave save file.
//!
//! Scopes `top.node<N>.inputs.p<K>` (what the fabric drove: `in_*` and `cr_in_*`),
//! `top.node<N>.model.p<K>` and `top.node<N>.rtl.p<K>` (`out_*` and `cr_out_*`), each value
//! at the cycle the port shows it: an output decided in the model's cycle t is on the port in
//! t + 1. `top.mismatch` is high in the cycle the differing output is on the port. The save
//! file opens with the differing port's signals first, model above RTL, a marker on it.

use fabric::{Mismatch, PortFlit, Ports, PortsWindow};
use std::fmt::Write as _;
use std::path::Path;
use traces::{VcdSink, WaveSink};

/// The save file beside the window's dump `vcd`: the same name ending in `.gtkw`.
pub fn gtkw_path(vcd: &str) -> String {
    Path::new(vcd).with_extension("gtkw").display().to_string()
}

/// The clock period the window is drawn at, ps.
const CLOCK_PS: u64 = 1000;

/// One port's signals in one scope: valid, vc, packet, seq, head, tail, then the credit's
/// valid and vc. Names as the reference router's ports (docs/rtl.md).
const FIELDS: [(&str, u32); 8] =
    [("valid", 1), ("vc", 8), ("packet", 32), ("seq", 16), ("head", 1), ("tail", 1), ("cr_valid", 1), ("cr_vc", 8)];

/// How GTKWave names a `width`-bit vector after its name: `[width-1:0]` (nothing for a bit).
fn range(width: u32) -> String {
    if width > 1 { format!("[{}:0]", width - 1) } else { String::new() }
}

/// A field's signal name at an input (`in_*`, `cr_in_*`) or an output (`out_*`,
/// `cr_out_*`), as the reference router names its ports.
fn signal(input: bool, field: &str) -> String {
    let side = if input { "in" } else { "out" };
    match field.strip_prefix("cr_") {
        Some(f) => format!("cr_{side}_{f}"),
        None => format!("{side}_{field}"),
    }
}

/// The values of one port's signals in `ports` (nothing there: all 0).
fn values(ports: &Ports, port: usize) -> [u64; 8] {
    let mut v = [0u64; 8];
    if let Some(PortFlit { vc, flit, .. }) = ports.flits.iter().find(|f| f.port as usize == port) {
        v[..6].copy_from_slice(&[1, *vc as u64, flit.packet as u64, flit.seq as u64, flit.head as u64, flit.tail as u64]);
    }
    if let Some(k) = ports.credits.iter().find(|k| k.port as usize == port) {
        v[6] = 1;
        v[7] = k.vc as u64;
    }
    v
}

/// Write the window of `m` into the dump `vcd`, for a router of `ports` ports.
pub fn write(window: &PortsWindow, m: &Mismatch, ports: usize, vcd: &Path) -> std::io::Result<()> {
    let mut sink = VcdSink::create(vcd, CLOCK_PS, &title(m))?;
    let scopes = ["inputs", "model", "rtl"];
    sink.scope("top")?;
    let clk = sink.var("clk", 1)?;
    let marker = sink.var("mismatch", 1)?;
    let node = format!("node{}", m.node.0);
    sink.scope(&node)?;
    // vars[scope][port][field]
    let mut vars = vec![vec![[0usize; 8]; ports]; 3];
    for (s, scope) in scopes.iter().enumerate() {
        sink.scope(scope)?;
        for (p, port_vars) in vars[s].iter_mut().enumerate() {
            sink.scope(&format!("p{p}"))?;
            for (k, (name, width)) in FIELDS.iter().enumerate() {
                let name = signal(s == 0, name);
                port_vars[k] = sink.var(&name, *width)?;
            }
            sink.upscope()?;
        }
        sink.upscope()?;
    }
    sink.upscope()?;
    sink.upscope()?;
    sink.end_definitions()?;
    // Each cycle's inputs at its own time, outputs a cycle later (as the ports show them).
    let first = window.cycles.first().map_or(0, |c| c.cycle);
    let last = window.cycles.last().map_or(0, |c| c.cycle) + 1;
    let at = |t: u64| window.cycles.iter().find(|c| c.cycle == t);
    let empty = Ports::default();
    for t in first..=last {
        sink.time(2 * t)?;
        sink.change(clk, 1)?;
        sink.change(marker, (t == m.cycle + 1) as u64)?;
        let inputs = at(t).map_or(&empty, |c| &c.inputs);
        let (model, rtl) = at(t.wrapping_sub(1)).map_or((&empty, &empty), |c| (&c.model, &c.rtl));
        for (s, ports_of) in [inputs, model, rtl].into_iter().enumerate() {
            for (p, port_vars) in vars[s].iter().enumerate() {
                for (var, x) in port_vars.iter().zip(values(ports_of, p)) {
                    sink.change(*var, x)?;
                }
            }
        }
        sink.time(2 * t + 1)?;
        sink.change(clk, 0)?;
    }
    sink.time(2 * last + 2)?;
    Box::new(sink).finish()
}

/// The title of the window's waveform.
fn title(m: &Mismatch) -> String {
    format!("flitwave --rtl-compare: {m}")
}

/// The save file `save` of the window's dump `vcd`: the clock and the marker, the
/// differing port's outputs (model above RTL, field by field) and inputs, then every other
/// port likewise in closed groups.
pub fn save_file(vcd: &Path, save: &Path, window: &PortsWindow, m: &Mismatch, ports: usize) -> String {
    let first = window.cycles.first().map_or(0, |c| c.cycle);
    let title = title(m);
    let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    // Time units of the dump per half cycle (VcdSink's timescale for CLOCK_PS).
    let half = traces::sink::half_period_fs(CLOCK_PS).1;
    let mut s = String::new();
    writeln!(s, "[*] {title}").unwrap();
    writeln!(s, "[dumpfile] \"{}\"", abs(vcd).display()).unwrap();
    writeln!(s, "[savefile] \"{}\"", abs(save).display()).unwrap();
    writeln!(s, "[timestart] {}", 2 * first * half).unwrap();
    writeln!(s, "[size] 1600 1000").unwrap();
    writeln!(s, "[sst_width] 260").unwrap();
    writeln!(s, "[signals_width] 380").unwrap();
    // Zoom, then the primary marker at the differing output.
    writeln!(s, "*-4.000000 {} -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1", 2 * (m.cycle + 1) * half)
        .unwrap();
    writeln!(s, "[treeopen] top.").unwrap();
    let node = format!("node{}", m.node.0);
    writeln!(s, "@28\ntop.clk\ntop.mismatch").unwrap();
    let mut order: Vec<usize> = vec![m.port];
    order.extend((0..ports).filter(|&p| p != m.port));
    for (i, &p) in order.iter().enumerate() {
        let closed = if i == 0 { 0 } else { 1 << 22 };
        let group = format!("-port {p}{}", if i == 0 { format!(": {} differs here", m.what) } else { String::new() });
        writeln!(s, "@{:x}\n{group}", (1 << 9) | (1 << 23) | closed).unwrap();
        for (name, width) in FIELDS {
            let out = signal(false, name);
            writeln!(s, "@{}", if width == 1 { "28" } else { "24" }).unwrap();
            let bits = range(width);
            writeln!(s, "+{{model {out}}} top.{node}.model.p{p}.{out}{bits}").unwrap();
            writeln!(s, "+{{rtl   {out}}} top.{node}.rtl.p{p}.{out}{bits}").unwrap();
        }
        for (name, width) in FIELDS {
            let inp = signal(true, name);
            writeln!(s, "@{}", if width == 1 { "28" } else { "24" }).unwrap();
            writeln!(s, "+{{input {inp}}} top.{node}.inputs.p{p}.{inp}{}", range(width)).unwrap();
        }
        let end = if i == 0 { 0 } else { (1 << 22) | (1 << 12) };
        writeln!(s, "@{:x}\n{group}", (1 << 9) | (1 << 24) | end).unwrap();
    }
    s
}
