//! The cpu backend's casts to and from the integer types (`hir_abi::DType::
//! cast_from` says what they compute; casts between float types are
//! `super::kernels`'): each element is converted once from its exact value.
//! - float to integer: truncated toward zero, NaN to 0, saturating at the
//!   integer type's range (Rust's `as`); f16 and bf16 widen to f32 exactly;
//! - integer to float: rounded to nearest even once, to the float type's
//!   significand ([`nearest`]), so that an integer to bf16 or f16 is not
//!   rounded twice through f32; beyond f16's range, ±inf;
//! - integer to integer: i64 to i32 keeps the low 32 bits.
//!
//! The cuda backend's casts (`hir_int_to_float`, `OpToI32`, `OpToI64` in
//! `kernels.cu`) compute the same, so both agree bit for bit.

use super::{elements, ints};
use crate::error::Result;
use crate::memref::View;
use hir_abi::DType;

/// Casts `input` into `out`, one of them of an integer type.
pub(crate) fn run(input: &View, out: &View) -> Result<()> {
    if input.dtype.is_float() {
        let values: Vec<i64> = elements::load(input)?
            .into_iter()
            .map(|x| to_int(x, out.dtype))
            .collect();
        ints::store(out, &values);
    } else if out.dtype.is_float() {
        let bits = significand_bits(out.dtype);
        let values: Vec<f32> = ints::load(input)?
            .into_iter()
            .map(|x| nearest(x, bits))
            .collect();
        // Exact: each value has at most the type's significand bits.
        elements::store(out, &values);
    } else {
        // `store` keeps the low bits of an i64 for an i32 output.
        ints::store(out, &ints::load(input)?);
    }
    Ok(())
}

/// `x` truncated toward zero into `dtype`'s range; NaN gives 0.
fn to_int(x: f32, dtype: DType) -> i64 {
    match dtype {
        DType::I32 => (x as i32).into(),
        DType::I64 => x as i64,
        other => unreachable!("{other:?} is not an integer type"),
    }
}

/// The significand's bits of a float type, the implicit one included.
fn significand_bits(dtype: DType) -> u32 {
    match dtype {
        DType::F32 => 24,
        DType::F16 => 11,
        DType::BF16 => 8,
        other => unreachable!("{other:?} is not a float type"),
    }
}

/// The number of at most `bits` significant bits nearest to `x`, ties to
/// even, as an f32 (exact: `bits <= 24` and every such number of magnitude
/// at most 2^64 is one).
fn nearest(x: i64, bits: u32) -> f32 {
    let magnitude = x.unsigned_abs();
    let width = u64::BITS - magnitude.leading_zeros();
    let shift = width.saturating_sub(bits);
    let mut kept = magnitude >> shift;
    if shift > 0 {
        let rest = magnitude & ((1u64 << shift) - 1);
        let half = 1u64 << (shift - 1);
        if rest > half || (rest == half && kept & 1 == 1) {
            kept += 1;
        }
    }
    let value = kept as f32 * 2f32.powi(shift as i32);
    if x < 0 { -value } else { value }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::{Kernel, KernelOp};
    use half::{bf16, f16};

    /// Casts `input` (bytes of `from`) to `to` through the kernel entry
    /// point, after validation.
    fn cast(from: DType, to: DType, mut input: Vec<u8>) -> Vec<u8> {
        let len = input.len() / from.size();
        let mut output = vec![0u8; len * to.size()];
        let kernel = Kernel {
            op: KernelOp::Cast,
            inputs: vec![View::contiguous(from, input.as_mut_ptr(), &[len])],
            output: View::contiguous(to, output.as_mut_ptr(), &[len]),
        };
        kernel.validate().unwrap();
        super::super::kernels::run(&kernel).unwrap();
        output
    }

    fn floats(dtype: DType, values: &[f32]) -> Vec<u8> {
        values
            .iter()
            .flat_map(|&x| match dtype {
                DType::F32 => x.to_le_bytes().to_vec(),
                DType::BF16 => bf16::from_f32(x).to_le_bytes().to_vec(),
                DType::F16 => f16::from_f32(x).to_le_bytes().to_vec(),
                _ => unreachable!(),
            })
            .collect()
    }

    fn ints(dtype: DType, values: &[i64]) -> Vec<u8> {
        values
            .iter()
            .flat_map(|&x| match dtype {
                DType::I32 => (x as i32).to_le_bytes().to_vec(),
                DType::I64 => x.to_le_bytes().to_vec(),
                _ => unreachable!(),
            })
            .collect()
    }

    fn decode_ints(dtype: DType, bytes: &[u8]) -> Vec<i64> {
        bytes
            .chunks(dtype.size())
            .map(|c| match dtype {
                DType::I32 => i32::from_le_bytes(c.try_into().unwrap()).into(),
                _ => i64::from_le_bytes(c.try_into().unwrap()),
            })
            .collect()
    }

    /// The floats' bits, as u32 (f32) or u16 (bf16, f16) widened.
    fn decode_bits(dtype: DType, bytes: &[u8]) -> Vec<u32> {
        bytes
            .chunks(dtype.size())
            .map(|c| match dtype {
                DType::F32 => u32::from_le_bytes(c.try_into().unwrap()),
                _ => u16::from_le_bytes(c.try_into().unwrap()).into(),
            })
            .collect()
    }

    #[test]
    fn floats_to_integers_truncate_toward_zero_and_saturate() {
        let inputs = [
            2.7,
            -2.7,
            -0.0,
            0.5,
            -1.5,
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            3e9,
            -3e9,
            1e20,
            -1e20,
            1000.0,
        ];
        let i32_max = i64::from(i32::MAX);
        let i32_min = i64::from(i32::MIN);
        for from in DType::FLOATS {
            let to_i32 = decode_ints(DType::I32, &cast(from, DType::I32, floats(from, &inputs)));
            let to_i64 = decode_ints(DType::I64, &cast(from, DType::I64, floats(from, &inputs)));
            // 3e9 is 179 * 2^24 in bf16 and inf in f16.
            let big = match from {
                DType::BF16 => [3_003_121_664, -3_003_121_664],
                DType::F16 => [i64::MAX, i64::MIN],
                _ => [3_000_000_000, -3_000_000_000],
            };
            assert_eq!(
                to_i32,
                [
                    2, -2, 0, 0, -1, 0, i32_max, i32_min, i32_max, i32_min, i32_max, i32_min, 1000
                ],
                "{from:?}"
            );
            assert_eq!(
                &to_i64[..8],
                [2, -2, 0, 0, -1, 0, i64::MAX, i64::MIN],
                "{from:?}"
            );
            assert_eq!(to_i64[8..10], big, "{from:?}");
            assert_eq!(to_i64[10..], [i64::MAX, i64::MIN, 1000], "{from:?}");
        }
        // The largest f32 below 2^31 fits i32; 2^31 saturates.
        let edge = floats(
            DType::F32,
            &[2_147_483_520.0, 2_147_483_648.0, -2_147_483_648.0],
        );
        assert_eq!(
            decode_ints(DType::I32, &cast(DType::F32, DType::I32, edge)),
            [2_147_483_520, i32_max, i32_min]
        );
    }

    #[test]
    fn integers_to_floats_round_to_nearest_even_once() {
        // Halfway cases of each type, ties to even, and values past them.
        let inputs = [
            0,
            -7,
            257,
            259,
            2049,
            2051,
            -2049,
            65519,
            65520,
            16_777_217,
            16_777_219,
            i64::from(i32::MAX),
            i64::from(i32::MIN),
        ];
        let f32_bits: Vec<u32> = [
            0.0f32,
            -7.0,
            257.0,
            259.0,
            2049.0,
            2051.0,
            -2049.0,
            65519.0,
            65520.0,
            16_777_216.0,
            16_777_220.0,
            2_147_483_648.0,
            -2_147_483_648.0,
        ]
        .map(f32::to_bits)
        .to_vec();
        let bf16_bits: Vec<u32> = [
            0.0f32,
            -7.0,
            256.0,
            260.0,
            2048.0,
            2048.0,
            -2048.0,
            65536.0,
            65536.0,
            16_777_216.0,
            16_777_216.0,
            2_147_483_648.0,
            -2_147_483_648.0,
        ]
        .map(|x| bf16::from_f32(x).to_bits().into())
        .to_vec();
        let f16_bits: Vec<u32> = [
            0.0f32,
            -7.0,
            257.0,
            259.0,
            2048.0,
            2052.0,
            -2048.0,
            65504.0,
            f32::INFINITY,
            f32::INFINITY,
            f32::INFINITY,
            f32::INFINITY,
            f32::NEG_INFINITY,
        ]
        .map(|x| f16::from_f32(x).to_bits().into())
        .to_vec();
        for from in DType::INTS {
            for (to, want) in [
                (DType::F32, &f32_bits),
                (DType::BF16, &bf16_bits),
                (DType::F16, &f16_bits),
            ] {
                let got = decode_bits(to, &cast(from, to, ints(from, &inputs)));
                assert_eq!(&got, want, "{from:?} -> {to:?}");
            }
        }
        // Past 2^53 and 2^24: 2^62 + 2^54 + 1 is just above bf16's halfway
        // point 2^62 + 2^54, which rounding through f32 (or f64) would
        // reach first and then round to even, down to 2^62.
        let x = (1i64 << 62) + (1 << 54) + 1;
        let got = decode_bits(
            DType::BF16,
            &cast(
                DType::I64,
                DType::BF16,
                ints(DType::I64, &[x, -x, i64::MIN, i64::MAX]),
            ),
        );
        let want: Vec<u32> = [
            2f32.powi(62) + 2f32.powi(55),
            -(2f32.powi(62) + 2f32.powi(55)),
            -(2f32.powi(63)),
            2f32.powi(63),
        ]
        .map(|x| bf16::from_f32(x).to_bits().into())
        .to_vec();
        assert_eq!(got, want);
    }

    #[test]
    fn nearest_agrees_with_rusts_rounding_to_f32() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..10_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            // Every magnitude, from a few bits to 64.
            let x = (state as i64) >> (state % 60);
            assert_eq!(nearest(x, 24).to_bits(), (x as f32).to_bits(), "{x}");
        }
        assert_eq!(nearest(i64::MIN, 24), -(2f32.powi(63)));
    }

    #[test]
    fn i64_to_i32_keeps_the_low_bits_and_i32_to_i64_sign_extends() {
        let inputs = [
            1i64 << 31,
            -(1i64 << 31) - 1,
            (1i64 << 32) + 5,
            -7,
            i64::MAX,
        ];
        let got = decode_ints(
            DType::I32,
            &cast(DType::I64, DType::I32, ints(DType::I64, &inputs)),
        );
        assert_eq!(got, [i64::from(i32::MIN), i64::from(i32::MAX), 5, -7, -1]);
        let back = cast(
            DType::I32,
            DType::I64,
            ints(DType::I32, &[-7, i64::from(i32::MIN)]),
        );
        assert_eq!(decode_ints(DType::I64, &back), [-7, i64::from(i32::MIN)]);
    }
}
