//! GEMMs with an activation epilogue (`host.linear activation gelu`,
//! `host.matmul activation gelu`) on cuBLASLt's `GELU_BIAS` and `GELU`
//! epilogues against the cpu backend, which applies the gelu to the f32
//! product plus bias before the one rounding.

use super::*;
use hir_abi::Activation;

/// The comparison for `dtype`: f32 within 1e-4 relative L2 (cuBLASLt's gelu
/// is its own implementation of the tanh form, not the cpu's `tanhf`), the
/// others within their usual tolerance (their rounding dominates).
fn close(dtype: DType) -> Match {
    match dtype {
        DType::F32 => Match::Relative(1e-4),
        _ => Match::Close,
    }
}

#[test]
fn gemm_epilogues_match() {
    let Some(world) = world(1, false) else { return };
    let gelu = Activation::Gelu;
    // A short K keeps many outputs where gelu bends (|x| < 3); a long one
    // is the common case.
    for (m, k, n) in [(64, 8, 80), (64, 96, 80)] {
        for dtype in DType::FLOATS {
            let b = |len| Buffer { dtype, len };
            let buffers = [
                b(4 * m * k), // input or lhs [4, m, k]
                b(n * k),     // weight [n, k]
                b(n),         // bias [n]
                b(4 * k * n), // rhs [4, k, n]
                b(8 * m * n), // outputs
            ];
            // Each output region is m * n elements; a multiple of 256 bytes,
            // so that every region has the same alignment (one plan key).
            let region = |index: usize| index * m * n;
            compare(
                &format!("gemm epilogues {dtype:?} k={k}"),
                &world,
                &buffers,
                close(dtype),
                &|device, p| {
                    let input = view(dtype, p[0], 0, &[2, m, k], &[m * k, k, 1]);
                    let weight = dense(dtype, p[1], &[n, k]);
                    let bias = dense(dtype, p[2], &[n]);
                    let out = |index, sizes: &[usize], strides: &[usize]| {
                        view(dtype, p[4], region(index), sizes, strides)
                    };
                    // Linear with bias (GELU_BIAS) and without (GELU).
                    run(
                        device,
                        KernelOp::LinearActivation(gelu),
                        vec![input.clone(), weight.clone(), bias.clone()],
                        out(0, &[2, m, n], &[m * n, n, 1]),
                    );
                    run(
                        device,
                        KernelOp::LinearActivation(gelu),
                        vec![input.clone(), weight.clone()],
                        out(2, &[2, m, n], &[m * n, n, 1]),
                    );
                    // The same shapes without the epilogue, between two
                    // with it: the plans of the two are cached apart.
                    run(
                        device,
                        KernelOp::Linear,
                        vec![input.clone(), weight.clone(), bias.clone()],
                        out(4, &[2, m, n], &[m * n, n, 1]),
                    );
                    // Into a transposed output view, which cuBLASLt cannot
                    // write: computed contiguously, the epilogue applied,
                    // then copied.
                    run(
                        device,
                        KernelOp::LinearActivation(gelu),
                        vec![
                            view(dtype, p[0], 0, &[m, k], &[k, 1]),
                            weight.clone(),
                            bias.clone(),
                        ],
                        out(6, &[m, n], &[1, m]),
                    );
                    // Matmul: plain, then batched (a strided batch).
                    run(
                        device,
                        KernelOp::MatmulActivation(gelu),
                        vec![
                            view(dtype, p[0], 0, &[m, k], &[k, 1]),
                            dense(dtype, p[3], &[k, n]),
                        ],
                        out(7, &[m, n], &[n, 1]),
                    );
                },
            );
            compare(
                &format!("batched matmul epilogue {dtype:?} k={k}"),
                &world,
                &buffers,
                close(dtype),
                &|device, p| {
                    run(
                        device,
                        KernelOp::MatmulActivation(gelu),
                        vec![
                            dense(dtype, p[0], &[4, m, k]),
                            dense(dtype, p[3], &[4, k, n]),
                        ],
                        view(dtype, p[4], 0, &[4, m, n], &[m * n, n, 1]),
                    );
                },
            );
        }
    }
}

/// The epilogue is the activation of the product, not the product: against
/// the cpu backend's plain linear the gelu outputs are far off (so the
/// comparison above could not pass without it).
#[test]
fn the_epilogue_applies_the_activation() {
    let Some(world) = world(1, false) else { return };
    let (m, k, n) = (16, 8, 32);
    let dtype = DType::F32;
    let b = |len| Buffer { dtype, len };
    let buffers = [b(m * k), b(n * k), b(n), b(2 * m * n)];
    let outputs = world
        .run(|device| {
            let ptrs: Vec<*mut u8> = buffers
                .iter()
                .enumerate()
                .map(|(i, &buffer)| {
                    let bytes = random(seed(0, i), buffer);
                    let ptr = device.alloc(2000 + i as i64, bytes.len()).unwrap().as_ptr();
                    device.copy_to_device(ptr, &bytes).unwrap();
                    ptr
                })
                .collect();
            let inputs = vec![
                dense(dtype, ptrs[0], &[m, k]),
                dense(dtype, ptrs[1], &[n, k]),
                dense(dtype, ptrs[2], &[n]),
            ];
            run(
                device,
                KernelOp::Linear,
                inputs.clone(),
                dense(dtype, ptrs[3], &[m, n]),
            );
            run(
                device,
                KernelOp::LinearActivation(Activation::Gelu),
                inputs,
                view(dtype, ptrs[3], m * n, &[m, n], &[n, 1]),
            );
            device.synchronize().unwrap();
            let values = read_f32(device, ptrs[3], 2 * m * n);
            for ptr in ptrs {
                device.dealloc(ptr).unwrap();
            }
            values
        })
        .unwrap_or_else(|error| panic!("cuda backend: {error}"));
    let values = &outputs[0];
    let (plain, activated) = values.split_at(m * n);
    for (&x, &y) in plain.iter().zip(activated) {
        let expected = Activation::Gelu.unary().eval(f64::from(x));
        assert!(
            (f64::from(y) - expected).abs() <= 1e-3 * expected.abs().max(1.0),
            "gelu({x}) = {expected}, the epilogue gave {y}"
        );
    }
    assert!(
        plain.iter().any(|&x| x < -1.0),
        "the test needs negative pre-activations, where gelu differs from x"
    );
    println!("the epilogue applies gelu to {} outputs", m * n);
}
