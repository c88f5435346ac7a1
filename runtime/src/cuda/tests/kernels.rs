//! Kernels on the GPU against the cpu backend: pointwise ops, casts,
//! broadcasts, reductions (wide and outer), and the integer kernels.

use super::*;

#[test]
fn pointwise_casts_and_broadcasts_match_bit_for_bit() {
    let Some(world) = world(1, false) else { return };
    for dtype in DType::FLOATS {
        let b = |len| Buffer { dtype, len };
        // A [4, 8] slice (middle index 1) of a [4, 3, 8] buffer, a transposed
        // [4, 8] view of a [8, 4] buffer, and a [4, 8] output inside a [4, 10].
        let slice = |base| view(dtype, base, 8, &[4, 8], &[24, 1]);
        let transposed = |base| view(dtype, base, 0, &[4, 8], &[1, 4]);
        let out = |base| view(dtype, base, 1, &[4, 8], &[10, 1]);
        let buffers = [b(96), b(32), b(40)];
        compare(
            &format!("copy/neg {dtype:?}"),
            &world,
            &buffers,
            Match::Bits,
            &|device, p| {
                run(device, KernelOp::Copy, vec![slice(p[0])], out(p[2]));
                run(
                    device,
                    KernelOp::Unary(Unary::Neg),
                    vec![transposed(p[1])],
                    slice(p[0]),
                );
            },
        );
        // Unary ops other than neg may round differently on the GPU. rsqrt
        // takes abs's output (in place), inside its domain.
        for op in Unary::ALL {
            compare(
                &format!("{} {dtype:?}", op.name()),
                &world,
                &buffers,
                Match::Close,
                &|device, p| {
                    if op == Unary::Rsqrt {
                        run(
                            device,
                            KernelOp::Unary(Unary::Abs),
                            vec![transposed(p[1])],
                            out(p[2]),
                        );
                        run(device, KernelOp::Unary(op), vec![out(p[2])], out(p[2]));
                    } else {
                        run(
                            device,
                            KernelOp::Unary(op),
                            vec![transposed(p[1])],
                            out(p[2]),
                        );
                    }
                },
            );
        }
        for op in Binary::ALL {
            compare(
                &format!("{} {dtype:?}", op.name()),
                &world,
                &buffers,
                Match::Bits,
                &|device, p| {
                    run(
                        device,
                        KernelOp::Binary(op),
                        vec![slice(p[0]), transposed(p[1])],
                        out(p[2]),
                    );
                },
            );
        }
        // where's mask is relu's output (in place), zero at about half the
        // elements.
        compare(
            &format!("where {dtype:?}"),
            &world,
            &buffers,
            Match::Bits,
            &|device, p| {
                run(
                    device,
                    KernelOp::Unary(Unary::Relu),
                    vec![slice(p[0])],
                    slice(p[0]),
                );
                run(
                    device,
                    KernelOp::Where,
                    vec![slice(p[0]), transposed(p[1]), out(p[2])],
                    out(p[2]),
                );
            },
        );
        for to in DType::FLOATS {
            let buffers = [b(96), Buffer { dtype: to, len: 40 }];
            compare(
                &format!("cast {dtype:?} -> {to:?}"),
                &world,
                &buffers,
                Match::Bits,
                &|device, p| {
                    let out = view(to, p[1], 1, &[4, 8], &[10, 1]);
                    run(device, KernelOp::Cast, vec![slice(p[0])], out);
                },
            );
        }
        let buffers = [b(8), b(3 * 8 * 5)];
        compare(
            &format!("broadcast {dtype:?}"),
            &world,
            &buffers,
            Match::Bits,
            &|device, p| {
                run(
                    device,
                    KernelOp::Broadcast(vec![0, 2]),
                    vec![dense(dtype, p[0], &[8])],
                    dense(dtype, p[1], &[3, 8, 5]),
                );
            },
        );
        // fill and iota write strided views (a slice and a transposed one)
        // of no input; iota from an offset past bf16's exact integers.
        let buffers = [b(96), b(32)];
        compare(
            &format!("fill/iota {dtype:?}"),
            &world,
            &buffers,
            Match::Bits,
            &|device, p| {
                run(device, KernelOp::Fill(-0.3), Vec::new(), transposed(p[1]));
                run(
                    device,
                    KernelOp::Iota {
                        axis: 1,
                        offset: 1021,
                    },
                    Vec::new(),
                    slice(p[0]),
                );
                run(
                    device,
                    KernelOp::Iota { axis: 0, offset: 0 },
                    Vec::new(),
                    view(dtype, p[0], 0, &[4, 8], &[24, 1]),
                );
            },
        );
    }
}

#[test]
fn reductions_match() {
    let Some(world) = world(1, false) else { return };
    for dtype in DType::FLOATS {
        let b = |len| Buffer { dtype, len };
        for op in Reduction::ALL {
            let how = if op == Reduction::Amax {
                Match::Bits
            } else {
                Match::Close
            };
            let buffers = [b(6 * 5 * 40), b(6 * 40), b(5), b(7), b(1)];
            compare(
                &format!("{} {dtype:?}", op.name()),
                &world,
                &buffers,
                how,
                &|device, p| {
                    let input = dense(dtype, p[0], &[6, 5, 40]);
                    run(
                        device,
                        KernelOp::Reduce(op, vec![1]),
                        vec![input.clone()],
                        dense(dtype, p[1], &[6, 40]),
                    );
                    run(
                        device,
                        KernelOp::Reduce(op, vec![0, 2]),
                        vec![input.clone()],
                        dense(dtype, p[2], &[5]),
                    );
                    // The strided [6, 40] slice at middle index 2, over its rows.
                    let slice = view(dtype, p[0], 80, &[6, 40], &[200, 1]);
                    run(
                        device,
                        KernelOp::Reduce(op, vec![1]),
                        vec![slice],
                        view(dtype, p[3], 1, &[6], &[1]),
                    );
                    run(
                        device,
                        KernelOp::Reduce(op, vec![0, 1, 2]),
                        vec![input],
                        dense(dtype, p[4], &[]),
                    );
                },
            );
        }
    }
}

/// The 16-byte paths: a copy of a row slice and reductions over the outer
/// axis with many outputs (short and long), next to the same shapes one
/// element off alignment, which take the element paths.
#[test]
fn wide_copies_and_outer_reductions_match() {
    let Some(world) = world(1, false) else { return };
    for dtype in DType::FLOATS {
        let b = |len| Buffer { dtype, len };
        let (rows, cols) = (64, 2048);
        let buffers = [
            b(4 * rows * cols + 8),
            b(40 * 32 * cols),
            b(rows * cols + 8),
            b(32 * cols + 8),
        ];
        compare(
            &format!("wide copy/add {dtype:?}"),
            &world,
            &buffers,
            Match::Bits,
            &|device, p| {
                // Rows 8.. of block 1 into rows 8.. of the output, then the
                // same one element off (the element path).
                let block = |base, offset| view(dtype, base, offset, &[56, cols], &[cols, 1]);
                run(
                    device,
                    KernelOp::Copy,
                    vec![block(p[0], rows * cols + 8 * cols)],
                    block(p[2], 8 * cols),
                );
                let rows7 = |base| view(dtype, base, 1, &[7, cols], &[cols, 1]);
                run(device, KernelOp::Copy, vec![rows7(p[0])], rows7(p[3]));
                // An add of row blocks (in place, as the reduce-scatter ring
                // combines its local partial), and one element off.
                let out = block(p[2], 8 * cols);
                let lhs = block(p[0], 2 * rows * cols + 8 * cols);
                run(
                    device,
                    KernelOp::Binary(Binary::Add),
                    vec![out.clone(), lhs],
                    out,
                );
                let rows7b = |base| view(dtype, base, 3 * cols + 1, &[7, cols], &[cols, 1]);
                run(
                    device,
                    KernelOp::Binary(Binary::Max),
                    vec![rows7(p[0]), rows7b(p[0])],
                    rows7b(p[3]),
                );
            },
        );
        for op in Reduction::ALL {
            let how = if op == Reduction::Amax {
                Match::Bits
            } else {
                Match::Close
            };
            compare(
                &format!("wide {} {dtype:?}", op.name()),
                &world,
                &buffers,
                how,
                &|device, p| {
                    run(
                        device,
                        KernelOp::Reduce(op, vec![0]),
                        vec![dense(dtype, p[0], &[4, rows, cols])],
                        dense(dtype, p[2], &[rows, cols]),
                    );
                    run(
                        device,
                        KernelOp::Reduce(op, vec![0]),
                        vec![dense(dtype, p[1], &[40, 32, cols])],
                        view(dtype, p[3], 8, &[32, cols], &[cols, 1]),
                    );
                    // Misaligned by one element.
                    run(
                        device,
                        KernelOp::Reduce(op, vec![0]),
                        vec![view(
                            dtype,
                            p[0],
                            1,
                            &[4, rows, cols],
                            &[rows * cols, cols, 1],
                        )],
                        view(dtype, p[2], 1, &[rows, cols], &[cols, 1]),
                    );
                },
            );
        }
    }
}

/// Outer reductions of few outputs and many rows (a bias gradient's column
/// sum), which split the rows over a block's threads (`reduce_split`): a
/// row count no group count divides, a block of words wider than the
/// output, and a strided batch of columns.
#[test]
fn column_sums_split_over_blocks_match() {
    let Some(world) = world(1, false) else { return };
    for dtype in DType::FLOATS {
        let b = |len| Buffer { dtype, len };
        let (rows, cols) = (4099, 512);
        let buffers = [b(rows * cols), b(cols), b(3 * 64), b(8 * 1000 * 64)];
        for op in Reduction::ALL {
            let how = if op == Reduction::Amax {
                Match::Bits
            } else {
                Match::Close
            };
            compare(
                &format!("split {} {dtype:?}", op.name()),
                &world,
                &buffers,
                how,
                &|device, p| {
                    run(
                        device,
                        KernelOp::Reduce(op, vec![0]),
                        vec![dense(dtype, p[0], &[rows, cols])],
                        dense(dtype, p[1], &[cols]),
                    );
                    run(
                        device,
                        KernelOp::Reduce(op, vec![1]),
                        vec![view(
                            dtype,
                            p[3],
                            0,
                            &[3, 1000, 64],
                            &[2 * 1000 * 64, 64, 1],
                        )],
                        dense(dtype, p[2], &[3, 64]),
                    );
                },
            );
        }
    }
}

/// Every integer kernel (`Unary::takes`, `Binary::takes`, where, fill,
/// iota, sum and amax over outer and inner axes, an i64 copy and broadcast)
/// on strided views gives the cpu backend's bits. Inputs are integers of
/// magnitude 62 to 2000 (`random`); `mul` of `mul`'s output and the sums
/// of products wrap in i32.
#[test]
fn integer_kernels_match_the_cpu_backend_bit_for_bit() {
    let Some(world) = world(1, false) else { return };
    for dtype in DType::INTS {
        let b = |len| Buffer { dtype, len };
        let slice = |base| view(dtype, base, 8, &[4, 8], &[24, 1]);
        let transposed = |base| view(dtype, base, 0, &[4, 8], &[1, 4]);
        let out = |base| view(dtype, base, 1, &[4, 8], &[10, 1]);
        let buffers = [b(96), b(32), b(40), b(8)];
        let program = |device: &dyn Device, p: &[*mut u8]| {
            for op in Unary::ALL.into_iter().filter(|op| op.takes(dtype)) {
                run(
                    device,
                    KernelOp::Unary(op),
                    vec![transposed(p[1])],
                    out(p[2]),
                );
            }
            for op in Binary::ALL.into_iter().filter(|op| op.takes(dtype)) {
                run(
                    device,
                    KernelOp::Binary(op),
                    vec![slice(p[0]), transposed(p[1])],
                    out(p[2]),
                );
            }
            // Products of products: past i32.
            let product = vec![out(p[2]), out(p[2])];
            run(device, KernelOp::Binary(Binary::Mul), product, out(p[2]));
            run(
                device,
                KernelOp::Where,
                vec![transposed(p[1]), slice(p[0]), out(p[2])],
                out(p[2]),
            );
            run(
                device,
                KernelOp::Reduce(Reduction::Sum, vec![0]),
                vec![out(p[2])],
                dense(dtype, p[3], &[8]),
            );
            run(
                device,
                KernelOp::Reduce(Reduction::Amax, vec![1]),
                vec![slice(p[0])],
                dense(dtype, p[3], &[4]),
            );
            run(
                device,
                KernelOp::Broadcast(vec![0]),
                vec![dense(dtype, p[3], &[8])],
                slice(p[0]),
            );
            run(device, KernelOp::Fill(-7.0), Vec::new(), transposed(p[1]));
            run(
                device,
                KernelOp::Iota {
                    axis: 1,
                    offset: -3,
                },
                Vec::new(),
                dense(dtype, p[2], &[5, 8]),
            );
        };
        compare(
            &format!("integers {dtype:?}"),
            &world,
            &buffers,
            Match::Bits,
            &program,
        );
    }
}

/// The edge values of a cast's input, as `dtype`'s bytes: for a float type
/// zeros of both signs, halfway values of every type (0.5, 2.5, 257, 2049,
/// 65520, 2^24 + 1), NaN, ±inf, subnormals and values beyond i32 and i64;
/// for an integer type the halfway integers of bf16, f16 and f32, the
/// values past f16's range, i32's and i64's extremes, and 2^62 + 2^54 + 1
/// (rounded twice through f32 it would end on bf16's even neighbour).
fn cast_inputs(dtype: DType) -> Vec<u8> {
    let floats = [
        0.0,
        -0.0,
        0.5,
        -0.5,
        1.5,
        2.5,
        -2.5,
        2.7,
        -2.7,
        257.0,
        259.0,
        2049.0,
        65504.0,
        65520.0,
        16_777_217.0,
        2_147_483_520.0,
        2_147_483_648.0,
        -2_147_483_648.0,
        -2_147_483_904.0,
        3e9,
        -3e9,
        9.223_371_5e18,
        9.223_372_036_854_776e18,
        -9.223_372_036_854_776e18,
        1e30,
        -1e30,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        -f64::NAN,
        1e-40,
        -1e-45,
    ];
    let halfway = (1i64 << 62) + (1 << 54) + 1;
    let ints = [
        0,
        1,
        -1,
        -7,
        257,
        259,
        -257,
        2049,
        2051,
        65504,
        65519,
        65520,
        65536,
        16_777_217,
        16_777_219,
        -16_777_217,
        i64::from(i32::MAX),
        i64::from(i32::MIN),
        1 << 31,
        -(1 << 31) - 1,
        (1 << 32) + 5,
        (1 << 53) + 1,
        halfway,
        -halfway,
        i64::MAX,
        i64::MIN,
    ];
    match dtype {
        DType::F32 => floats
            .iter()
            .flat_map(|&x| (x as f32).to_le_bytes())
            .collect(),
        DType::BF16 => floats
            .iter()
            .flat_map(|&x| bf16::from_f64(x).to_le_bytes())
            .collect(),
        DType::F16 => floats
            .iter()
            .flat_map(|&x| f16::from_f64(x).to_le_bytes())
            .collect(),
        DType::I32 => ints
            .iter()
            .flat_map(|&x| (x as i32).to_le_bytes())
            .collect(),
        DType::I64 => ints.iter().flat_map(|&x| x.to_le_bytes()).collect(),
    }
}

/// Every cast, from each element type to each (floats, integers, and
/// between them), of `cast_inputs` read through a strided view (every other
/// element) gives the cpu backend's bits, the whole output buffer compared.
#[test]
fn casts_match_the_cpu_backend_bit_for_bit() {
    let Some(world) = world(1, false) else { return };
    for from in DType::ALL {
        for to in DType::ALL {
            let input = cast_inputs(from);
            let len = input.len() / from.size();
            // The input twice over, read at the even elements.
            let doubled: Vec<u8> = input
                .chunks(from.size())
                .flat_map(|value| [value, value].concat())
                .collect();
            let kernel = |a: *mut u8, b: *mut u8| Kernel {
                op: KernelOp::Cast,
                inputs: vec![view(from, a, 0, &[len], &[2])],
                output: dense(to, b, &[len]),
            };
            let want = crate::reference::run(1, |device| {
                let mut a = doubled.clone();
                let mut b = vec![0u8; len * to.size()];
                device
                    .compute(kernel(a.as_mut_ptr(), b.as_mut_ptr()))
                    .unwrap();
                device.synchronize().unwrap();
                b
            })
            .unwrap_or_else(|error| panic!("cpu backend: {error}"));
            let got = world
                .run(|device| {
                    let a = device.alloc(1000, doubled.len()).unwrap().as_ptr();
                    let b = device.alloc(1001, len * to.size()).unwrap().as_ptr();
                    device.copy_to_device(a, &doubled).unwrap();
                    device.compute(kernel(a, b)).unwrap();
                    device.synchronize().unwrap();
                    let mut bytes = vec![0u8; len * to.size()];
                    device.copy_from_device(b, &mut bytes).unwrap();
                    device.dealloc(a).unwrap();
                    device.dealloc(b).unwrap();
                    bytes
                })
                .unwrap_or_else(|error| panic!("cuda backend: {error}"));
            assert_eq!(
                decode(to, &got[0]).len(),
                len,
                "cast {from:?} -> {to:?}: output length"
            );
            // Bit for bit, but a NaN's payload is the hardware's (CUDA's
            // conversions give the canonical NaN, the cpu keeps the payload):
            // any NaN matches any NaN.
            let (cpu, cuda) = (decode(to, &want[0]), decode(to, &got[0]));
            let size = to.size();
            let bits = |bytes: &[u8], i: usize| bytes[i * size..(i + 1) * size].to_vec();
            let first = (0..len).find(|&i| {
                bits(&want[0], i) != bits(&got[0], i) && !(cpu[i].is_nan() && cuda[i].is_nan())
            });
            assert!(
                first.is_none(),
                "cast {from:?} -> {to:?}: differs at element {first:?}: cpu {cpu:?}, cuda {cuda:?}"
            );
        }
    }
    println!("casts: every pair matches the cpu backend");
}

#[test]
fn random_inputs_are_the_hosts_bit_for_bit() {
    let Some(world) = world(1, false) else { return };
    let device = world.device(0);
    // A [6, 10] box at (2, 3) of a global [12, 20] array, and a whole one.
    let global = [12usize, 20];
    let global_strides = [20usize, 1];
    for (shape, origin) in [([6usize, 10usize], [2usize, 3usize]), ([12, 20], [0, 0])] {
        let first = origin[0] * global_strides[0] + origin[1];
        for dtype in DType::ALL {
            let key = crate::random::key(11, dtype as usize);
            let count = shape[0] * shape[1];
            let memory = device.buffer(count * dtype.size()).unwrap();
            device
                .fill_random(memory.ptr(), dtype, &shape, &global_strides, first, key)
                .unwrap();
            let mut made = vec![0u8; count * dtype.size()];
            device.copy_from_device(memory.ptr(), &mut made).unwrap();
            let mut expected = Vec::with_capacity(made.len());
            for row in 0..shape[0] {
                for column in 0..shape[1] {
                    let index = (origin[0] + row) * global[1] + origin[1] + column;
                    let value = crate::random::element(dtype, key, index);
                    let array = crate::npy::Array::from_f64(dtype, &[1], &[value]);
                    expected.extend(array.data);
                }
            }
            assert_eq!(made, expected, "{dtype:?} {shape:?} at {origin:?}");
        }
    }
}
