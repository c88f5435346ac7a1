//! NVTX ranges around every runtime call, so that Nsight Systems shows the
//! host program's schedule (which op each rank issued, and when) above the
//! GPU timeline. NVTX's library is opened at the first call when a tool
//! that records ranges is attached (it names its injection library in
//! `NVTX_INJECTION64_PATH`, as Nsight Systems and Nsight Compute do) and the
//! library is present (`libnvToolsExt.so.1`, shipped with CUDA and
//! PyTorch). Otherwise a range is one load and its name is never built: a
//! small op's whole host work is a few µs, and the name cost a tenth of it.

use std::ffi::{CString, c_char, c_int};
use std::sync::OnceLock;

struct Nvtx {
    push: unsafe extern "C" fn(*const c_char) -> c_int,
    pop: unsafe extern "C" fn() -> c_int,
    /// Keeps the functions above loaded.
    _library: libloading::Library,
}

fn nvtx() -> Option<&'static Nvtx> {
    static NVTX: OnceLock<Option<Nvtx>> = OnceLock::new();
    NVTX.get_or_init(|| {
        std::env::var_os("NVTX_INJECTION64_PATH")?;
        ["libnvToolsExt.so.1", "libnvToolsExt.so"]
            .into_iter()
            .find_map(|name| {
                // SAFETY: NVTX's initializers only read the environment.
                let library = unsafe { libloading::Library::new(name) }.ok()?;
                // SAFETY: the C signatures of nvtxRangePushA and nvtxRangePop.
                unsafe {
                    let push = *library
                        .get::<unsafe extern "C" fn(*const c_char) -> c_int>(b"nvtxRangePushA\0")
                        .ok()?;
                    let pop = *library
                        .get::<unsafe extern "C" fn() -> c_int>(b"nvtxRangePop\0")
                        .ok()?;
                    Some(Nvtx {
                        push,
                        pop,
                        _library: library,
                    })
                }
            })
    })
    .as_ref()
}

/// An open range, closed when dropped.
pub struct Range(Option<&'static Nvtx>);

/// Opens a range named `name` on the calling thread.
pub fn range(name: impl FnOnce() -> String) -> Range {
    let nvtx = nvtx();
    if let Some(nvtx) = nvtx {
        let name = CString::new(name()).unwrap_or_default();
        // SAFETY: a NUL-terminated string, copied by NVTX.
        unsafe { (nvtx.push)(name.as_ptr()) };
    }
    Range(nvtx)
}

impl Drop for Range {
    fn drop(&mut self) {
        if let Some(nvtx) = self.0 {
            // SAFETY: closes the range `range` opened on this thread.
            unsafe { (nvtx.pop)() };
        }
    }
}

#[cfg(test)]
mod tests {
    /// Ranges nest and close whether or not NVTX is installed.
    #[test]
    fn ranges_open_and_close() {
        let outer = super::range(|| "outer".into());
        drop(super::range(|| "inner".into()));
        drop(outer);
    }
}
