//! cuDNN for the cuda backend: whether the library is here ([`available`]),
//! a handle, and the backend API's descriptors as owned values, each call's
//! status mapped to an error naming the call, the descriptor, the attribute
//! and the values set, with cuDNN's status string and its last error message.
//!
//! cudarc opens cuDNN at run time under the names it tries for every CUDA
//! library (`libcudnn.so`, then `libcudnn.so.<major>` for 13, 12, 11, 10,
//! 9, ...), so the `libcudnn.so.9` of PyTorch's `nvidia-cudnn` wheel is found
//! where its folder is on `LD_LIBRARY_PATH` (`scripts/cuda-env.sh` puts it
//! there); `libcudnn.so.9` opens its sub-libraries (`libcudnn_graph.so.9`,
//! the engine libraries) from the same folder. cudarc's loader panics when a
//! library is missing, so [`available`] opens it first.

use super::Stream;
use crate::error::{Error, Result};
use cudarc::cudnn::sys;
use std::ffi::{CStr, c_char, c_void};
use std::fmt::Debug;
use std::sync::OnceLock;

pub(super) use sys::cudnnBackendAttributeName_t as Attr;
pub(super) use sys::cudnnBackendDescriptorType_t as Kind;

/// The oldest cuDNN whose fused attention the backend builds graphs for.
const MIN_VERSION: usize = 9_00_00;

/// `major.minor.patch` of cuDNN 9's `10000 * major + 100 * minor + patch`.
pub(super) fn version_string(version: usize) -> String {
    format!(
        "{}.{}.{}",
        version / 10000,
        version % 10000 / 100,
        version % 100
    )
}

/// cuDNN's version (`10000 * major + 100 * minor + patch`) where the library
/// loads and is 9.0 or newer; else why not. Probed once per process.
pub(crate) fn available() -> std::result::Result<usize, String> {
    static PROBE: OnceLock<std::result::Result<usize, String>> = OnceLock::new();
    PROBE
        .get_or_init(|| {
            // SAFETY: only tries to open the library.
            if !unsafe { sys::is_culib_present() } {
                return Err("no libcudnn.so (or libcudnn.so.9) on the library path".into());
            }
            // SAFETY: the library loads; the call returns a constant of it.
            let version = unsafe { sys::cudnnGetVersion() };
            if version < MIN_VERSION {
                // cuDNN 8 encodes 1000 * major + 100 * minor + patch.
                return Err(format!(
                    "cuDNN {version} is older than 9.0, whose graph API the backend uses"
                ));
            }
            Ok(version)
        })
        .clone()
}

/// The error of a failed cuDNN call: `call`, cuDNN's name for `status` and
/// its last error message on this thread (cuDNN 9's `cudnnGetLastErrorString`).
fn failure(status: sys::cudnnStatus_t, call: &str) -> Error {
    // SAFETY: returns a static NUL-terminated string for any status.
    let name = unsafe { CStr::from_ptr(sys::cudnnGetErrorString(status)) }.to_string_lossy();
    let mut message = [0 as c_char; 1024];
    // SAFETY: writes at most `message.len()` bytes, NUL-terminated.
    unsafe { sys::cudnnGetLastErrorString(message.as_mut_ptr(), message.len()) };
    // SAFETY: NUL-terminated above (zeroed, and cuDNN terminates what it writes).
    let message = unsafe { CStr::from_ptr(message.as_ptr()) }.to_string_lossy();
    let message = message.trim();
    let detail = if message.is_empty() {
        String::new()
    } else {
        format!(": {message}")
    };
    Error::Cuda(format!("{call} failed: {name} ({}){detail}", status as u32))
}

/// `Ok` for `CUDNN_STATUS_SUCCESS`, else the error of `call` (built only then).
fn check(status: sys::cudnnStatus_t, call: impl FnOnce() -> String) -> Result<()> {
    if status == sys::cudnnStatus_t::CUDNN_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(failure(status, &call()))
    }
}

/// A cuDNN handle, bound to the context current when it was made.
pub(super) struct Handle(sys::cudnnHandle_t);

impl Handle {
    /// A handle on the current context. cuDNN must be [`available`].
    pub fn new() -> Result<Handle> {
        let mut handle = std::ptr::null_mut();
        // SAFETY: writes one handle.
        check(unsafe { sys::cudnnCreate(&mut handle) }, || {
            "cudnnCreate".into()
        })?;
        Ok(Handle(handle))
    }

    pub fn raw(&self) -> sys::cudnnHandle_t {
        self.0
    }

    /// Makes the handle's work go to `stream`.
    pub fn set_stream(&self, stream: Stream) -> Result<()> {
        // SAFETY: a live handle; a stream of its context.
        check(
            unsafe { sys::cudnnSetStream(self.0, stream as sys::cudaStream_t) },
            || "cudnnSetStream".into(),
        )
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        // SAFETY: created by `new`, destroyed once, after its owner's streams
        // finished.
        let _ = unsafe { sys::cudnnDestroy(self.0) };
    }
}

/// A backend descriptor, destroyed when dropped; `name` says what it
/// describes (`Q`, `bmm1`, ...) in errors.
pub(super) struct Descriptor {
    raw: sys::cudnnBackendDescriptor_t,
    kind: Kind,
    name: &'static str,
}

impl Debug for Descriptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?} `{}`", self.kind, self.name)
    }
}

impl Descriptor {
    pub fn new(kind: Kind, name: &'static str) -> Result<Descriptor> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: writes one descriptor.
        check(
            unsafe { sys::cudnnBackendCreateDescriptor(kind, &mut raw) },
            || format!("cudnnBackendCreateDescriptor({kind:?} `{name}`)"),
        )?;
        Ok(Descriptor { raw, kind, name })
    }

    /// Sets `attr` to `values`, elements of cuDNN's type `ty`.
    ///
    /// # Safety
    /// `T` must be the C type of `ty` (e.g. `i64` for `CUDNN_TYPE_INT64`).
    unsafe fn set<T: Debug>(
        &self,
        attr: Attr,
        ty: sys::cudnnBackendAttributeType_t,
        values: &[T],
    ) -> Result<()> {
        // SAFETY: a live descriptor; `values` holds `values.len()` elements of `ty`.
        let status = unsafe {
            sys::cudnnBackendSetAttribute(
                self.raw,
                attr,
                ty,
                values.len() as i64,
                values.as_ptr().cast(),
            )
        };
        check(status, || {
            format!("cudnnBackendSetAttribute({self:?}, {attr:?} = {values:?})")
        })
    }

    pub fn set_i64s(&self, attr: Attr, values: &[i64]) -> Result<()> {
        // SAFETY: CUDNN_TYPE_INT64 is int64_t.
        unsafe {
            self.set(
                attr,
                sys::cudnnBackendAttributeType_t::CUDNN_TYPE_INT64,
                values,
            )
        }
    }

    pub fn set_i64(&self, attr: Attr, value: i64) -> Result<()> {
        self.set_i64s(attr, &[value])
    }

    pub fn set_bool(&self, attr: Attr, value: bool) -> Result<()> {
        // SAFETY: CUDNN_TYPE_BOOLEAN is C's `bool`, one byte as Rust's.
        unsafe {
            self.set(
                attr,
                sys::cudnnBackendAttributeType_t::CUDNN_TYPE_BOOLEAN,
                &[value],
            )
        }
    }

    pub fn set_f32(&self, attr: Attr, value: f32) -> Result<()> {
        // SAFETY: CUDNN_TYPE_FLOAT is float.
        unsafe {
            self.set(
                attr,
                sys::cudnnBackendAttributeType_t::CUDNN_TYPE_FLOAT,
                &[value],
            )
        }
    }

    pub fn set_data_type(&self, attr: Attr, value: sys::cudnnDataType_t) -> Result<()> {
        // SAFETY: CUDNN_TYPE_DATA_TYPE is cudnnDataType_t.
        unsafe {
            self.set(
                attr,
                sys::cudnnBackendAttributeType_t::CUDNN_TYPE_DATA_TYPE,
                &[value],
            )
        }
    }

    pub fn set_pointwise_mode(&self, attr: Attr, value: sys::cudnnPointwiseMode_t) -> Result<()> {
        // SAFETY: CUDNN_TYPE_POINTWISE_MODE is cudnnPointwiseMode_t.
        unsafe {
            self.set(
                attr,
                sys::cudnnBackendAttributeType_t::CUDNN_TYPE_POINTWISE_MODE,
                &[value],
            )
        }
    }

    pub fn set_reduction(&self, attr: Attr, value: sys::cudnnReduceTensorOp_t) -> Result<()> {
        // SAFETY: CUDNN_TYPE_REDUCTION_OPERATOR_TYPE is cudnnReduceTensorOp_t.
        unsafe {
            self.set(
                attr,
                sys::cudnnBackendAttributeType_t::CUDNN_TYPE_REDUCTION_OPERATOR_TYPE,
                &[value],
            )
        }
    }

    pub fn set_heur_mode(&self, attr: Attr, value: sys::cudnnBackendHeurMode_t) -> Result<()> {
        // SAFETY: CUDNN_TYPE_HEUR_MODE is cudnnBackendHeurMode_t.
        unsafe {
            self.set(
                attr,
                sys::cudnnBackendAttributeType_t::CUDNN_TYPE_HEUR_MODE,
                &[value],
            )
        }
    }

    pub fn set_handle(&self, attr: Attr, handle: &Handle) -> Result<()> {
        // SAFETY: CUDNN_TYPE_HANDLE is cudnnHandle_t.
        unsafe {
            self.set(
                attr,
                sys::cudnnBackendAttributeType_t::CUDNN_TYPE_HANDLE,
                &[handle.raw()],
            )
        }
    }

    pub fn set_pointers(&self, attr: Attr, values: &[*mut c_void]) -> Result<()> {
        // SAFETY: CUDNN_TYPE_VOID_PTR is void*.
        unsafe {
            self.set(
                attr,
                sys::cudnnBackendAttributeType_t::CUDNN_TYPE_VOID_PTR,
                values,
            )
        }
    }

    /// Sets `attr` to the descriptors `values` (named in an error).
    pub fn set_descriptors(&self, attr: Attr, values: &[&Descriptor]) -> Result<()> {
        let raw: Vec<sys::cudnnBackendDescriptor_t> = values.iter().map(|d| d.raw).collect();
        // SAFETY: a live descriptor; `raw` holds live descriptors.
        let status = unsafe {
            sys::cudnnBackendSetAttribute(
                self.raw,
                attr,
                sys::cudnnBackendAttributeType_t::CUDNN_TYPE_BACKEND_DESCRIPTOR,
                raw.len() as i64,
                raw.as_ptr().cast(),
            )
        };
        check(status, || {
            format!("cudnnBackendSetAttribute({self:?}, {attr:?} = {values:?})")
        })
    }

    pub fn set_descriptor(&self, attr: Attr, value: &Descriptor) -> Result<()> {
        self.set_descriptors(attr, &[value])
    }

    pub fn finalize(&self) -> Result<()> {
        // SAFETY: a live descriptor.
        check(unsafe { sys::cudnnBackendFinalize(self.raw) }, || {
            format!("cudnnBackendFinalize({self:?})")
        })
    }

    /// The one `i64` of a finalized descriptor's `attr`.
    pub fn get_i64(&self, attr: Attr) -> Result<i64> {
        let (mut value, mut count) = (0i64, 0i64);
        // SAFETY: a live descriptor; room for one int64_t.
        let status = unsafe {
            sys::cudnnBackendGetAttribute(
                self.raw,
                attr,
                sys::cudnnBackendAttributeType_t::CUDNN_TYPE_INT64,
                1,
                &mut count,
                (&mut value as *mut i64).cast(),
            )
        };
        check(status, || {
            format!("cudnnBackendGetAttribute({self:?}, {attr:?})")
        })?;
        Ok(value)
    }

    /// Fills the `outputs` descriptors from `attr` (an array attribute, such
    /// as a heuristic's engine configs) and returns how many it filled.
    pub fn get_descriptors(&self, attr: Attr, outputs: &[Descriptor]) -> Result<usize> {
        let mut raw: Vec<sys::cudnnBackendDescriptor_t> = outputs.iter().map(|d| d.raw).collect();
        let mut count = 0i64;
        // SAFETY: a live descriptor; `raw` holds `raw.len()` live descriptors
        // of the attribute's kind, which cuDNN fills in place.
        let status = unsafe {
            sys::cudnnBackendGetAttribute(
                self.raw,
                attr,
                sys::cudnnBackendAttributeType_t::CUDNN_TYPE_BACKEND_DESCRIPTOR,
                raw.len() as i64,
                &mut count,
                raw.as_mut_ptr().cast(),
            )
        };
        check(status, || {
            format!(
                "cudnnBackendGetAttribute({self:?}, {attr:?}, {} elements)",
                outputs.len()
            )
        })?;
        Ok(usize::try_from(count).unwrap_or(0).min(outputs.len()))
    }

    /// How many elements `attr` holds (an array attribute of descriptors).
    pub fn count_descriptors(&self, attr: Attr) -> Result<usize> {
        let mut count = 0i64;
        // SAFETY: a live descriptor; asks for no elements, only the count.
        let status = unsafe {
            sys::cudnnBackendGetAttribute(
                self.raw,
                attr,
                sys::cudnnBackendAttributeType_t::CUDNN_TYPE_BACKEND_DESCRIPTOR,
                0,
                &mut count,
                std::ptr::null_mut(),
            )
        };
        check(status, || {
            format!("cudnnBackendGetAttribute({self:?}, {attr:?}, count)")
        })?;
        Ok(usize::try_from(count).unwrap_or(0))
    }
}

impl Drop for Descriptor {
    fn drop(&mut self) {
        // SAFETY: created by `new`, destroyed once.
        let _ = unsafe { sys::cudnnBackendDestroyDescriptor(self.raw) };
    }
}

/// Runs `plan` with the tensors of `variant_pack` on `handle`'s stream.
pub(super) fn execute(handle: &Handle, plan: &Descriptor, variant_pack: &Descriptor) -> Result<()> {
    // SAFETY: live, finalized descriptors; the variant pack's pointers are
    // the caller's.
    check(
        unsafe { sys::cudnnBackendExecute(handle.raw(), plan.raw, variant_pack.raw) },
        || format!("cudnnBackendExecute({plan:?}, {variant_pack:?})"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_read_as_cudnn_9_writes_them() {
        assert_eq!(version_string(90100), "9.1.0");
        assert_eq!(version_string(91002), "9.10.2");
    }

    /// Where cuDNN is on the library path, a handle-free descriptor can be
    /// made, set and dropped (elsewhere the test says why and passes).
    #[test]
    fn descriptors_report_what_failed() {
        if let Err(reason) = available() {
            eprintln!("skipped: {reason}");
            return;
        }
        let tensor = Descriptor::new(Kind::CUDNN_BACKEND_TENSOR_DESCRIPTOR, "t").unwrap();
        tensor
            .set_i64s(Attr::CUDNN_ATTR_TENSOR_DIMENSIONS, &[1, 2, 3, 4])
            .unwrap();
        // Not finalizable: no strides, id or data type.
        let error = tensor.finalize().unwrap_err().to_string();
        assert!(
            error.contains("cudnnBackendFinalize(CUDNN_BACKEND_TENSOR_DESCRIPTOR `t`)"),
            "{error}"
        );
    }
}
