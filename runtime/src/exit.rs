//! Leaving a failed rank's program at its next runtime call.
//!
//! A failed rank's runtime calls do nothing, but its program's own loops
//! run on: a loop of a million calls keeps the run going long after the
//! failure (or the interrupt, [`crate::interrupt`]) that made them
//! pointless. A launcher that runs the JIT'd entry through [`call`] gets
//! the rank back at its next runtime call instead: the entry jumps back to
//! [`call`] (`csrc/exit.c`, `sigsetjmp`/`siglongjmp`), skipping the
//! program's frames and its own. Neither holds anything to drop at that
//! point (the JIT'd code has no destructors; the entry leaves before it
//! makes any value), which is what makes skipping them sound. What the
//! program allocated itself (a `memref.alloc`) is leaked; the runtime's own
//! buffers are the device's and stay with it.
//!
//! HIR's JIT hands out entries that are called only through [`call`]
//! (`hir::jit::Packed::call`), so every HIR launcher runs its programs
//! under it. Without [`call`] around the program (a native executable
//! linked to `libhir_runtime.so`), a failed rank's calls return as before.

use std::ffi::c_void;

/// A JIT'd function's packed interface: one pointer per argument.
pub type Packed = unsafe extern "C" fn(arguments: *mut *mut c_void);

unsafe extern "C" {
    fn hir_exit_call(entry: Packed, arguments: *mut *mut c_void) -> i32;
    fn hir_exit_can_leave() -> i32;
    fn hir_exit_leave() -> !;
}

/// Calls `entry` on `arguments`; returns false when it returned, true when
/// the rank failed and its next runtime call left the program.
///
/// # Safety
/// `entry` is a packed wrapper the JIT made, and `arguments` what it takes.
pub unsafe fn call(entry: Packed, arguments: *mut *mut c_void) -> bool {
    // SAFETY: the caller's promise; the C side only calls it.
    unsafe { hir_exit_call(entry, arguments) != 0 }
}

/// Leaves the program of the calling thread's rank if it runs under
/// [`call`]; returns otherwise. The caller must hold nothing that needs to
/// be dropped: its frame is skipped.
pub(crate) fn leave_if_possible() {
    // SAFETY: the C side reads and jumps to its own thread-local target,
    // which a live `hir_exit_call` frame of this thread set.
    unsafe {
        if hir_exit_can_leave() != 0 {
            hir_exit_leave();
        }
    }
}
