//! What the NVRTC-compiled kernels made on demand (`fused.rs`,
//! `attention.rs`) share: the current context and its device's compute
//! capability, a source compiled to PTX, and PTX loaded as one entry.
//! Each caller keeps its own caches, keyed by what identifies its kernels.

use super::Check;
use crate::error::{Error, Result};
use cudarc::driver::{result as cu, sys};
use cudarc::nvrtc::{CompileOptions, compile_ptx_with_opts};
use std::ffi::CString;
use std::sync::Arc;

/// The current context, as an address (handles are context-wide and usable
/// from any thread that made the context current; an address is `Send`).
pub(super) fn current_context() -> Result<usize> {
    let mut context = std::ptr::null_mut();
    // SAFETY: writes the current context handle.
    unsafe { sys::cuCtxGetCurrent(&mut context) }
        .result()
        .check("finding the current context")?;
    Ok(context as usize)
}

/// The compute capability (major, minor) of the current context's device.
pub(super) fn current_capability() -> Result<(i32, i32)> {
    let mut device = 0;
    // SAFETY: writes the current context's device.
    unsafe { sys::cuCtxGetDevice(&mut device) }
        .result()
        .check("finding the current device")?;
    let attribute = |attribute| {
        // SAFETY: a device of the current context.
        unsafe { cu::device::get_attribute(device, attribute) }
            .check("reading the compute capability")
    };
    Ok((
        attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
        attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
    ))
}

/// The PTX of `source` (named `file` in NVRTC's messages) for
/// `compute_<arch>`; a failure names `what` was being compiled.
pub(super) fn compile(source: String, file: &str, arch: i32, what: &str) -> Result<Arc<CString>> {
    let options = CompileOptions {
        options: vec![format!("--gpu-architecture=compute_{arch}")],
        name: Some(file.into()),
        ..Default::default()
    };
    let ptx = compile_ptx_with_opts(source, options)
        .map_err(|error| Error::Cuda(format!("NVRTC cannot compile {what}: {error}")))?;
    Ok(Arc::new(CString::new(ptx.to_src()).expect("PTX is text")))
}

/// Loads `ptx` into the current context (every function now: see
/// [`super::kernels::load_functions`]) and returns its entry `entry`. The
/// module stays loaded for the process.
pub(super) fn load(ptx: &CString, entry: &str, what: &str) -> Result<sys::CUfunction> {
    function(load_module(ptx, what)?, entry, what)
}

/// Loads `ptx` into the current context, for the process (see [`load`]).
pub(super) fn load_module(ptx: &CString, what: &str) -> Result<sys::CUmodule> {
    // SAFETY: NUL-terminated PTX text.
    let module =
        unsafe { cu::module::load_data(ptx.as_ptr().cast()) }.check(&format!("loading {what}"))?;
    super::kernels::load_functions(module)?;
    Ok(module)
}

/// Entry `entry` of a loaded `module`.
pub(super) fn function(module: sys::CUmodule, entry: &str, what: &str) -> Result<sys::CUfunction> {
    let name = CString::new(entry).expect("no NUL");
    // SAFETY: the module stays loaded for the process.
    unsafe { cu::module::get_function(module, name) }.check(&format!("finding {what}"))
}
