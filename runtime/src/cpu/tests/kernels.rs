//! Compute kernels on strided views, and matmul: accumulating, rounding
//! once, and broadcasting batch axes as torch does.

use super::*;

#[test]
fn compute_kernels_on_strided_views() {
    let world = world(1, 1);
    world
        .run(|device| {
            let run = |op: KernelOp, inputs: Vec<View>, output: &mut Array| {
                device.compute(kernel(op, inputs, view(output))).unwrap();
                device.synchronize().unwrap();
                output.to_f32()
            };
            // x: [2, 3] viewed transposed from a [3, 2] buffer.
            let mut storage = array(DType::F32, &[3, 2], |e| e as f32 - 2.0);
            let x = View {
                sizes: smallvec::smallvec![2, 3],
                strides: smallvec::smallvec![1, 2],
                ..view(&mut storage)
            };
            let xt = [-2.0, 0.0, 2.0, -1.0, 1.0, 3.0];
            let mut y = array(DType::BF16, &[2, 3], |_| 0.0);
            assert_eq!(run(KernelOp::Cast, vec![x.clone()], &mut y), xt);
            let mut out = array(DType::F32, &[2, 3], |_| 0.0);
            assert_eq!(
                run(KernelOp::Unary(Unary::Neg), vec![x.clone()], &mut out),
                xt.map(|v| -v)
            );
            let mut other = array(DType::F32, &[2, 3], |e| e as f32);
            let other = view(&mut other);
            for (op, f) in [
                (Binary::Sub, (|a, b| a - b) as fn(f32, f32) -> f32),
                (Binary::Div, |a, b| a / b),
                (Binary::Max, f32::max),
                (Binary::Min, f32::min),
            ] {
                let want: Vec<f32> = xt
                    .iter()
                    .enumerate()
                    .map(|(e, &v)| f(v, e as f32))
                    .collect();
                let got = run(
                    KernelOp::Binary(op),
                    vec![x.clone(), other.clone()],
                    &mut out,
                );
                assert_eq!(got, want, "{op:?}");
            }
            let mut sums = array(DType::F32, &[3], |_| 0.0);
            assert_eq!(
                run(
                    KernelOp::Reduce(Reduction::Sum, vec![0]),
                    vec![x.clone()],
                    &mut sums
                ),
                [-3.0, 1.0, 5.0]
            );
            let mut maxes = array(DType::F32, &[2], |_| 0.0);
            assert_eq!(
                run(
                    KernelOp::Reduce(Reduction::Amax, vec![1]),
                    vec![x.clone()],
                    &mut maxes
                ),
                [2.0, 3.0]
            );
            let mut spread = array(DType::F32, &[2, 2, 3], |_| 0.0);
            let got = run(KernelOp::Broadcast(vec![1]), vec![x.clone()], &mut spread);
            assert_eq!(got, [&xt[..3], &xt[..3], &xt[3..], &xt[3..]].concat());
            // Batched matmul: [2, 2, 3] x [2, 3, 1] and linear with bias.
            let mut lhs = array(DType::F16, &[2, 2, 3], |e| e as f32);
            let mut rhs = array(DType::F16, &[2, 3, 1], |e| (e % 3) as f32);
            let mut product = array(DType::F16, &[2, 2, 1], |_| 0.0);
            let got = run(
                KernelOp::Matmul,
                vec![view(&mut lhs), view(&mut rhs)],
                &mut product,
            );
            assert_eq!(got, [5.0, 14.0, 23.0, 32.0]);
            // A [K] lhs (a matmul row): [3] x [3, 2].
            let mut row = array(DType::F32, &[3], |e| e as f32 + 1.0);
            let mut cols = array(DType::F32, &[3, 2], |e| e as f32);
            let mut out_row = array(DType::F32, &[2], |_| 0.0);
            let got = run(
                KernelOp::Matmul,
                vec![view(&mut row), view(&mut cols)],
                &mut out_row,
            );
            // [1, 2, 3] @ [[0, 1], [2, 3], [4, 5]].
            assert_eq!(got, [16.0, 22.0]);
            let mut w = array(DType::F32, &[2, 3], |e| e as f32);
            let mut bias = array(DType::F32, &[2], |e| e as f32 * 100.0);
            let mut lin = array(DType::F32, &[2, 2], |_| 0.0);
            let got = run(
                KernelOp::Linear,
                vec![x.clone(), view(&mut w), view(&mut bias)],
                &mut lin,
            );
            // x @ w^T + bias, x rows [-2, 0, 2] and [-1, 1, 3].
            assert_eq!(got, [4.0, 104.0, 7.0, 116.0]);
            let bad = kernel(KernelOp::Matmul, vec![x.clone(), x.clone()], view(&mut lin));
            assert!(
                device
                    .compute(bad)
                    .unwrap_err()
                    .to_string()
                    .contains("contract 3 with 2")
            );
        })
        .unwrap();
}

#[test]
fn matmul_accumulate_adds_the_product_to_the_output() {
    // Through the C ABI, as the lowering calls it: [B, M, K] x [K, N] into a
    // strided [B, M, N] view (columns 1..=N of a [B, M, W] buffer), and the
    // row case [K] x [K, N] into every other element of a [2N] buffer.
    let (b, m, k, n, w) = (2, 3, 4, 5, 8);
    let world = world(1, 1);
    for dtype in DType::FLOATS {
        let (lhs, rhs, initial, out, row_initial, row_out) = world
            .run(|device| {
                let mut lhs = array(dtype, &[b, m, k], noise(1, 0.25));
                let mut rhs = array(dtype, &[k, n], noise(2, 0.25));
                let mut out = array(dtype, &[b, m, w], noise(3, 1.0));
                let mut row_out = array(dtype, &[2 * n], noise(4, 1.0));
                let _known = known(device, &[&lhs, &rhs, &out, &row_out]);
                let (initial, row_initial) = (out.to_f32(), row_out.to_f32());
                let (lhs_view, rhs_view) = (view(&mut lhs), view(&mut rhs));
                let row = select(&select(&lhs_view, 0, 1), 0, 2);
                let row_target = View {
                    sizes: smallvec::smallvec![n],
                    strides: smallvec::smallvec![2],
                    ..view(&mut row_out)
                };
                let [l, r, o, row, row_o] = [
                    lhs_view,
                    rhs_view,
                    view(&mut out).slice(2, 1, n),
                    row,
                    row_target,
                ]
                .map(|v| Descriptor::of(&v));
                let accumulate: BinaryFn = symbol(Entry::MatmulAccumulate(dtype));
                unsafe {
                    accumulate(l.ptr(), r.ptr(), o.ptr());
                    accumulate(row.ptr(), r.ptr(), row_o.ptr());
                }
                device.synchronize().unwrap();
                assert!(!device.failed());
                (
                    lhs.to_f32(),
                    rhs.to_f32(),
                    initial,
                    out.to_f32(),
                    row_initial,
                    row_out.to_f32(),
                )
            })
            .unwrap()
            .remove(0);
        // One rounding of the f32 sum to the element type (half an ulp), and
        // f32 accumulation of the K products; products are at most 0.25 and
        // outputs at least 1, so a kernel that drops the output fails.
        let half_ulp = match dtype {
            DType::F32 => 2f64.powi(-24),
            DType::BF16 => 2f64.powi(-8),
            DType::F16 => 2f64.powi(-11),
            DType::I32 | DType::I64 => unreachable!("floats only"),
        };
        let check = |got: f32, old: f32, lhs_row: &[f32], col: usize, what: &str| {
            let terms: Vec<f64> = (0..k)
                .map(|p| lhs_row[p] as f64 * rhs[p * n + col] as f64)
                .collect();
            let want = old as f64 + terms.iter().sum::<f64>();
            let scale = old.abs() as f64 + terms.iter().map(|t| t.abs()).sum::<f64>();
            let tol = half_ulp * want.abs() + 8.0 * 2f64.powi(-24) * scale;
            assert!(
                (got as f64 - want).abs() <= tol,
                "{dtype:?} {what}: got {got}, want {want} (tolerance {tol:e})"
            );
        };
        for bi in 0..b {
            for i in 0..m {
                let lhs_row = &lhs[(bi * m + i) * k..][..k];
                for col in 0..w {
                    let e = (bi * m + i) * w + col;
                    if (1..=n).contains(&col) {
                        let at = format!("[{bi}, {i}, {}]", col - 1);
                        check(out[e], initial[e], lhs_row, col - 1, &at);
                    } else {
                        assert_eq!(out[e], initial[e], "{dtype:?}: outside the view at {e}");
                    }
                }
            }
        }
        let lhs_row = &lhs[(m + 2) * k..][..k];
        for e in 0..2 * n {
            if e % 2 == 0 {
                let at = format!("row [{}]", e / 2);
                check(row_out[e], row_initial[e], lhs_row, e / 2, &at);
            } else {
                assert_eq!(
                    row_out[e], row_initial[e],
                    "{dtype:?}: outside the row at {e}"
                );
            }
        }
    }
}

#[test]
fn matmul_accumulate_rounds_the_sum_once() {
    // 1 + (2^-8 + 2^-16) in bf16 (8 significant bits): rounded once, the sum
    // is above the tie between 1 and 1 + 2^-7 and goes up; a product rounded
    // to bf16 first (2^-8, a tie itself) would make a tie that goes to 1.
    let world = world(1, 1);
    let out = world
        .run(|device| {
            let mut lhs = Array::from_f32(DType::BF16, &[1, 2], &[2f32.powi(-8), 2f32.powi(-16)]);
            let mut rhs = array(DType::BF16, &[2, 1], |_| 1.0);
            let mut out = array(DType::BF16, &[1, 1], |_| 1.0);
            let matmul = kernel(
                KernelOp::MatmulAccumulate,
                vec![view(&mut lhs), view(&mut rhs)],
                view(&mut out),
            );
            device.compute(matmul).unwrap();
            device.synchronize().unwrap();
            out.to_f32()
        })
        .unwrap();
    assert_eq!(out[0], [1.0 + 2f32.powi(-7)]);
}

#[test]
fn gemm_epilogue_rounds_once_after_the_activation() {
    // x [1, 2] = [1, 1], w [n, 2] with row j = [1, j / 1024], bias -0.5: the
    // f32 result plus bias is 0.5 + j / 1024, exact in f32 but not in bf16
    // (8 significant bits: a step of 4 / 1024 there). The epilogue applies
    // gelu to it and rounds once; a linear then a gelu would round it to
    // bf16 first.
    let n = 32;
    let gelu = |x: f32| crate::cpu::kernels::unary(hir_abi::Activation::Gelu.unary(), x);
    let round = |x: f32| half::bf16::from_f32(x).to_f32();
    let world = world(1, 1);
    let (with_bias, without_bias) = world
        .run(|device| {
            let mut x = array(DType::BF16, &[1, 2], |_| 1.0);
            let mut w = array(DType::BF16, &[n, 2], |e| {
                if e % 2 == 0 {
                    1.0
                } else {
                    (e / 2) as f32 / 1024.0
                }
            });
            let mut bias = array(DType::BF16, &[n], |_| -0.5);
            let mut out = array(DType::BF16, &[1, n], |_| 0.0);
            let mut plain = array(DType::BF16, &[1, n], |_| 0.0);
            let activation = KernelOp::LinearActivation(hir_abi::Activation::Gelu);
            let inputs = vec![view(&mut x), view(&mut w)];
            let biased = [inputs.clone(), vec![view(&mut bias)]].concat();
            device
                .compute(kernel(activation.clone(), biased, view(&mut out)))
                .unwrap();
            device
                .compute(kernel(activation, inputs, view(&mut plain)))
                .unwrap();
            device.synchronize().unwrap();
            (out.to_f32(), plain.to_f32())
        })
        .unwrap()
        .remove(0);
    let mut differs = 0;
    for j in 0..n {
        let exact = 0.5 + j as f32 / 1024.0;
        assert_eq!(with_bias[j], round(gelu(exact)), "column {j}");
        assert_eq!(without_bias[j], round(gelu(exact + 0.5)), "column {j}");
        if round(gelu(round(exact))) != with_bias[j] {
            differs += 1;
        }
    }
    // Rounding before the activation changes some of them.
    assert!(differs > 0);
}

#[test]
fn linear_accumulate_adds_the_product_to_the_output() {
    // out [2, 2] += x [2, 3] x w [2, 3]^T, through the C ABI entry: the
    // weight is read transposed, and the sum is rounded once (as matmul's).
    let world = world(1, 1);
    let out = world
        .run(|device| {
            let mut x = Array::from_f32(DType::F32, &[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
            let mut w = Array::from_f32(DType::F32, &[2, 3], &[1.0, 0.0, 1.0, 0.0, 1.0, 0.0]);
            let mut out = Array::from_f32(DType::F32, &[2, 2], &[10.0, 20.0, 30.0, 40.0]);
            let _known = known(device, &[&x, &w, &out]);
            let [x, w, o] =
                [view(&mut x), view(&mut w), view(&mut out)].map(|v| Descriptor::of(&v));
            let accumulate: BinaryFn = symbol(Entry::LinearAccumulate(DType::F32));
            unsafe { accumulate(x.ptr(), w.ptr(), o.ptr()) };
            device.synchronize().unwrap();
            assert!(!device.failed());
            out.to_f32()
        })
        .unwrap();
    assert_eq!(out[0], [14.0, 22.0, 40.0, 45.0]);
}

/// A naive f64 matmul with torch.matmul's batch broadcasting: each output
/// entry indexes each operand directly, at 0 along an axis of extent 1 or
/// one the operand lacks.
fn broadcast_matmul_reference(
    lhs: &[f32],
    lhs_shape: &[usize],
    rhs: &[f32],
    rhs_shape: &[usize],
    out_shape: &[usize],
) -> Vec<f64> {
    let rank = out_shape.len();
    let k = lhs_shape[lhs_shape.len() - 1];
    let index = |shape: &[usize], coordinates: &[usize]| -> usize {
        // `coordinates` are the output's batch coordinates then two more.
        let skip = rank - shape.len();
        shape.iter().enumerate().fold(0, |flat, (axis, &extent)| {
            let coordinate = coordinates[axis + skip];
            flat * extent + if extent == 1 { 0 } else { coordinate }
        })
    };
    let count: usize = out_shape.iter().product();
    (0..count)
        .map(|flat| {
            let mut coordinates = vec![0; rank];
            let mut rest = flat;
            for axis in (0..rank).rev() {
                coordinates[axis] = rest % out_shape[axis];
                rest /= out_shape[axis];
            }
            let (i, j) = (coordinates[rank - 2], coordinates[rank - 1]);
            (0..k)
                .map(|p| {
                    coordinates[rank - 2] = i;
                    coordinates[rank - 1] = p;
                    let a = lhs[index(lhs_shape, &coordinates)] as f64;
                    coordinates[rank - 2] = p;
                    coordinates[rank - 1] = j;
                    a * rhs[index(rhs_shape, &coordinates)] as f64
                })
                .sum()
        })
        .collect()
}

#[test]
fn matmul_broadcasts_batch_axes_as_torch() {
    // (lhs, rhs, output): unit batch axes of the rhs (a per-device weight
    // shard beside a stream axis), an rhs with fewer batch axes than the lhs,
    // an lhs with fewer than the rhs, and unit axes on both sides.
    let cases: [(&[usize], &[usize], &[usize]); 4] = [
        (&[4, 2, 3, 5], &[1, 1, 5, 6], &[4, 2, 3, 6]),
        (&[3, 1, 3, 5], &[4, 5, 6], &[3, 4, 3, 6]),
        (&[3, 5], &[2, 5, 6], &[2, 3, 6]),
        (&[2, 1, 3, 5], &[1, 3, 5, 6], &[2, 3, 3, 6]),
    ];
    let world = world(1, 1);
    world
        .run(|device| {
            for (seed, &(lhs_shape, rhs_shape, out_shape)) in cases.iter().enumerate() {
                let mut lhs = array(DType::F32, lhs_shape, noise(2 * seed as u64, 0.5));
                let mut rhs = array(DType::F32, rhs_shape, noise(2 * seed as u64 + 1, 0.5));
                let mut out = array(DType::F32, out_shape, |_| f32::NAN);
                let matmul = kernel(
                    KernelOp::Matmul,
                    vec![view(&mut lhs), view(&mut rhs)],
                    view(&mut out),
                );
                device.compute(matmul).unwrap();
                device.synchronize().unwrap();
                let want = broadcast_matmul_reference(
                    &lhs.to_f32(),
                    lhs_shape,
                    &rhs.to_f32(),
                    rhs_shape,
                    out_shape,
                );
                for (e, (&got, want)) in out.to_f32().iter().zip(want).enumerate() {
                    assert!(
                        (got as f64 - want).abs() <= 1e-5,
                        "{lhs_shape:?} x {rhs_shape:?} at {e}: got {got}, want {want}"
                    );
                }
            }
            // Batch axes that do not broadcast are refused.
            let mut lhs = array(DType::F32, &[2, 3, 5], |_| 1.0);
            let mut rhs = array(DType::F32, &[3, 5, 6], |_| 1.0);
            let mut out = array(DType::F32, &[3, 3, 6], |_| 0.0);
            let bad = kernel(
                KernelOp::Matmul,
                vec![view(&mut lhs), view(&mut rhs)],
                view(&mut out),
            );
            let error = device.compute(bad).unwrap_err().to_string();
            assert!(error.contains("do not broadcast"), "{error}");
        })
        .unwrap();
}
