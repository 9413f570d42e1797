//! # traces — observers of a run
//!
//! Fed by the kernel through [`fabric::probe::Probe`] and the fabric's read-only state, so
//! the routers know nothing of files: [`tracer`] writes waveforms (VCD, FST) through
//! [`sink`], [`gtkw`] writes GTKWave save files, and [`stats`] summarizes buffer occupancy,
//! stalls and link utilization for sizing.

pub mod gtkw;
pub mod sink;
pub mod stats;
pub mod tracer;

pub use sink::{Discard, FstSink, SizeLimit, Threaded, VcdSink, WaveSink};
pub use tracer::{TraceOptions, Tracer};
