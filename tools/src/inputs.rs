//! A fusion program's inputs, made where they are held: each rank's shard of
//! every argument comes straight from a counter-based random generator (or
//! from the `--input` file read once), as the element type's bytes, on all
//! the host's cores or on the rank's GPU ([`Inputs::on_device`]), without
//! the global tensor. The random value of an element
//! ([`hir_runtime::random`]) is a hash of the seed, the argument and the
//! element's GLOBAL flat index, so a rank's shard is exactly the slice of the
//! global value, and the global value (`--check`'s reference, made only
//! then) is the same function over every index.

use crate::buffer::{Buffer, Made};
use crate::program::{Param, Signature};
use crate::tensor::{self, Tensor};
use anyhow::{Result, anyhow, bail};
use hir_abi::DType;
use hir_runtime::{npy, random};
use std::path::{Path, PathBuf};

/// Where an argument's values come from.
enum Source {
    /// The counter-based generator, keyed by the seed and the argument.
    Random(u64),
    /// A `--input` file's global value, in the argument's element type.
    File(npy::Array),
}

/// Every input of a fusion program, ready to be made whole or per rank.
pub struct Inputs<'a> {
    params: &'a [Param],
    sources: Vec<Source>,
}

impl<'a> Inputs<'a> {
    /// The inputs of `signature`'s entry in a run seeded `seed`, with
    /// `files` (the last `--input` of an argument wins) read here, once.
    pub fn new(signature: &'a Signature, files: &[(usize, PathBuf)], seed: u64) -> Result<Self> {
        let params = &signature.inputs;
        if let Some((index, _)) = files.iter().find(|(index, _)| *index >= params.len()) {
            bail!(
                "--input names arg{index}, but {} takes {} arguments",
                signature.name,
                params.len()
            );
        }
        let sources = params
            .iter()
            .enumerate()
            .map(
                |(index, param)| match files.iter().rev().find(|(input, _)| *input == index) {
                    Some((_, path)) => read(path, param, index).map(Source::File),
                    None => Ok(Source::Random(random::key(seed, index))),
                },
            )
            .collect::<Result<_>>()?;
        Ok(Self { params, sources })
    }

    /// The inputs of `signature`'s entry given as global values (another
    /// program's outputs, say), each rounded to its argument's element type.
    pub fn from_globals(signature: &'a Signature, globals: &[Tensor]) -> Result<Self> {
        let params = &signature.inputs;
        if globals.len() != params.len() {
            bail!(
                "{} takes {} arguments, not {}",
                signature.name,
                params.len(),
                globals.len()
            );
        }
        let sources = params
            .iter()
            .zip(globals)
            .map(|(param, global)| {
                if global.shape != param.shape {
                    bail!(
                        "{} takes a {:?} argument, not {:?}",
                        signature.name,
                        param.shape,
                        global.shape
                    );
                }
                let array = npy::Array::from_f64(param.dtype, &global.shape, &global.data);
                Ok(Source::File(array))
            })
            .collect::<Result<_>>()?;
        Ok(Self { params, sources })
    }

    /// The global value of argument `index`, in f64 (for the reference).
    pub fn global(&self, index: usize) -> Result<Tensor> {
        let param = &self.params[index];
        let len = tensor::numel(&param.shape)?;
        let data = match &self.sources[index] {
            Source::File(array) => array.to_f64(),
            Source::Random(key) => {
                let mut data = tensor::reserve(len, &param.shape)?;
                data.resize(len, 0.0);
                let whole = Region::whole(&param.shape);
                let dtype = param.dtype;
                whole.fill(&mut data, 1, |start, row: &mut [f64]| {
                    for (offset, value) in row.iter_mut().enumerate() {
                        *value = random::element(dtype, *key, start + offset);
                    }
                });
                data
            }
        };
        Ok(Tensor::new(param.shape.clone(), data))
    }

    /// Rank `rank`'s part of argument `index`, a buffer of the element
    /// type: its slice of each axis split over the mesh, the whole value
    /// where the rank is not on the mesh or nothing is split.
    pub fn shard(&self, index: usize, rank: usize) -> Result<Buffer> {
        let param = &self.params[index];
        let region = Region::of(param, rank);
        let size = param.dtype.size();
        let len = tensor::numel(&region.local)?
            .checked_mul(size)
            .ok_or_else(|| anyhow!("a shard of {:?} does not fit in memory", param.shape))?;
        let mut bytes = tensor::reserve(len, &region.local)?;
        bytes.resize(len, 0u8);
        match &self.sources[index] {
            Source::File(array) => region.fill(&mut bytes, size, |start, row: &mut [u8]| {
                row.copy_from_slice(&array.data[start * size..start * size + row.len()]);
            }),
            Source::Random(key) => {
                let dtype = param.dtype;
                region.fill(&mut bytes, size, |start, row: &mut [u8]| {
                    encode(dtype, row, |offset| {
                        random::element(dtype, *key, start + offset)
                    });
                });
            }
        }
        Buffer::try_from_bytes(param.dtype, region.local, &bytes)
    }
}

impl Inputs<'_> {
    /// Rank `rank`'s part of argument `index` as [`Inputs::shard`] makes it,
    /// to be made on its GPU when placed: none for a `--input` file's.
    /// Its host storage stays untouched (zero pages the kernel never reads).
    pub fn on_device(&self, index: usize, rank: usize) -> Result<Option<Buffer>> {
        let Source::Random(key) = self.sources[index] else {
            return Ok(None);
        };
        let param = &self.params[index];
        let region = Region::of(param, rank);
        let strides = tensor::strides(&region.global);
        let first = region
            .offsets
            .iter()
            .zip(&strides)
            .map(|(offset, stride)| offset * stride)
            .sum();
        let mut buffer = Buffer::zeroed(param.dtype, region.local)?;
        buffer.made = Some(Made {
            key,
            first,
            global_strides: strides,
        });
        Ok(Some(buffer))
    }
}

/// An output's buffer of `shape` before the run: NaN in `dtype` (0 for an
/// integer type, which has no NaN), so that a missing write shows.
pub fn nans(shape: Vec<usize>, dtype: DType) -> Result<Buffer> {
    let len = tensor::numel(&shape)?;
    let mut one = vec![0u8; dtype.size()];
    encode(dtype, &mut one, |_| f64::NAN);
    let bytes_len = len
        .checked_mul(one.len())
        .ok_or_else(|| anyhow!("an output of shape {shape:?} does not fit in memory"))?;
    let mut bytes = tensor::reserve(bytes_len, &shape)?;
    for _ in 0..len {
        bytes.extend_from_slice(&one);
    }
    Buffer::try_from_bytes(dtype, shape, &bytes)
}

/// `--input argI=FILE`'s global value, cast to the argument's type.
fn read(path: &Path, param: &Param, index: usize) -> Result<npy::Array> {
    let array = npy::read(path).map_err(|error| anyhow!("--input arg{index}: {error}"))?;
    if array.shape != param.shape {
        bail!(
            "--input arg{index}: {} has shape {:?}, but argument #{index} has the global shape {:?}",
            path.display(),
            array.shape,
            param.shape
        );
    }
    Ok(array.cast(param.dtype))
}

/// Writes `value(i)` as element `i` of `row`, `dtype`'s little-endian bytes
/// (rounded to nearest even; an integer type from its exact value).
fn encode(dtype: DType, row: &mut [u8], value: impl Fn(usize) -> f64) {
    let size = dtype.size();
    for (offset, bytes) in row.chunks_exact_mut(size).enumerate() {
        let value = value(offset);
        match dtype {
            DType::F32 => bytes.copy_from_slice(&(value as f32).to_le_bytes()),
            DType::BF16 => bytes.copy_from_slice(&half::bf16::from_f64(value).to_le_bytes()),
            DType::F16 => bytes.copy_from_slice(&half::f16::from_f64(value).to_le_bytes()),
            DType::I32 => bytes.copy_from_slice(&(value as i64 as i32).to_le_bytes()),
            DType::I64 => bytes.copy_from_slice(&(value as i64).to_le_bytes()),
        }
    }
}

/// A box of a global row-major array: the `local` extents from `offsets`.
struct Region {
    global: Vec<usize>,
    local: Vec<usize>,
    offsets: Vec<usize>,
}

/// Below this many elements, one thread makes a value: starting threads
/// would cost more than it saves.
const PARALLEL: usize = 1 << 16;

impl Region {
    fn whole(shape: &[usize]) -> Self {
        Self {
            global: shape.to_vec(),
            local: shape.to_vec(),
            offsets: vec![0; shape.len()],
        }
    }

    /// What rank `rank` holds of `param`: as `hir-lower`'s calling
    /// convention places it (slice `part` of `parts` of each split axis).
    fn of(param: &Param, rank: usize) -> Self {
        let mut region = Self::whole(&param.shape);
        let position = param.placement.as_ref().and_then(|placement| {
            Some((
                placement,
                placement.devices.iter().position(|&d| d == rank)?,
            ))
        });
        if let Some((placement, position)) = position {
            for (axis, parts, part) in placement.splits(position) {
                region.local[axis] = param.shape[axis] / parts;
                region.offsets[axis] = part * region.local[axis];
            }
        }
        region
    }

    /// Fills `out`, the region's elements in row-major order, `unit` items
    /// each, one row (the run along the last axis, contiguous in the global
    /// array too) at a time: `row(start, items)` with `start` the global
    /// flat index of the row's first element. Rows are shared out among the
    /// host's cores.
    fn fill<T: Send>(&self, out: &mut [T], unit: usize, row: impl Fn(usize, &mut [T]) + Sync) {
        let row_len = self.local.last().copied().unwrap_or(1) * unit;
        if out.is_empty() || row_len == 0 {
            return;
        }
        let rows = out.len() / row_len;
        let threads = std::thread::available_parallelism()
            .map_or(1, |count| count.get())
            .min(out.len() / unit / PARALLEL + 1)
            .min(rows);
        let per_thread = rows.div_ceil(threads);
        std::thread::scope(|scope| {
            for (block, chunk) in out.chunks_mut(per_thread * row_len).enumerate() {
                let row = &row;
                let first = block * per_thread;
                let mut work = move || {
                    for (index, items) in chunk.chunks_mut(row_len).enumerate() {
                        row(self.row_start(first + index), items);
                    }
                };
                if threads == 1 {
                    work();
                } else {
                    scope.spawn(work);
                }
            }
        });
    }

    /// The global flat index of the first element of local row `row`.
    fn row_start(&self, row: usize) -> usize {
        let axes = self.global.len();
        if axes == 0 {
            return 0;
        }
        let mut rest = row;
        let mut start = self.offsets[axes - 1];
        let mut stride = self.global[axes - 1];
        for axis in (0..axes - 1).rev() {
            start += (self.offsets[axis] + rest % self.local[axis]) * stride;
            rest /= self.local[axis];
            stride *= self.global[axis];
        }
        start
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::Placement;

    fn param(shape: Vec<usize>, dtype: DType, devices: usize, didx: Option<usize>) -> Param {
        Param {
            shape,
            dtype,
            placement: Some(Placement {
                mesh: "tp".into(),
                devices: (0..devices).collect(),
                shape: vec![devices],
                didx,
                didy: None,
                didz: None,
            }),
        }
    }

    fn signature(inputs: Vec<Param>) -> Signature {
        Signature {
            name: "@f".into(),
            fusion: true,
            inputs,
            outputs: Vec::new(),
        }
    }

    /// Rank `rank`'s shard of the global value, sliced the way the
    /// assembled outputs are joined.
    fn sliced(global: &Tensor, param: &Param, rank: usize) -> Vec<u8> {
        let placement = param.placement.as_ref().unwrap();
        let local = placement
            .splits(rank)
            .into_iter()
            .fold(global.clone(), |local, (axis, parts, part)| {
                local.part(axis, part, parts)
            });
        npy::Array::from_f64(param.dtype, &local.shape, &local.data).data
    }

    #[test]
    fn a_ranks_shard_is_the_slice_of_the_global_value() {
        for devices in [1, 2, 4] {
            for dtype in [DType::BF16, DType::F32, DType::I32] {
                let signature = signature(vec![
                    param(vec![8, 12], dtype, devices, Some(0)),
                    param(vec![3, 8, 5], dtype, devices, Some(1)),
                    param(vec![6, 8], dtype, devices, Some(1)),
                    param(vec![4, 6], dtype, devices, None),
                ]);
                let inputs = Inputs::new(&signature, &[], 7).unwrap();
                for (index, param) in signature.inputs.iter().enumerate() {
                    let global = inputs.global(index).unwrap();
                    for rank in 0..devices {
                        assert_eq!(
                            inputs.shard(index, rank).unwrap().bytes(),
                            sliced(&global, param, rank),
                            "arg{index} {dtype:?} rank {rank} of {devices}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn many_threads_make_the_same_values_as_one() {
        // Large enough to be shared out among the cores.
        let signature = signature(vec![param(vec![512, 384], DType::BF16, 2, Some(0))]);
        let inputs = Inputs::new(&signature, &[], 3).unwrap();
        let global = inputs.global(0).unwrap();
        let serial: Vec<f64> = (0..512 * 384)
            .map(|index| random::element(DType::BF16, random::key(3, 0), index))
            .collect();
        assert_eq!(global.data, serial);
        let shard = inputs.shard(0, 1).unwrap();
        assert_eq!(shard.shape, [256, 384]);
        assert_eq!(shard.bytes(), sliced(&global, &signature.inputs[0], 1));
    }

    #[test]
    fn values_keep_the_random_distribution() {
        let floats: Vec<f64> = (0..4000)
            .map(|i| random::element(DType::BF16, random::key(1, 2), i))
            .collect();
        assert!(floats.iter().all(|v| (0.09..=1.0).contains(&v.abs())));
        assert!(floats.iter().any(|&v| v < 0.0) && floats.iter().any(|&v| v > 0.0));
        let mean = floats.iter().map(|v| v.abs()).sum::<f64>() / floats.len() as f64;
        assert!((mean - 0.55).abs() < 0.02, "mean magnitude {mean}");
        let ints: Vec<f64> = (0..4000)
            .map(|i| random::element(DType::I64, random::key(1, 2), i))
            .collect();
        assert!(
            ints.iter()
                .all(|&v| v == v.trunc() && (1.0..=9.0).contains(&v.abs()))
        );
        for magnitude in 1..=9 {
            assert!(ints.iter().any(|&v| v.abs() == f64::from(magnitude)));
        }
        // Another seed or argument, other values.
        assert_ne!(
            random::element(DType::F32, random::key(1, 2), 0),
            random::element(DType::F32, random::key(2, 2), 0)
        );
        assert_ne!(
            random::element(DType::F32, random::key(1, 2), 0),
            random::element(DType::F32, random::key(1, 3), 0)
        );
    }

    #[test]
    fn outputs_start_as_nan_and_files_are_named() {
        let outputs = nans(vec![2, 3], DType::BF16).unwrap();
        assert!(outputs.read().unwrap().data.iter().all(|v| v.is_nan()));
        assert_eq!(nans(vec![4], DType::I32).unwrap().bytes(), [0; 16]);
        let signature = signature(vec![param(vec![4], DType::F32, 1, None)]);
        let error = Inputs::new(&signature, &[(1, "x.npy".into())], 0)
            .err()
            .unwrap()
            .to_string();
        assert_eq!(error, "--input names arg1, but @f takes 1 arguments");
    }

    #[test]
    fn scalars_and_empty_values_are_made() {
        let signature = signature(vec![
            param(vec![], DType::F32, 1, None),
            param(vec![0, 4], DType::F32, 1, None),
        ]);
        let inputs = Inputs::new(&signature, &[], 0).unwrap();
        assert_eq!(inputs.shard(0, 0).unwrap().bytes().len(), 4);
        assert_eq!(inputs.global(0).unwrap().data.len(), 1);
        assert!(inputs.shard(1, 0).unwrap().bytes().is_empty());
    }
}
