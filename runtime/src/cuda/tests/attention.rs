//! Attention on the tensor-core kernel and the warp-per-row kernel against
//! the cpu backend's blocked online softmax: tails of query and key tiles,
//! causal and masked, batch axes, strided views, every float type.

use super::*;

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
        let name = format!(
            "attention {dtype:?} batch {batch:?} sq {sq} sk {sk} d {d} dv {dv} causal {causal} mask {mask}"
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
        compare(
            &format!("strided attention {dtype:?}"),
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
