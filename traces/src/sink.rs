//! Where waveform values go: a small interface with a VCD back-end (the `vcd` crate) and an
//! FST back-end (the `fst-writer` crate), so both files get the same hierarchy.

use std::fs::File;
use std::io::{self, BufWriter};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// A size at which a waveform stops (`--trace-limit`): its writer, on reaching `bytes` at a
/// timestamp, writes nothing more and records where it stopped, for the tracer (which then
/// stops sampling) and the report. Clones share the record.
#[derive(Clone, Debug)]
pub struct SizeLimit {
    pub bytes: u64,
    /// The half cycle at which the writer stopped, `u64::MAX` while it has not.
    stopped: Arc<AtomicU64>,
}

impl SizeLimit {
    pub fn new(bytes: u64) -> SizeLimit {
        SizeLimit { bytes, stopped: Arc::new(AtomicU64::new(u64::MAX)) }
    }
    /// The cycle from which on nothing was written, if the writer stopped.
    pub fn stopped_at_cycle(&self) -> Option<u64> {
        let h = self.stopped.load(Ordering::Relaxed);
        (h != u64::MAX).then_some(h / 2)
    }
    /// Has the writer stopped?
    pub fn stopped(&self) -> bool {
        self.stopped.load(Ordering::Relaxed) != u64::MAX
    }
    /// Stop at half cycle `t` if `written` bytes reach the limit. True if stopped.
    fn check(&self, written: u64, t: u64) -> bool {
        if written >= self.bytes {
            self.stopped.store(t, Ordering::Relaxed);
            return true;
        }
        false
    }
}

/// A waveform writer: declare scopes and variables, then timestamps and value changes.
pub trait WaveSink: Send {
    fn scope(&mut self, name: &str) -> io::Result<()>;
    fn upscope(&mut self) -> io::Result<()>;
    /// Declare a `width`-bit variable in the current scope; returns its handle.
    fn var(&mut self, name: &str, width: u32) -> io::Result<usize>;
    fn end_definitions(&mut self) -> io::Result<()>;
    /// Start the values of cycle `t` (strictly increasing).
    fn time(&mut self, t: u64) -> io::Result<()>;
    fn change(&mut self, var: usize, value: u64) -> io::Result<()>;
    /// Timestamps and value changes in bulk, encoded as [`ops`] describes. The sink takes
    /// them out of `batch` and leaves it empty (possibly another, recycled buffer).
    fn ops(&mut self, batch: &mut Vec<u64>) -> io::Result<()> {
        for op in ops::decode(batch) {
            match op {
                ops::Op::Time(t) => self.time(t)?,
                ops::Op::Change(var, value) => self.change(var, value)?,
            }
        }
        batch.clear();
        Ok(())
    }
    fn finish(self: Box<Self>) -> io::Result<()>;
}

/// The bulk encoding of timestamps and value changes that the tracer hands to a sink: one
/// `u64` word per timestamp and per change of a value below 2^32, two for a wider value.
pub mod ops {
    /// `TIME | t`: the following changes happen at time `t` (below 2^62).
    pub const TIME: u64 = 1 << 63;
    /// `WIDE | var << 32`, then the value in the next word.
    pub const WIDE: u64 = 1 << 62;
    /// Variables are numbered below this.
    pub const MAX_VARS: usize = 1 << 30;

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Op {
        Time(u64),
        Change(usize, u64),
    }

    #[inline(always)]
    pub fn push_time(batch: &mut Vec<u64>, t: u64) {
        debug_assert!(t < WIDE, "time {t} too large");
        batch.push(TIME | t);
    }

    #[inline(always)]
    pub fn push_change(batch: &mut Vec<u64>, var: usize, value: u64) {
        debug_assert!(var < MAX_VARS);
        if value >> 32 == 0 {
            batch.push((var as u64) << 32 | value);
        } else {
            batch.push(WIDE | (var as u64) << 32);
            batch.push(value);
        }
    }

    /// The operations of a batch, in order.
    pub fn decode(batch: &[u64]) -> impl Iterator<Item = Op> + '_ {
        let mut i = 0;
        std::iter::from_fn(move || {
            let w = *batch.get(i)?;
            i += 1;
            Some(if w & TIME != 0 {
                Op::Time(w & !TIME)
            } else if w & WIDE != 0 {
                i += 1;
                Op::Change((w >> 32) as usize & (MAX_VARS - 1), batch[i - 1])
            } else {
                Op::Change((w >> 32) as usize, w & 0xffff_ffff)
            })
        })
    }
}

/// `BITS[b]`: the eight ASCII digits of byte `b`, most significant first.
static BITS: [[u8; 8]; 256] = {
    let mut t = [[0u8; 8]; 256];
    let mut b = 0;
    while b < 256 {
        let mut i = 0;
        while i < 8 {
            t[b][i] = b'0' + ((b >> (7 - i)) & 1) as u8;
            i += 1;
        }
        b += 1;
    }
    t
};

/// The binary digits of `value`'s low `n` bits (1 ≤ n ≤ 64), most significant first, in
/// `out[..n]`.
#[inline(always)]
fn digits(value: u64, n: u32, out: &mut [u8; 64]) {
    let v = value << (64 - n);
    for (k, chunk) in out.chunks_exact_mut(8).take(n.div_ceil(8) as usize).enumerate() {
        chunk.copy_from_slice(&BITS[(v >> (56 - 8 * k)) as u8 as usize]);
    }
}

/// Writes a Value Change Dump with the `vcd` crate: `$timescale` is the largest power of ten
/// of fs that divides half the clock period (IEEE 1364 allows only 1, 10 or 100 of a unit),
/// and timestamps are the tracer's half cycles times half the period in that unit. The value changes
/// themselves are formatted here, the way the `vcd` crate writes them, straight into a large
/// buffer.
pub struct VcdSink {
    w: vcd::Writer<BufWriter<File>>,
    /// Timescale units per half clock cycle (the tracer's time unit).
    per_half: u64,
    /// Per variable: its id code (at most 8 characters), the code's length and the width.
    vars: Vec<VcdVar>,
    /// Value-change text not yet handed to the file: `text[..pos]`.
    text: Vec<u8>,
    pos: usize,
    first_time: bool,
    in_dumpvars: bool,
    /// A timestamp not written yet: written before the next change, replaced by a later
    /// timestamp with no change in between (no empty timestamps), written at the end.
    pending: Option<u64>,
    /// Bytes in the file before the value changes (the header), and value-change text
    /// handed to it since.
    header_bytes: u64,
    drained: u64,
    limit: Option<SizeLimit>,
    /// The limit was reached: nothing more is written.
    stopped: bool,
}

#[derive(Clone, Copy, Debug)]
struct VcdVar {
    id: [u8; 8],
    id_len: u8,
    width: u8,
}

/// Half of a clock period of `clock_ps` ps (the time between the clock's edges) as
/// `m * 10^e` fs with `m` not a multiple of 10: `(e, m)`.
pub fn half_period_fs(clock_ps: u64) -> (u32, u64) {
    let (mut m, mut e) = (clock_ps.max(1) * 500, 0);
    while m % 10 == 0 {
        m /= 10;
        e += 1;
    }
    (e, m)
}

/// The last cycle a waveform of this clock can give a time: VCD and FST count time in 64
/// bits of the timescale unit, half a cycle being [`half_period_fs`]'s `m` of them, and the
/// dump ends at the falling edge after the last cycle traced.
pub fn last_timed_cycle(clock_ps: u64) -> u64 {
    let (_, m) = half_period_fs(clock_ps);
    (u64::MAX / m).saturating_sub(2) / 2
}

/// A legal VCD `$timescale` (1, 10 or 100 of a unit) for a clock of `clock_ps` ps, and how
/// many of it make half a clock cycle: half the period is `m * 10^e` fs, the timescale
/// `10^e` fs in the largest unit that keeps it whole, and half a cycle `m` of them.
pub fn vcd_timescale(clock_ps: u64) -> (u32, vcd::TimescaleUnit, u64) {
    let (e, m) = half_period_fs(clock_ps);
    let (unit, e) = match e {
        0..=2 => (vcd::TimescaleUnit::FS, e),
        3..=5 => (vcd::TimescaleUnit::PS, e - 3),
        6..=8 => (vcd::TimescaleUnit::NS, e - 6),
        9..=11 => (vcd::TimescaleUnit::US, e - 9),
        12..=14 => (vcd::TimescaleUnit::MS, e - 12),
        _ => (vcd::TimescaleUnit::S, e - 15),
    };
    (10u32.pow(e), unit, m)
}

/// Hand the value-change text to the file in pieces of about this size.
const VCD_CHUNK: usize = 1 << 20;
/// Room for one line: `b`, 64 digits, a space, an 8-character id code and a newline.
const VCD_LINE: usize = 96;

impl VcdSink {
    pub fn create(path: &Path, clock_ps: u64, comment: &str) -> io::Result<VcdSink> {
        let mut w = vcd::Writer::new(BufWriter::with_capacity(1 << 20, File::create(path)?));
        w.comment(comment)?;
        w.version(concat!("flitwave ", env!("CARGO_PKG_VERSION")))?;
        let (scale, unit, per_half) = vcd_timescale(clock_ps);
        w.timescale(scale, unit)?;
        Ok(VcdSink {
            w,
            per_half,
            vars: Vec::new(),
            text: vec![0; VCD_CHUNK + VCD_LINE],
            pos: 0,
            first_time: true,
            in_dumpvars: false,
            pending: None,
            header_bytes: 0,
            drained: 0,
            limit: None,
            stopped: false,
        })
    }

    /// Stop writing at the first timestamp at which the file holds `limit.bytes`.
    pub fn set_limit(&mut self, limit: SizeLimit) {
        self.limit = Some(limit);
    }

    fn drain_text(&mut self) -> io::Result<()> {
        use std::io::Write;
        self.w.writer().write_all(&self.text[..self.pos])?;
        self.drained += self.pos as u64;
        self.pos = 0;
        Ok(())
    }

    /// At half cycle `t`: has the file reached its limit? Then stop.
    #[inline]
    fn over_limit(&mut self, t: u64) -> bool {
        if let Some(l) = &self.limit
            && l.check(self.header_bytes + self.drained + self.pos as u64, t)
        {
            self.stopped = true;
            self.pending = None;
        }
        self.stopped
    }

    /// Append the line of one value change: `0!` for one bit, `b101 !` for a vector (leading
    /// zeros dropped: VCD left-extends with 0).
    #[inline(always)]
    fn line(&mut self, var: usize, value: u64) -> io::Result<()> {
        if let Some(t) = self.pending.take() {
            self.stamp(t)?;
        }
        let v = self.vars[var];
        let line: &mut [u8; VCD_LINE] = (&mut self.text[self.pos..self.pos + VCD_LINE]).try_into().expect("room for a line");
        let mut n;
        if v.width == 1 {
            line[0] = b'0' + (value & 1) as u8;
            n = 1;
        } else {
            let top = (64 - value.leading_zeros()).clamp(1, v.width as u32);
            line[0] = b'b';
            // Whole bytes of digits; the ones past `top` are overwritten below.
            let x = value << (64 - top);
            for k in 0..top.div_ceil(8) as usize {
                line[1 + 8 * k..9 + 8 * k].copy_from_slice(&BITS[(x >> (56 - 8 * k)) as u8 as usize]);
            }
            n = 1 + top as usize;
            line[n] = b' ';
            n += 1;
        }
        line[n..n + 8].copy_from_slice(&v.id);
        n += v.id_len as usize;
        line[n] = b'\n';
        self.pos += n + 1;
        if self.pos >= VCD_CHUNK {
            self.drain_text()?;
        }
        Ok(())
    }

    /// Append `#t` (for half cycle `t`).
    fn stamp(&mut self, t: u64) -> io::Result<()> {
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        let mut x = t * self.per_half;
        loop {
            i -= 1;
            digits[i] = b'0' + (x % 10) as u8;
            x /= 10;
            if x == 0 {
                break;
            }
        }
        let line = &mut self.text[self.pos..self.pos + VCD_LINE];
        line[0] = b'#';
        let n = digits.len() - i;
        line[1..1 + n].copy_from_slice(&digits[i..]);
        line[1 + n] = b'\n';
        self.pos += n + 2;
        if self.pos >= VCD_CHUNK {
            self.drain_text()?;
        }
        Ok(())
    }
}

impl WaveSink for VcdSink {
    fn scope(&mut self, name: &str) -> io::Result<()> {
        self.w.scope_def(vcd::ScopeType::Module, name)
    }
    fn upscope(&mut self) -> io::Result<()> {
        self.w.upscope()
    }
    fn var(&mut self, name: &str, width: u32) -> io::Result<usize> {
        assert!((1..=64).contains(&width), "{name}: {width} bits (1 to 64 supported)");
        let index = (width > 1).then_some(vcd::ReferenceIndex::Range(width as i32 - 1, 0));
        let code = self.w.add_var(vcd::VarType::Wire, width, name, index)?.to_string();
        let mut id = [0u8; 8];
        assert!(code.len() <= id.len(), "VCD id code {code} longer than 8 characters");
        id[..code.len()].copy_from_slice(code.as_bytes());
        self.vars.push(VcdVar { id, id_len: code.len() as u8, width: width as u8 });
        Ok(self.vars.len() - 1)
    }
    fn end_definitions(&mut self) -> io::Result<()> {
        use std::io::Write;
        self.w.enddefinitions()?;
        self.w.writer().flush()?;
        self.header_bytes = self.w.writer().get_ref().metadata().map_or(0, |m| m.len());
        Ok(())
    }
    fn time(&mut self, t: u64) -> io::Result<()> {
        if self.over_limit(t) {
            return Ok(());
        }
        self.drain_text()?;
        if self.in_dumpvars {
            self.in_dumpvars = false;
            self.w.end()?;
        }
        if self.first_time {
            // The first timestamp carries every signal's initial value.
            self.w.timestamp(t * self.per_half)?;
            self.first_time = false;
            self.in_dumpvars = true;
            self.w.begin(vcd::SimulationCommand::Dumpvars)?;
        } else {
            self.pending = Some(t);
        }
        Ok(())
    }
    fn change(&mut self, var: usize, value: u64) -> io::Result<()> {
        if self.stopped {
            return Ok(());
        }
        self.line(var, value)
    }
    fn ops(&mut self, batch: &mut Vec<u64>) -> io::Result<()> {
        if self.stopped {
            batch.clear();
            return Ok(());
        }
        for op in ops::decode(batch) {
            match op {
                ops::Op::Change(var, value) => self.line(var, value)?,
                // `#t`, as the `vcd` crate writes it.
                ops::Op::Time(t) if !self.first_time && !self.in_dumpvars => {
                    if self.over_limit(t) {
                        break;
                    }
                    self.pending = Some(t)
                }
                ops::Op::Time(t) => {
                    self.time(t)?;
                    // The limit may be reached within the first timestamp's dump.
                    if self.stopped {
                        break;
                    }
                }
            }
        }
        batch.clear();
        Ok(())
    }
    fn finish(mut self: Box<Self>) -> io::Result<()> {
        use std::io::Write;
        if self.in_dumpvars {
            self.drain_text()?;
            self.w.end()?;
        }
        // The last timestamp marks the end of the run, changes or not.
        if let Some(t) = self.pending.take() {
            self.stamp(t)?;
        }
        self.drain_text()?;
        self.w.writer().flush()
    }
}

/// Writes a Fast Signal Trace with the `fst-writer` crate: its time unit is `10^e` fs where
/// half the clock period is `m * 10^e` fs ([`half_period_fs`]), times the tracer's half
/// cycles × `m`.
pub struct FstSink {
    header: Option<fst_writer::FstHeaderWriter<BufWriter<File>>>,
    body: Option<fst_writer::FstBodyWriter<BufWriter<File>>>,
    ids: Vec<(fst_writer::FstSignalId, u32)>,
    per_half: u64,
    /// Value-change bytes before compression flushed so far (what `--trace-limit` counts:
    /// the file, compressed, stays below it).
    flushed: u64,
    limit: Option<SizeLimit>,
    stopped: bool,
}

/// Flush FST value changes to disk every this many buffered bytes (small enough that the
/// writer's buffer stays in cache when it is compressed).
const FST_FLUSH_AT: usize = 32 << 20;

impl FstSink {
    pub fn create(path: &Path, clock_ps: u64) -> io::Result<FstSink> {
        // FST stores times in units of 10^exponent s.
        let (e, per_half) = half_period_fs(clock_ps);
        let info = fst_writer::FstInfo {
            start_time: 0,
            timescale_exponent: e as i8 - 15,
            version: concat!("flitwave ", env!("CARGO_PKG_VERSION")).to_string(),
            date: String::new(),
            file_type: fst_writer::FstFileType::Verilog,
        };
        let out = BufWriter::with_capacity(1 << 20, File::create(path)?);
        let header = fst_writer::FstHeaderWriter::new(out, &info).map_err(fst_err)?;
        Ok(FstSink { header: Some(header), body: None, ids: Vec::new(), per_half, flushed: 0, limit: None, stopped: false })
    }

    /// Stop writing at the first timestamp at which the value changes, before compression,
    /// reach `limit.bytes`.
    pub fn set_limit(&mut self, limit: SizeLimit) {
        self.limit = Some(limit);
    }

    /// Start half cycle `t`, unless the limit is reached. False if stopped.
    fn start_time(&mut self, t: u64) -> io::Result<bool> {
        let b = self.body.as_mut().expect("FST body");
        if let Some(l) = &self.limit
            && l.check(self.flushed + b.size() as u64, t)
        {
            self.stopped = true;
            return Ok(false);
        }
        if b.size() >= FST_FLUSH_AT {
            self.flushed += b.size() as u64;
            b.flush().map_err(fst_err)?;
        }
        b.time_change(t * self.per_half).map_err(fst_err)?;
        Ok(true)
    }
}

fn fst_err(e: fst_writer::FstWriteError) -> io::Error {
    io::Error::other(format!("FST: {e:?}"))
}

impl WaveSink for FstSink {
    fn scope(&mut self, name: &str) -> io::Result<()> {
        self.header.as_mut().expect("FST header").scope(name, "", fst_writer::FstScopeType::Module).map_err(fst_err)
    }
    fn upscope(&mut self) -> io::Result<()> {
        self.header.as_mut().expect("FST header").up_scope().map_err(fst_err)
    }
    fn var(&mut self, name: &str, width: u32) -> io::Result<usize> {
        assert!((1..=64).contains(&width), "{name}: {width} bits (1 to 64 supported)");
        let name = if width > 1 { format!("{name} [{}:0]", width - 1) } else { name.to_string() };
        let id = self
            .header
            .as_mut()
            .expect("FST header")
            .var(name, fst_writer::FstSignalType::bit_vec(width), fst_writer::FstVarType::Wire, fst_writer::FstVarDirection::Implicit, None)
            .map_err(fst_err)?;
        self.ids.push((id, width));
        Ok(self.ids.len() - 1)
    }
    fn end_definitions(&mut self) -> io::Result<()> {
        let h = self.header.take().expect("FST header");
        let mut body = h.finish().map_err(fst_err)?;
        // The tracer writes only changes.
        body.set_deduplicate(false);
        self.body = Some(body);
        Ok(())
    }
    fn time(&mut self, t: u64) -> io::Result<()> {
        if !self.stopped {
            self.start_time(t)?;
        }
        Ok(())
    }
    fn change(&mut self, var: usize, value: u64) -> io::Result<()> {
        if self.stopped {
            return Ok(());
        }
        let (id, width) = self.ids[var];
        let mut d = [0u8; 64];
        digits(value, width, &mut d);
        self.body.as_mut().expect("FST body").signal_change(id, &d[..width as usize]).map_err(fst_err)
    }
    fn ops(&mut self, batch: &mut Vec<u64>) -> io::Result<()> {
        for op in ops::decode(batch) {
            if self.stopped {
                break;
            }
            match op {
                ops::Op::Change(var, value) => {
                    let (id, width) = self.ids[var];
                    let mut d = [0u8; 64];
                    digits(value, width, &mut d);
                    self.body.as_mut().expect("FST body").signal_change(id, &d[..width as usize]).map_err(fst_err)?;
                }
                ops::Op::Time(t) => {
                    self.start_time(t)?;
                }
            }
        }
        batch.clear();
        Ok(())
    }
    fn finish(mut self: Box<Self>) -> io::Result<()> {
        use std::io::Write;
        let mut out = self.body.take().expect("FST body").finish().map_err(fst_err)?;
        out.flush()
    }
}

/// Declares variables and drops every value: for measuring what tracing costs the
/// simulation thread by itself.
#[derive(Debug, Default)]
pub struct Discard {
    vars: usize,
}

impl WaveSink for Discard {
    fn scope(&mut self, _: &str) -> io::Result<()> {
        Ok(())
    }
    fn upscope(&mut self) -> io::Result<()> {
        Ok(())
    }
    fn var(&mut self, _: &str, _: u32) -> io::Result<usize> {
        self.vars += 1;
        Ok(self.vars - 1)
    }
    fn end_definitions(&mut self) -> io::Result<()> {
        Ok(())
    }
    fn time(&mut self, _: u64) -> io::Result<()> {
        Ok(())
    }
    fn change(&mut self, _: usize, _: u64) -> io::Result<()> {
        Ok(())
    }
    fn ops(&mut self, batch: &mut Vec<u64>) -> io::Result<()> {
        batch.clear();
        Ok(())
    }
    fn finish(self: Box<Self>) -> io::Result<()> {
        Ok(())
    }
}

/// Ops per batch handed to the writer thread (512 KiB).
const BATCH: usize = 1 << 16;

/// Runs another sink on a writer thread: the simulation hands over batches of timestamps
/// and value changes, and encoding and file output (VCD text, FST compression) overlap
/// with simulation. Declarations happen on the caller's thread, before the writer starts.
/// Emptied batch buffers come back for reuse.
pub struct Threaded {
    inner: Option<Box<dyn WaveSink + Send>>,
    tx: Option<std::sync::mpsc::SyncSender<Vec<u64>>>,
    back: Option<std::sync::mpsc::Receiver<Vec<u64>>>,
    worker: Option<std::thread::JoinHandle<io::Result<()>>>,
    batch: Vec<u64>,
}

impl Threaded {
    pub fn new(inner: Box<dyn WaveSink + Send>) -> Threaded {
        Threaded { inner: Some(inner), tx: None, back: None, worker: None, batch: Vec::with_capacity(BATCH + 2) }
    }

    /// Send `batch` to the writer, leaving an empty buffer in its place.
    fn send(&mut self, batch: &mut Vec<u64>) -> io::Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let spare = match self.back.as_ref().and_then(|b| b.try_recv().ok()) {
            Some(v) => v,
            None => Vec::with_capacity(batch.capacity().max(BATCH + 2)),
        };
        let full = std::mem::replace(batch, spare);
        match &self.tx {
            Some(tx) if tx.send(full).is_ok() => Ok(()),
            // The writer stopped: its error comes out of `finish`.
            _ => Err(io::Error::other("the waveform writer stopped")),
        }
    }

    fn inner(&mut self) -> &mut Box<dyn WaveSink + Send> {
        self.inner.as_mut().expect("declarations come before end_definitions")
    }
}

impl WaveSink for Threaded {
    fn scope(&mut self, name: &str) -> io::Result<()> {
        self.inner().scope(name)
    }
    fn upscope(&mut self) -> io::Result<()> {
        self.inner().upscope()
    }
    fn var(&mut self, name: &str, width: u32) -> io::Result<usize> {
        self.inner().var(name, width)
    }
    fn end_definitions(&mut self) -> io::Result<()> {
        let mut inner = self.inner.take().expect("end_definitions once");
        inner.end_definitions()?;
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<u64>>(4);
        let (back_tx, back_rx) = std::sync::mpsc::channel::<Vec<u64>>();
        self.tx = Some(tx);
        self.back = Some(back_rx);
        self.worker = Some(std::thread::spawn(move || -> io::Result<()> {
            for mut batch in rx {
                inner.ops(&mut batch)?;
                // The simulation may have finished: then nobody takes it back.
                let _ = back_tx.send(batch);
            }
            inner.finish()
        }));
        Ok(())
    }
    fn time(&mut self, t: u64) -> io::Result<()> {
        if self.batch.len() >= BATCH {
            let mut b = std::mem::take(&mut self.batch);
            let r = self.send(&mut b);
            self.batch = b;
            r?;
        }
        ops::push_time(&mut self.batch, t);
        Ok(())
    }
    fn change(&mut self, var: usize, value: u64) -> io::Result<()> {
        ops::push_change(&mut self.batch, var, value);
        Ok(())
    }
    fn ops(&mut self, batch: &mut Vec<u64>) -> io::Result<()> {
        // Keep the order: what came one by one goes first.
        let mut own = std::mem::take(&mut self.batch);
        let r = self.send(&mut own);
        self.batch = own;
        r?;
        self.send(batch)
    }
    fn finish(mut self: Box<Self>) -> io::Result<()> {
        let mut own = std::mem::take(&mut self.batch);
        let sent = self.send(&mut own);
        self.tx = None;
        let result = match self.worker.take() {
            Some(w) => w.join().map_err(|_| io::Error::other("the waveform writer panicked"))?,
            None => Ok(()),
        };
        result.and(sent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[test]
    fn vcd_timescales_are_legal_and_keep_the_period() {
        let unit_fs = |u: vcd::TimescaleUnit| match u {
            vcd::TimescaleUnit::FS => 1u128,
            vcd::TimescaleUnit::PS => 1_000,
            vcd::TimescaleUnit::NS => 1_000_000,
            vcd::TimescaleUnit::US => 1_000_000_000,
            vcd::TimescaleUnit::MS => 1_000_000_000_000,
            vcd::TimescaleUnit::S => 1_000_000_000_000_000,
        };
        for clock_ps in [1u64, 2, 3, 5, 10, 12, 30, 100, 250, 800, 1000, 1500, 2500, 20_000, 1_000_000, 7_000_000, 1_000_000_000] {
            let (scale, unit, per_half) = vcd_timescale(clock_ps);
            assert!([1, 10, 100].contains(&scale), "clock {clock_ps} ps: timescale {scale}");
            // Two half cycles make the period.
            assert_eq!(2 * scale as u128 * unit_fs(unit) * per_half as u128, clock_ps as u128 * 1000, "clock {clock_ps} ps");
        }
        // 1 ns: edges every 500 ps, in units of 100 ps.
        assert_eq!(vcd_timescale(1000), (100, vcd::TimescaleUnit::PS, 5));
        // 0.8 ns: edges every 400 ps.
        assert_eq!(vcd_timescale(800), (100, vcd::TimescaleUnit::PS, 4));
        assert_eq!(vcd_timescale(2500), (10, vcd::TimescaleUnit::PS, 125));
        assert_eq!(vcd_timescale(3), (100, vcd::TimescaleUnit::FS, 15));
    }

    #[test]
    fn ops_decode_what_was_pushed() {
        let mut b = Vec::new();
        ops::push_time(&mut b, 0);
        ops::push_change(&mut b, 0, 0);
        ops::push_change(&mut b, 7, u32::MAX as u64);
        ops::push_change(&mut b, ops::MAX_VARS - 1, u64::MAX);
        ops::push_time(&mut b, (1 << 62) - 1);
        ops::push_change(&mut b, 3, 1 << 32);
        let got: Vec<ops::Op> = ops::decode(&b).collect();
        use ops::Op::*;
        assert_eq!(
            got,
            [
                Time(0),
                Change(0, 0),
                Change(7, u32::MAX as u64),
                Change(ops::MAX_VARS - 1, u64::MAX),
                Time((1 << 62) - 1),
                Change(3, 1 << 32)
            ]
        );
        // Values of 32 bits or fewer take one word.
        assert_eq!(b.len(), 8);
    }

    #[test]
    fn digits_are_the_low_bits_msb_first() {
        for n in 1..=64u32 {
            for v in [0, 1, 2, 5, 0xff, 0x1234_5678, u64::MAX, 0x8000_0000_0000_0001] {
                let mut d = [0u8; 64];
                digits(v, n, &mut d);
                let masked = if n == 64 { v } else { v & ((1 << n) - 1) };
                assert_eq!(std::str::from_utf8(&d[..n as usize]).unwrap(), format!("{masked:0w$b}", w = n as usize), "{v:#x} in {n} bits");
            }
        }
    }

    fn scratch(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("flitwave-sink-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d.join(name)
    }

    /// The value-change lines are what the `vcd` crate writes, whether they come one by
    /// one or in a batch: `b` and the value without leading zeros for vectors.
    #[test]
    fn vcd_lines_match_the_vcd_crate() {
        let widths = [1u32, 2, 4, 32, 64];
        let values = [0u64, 1, 5, 0xffff_ffff, u64::MAX];
        let write = |path: &Path, batched: bool| {
            let mut s = VcdSink::create(path, 1000, "test").unwrap();
            s.scope("top").unwrap();
            for (i, &w) in widths.iter().enumerate() {
                assert_eq!(s.var(&format!("v{i}"), w).unwrap(), i);
            }
            s.upscope().unwrap();
            s.end_definitions().unwrap();
            let mut b = Vec::new();
            for t in 0..values.len() as u64 {
                ops::push_time(&mut b, t);
                for (i, &w) in widths.iter().enumerate() {
                    let v = values[t as usize];
                    ops::push_change(&mut b, i, if w == 64 { v } else { v & ((1 << w) - 1) });
                }
            }
            if batched {
                s.ops(&mut b).unwrap();
                assert!(b.is_empty());
            } else {
                for op in ops::decode(&b) {
                    match op {
                        ops::Op::Time(t) => s.time(t).unwrap(),
                        ops::Op::Change(v, x) => s.change(v, x).unwrap(),
                    }
                }
            }
            Box::new(s).finish().unwrap();
            let text = std::fs::read_to_string(path).unwrap();
            // The folder is this call's own (`scratch`).
            std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
            text
        };
        let (a, b) = (write(&scratch("a.vcd"), true), write(&scratch("b.vcd"), false));
        assert_eq!(a, b);
        // The same changes through the `vcd` crate's own writer.
        let mut expect = Vec::new();
        {
            let mut w = vcd::Writer::new(&mut expect);
            let ids: Vec<vcd::IdCode> = (0..widths.len() as u32).map(vcd::IdCode::from).collect();
            for (t, &value) in values.iter().enumerate() {
                // A clock of 1 ns: the sink writes half cycle t at 5t (units of 100 ps).
                w.timestamp(5 * t as u64).unwrap();
                if t == 0 {
                    w.begin(vcd::SimulationCommand::Dumpvars).unwrap();
                }
                for (i, &wd) in widths.iter().enumerate() {
                    let v = if wd == 64 { value } else { value & ((1 << wd) - 1) };
                    if wd == 1 {
                        w.change_scalar(ids[i], if v == 1 { vcd::Value::V1 } else { vcd::Value::V0 }).unwrap();
                    } else {
                        let bits: Vec<vcd::Value> =
                            format!("{v:b}").chars().map(|c| if c == '1' { vcd::Value::V1 } else { vcd::Value::V0 }).collect();
                        w.change_vector(ids[i], bits).unwrap();
                    }
                }
                if t == 0 {
                    w.end().unwrap();
                }
            }
        }
        let expect = String::from_utf8(expect).unwrap();
        let body = &a[a.find("#0").unwrap()..];
        assert_eq!(body, expect);
    }

    /// Records what reaches it.
    struct Recorder(Arc<Mutex<Vec<ops::Op>>>);

    impl WaveSink for Recorder {
        fn scope(&mut self, _: &str) -> io::Result<()> {
            Ok(())
        }
        fn upscope(&mut self) -> io::Result<()> {
            Ok(())
        }
        fn var(&mut self, _: &str, _: u32) -> io::Result<usize> {
            Ok(0)
        }
        fn end_definitions(&mut self) -> io::Result<()> {
            Ok(())
        }
        fn time(&mut self, t: u64) -> io::Result<()> {
            self.0.lock().unwrap().push(ops::Op::Time(t));
            Ok(())
        }
        fn change(&mut self, var: usize, value: u64) -> io::Result<()> {
            self.0.lock().unwrap().push(ops::Op::Change(var, value));
            Ok(())
        }
        fn finish(self: Box<Self>) -> io::Result<()> {
            Ok(())
        }
    }

    /// Batches and single changes reach the writer thread in order, with buffers reused.
    #[test]
    fn threaded_keeps_the_order() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut s: Box<dyn WaveSink> = Box::new(Threaded::new(Box::new(Recorder(seen.clone()))));
        s.end_definitions().unwrap();
        let mut expect = Vec::new();
        let mut b = Vec::new();
        for t in 0..3 * BATCH as u64 {
            if t % 1000 == 0 {
                // One by one, then in bulk.
                s.time(t).unwrap();
                s.change(1, t).unwrap();
                expect.extend([ops::Op::Time(t), ops::Op::Change(1, t)]);
            } else {
                ops::push_time(&mut b, t);
                ops::push_change(&mut b, 2, t << 20);
                expect.extend([ops::Op::Time(t), ops::Op::Change(2, t << 20)]);
            }
            if b.len() >= BATCH || t % 1000 == 999 {
                s.ops(&mut b).unwrap();
                assert!(b.is_empty());
            }
        }
        s.ops(&mut b).unwrap();
        s.finish().unwrap();
        assert_eq!(*seen.lock().unwrap(), expect);
    }
}
