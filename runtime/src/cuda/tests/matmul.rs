//! Matmul, linear and accumulating matmul on cuBLASLt against the cpu
//! backend, and the GEMMs a batched matmul is cut into.

use super::*;

#[test]
fn matmuls_and_linears_match() {
    let Some(world) = world(1, false) else { return };
    for dtype in DType::FLOATS {
        let b = |len| Buffer { dtype, len };
        let (m, k, n) = (64, 96, 80);
        let buffers = [
            b(4 * 4 * m * k), // lhs [4, 4, m, k]
            b(4 * k * n),     // rhs [4, k, n]
            b(4 * 4 * m * n), // out [4, 4, m, n]
            b(n),             // bias
            b(n * k),         // weight [n, k]
        ];
        compare(
            &format!("matmul {dtype:?}"),
            &world,
            &buffers,
            Match::Close,
            &|device, p| {
                let lhs = |sizes: &[usize], strides: &[usize]| view(dtype, p[0], 0, sizes, strides);
                let out = |offset, sizes: &[usize], strides: &[usize]| {
                    view(dtype, p[2], offset, sizes, strides)
                };
                let rhs2 = dense(dtype, p[1], &[k, n]);
                // Plain, batched with shared rhs (folds into m), batched rhs.
                run(
                    device,
                    KernelOp::Matmul,
                    vec![lhs(&[m, k], &[k, 1]), rhs2.clone()],
                    out(0, &[m, n], &[n, 1]),
                );
                run(
                    device,
                    KernelOp::Matmul,
                    vec![lhs(&[3, m, k], &[m * k, k, 1]), rhs2.clone()],
                    out(0, &[3, m, n], &[m * n, n, 1]),
                );
                run(
                    device,
                    KernelOp::Matmul,
                    vec![
                        lhs(&[4, m, k], &[m * k, k, 1]),
                        dense(dtype, p[1], &[4, k, n]),
                    ],
                    out(0, &[4, m, n], &[m * n, n, 1]),
                );
                // The row case.
                run(
                    device,
                    KernelOp::Matmul,
                    vec![lhs(&[k], &[1]), rhs2.clone()],
                    out(5, &[n], &[1]),
                );
                // A slice along axis 1 of [4, 4, m, k] (a strided batch), into a
                // slice of the output, and a transposed rhs view.
                let sliced = view(dtype, p[0], m * k, &[4, m, k], &[4 * m * k, k, 1]);
                let out_sliced = out(2 * m * n, &[4, m, n], &[4 * m * n, n, 1]);
                run(device, KernelOp::Matmul, vec![sliced, rhs2], out_sliced);
                let rhs_t = view(dtype, p[1], 0, &[k, n], &[1, k]);
                run(
                    device,
                    KernelOp::Matmul,
                    vec![lhs(&[m, k], &[k, 1]), rhs_t],
                    out(0, &[m, n], &[n, 1]),
                );
                // A column-strided lhs (no unit stride) goes through a copy.
                run(
                    device,
                    KernelOp::Matmul,
                    vec![lhs(&[m, k / 2], &[k, 2]), dense(dtype, p[1], &[k / 2, n])],
                    out(0, &[m, n], &[n, 1]),
                );
                // Broadcast batch axes (torch.matmul): an rhs of unit batch
                // axes (folds into m), an lhs broadcast along axis 1 (batch
                // stride 0), an rhs with batch axes the lhs lacks, and a
                // broadcast rhs with no unit stride (one matrix copied).
                run(
                    device,
                    KernelOp::Matmul,
                    vec![
                        lhs(&[4, 4, m, k], &[4 * m * k, m * k, k, 1]),
                        dense(dtype, p[1], &[1, 1, k, n]),
                    ],
                    out(0, &[4, 4, m, n], &[4 * m * n, m * n, n, 1]),
                );
                run(
                    device,
                    KernelOp::Matmul,
                    vec![
                        lhs(&[4, 1, m, k], &[m * k, m * k, k, 1]),
                        dense(dtype, p[1], &[4, k, n]),
                    ],
                    out(0, &[4, 4, m, n], &[4 * m * n, m * n, n, 1]),
                );
                run(
                    device,
                    KernelOp::Matmul,
                    vec![
                        lhs(&[2, m, k], &[m * k, k, 1]),
                        dense(dtype, p[1], &[4, 1, k, n]),
                    ],
                    out(0, &[4, 2, m, n], &[2 * m * n, m * n, n, 1]),
                );
                run(
                    device,
                    KernelOp::Matmul,
                    vec![
                        lhs(&[3, m, k / 2], &[m * k, k, 1]),
                        view(dtype, p[1], 0, &[1, k / 2, n], &[k * n, 2 * n, 2]),
                    ],
                    out(0, &[3, m, n], &[m * n, n, 1]),
                );
            },
        );
        compare(
            &format!("linear {dtype:?}"),
            &world,
            &buffers,
            Match::Close,
            &|device, p| {
                let input = view(dtype, p[0], 0, &[2, m, k], &[m * k, k, 1]);
                let weight = dense(dtype, p[4], &[n, k]);
                let bias = dense(dtype, p[3], &[n]);
                run(
                    device,
                    KernelOp::Linear,
                    vec![input.clone(), weight.clone(), bias],
                    view(dtype, p[2], 0, &[2, m, n], &[m * n, n, 1]),
                );
                run(
                    device,
                    KernelOp::Linear,
                    vec![input, weight],
                    view(dtype, p[2], 3 * m * n, &[2, m, n], &[m * n, n, 1]),
                );
                // A strided input: a [m, k] slice of [4, 4, m, k] at [1, 2].
                let sliced = view(dtype, p[0], 6 * m * k, &[m, k], &[k, 1]);
                run(
                    device,
                    KernelOp::Linear,
                    vec![sliced, dense(dtype, p[4], &[n, k])],
                    view(dtype, p[2], 8 * m * n, &[m, n], &[n, 1]),
                );
            },
        );
    }
}

#[test]
fn accumulating_matmuls_match() {
    let Some(world) = world(1, false) else { return };
    for dtype in [DType::BF16, DType::F32] {
        let b = |len| Buffer { dtype, len };
        // A short K, so that the output's own values weigh in every sum.
        let (m, k, n) = (64, 8, 80);
        let buffers = [
            b(4 * m * k), // lhs [4, m, k]
            b(4 * k * n), // rhs [4, k, n]
            b(4 * m * n), // out [4, m, n]
            b(2 * m * n), // staged outputs
        ];
        compare(
            &format!("matmul accumulate {dtype:?}"),
            &world,
            &buffers,
            Match::Close,
            &|device, p| {
                let acc = |inputs, output| run(device, KernelOp::MatmulAccumulate, inputs, output);
                let lhs = |sizes: &[usize]| dense(dtype, p[0], sizes);
                let rhs2 = dense(dtype, p[1], &[k, n]);
                // Written in place: plain, batched with shared rhs (folds into
                // m, and adds to the plain one's rows again), batched rhs, the
                // row case.
                acc(
                    vec![lhs(&[m, k]), rhs2.clone()],
                    dense(dtype, p[2], &[m, n]),
                );
                acc(
                    vec![lhs(&[3, m, k]), rhs2.clone()],
                    dense(dtype, p[2], &[3, m, n]),
                );
                acc(
                    vec![lhs(&[4, m, k]), dense(dtype, p[1], &[4, k, n])],
                    dense(dtype, p[2], &[4, m, n]),
                );
                acc(
                    vec![view(dtype, p[0], 0, &[k], &[1]), rhs2.clone()],
                    view(dtype, p[2], 5, &[n], &[1]),
                );
                // Outputs cuBLASLt cannot write, computed on a contiguous copy
                // of their values: a transposed one and a column-strided one.
                acc(
                    vec![lhs(&[m, k]), rhs2.clone()],
                    view(dtype, p[3], 0, &[m, n], &[1, m]),
                );
                acc(
                    vec![lhs(&[m, k]), dense(dtype, p[1], &[k, n / 2])],
                    view(dtype, p[3], m * n, &[m, n / 2], &[n, 2]),
                );
            },
        );
    }
    // C + A B rounded once, as on the cpu backend (see its test): 1 + 2^-8 +
    // 2^-16 in bf16 is 1 + 2^-7; a product rounded first would give 1.
    let got = world
        .run(|device| {
            let encode = |values: &[f32]| -> Vec<u8> {
                values
                    .iter()
                    .flat_map(|&v| bf16::from_f32(v).to_le_bytes())
                    .collect()
            };
            let data = [
                encode(&[2f32.powi(-8), 2f32.powi(-16)]),
                encode(&[1.0, 1.0]),
                encode(&[1.0]),
            ];
            let ptrs: Vec<*mut u8> = data
                .iter()
                .enumerate()
                .map(|(i, bytes)| {
                    let ptr = device.alloc(2000 + i as i64, bytes.len()).unwrap().as_ptr();
                    device.copy_to_device(ptr, bytes).unwrap();
                    ptr
                })
                .collect();
            run(
                device,
                KernelOp::MatmulAccumulate,
                vec![
                    dense(DType::BF16, ptrs[0], &[1, 2]),
                    dense(DType::BF16, ptrs[1], &[2, 1]),
                ],
                dense(DType::BF16, ptrs[2], &[1, 1]),
            );
            device.synchronize().unwrap();
            let mut out = [0u8; 2];
            device.copy_from_device(ptrs[2], &mut out).unwrap();
            for ptr in ptrs {
                device.dealloc(ptr).unwrap();
            }
            bf16::from_le_bytes(out).to_f32()
        })
        .unwrap();
    assert_eq!(got, [1.0 + 2f32.powi(-7)]);
}

/// The GEMMs a matmul is cut into (`gemms`), run on the host: for batch
/// axes that broadcast (an operand's axis of extent 1, or one it lacks), each
/// output entry is the product of the operands' right matrices, and a
/// broadcast operand is read with batch stride 0 from its own buffer (no
/// GEMM reads outside it). Needs no GPU.
#[test]
fn gemms_broadcast_batch_axes_with_stride_0() {
    let cases: [(&[usize], &[usize], &[usize]); 5] = [
        (&[4, 2, 3, 5], &[1, 1, 5, 6], &[4, 2, 3, 6]),
        (&[4, 1, 3, 5], &[4, 5, 6], &[4, 4, 3, 6]),
        (&[3, 5], &[2, 5, 6], &[2, 3, 6]),
        (&[2, 1, 3, 5], &[1, 3, 5, 6], &[2, 3, 3, 6]),
        (&[2, 3, 5], &[5, 6], &[2, 3, 6]),
    ];
    for (lhs_shape, rhs_shape, out_shape) in cases {
        let values = |len: usize, seed: usize| -> Vec<f32> {
            (0..len)
                .map(|e| ((e * 7 + seed * 13) % 11) as f32 - 5.0)
                .collect()
        };
        let count = |shape: &[usize]| shape.iter().product::<usize>();
        let mut lhs = values(count(lhs_shape), 1);
        let mut rhs = values(count(rhs_shape), 2);
        let mut out = vec![f32::NAN; count(out_shape)];
        let kernel = Kernel {
            op: KernelOp::Matmul,
            inputs: vec![
                dense(DType::F32, lhs.as_mut_ptr().cast(), lhs_shape),
                dense(DType::F32, rhs.as_mut_ptr().cast(), rhs_shape),
            ],
            output: dense(DType::F32, out.as_mut_ptr().cast(), out_shape),
        };
        kernel.validate().unwrap();
        // Each element a GEMM reads, as an index into its buffer.
        let index = |view: &View, base: &[f32], at: [usize; 3]| -> usize {
            let offset = (view.ptr as usize - base.as_ptr() as usize) / 4;
            let element = offset
                + (0..3)
                    .map(|axis| at[axis] * view.strides[axis])
                    .sum::<usize>();
            assert!(element < base.len(), "a GEMM reads outside its buffer");
            element
        };
        for (l, r, o) in crate::cuda::compute::gemms(&kernel) {
            let (batch, m, k, n) = (l.sizes[0], l.sizes[1], l.sizes[2], o.sizes[2]);
            for b in 0..batch {
                for i in 0..m {
                    for j in 0..n {
                        let sum: f32 = (0..k)
                            .map(|p| {
                                lhs[index(&l, &lhs, [b, i, p])] * rhs[index(&r, &rhs, [b, p, j])]
                            })
                            .sum();
                        let at = index(&o, &out, [b, i, j]);
                        out[at] = sum;
                    }
                }
            }
        }
        // The reference indexes the operands directly, at 0 along an axis of
        // extent 1 or one the operand lacks.
        let rank = out_shape.len();
        let k = lhs_shape[lhs_shape.len() - 1];
        let flat = |shape: &[usize], at: &[usize]| -> usize {
            let skip = rank - shape.len();
            shape.iter().enumerate().fold(0, |flat, (axis, &extent)| {
                flat * extent + if extent == 1 { 0 } else { at[axis + skip] }
            })
        };
        for (e, &got) in out.iter().enumerate() {
            let mut at = vec![0; rank];
            let mut rest = e;
            for axis in (0..rank).rev() {
                at[axis] = rest % out_shape[axis];
                rest /= out_shape[axis];
            }
            let j = at[rank - 1];
            let want: f32 = (0..k)
                .map(|p| {
                    let mut a = at.clone();
                    a[rank - 1] = p;
                    let mut b = at.clone();
                    b[rank - 2] = p;
                    b[rank - 1] = j;
                    lhs[flat(lhs_shape, &a)] * rhs[flat(rhs_shape, &b)]
                })
                .sum();
            assert_eq!(got, want, "{lhs_shape:?} x {rhs_shape:?} at {e}");
        }
    }
}
