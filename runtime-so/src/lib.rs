//! `libhir_runtime.so`: the runtime's C ABI (every `hir_rt_*` and
//! `_mlir_ciface_hir_rt_*` symbol of `hir_abi::Entry::all()`, and the heap
//! of the program's `memref.alloc`, defined in `hir-runtime`'s `ffi`) as a
//! shared library, for a host program lowered to
//! LLVM IR and linked into a native executable, or run by
//! `mlir-runner --shared-libs`. It links no MLIR.
//!
//! There is no launcher to enter a rank, so the library starts a default
//! world on the first entry call of a thread that entered none
//! ([`runtime::device::set_fallback`], set when the library is loaded): one
//! rank of the cpu backend, the process. At exit it waits for the work the
//! program enqueued and, if the rank failed, prints the errors (with the
//! rank and the op) and ends the process with status 1.
//!
//! Environment, read at the first entry call:
//! - `HIR_BACKEND`: `cpu` (the default; the only backend of this library so far);
//! - `HIR_NUM_STREAMS`: streams in the rank's pool (default 4);
//! - `HIR_WORLD_SIZE` or `WORLD_SIZE`: must be 1 if set (the cpu backend's
//!   ranks share one process, and a native program is one rank).
//!
//! Besides the ABI it exports [`hir_runtime_synchronize`], for a program
//! that reads its results on the host.

use runtime::cpu::{Config, World};
use runtime::device::{Device, current, set_fallback};
use std::io::Write;
use std::sync::{Arc, OnceLock};

/// The default world and its one rank's device.
struct Standalone {
    world: World,
    device: Arc<dyn Device>,
}

static STANDALONE: OnceLock<Standalone> = OnceLock::new();

/// Runs when the library is loaded (by the dynamic loader, before `main` or
/// at `dlopen`): makes [`default_device`] the device of threads with none.
#[used]
#[unsafe(link_section = ".init_array")]
static INIT: extern "C" fn() = init;

extern "C" fn init() {
    set_fallback(default_device);
}

/// The default world's device, started on first use; a world that cannot
/// start ends the process with its reason.
fn default_device() -> Option<Arc<dyn Device>> {
    let standalone = STANDALONE.get_or_init(|| match start() {
        Ok(standalone) => standalone,
        Err(message) => {
            let _ = writeln!(std::io::stderr(), "hir runtime: {message}");
            std::process::exit(1);
        }
    });
    Some(standalone.device.clone())
}

fn start() -> Result<Standalone, String> {
    let var = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
    match var("HIR_BACKEND").as_deref() {
        None | Some("cpu") => {}
        Some(other) => {
            return Err(format!(
                "HIR_BACKEND={other}: libhir_runtime.so runs the cpu backend only"
            ));
        }
    }
    for name in ["HIR_WORLD_SIZE", "WORLD_SIZE"] {
        if let Some(size) = var(name).filter(|size| size != "1") {
            return Err(format!(
                "{name}={size}: a native program is one rank, and the cpu backend's ranks \
                 share one process (run multi-rank programs with hir-run -n)"
            ));
        }
    }
    let num_streams = match var("HIR_NUM_STREAMS") {
        None => 4,
        Some(value) => value
            .parse::<usize>()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("HIR_NUM_STREAMS={value}: expected a positive integer"))?,
    };
    let world = World::new(Config::new(1, num_streams))
        .map_err(|error| format!("cannot start the cpu backend: {error}"))?;
    let device = world.device(0);
    // SAFETY: registers a plain function; the library stays loaded until
    // exit (mlir-runner loads --shared-libs for good).
    if unsafe { libc::atexit(finish) } != 0 {
        return Err("cannot register the exit check (atexit failed)".into());
    }
    Ok(Standalone { world, device })
}

/// At exit: waits for the rank's work, then reports its errors and makes the
/// exit status 1 if it failed.
extern "C" fn finish() {
    let Some(standalone) = STANDALONE.get() else {
        return;
    };
    let _ = standalone.device.synchronize();
    if let Some(errors) = standalone.world.errors() {
        let _ = writeln!(std::io::stderr(), "hir runtime: the run failed: {errors}");
        // SAFETY: flushes C's (and C++'s synced) stdout, then ends the
        // process: exit() may not be called again from an exit handler.
        unsafe {
            libc::fflush(std::ptr::null_mut());
            libc::_exit(1);
        }
    }
}

/// The host waits until all the work the calling thread's rank enqueued is
/// done, so that it may read the results; returns 0, or 1 if the rank has
/// failed (its errors are reported at exit).
#[unsafe(no_mangle)]
pub extern "C" fn hir_runtime_synchronize() -> i64 {
    let Some(device) = current() else {
        return 1;
    };
    match device.synchronize() {
        Ok(()) if !device.failed() => 0,
        _ => 1,
    }
}
