//! Located diagnostics from Rust passes, through MLIR's diagnostic engine (so
//! `-verify-diagnostics` and the usual `file:line:col: error:` output see them).

use melior::ir::Location;
use std::ffi::CString;

/// Emits `message` as an error at `location`.
pub fn emit_error(location: Location, message: &str) {
    // Interior NULs cannot come from our messages' format strings; replace any
    // that a symbol name might carry rather than lose the diagnostic.
    let message = CString::new(message.replace('\0', "\\0")).expect("NULs were replaced");
    // SAFETY: the location is valid and the message lives through the call.
    unsafe { mlir_sys::mlirEmitError(location.to_raw(), message.as_ptr()) }
}

/// An error that has been emitted: the pass fails without saying more.
pub struct Emitted;

/// Emits `message` at `location` and returns it as an `Emitted` error.
pub fn error<T>(location: Location, message: impl AsRef<str>) -> Result<T, Emitted> {
    emit_error(location, message.as_ref());
    Err(Emitted)
}
