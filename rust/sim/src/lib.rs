//! Sojourn's simulator: the discrete-event engine that drives the same core
//! and policies as the YARN shim, trace readers and workload generators,
//! metrics and reports, and the `sojourn` CLI behind them.

// The one `unsafe` is `allocator`'s call into mimalloc's C API.
#![deny(unsafe_code)]

#[allow(unsafe_code)]
pub mod allocator;
pub mod cli;
pub mod engine;
pub mod fidelity;
pub mod metrics;
pub mod pigeon_analysis;
pub mod real_results;
pub mod replay;
pub mod report;
pub mod run;
pub mod single_server;
pub mod sls_results;
pub mod workload;
