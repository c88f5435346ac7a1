//! HIR: a compiler for multi-GPU programs as an MLIR dialect stack.
//!
//! For melior users: [`register_all`] registers HIR's dialects (and the
//! upstream ones it lowers through or imports from) with a context;
//! [`passes::register_all`] makes HIR's passes nameable in textual
//! pipelines, and [`register_upstream_passes`] MLIR's generic ones
//! (`canonicalize`, `cse`, `inline`, `symbol-dce`, ...) and shard's
//! (`sharding-propagation`, `shard-partition`). [`melior`] is the melior HIR is built on,
//! re-exported so that an embedder's types are HIR's.
//!
//! To compile and run: [`compile::compile`] parses, lowers and JIT-compiles
//! a program's text; [`compile::Compiled::run`] runs it on the ranks of a
//! [`runtime`] world (cpu or cuda) on the caller's arrays. [`program`] and
//! [`jit`] are the steps it is made of, [`context`] the contexts; [`cache`]
//! keeps what the JIT compiled on disk, so that compiling a program again
//! compiles nothing; [`tune`] lists the overlap variants a run may time and
//! keeps the fastest beside it; [`differentiate`] makes a program's forward
//! and backward programs (`fusion-differentiate`). [`World`] runs programs
//! on a runtime world that a failed call leaves healthy (started anew) or
//! closed, never failed for the next call.

pub mod arguments;
pub mod cache;
pub mod compile;
pub mod context;
pub mod differentiate;
pub mod jit;
pub mod program;
pub mod tune;
pub mod world;

pub use world::World;

pub use hir_dialects as dialects;
pub use hir_dialects::register_all;
pub use hir_passes as passes;
pub use hir_runtime as runtime;
pub use melior;

/// Registers MLIR's generic transform passes and shard's passes with its
/// global pass registry, so that textual pipelines can name them beside
/// HIR's; idempotent.
pub fn register_upstream_passes() {
    static REGISTER: std::sync::Once = std::sync::Once::new();
    // SAFETY: registers passes in MLIR's global registry; takes nothing.
    REGISTER.call_once(|| unsafe { hir_dialects::ffi::hirRegisterUpstreamPasses() });
}
