//! What HIR's launchers share: `hir-run` (run one program) and `hir-bench`
//! (the overlap benchmarks) parse, lower and JIT-compile fusion programs the
//! same way, pass them the same buffers and run them on the same runtimes.
//!
//! - [`args`]: what the command lines share (bounds, value parsers, `--version`);
//! - [`log`]: logging (`HIR_LOG`) and progress on a terminal;
//! - [`memory`]: the end of a tool whose memory runs out where nothing can go on;
//! - [`program`], [`jit`] (from the `hir` crate): parsing, the entry's
//!   global signature, the lowering; MLIR's ExecutionEngine;
//! - [`ranks`]: running, timing and placing buffers on a runtime world's ranks;
//! - [`launch`]: the ranks as threads or one process each (the launcher,
//!   the rank's rendezvous and watchdog, the exchanges with rank 0);
//! - [`buffer`]: the arguments of each rank, packed for the entry;
//! - [`inputs`]: each rank's inputs made where they are held (random or read);
//! - [`stages`]: the start-up stages' times, for the debug log;
//! - [`tensor`], [`reference`]: f64 values and the reference evaluation;
//! - [`differentiate`]: a program's forward and backward (`fusion-differentiate`);
//! - [`programs`]: the benchmark programs, generated from parameters;
//! - [`blocks`]: Megatron's sequence-parallel transformer block, N stacked;
//! - [`mlp`]: Megatron's TP/SP MLP alone.

pub mod args;
pub mod blocks;
pub mod buffer;
pub mod differentiate;
pub mod inputs;
pub mod launch;
pub mod log;
pub mod memory;
pub mod mlp;
pub mod programs;
pub mod ranks;
pub mod reference;
pub mod stages;
pub mod tensor;

pub use hir::context::{context, format_diagnostic, print_diagnostic, registered_context};
pub use hir::{jit, program};
