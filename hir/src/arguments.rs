//! The one argument packer: the arrays a rank passes to a compiled
//! program's entry, as the ranked memref descriptors its `_mlir_ciface_`
//! wrapper takes. `hir::compile`'s calls, `hir-run` and `hir-bench` all
//! pack through [`Arguments`].

pub use hir_abi::DType;
use std::ffi::c_void;

/// One argument a rank passes: a dense row-major array of `shape` and
/// `dtype` at `address`, in host memory for the cpu backend and in the
/// rank's GPU memory for the cuda backend. The caller keeps it alive and
/// unaliased for the call.
#[derive(Clone, Debug)]
pub struct Array {
    /// The first element's address.
    pub address: usize,
    pub shape: Vec<usize>,
    pub dtype: DType,
}

impl Array {
    pub fn of<T>(data: *mut T, shape: Vec<usize>, dtype: DType) -> Array {
        Array {
            address: data as usize,
            shape,
            dtype,
        }
    }

    /// Its elements' bytes.
    pub fn bytes(&self) -> usize {
        self.shape.iter().product::<usize>() * self.dtype.size()
    }
}

/// The packed arguments of one call: a descriptor per array and the
/// pointers the entry takes.
pub struct Arguments {
    /// `{ allocated, aligned, offset, sizes[rank], strides[rank] }` each;
    /// held for `arguments`, which point into them.
    _descriptors: Vec<Vec<i64>>,
    /// A pointer to each descriptor; held as `_descriptors`.
    _pointers: Vec<*mut i64>,
    /// A pointer to each of `_pointers`: the packed arguments.
    arguments: Vec<*mut c_void>,
}

// SAFETY: the pointers point into the value's own heap vectors, which are
// not changed after `new`; the entry only reads the descriptors.
unsafe impl Sync for Arguments {}
// SAFETY: as above; moving the value moves no heap vector.
unsafe impl Send for Arguments {}

impl Arguments {
    /// `arrays`, packed in order.
    pub fn new(arrays: &[Array]) -> Arguments {
        let mut descriptors: Vec<Vec<i64>> = arrays.iter().map(descriptor).collect();
        let mut pointers: Vec<*mut i64> = descriptors
            .iter_mut()
            .map(|descriptor| descriptor.as_mut_ptr())
            .collect();
        let arguments = pointers
            .iter_mut()
            .map(|pointer| (pointer as *mut *mut i64).cast())
            .collect();
        Arguments {
            _descriptors: descriptors,
            _pointers: pointers,
            arguments,
        }
    }

    /// What the entry's packed interface takes, valid while `self` lives.
    pub fn packed(&self) -> *mut *mut c_void {
        self.arguments.as_ptr().cast_mut()
    }
}

/// The ranked memref descriptor of a dense row-major array.
fn descriptor(array: &Array) -> Vec<i64> {
    let address = array.address as i64;
    let mut descriptor = vec![address, address, 0];
    descriptor.extend(array.shape.iter().map(|&extent| extent as i64));
    let mut strides = vec![1i64; array.shape.len()];
    for axis in (0..array.shape.len().saturating_sub(1)).rev() {
        strides[axis] = strides[axis + 1] * array.shape[axis + 1] as i64;
    }
    descriptor.extend(strides);
    descriptor
}
