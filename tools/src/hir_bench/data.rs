//! The benchmark's values, kept as the element type's bytes (A of the
//! largest shape is 512 Mi elements): the logical inputs made once per family
//! and shape, each rank's shard of them, and the f64 references outputs are
//! checked against.

use anyhow::{Result, anyhow};
use hir_abi::DType;
use hir_tools::programs::{Logical, Params};
use hir_tools::tensor::{self, Rng};

/// `len` zero bytes of a tensor of `shape`, reserved fallibly: memory that
/// cannot be had is an error naming the size, not an abort.
fn zeros(len: usize, shape: &[usize]) -> Result<Vec<u8>> {
    let mut bytes = tensor::reserve(len, shape)?;
    bytes.resize(len, 0);
    Ok(bytes)
}

/// The bytes of `shape`'s elements of `size` bytes, or an error when they
/// overflow 64-bit sizes.
fn byte_len(shape: &[usize], size: usize) -> Result<usize> {
    tensor::numel(shape)?
        .checked_mul(size)
        .ok_or_else(|| anyhow!("a tensor of shape {shape:?} has more bytes than 64-bit sizes hold"))
}

/// A logical tensor: row-major elements of `dtype`.
pub struct Values {
    pub dtype: DType,
    pub bytes: Vec<u8>,
}

/// Stores `value` (already rounded to `dtype`) at element `index`.
fn store(dtype: DType, bytes: &mut [u8], index: usize, value: f64) {
    match dtype {
        DType::F32 => {
            bytes[index * 4..index * 4 + 4].copy_from_slice(&(value as f32).to_le_bytes())
        }
        DType::BF16 => bytes[index * 2..index * 2 + 2]
            .copy_from_slice(&half::bf16::from_f64(value).to_bits().to_le_bytes()),
        DType::F16 => bytes[index * 2..index * 2 + 2]
            .copy_from_slice(&half::f16::from_f64(value).to_bits().to_le_bytes()),
        DType::I32 | DType::I64 => unreachable!("--dtype names float types only"),
    }
}

/// Element `index` of `bytes`.
pub fn load(dtype: DType, bytes: &[u8], index: usize) -> f32 {
    match dtype {
        DType::F32 => f32::from_le_bytes(bytes[index * 4..index * 4 + 4].try_into().unwrap()),
        DType::BF16 => {
            half::bf16::from_bits(u16::from_le_bytes([bytes[index * 2], bytes[index * 2 + 1]]))
                .to_f32()
        }
        DType::F16 => {
            half::f16::from_bits(u16::from_le_bytes([bytes[index * 2], bytes[index * 2 + 1]]))
                .to_f32()
        }
        DType::I32 | DType::I64 => unreachable!("--dtype names float types only"),
    }
}

/// Every element of `bytes`, in f32.
pub fn load_all(dtype: DType, bytes: &[u8]) -> Result<Vec<f32>> {
    let len = bytes.len() / dtype.size();
    let mut values = tensor::reserve(len, &[len])?;
    values.extend((0..len).map(|index| load(dtype, bytes, index)));
    Ok(values)
}

/// The bytes of `len` NaNs of `dtype`: what outputs hold before a run, so
/// that an element the program does not write shows.
pub fn nans(dtype: DType, len: usize) -> Result<Vec<u8>> {
    let mut bytes = zeros(byte_len(&[len], dtype.size())?, &[len])?;
    for index in 0..len {
        store(dtype, &mut bytes, index, f64::NAN);
    }
    Ok(bytes)
}

impl Values {
    /// Uniform in [-1, -0.1] ∪ [0.1, 1], rounded to `dtype` (as `hir-run`'s
    /// random inputs): never zero. Made in chunks of 2^20 elements, each
    /// from its own seed, on all the host's cores: the same values whatever
    /// the machine.
    /// Memory that cannot be had is an error naming the size.
    pub fn random(shape: Vec<usize>, dtype: DType, seed: u64) -> Result<Values> {
        const CHUNK: usize = 1 << 20;
        let size = dtype.size();
        let mut bytes = zeros(byte_len(&shape, size)?, &shape)?;
        let threads = std::thread::available_parallelism().map_or(1, |count| count.get());
        let chunks: Vec<(usize, &mut [u8])> = bytes.chunks_mut(CHUNK * size).enumerate().collect();
        let per_thread = chunks.len().div_ceil(threads).max(1);
        let mut groups: Vec<Vec<(usize, &mut [u8])>> = Vec::new();
        for chunk in chunks {
            match groups.last_mut() {
                Some(group) if group.len() < per_thread => group.push(chunk),
                _ => groups.push(vec![chunk]),
            }
        }
        std::thread::scope(|scope| {
            for group in groups {
                scope.spawn(move || {
                    for (number, chunk) in group {
                        let mut rng = Rng::new(
                            seed.wrapping_mul(0x9e37_79b9_7f4a_7c15)
                                .wrapping_add(number as u64),
                        );
                        for index in 0..chunk.len() / size {
                            let magnitude = 0.1 + 0.9 * rng.unit();
                            let value = if rng.next_u64() & 1 == 0 {
                                magnitude
                            } else {
                                -magnitude
                            };
                            store(dtype, chunk, index, tensor::round(value, dtype));
                        }
                    }
                });
            }
        });
        Ok(Values { dtype, bytes })
    }

    pub fn get(&self, index: usize) -> f64 {
        f64::from(load(self.dtype, &self.bytes, index))
    }
}

/// The slice at `index` of axis `axis` of `bytes`, a row-major array of
/// `shape` with elements of `size` bytes: what the rank at mesh position
/// `index` holds of a value sharded along `axis`.
pub fn shard(
    bytes: &[u8],
    shape: &[usize],
    size: usize,
    axis: usize,
    index: usize,
) -> Result<Vec<u8>> {
    let outer: usize = shape[..axis].iter().product();
    let inner: usize = shape[axis + 1..].iter().product::<usize>() * size;
    let extent = shape[axis];
    let mut out = tensor::reserve(outer * inner, shape)?;
    for o in 0..outer {
        let start = (o * extent + index) * inner;
        out.extend_from_slice(&bytes[start..start + inner]);
    }
    Ok(out)
}

/// The global row-major index of element `local` of the shard at `index` of
/// axis `axis` (the inverse of [`shard`]); the identity for a replicated
/// value (`axis` `None`).
pub fn global_index(shape: &[usize], axis: Option<usize>, index: usize, local: usize) -> usize {
    let Some(axis) = axis else {
        return local;
    };
    let inner: usize = shape[axis + 1..].iter().product();
    let (o, i) = (local / inner, local % inner);
    (o * shape[axis] + index) * inner + i
}

/// The logical inputs of one family and shape, made once and shared by all
/// its variants.
pub struct Inputs {
    pub params: Params,
    pub a: Option<Values>,
    pub b: Option<Values>,
    pub l: Option<Values>,
    pub p: Option<Values>,
}

impl Inputs {
    pub fn get(&self, logical: Logical) -> &Values {
        match logical {
            Logical::A => self.a.as_ref(),
            Logical::B => self.b.as_ref(),
            Logical::L => self.l.as_ref(),
            Logical::P => self.p.as_ref(),
            _ => None,
        }
        .unwrap_or_else(|| panic!("{logical:?} is not an input that was made"))
    }

    /// The f64 value of element `index` of the logical output `output`,
    /// computed from the inputs: a dot product of length K (K/D per
    /// partial), or a sum over the D partials.
    pub fn expected(&self, output: Logical, index: usize) -> f64 {
        let Params {
            devices: d, k, n, ..
        } = self.params;
        match output {
            Logical::AgC => {
                let (a, b) = (self.get(Logical::A), self.get(Logical::B));
                let (row, col) = (index / n, index % n);
                (0..k)
                    .map(|p| a.get(row * k + p) * b.get(p * n + col))
                    .sum()
            }
            Logical::Partial | Logical::RowC => {
                // Device `part` multiplies its slice of A by its rows of B.
                let (l, b) = (self.get(Logical::L), self.get(Logical::B));
                let kd = k / d;
                let m = self.params.m;
                let dot = |part: usize, row: usize, col: usize| -> f64 {
                    (0..kd)
                        .map(|p| {
                            l.get((part * m + row) * kd + p) * b.get((part * kd + p) * n + col)
                        })
                        .sum()
                };
                if output == Logical::Partial {
                    let (part, rest) = (index / (m * n), index % (m * n));
                    dot(part, rest / n, rest % n)
                } else {
                    (0..d).map(|part| dot(part, index / n, index % n)).sum()
                }
            }
            Logical::Gathered => self.get(Logical::A).get(index),
            Logical::ReducedP => {
                let p = self.get(Logical::P);
                let plane = self.params.m * n;
                (0..d).map(|part| p.get(part * plane + index)).sum()
            }
            input => panic!("{input:?} is an input, not an output"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_and_maps_back() {
        let shape = [2, 3, 2];
        let bytes: Vec<u8> = (0..12).collect();
        let part = shard(&bytes, &shape, 1, 1, 2).unwrap();
        assert_eq!(part, vec![4, 5, 10, 11]);
        for (local, &value) in part.iter().enumerate() {
            assert_eq!(global_index(&shape, Some(1), 2, local), value as usize);
        }
        assert_eq!(global_index(&shape, None, 0, 7), 7);
    }

    #[test]
    fn random_values_are_never_small_and_are_deterministic() {
        let values = Values::random(vec![3, 1000], DType::BF16, 5).unwrap();
        let again = Values::random(vec![3, 1000], DType::BF16, 5).unwrap();
        assert_eq!(values.bytes, again.bytes);
        assert!((0..3000).all(|index| (0.09..=1.0).contains(&values.get(index).abs())));
        assert!(load(DType::BF16, &nans(DType::BF16, 2).unwrap(), 1).is_nan());
    }

    #[test]
    fn data_too_large_for_memory_is_an_error_naming_it() {
        // 2^22 x 2^22 bf16: 32 TiB.
        let error = Values::random(vec![1 << 22, 1 << 22], DType::BF16, 5)
            .err()
            .unwrap()
            .to_string();
        assert_eq!(
            error,
            "out of memory: cannot allocate 35184372088832 B for a tensor of shape \
             [4194304, 4194304]"
        );
        let error = Values::random(vec![1 << 62, 8], DType::F32, 5)
            .err()
            .unwrap()
            .to_string();
        assert!(
            error.contains("more elements than 64-bit sizes hold"),
            "{error}"
        );
        assert!(nans(DType::F32, 1 << 44).is_err());
        assert!(load_all(DType::F32, &[0; 8]).unwrap().len() == 2);
    }
}
