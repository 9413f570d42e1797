//! The waveform tracer: a [`Probe`] that turns each simulated cycle into value changes, with
//! one scope per node, its router, each port and VC, named as RTL would be: nodes by their
//! coordinates ([`fabric::Topology::scope_name`]), ports by the direction their link leaves
//! in ([`fabric::Topology::port_name`]), the NIC's channels `inj`/`ej` (numbered when a
//! node has several):
//!
//! ```text
//! top.clk
//! top.x1_y2.router.out_xp.{valid, flags[2:0], vc, packet[31:0], dest[31:0], msg[31:0]}
//! top.x1_y2.router.out_xp.vc0.credits          credits of output VC 0 (free downstream slots)
//! top.x1_y2.router.out_xp.vc0.owner            the input VC holding output VC 0 (`in_xm.vc1`)
//! top.x1_y2.router.in_xm.{sa_req, sa_gnt}      switch requests and grants, a bit per VC
//! top.x1_y2.router.in_xm.vc0.{occupancy, state[1:0], va_req, va_gnt, route, out_vc}
//! top.x1_y2.router.inj.vc0.{...}               the NIC injection channel's buffer
//! top.x1_y2.nic.{inject_valid, eject_valid, queue[15:0]}
//! top.x1_y2.nic.inj.{valid, flags, packet, msg}, top.x1_y2.nic.ej.{...}
//! ```
//!
//! Timing: the dump's times are half cycles (the sinks scale them to the clock period):
//! `clk` rises at the start of each cycle and falls half-way; every other signal changes on
//! a rising edge and shows the state at the end of the cycle. At cycle t `valid` is high if
//! a flit moved in cycle t; `flags` is {valid, tail, head} (shown as -, BODY, HEAD, TAIL,
//! HEADTAIL); `vc`, `packet`, `dest` and `msg` describe the last flit that moved (they hold,
//! like a data register, while `valid` is low). `va_req`, `va_gnt`, `sa_req` and `sa_gnt`
//! are high in the cycle the allocators saw the request or gave the grant; `route` and
//! `out_vc` hold the output port and VC of the VC's last grant (a packet the router
//! replicates has a grant per branch: `owner` on each output VC shows them all). `owner`
//! holds the input VC that output VC is allocated to, from its grant to the cycle its tail
//! leaves (then `-`, free; the save file names input VCs like `in_xm.vc1`). Buffer occupancy, VC state
//! (0 IDLE, 1 RC, 2 VA, 3 ACTIVE), credits and the NIC queue show the registers' values at
//! the start of cycle t. The GTKWave save file shows flags, states and ports by name. `msg`
//! is the message (broadcast) the packet carries, `packet` its packet-table slot, `dest` its
//! destination node ([`DEST_BROADCAST`] and the span for a broadcast). With 2^ν-wide links
//! each output port has `lane<k>` sub-scopes.

mod declare;
mod sample;
mod write;

use crate::sink::WaveSink;
use fabric::probe::{CycleView, Probe};
use router::NodeId;
use std::io;

/// Which part of a run to trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceOptions {
    /// Nodes to trace (all if `None`), ascending.
    pub nodes: Option<Vec<u32>>,
    /// First and last cycle traced (inclusive).
    pub from: u64,
    pub to: u64,
    /// Clock period in ps.
    pub clock_ps: u64,
}

impl Default for TraceOptions {
    fn default() -> Self {
        TraceOptions { nodes: None, from: 0, to: u64::MAX, clock_ps: 1000 }
    }
}

/// Translate-filter names of `flags` = {valid, tail, head}.
pub const FLAG_NAMES: [(u64, &str); 5] = [(0, "-"), (4, "BODY"), (5, "HEAD"), (6, "TAIL"), (7, "HEADTAIL")];

/// The signals of one output link (lane); `valid` is NONE where the port has no link.
#[derive(Clone, Copy, Debug)]
struct LinkSigs {
    valid: u32,
    flags: u32,
    vc: u32,
    packet: u32,
    dest: u32,
    msg: u32,
}

/// `dest` of a broadcast packet: this bit, and the dimensions its tree spans.
pub const DEST_BROADCAST: u64 = 1 << 31;

/// The signals of one NIC channel.
#[derive(Clone, Copy, Debug)]
struct ChanSigs {
    valid: u32,
    flags: u32,
    packet: u32,
    msg: u32,
}

/// A declared signal: its full GTKWave name, width, and which scope group it belongs to.
#[derive(Clone, Debug)]
pub struct SignalInfo {
    /// `top.n0005.router.out2.kind[2:0]`
    pub name: String,
    pub width: u32,
    /// Index of the traced node.
    pub node: usize,
    /// `out2`, `in1.vc0`, `nic`, ... (the group the save file puts it in).
    pub group: String,
    /// Display as a named value (`flags`, `state`, `route`).
    pub translate: Option<&'static str>,
}

/// The occupancy signal of one input VC (`iv` its global index); the next ones are its
/// `state`, `va_req`, `va_gnt`, `route` and `out_vc` ([`VA_REQ`] and on). `up`: the traced output VC upstream (its index in `Tracer::credit_last`) that
/// gets a credit back when a flit leaves this VC, or NONE.
#[derive(Clone, Copy, Debug)]
struct IvcSigs {
    iv: u32,
    occ: u32,
    up: u32,
}

/// The credits and owner signals of one output port (global index `op`): VC `v`'s credits
/// are `sig + 2v`, its owner `sig + 2v + 1`.
#[derive(Clone, Copy, Debug)]
struct PortSigs {
    op: u32,
    sig: u32,
}

/// What a flit leaving on an output port (global index) of the fabric touches here, looked
/// up once: the downstream input VC 0's entry in `Tracer::ivcs` and its live bit (word
/// `<< 6 | bit`), or NONE; the traced port (`i * net + o`) and its index in `Tracer::ports`,
/// or NONE. (Kept for every port of the fabric: 16 bytes each, also when few nodes are
/// traced.)
#[derive(Clone, Copy, Debug)]
struct OpInfo {
    down: u32,
    down_bit: u32,
    port: u32,
    port_sigs: u32,
}

/// Offsets of an input VC's allocator signals from its occupancy signal.
const VA_REQ: u32 = 2;
const VA_GNT: u32 = 3;
const ROUTE: u32 = 4;
const OUT_VC: u32 = 5;

/// Hand the value changes to the sink in batches of about this many words.
const BATCH: usize = 1 << 16;

/// The tracer. Create it before the run, attach it with
/// [`Fabric::add_probe`](fabric::Fabric::add_probe), and call [`Tracer::finish`] on it
/// afterwards.
///
/// Each cycle it compares what can have changed with the values last written and puts only
/// the changes, with their timestamps, in a batch ([`crate::sink::ops`]) that goes to the
/// sink whole: on a [`crate::Threaded`] sink the encoding happens on another thread.
pub struct Tracer {
    sink: Option<Box<dyn WaveSink>>,
    opts: TraceOptions,
    pub signals: Vec<SignalInfo>,
    pub traced: Vec<NodeId>,
    /// Names of the router's ports (network ports by direction, then the NIC channels'
    /// ejection side), the values `route` shows.
    pub route_names: Vec<String>,
    /// The values `owner` shows: each input VC's local index and name (`in_xm.vc1`), and
    /// free (`-`).
    pub owner_names: Vec<(u64, String)>,
    /// The `clk` signal.
    clk: u32,
    /// Per traced node × port: its input port's `sa_req` signal (`sa_gnt` the next), or NONE.
    in_port: Vec<u32>,
    /// Per traced node: the VCs requesting VC allocation as last written, and whether its
    /// requesters must be looked at again next cycle (some were granted).
    va_last: Vec<u128>,
    va_recheck: Vec<bool>,
    /// Per traced node: VCs granted VC allocation in this cycle.
    va_granted: Vec<u128>,
    /// Per traced node: this cycle's switch requests and grants (a bit per local VC), and
    /// the nodes that have some.
    sa_now: Vec<(u128, u128)>,
    sa_touched: Vec<u32>,
    /// Each signal's value as last written (before the first timestamp: its initial value).
    last: Vec<u64>,
    slot: Vec<u32>,
    net: usize,
    vcs: usize,
    lanes: usize,
    k: usize,
    /// Per traced node × network port × lane (`valid` NONE where the port has no link).
    links: Vec<LinkSigs>,
    /// Runs with faults: each traced output link's `failed` signal and its global port.
    failed: Vec<(u32, u32)>,
    /// Register signals. Their values last written are kept here, packed and per traced
    /// node, not in `last` (which gets them only for the dump).
    ///
    /// Input VCs, per traced node `i` the range `ivc_start[i]..ivc_start[i + 1]`; the value
    /// last written as `occupancy << 2 | state`; a bit in `ivc_live` unless that value is 0
    /// (empty and idle) and no flit has come in since. Node `i`'s bits start at word
    /// `live_start[i]` (entry `ivc_start[i] + j` is bit `j`).
    ivcs: Vec<IvcSigs>,
    ivc_start: Vec<u32>,
    ivc_last: Vec<u32>,
    ivc_live: Vec<u64>,
    live_start: Vec<u32>,
    /// Per entry of `ivcs`, its word and bit in `ivc_live`.
    live_bit: Vec<(u32, u8)>,
    /// Per entry of `ivcs`, the flits written into it in this cycle.
    ivc_pushes: Vec<u8>,
    /// Per input VC of the fabric (global index), its entry in `ivcs` or NONE.
    ivc_entry: Vec<u32>,
    /// Per output port of the fabric (global index).
    by_op: Vec<OpInfo>,
    /// Output ports with credits, per traced node the range `port_start[i]..port_start[i + 1]`;
    /// the credits last written (port `k`'s VC `v` at `k * vcs + v`); set in `port_hot` if
    /// the credits may have changed since (a flit left, or credits were on the return line).
    ///
    /// Where the node downstream is traced too, the credits are counted here from events
    /// instead (`counted`): a flit that leaves takes one (`credit_now`), a flit that leaves
    /// the downstream VC (its occupancy drops by more than flits came in) gives one back,
    /// visible `credit_delay + 1` cycles later (`returns`, in order of that cycle).
    ports: Vec<PortSigs>,
    port_start: Vec<u32>,
    credit_last: Vec<u16>,
    port_hot: Vec<bool>,
    counted: Vec<bool>,
    /// Per traced node: some of its ports' credits are read from the router.
    reads_credits: Vec<bool>,
    credit_now: Vec<u16>,
    returns: std::collections::VecDeque<(u64, u32)>,
    /// Counted credits that changed in this cycle (indices into `credit_now`).
    touched: Vec<u32>,
    /// Per traced node × network port: its index in `ports`, or NONE.
    port_of: Vec<u32>,
    /// `owner`'s value for a free output VC, and the owners this cycle's tails free.
    owner_free: u64,
    owner_frees: Vec<u32>,
    nic_inject: Vec<u32>,
    nic_eject: Vec<u32>,
    nic_queue: Vec<u32>,
    queue_last: Vec<u16>,
    /// Per traced node × channel.
    inj: Vec<ChanSigs>,
    ej: Vec<ChanSigs>,
    /// Pulse signals set in the current cycle (a bit per signal), and those set high in the
    /// last traced cycle and in this one.
    pulsed: Vec<u64>,
    high: Vec<u32>,
    high_now: Vec<u32>,
    /// The last timestamp written; changes still go to it.
    open: Option<u64>,
    /// Write changes (false before the trace window and while the values of the first dump
    /// are gathered).
    emit: bool,
    started: bool,
    done: bool,
    error: Option<io::Error>,
    /// Flits recorded on link `valid` signals (for checks).
    pub link_flits: u64,
    deps: Vec<(u32, u8, router::Flit)>,
    lane_used: Vec<u8>,
    masks: Vec<(u32, u64)>,
    /// Timestamps and changes not yet handed to the sink.
    batch: Vec<u64>,
    /// Where the sink stops for `--trace-limit` (then the tracer stops too).
    limit: Option<crate::sink::SizeLimit>,
}

impl Tracer {
    /// Stop sampling once the sink has stopped at `limit` (the sink enforces it).
    pub fn set_limit(&mut self, limit: crate::sink::SizeLimit) {
        self.limit = Some(limit);
    }

    fn cycle_inner(&mut self, v: &CycleView<'_>) -> io::Result<()> {
        let t = v.t;
        if self.done {
            return Ok(());
        }
        if t < self.opts.from {
            // Before the window: follow the registers without writing them.
            self.emit = false;
            self.departures(v, false);
            self.failures(v.fabric);
            self.nics(v, false);
            self.allocators(v, false);
            self.sample_registers(v.fabric, t);
            self.emit = true;
            return Ok(());
        }
        if t > self.opts.to {
            return self.close(self.opts.to + 1);
        }
        // The dump of every signal's value comes first: at the window's start if this cycle
        // is later, or after this cycle's activity if it is the start.
        let dump_now = !self.started && t == self.opts.from;
        if !self.started {
            self.started = true;
            // The first timestamp's clock edge goes with the dump.
            self.emit = false;
            self.time(self.opts.from);
            self.emit = true;
            if dump_now {
                self.emit = false;
            } else {
                self.dump();
            }
        }
        match self.open {
            // Registers sampled after the last traced cycle are already at `t`.
            Some(p) if p == t => {}
            _ => {
                // The last traced cycle's pulses go low at its next timestamp.
                self.lows();
                self.time(t);
            }
        }
        self.departures(v, true);
        self.failures(v.fabric);
        self.nics(v, true);
        self.allocators(v, true);
        self.lows();
        if dump_now {
            self.emit = true;
            self.dump();
        }
        // Registers as seen from the next cycle.
        self.time(t + 1);
        self.sample_registers(v.fabric, t);
        if self.batch.len() >= BATCH {
            self.sink.as_mut().expect("tracer sink").ops(&mut self.batch)?;
            if self.limit.as_ref().is_some_and(|l| l.stopped()) {
                // The writer reached the size limit: nothing more goes to it.
                self.done = true;
                self.batch.clear();
            }
        }
        Ok(())
    }
}

impl Probe for Tracer {
    fn cycle(&mut self, view: &CycleView<'_>) {
        if let Err(e) = self.cycle_inner(view) {
            // An I/O error (disk full) ends tracing; `finish` reports it.
            self.error.get_or_insert(e);
            self.done = true;
        }
    }
    fn as_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}
