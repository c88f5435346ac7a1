//! HIR: a compiler for multi-GPU programs as an MLIR dialect stack.
//!
//! For melior users: [`register_all`] registers HIR's dialects (and the
//! upstream ones it lowers through) with a context; [`passes::register_all`]
//! makes HIR's passes nameable in textual pipelines.

pub use hir_dialects as dialects;
pub use hir_dialects::register_all;
pub use hir_passes as passes;
