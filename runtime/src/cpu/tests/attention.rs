//! Fused attention against a naive f64 evaluation of its definition (the
//! whole score matrix, a plain softmax), on contiguous and strided views,
//! through the Rust API and the C ABI; and the shapes `validate` refuses.

use super::*;

type AttentionFn = unsafe extern "C" fn(Buf, Buf, Buf, Buf, f64, i64);

type AttentionMaskFn = unsafe extern "C" fn(Buf, Buf, Buf, Buf, Buf, f64, i64);

/// One attention problem's extents: batch axes, queries, keys, head sizes.
#[derive(Clone, Copy, Debug)]
struct Shape {
    batch: &'static [usize],
    sq: usize,
    sk: usize,
    d: usize,
    dv: usize,
}

impl Shape {
    fn of(&self, last: [usize; 2]) -> Vec<usize> {
        [self.batch, &last[..]].concat()
    }

    fn count(&self) -> usize {
        self.batch.iter().product()
    }
}

/// `softmax(q k^T scale + mask) v` in f64 from the definition: every score
/// of a row, hidden ones -inf, then one max, one sum; a row with no visible
/// key is zeros. `mask` is `[sq, sk]`, the others row-major.
fn reference(
    shape: Shape,
    [q, k, v]: [&[f64]; 3],
    mask: Option<&[f64]>,
    scale: f64,
    causal: bool,
) -> Vec<f64> {
    let Shape { sq, sk, d, dv, .. } = shape;
    let mut out = Vec::new();
    for b in 0..shape.count() {
        for i in 0..sq {
            let scores: Vec<f64> = (0..sk)
                .map(|j| {
                    if causal && j > i {
                        return f64::NEG_INFINITY;
                    }
                    let dot: f64 = (0..d)
                        .map(|e| q[(b * sq + i) * d + e] * k[(b * sk + j) * d + e])
                        .sum();
                    dot * scale + mask.map_or(0.0, |mask| mask[i * sk + j])
                })
                .collect();
            let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            if max == f64::NEG_INFINITY {
                out.extend(std::iter::repeat_n(0.0, dv));
                continue;
            }
            let weights: Vec<f64> = scores.iter().map(|s| (s - max).exp()).collect();
            let total: f64 = weights.iter().sum();
            out.extend((0..dv).map(|c| {
                (0..sk)
                    .map(|j| weights[j] * v[(b * sk + j) * dv + c])
                    .sum::<f64>()
                    / total
            }));
        }
    }
    out
}

/// The largest error allowed, relative to the values' magnitude (1): f32
/// accumulates in f32; bf16 and f16 round `p` and the output to their
/// significand, at most 2^-9 (bf16) or 2^-11 (f16) of `max |v|` each, so a
/// few times that; a softmax off by a block's rescale misses by far more.
fn tolerance(dtype: DType) -> f64 {
    match dtype {
        DType::F32 => 1e-5,
        DType::BF16 => 1e-2,
        DType::F16 => 2e-3,
        DType::I32 | DType::I64 => unreachable!("floats only"),
    }
}

fn assert_close(got: &[f32], want: &[f64], dtype: DType, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    let tol = tolerance(dtype);
    for (e, (&got, &want)) in got.iter().zip(want).enumerate() {
        let error = (f64::from(got) - want).abs();
        assert!(
            error <= tol * want.abs().max(1.0),
            "{what} at {e}: got {got}, want {want}"
        );
    }
}

/// `[sq, sk]` of moderate values, every 7th -inf, and row 1 all -inf (a
/// query that sees no key); with causal, row 0 sees only key 0, which is
/// -inf too.
fn mask_values(sq: usize, sk: usize) -> impl Fn(usize) -> f32 {
    let values = noise(9, 0.5);
    move |e| {
        if e % 7 == 0 || (e / sk.max(1) == 1 && sq > 1) {
            f32::NEG_INFINITY
        } else {
            values(e)
        }
    }
}

#[test]
fn attention_matches_a_naive_softmax() {
    // 0, 1 and 2 batch axes; Sq != Sk both ways; Dv != D; key counts under,
    // over and between multiples of the 64-key block; a problem with no key.
    let shapes = [
        Shape {
            batch: &[],
            sq: 5,
            sk: 150,
            d: 16,
            dv: 8,
        },
        Shape {
            batch: &[3],
            sq: 70,
            sk: 70,
            d: 8,
            dv: 8,
        },
        Shape {
            batch: &[2, 2],
            sq: 9,
            sk: 130,
            d: 4,
            dv: 12,
        },
        Shape {
            batch: &[2],
            sq: 130,
            sk: 20,
            d: 8,
            dv: 3,
        },
        Shape {
            batch: &[1],
            sq: 3,
            sk: 0,
            d: 4,
            dv: 2,
        },
    ];
    let world = world(1, 1);
    world
        .run(|device| {
            for dtype in DType::FLOATS {
                for (seed, &shape) in shapes.iter().enumerate() {
                    let seed = 4 * seed as u64;
                    let Shape { sq, sk, d, dv, .. } = shape;
                    // Scores of spread ~2: peaked rows, far from uniform.
                    let scale = 1.0 / (d as f64).sqrt();
                    let mut q = array(dtype, &shape.of([sq, d]), noise(seed, 1.0));
                    let mut k = array(dtype, &shape.of([sk, d]), noise(seed + 1, 1.0));
                    let mut v = array(dtype, &shape.of([sk, dv]), noise(seed + 2, 0.5));
                    let mut mask = array(dtype, &[sq, sk], mask_values(sq, sk));
                    let inputs = [&q, &k, &v].map(Array::to_f64);
                    let mask_f64 = mask.to_f64();
                    for causal in [false, true] {
                        for masked in [false, true] {
                            let mut out = array(dtype, &shape.of([sq, dv]), |_| f32::NAN);
                            let mut views = vec![view(&mut q), view(&mut k), view(&mut v)];
                            if masked {
                                views.push(view(&mut mask));
                            }
                            let attention = kernel(
                                KernelOp::Attention { scale, causal },
                                views,
                                view(&mut out),
                            );
                            device.compute(attention).unwrap();
                            device.synchronize().unwrap();
                            let want = reference(
                                shape,
                                [&inputs[0], &inputs[1], &inputs[2]],
                                masked.then_some(&mask_f64[..]),
                                scale,
                                causal,
                            );
                            let what = format!("{dtype:?} {shape:?} causal {causal} mask {masked}");
                            assert_close(&out.to_f32(), &want, dtype, &what);
                            if masked && sk > 0 && sq > 1 {
                                // The row that sees no key: zeros, not NaN.
                                let row = &out.to_f32()[dv..2 * dv];
                                assert_eq!(row, vec![0.0; dv], "{what}");
                            }
                        }
                    }
                }
            }
        })
        .unwrap();
}

/// `x` rounded to the float type `dtype`.
fn rounded(dtype: DType, x: f32) -> f32 {
    Array::from_f32(dtype, &[1], &[x]).to_f32()[0]
}

#[test]
fn attention_rounds_p_to_the_element_type_before_it_multiplies_v() {
    // Two keys of scores 0 and s < 0, v = [0, 1]: out = p1 / (1 + p1) with
    // p1 = exp(s), where the GPU's second MMA takes p1 rounded to bf16 or
    // f16 while the sum l keeps the f32 p1. For each type, a score where
    // that rounding changes the stored output, so the test tells them apart.
    let world = world(1, 1);
    world
        .run(|device| {
            for dtype in [DType::BF16, DType::F16] {
                let (scale, want) = (1..4096)
                    .map(|n| -(n as f32) / 1024.0)
                    .find_map(|s| {
                        let p = s.exp();
                        let faithful = rounded(dtype, rounded(dtype, p) / (1.0 + p));
                        let plain = rounded(dtype, p / (1.0 + p));
                        (faithful != plain).then_some((f64::from(s), faithful))
                    })
                    .expect("a score where rounding p shows");
                let mut q = array(dtype, &[1, 1], |_| 1.0);
                let mut k = array(dtype, &[2, 1], |j| j as f32);
                let mut v = array(dtype, &[2, 1], |j| j as f32);
                let mut out = array(dtype, &[1, 1], |_| f32::NAN);
                let attention = kernel(
                    KernelOp::Attention {
                        scale,
                        causal: false,
                    },
                    vec![view(&mut q), view(&mut k), view(&mut v)],
                    view(&mut out),
                );
                device.compute(attention).unwrap();
                device.synchronize().unwrap();
                assert_eq!(out.to_f32(), [want], "{dtype:?} score {scale}");
            }
        })
        .unwrap();
}

/// The values of a strided view, row-major, read by index arithmetic.
fn gather(storage: &Array, view: &View) -> Vec<f32> {
    let base = storage.data.as_ptr() as usize;
    let first = (view.ptr as usize - base) / storage.dtype.size();
    let values = storage.to_f32();
    (0..view.numel())
        .map(|mut e| {
            let mut at = first;
            for (&size, &stride) in view.sizes.iter().zip(&view.strides).rev() {
                at += e % size * stride;
                e /= size;
            }
            values[at]
        })
        .collect()
}

#[test]
fn attention_reads_and_writes_strided_views_through_the_c_abi() {
    // q stored [Sq, B, D], k [B, D, Sk] (transposed), v as columns 1..=Dv of
    // [B, Sk, Dv + 3], the mask transposed, and the output every other
    // element of [B, Sq, 2 Dv]: each read through its strides.
    let shape = Shape {
        batch: &[2],
        sq: 3,
        sk: 70,
        d: 4,
        dv: 5,
    };
    let Shape { sq, sk, d, dv, .. } = shape;
    let b = 2;
    let scale = 0.5;
    for dtype in [DType::F32, DType::BF16] {
        let world = world(1, 1);
        world
            .run(|device| {
                let mut q = array(dtype, &[sq, b, d], noise(1, 1.0));
                let mut k = array(dtype, &[b, d, sk], noise(2, 1.0));
                let mut v = array(dtype, &[b, sk, dv + 3], noise(3, 0.5));
                let mut mask = array(dtype, &[sk, sq], noise(4, 0.5));
                let mut out = array(dtype, &[b, sq, 2 * dv], |_| 7.0);
                let _known = known(device, &[&q, &k, &v, &mask, &out]);
                let q_view = View {
                    sizes: smallvec::smallvec![b, sq, d],
                    strides: smallvec::smallvec![d, b * d, 1],
                    ..view(&mut q)
                };
                let k_view = View {
                    sizes: smallvec::smallvec![b, sk, d],
                    strides: smallvec::smallvec![d * sk, 1, sk],
                    ..view(&mut k)
                };
                let v_view = view(&mut v).slice(2, 1, dv);
                let mask_view = View {
                    sizes: smallvec::smallvec![sq, sk],
                    strides: smallvec::smallvec![1, sq],
                    ..view(&mut mask)
                };
                let out_view = View {
                    sizes: smallvec::smallvec![b, sq, dv],
                    strides: smallvec::smallvec![sq * 2 * dv, 2 * dv, 2],
                    ..view(&mut out)
                };
                let logical = [
                    gather(&q, &q_view),
                    gather(&k, &k_view),
                    gather(&v, &v_view),
                    gather(&mask, &mask_view),
                ]
                .map(|values| values.into_iter().map(f64::from).collect::<Vec<_>>());
                let [qd, kd, vd, md, od] =
                    [&q_view, &k_view, &v_view, &mask_view, &out_view].map(Descriptor::of);
                for (causal, masked) in [(false, false), (true, true)] {
                    unsafe {
                        if masked {
                            let attention: AttentionMaskFn = symbol(Entry::AttentionMask(dtype));
                            attention(
                                qd.ptr(),
                                kd.ptr(),
                                vd.ptr(),
                                md.ptr(),
                                od.ptr(),
                                scale,
                                i64::from(causal),
                            );
                        } else {
                            let attention: AttentionFn = symbol(Entry::Attention(dtype));
                            attention(
                                qd.ptr(),
                                kd.ptr(),
                                vd.ptr(),
                                od.ptr(),
                                scale,
                                i64::from(causal),
                            );
                        }
                    }
                    device.synchronize().unwrap();
                    assert!(!device.failed());
                    let want = reference(
                        shape,
                        [&logical[0], &logical[1], &logical[2]],
                        masked.then_some(&logical[3][..]),
                        scale,
                        causal,
                    );
                    let what = format!("{dtype:?} strided, causal {causal} mask {masked}");
                    assert_close(&gather(&out, &out_view), &want, dtype, &what);
                    let values = out.to_f32();
                    for e in (1..values.len()).step_by(2) {
                        assert_eq!(values[e], 7.0, "{what}: outside the view at {e}");
                    }
                }
            })
            .unwrap();
    }
}

/// `validate`'s error for attention buffers of these shapes and type.
fn refusal(dtype: DType, shapes: &[&[usize]], scale: f64) -> String {
    let views: Vec<View> = shapes
        .iter()
        .map(|sizes| View::contiguous(dtype, std::ptr::null_mut(), sizes))
        .collect();
    let (output, inputs) = views.split_last().unwrap();
    kernel(
        KernelOp::Attention {
            scale,
            causal: false,
        },
        inputs.to_vec(),
        output.clone(),
    )
    .validate()
    .unwrap_err()
    .to_string()
}

#[test]
fn attention_refuses_bad_shapes_types_and_scales() {
    let f32 = DType::F32;
    let cases: [(DType, &[&[usize]], f64, &str); 11] = [
        (
            f32,
            &[&[2, 4], &[3, 4], &[3, 5]],
            1.0,
            "takes 3..=4 inputs, got 2",
        ),
        (
            f32,
            &[&[4], &[3, 4], &[3, 5], &[5]],
            1.0,
            "q [4] must be [B.., Sq, D], k [3, 4] [B.., Sk, D] and v [3, 5] [B.., Sk, Dv]",
        ),
        (
            f32,
            &[&[2, 2, 4], &[2, 3, 4], &[3, 5], &[2, 2, 5]],
            1.0,
            "v [3, 5] [B.., Sk, Dv], with the same batch axes B",
        ),
        (
            f32,
            &[&[2, 2, 4], &[1, 3, 4], &[2, 3, 5], &[2, 2, 5]],
            1.0,
            "the batch axes of q [2, 2, 4], k [1, 3, 4] and v [2, 3, 5] differ",
        ),
        (
            f32,
            &[&[2, 4], &[3, 6], &[3, 5], &[2, 5]],
            1.0,
            "q [2, 4] and k [3, 6] have head sizes 4 and 6",
        ),
        (
            f32,
            &[&[2, 4], &[3, 4], &[7, 5], &[2, 5]],
            1.0,
            "k [3, 4] and v [7, 5] have 3 and 7 keys",
        ),
        (
            f32,
            &[&[2, 4], &[3, 4], &[3, 5], &[3, 2], &[2, 5]],
            1.0,
            "mask has shape [3, 2], expected [2, 3]",
        ),
        (
            f32,
            &[&[2, 4], &[3, 4], &[3, 5], &[2, 4]],
            1.0,
            "output has shape [2, 4], expected [2, 5]",
        ),
        (
            DType::I32,
            &[&[2, 4], &[3, 4], &[3, 5], &[2, 5]],
            1.0,
            "is not defined on i32 (float only)",
        ),
        (
            f32,
            &[&[2, 4], &[3, 4], &[3, 5], &[2, 5]],
            f64::NAN,
            "scale NaN is not a finite f32",
        ),
        (
            f32,
            &[&[2, 4], &[3, 4], &[3, 5], &[2, 5]],
            1e300,
            "scale 1e300 is not a finite f32",
        ),
    ];
    for (dtype, shapes, scale, want) in cases {
        let error = refusal(dtype, shapes, scale);
        assert!(error.contains(want), "{shapes:?}: {error}");
    }
    assert!(refusal(f32, &[&[2, 4], &[3, 4], &[3, 5], &[2, 5]], f64::INFINITY).contains("inf"));
    // Through the C ABI, the rank's error names the entry.
    let error = world(1, 1)
        .run(|device| {
            let mut q = array(f32, &[2, 4], |_| 0.0);
            let mut k = array(f32, &[3, 6], |_| 0.0);
            let mut v = array(f32, &[3, 5], |_| 0.0);
            let mut out = array(f32, &[2, 5], |_| 0.0);
            let _known = known(device, &[&q, &k, &v, &out]);
            let [qd, kd, vd, od] =
                [&mut q, &mut k, &mut v, &mut out].map(|a| Descriptor::of(&view(a)));
            let attention: AttentionFn = symbol(Entry::Attention(f32));
            unsafe { attention(qd.ptr(), kd.ptr(), vd.ptr(), od.ptr(), 1.0, 0) };
        })
        .unwrap_err()
        .to_string();
    assert_eq!(
        error,
        "rank 0: hir_rt_attention_f32: q [2, 4] and k [3, 6] have head sizes 4 and 6"
    );
}
