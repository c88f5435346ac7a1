//! Global values in f64: random inputs, rounding to an element type, and
//! the slices of a `didx` axis each rank holds. Sizes come from programs, so
//! element counts are checked ([`numel`]) and memory is reserved fallibly
//! ([`reserve`]): a shape too large is an error naming it, never a wrap, a
//! panic or an abort.

use anyhow::{Result, anyhow};
use hir_abi::DType;

/// A row-major array of f64 values.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    pub shape: Vec<usize>,
    pub data: Vec<f64>,
}

impl Tensor {
    pub fn new(shape: Vec<usize>, data: Vec<f64>) -> Self {
        debug_assert_eq!(shape.iter().product::<usize>(), data.len());
        Self { shape, data }
    }

    /// Row-major strides of the shape.
    pub fn strides(&self) -> Vec<usize> {
        strides(&self.shape)
    }

    /// Uniform in [-1, -0.1] ∪ [0.1, 1], rounded to `dtype`: never zero, so
    /// that a missing write shows; of an integer type, uniform integers in
    /// [-9, -1] ∪ [1, 9], small enough that sums and short products stay
    /// exact in f64 and in the type. A shape whose values do not fit in
    /// memory is an error.
    pub fn try_random(shape: Vec<usize>, dtype: DType, rng: &mut Rng) -> Result<Self> {
        let len = numel(&shape)?;
        let mut data = reserve(len, &shape)?;
        if !dtype.is_float() {
            data.extend((0..len).map(|_| {
                let magnitude = (1 + rng.next_u64() % 9) as f64;
                if rng.next_u64() & 1 == 0 {
                    magnitude
                } else {
                    -magnitude
                }
            }));
            return Ok(Self::new(shape, data));
        }
        data.extend((0..len).map(|_| {
            let magnitude = 0.1 + 0.9 * rng.unit();
            let value = if rng.next_u64() & 1 == 0 {
                magnitude
            } else {
                -magnitude
            };
            round(value, dtype)
        }));
        Ok(Self::new(shape, data))
    }

    /// `shape` filled with `value`, or an error when it does not fit.
    pub fn filled(shape: Vec<usize>, value: f64) -> Result<Self> {
        let len = numel(&shape)?;
        let mut data = reserve(len, &shape)?;
        data.resize(len, value);
        Ok(Self::new(shape, data))
    }

    /// Every value rounded to `dtype`.
    pub fn rounded(mut self, dtype: DType) -> Self {
        for value in &mut self.data {
            *value = round(*value, dtype);
        }
        self
    }

    /// Part `index` of `count` equal contiguous parts along `axis` (what the
    /// device at mesh position `index` holds of a `didx` axis).
    pub fn part(&self, axis: usize, index: usize, count: usize) -> Tensor {
        let outer: usize = self.shape[..axis].iter().product();
        let extent = self.shape[axis];
        let part = extent / count;
        let inner: usize = self.shape[axis + 1..].iter().product::<usize>();
        let mut data = Vec::with_capacity(outer * part * inner);
        for o in 0..outer {
            let start = (o * extent + index * part) * inner;
            data.extend_from_slice(&self.data[start..start + part * inner]);
        }
        let mut shape = self.shape.clone();
        shape[axis] = part;
        Tensor::new(shape, data)
    }

    /// The concatenation of `parts` along `axis`, or an error when it does
    /// not fit in memory.
    pub fn concat(parts: &[Tensor], axis: usize) -> Result<Tensor> {
        let first = &parts[0];
        let outer: usize = first.shape[..axis].iter().product();
        let mut shape = first.shape.clone();
        shape[axis] = parts.iter().map(|part| part.shape[axis]).sum();
        let mut data = reserve(numel(&shape)?, &shape)?;
        for o in 0..outer {
            for part in parts {
                let inner = part.shape[axis..].iter().product::<usize>();
                data.extend_from_slice(&part.data[o * inner..(o + 1) * inner]);
            }
        }
        Ok(Tensor::new(shape, data))
    }

    /// A copy, or an error when it does not fit in memory.
    pub fn try_clone(&self) -> Result<Tensor> {
        let mut data = reserve(self.data.len(), &self.shape)?;
        data.extend_from_slice(&self.data);
        Ok(Tensor::new(self.shape.clone(), data))
    }
}

/// The number of elements of `shape`, or an error when it overflows.
pub fn numel(shape: &[usize]) -> Result<usize> {
    shape
        .iter()
        .try_fold(1usize, |count, &extent| count.checked_mul(extent))
        .ok_or_else(|| {
            anyhow!("a tensor of shape {shape:?} has more elements than 64-bit sizes hold")
        })
}

/// An empty vector with room for `len` values of a tensor of `shape`, or an
/// error naming the size when memory cannot be had.
pub fn reserve<T>(len: usize, shape: &[usize]) -> Result<Vec<T>> {
    let mut values = Vec::new();
    values.try_reserve_exact(len).map_err(|_| {
        anyhow!(
            "out of memory: cannot allocate {} B for a tensor of shape {shape:?}",
            len as u128 * size_of::<T>() as u128
        )
    })?;
    Ok(values)
}

/// Row-major strides of `shape`, whose element count fits (see [`numel`]).
pub fn strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    for axis in (0..shape.len().saturating_sub(1)).rev() {
        strides[axis] = strides[axis + 1] * shape[axis + 1];
    }
    strides
}

/// `value` as the nearest value of `dtype` (ties to even); of an integer
/// type, truncated and wrapped as the runtime's two's complement wraps
/// (exact for integers below 2^53, which the reference's are).
pub fn round(value: f64, dtype: DType) -> f64 {
    match dtype {
        DType::F32 => value as f32 as f64,
        DType::BF16 => half::bf16::from_f64(value).to_f64(),
        DType::F16 => half::f16::from_f64(value).to_f64(),
        DType::I32 => f64::from(value as i64 as i32),
        DType::I64 => value as i64 as f64,
    }
}

/// The largest relative error of `dtype`'s rounding, times the slack a
/// short chain of ops on rounded values needs; 0 for an integer type,
/// which is compared exactly.
pub fn tolerance(dtype: DType) -> f64 {
    match dtype {
        DType::F32 => 1e-4,
        DType::BF16 => 3e-2,
        DType::F16 => 4e-3,
        DType::I32 | DType::I64 => 0.0,
    }
}

/// `max |a - b| / max |b|`, the error relative to the reference's scale.
pub fn relative_error(actual: &Tensor, reference: &Tensor) -> f64 {
    let scale = reference
        .data
        .iter()
        .fold(0.0f64, |max, value| max.max(value.abs()))
        .max(f64::MIN_POSITIVE);
    let error = actual
        .data
        .iter()
        .zip(&reference.data)
        .fold(0.0f64, |max, (a, b)| max.max((a - b).abs()));
    if actual.data.iter().any(|value| !value.is_finite()) {
        return f64::INFINITY;
    }
    error / scale
}

/// SplitMix64: small, seeded, and the same on every machine.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_and_concatenates_back() {
        let tensor = Tensor::new(vec![2, 3, 2], (0..12).map(f64::from).collect());
        let parts: Vec<Tensor> = (0..3).map(|index| tensor.part(1, index, 3)).collect();
        assert_eq!(parts[1].data, vec![2.0, 3.0, 8.0, 9.0]);
        assert_eq!(Tensor::concat(&parts, 1).unwrap(), tensor);
    }

    #[test]
    fn parts_of_several_indices_concatenate_back() {
        let tensor = Tensor::new(vec![2, 4, 3], (0..24).map(f64::from).collect());
        let parts: Vec<Tensor> = (0..2).map(|index| tensor.part(1, index, 2)).collect();
        assert_eq!(parts[1].shape, vec![2, 2, 3]);
        assert_eq!(parts[1].data[..6], [6.0, 7.0, 8.0, 9.0, 10.0, 11.0]);
        assert_eq!(Tensor::concat(&parts, 1).unwrap(), tensor);
    }

    #[test]
    fn shapes_too_large_are_errors_naming_them() {
        let huge = vec![1 << 32, 1 << 32];
        let error = numel(&huge).unwrap_err().to_string();
        assert_eq!(
            error,
            "a tensor of shape [4294967296, 4294967296] has more elements than 64-bit sizes hold"
        );
        let mut rng = Rng::new(1);
        assert!(Tensor::try_random(huge, DType::F32, &mut rng).is_err());
        // Fits 64-bit sizes, not memory: 2^60 f64 values.
        let error = Tensor::try_random(vec![1 << 30, 1 << 30], DType::F32, &mut rng)
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("out of memory: cannot allocate 9223372036854775808 B"),
            "{error}"
        );
        assert!(Tensor::filled(vec![1 << 62, 4], 0.0).is_err());
        // Joining parts into a value too large for memory (the parts' data
        // is never read: the result's memory is asked for first).
        let parts = [Tensor {
            shape: vec![1 << 30, 1 << 30],
            data: Vec::new(),
        }];
        let error = Tensor::concat(&parts, 0).unwrap_err().to_string();
        assert!(error.starts_with("out of memory"), "{error}");
        assert_eq!(
            Tensor::filled(vec![2, 0], 1.0).unwrap().data,
            Vec::<f64>::new()
        );
    }

    #[test]
    fn integers_are_small_nonzero_and_wrap() {
        let tensor = Tensor::try_random(vec![1000], DType::I32, &mut Rng::new(3)).unwrap();
        assert!(
            tensor
                .data
                .iter()
                .all(|&value| value == value.trunc() && (1.0..=9.0).contains(&value.abs()))
        );
        assert!(tensor.data.iter().any(|&value| value < 0.0));
        assert_eq!(round(2147483648.0, DType::I32), -2147483648.0);
        assert_eq!(round(-3.0, DType::I64), -3.0);
        assert_eq!(tolerance(DType::I64), 0.0);
    }

    #[test]
    fn random_values_are_never_small() {
        let tensor = Tensor::try_random(vec![1000], DType::BF16, &mut Rng::new(3)).unwrap();
        assert!(
            tensor
                .data
                .iter()
                .all(|value| (0.09..=1.0).contains(&value.abs()))
        );
        assert!(tensor.data.iter().any(|&value| value < 0.0));
    }
}
