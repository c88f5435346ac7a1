//! A program's own memory: the heap of its `memref.alloc`, and the end of
//! a `memref.load` or `memref.store` outside its memref. HIR's LLVM pipeline lowers
//! it with `finalize-memref-to-llvm{use-generic-functions=true}`
//! (`passes/src/conversion/mod.rs`) to a call of
//! `_mlir_memref_to_llvm_alloc`, and `memref.dealloc` to one of
//! `_mlir_memref_to_llvm_free`, which the runtime defines here: `malloc` and
//! `free`, except that
//! - an allocation that fails fails the rank (`out of memory`, naming the
//!   size) instead of handing the program a null pointer to store through;
//! - a free of memory the heap does not hold for the freeing rank (freed
//!   twice, never from `memref.alloc`, or another rank's) fails the rank
//!   instead of corrupting `malloc`'s own state: the heap keeps its live
//!   blocks and the rank that allocated each. The rank matters: between a
//!   block's two frees `malloc` may hand its address to another rank, whose
//!   block the second free must not free. A rank's own block at an address
//!   it freed before is still freed: the heap cannot tell a stale free of
//!   it from a right one;
//! - an index outside its axis, which `host-check-bounds`
//!   (`passes/src/host/check_bounds.rs`) finds before the load or store,
//!   fails the rank in [`hir_rt_index_out_of_bounds`] instead of reading or
//!   writing past the memref.
//!
//! The rank then leaves its program as a failed rank does ([`crate::exit`]);
//! a program running outside [`crate::exit::call`] (a native executable)
//! cannot go on, so the process says why and ends with status 1.

use crate::device::{current, entered_address};
use crate::error::{Error, RankError};
use std::collections::HashMap;
use std::ffi::c_void;
use std::io::Write;
use std::sync::{LazyLock, Mutex, MutexGuard, PoisonError};

/// The blocks allocated and not yet freed, of every rank: address -> the
/// [`owner`] that allocated it.
static LIVE: LazyLock<Mutex<HashMap<usize, usize>>> = LazyLock::new(Mutex::default);

/// The calling thread's rank, as its device's address; 0 for a thread no
/// launcher entered (a native executable, one rank to the process).
fn owner() -> usize {
    entered_address().unwrap_or(0)
}

fn live() -> MutexGuard<'static, HashMap<usize, usize>> {
    LIVE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Notes `ptr` as a live block of the calling rank.
fn allocated(ptr: *mut c_void) {
    let owner = owner();
    live().insert(ptr as usize, owner);
}

/// Forgets `ptr` if it is a live block of the calling rank; whether it was.
fn freed(ptr: *mut c_void) -> bool {
    let owner = owner();
    let mut blocks = live();
    let address = ptr as usize;
    let own = blocks.get(&address) == Some(&owner);
    if own {
        blocks.remove(&address);
    }
    own
}

/// The symbols of this file and their addresses, for the JIT.
pub(super) fn symbols() -> [(&'static str, *mut ()); 3] {
    [
        (
            "_mlir_memref_to_llvm_alloc",
            _mlir_memref_to_llvm_alloc as *mut (),
        ),
        (
            "_mlir_memref_to_llvm_free",
            _mlir_memref_to_llvm_free as *mut (),
        ),
        (
            "hir_rt_index_out_of_bounds",
            hir_rt_index_out_of_bounds as *mut (),
        ),
    ]
}

/// `ptr (i64 bytes)`: `bytes` bytes aligned as `malloc` aligns them (the
/// lowering aligns a memref's data within them); never null.
#[unsafe(no_mangle)]
pub extern "C" fn _mlir_memref_to_llvm_alloc(bytes: usize) -> *mut c_void {
    // SAFETY: malloc takes any size; 0 is asked as 1, so that only a
    // failure is null.
    let ptr = unsafe { libc::malloc(bytes.max(1)) };
    if ptr.is_null() {
        fail("memref.alloc", out_of_memory(bytes));
    }
    allocated(ptr);
    ptr
}

/// `void (ptr)`: frees what [`_mlir_memref_to_llvm_alloc`] returned to
/// the calling rank; null is nothing to free, and any other pointer the
/// heap does not hold for the rank fails it.
///
/// # Safety
/// `ptr` was never handed out by the heap, or it is a block of it (live or
/// freed): the heap checks which.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn _mlir_memref_to_llvm_free(ptr: *mut c_void) {
    if ptr.is_null() {
        return;
    }
    if !freed(ptr) {
        fail("memref.dealloc", not_allocated(ptr));
    }
    // SAFETY: the pointer is a live block of the heap, from malloc.
    unsafe { libc::free(ptr) }
}

/// `void (i64 op, i64 axis, i64 index, i64 extent)`: an access of op `op`
/// (0 `memref.load`, 1 `memref.store`) at `index` of an axis of `extent`
/// elements, which `host-check-bounds` found outside; fails the rank.
#[unsafe(no_mangle)]
pub extern "C" fn hir_rt_index_out_of_bounds(op: i64, axis: i64, index: i64, extent: i64) {
    let op = if op == 0 {
        "memref.load"
    } else {
        "memref.store"
    };
    fail(
        op,
        Error::Invalid(format!(
            "index {index} of axis {axis} is outside its extent {extent}"
        )),
    )
}

fn out_of_memory(bytes: usize) -> Error {
    Error::OutOfMemory(format!("the program's memref.alloc of {bytes} B"))
}

fn not_allocated(ptr: *mut c_void) -> Error {
    Error::Invalid(format!(
        "frees {ptr:?}, which the program's heap does not hold: freed before, not \
         from memref.alloc, or another rank's"
    ))
}

/// Fails the calling thread's rank in `op` and leaves its program; outside
/// [`crate::exit::call`], or on a thread with no rank, ends the process.
#[cold]
fn fail(op: &str, error: Error) -> ! {
    let Some(device) = current() else {
        exit_with(&format!("{op}: {error}"));
    };
    let rank = device.rank();
    device.fail(op, error.clone());
    // Nothing may be held across the jump: it skips this frame.
    drop(device);
    crate::exit::leave_if_possible();
    let error = RankError {
        rank,
        op: op.into(),
        error,
    };
    exit_with(&format!(
        "{error}; the program runs outside hir_runtime::exit::call and cannot go on, \
         so the process ends"
    ))
}

/// Says `why` on stderr and ends the process with status 1, its exit
/// handlers skipped: the program's thread cannot return.
fn exit_with(why: &str) -> ! {
    let _ = writeln!(std::io::stderr(), "hir runtime: {why}");
    // SAFETY: flushes C's stdout, then ends the process.
    unsafe {
        libc::fflush(std::ptr::null_mut());
        libc::_exit(1)
    }
}
