//! Where waveform values go: a small interface with a VCD back-end (the `vcd` crate) and an
//! FST back-end (the `fst-writer` crate), so both files get the same hierarchy.

use std::fs::File;
use std::io::{self, BufWriter};
use std::path::Path;

/// A waveform writer: declare scopes and variables, then timestamps and value changes.
pub trait WaveSink {
    fn scope(&mut self, name: &str) -> io::Result<()>;
    fn upscope(&mut self) -> io::Result<()>;
    /// Declare a `width`-bit variable in the current scope; returns its handle.
    fn var(&mut self, name: &str, width: u32) -> io::Result<usize>;
    fn end_definitions(&mut self) -> io::Result<()>;
    /// Start the values of cycle `t` (strictly increasing).
    fn time(&mut self, t: u64) -> io::Result<()>;
    fn change(&mut self, var: usize, value: u64) -> io::Result<()>;
    fn finish(self: Box<Self>) -> io::Result<()>;
}

/// Writes a Value Change Dump with the `vcd` crate: `$timescale` is one clock period
/// (`clock_ns` ns) and timestamps are cycle numbers.
pub struct VcdSink {
    w: vcd::Writer<BufWriter<File>>,
    ids: Vec<(vcd::IdCode, u32)>,
    /// Each variable's id code as text, for writing value changes directly.
    id_text: Vec<Vec<u8>>,
    first_time: bool,
    in_dumpvars: bool,
}

impl VcdSink {
    pub fn create(path: &Path, clock_ns: u32, comment: &str) -> io::Result<VcdSink> {
        let mut w = vcd::Writer::new(BufWriter::with_capacity(1 << 20, File::create(path)?));
        w.comment(comment)?;
        w.version(concat!("flitwave ", env!("CARGO_PKG_VERSION")))?;
        w.timescale(clock_ns, vcd::TimescaleUnit::NS)?;
        Ok(VcdSink { w, ids: Vec::new(), id_text: Vec::new(), first_time: true, in_dumpvars: false })
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
        let index = (width > 1).then_some(vcd::ReferenceIndex::Range(width as i32 - 1, 0));
        let id = self.w.add_var(vcd::VarType::Wire, width, name, index)?;
        self.ids.push((id, width));
        self.id_text.push(id.to_string().into_bytes());
        Ok(self.ids.len() - 1)
    }
    fn end_definitions(&mut self) -> io::Result<()> {
        self.w.enddefinitions()
    }
    fn time(&mut self, t: u64) -> io::Result<()> {
        if self.in_dumpvars {
            self.in_dumpvars = false;
            self.w.end()?;
        }
        self.w.timestamp(t)?;
        if self.first_time {
            // The first timestamp carries every signal's initial value.
            self.first_time = false;
            self.in_dumpvars = true;
            self.w.begin(vcd::SimulationCommand::Dumpvars)?;
        }
        Ok(())
    }
    fn change(&mut self, var: usize, value: u64) -> io::Result<()> {
        use std::io::Write;
        let width = self.ids[var].1;
        let mut buf = [0u8; 80];
        let mut n = 0;
        if width == 1 {
            buf[0] = b'0' + (value & 1) as u8;
            n = 1;
        } else {
            // `b<bits> <id>`, leading zeros dropped (VCD left-extends with 0).
            let top = (64 - value.leading_zeros()).clamp(1, width);
            buf[0] = b'b';
            for i in 0..top {
                buf[1 + i as usize] = b'0' + ((value >> (top - 1 - i)) & 1) as u8;
            }
            n += 1 + top as usize;
            buf[n] = b' ';
            n += 1;
        }
        let id = &self.id_text[var];
        buf[n..n + id.len()].copy_from_slice(id);
        n += id.len();
        buf[n] = b'\n';
        self.w.writer().write_all(&buf[..n + 1])
    }
    fn finish(mut self: Box<Self>) -> io::Result<()> {
        use std::io::Write;
        if self.in_dumpvars {
            self.w.end()?;
        }
        self.w.writer().flush()
    }
}

/// Writes a Fast Signal Trace with the `fst-writer` crate, times in ns (cycle × `clock_ns`).
pub struct FstSink {
    header: Option<fst_writer::FstHeaderWriter<BufWriter<File>>>,
    body: Option<fst_writer::FstBodyWriter<BufWriter<File>>>,
    ids: Vec<(fst_writer::FstSignalId, u32)>,
    text: Vec<u8>,
    clock_ns: u64,
}

/// Flush FST value changes to disk every this many buffered bytes (small enough that the
/// writer's buffer stays in cache when it is compressed).
const FST_FLUSH_AT: usize = 32 << 20;

impl FstSink {
    pub fn create(path: &Path, clock_ns: u32) -> io::Result<FstSink> {
        // FST stores times in units of 10^exponent s: write cycles * clock_ns in ns.
        let info = fst_writer::FstInfo {
            start_time: 0,
            timescale_exponent: -9,
            version: concat!("flitwave ", env!("CARGO_PKG_VERSION")).to_string(),
            date: String::new(),
            file_type: fst_writer::FstFileType::Verilog,
        };
        let out = BufWriter::with_capacity(1 << 20, File::create(path)?);
        let header = fst_writer::FstHeaderWriter::new(out, &info).map_err(fst_err)?;
        Ok(FstSink { header: Some(header), body: None, ids: Vec::new(), text: Vec::with_capacity(64), clock_ns: clock_ns as u64 })
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
        let b = self.body.as_mut().expect("FST body");
        if b.size() >= FST_FLUSH_AT {
            b.flush().map_err(fst_err)?;
        }
        b.time_change(t * self.clock_ns).map_err(fst_err)
    }
    fn change(&mut self, var: usize, value: u64) -> io::Result<()> {
        let (id, width) = self.ids[var];
        self.text.clear();
        self.text.extend((0..width).rev().map(|i| b'0' + (i < 64 && (value >> i) & 1 == 1) as u8));
        self.body.as_mut().expect("FST body").signal_change(id, &self.text).map_err(fst_err)
    }
    fn finish(mut self: Box<Self>) -> io::Result<()> {
        use std::io::Write;
        let mut out = self.body.take().expect("FST body").finish().map_err(fst_err)?;
        out.flush()
    }
}

/// One recorded operation of the value-change stream.
#[derive(Clone, Copy, Debug)]
enum Op {
    Time(u64),
    Change(u32, u64),
}

const BATCH: usize = 1 << 16;

/// Runs another sink on a writer thread: the simulation hands over batches of timestamps
/// and value changes, and encoding and file output (VCD text, FST compression) overlap
/// with simulation. Declarations happen on the caller's thread, before the writer starts.
pub struct Threaded {
    inner: Option<Box<dyn WaveSink + Send>>,
    tx: Option<std::sync::mpsc::SyncSender<Vec<Op>>>,
    worker: Option<std::thread::JoinHandle<io::Result<()>>>,
    batch: Vec<Op>,
}

impl Threaded {
    pub fn new(inner: Box<dyn WaveSink + Send>) -> Threaded {
        Threaded { inner: Some(inner), tx: None, worker: None, batch: Vec::with_capacity(BATCH) }
    }

    fn send(&mut self) -> io::Result<()> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let batch = std::mem::replace(&mut self.batch, Vec::with_capacity(BATCH));
        match &self.tx {
            Some(tx) if tx.send(batch).is_ok() => Ok(()),
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
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<Op>>(4);
        self.tx = Some(tx);
        self.worker = Some(std::thread::spawn(move || -> io::Result<()> {
            for batch in rx {
                for op in batch {
                    match op {
                        Op::Time(t) => inner.time(t)?,
                        Op::Change(v, x) => inner.change(v as usize, x)?,
                    }
                }
            }
            inner.finish()
        }));
        Ok(())
    }
    fn time(&mut self, t: u64) -> io::Result<()> {
        if self.batch.len() >= BATCH {
            self.send()?;
        }
        self.batch.push(Op::Time(t));
        Ok(())
    }
    fn change(&mut self, var: usize, value: u64) -> io::Result<()> {
        self.batch.push(Op::Change(var as u32, value));
        Ok(())
    }
    fn finish(mut self: Box<Self>) -> io::Result<()> {
        let sent = self.send();
        self.tx = None;
        let result = match self.worker.take() {
            Some(w) => w.join().map_err(|_| io::Error::other("the waveform writer panicked"))?,
            None => Ok(()),
        };
        result.and(sent)
    }
}
