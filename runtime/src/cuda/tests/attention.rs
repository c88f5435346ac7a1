//! Attention on each path against the cpu backend's blocked online softmax:
//! HIR's tensor-core and warp-per-row kernels, and cuDNN's fused attention
//! (where cuDNN is here; forced, so a case it should take and does not
//! fails): tails of query and key tiles, causal and masked, batch axes,
//! strided views, every float type, rows the mask hides entirely.

use super::super::attention::{Path, force};
use super::super::cudnn;
use super::*;

/// The paths a case runs on: HIR's kernels; then cuDNN, forced, for a case
/// cuDNN's graph takes (`cudnn_takes`), or the default selection, which
/// falls back to HIR's kernels, for one it does not. Without cuDNN, only
/// HIR's kernels (saying why).
fn paths(cudnn_takes: bool) -> Vec<Path> {
    match cudnn::available() {
        Ok(_) if cudnn_takes => vec![Path::Flash, Path::Cudnn],
        Ok(_) => vec![Path::Flash, Path::Prefer],
        Err(reason) => {
            println!("skipping cuDNN: {reason}");
            vec![Path::Flash]
        }
    }
}

/// Whether cuDNN's graph takes an attention of these dense operands, with
/// a dense `[sq, sk]` mask where `mask` (whose rows must be 16 bytes apart).
fn cudnn_takes(dtype: DType, d: usize, dv: usize, sk: usize, mask: bool) -> bool {
    matches!(dtype, DType::BF16 | DType::F16)
        && d == dv
        && d.is_multiple_of(8)
        && d <= 128
        && (!mask || sk.is_multiple_of(8))
}

/// `q [B.., sq, d]`, `k [B.., sk, d]`, `v [B.., sk, dv]` dense, `out` dense.
struct Case {
    dtype: DType,
    batch: &'static [usize],
    sq: usize,
    sk: usize,
    d: usize,
    dv: usize,
    causal: bool,
    mask: bool,
}

impl Case {
    fn run(&self, world: &World) {
        let Case {
            dtype,
            batch,
            sq,
            sk,
            d,
            dv,
            causal,
            mask,
        } = *self;
        let entries: usize = batch.iter().product();
        let b = |len| Buffer { dtype, len };
        let buffers = [
            b(entries * sq * d),
            b(entries * sk * d),
            b(entries * sk * dv),
            b(entries * sq * dv),
            b(sq * sk),
        ];
        let shape = |rows: usize, cols: usize| [batch, &[rows, cols][..]].concat();
        for path in paths(cudnn_takes(dtype, d, dv, sk, mask)) {
            let _forced = force(path);
            let name = format!(
                "attention {dtype:?} batch {batch:?} sq {sq} sk {sk} d {d} dv {dv} causal {causal} mask {mask} [{path:?}]"
            );
            compare(&name, world, &buffers, Match::Close, &|device, p| {
                let mut inputs = vec![
                    dense(dtype, p[0], &shape(sq, d)),
                    dense(dtype, p[1], &shape(sk, d)),
                    dense(dtype, p[2], &shape(sk, dv)),
                ];
                if mask {
                    inputs.push(dense(dtype, p[4], &[sq, sk]));
                }
                let scale = 1.0 / (d as f64).sqrt();
                run(
                    device,
                    KernelOp::Attention { scale, causal },
                    inputs,
                    dense(dtype, p[3], &shape(sq, dv)),
                );
            });
        }
    }
}

#[test]
fn tensor_core_attention_matches() {
    let Some(world) = world(1, false) else { return };
    for dtype in [DType::BF16, DType::F16] {
        for (d, sq, sk) in [
            (128, 200, 200),
            (64, 130, 300),
            (32, 64, 64),
            (96, 257, 129),
        ] {
            for causal in [false, true] {
                for mask in [false, true] {
                    Case {
                        dtype,
                        batch: &[2, 3],
                        sq,
                        sk,
                        d,
                        dv: d,
                        causal,
                        mask,
                    }
                    .run(&world);
                }
            }
        }
    }
}

#[test]
fn row_attention_matches() {
    let Some(world) = world(1, false) else { return };
    // f32, head dims the tensor-core kernel is not built for, unequal dims.
    for (dtype, d, dv) in [
        (DType::F32, 64, 64),
        (DType::F32, 32, 48),
        (DType::BF16, 80, 80),
        (DType::F16, 128, 64),
    ] {
        for causal in [false, true] {
            Case {
                dtype,
                batch: &[3],
                sq: 70,
                sk: 90,
                d,
                dv,
                causal,
                mask: causal,
            }
            .run(&world);
        }
    }
    // No batch axes; a single query row.
    Case {
        dtype: DType::BF16,
        batch: &[],
        sq: 1,
        sk: 33,
        d: 64,
        dv: 64,
        causal: false,
        mask: false,
    }
    .run(&world);
}

/// Q, K and V as views of one packed `[s, 3, heads, d]` projection (a fused
/// QKV GEMM's output), heads the batch axis: rows `3 * heads * d` apart.
#[test]
fn strided_attention_matches() {
    let Some(world) = world(1, false) else { return };
    for (dtype, d) in [(DType::BF16, 128), (DType::F32, 64)] {
        let (s, heads) = (160, 4);
        let buffers = [
            Buffer {
                dtype,
                len: s * 3 * heads * d,
            },
            Buffer {
                dtype,
                len: heads * s * d,
            },
        ];
        for path in paths(cudnn_takes(dtype, d, d, s, false)) {
            let _forced = force(path);
            compare(
                &format!("strided attention {dtype:?} [{path:?}]"),
                &world,
                &buffers,
                Match::Close,
                &|device, p| {
                    let part = |index: usize| {
                        view(
                            dtype,
                            p[0],
                            index * heads * d,
                            &[heads, s, d],
                            &[d, 3 * heads * d, 1],
                        )
                    };
                    run(
                        device,
                        KernelOp::Attention {
                            scale: 0.1,
                            causal: true,
                        },
                        vec![part(0), part(1), part(2)],
                        dense(dtype, p[1], &[heads, s, d]),
                    );
                },
            );
        }
    }
}

/// A query whose every key the mask hides (-inf) gets zeros, not NaN, on
/// every path, as on the cpu backend (FlashAttention's convention); the other
/// rows are as usual. Few query rows, so one wrong row fails the comparison.
#[test]
fn fully_masked_rows_get_zeros() {
    let Some(world) = world(1, false) else { return };
    let (dtype, heads, sq, sk, d, hidden) = (DType::BF16, 2, 4, 128, 64, 1);
    let b = |len| Buffer { dtype, len };
    let buffers = [
        b(heads * sq * d),
        b(heads * sk * d),
        b(heads * sk * d),
        b(heads * sq * d),
        b(sq * sk),
    ];
    for causal in [false, true] {
        for path in paths(true) {
            let _forced = force(path);
            let name =
                format!("attention with mask row {hidden} all -inf, causal {causal} [{path:?}]");
            compare(&name, &world, &buffers, Match::Close, &|device, p| {
                let row = view(dtype, p[4], hidden * sk, &[sk], &[1]);
                run(
                    device,
                    KernelOp::Fill(f64::NEG_INFINITY),
                    vec![],
                    row.clone(),
                );
                run(
                    device,
                    KernelOp::Attention {
                        scale: 0.125,
                        causal,
                    },
                    vec![
                        dense(dtype, p[0], &[heads, sq, d]),
                        dense(dtype, p[1], &[heads, sk, d]),
                        dense(dtype, p[2], &[heads, sk, d]),
                        dense(dtype, p[4], &[sq, sk]),
                    ],
                    dense(dtype, p[3], &[heads, sq, d]),
                );
                // Finite again: the comparison checks every buffer is.
                run(device, KernelOp::Fill(1.0), vec![], row);
            });
        }
    }
}
