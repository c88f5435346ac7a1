//! Arrays from DLPack: what a numpy array or a torch tensor hands over
//! through `__dlpack__()` (a `dltensor` capsule), read without a copy.
//!
//! The capsule keeps its producer's array alive; it is held until the run
//! that reads the memory has returned and then dropped, still named
//! `dltensor`, so the producer's own destructor frees the export.

use hir_abi::DType;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use std::ffi::{CStr, c_void};

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
pub fn import<'py>(object: &Bound<'py, PyAny>, what: &str) -> PyResult<(Array, Bound<'py, PyAny>)> {
    let capsule = object.call_method0("__dlpack__").map_err(|error| {
        PyTypeError::new_err(format!(
            "{what}: cannot export it through DLPack (a numpy array or a torch tensor is \
             expected, got {}): {error}",
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
            "{what}: __dlpack__() did not return an unused 'dltensor' capsule{cause}"
        )));
    }
    // SAFETY: a `dltensor` capsule holds a `DLManagedTensor` that lives as
    // long as the capsule, whose shape and strides have `ndim` entries.
    let tensor = unsafe { &(*managed).dl_tensor };
    let rank = usize::try_from(tensor.ndim)
        .map_err(|_| PyValueError::new_err(format!("{what}: negative ndim {}", tensor.ndim)))?;
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
                .map_err(|_| PyValueError::new_err(format!("{what}: negative extent {extent}")))
        })
        .collect::<PyResult<_>>()?;
    let strides = read(tensor.strides);
    if !strides.is_empty() && !row_major(&shape, &strides) {
        return Err(PyValueError::new_err(format!(
            "{what}: strides {strides:?} (in elements) of shape {shape:?} are not row-major: \
             pass a contiguous array (numpy.ascontiguousarray, tensor.contiguous())"
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
                "{what}: {} is none of HIR's float32, float16, bfloat16, int32 and int64",
                dlpack_type_name(code, bits, lanes)
            )));
        }
    };
    let memory = match tensor.device.device_type {
        DL_CPU => Memory::Host,
        DL_CUDA => Memory::Cuda(usize::try_from(tensor.device.device_id).unwrap_or(0)),
        other => {
            return Err(PyValueError::new_err(format!(
                "{what}: DLPack device type {other} is neither the host (1) nor CUDA (2)"
            )));
        }
    };
    let address = (tensor.data as usize)
        .checked_add(tensor.byte_offset as usize)
        .ok_or_else(|| PyValueError::new_err(format!("{what}: address overflows")))?;
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
