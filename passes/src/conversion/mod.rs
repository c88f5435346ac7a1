//! Passes that change the level of the IR: upstream `shard` programs to
//! `fusion`; `fusion` to `host` and `comm`;
//! `host` and `comm` ops to calls of the runtime's C ABI, then, with
//! upstream passes, everything to the LLVM dialect ([`LLVM_PIPELINE`]).

pub mod comm_to_llvm;
mod fused_program;
pub mod fusion_to_host;
mod handles;
pub mod host_to_llvm;
mod runtime_calls;
pub mod scope_loop_allocas;
pub mod shard_to_fusion;

use melior::pass::{conversion, memref};

/// The passes, in order, that take a host program (`host`, `comm`, `scf`,
/// `arith`, `memref`, `func`) to the LLVM dialect, as the body of a
/// `builtin.module(...)` pipeline; a pipeline from fusion appends it.
/// `expand-strided-metadata` turns the views of `host.select` into
/// `memref.reinterpret_cast` and `affine.apply` (hence `lower-affine`);
/// `reconcile-unrealized-casts` folds the casts the conversions leave
/// between them. `hir-scope-loop-allocas` comes right after the runtime
/// calls are made, so that the descriptors they take live for one loop
/// iteration. `host-verify-loops`, `host-verify-deallocs` and
/// `comm-verify-requests` first check that every loop with a constant step
/// steps forward, that no memory is used after its free, and that every
/// request is waited for exactly once on every path (they change nothing);
/// `host-check-bounds` makes every `memref.load` and `memref.store` check
/// its indices as the program runs.
/// `finalize-memref-to-llvm{use-generic-functions=true}` makes a program's own
/// `memref.alloc` and `memref.dealloc` call the runtime's checked heap
/// (`_mlir_memref_to_llvm_alloc`, `runtime/src/ffi/heap.rs`), not `malloc`,
/// whose null result the program would store through, and `free`, which a
/// second free of the same block corrupts.
pub const LLVM_PIPELINE: &str = "func.func(host-verify-loops),func.func(host-verify-deallocs),host-check-bounds,func.func(comm-verify-requests),convert-comm-to-llvm,convert-host-to-llvm,func.func(hir-scope-loop-allocas),convert-scf-to-cf,\
expand-strided-metadata,lower-affine,finalize-memref-to-llvm{use-generic-functions=true},convert-arith-to-llvm,\
convert-index-to-llvm,convert-func-to-llvm,convert-cf-to-llvm,reconcile-unrealized-casts";

/// Registers the upstream passes [`LLVM_PIPELINE`] names, so that textual
/// pipelines find them.
pub fn register_upstream() {
    conversion::register_scf_to_control_flow();
    memref::register_expand_strided_metadata_pass();
    conversion::register_lower_affine();
    conversion::register_finalize_mem_ref_to_llvm();
    conversion::register_arith_to_llvm();
    conversion::register_index_to_llvm();
    conversion::register_func_to_llvm();
    conversion::register_control_flow_to_llvm();
    conversion::register_reconcile_unrealized_casts();
}
