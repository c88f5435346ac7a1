//! The random values tools give a program's inputs (`hir-run`, `hir-bench`),
//! defined once for the host and the GPU (`kernels.cu`'s `random`), so that
//! an input made on a rank's GPU holds exactly the bits the host would have
//! made, and `--check`'s reference, made on the host, sees them too.
//!
//! Element `index` (its flat index in the GLOBAL array) of the value keyed
//! `key` is SplitMix64's output `index + 1` of the seed `key`, so any
//! element is had without the ones before it: a float is uniform in
//! [-1, -0.1] ∪ [0.1, 1], drawn in f64 and rounded to nearest even to f32,
//! then from f32 to the element type (both roundings are the same on every
//! host and GPU, where one from f64 to bf16 or f16 is not: half's depends on
//! the CPU's features); an integer is in [-9, -1] ∪ [1, 9].

use hir_abi::DType;

/// The golden ratio's 64-bit fraction, SplitMix64's increment.
pub const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// One step of SplitMix64's output function: a bijective 64-bit mix.
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The key of argument `index` of a run seeded `seed`.
pub fn key(seed: u64, index: usize) -> u64 {
    mix(seed ^ mix((index as u64).wrapping_add(1).wrapping_mul(GOLDEN)))
}

/// Element `index` of the value keyed `key`, exactly representable in
/// `dtype` (see the module's doc); never zero.
pub fn element(dtype: DType, key: u64, index: usize) -> f64 {
    let bits = mix(key.wrapping_add((index as u64).wrapping_add(1).wrapping_mul(GOLDEN)));
    let negative = bits & 1 == 1;
    if !dtype.is_float() {
        let magnitude = (1 + (bits >> 32) % 9) as f64;
        return if negative { -magnitude } else { magnitude };
    }
    let drawn = 0.1 + 0.9 * ((bits >> 11) as f64 / (1u64 << 53) as f64);
    let single = (if negative { -drawn } else { drawn }) as f32;
    match dtype {
        DType::BF16 => half::bf16::from_f32(single).to_f64(),
        DType::F16 => half::f16::from_f32(single).to_f64(),
        _ => f64::from(single),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_are_in_range_representable_and_keyed() {
        for dtype in DType::ALL {
            for index in 0..2000 {
                let value = element(dtype, key(3, 1), index);
                let magnitude = value.abs();
                if dtype.is_float() {
                    // 0.1 and 1 themselves may round outward by half an ulp.
                    assert!((0.099..=1.0).contains(&magnitude), "{dtype:?} {value}");
                } else {
                    assert!((1.0..=9.0).contains(&magnitude) && value.fract() == 0.0);
                }
                let exact = match dtype {
                    DType::BF16 => half::bf16::from_f64(value).to_f64(),
                    DType::F16 => half::f16::from_f64(value).to_f64(),
                    DType::F32 => f64::from(value as f32),
                    _ => value,
                };
                assert_eq!(exact, value, "{dtype:?}: not representable");
            }
        }
        assert_ne!(
            element(DType::F32, key(3, 1), 7),
            element(DType::F32, key(3, 2), 7)
        );
        assert_ne!(
            element(DType::F32, key(3, 1), 7),
            element(DType::F32, key(4, 1), 7)
        );
    }

    #[test]
    fn both_signs_are_drawn_evenly() {
        let negatives = (0..10_000)
            .filter(|&index| element(DType::F32, key(0, 0), index) < 0.0)
            .count();
        assert!((4_500..5_500).contains(&negatives), "{negatives}");
    }
}
