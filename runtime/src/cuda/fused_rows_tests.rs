//! GPU tests of the row kernel (`fused_rows.rs`): LayerNorm, softmax and
//! RMSNorm programs run fused on this backend, as the unfused kernels they
//! stand for (reductions over the last axis and broadcasts back along it),
//! and fused on the cpu backend, through `fused_tests.rs`'s harness. A
//! reduction's order of summation differs between the three (the fused
//! kernel's tree over the block, the unfused reduction's own, the cpu's
//! sequential sum), so every comparison is within a tolerance. The cases
//! cover the kernel's three ways through a row (every word in registers
//! where the row is contiguous, aligned, a multiple of 8 long and short
//! enough, a thread's last step past the row's end included; 16-byte words
//! read in every phase where it is longer; one element per thread
//! otherwise), outer axes merged and not, row stores, and more rows than a
//! launch has blocks.

use super::fused_tests::{BF16, Case, F32, Layout, Match, check, load};
use hir_abi::fused::{Instr, Program, Store};
use hir_abi::{Binary, DType, Reduction, Unary};

/// LayerNorm of bf16 `[rows, n]` with its affine part, the mean and the
/// reciprocal deviation also stored (f32): `x`, `1/n` and `eps` per row,
/// `g` and `b` per column, then `y`, `mean`, `rstd`. The inputs are random,
/// `1/n` and `eps` too: the variance's absolute value keeps rsqrt finite.
fn layer_norm(rows: usize, n: usize) -> Case {
    use Binary::*;
    let (bf, f) = (DType::BF16, DType::F32);
    Case {
        name: "LayerNorm, bf16, with its statistics",
        program: Program {
            reduced: Some(1),
            dtypes: vec![bf, f, f, bf, bf, bf, f, f],
            loads: vec![
                load(0, &[]),
                load(1, &[1]),
                load(2, &[1]),
                load(3, &[0]),
                load(4, &[0]),
            ],
            instrs: vec![
                (Instr::Convert(0), f),                // 5: x in f32
                (Instr::Reduce(Reduction::Sum, 5), f), // 6
                (Instr::Binary(Mul, 6, 1), f),         // 7: mean
                (Instr::Binary(Sub, 5, 7), f),         // 8: centred
                (Instr::Binary(Mul, 8, 8), f),         // 9
                (Instr::Reduce(Reduction::Sum, 9), f), // 10
                (Instr::Binary(Mul, 10, 1), f),        // 11: variance
                (Instr::Binary(Add, 11, 2), f),        // 12
                (Instr::Unary(Unary::Abs, 12), f),     // 13: (random 1/n, eps)
                (Instr::Unary(Unary::Rsqrt, 13), f),   // 14: rstd
                (Instr::Binary(Mul, 8, 14), f),        // 15
                (Instr::Convert(3), f),                // 16: g
                (Instr::Binary(Mul, 15, 16), f),       // 17
                (Instr::Convert(4), f),                // 18: b
                (Instr::Binary(Add, 17, 18), f),       // 19
                (Instr::Convert(19), bf),              // 20
            ],
            stores: vec![Store::whole(5, 20), Store::row(6, 7), Store::row(7, 14)],
        },
        layouts: vec![
            Layout::dense(&[rows, n]),
            Layout::dense(&[rows]),
            Layout::dense(&[rows]),
            Layout::dense(&[n]),
            Layout::dense(&[n]),
            Layout::dense(&[rows, n]),
            Layout::dense(&[rows]),
            Layout::dense(&[rows]),
        ],
        unfused: Match::Close(BF16),
        cpu: Match::Close(BF16),
    }
}

/// LayerNorm of bf16 `[rows, n]` (without its affine part) whose `1/n`
/// and `eps` are constants, row-level as the fills they stand for: `y` and
/// `rstd` stored.
fn layer_norm_constants(rows: usize, n: usize) -> Case {
    use Binary::*;
    let (bf, f) = (DType::BF16, DType::F32);
    Case {
        name: "LayerNorm, bf16, constant 1/n and eps",
        program: Program {
            reduced: Some(1),
            dtypes: vec![bf, bf, f],
            loads: vec![load(0, &[])],
            instrs: vec![
                (Instr::Convert(0), f),                // 1: x in f32
                (Instr::constant(1.0 / n as f64), f),  // 2: 1/n
                (Instr::Reduce(Reduction::Sum, 1), f), // 3
                (Instr::Binary(Mul, 3, 2), f),         // 4: mean
                (Instr::Binary(Sub, 1, 4), f),         // 5: centred
                (Instr::Binary(Mul, 5, 5), f),         // 6
                (Instr::Reduce(Reduction::Sum, 6), f), // 7
                (Instr::Binary(Mul, 7, 2), f),         // 8: variance
                (Instr::constant(1e-5), f),            // 9: eps
                (Instr::Binary(Add, 8, 9), f),         // 10
                (Instr::Unary(Unary::Rsqrt, 10), f),   // 11: rstd
                (Instr::Binary(Mul, 5, 11), f),        // 12
                (Instr::Convert(12), bf),              // 13
            ],
            stores: vec![Store::whole(1, 13), Store::row(2, 11)],
        },
        layouts: vec![
            Layout::dense(&[rows, n]),
            Layout::dense(&[rows, n]),
            Layout::dense(&[rows]),
        ],
        unfused: Match::Close(BF16),
        cpu: Match::Close(BF16),
    }
}

/// Softmax of f32 rows 77 long (not a multiple of 8: one element per
/// thread): `exp(x - amax) / sum`.
fn softmax() -> Case {
    let f = DType::F32;
    Case {
        name: "softmax, f32, odd rows",
        program: Program {
            reduced: Some(1),
            dtypes: vec![f, f],
            loads: vec![load(0, &[])],
            instrs: vec![
                (Instr::Reduce(Reduction::Amax, 0), f),
                (Instr::Binary(Binary::Sub, 0, 1), f),
                (Instr::Unary(Unary::Exp, 2), f),
                (Instr::Reduce(Reduction::Sum, 3), f),
                (Instr::Binary(Binary::Div, 3, 4), f),
            ],
            stores: vec![Store::whole(1, 5)],
        },
        layouts: vec![Layout::dense(&[300, 77]); 2],
        unfused: Match::Close(F32),
        cpu: Match::Close(F32),
    }
}

/// RMSNorm of f16 `[4, 33, 96]` read through a transposed view (its rows
/// strided: one element per thread), its output a slice of a wider buffer
/// (outer axes that do not merge): `x * rsqrt(|sum(x * x) / n + eps|)`, the
/// scalars `1/n` and `eps` (random) broadcast along every axis.
fn rms_norm() -> Case {
    use Binary::*;
    let h = DType::F16;
    let transposed = Layout {
        len: 4 * 33 * 96,
        offset: 0,
        sizes: vec![4, 33, 96],
        strides: vec![33 * 96, 1, 33],
    };
    let sliced = Layout {
        len: 4 * 40 * 96,
        offset: 96,
        sizes: vec![4, 33, 96],
        strides: vec![40 * 96, 96, 1],
    };
    Case {
        name: "RMSNorm, f16, strided rows",
        program: Program {
            reduced: Some(2),
            dtypes: vec![h, h, h, h],
            loads: vec![load(0, &[]), load(1, &[0, 1, 2]), load(2, &[0, 1, 2])],
            instrs: vec![
                (Instr::Binary(Mul, 0, 0), h),
                (Instr::Reduce(Reduction::Sum, 3), h),
                (Instr::Binary(Mul, 4, 1), h),
                (Instr::Binary(Add, 5, 2), h),
                (Instr::Unary(Unary::Abs, 6), h),
                (Instr::Unary(Unary::Rsqrt, 7), h),
                (Instr::Binary(Mul, 0, 8), h),
            ],
            stores: vec![Store::whole(3, 9)],
        },
        layouts: vec![transposed, Layout::dense(&[]), Layout::dense(&[]), sliced],
        unfused: Match::Close(BF16),
        cpu: Match::Close(BF16),
    }
}

/// More rows than a launch has blocks (the grid strides over rows), 8
/// long: the sums of the rows' magnitudes stored, and each element's share
/// of its row's.
fn many_rows() -> Case {
    let f = DType::F32;
    Case {
        name: "70,000 short rows",
        program: Program {
            reduced: Some(1),
            dtypes: vec![f, f, f],
            loads: vec![load(0, &[])],
            instrs: vec![
                (Instr::Unary(Unary::Abs, 0), f),
                (Instr::Reduce(Reduction::Sum, 1), f),
                (Instr::Binary(Binary::Div, 0, 2), f),
            ],
            stores: vec![Store::whole(1, 3), Store::row(2, 2)],
        },
        layouts: vec![
            Layout::dense(&[70_000, 8]),
            Layout::dense(&[70_000, 8]),
            Layout::dense(&[70_000]),
        ],
        unfused: Match::Close(F32),
        cpu: Match::Close(F32),
    }
}

#[test]
fn row_kernels_match_the_unfused_kernels_and_the_cpu_backend() {
    let Some(world) = super::tests::world(1, false) else {
        return;
    };
    for case in [
        layer_norm(512, 1024),
        layer_norm(3, 8192),
        layer_norm(2, 40_000),
        layer_norm(9, 1000),
        layer_norm_constants(256, 768),
        layer_norm_constants(5, 77),
        softmax(),
        rms_norm(),
        many_rows(),
    ] {
        check(&world, &case);
    }
}
