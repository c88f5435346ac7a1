//! HIR's runtime: the C-ABI functions that JIT'd host programs call (streams,
//! buffers, compute, communication), and the backends behind them.
//!
//! - [`ffi`]: the definitions of the entries that the `hir-abi` crate
//!   ([`hir_abi::Entry`]) describes, the single source of truth shared with
//!   the lowering, and [`symbols`] for the JIT to register.
//! - [`bounds`]: the buffers a rank knows, which every view an entry
//!   receives is checked against.
//! - [`device`]: the backend boundary ([`Device`]), and the thread-local rank
//!   a launcher [`enter`]s before calling the program.
//! - `core`: what both backends stand on (how ranks fail and meet, the
//!   cuda backend's `Bootstrap` trait); `cpu` and `cuda` import it, never
//!   each other.
//! - [`cpu`]: the cpu backend: a [`cpu::World`] of rank threads.
//! - [`cuda`]: the cuda backend: a [`cuda::World`] of ranks on GPUs.
//! - [`bootstrap`]: ranks in processes: the TCP store, the cuda backend's
//!   bootstrap over it, the watchdog. It does not know `cuda`, which stands
//!   on it ([`cuda::World::join`]).
//! - [`world`]: one [`World`] over either [`Backend`], what launchers start.
//! - [`exit`]: a failed rank's program left at its next runtime call;
//!   [`interrupt`]: a run stopped from the thread that waits for it.
//! - [`trace`]: the Chrome/Perfetto timeline; [`npy`]: `.npy` files;
//!   [`random`]: the random input values tools make, on the host or a GPU.
//!
//! `docs/Runtime.md` documents the ABI conventions, the launcher API and the
//! cpu backend's model (streams, events, collectives, transfers, race
//! detection, timeouts).
//!
//! A launcher, in short:
//!
//! ```no_run
//! use hir_runtime::cpu::{Config, World};
//! let world = World::new(Config::new(4, 2)).unwrap();
//! // Register hir_runtime::symbols() with the JIT, then on every rank:
//! let outputs = world.run(|device| device.rank()).unwrap();
//! # let _ = outputs;
//! ```

pub mod bootstrap;
pub mod bounds;
mod core;
pub mod cpu;
pub mod cuda;
pub mod device;
pub mod error;
pub mod exit;
pub mod ffi;
pub mod fused;
pub mod interrupt;
pub mod memref;
pub mod npy;
mod nvtx;
pub mod ops;
pub mod random;
#[cfg(test)]
mod reference;
mod site_cache;
pub mod trace;
pub mod world;

pub use device::{Device, enter};
pub use error::{Error, RankError, RunError};
pub use ffi::symbols;
pub use world::{Backend, Checks, World};

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks, ignoring poisoning: no lock is held across user code, and a panic
/// in the runtime is already recorded as the rank's error.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
