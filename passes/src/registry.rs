//! The list of HIR's passes and their registration with MLIR's pass registry
//! (through the C++ shim `hirRegisterPass`, since the C API cannot register
//! a pass by name).

use crate::{conversion, fusion, host};
use melior::pass::Pass;
use std::{ffi::c_void, sync::Once};

/// A pass as the registry knows it.
pub struct PassInfo {
    /// The name pipelines and `hir-opt` flags use.
    pub argument: &'static str,
    /// The op it runs on (`builtin.module`, `func.func`).
    pub anchor: &'static str,
    /// Creates a fresh instance.
    pub create: fn() -> Pass,
}

/// Every HIR pass, in pipeline order.
pub const PASSES: &[PassInfo] = &[
    PassInfo {
        argument: fusion::verify_sharding::ARGUMENT,
        anchor: fusion::verify_sharding::ANCHOR,
        create: fusion::verify_sharding::create,
    },
    PassInfo {
        argument: fusion::propagate_sharding::ARGUMENT,
        anchor: fusion::propagate_sharding::ANCHOR,
        create: fusion::propagate_sharding::create,
    },
    PassInfo {
        argument: fusion::insert_resharding::ARGUMENT,
        anchor: fusion::insert_resharding::ANCHOR,
        create: fusion::insert_resharding::create,
    },
    PassInfo {
        argument: host::insert_dealloc::ARGUMENT,
        anchor: host::insert_dealloc::ANCHOR,
        create: host::insert_dealloc::create,
    },
    PassInfo {
        argument: conversion::comm_to_llvm::ARGUMENT,
        anchor: conversion::comm_to_llvm::ANCHOR,
        create: conversion::comm_to_llvm::create,
    },
    PassInfo {
        argument: conversion::host_to_llvm::ARGUMENT,
        anchor: conversion::host_to_llvm::ANCHOR,
        create: conversion::host_to_llvm::create,
    },
];

unsafe extern "C" fn create_registered(user_data: *mut c_void) -> mlir_sys::MlirPass {
    // SAFETY: `user_data` is the `PassInfo` given at registration, a `'static`.
    let info = unsafe { &*(user_data as *const PassInfo) };
    (info.create)().to_raw()
}

/// Registers every HIR pass, and the upstream ones of
/// [`conversion::LLVM_PIPELINE`], with MLIR's global pass registry; idempotent.
pub fn register_all() {
    static REGISTER: Once = Once::new();
    REGISTER.call_once(|| {
        conversion::register_upstream();
        for info in PASSES {
            // SAFETY: `info` is `'static`; the callback only reads it.
            unsafe {
                hir_dialects::ffi::hirRegisterPass(
                    create_registered,
                    info as *const PassInfo as *mut c_void,
                )
            };
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use melior::{Context, pass::PassManager};

    #[test]
    fn every_pass_is_nameable_in_a_textual_pipeline() {
        register_all();
        // SAFETY: registration has no preconditions.
        unsafe { hir_dialects::ffi::hirRegisterUpstreamPasses() };
        let context = Context::new();
        hir_dialects::register_all(&context);
        for info in PASSES {
            let manager = PassManager::new(&context);
            let pipeline = match info.anchor {
                "builtin.module" => format!("builtin.module({},canonicalize)", info.argument),
                anchor => format!("builtin.module({anchor}({},canonicalize))", info.argument),
            };
            melior::utility::parse_pass_pipeline(manager.as_operation_pass_manager(), &pipeline)
                .unwrap_or_else(|error| panic!("{pipeline} does not parse: {error}"));
        }
    }
}
