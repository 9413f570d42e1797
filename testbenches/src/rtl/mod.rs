//! Co-simulation with RTL routers (`flitwave run … --rtl FILE`): the router in FILE (the
//! reference `rtl/router.sv`, or a designer's), Verilated, in place of the model's at some
//! nodes, and with `--rtl-compare` checked every cycle against the model's router fed the
//! same inputs ([`fabric::ExternalRouters`], docs/rtl.md).
//!
//! Verilator builds the router with the C++ host `rtl/tb/cosim.cpp` into a program kept in
//! a cache directory (keyed by the sources, parameters and Verilator's version, so a second
//! run starts at once); the fabric talks to it through a pipe, one frame a cycle.

pub mod adapter;
pub mod window;

use crate::config::ConfigError;
use fabric::{ExternalRouters, Fabric, PortCredit, PortFlit, Ports, Topology, TopologyKind, WireFlit};
use router::{Header, RouterParams, Switching};
use serde::Serialize;
use std::hash::{Hash, Hasher};
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// The C++ host of the Verilated routers and its port helpers, built with every router.
const COSIM_CPP: &str = include_str!("../../../rtl/tb/cosim.cpp");
const PORTS_H: &str = include_str!("../../../rtl/tb/ports.h");

/// What `--rtl`, `--rtl-top`, `--rtl-nodes` and `--rtl-compare` ask for.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct RtlConfig {
    /// The router's top file (other modules are looked up beside it).
    pub path: String,
    /// Its top module.
    pub top: String,
    /// The nodes whose router is the RTL, in increasing order.
    pub nodes: Vec<u32>,
    /// Check the RTL against the model every cycle.
    pub compare: bool,
    /// Where the mismatch waveform goes (with `compare`): VCD and its GTKWave save file.
    pub mismatch_vcd: String,
    /// The Verilated program (built when the configuration was checked).
    #[serde(skip)]
    pub program: PathBuf,
}

/// The RTL routers in a run's report.
#[derive(Clone, Debug, Serialize)]
pub struct RtlReport {
    pub path: String,
    pub top: String,
    pub nodes: Vec<u32>,
    /// The nodes, as `--rtl-nodes` reads them.
    #[serde(skip)]
    pub nodes_text: String,
    pub compared: bool,
    /// Why the run stopped early: the first difference from the model, or the simulator's
    /// failure.
    pub stopped: Option<String>,
    /// The first difference from the model.
    pub mismatch: Option<MismatchReport>,
}

/// The first difference between the RTL and the model.
#[derive(Clone, Debug, Serialize)]
pub struct MismatchReport {
    pub node: u32,
    pub port: usize,
    pub cycle: u64,
    pub what: &'static str,
    pub expected: String,
    pub actual: String,
    /// The waveform of the cycles around it, both routers side by side, and its save file
    /// (`flitwave run` writes them; None where nothing was written).
    pub vcd: Option<String>,
    pub gtkw: Option<String>,
}

impl RtlReport {
    pub fn new(c: &RtlConfig, f: &Fabric) -> RtlReport {
        let (stopped, mismatch) = match f.external_stop() {
            Some(Err(e)) => (Some(e.to_string()), None),
            Some(Ok(m)) => (
                Some(m.to_string()),
                Some(MismatchReport {
                    node: m.node.0,
                    port: m.port,
                    cycle: m.cycle,
                    what: m.what,
                    expected: m.expected.clone(),
                    actual: m.actual.clone(),
                    vcd: None,
                    gtkw: None,
                }),
            ),
            None => (None, None),
        };
        RtlReport {
            path: c.path.clone(),
            top: c.top.clone(),
            nodes: c.nodes.clone(),
            nodes_text: nodes_text(&c.nodes, f.topo.nodes()),
            compared: c.compare,
            stopped,
            mismatch,
        }
    }
}

/// `nodes` as a list like `0-3,7` ("all nodes" when it is every node of `n`).
pub fn nodes_text(nodes: &[u32], n: usize) -> String {
    if nodes.len() == n {
        return "all nodes".to_string();
    }
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < nodes.len() {
        let mut j = i;
        while j + 1 < nodes.len() && nodes[j + 1] == nodes[j] + 1 {
            j += 1;
        }
        parts.push(if j == i { nodes[i].to_string() } else { format!("{}-{}", nodes[i], nodes[j]) });
        i = j + 1;
    }
    format!("node{} {}", if nodes.len() == 1 { "" } else { "s" }, parts.join(","))
}

/// The version line of the Verilator on PATH, if there is one.
pub fn verilator_version() -> Option<String> {
    let o = Command::new("verilator").arg("--version").output().ok()?;
    o.status.success().then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// Widths of the flit's fields (docs/rtl.md), from the model's types: packet id, sequence
/// number, and the header of `router::Header`.
#[derive(Clone, Copy, Debug)]
pub struct Widths {
    pub pkt: u32,
    pub seq: u32,
    pub node: u32,
    pub key: u32,
    pub len: u32,
    pub span: u32,
}

pub const WIDTHS: Widths = Widths {
    pkt: u32::BITS,
    seq: u16::BITS,
    node: Header::MAX_NODE.trailing_ones(),
    key: Header::MAX_KEY.trailing_ones(),
    len: u16::BITS,
    span: u32::BITS,
};

impl Widths {
    /// The flit's width: head, tail, packet, sequence number, header.
    pub fn flit(&self) -> u32 {
        2 + self.pkt + self.seq + 2 + 2 * self.node + self.key + self.len + self.span
    }
}

/// The VC field's width of a router with `p`'s VCs and ejection VCs.
pub fn vc_width(p: &RouterParams) -> u32 {
    let v = p.vcs.max(p.ejection_vcs) as u32;
    if v > 1 { u32::BITS - (v - 1).leading_zeros() } else { 1 }
}

/// The reference router's parameters for a router of `p` in `topo`, as Verilator's `-G`
/// flags (docs/rtl.md, "Parameters"). Meshes, linear arrays and hypercubes only.
pub fn generics(topo: &Topology, p: &RouterParams) -> Vec<String> {
    let topology = match topo.kind {
        TopologyKind::Mesh | TopologyKind::Linear => 0,
        TopologyKind::Hypercube => 1,
        ref k => panic!("the reference RTL routes meshes and hypercubes, not {}", k.name()),
    };
    // Each dimension's size (a hypercube's are all 2), dimension 0 in the low 16 bits.
    let dims = topo.ndims();
    let sizes: String = topo.sizes.iter().rev().map(|k| format!("{k:04x}")).collect();
    let switching = match p.switching {
        Switching::Wormhole => 0,
        Switching::VirtualCutThrough => 1,
        Switching::StoreAndForward => 2,
    };
    let w = WIDTHS;
    [
        ("TOPOLOGY", topology.to_string()),
        ("DIMS", dims.to_string()),
        ("SIZES", format!("{}'h{sizes}", 16 * dims)),
        ("NIC_CHANNELS", p.nic_channels.to_string()),
        ("VCS", p.vcs.to_string()),
        ("EJ_VCS", p.ejection_vcs.to_string()),
        ("DEPTH", p.buffer_flits.to_string()),
        ("INJ_DEPTH", p.inject_buffer_flits.to_string()),
        ("SWITCHING", switching.to_string()),
        ("PKT_W", w.pkt.to_string()),
        ("SEQ_W", w.seq.to_string()),
        ("NODE_W", w.node.to_string()),
        ("KEY_W", w.key.to_string()),
        ("LEN_W", w.len.to_string()),
        ("SPAN_W", w.span.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| format!("-G{k}={v}"))
    .collect()
}

/// Verilator's flags for every router: a C++ model named `Vdut` whatever its top module,
/// with the host, built; warnings (a designer's widths) reported, not fatal; the routers'
/// evaluation, the co-simulation's time, compiled for speed.
const VERILATOR_FLAGS: &[&str] =
    &["--cc", "--exe", "--build", "-j", "2", "-Wno-fatal", "--prefix", "Vdut", "-MAKEFLAGS", "OPT_FAST=-O2 OPT_GLOBAL=-O2"];

/// Where built routers are kept: `FLITWAVE_RTL_CACHE`, or `flitwave-rtl` in the system's
/// temporary directory.
fn cache_dir() -> PathBuf {
    std::env::var_os("FLITWAVE_RTL_CACHE").map_or_else(|| std::env::temp_dir().join("flitwave-rtl"), PathBuf::from)
}

/// The Verilog sources in `dir` (the files Verilator may read for its modules).
fn sources_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file() && p.extension().is_some_and(|x| ["v", "sv", "vh", "svh"].iter().any(|e| x == *e)))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Build the Verilated program of the router in `path` (module `top`) for routers of `p` in
/// `topo`, or find it built. With an adapter ([`adapter`]), its wrapper is the top and
/// instantiates `top`.
pub fn build(path: &str, top: &str, topo: &Topology, p: &RouterParams, adapter: Option<&adapter::Adapter>) -> Result<PathBuf, ConfigError> {
    let refuse = |why: String| ConfigError::new("rtl", path, why);
    let file = Path::new(path);
    if !file.is_file() {
        return Err(refuse("no such file: the router's top SystemVerilog file, e.g. rtl/router.sv".to_string()));
    }
    let Some(version) = verilator_version() else {
        return Err(refuse("verilator not found: install Verilator (Debian package verilator) to co-simulate RTL".to_string()));
    };
    let generics = generics(topo, p);
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (version.as_str(), top, VERILATOR_FLAGS, &generics, COSIM_CPP, PORTS_H).hash(&mut h);
    let top_file = file.canonicalize().map_err(|e| refuse(format!("cannot read it: {e}")))?;
    std::fs::read(&top_file).map_err(|e| refuse(format!("cannot read it: {e}")))?.hash(&mut h);
    let mut search = vec![top_file.parent().expect("a file has a directory").to_path_buf()];
    if let Some(a) = adapter {
        a.sv.hash(&mut h);
        search.extend(a.search.iter().cloned());
    }
    let mut sources: Vec<PathBuf> = search.iter().flat_map(|d| sources_in(d)).collect();
    sources.sort();
    sources.dedup();
    for s in sources {
        s.file_name().hash(&mut h);
        std::fs::read(&s).map_err(|e| refuse(format!("cannot read {}: {e}", s.display())))?.hash(&mut h);
    }
    let cache = cache_dir();
    let dir = cache.join(format!("{:016x}", h.finish()));
    let program = dir.join("cosim");
    if program.is_file() {
        return Ok(program);
    }
    // One build at a time in this process (the others then find it built); built beside
    // and moved in place, so that processes building the same router at once each build
    // their own and the first to finish wins.
    static BUILDING: std::sync::Mutex<u64> = std::sync::Mutex::new(0);
    let mut builds = BUILDING.lock().unwrap_or_else(|e| e.into_inner());
    if program.is_file() {
        return Ok(program);
    }
    *builds += 1;
    let tmp = cache.join(format!("building-{}-{}-{:016x}", std::process::id(), *builds, h.finish()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(|e| refuse(format!("cannot create the build directory {}: {e}", tmp.display())))?;
    let written = std::fs::write(tmp.join("cosim.cpp"), COSIM_CPP).and_then(|_| std::fs::write(tmp.join("ports.h"), PORTS_H));
    written.map_err(|e| refuse(format!("cannot write into {}: {e}", tmp.display())))?;
    // The adapter's wrapper, named after its module, outside the search path.
    let wrapper = tmp.join(format!("{}.sv", adapter.map_or("", |a| a.top.as_str())));
    if let Some(a) = adapter {
        std::fs::write(&wrapper, &a.sv).map_err(|e| refuse(format!("cannot write into {}: {e}", tmp.display())))?;
    }
    let verilator_top = adapter.map_or(top, |a| a.top.as_str());
    let o = Command::new("verilator")
        .args(["--top-module", verilator_top, "-o", "cosim"])
        .arg("--Mdir")
        .arg(&tmp)
        .args(search.iter().flat_map(|d| [std::ffi::OsStr::new("-y"), d.as_os_str()]))
        .args(adapter.map(|_| &wrapper))
        .arg("-CFLAGS")
        .arg(format!("-I{}", tmp.display()))
        .args(VERILATOR_FLAGS)
        .args(&generics)
        .arg(&top_file)
        .arg(tmp.join("cosim.cpp"))
        .output()
        .map_err(|e| refuse(format!("cannot run verilator: {e}")))?;
    if !o.status.success() {
        let text = String::from_utf8_lossy(&o.stderr);
        let first = text
            .lines()
            .find(|l| l.starts_with("%Error") || l.contains("error:"))
            .or_else(|| text.lines().rfind(|l| !l.trim().is_empty()))
            .unwrap_or("no message");
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(refuse(format!("Verilator could not build it with top module {top}: {}", first.trim())));
    }
    if std::fs::rename(&tmp, &dir).is_err() {
        // Another run got there first.
        let _ = std::fs::remove_dir_all(&tmp);
    }
    if !program.is_file() {
        return Err(refuse(format!("Verilator built no program in {}", dir.display())));
    }
    Ok(program)
}

/// The pipe from the Verilated routers, read without blocking: a reply is waited for by
/// polling a while (it comes within microseconds, and a process put to sleep takes tens
/// of them to wake), then by sleeping in `poll`.
struct Replies {
    pipe: ChildStdout,
    buf: Box<[u8]>,
    pos: usize,
    len: usize,
}

impl Replies {
    /// Read attempts before sleeping.
    const SPINS: u32 = 2000;

    fn new(pipe: ChildStdout) -> Replies {
        use std::os::fd::AsRawFd;
        let fd = pipe.as_raw_fd();
        // SAFETY: fcntl on a descriptor this process owns, with valid flags.
        unsafe { libc::fcntl(fd, libc::F_SETFL, libc::fcntl(fd, libc::F_GETFL) | libc::O_NONBLOCK) };
        Replies { pipe, buf: vec![0; 1 << 16].into_boxed_slice(), pos: 0, len: 0 }
    }

    fn word(&mut self) -> std::io::Result<u32> {
        let mut b = [0u8; 4];
        for byte in b.iter_mut() {
            if self.pos == self.len {
                self.fill()?;
            }
            *byte = self.buf[self.pos];
            self.pos += 1;
        }
        Ok(u32::from_le_bytes(b))
    }

    fn fill(&mut self) -> std::io::Result<()> {
        use std::io::ErrorKind;
        (self.pos, self.len) = (0, 0);
        let mut spins = 0;
        loop {
            match self.pipe.read(&mut self.buf) {
                Ok(0) => return Err(ErrorKind::UnexpectedEof.into()),
                Ok(n) => {
                    self.len = n;
                    return Ok(());
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    spins += 1;
                    if spins > Self::SPINS {
                        use std::os::fd::AsRawFd;
                        let mut p = libc::pollfd { fd: self.pipe.as_raw_fd(), events: libc::POLLIN, revents: 0 };
                        // SAFETY: one valid pollfd.
                        unsafe { libc::poll(&mut p, 1, -1) };
                    } else {
                        // Another process that can run (the routers', under load) runs.
                        std::thread::yield_now();
                    }
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

/// Verilated routers in a child process running `rtl/tb/cosim.cpp`.
pub struct Verilated {
    child: Child,
    to: BufWriter<ChildStdin>,
    from: Replies,
    routers: usize,
    frame: Vec<u8>,
}

impl Verilated {
    /// Start `program` with routers at `nodes`, of `p`.
    pub fn start(program: &Path, nodes: &[u32], p: &RouterParams) -> Result<Verilated, String> {
        let mut child = Command::new(program)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start the Verilated routers {}: {e}", program.display()))?;
        let to = BufWriter::new(child.stdin.take().expect("piped"));
        let from = Replies::new(child.stdout.take().expect("piped"));
        let mut v = Verilated { child, to, from, routers: nodes.len(), frame: Vec::new() };
        let w = WIDTHS;
        let ports = p.net_ports as u32 + p.nic_channels as u32;
        let mut start = vec![ports, p.net_ports as u32, vc_width(p), w.pkt, w.seq, w.node, w.key, w.len, w.span, nodes.len() as u32];
        start.extend_from_slice(nodes);
        for x in start {
            v.frame.extend_from_slice(&x.to_le_bytes());
        }
        v.send()?;
        let flit_w = v.word()?;
        if flit_w != w.flit() {
            return Err(format!("the Verilated routers' flits are {flit_w} bits wide, the model's {}", w.flit()));
        }
        Ok(v)
    }

    fn send(&mut self) -> Result<(), String> {
        let r = self.to.write_all(&self.frame).and_then(|_| self.to.flush());
        self.frame.clear();
        r.map_err(|e| self.died(e))
    }

    fn word(&mut self) -> Result<u32, String> {
        self.from.word().map_err(|e| self.died(e))
    }

    /// The message for a pipe that broke: how the program ended, if it did.
    fn died(&mut self, e: std::io::Error) -> String {
        match self.child.try_wait() {
            Ok(Some(s)) => format!("the Verilated routers exited ({s})"),
            _ => format!("the pipe to the Verilated routers failed: {e}"),
        }
    }

    fn put(&mut self, x: u32) {
        self.frame.extend_from_slice(&x.to_le_bytes());
    }
}

impl ExternalRouters for Verilated {
    fn step(&mut self, _t: u64, ins: &[Ports], outs: &mut [Ports]) -> Result<(), String> {
        self.put(1);
        for p in ins {
            self.put(p.flits.len() as u32);
            for f in &p.flits {
                let w = f.flit;
                for x in [f.port as u32, f.vc as u32, w.packet, w.seq as u32, w.head as u32, w.tail as u32, w.kind as u32] {
                    self.put(x);
                }
                for x in [w.src, w.dest, w.key, w.len as u32, w.span] {
                    self.put(x);
                }
            }
            self.put(p.credits.len() as u32);
            for k in &p.credits {
                self.put(k.port as u32);
                self.put(k.vc as u32);
            }
        }
        self.send()?;
        for out in outs.iter_mut().take(self.routers) {
            let n = self.word()?;
            for _ in 0..n {
                let mut x = [0u32; 12];
                for v in x.iter_mut() {
                    *v = self.word()?;
                }
                let flit = WireFlit {
                    packet: x[2],
                    seq: x[3] as u16,
                    head: x[4] != 0,
                    tail: x[5] != 0,
                    kind: x[6] as u8,
                    src: x[7],
                    dest: x[8],
                    key: x[9],
                    len: x[10] as u16,
                    span: x[11],
                };
                out.flits.push(PortFlit { port: x[0] as u8, vc: x[1] as u8, flit });
            }
            let n = self.word()?;
            for _ in 0..n {
                let (port, vc) = (self.word()?, self.word()?);
                out.credits.push(PortCredit { port: port as u8, vc: vc as u8 });
            }
        }
        Ok(())
    }

    fn idle(&mut self, from: u64, cycles: u64, _routers: usize) -> Result<(), String> {
        match self.idle_cycles(cycles)? {
            0 => Ok(()),
            n => Err(format!(
                "cycles {from}..{}: an RTL router sent something in {n} of them, holding nothing and taking nothing in",
                from + cycles
            )),
        }
    }
}

impl Verilated {
    /// Clock every router `cycles` times with nothing on its inputs: the number of those
    /// cycles in which some router had something on its outputs.
    fn idle_cycles(&mut self, cycles: u64) -> Result<u64, String> {
        let mut busy = 0;
        let mut left = cycles;
        while left > 0 {
            let n = left.min(u32::MAX as u64);
            self.put(2);
            self.put(n as u32);
            self.send()?;
            busy += self.word()? as u64;
            left -= n;
        }
        Ok(busy)
    }
}

impl Drop for Verilated {
    fn drop(&mut self) {
        // The end frame, then wait for the routers' final blocks.
        self.put(0);
        if self.send().is_ok() {
            let _ = self.child.wait();
        } else {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// External routers that could not start: the run stops at its first cycle with why.
struct Failed(String);

impl ExternalRouters for Failed {
    fn step(&mut self, _t: u64, _ins: &[Ports], _outs: &mut [Ports]) -> Result<(), String> {
        Err(self.0.clone())
    }
}

/// Put the RTL routers of `c` into `f` (before its first cycle).
pub fn attach(c: &RtlConfig, f: &mut Fabric) {
    let p = f.routers.params;
    let backend: Box<dyn ExternalRouters> = match Verilated::start(&c.program, &c.nodes, &p) {
        Ok(v) => Box::new(v),
        Err(e) => Box::new(Failed(e)),
    };
    f.attach_external(&c.nodes, backend, c.compare);
}
