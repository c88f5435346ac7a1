//! What a tool does when memory runs out where nothing can go on.
//!
//! The data a tool makes (inputs, rank buffers, the reference) is allocated
//! fallibly and a refusal is an error naming the size. Everything else (the
//! compiler's C++, the small allocations of Rust code everywhere) cannot go
//! on without its memory; by default the process then aborts (`terminate
//! called after throwing an instance of 'std::bad_alloc'`, or Rust's `memory
//! allocation of N bytes failed`, SIGABRT). [`exit_on_out_of_memory`] makes
//! both end the process with status 1 and the tool's usual error line.

use std::alloc::{GlobalAlloc, Layout, System};
use std::ffi::CString;
use std::sync::OnceLock;

/// Allocations at least this large fail as their caller asks (a fallible
/// reservation becomes an error naming the size); a smaller one that fails
/// ends the process.
const SMALL: usize = 1 << 20;

/// The name the message starts with.
static TOOL: OnceLock<&'static str> = OnceLock::new();

/// The system allocator, ending the process when a small allocation fails.
pub struct Allocator;

#[global_allocator]
static ALLOCATOR: Allocator = Allocator;

// SAFETY: every call is passed to the system allocator unchanged; only a
// null result of a small request is not returned.
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's layout, as GlobalAlloc requires.
        checked(unsafe { System.alloc(layout) }, layout.size())
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        checked(unsafe { System.alloc_zeroed(layout) }, layout.size())
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator, which is the system's.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as `dealloc`.
        checked(unsafe { System.realloc(ptr, layout, new_size) }, new_size)
    }
}

fn checked(ptr: *mut u8, size: usize) -> *mut u8 {
    if ptr.is_null() && size < SMALL {
        exit(size);
    }
    ptr
}

/// Makes an allocation that fails where nothing can go on (MLIR's and
/// LLVM's C++, any small Rust allocation) end the process with status 1
/// and `<tool>: error: out of memory: ...` instead of an abort.
pub fn exit_on_out_of_memory(tool: &'static str) {
    let _ = TOOL.set(tool);
    let name = CString::new(tool).expect("a tool's name has no NUL");
    // SAFETY: the C side copies the name.
    unsafe { hir::dialects::ffi::hirExitOnOutOfMemory(name.as_ptr()) }
}

/// Says why on stderr, allocating nothing, and ends the process.
#[cold]
fn exit(size: usize) -> ! {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = size;
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let parts: [&[u8]; 4] = [
        TOOL.get().copied().unwrap_or("hir").as_bytes(),
        b": error: out of memory: an allocation of ",
        &digits[at..],
        b" B failed; raise the memory or address-space limit (ulimit -v)\n",
    ];
    for part in parts {
        // SAFETY: writes `part`'s bytes to stderr.
        unsafe { libc::write(libc::STDERR_FILENO, part.as_ptr().cast(), part.len()) };
    }
    // SAFETY: ends the process; nothing of it can go on.
    unsafe { libc::_exit(1) }
}
