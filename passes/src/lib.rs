//! HIR's passes, written in Rust on melior, one pass a file, grouped by stage
//! (`fusion/`, `host/`, `comm/`, `conversion/`). [`register_all`] makes each
//! nameable in textual pipelines and on `hir-opt`'s command line.

mod builders;
pub mod comm;
pub mod conversion;
mod diagnostics;
pub mod fusion;
pub mod host;
pub mod ir;
mod ops;
pub mod options;
mod pass;
mod patterns;
pub mod pipeline;
mod registry;
mod rewrite;
mod upstream;

pub use host::p2p_pipeline::{Allreduce, StreamSync};
pub use options::Choice;
pub use pass::{HirPass, OptionInfo, PassInfo, PassOptions, PipelineInfo};
pub use pipeline::{Allgather, Fuse, LowerOptions, Overlap, P2p, ReduceScatter};
pub use registry::{PASSES, PIPELINES, register_all};
