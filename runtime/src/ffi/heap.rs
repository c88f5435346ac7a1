//! The heap of a program's own `memref.alloc`. HIR's LLVM pipeline lowers
//! it with `finalize-memref-to-llvm{use-generic-functions=true}`
//! (`passes/src/conversion/mod.rs`) to a call of
//! `_mlir_memref_to_llvm_alloc`, and `memref.dealloc` to one of
//! `_mlir_memref_to_llvm_free`, which the runtime defines here: `malloc` and
//! `free`, except that an allocation that fails fails the rank (`out of
//! memory`, naming the size) instead of handing the program a null pointer
//! to store through. The rank then leaves its program as a failed rank does
//! ([`crate::exit`]); a program running outside [`crate::exit::call`] (a
//! native executable) cannot go on without its memory, so the process says
//! why and ends with status 1.

use crate::device::current;
use crate::error::{Error, RankError};
use std::ffi::c_void;
use std::io::Write;

/// The op a failed allocation is reported in.
const OP: &str = "memref.alloc";

/// The heap's symbols and their addresses, for the JIT.
pub(super) fn symbols() -> [(&'static str, *mut ()); 2] {
    [
        (
            "_mlir_memref_to_llvm_alloc",
            _mlir_memref_to_llvm_alloc as *mut (),
        ),
        (
            "_mlir_memref_to_llvm_free",
            _mlir_memref_to_llvm_free as *mut (),
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
        out_of_memory(bytes);
    }
    ptr
}

/// `void (ptr)`: frees what [`_mlir_memref_to_llvm_alloc`] returned.
///
/// # Safety
/// `ptr` is null or a pointer [`_mlir_memref_to_llvm_alloc`] returned and
/// not yet freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn _mlir_memref_to_llvm_free(ptr: *mut c_void) {
    // SAFETY: the caller's promise; the pointer came from malloc.
    unsafe { libc::free(ptr) }
}

fn error(bytes: usize) -> Error {
    Error::OutOfMemory(format!("the program's memref.alloc of {bytes} B"))
}

/// Fails the calling thread's rank and leaves its program; outside
/// [`crate::exit::call`], or on a thread with no rank, ends the process.
#[cold]
fn out_of_memory(bytes: usize) -> ! {
    let Some(device) = current() else {
        exit_with(&format!("{OP}: {}", error(bytes)));
    };
    let rank = device.rank();
    device.fail(OP, error(bytes));
    // Nothing may be held across the jump: it skips this frame.
    drop(device);
    crate::exit::leave_if_possible();
    let error = RankError {
        rank,
        op: OP.into(),
        error: error(bytes),
    };
    exit_with(&format!(
        "{error}; the program runs outside hir_runtime::exit::call and cannot go on \
         without its memory, so the process ends"
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
