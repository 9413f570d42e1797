//! # traces — observers of a run
//!
//! Fed by the kernel through [`fabric::probe::Probe`] and the fabric's read-only state, so
//! the routers know nothing of files. [`stats`] summarizes buffer occupancy for sizing.

pub mod stats;
