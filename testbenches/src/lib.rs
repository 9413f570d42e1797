//! # testbenches — scenarios, the `flitwave` CLI, integration tests and benchmarks

pub mod cli;
pub mod compare_forwarding;
pub mod config;
pub mod cost_model;
pub mod demo;
pub mod input;
pub mod interrupt;
pub mod json;
pub mod list;
pub mod oom;
pub mod output;
pub mod parallel;
pub mod plot;
pub mod reproduce;
pub mod reproduce_notes;
pub mod reproduce_seidel;
pub mod rtl;
pub mod run;
pub mod size_buffers;
pub mod sweep;
pub mod sweep_plot;
pub mod varvarigos;
