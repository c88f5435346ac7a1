//! The list of HIR's passes and pipelines, and their registration with MLIR's
//! pass registry through the C++ shim `hirRegisterPass` (the C API can
//! neither register a pass by name nor give an external pass options).
//!
//! Each pass is a [`HirPass`] (`pass.rs`); the shim's `RustPass` owns one
//! instance and runs it directly on its op, so that each HIR pass is one MLIR
//! pass in IR dumps, timings and crash reproducers. Options are strings on
//! the C++ side (so that `arg{opt=value}` parses and `--help` lists them) and
//! are parsed and checked on the Rust side, once for all passes, by
//! [`PassOptions`].

use crate::pass::{HirPass, NUM_STREAMS, OptionInfo, PassInfo, PassOptions, PipelineInfo};
use crate::{comm, conversion, fusion, host, pipeline};
use melior::{StringRef, ir::OperationRef};
use mlir_sys::{MlirOpPassManager, MlirOperation, MlirStringCallback, MlirStringRef};
use std::{
    ffi::{CString, c_char, c_void},
    sync::Once,
};

/// Parts each ring step's transfer and compute are split into.
pub const CHUNKS: OptionInfo = OptionInfo {
    name: "chunks",
    description: "Parts each ring step's transfer and compute are split into (0: the pass chooses, 1: whole steps)",
    default: "0",
};

/// Every HIR pass, in pipeline order.
pub const PASSES: &[PassInfo] = &[
    PassInfo {
        argument: conversion::shard_to_fusion::ARGUMENT,
        description: "Import a program of upstream shard annotations over linalg and arith ops on tensors into fusion",
        anchor: conversion::shard_to_fusion::ANCHOR,
        options: &[],
        create: |_| Ok(conversion::shard_to_fusion::create()),
    },
    PassInfo {
        argument: fusion::verify_sharding::ARGUMENT,
        description: "Check distributions against meshes and across each op",
        anchor: fusion::verify_sharding::ANCHOR,
        options: &[],
        create: |_| Ok(fusion::verify_sharding::create()),
    },
    PassInfo {
        argument: fusion::propagate_sharding::ARGUMENT,
        description: "Infer the distributions of unannotated tensors from their neighbours",
        anchor: fusion::propagate_sharding::ANCHOR,
        options: &[],
        create: |_| Ok(fusion::propagate_sharding::create()),
    },
    PassInfo {
        argument: fusion::differentiate::ARGUMENT,
        description: "Add a function's forward (returning its saved activations) and its backward (the vector-Jacobian product), in fusion",
        anchor: fusion::differentiate::ANCHOR,
        options: &[
            OptionInfo {
                name: "function",
                description: "The function to differentiate (empty: the module's only public function)",
                default: "",
            },
            OptionInfo {
                name: "wrt",
                description: "The arguments that get gradients, as comma-separated positions (empty: every floating-point argument)",
                default: "",
            },
            OptionInfo {
                name: "saved",
                description: "What the backward reads of a forward set that gathers: gathered (the forward saves the gathered tensor) or recompute (the backward gathers its input again)",
                default: "gathered",
            },
        ],
        create: |options| {
            let options = fusion::differentiate::DifferentiateOptions::parse(options)?;
            Ok(fusion::differentiate::create(options))
        },
    },
    PassInfo {
        argument: fusion::insert_resharding::ARGUMENT,
        description: "Isolate every resharding into its own fusion.set",
        anchor: "",
        options: &[],
        create: |_| Ok(fusion::insert_resharding::create()),
    },
    PassInfo {
        argument: conversion::fusion_to_host::ARGUMENT,
        description: "Bufferize a fusion program into host compute and communication",
        anchor: conversion::fusion_to_host::ANCHOR,
        options: &[],
        create: |_| Ok(conversion::fusion_to_host::create()),
    },
    PassInfo {
        argument: host::auto_stream::ARGUMENT,
        description: "In a function without stream loops, loop each allgather-into-GEMM and GEMM-into-reduce-scatter over one chunk per device",
        anchor: host::auto_stream::ANCHOR,
        options: &[OptionInfo {
            name: "collectives",
            description: "How the loops' collectives run: rings (whole next to the loop, for host-p2p-pipeline) or rooted (one broadcast or reduce per iteration)",
            default: "rings",
        }],
        create: |options| Ok(host::auto_stream::create(options.choice("collectives")?)),
    },
    PassInfo {
        argument: host::stream_parallelize::ARGUMENT,
        description: "Loop over the stream axis of every stream-parallel op, one pool stream per iteration",
        anchor: host::stream_parallelize::ANCHOR,
        options: &[NUM_STREAMS],
        create: |options| {
            let streams = crate::options::to_i64(options.count(NUM_STREAMS.name)?)?;
            Ok(host::stream_parallelize::create(streams))
        },
    },
    PassInfo {
        argument: host::presplit_chunks::ARGUMENT,
        description: "View an allgather or reduce-scatter whose stream loop takes one chunk per team member in the pre-split layout",
        anchor: host::presplit_chunks::ANCHOR,
        options: &[],
        create: |_| Ok(host::presplit_chunks::create()),
    },
    PassInfo {
        argument: host::p2p_pipeline::ARGUMENT,
        description: "Turn collectives over a stream loop's axis into P2P ring pipelines",
        anchor: host::p2p_pipeline::ANCHOR,
        options: &[
            OptionInfo {
                name: "backend",
                description: "How the ring moves data: nccl (coalesced send/recv) or cuda (CUDA-IPC copies)",
                default: "nccl",
            },
            CHUNKS,
            OptionInfo {
                name: "allreduce",
                description: "An allreduce after the stream loop that writes its input block by block: whole, or ring (a reduce-scatter ring, then an allgather ring)",
                default: "whole",
            },
            OptionInfo {
                name: "stream-sync",
                description: "How a ring step's stream waits for the previous step's: step (for all of it, the transfers on the caller's stream) or comm (allgather rings: the transfers on the steps' streams, each step's stream waiting only for the previous step's transfers, guarded at the wrap; whole steps)",
                default: "step",
            },
        ],
        create: |options| {
            let backend = options.choice("backend")?;
            let chunks = options.count(CHUNKS.name)?;
            let allreduce = options.choice("allreduce")?;
            let sync = options.choice("stream-sync")?;
            host::p2p_pipeline::check_chunks(sync, chunks, "stream-sync", CHUNKS.name)?;
            let chunks = crate::options::to_i64(chunks)?;
            Ok(host::p2p_pipeline::create(backend, chunks, allreduce, sync))
        },
    },
    PassInfo {
        argument: host::broadcast_pipeline::ARGUMENT,
        description: "Turn an allgather before a stream loop into one rooted broadcast per iteration",
        anchor: host::broadcast_pipeline::ANCHOR,
        options: &[],
        create: |_| Ok(host::broadcast_pipeline::create()),
    },
    PassInfo {
        argument: host::reduce_pipeline::ARGUMENT,
        description: "Turn a reduce-scatter after a stream loop into one rooted reduce per iteration",
        anchor: host::reduce_pipeline::ANCHOR,
        options: &[],
        create: |_| Ok(host::reduce_pipeline::create()),
    },
    PassInfo {
        argument: host::fold_transpose::ARGUMENT,
        description: "Read a transposed copy that only GEMMs read as a transposed view of its source (memref.transpose), so the copy goes",
        anchor: host::fold_transpose::ANCHOR,
        options: &[],
        create: |_| Ok(host::fold_transpose::create()),
    },
    PassInfo {
        argument: host::fuse_epilogue::ARGUMENT,
        description: "Fold an activation (host.gelu) into the epilogue of the GEMM that writes its input, when nothing else uses that buffer",
        anchor: host::fuse_epilogue::ANCHOR,
        options: &[],
        create: |_| Ok(host::fuse_epilogue::create()),
    },
    PassInfo {
        argument: host::fuse_elementwise::ARGUMENT,
        description: "Group each chain of elementwise host ops (and broadcasts of their inputs) into one host.fused kernel",
        anchor: host::fuse_elementwise::ANCHOR,
        options: &[],
        create: |_| Ok(host::fuse_elementwise::create()),
    },
    PassInfo {
        argument: host::privatize_buffers::ARGUMENT,
        description: "Allocate in each stream loop iteration the slice of a buffer that only that iteration uses",
        anchor: host::privatize_buffers::ANCHOR,
        options: &[],
        create: |_| Ok(host::privatize_buffers::create()),
    },
    PassInfo {
        argument: host::insert_dealloc::ARGUMENT,
        description: "Free every host.alloc after its last use",
        anchor: host::insert_dealloc::ANCHOR,
        options: &[],
        create: |_| Ok(host::insert_dealloc::create()),
    },
    PassInfo {
        argument: host::check_bounds::ARGUMENT,
        description: "Check at run time that every memref.load and memref.store index is inside its axis",
        anchor: host::check_bounds::ANCHOR,
        options: &[],
        create: |_| Ok(host::check_bounds::create()),
    },
    PassInfo {
        argument: host::verify_deallocs::ARGUMENT,
        description: "Check that no memref is used or freed again after a memref.dealloc or host.dealloc frees it",
        anchor: host::verify_deallocs::ANCHOR,
        options: &[],
        create: |_| Ok(host::verify_deallocs::create()),
    },
    PassInfo {
        argument: host::verify_loops::ARGUMENT,
        description: "Check that every scf.for and host.stream_for with a constant step steps forward",
        anchor: host::verify_loops::ANCHOR,
        options: &[],
        create: |_| Ok(host::verify_loops::create()),
    },
    PassInfo {
        argument: comm::verify_requests::ARGUMENT,
        description: "Check that every !comm.request is waited for exactly once on every path",
        anchor: comm::verify_requests::ANCHOR,
        options: &[],
        create: |_| Ok(comm::verify_requests::create()),
    },
    PassInfo {
        argument: host::lower_stream_for::ARGUMENT,
        description: "Expand every host.stream_for into its fork loop and its work loop of stream ops",
        anchor: host::lower_stream_for::ANCHOR,
        options: &[],
        create: |_| Ok(host::lower_stream_for::create()),
    },
    PassInfo {
        argument: conversion::comm_to_llvm::ARGUMENT,
        description: "Lower comm ops to calls of the runtime's C ABI",
        anchor: conversion::comm_to_llvm::ANCHOR,
        options: &[],
        create: |_| Ok(conversion::comm_to_llvm::create()),
    },
    PassInfo {
        argument: conversion::host_to_llvm::ARGUMENT,
        description: "Lower host ops to calls of the runtime's C ABI",
        anchor: conversion::host_to_llvm::ANCHOR,
        options: &[],
        create: |_| Ok(conversion::host_to_llvm::create()),
    },
    PassInfo {
        argument: conversion::scope_loop_allocas::ARGUMENT,
        description: "Give back each loop iteration's stack: a stack save and restore around loop bodies that allocate stack",
        anchor: conversion::scope_loop_allocas::ANCHOR,
        options: &[],
        create: |_| Ok(conversion::scope_loop_allocas::create()),
    },
];

/// Every HIR pipeline.
pub const PIPELINES: &[PipelineInfo] = &[pipeline::HIR_LOWER];

fn c_string(text: &str) -> *const c_char {
    // Registered strings live as long as the process's registry.
    CString::new(text)
        .expect("registry strings hold no NUL")
        .into_raw()
}

fn c_options(options: &'static [OptionInfo]) -> *const hir_dialects::ffi::PassOption {
    let options: Vec<_> = options
        .iter()
        .map(|option| hir_dialects::ffi::PassOption {
            name: c_string(option.name),
            description: c_string(option.description),
            default_value: c_string(option.default),
        })
        .collect();
    options.leak().as_ptr()
}

/// The option values the C++ side passes, as `PassOptions`.
///
/// # Safety
/// `values` points to `declared.len()` valid string refs.
unsafe fn read_options<'a>(
    declared: &'static [OptionInfo],
    values: *const MlirStringRef,
) -> Result<PassOptions<'a>, String> {
    let values = (0..declared.len())
        // SAFETY: the caller guarantees `declared.len()` values.
        .map(|index| unsafe { *values.add(index) })
        // melior reads an empty string's last byte: an empty value is "".
        .map(|raw| match raw.length {
            0 => Ok(""),
            // SAFETY: a valid string ref of `length` bytes.
            _ => unsafe { StringRef::from_raw(raw) }.as_str(),
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| "option values must be UTF-8".to_owned())?;
    Ok(PassOptions::given(declared, values))
}

fn report(message: &str, on_error: MlirStringCallback, user_data: *mut c_void) {
    if let Some(on_error) = on_error {
        // SAFETY: the callback only reads the string during the call.
        unsafe { on_error(StringRef::new(message).to_raw(), user_data) };
    }
}

/// An instance as the C++ side holds it: a thin pointer to the boxed pass.
type Instance = Box<dyn HirPass>;

unsafe extern "C" fn create_pass(
    user_data: *mut c_void,
    values: *const MlirStringRef,
    _num_values: isize,
    on_error: MlirStringCallback,
    error_user_data: *mut c_void,
) -> *mut c_void {
    // SAFETY: `user_data` is the `'static` `PassInfo` given at registration,
    // and the shim passes one value per declared option.
    let info = unsafe { &*(user_data as *const PassInfo) };
    match unsafe { read_options(info.options, values) }.and_then(|options| (info.create)(&options))
    {
        Ok(pass) => Box::into_raw(Box::new(pass)).cast(),
        Err(message) => {
            report(&message, on_error, error_user_data);
            std::ptr::null_mut()
        }
    }
}

unsafe extern "C" fn run_pass(instance: *mut c_void, op: MlirOperation) -> bool {
    // SAFETY: `instance` is a live pointer `create_pass` returned, which the
    // shim runs on one thread at a time; `op` is the live op the pass runs on.
    let pass = unsafe { &mut *instance.cast::<Instance>() };
    pass.run(unsafe { OperationRef::from_raw(op) })
}

unsafe extern "C" fn destroy_pass(instance: *mut c_void) {
    // SAFETY: `instance` came from `create_pass` and is destroyed once.
    drop(unsafe { Box::from_raw(instance.cast::<Instance>()) });
}

unsafe extern "C" fn build_pipeline(
    user_data: *mut c_void,
    pass_manager: MlirOpPassManager,
    values: *const MlirStringRef,
    _num_values: isize,
    on_error: MlirStringCallback,
    error_user_data: *mut c_void,
) -> bool {
    // SAFETY: as in `create_pass`, for the `'static` `PipelineInfo`.
    let info = unsafe { &*(user_data as *const PipelineInfo) };
    let elements = match unsafe { read_options(info.options, values) }
        .and_then(|options| (info.build)(&options))
    {
        Ok(elements) => elements,
        Err(message) => {
            report(&message, on_error, error_user_data);
            return false;
        }
    };
    // SAFETY: the pass manager is live during the call; errors go to `on_error`.
    let result = unsafe {
        mlir_sys::mlirOpPassManagerAddPipeline(
            pass_manager,
            StringRef::new(&elements).to_raw(),
            on_error,
            error_user_data,
        )
    };
    result.value != 0
}

/// Registers every HIR pass and pipeline, and the upstream passes of
/// [`conversion::LLVM_PIPELINE`], with MLIR's global pass registry; idempotent.
pub fn register_all() {
    static REGISTER: Once = Once::new();
    REGISTER.call_once(|| {
        conversion::register_upstream();
        for info in PASSES {
            let c_info = Box::leak(Box::new(hir_dialects::ffi::PassInfo {
                argument: c_string(info.argument),
                description: c_string(info.description),
                anchor: c_string(info.anchor),
                options: c_options(info.options),
                num_options: info.options.len() as isize,
                create: create_pass,
                run: run_pass,
                destroy: destroy_pass,
                user_data: info as *const PassInfo as *mut c_void,
            }));
            // SAFETY: `c_info` and everything it points to are leaked, hence `'static`.
            unsafe { hir_dialects::ffi::hirRegisterPass(c_info) };
        }
        for info in PIPELINES {
            let c_info = Box::leak(Box::new(hir_dialects::ffi::PipelineInfo {
                argument: c_string(info.argument),
                description: c_string(info.description),
                options: c_options(info.options),
                num_options: info.options.len() as isize,
                build: build_pipeline,
                user_data: info as *const PipelineInfo as *mut c_void,
            }));
            // SAFETY: as above.
            unsafe { hir_dialects::ffi::hirRegisterPassPipeline(c_info) };
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use melior::{Context, pass::PassManager};

    fn context() -> Context {
        register_all();
        // MLIR's registry is not thread-safe and tests run in parallel.
        static UPSTREAM: Once = Once::new();
        // SAFETY: registration has no preconditions.
        UPSTREAM.call_once(|| unsafe { hir_dialects::ffi::hirRegisterUpstreamPasses() });
        let context = Context::new();
        hir_dialects::register_all(&context);
        context
    }

    fn parses(context: &Context, pipeline: &str) -> Result<(), String> {
        let manager = PassManager::new(context);
        melior::utility::parse_pass_pipeline(manager.as_operation_pass_manager(), pipeline)
            .map_err(|error| error.to_string())
    }

    #[test]
    fn every_pass_is_nameable_in_a_textual_pipeline() {
        let context = context();
        for info in PASSES {
            let pipeline = match info.anchor {
                crate::ops::MODULE | "" => {
                    format!("builtin.module({},canonicalize)", info.argument)
                }
                anchor => format!("builtin.module({anchor}({},canonicalize))", info.argument),
            };
            parses(&context, &pipeline)
                .unwrap_or_else(|error| panic!("{pipeline} does not parse: {error}"));
        }
    }

    #[test]
    fn every_pipeline_builds_with_its_defaults() {
        let context = context();
        for info in PIPELINES {
            (info.build)(&PassOptions::defaults(info.options))
                .unwrap_or_else(|error| panic!("{}: {error}", info.argument));
            let pipeline = format!("builtin.module({})", info.argument);
            parses(&context, &pipeline)
                .unwrap_or_else(|error| panic!("{pipeline} does not parse: {error}"));
        }
    }

    /// Runs `pipeline` on `source` with the context's threads, so that the
    /// pass manager runs copies of the passes (each with its own instance).
    fn runs(context: &Context, pipeline: &str, source: &str) -> Result<String, String> {
        let manager = PassManager::new(context);
        melior::utility::parse_pass_pipeline(manager.as_operation_pass_manager(), pipeline)
            .map_err(|error| error.to_string())?;
        let mut module = melior::ir::Module::parse(context, source).expect("the source parses");
        manager
            .run(&mut module)
            .map_err(|error| error.to_string())?;
        Ok(module.as_operation().to_string())
    }

    #[test]
    fn passes_run_directly_on_every_function() {
        let context = context();
        context.attach_diagnostic_handler(|_| true);
        let functions: String = (0..8)
            .map(|index| {
                format!(
                    "func.func @f{index}() {{ %b = host.alloc : memref<4xf32> \
                     host.neg ins(%b : memref<4xf32>) outs(%b : memref<4xf32>) return }}\n"
                )
            })
            .collect();
        let lowered = runs(
            &context,
            "builtin.module(func.func(host-insert-dealloc))",
            &functions,
        )
        .expect("host-insert-dealloc runs");
        assert_eq!(lowered.matches("host.dealloc").count(), 8, "{lowered}");
        // A pass that fails (an unknown mesh) fails the pipeline.
        let invalid = "func.func @f(%a: tensor<8xf32, #fusion.dist<@nope, [serial]>>) { return }";
        assert!(runs(&context, "builtin.module(fusion-verify-sharding)", invalid).is_err());
    }

    #[test]
    fn options_are_checked() {
        const OPTIONS: &[OptionInfo] = &[OptionInfo {
            name: "n",
            description: "",
            default: "0",
        }];
        let options = PassOptions::defaults(OPTIONS);
        assert_eq!(
            options.positive("n").unwrap_err(),
            "option 'n' must be an integer from 1 to 9223372036854775807, not '0'"
        );
        assert!(
            options
                .choice::<hir_abi::Transport>("n")
                .unwrap_err()
                .contains("nccl|cuda")
        );
    }
}
