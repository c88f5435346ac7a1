//! The arguments a launcher passes to a lowered entry function: one buffer
//! per argument and rank, packed for the entry by HIR's one argument packer
//! ([`hir::arguments::Arguments`]). Placing a
//! buffer makes it known to its rank (`Ranks::place`): the runtime checks
//! every view the program passes against the buffers its rank knows.

use crate::tensor::{self, Tensor};
use anyhow::{Result, anyhow, ensure};
use hir::arguments::{Arguments, Array};
use hir_abi::DType;
use hir_runtime::bounds::{Allocations, Registration};
use hir_runtime::{cuda::DeviceBuffer, npy};
use std::ffi::c_void;
use std::sync::Arc;

/// The elements converted at a time between f64 and a buffer's type: the
/// only temporary a conversion needs.
const CHUNK: usize = 1 << 16;

/// One argument of one rank: its elements in a buffer of the element type.
pub struct Buffer {
    pub dtype: DType,
    pub shape: Vec<usize>,
    /// `storage` known to its rank on the cpu backend; dropped before it.
    known: Option<Registration>,
    /// `u64`s, so that every element type is aligned.
    storage: Vec<u64>,
    /// Where the program reads and writes it when not in `storage`: the
    /// rank's GPU (`Ranks::place`, `Ranks::fetch`).
    pub(crate) device: Option<DeviceBuffer>,
    /// Made on the rank's GPU when placed there, not from `storage`.
    pub made: Option<Made>,
}

/// How a buffer's values are made on its GPU: the random input values
/// keyed `key` ([`hir_runtime::random`]) of the global array it is a box
/// of, its element `i` global element `first + i·global_strides`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Made {
    pub key: u64,
    pub first: usize,
    pub global_strides: Vec<usize>,
}

impl Buffer {
    /// A buffer of `tensor`'s values rounded to `dtype` (through f32 to a
    /// float type, exactly to an integer type).
    /// Converted a chunk at a time into memory reserved fallibly, so that
    /// no second copy of the whole is made.
    pub fn try_new(tensor: &Tensor, dtype: DType) -> Result<Self> {
        let mut buffer = Self::zeroed(dtype, tensor.shape.clone())?;
        let size = dtype.size();
        let chunks = tensor.data.chunks(CHUNK);
        for (values, bytes) in chunks.zip(buffer.bytes_mut().chunks_mut(CHUNK * size)) {
            bytes.copy_from_slice(&npy::Array::from_f64(dtype, &[values.len()], values).data);
        }
        Ok(buffer)
    }

    /// A buffer of `shape` whose bytes are all zero, or an error naming its
    /// size when memory cannot be had.
    pub fn zeroed(dtype: DType, shape: Vec<usize>) -> Result<Self> {
        let bytes = tensor::numel(&shape)?
            .checked_mul(dtype.size())
            .ok_or_else(|| anyhow!("a {shape:?} {} buffer overflows 64-bit sizes", dtype.mlir()))?;
        let words = bytes.div_ceil(8).max(1);
        let storage = zeroed_words(words, &shape)?;
        Ok(Self {
            dtype,
            shape,
            known: None,
            storage,
            device: None,
            made: None,
        })
    }

    /// A buffer of `shape` holding `bytes`, the elements of `dtype` in
    /// row-major order; an error when they are not, or when memory cannot
    /// be had.
    pub fn try_from_bytes(dtype: DType, shape: Vec<usize>, bytes: &[u8]) -> Result<Self> {
        let len = tensor::numel(&shape)?
            .checked_mul(dtype.size())
            .filter(|&len| len == bytes.len());
        ensure!(
            len.is_some(),
            "{} B are not the elements of a {shape:?} {} buffer",
            bytes.len(),
            dtype.mlir()
        );
        let mut buffer = Self::zeroed(dtype, shape)?;
        buffer.bytes_mut().copy_from_slice(bytes);
        Ok(buffer)
    }

    /// Makes the host storage a buffer of the rank whose `allocations` these
    /// are, while this buffer lives (the cpu backend reads it in place).
    pub(crate) fn register(&mut self, allocations: &Arc<Allocations>) -> Result<()> {
        let bytes = self.storage.len() * size_of::<u64>();
        let ptr = self.storage.as_ptr().cast::<u8>();
        self.known = Some(allocations.register(ptr, bytes)?);
        Ok(())
    }

    /// The elements' bytes.
    pub fn bytes(&self) -> &[u8] {
        // Checked to fit when the buffer was made.
        let len = self.shape.iter().product::<usize>() * self.dtype.size();
        // SAFETY: `storage` holds at least `len` bytes.
        unsafe { std::slice::from_raw_parts(self.storage.as_ptr().cast::<u8>(), len) }
    }

    pub fn bytes_mut(&mut self) -> &mut [u8] {
        let len = self.shape.iter().product::<usize>() * self.dtype.size();
        // SAFETY: as `bytes`.
        unsafe { std::slice::from_raw_parts_mut(self.storage.as_mut_ptr().cast::<u8>(), len) }
    }

    /// Where the program reads and writes it: its device copy once placed
    /// on a GPU, else its host storage.
    pub fn array(&self) -> Array {
        let address = match &self.device {
            Some(memory) => memory.ptr() as usize,
            None => self.storage.as_ptr() as usize,
        };
        Array {
            address,
            shape: self.shape.clone(),
            dtype: self.dtype,
        }
    }

    /// The values, in f64, converted a chunk at a time into memory reserved
    /// fallibly.
    pub fn read(&self) -> Result<Tensor> {
        let len = tensor::numel(&self.shape)?;
        let mut data = tensor::reserve(len, &self.shape)?;
        for bytes in self.bytes().chunks(CHUNK * self.dtype.size()) {
            let chunk = npy::Array {
                dtype: self.dtype,
                shape: vec![bytes.len() / self.dtype.size()],
                data: bytes.to_vec(),
            };
            data.extend(chunk.to_f64());
        }
        Ok(Tensor::new(self.shape.clone(), data))
    }
}

/// `words` zero words, reserved fallibly from zeroed pages that are touched
/// only when written (an input made on a GPU never is).
fn zeroed_words(words: usize, shape: &[usize]) -> Result<Vec<u64>> {
    let out_of_memory = || {
        anyhow!(
            "out of memory: cannot allocate {} B for a buffer of shape {shape:?}",
            words as u128 * 8
        )
    };
    let layout = std::alloc::Layout::array::<u64>(words).map_err(|_| out_of_memory())?;
    // SAFETY: `layout` is not zero-sized (`words` is at least 1).
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<u64>();
    if ptr.is_null() {
        return Err(out_of_memory());
    }
    // SAFETY: allocated by the global allocator with `words` u64s' layout,
    // all initialised (zero).
    Ok(unsafe { Vec::from_raw_parts(ptr, words, words) })
}

/// One rank's arguments, packed for the entry.
pub struct RankCall {
    pub buffers: Vec<Buffer>,
    arguments: Arguments,
}

impl RankCall {
    pub fn new(buffers: Vec<Buffer>) -> Self {
        let arguments = pack(&buffers);
        Self { buffers, arguments }
    }

    /// Packs the buffers again where they now are: call it once they are
    /// placed (a placed buffer's device copy is what the program reads).
    pub fn pack(&mut self) {
        self.arguments = pack(&self.buffers);
    }
}

fn pack(buffers: &[Buffer]) -> Arguments {
    let arrays: Vec<Array> = buffers.iter().map(Buffer::array).collect();
    Arguments::new(&arrays)
}

/// Every rank's packed arguments, shared with the rank threads: each uses its
/// own only. They stay valid while the `RankCall`s live and are not packed
/// again: fetching results rewrites buffer contents, never their addresses.
pub struct Calls(Vec<*mut *mut c_void>);

// SAFETY: rank `r`'s thread is the only one to touch `self.0[r]`'s buffers.
unsafe impl Sync for Calls {}

impl Calls {
    pub fn new(ranks: &[RankCall]) -> Self {
        Calls(ranks.iter().map(|call| call.arguments.packed()).collect())
    }

    pub fn arguments(&self, rank: usize) -> *mut *mut c_void {
        self.0[rank]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_convert_in_chunks_and_refuse_what_memory_cannot_hold() {
        // More elements than one chunk, every type: exact round trips (of
        // integers up to 256, which every type holds).
        let len = 3 * CHUNK + 5;
        let tensor = Tensor::new(vec![len], (0..len).map(|i| (i % 257) as f64).collect());
        for dtype in DType::ALL {
            let buffer = Buffer::try_new(&tensor, dtype).unwrap();
            assert!(buffer.read().unwrap() == tensor, "{dtype:?}");
        }
        // 2^42 f32s: 16 TiB, an error naming the size, not an abort.
        let error = Buffer::zeroed(DType::F32, vec![1 << 42])
            .err()
            .unwrap()
            .to_string();
        assert!(
            error.starts_with("out of memory: cannot allocate"),
            "{error}"
        );
        let error = Buffer::zeroed(DType::I64, vec![1 << 62, 2])
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("overflows 64-bit sizes"), "{error}");
        assert!(Buffer::zeroed(DType::I64, vec![1 << 62, 4]).is_err());
    }
}
