//! Running a configuration: on one thread or split, with its progress line, its waveforms
//! and statistics files, and the size a waveform will have.

use super::*;

/// Run a configuration to the end.
pub fn run(cfg: &Config) -> Report {
    if cfg.threads > 1 {
        if let Err(e) = check_threads(cfg) {
            panic!("{e}");
        }
        let (f, ending, wall) = run_split(cfg, false, build);
        return report(cfg, &f, program(cfg).1, ending, wall);
    }
    let (mut f, bounds) = build(cfg);
    if let Some(r) = &cfg.rtl {
        crate::rtl::attach(r, &mut f);
    }
    let start = Instant::now();
    let ending = f.run();
    let wall = start.elapsed().as_secs_f64();
    report(cfg, &f, bounds, ending, wall)
}

/// Run a configuration split between `cfg.threads` threads: the fabric joined after the
/// run, how it ended and the wall time (each thread builds its part, in the time). With
/// `progress`, the progress line of [`run_fabric`].
pub(super) fn run_split(cfg: &Config, progress: bool, build: fn(&Config) -> (Fabric, Bounds)) -> (Fabric, Ending, f64) {
    let start = Instant::now();
    let (f, ending) = if progress {
        let mut line = ProgressLine::new(cfg);
        let every = std::time::Duration::from_millis(200);
        let r = fabric::kernel::split::run_split_watched(
            cfg.threads as usize,
            || build(cfg).0,
            every,
            |p| line.show(p.now, p.deliveries, p.expected),
        );
        line.clear();
        r
    } else {
        fabric::kernel::split::run_split(cfg.threads as usize, || build(cfg).0)
    };
    (f, ending, start.elapsed().as_secs_f64())
}

/// Run `f` to the end; with `progress`, a status line on standard error for runs that take
/// more than a second (redrawn five times a second, cleared at the end): deliveries so far
/// against those expected so far (for traffic, cycles against `--cycles`, then the drain),
/// the simulated cycle and the simulation rate.
pub(super) fn run_fabric(cfg: &Config, f: &mut Fabric, progress: bool) -> Ending {
    if !progress {
        return f.run();
    }
    let mut line = ProgressLine::new(cfg);
    let ending = f.run_watched(std::time::Duration::from_millis(200), |f| {
        let c = f.scoreboard.counts();
        line.show(f.now, c.deliveries, c.expected);
    });
    line.clear();
    ending
}

/// The progress line of a run.
struct ProgressLine {
    start: Instant,
    traffic_cycles: Option<u64>,
    bar: Option<indicatif::ProgressBar>,
}

impl ProgressLine {
    fn new(cfg: &Config) -> ProgressLine {
        let traffic_cycles = match cfg.workload {
            Workload::Traffic { cycles, .. } => Some(cycles),
            _ => None,
        };
        ProgressLine { start: Instant::now(), traffic_cycles, bar: None }
    }

    /// The run is at cycle `now` with `deliveries` of the `expected` so far made.
    fn show(&mut self, now: u64, deliveries: u64, expected: u64) {
        let elapsed = self.start.elapsed();
        if elapsed.as_secs_f64() < 1.0 {
            return;
        }
        let rate = now as f64 / elapsed.as_secs_f64();
        let (pos, len, msg) = match self.traffic_cycles {
            Some(cycles) if now < cycles => (now, cycles, format!("cycles, {deliveries} deliveries, {rate:.0} cycles/s")),
            _ => {
                let phase = if self.traffic_cycles.is_some() { "draining, " } else { "" };
                (deliveries, expected, format!("deliveries, {phase}cycle {now}, {rate:.0} cycles/s"))
            }
        };
        match &self.bar {
            Some(b) => {
                b.set_length(len);
                b.set_message(msg);
                b.set_position(pos);
            }
            None => {
                let style = indicatif::ProgressStyle::with_template("  [{elapsed_precise}] {wide_bar} {pos}/{len} {msg}")
                    .expect("a valid template");
                let b = indicatif::ProgressBar::new(len).with_style(style).with_elapsed(elapsed).with_message(msg).with_position(pos);
                b.tick();
                self.bar = Some(b);
            }
        }
    }

    fn clear(self) {
        if let Some(b) = self.bar {
            b.finish_and_clear();
        }
    }
}

/// One waveform file of a run.
#[derive(Clone, Debug, Serialize)]
pub struct WaveformReport {
    pub path: String,
    /// Estimated before the run from the expected link traffic ([`estimate_waveform_bytes`]).
    pub estimated_bytes: u64,
    pub bytes: u64,
    pub limit_bytes: Option<u64>,
    /// `--trace-limit` reached: nothing was written from this cycle on (the run went on).
    pub stopped_at_cycle: Option<u64>,
}

/// VCD bytes per flit crossing a link in a full trace (its link's, credits', buffers' and
/// allocators' value changes), per traced cycle (the clock), and per signal (the header);
/// an FST takes about a fifth of that. Measured on meshes and hypercubes under
/// traffic and broadcasts (docs/performance.md).
const VCD_BYTES_PER_FLIT_HOP: f64 = 80.0;
const VCD_BYTES_PER_CYCLE: f64 = 24.0;
const VCD_BYTES_PER_SIGNAL: f64 = 48.0;
const FST_SHARE: f64 = 0.2;

/// A waveform's size estimated before the run: the clock over the traced cycles, and the
/// value changes of the flits expected over the traced nodes' links in the traced window
/// (traffic: offered flits × mean distance; algorithms: the paper's transmissions, or one
/// per node, times the packet's flits).
pub fn estimate_waveform_bytes(cfg: &Config, f: &Fabric, bounds: &Bounds, signals: usize, fst: bool) -> u64 {
    let topo = &f.topo;
    let n = topo.nodes();
    let flits = cfg.packet_flits as f64;
    let (cycles, hops) = match &cfg.workload {
        Workload::Traffic { offered_flits, cycles, .. } => {
            // Mean distance over a sample of pairs.
            let step = |k: usize| (n / k).max(1);
            let (mut sum, mut pairs) = (0u64, 0u64);
            for a in (0..n).step_by(step(64)) {
                for b in (0..n).step_by(step(256)) {
                    sum += topo.distance(NodeId(a as u32), NodeId(b as u32)) as u64;
                    pairs += 1;
                }
            }
            let mean = sum as f64 / pairs.max(1) as f64;
            let drain = topo.diameter() as f64 + 2.0 * flits;
            (*cycles as f64 + drain, offered_flits * n as f64 * *cycles as f64 * mean)
        }
        Workload::Algorithm { .. } => {
            let slots = bounds.paper.or(bounds.lower).unwrap_or(topo.diameter() as f64);
            let transmissions = bounds.transmissions.map_or(n.saturating_sub(1) as f64, |t| t as f64);
            (slots * flits + topo.diameter() as f64 + 2.0 * flits, transmissions * flits)
        }
    };
    let out = &cfg.outputs;
    let traced = out.trace_nodes.as_ref().map_or(n, |v| v.len()) as f64 / n as f64;
    let (from, to) = (out.trace_from as f64, out.trace_to.map_or(f64::INFINITY, |t| t as f64 + 1.0));
    let window = (to.min(cycles) - from).max(0.0);
    let share = if cycles > 0.0 { window / cycles } else { 0.0 };
    let changes = VCD_BYTES_PER_CYCLE * window + VCD_BYTES_PER_FLIT_HOP * hops * traced * share;
    let vcd = VCD_BYTES_PER_SIGNAL * signals as f64 + changes;
    let bytes = if fst { vcd * FST_SHARE } else { vcd };
    bytes as u64
}

/// "12.3 MB" (10^6 bytes), "850 kB", "900 bytes".
pub fn megabytes(bytes: u64) -> String {
    match bytes {
        0..1_000 => format!("{bytes} bytes"),
        1_000..1_000_000 => format!("{:.0} kB", bytes as f64 / 1e3),
        _ => format!("{:.1} MB", bytes as f64 / 1e6),
    }
}

/// The outputs of a run (`json`: `--json`'s path, if any) as `(field, path)`, the save
/// file's translate filters included ([`crate::cli::RunArgs::check_outputs`]).
pub fn output_paths<'a>(json: Option<&'a str>, out: &'a crate::config::Outputs) -> Vec<(&'a str, String)> {
    let side = out.gtkw.iter().flat_map(|g| traces::gtkw::side_files(Path::new(g))).map(|p| ("gtkw", p.display().to_string()));
    let named = [("json", json), ("vcd", out.vcd.as_deref()), ("fst", out.fst.as_deref()), ("gtkw", out.gtkw.as_deref())];
    let mut v: Vec<(&str, String)> = named.into_iter().filter_map(|(f, p)| Some((f, p?.to_string()))).collect();
    v.extend(side);
    v.extend(out.stats_csv.as_deref().map(|p| ("stats-csv", p.to_string())));
    v
}

/// A run's report and its output files, written but not yet renamed into place
/// ([`crate::output::commit_all`]).
pub struct Ran {
    pub report: Report,
    pub outputs: Vec<Output>,
}

/// Begin the output `path` of `field`, if asked for.
pub(super) fn begin(field: &str, path: &Option<String>) -> Result<Option<Output>, ConfigError> {
    path.as_ref().map(|p| Output::begin(field, p)).transpose()
}

/// Run a configuration and write the waveforms, save file and statistics it asks for, each
/// to its temporary file (all begun before the run, so a bad path is refused before it).
/// With `progress`, a status line on standard error while a long run goes on.
pub fn run_with_outputs(cfg: &Config, progress: bool) -> Result<Ran, ConfigError> {
    let out = &cfg.outputs;
    check_threads(cfg)?;
    let mut csv = begin("stats-csv", &out.stats_csv)?;
    if cfg.threads > 1 {
        // No waveforms (checked with the configuration).
        let (f, ending, wall) = run_split(cfg, progress, build_stoppable);
        write_stats_csv(&f, &mut csv);
        return Ok(Ran { report: report(cfg, &f, program(cfg).1, ending, wall), outputs: csv.into_iter().collect() });
    }
    let (vcd, fst) = (begin("vcd", &out.vcd)?, begin("fst", &out.fst)?);
    let mut gtkw: Vec<Output> = match &out.gtkw {
        Some(g) => std::iter::once(std::path::PathBuf::from(g))
            .chain(traces::gtkw::side_files(Path::new(g)))
            .map(|p| Output::begin("gtkw", p))
            .collect::<Result<_, _>>()?,
        None => Vec::new(),
    };
    let (mut f, bounds) = build_stoppable(cfg);
    // The RTL routers, and the waveform of a difference from the model (begun now, kept
    // only if there is one).
    let mut rtl_window = Vec::new();
    if let Some(r) = &cfg.rtl {
        crate::rtl::attach(r, &mut f);
        if r.compare {
            rtl_window = vec![
                Output::begin("rtl-window", &r.mismatch_vcd)?,
                Output::begin("rtl-window", crate::rtl::window::gtkw_path(&r.mismatch_vcd))?,
            ];
        }
    }
    let title = cfg.title();
    let opts = TraceOptions {
        nodes: out.trace_nodes.clone(),
        from: out.trace_from,
        to: out.trace_to.unwrap_or(u64::MAX),
        clock_ps: out.clock_ps(),
    };
    let limit = || out.trace_limit_bytes.map(SizeLimit::new);
    let refused = |field: &str, o: &Output, e: std::io::Error| ConfigError::new(field, o.shown(), format!("cannot write it: {e}"));
    // Per waveform: its output, estimate and limit.
    let mut waves: Vec<(Output, u64, Option<SizeLimit>)> = Vec::new();
    let mut probes: Vec<Tracer> = Vec::new();
    for (field, o) in [("vcd", vcd), ("fst", fst)] {
        let Some(o) = o else { continue };
        let is_fst = field == "fst";
        let l = limit();
        let sink: Box<dyn traces::WaveSink + Send> = if is_fst {
            let mut s = FstSink::create(o.path(), out.clock_ps()).map_err(|e| refused(field, &o, e))?;
            if let Some(l) = &l {
                s.set_limit(l.clone());
            }
            Box::new(s)
        } else {
            let mut s = VcdSink::create(o.path(), out.clock_ps(), &title).map_err(|e| refused(field, &o, e))?;
            if let Some(l) = &l {
                s.set_limit(l.clone());
            }
            Box::new(s)
        };
        let mut t = Tracer::new(&f, opts.clone(), Box::new(Threaded::new(sink))).map_err(|e| refused(field, &o, e))?;
        // The save file points at the first dump.
        if probes.is_empty()
            && let Some(g) = &out.gtkw
        {
            for (file, (_, text)) in gtkw.iter_mut().zip(traces::gtkw::save_files(Path::new(g), Path::new(o.shown()), &t, &title)) {
                file.write(text.as_bytes());
                if let Some(e) = file.error() {
                    return Err(ConfigError::new("gtkw", file.shown(), format!("cannot write it: {e}")));
                }
            }
        }
        let est = estimate_waveform_bytes(cfg, &f, &bounds, t.signals.len(), is_fst);
        if out.announce {
            let cap = l.as_ref().map_or(String::new(), |l| format!(" (--trace-limit {})", megabytes(l.bytes)));
            eprintln!("waveform {}: about {} estimated{cap}", o.shown(), megabytes(est));
        }
        if let Some(l) = &l {
            t.set_limit(l.clone());
        }
        waves.push((o, est, l));
        probes.push(t);
    }
    for t in probes {
        f.add_probe(Box::new(t));
    }
    let start = Instant::now();
    let ending = run_fabric(cfg, &mut f, progress);
    let wall = start.elapsed().as_secs_f64();
    for (probe, (o, _, _)) in f.take_probes().into_iter().zip(&mut waves) {
        let tracer = probe.as_any().downcast::<Tracer>().expect("the probes are tracers");
        if let Err(e) = tracer.finish(f.now) {
            o.fail(e);
        }
    }
    write_stats_csv(&f, &mut csv);
    let rtl_window = write_rtl_window(&f, rtl_window);
    let mut r = report(cfg, &f, bounds, ending, wall);
    if let (Some(m), [vcd, save]) = (r.rtl.as_mut().and_then(|x| x.mismatch.as_mut()), &rtl_window[..]) {
        (m.vcd, m.gtkw) = (Some(vcd.shown().to_string()), Some(save.shown().to_string()));
    }
    r.waveforms = waves
        .iter()
        .map(|(o, estimated_bytes, l)| WaveformReport {
            bytes: std::fs::metadata(o.path()).map_or(0, |m| m.len()),
            path: o.shown().to_string(),
            estimated_bytes: *estimated_bytes,
            limit_bytes: l.as_ref().map(|l| l.bytes),
            stopped_at_cycle: l.as_ref().and_then(|l| l.stopped_at_cycle()),
        })
        .collect();
    let outputs = waves.into_iter().map(|(o, _, _)| o).chain(gtkw).chain(csv).chain(rtl_window).collect();
    Ok(Ran { report: r, outputs })
}

/// The waveform around the RTL's difference from the model into its outputs (dump, save
/// file), if there is one; the outputs to keep.
fn write_rtl_window(f: &Fabric, mut outs: Vec<Output>) -> Vec<Output> {
    let Some(Ok(m)) = f.external_stop() else { return Vec::new() };
    let [vcd, save] = &mut outs[..] else { return Vec::new() };
    let window = f.mismatch_window();
    let ports = f.routers.ports();
    if let Err(e) = crate::rtl::window::write(&window, m, ports, vcd.path()) {
        vcd.fail(e);
    }
    save.write(crate::rtl::window::save_file(Path::new(vcd.shown()), Path::new(save.shown()), &window, m, ports).as_bytes());
    outs
}

/// Write the statistics CSV asked for into its output, after the run.
pub(super) fn write_stats_csv(f: &Fabric, csv: &mut Option<Output>) {
    if let Some(o) = csv
        && let Err(e) = Stats::write_csv(f, o.path())
    {
        o.fail(e);
    }
}
