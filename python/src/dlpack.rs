//! Arrays from DLPack: what a numpy array or a torch tensor hands over
//! through `__dlpack__()` (a `dltensor` capsule), read without a copy. A
//! torch tensor is exported with `torch.utils.dlpack.to_dlpack`, the C
//! function `Tensor.__dlpack__` calls after its Python-level checks: 0.36 µs
//! a tensor where `__dlpack__` takes 3.4 (torch 2.15, one core). Those
//! checks refuse tensors HIR's types never have (conjugate or negative
//! views are complex), a tensor needing grad (the package detaches or
//! refuses it first), and a stream argument, which is not given. Only a
//! tensor of type `torch.Tensor` itself goes this way: a subclass keeps its
//! own `__dlpack__`.
//!
//! The capsule keeps its producer's array alive; it is held until the run
//! that reads the memory has returned and then dropped, still named
//! `dltensor`, so the producer's own destructor frees the export.

use hir_abi::DType;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyType};
use std::ffi::{CStr, c_void};

/// `torch.Tensor` and `torch.utils.dlpack.to_dlpack`, once torch is loaded.
static TORCH: PyOnceLock<(Py<PyType>, Py<PyAny>)> = PyOnceLock::new();
/// `sys.modules`, looked up once: until torch is loaded, every array asks it.
static MODULES: PyOnceLock<Py<PyDict>> = PyOnceLock::new();

/// DLPack's device types that HIR's backends take.
const DL_CPU: i32 = 1;
const DL_CUDA: i32 = 2;

/// DLPack's type codes.
const DL_INT: u8 = 0;
const DL_UINT: u8 = 1;
const DL_FLOAT: u8 = 2;
const DL_BFLOAT: u8 = 4;
const DL_COMPLEX: u8 = 5;
const DL_BOOL: u8 = 6;

#[repr(C)]
struct DLDevice {
    device_type: i32,
    device_id: i32,
}

#[repr(C)]
struct DLDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

#[repr(C)]
struct DLTensor {
    data: *mut c_void,
    device: DLDevice,
    ndim: i32,
    dtype: DLDataType,
    shape: *const i64,
    strides: *const i64,
    byte_offset: u64,
}

/// `DLManagedTensor`: only its first member is read here.
#[repr(C)]
struct DLManagedTensor {
    dl_tensor: DLTensor,
}

/// Where an array's memory is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Memory {
    Host,
    /// The GPU of this ordinal (CUDA's device numbering in this process).
    Cuda(usize),
}

impl std::fmt::Display for Memory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Memory::Host => write!(f, "host memory"),
            Memory::Cuda(ordinal) => write!(f, "GPU {ordinal}"),
        }
    }
}

/// A dense row-major array another framework owns.
#[derive(Clone, Debug)]
pub struct Array {
    /// The first element's address.
    pub address: usize,
    pub shape: Vec<usize>,
    pub dtype: DType,
    pub memory: Memory,
}

/// `object`'s array through `object.__dlpack__()`, and the capsule to hold
/// while the memory is used. `what` names it in errors.
pub fn import<'py>(
    object: &Bound<'py, PyAny>,
    what: impl Fn() -> String,
) -> PyResult<(Array, Bound<'py, PyAny>)> {
    let exported = match torch(object.py())? {
        // Exactly a tensor: a subclass (DTensor, ...) may define its own export.
        Some((tensor, to_dlpack)) if object.get_type().is(tensor.bind(object.py())) => {
            to_dlpack.bind(object.py()).call1((object,))
        }
        _ => object.call_method0("__dlpack__"),
    };
    let capsule = exported.map_err(|error| {
        PyTypeError::new_err(format!(
            "{}: cannot export it through DLPack (a numpy array or a torch tensor is \
             expected, got {}): {error}",
            what(),
            object.get_type()
        ))
    })?;
    const NAME: &CStr = c"dltensor";
    // SAFETY: `capsule` is a live object; a capsule of another name, or not
    // a capsule at all, gives null with a Python exception set.
    let managed = unsafe { pyo3::ffi::PyCapsule_GetPointer(capsule.as_ptr(), NAME.as_ptr()) }
        as *const DLManagedTensor;
    if managed.is_null() {
        let cause = PyErr::take(object.py()).map_or_else(String::new, |error| format!(": {error}"));
        return Err(PyTypeError::new_err(format!(
            "{}: __dlpack__() did not return an unused 'dltensor' capsule{cause}",
            what()
        )));
    }
    // SAFETY: a `dltensor` capsule holds a `DLManagedTensor` that lives as
    // long as the capsule, whose shape and strides have `ndim` entries.
    let tensor = unsafe { &(*managed).dl_tensor };
    let rank = usize::try_from(tensor.ndim)
        .map_err(|_| PyValueError::new_err(format!("{}: negative ndim {}", what(), tensor.ndim)))?;
    let read = |pointer: *const i64| -> Vec<i64> {
        if pointer.is_null() || rank == 0 {
            return Vec::new();
        }
        // SAFETY: as above.
        unsafe { std::slice::from_raw_parts(pointer, rank) }.to_vec()
    };
    let shape: Vec<usize> = read(tensor.shape)
        .into_iter()
        .map(|extent| {
            usize::try_from(extent)
                .map_err(|_| PyValueError::new_err(format!("{}: negative extent {extent}", what())))
        })
        .collect::<PyResult<_>>()?;
    let strides = read(tensor.strides);
    if !strides.is_empty() && !row_major(&shape, &strides) {
        return Err(PyValueError::new_err(format!(
            "{}: strides {strides:?} (in elements) of shape {shape:?} are not row-major: \
             pass a contiguous array (numpy.ascontiguousarray, tensor.contiguous())",
            what()
        )));
    }
    let dtype = match (tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes) {
        (DL_FLOAT, 32, 1) => DType::F32,
        (DL_FLOAT, 16, 1) => DType::F16,
        (DL_BFLOAT, 16, 1) => DType::BF16,
        (DL_INT, 32, 1) => DType::I32,
        (DL_INT, 64, 1) => DType::I64,
        (code, bits, lanes) => {
            return Err(PyTypeError::new_err(format!(
                "{}: {} is none of HIR's float32, float16, bfloat16, int32 and int64",
                what(),
                dlpack_type_name(code, bits, lanes)
            )));
        }
    };
    let memory = match tensor.device.device_type {
        DL_CPU => Memory::Host,
        DL_CUDA => Memory::Cuda(usize::try_from(tensor.device.device_id).unwrap_or(0)),
        other => {
            return Err(PyValueError::new_err(format!(
                "{}: DLPack device type {other} is neither the host (1) nor CUDA (2)",
                what()
            )));
        }
    };
    let address = (tensor.data as usize)
        .checked_add(tensor.byte_offset as usize)
        .ok_or_else(|| PyValueError::new_err(format!("{}: address overflows", what())))?;
    Ok((
        Array {
            address,
            shape,
            dtype,
            memory,
        },
        capsule,
    ))
}

/// torch's tensor type and its DLPack export, if this process has imported
/// torch (it is never imported here).
fn torch(py: Python<'_>) -> PyResult<Option<&'static (Py<PyType>, Py<PyAny>)>> {
    if let Some(found) = TORCH.get(py) {
        return Ok(Some(found));
    }
    let modules = MODULES.get_or_try_init(py, || -> PyResult<Py<PyDict>> {
        Ok(py
            .import("sys")?
            .getattr("modules")?
            .cast_into::<PyDict>()?
            .unbind())
    })?;
    if !modules.bind(py).contains("torch")? {
        return Ok(None);
    }
    let tensor = py
        .import("torch")?
        .getattr("Tensor")?
        .cast_into::<PyType>()?;
    let to_dlpack = py.import("torch.utils.dlpack")?.getattr("to_dlpack")?;
    Ok(Some(
        TORCH.get_or_init(py, || (tensor.unbind(), to_dlpack.unbind())),
    ))
}

/// Whether `strides` (in elements) lay `shape` out densely in row-major
/// order; the stride of an axis of extent 1 does not matter.
fn row_major(shape: &[usize], strides: &[i64]) -> bool {
    let mut expected: i64 = 1;
    for (&extent, &stride) in shape.iter().zip(strides).rev() {
        if extent != 1 && stride != expected {
            return false;
        }
        expected = expected.saturating_mul(extent as i64);
    }
    true
}

/// A DLPack element type as numpy and torch name it (`float64`, `uint8`,
/// `bool`, ...), or its codes where no name fits.
fn dlpack_type_name(code: u8, bits: u8, lanes: u16) -> String {
    let kind = match code {
        DL_INT => "int",
        DL_UINT => "uint",
        DL_FLOAT => "float",
        DL_BFLOAT => "bfloat",
        DL_COMPLEX => "complex",
        DL_BOOL => return format!("bool ({bits} bits)"),
        _ => return format!("DLPack type code {code} of {bits} bits"),
    };
    if lanes == 1 {
        format!("{kind}{bits}")
    } else {
        format!("{kind}{bits} in vectors of {lanes} lanes")
    }
}
