//! HIR's passes, written in Rust on melior, one pass a file, grouped by stage
//! (`fusion/`, `host/`, `conversion/`). [`register_all`] makes each
//! nameable in textual pipelines and on `hir-opt`'s command line.

pub mod conversion;
mod diagnostics;
pub mod fusion;
pub mod host;
mod registry;

pub use registry::{PASSES, PassInfo, register_all};
