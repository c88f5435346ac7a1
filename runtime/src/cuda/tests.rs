//! GPU tests: every scenario runs on the cpu backend and on this one from the
//! same random inputs (never zeros), and the whole of every buffer is
//! compared, so a write outside an output view is caught too. Pointwise ops,
//! copies, broadcasts, amax and data movement must match bit for bit; sums,
//! matmuls and reductions across ranks within a per-dtype relative error.
//! Without a GPU (or NCCL, or two GPUs) a test prints why and passes.

use super::{Config, CudaDevice, World, nccl_present, probe};
use crate::device::Device;
use crate::memref::View;
use crate::memref::tests::Descriptor;
use crate::ops::{CollectiveOp, Kernel, KernelOp, Team, Transfer};
use half::{bf16, f16};
use hir_abi::{Binary, Collective, DType, ReduceKind, Reduction, Transport, Unary};
use std::time::Duration;

/// A buffer of a scenario: its element type and length in elements.
#[derive(Clone, Copy)]
pub(super) struct Buffer {
    pub dtype: DType,
    pub len: usize,
}

/// How closely results must match.
#[derive(Clone, Copy, PartialEq)]
enum Match {
    Bits,
    /// Relative L2 error per dtype.
    Close,
}

/// Deterministic random values in `[-2, 2)`, rounded to `dtype`, none zero.
pub(super) fn random(seed: u64, buffer: Buffer) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut bytes = Vec::with_capacity(buffer.len * buffer.dtype.size());
    for _ in 0..buffer.len {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let unit = (state >> 40) as f32 / (1u64 << 24) as f32;
        let mut value = unit * 4.0 - 2.0;
        if value.abs() < 0.0625 {
            value += 0.25;
        }
        match buffer.dtype {
            DType::F32 => bytes.extend(value.to_le_bytes()),
            DType::BF16 => bytes.extend(bf16::from_f32(value).to_le_bytes()),
            DType::F16 => bytes.extend(f16::from_f32(value).to_le_bytes()),
            // Integers of magnitude 62 to 2000: products of two fit i32.
            DType::I32 => bytes.extend(((value * 1000.0) as i32).to_le_bytes()),
            DType::I64 => bytes.extend(((value * 1000.0) as i64).to_le_bytes()),
        }
    }
    bytes
}

pub(super) fn decode(dtype: DType, bytes: &[u8]) -> Vec<f64> {
    bytes
        .chunks(dtype.size())
        .map(|chunk| match dtype {
            DType::F32 => f32::from_le_bytes(chunk.try_into().unwrap()) as f64,
            DType::BF16 => bf16::from_le_bytes(chunk.try_into().unwrap()).to_f64(),
            DType::F16 => f16::from_le_bytes(chunk.try_into().unwrap()).to_f64(),
            DType::I32 => i32::from_le_bytes(chunk.try_into().unwrap()).into(),
            DType::I64 => i64::from_le_bytes(chunk.try_into().unwrap()) as f64,
        })
        .collect()
}

fn tolerance(dtype: DType) -> f64 {
    match dtype {
        DType::F32 => 1e-5,
        DType::BF16 => 1e-2,
        DType::F16 => 2e-3,
        DType::I32 | DType::I64 => 0.0,
    }
}

/// The `len` f32 values at device address `ptr`.
pub(super) fn read_f32(device: &CudaDevice, ptr: *mut u8, len: usize) -> Vec<f32> {
    let mut bytes = vec![0u8; len * 4];
    device.copy_from_device(ptr, &mut bytes).unwrap();
    bytes
        .chunks_exact(4)
        .map(|chunk| f32::from_le_bytes(chunk.try_into().unwrap()))
        .collect()
}

/// Writes `value(i)` for `i` in `0..len` as f32 at device address `ptr`.
pub(super) fn write_f32(
    device: &CudaDevice,
    ptr: *mut u8,
    len: usize,
    value: impl Fn(usize) -> f32,
) {
    let bytes: Vec<u8> = (0..len).flat_map(|i| value(i).to_le_bytes()).collect();
    device.copy_to_device(ptr, &bytes).unwrap();
}

/// What a scenario's program gets: its rank's buffers as base pointers.
type Program<'a> = &'a (dyn Fn(&dyn Device, &[*mut u8]) + Sync);

/// Every rank's buffers after running `program` on the cpu backend.
fn on_cpu(ranks: usize, buffers: &[Buffer], program: Program) -> Vec<Vec<Vec<u8>>> {
    crate::reference::run(ranks, |device| {
        let rank = device.rank();
        let mut data: Vec<Vec<u8>> = buffers
            .iter()
            .enumerate()
            .map(|(i, &buffer)| random(seed(rank, i), buffer))
            .collect();
        let ptrs: Vec<*mut u8> = data.iter_mut().map(|bytes| bytes.as_mut_ptr()).collect();
        program(device, &ptrs);
        device.synchronize().unwrap();
        data
    })
    .unwrap_or_else(|error| panic!("cpu backend: {error}"))
}

/// The same on the cuda backend.
fn on_cuda(world: &World, buffers: &[Buffer], program: Program) -> Vec<Vec<Vec<u8>>> {
    world
        .run(|device| {
            let rank = device.rank();
            let ptrs: Vec<*mut u8> = buffers
                .iter()
                .enumerate()
                .map(|(i, &buffer)| {
                    let bytes = random(seed(rank, i), buffer);
                    let ptr = device.alloc(1000 + i as i64, bytes.len()).unwrap().as_ptr();
                    device.copy_to_device(ptr, &bytes).unwrap();
                    ptr
                })
                .collect();
            program(device, &ptrs);
            device.synchronize().unwrap();
            ptrs.iter()
                .zip(buffers)
                .map(|(&ptr, buffer)| {
                    let mut bytes = vec![0u8; buffer.len * buffer.dtype.size()];
                    device.copy_from_device(ptr, &mut bytes).unwrap();
                    device.dealloc(ptr).unwrap();
                    bytes
                })
                .collect()
        })
        .unwrap_or_else(|error| panic!("cuda backend: {error}"))
}

fn seed(rank: usize, buffer: usize) -> u64 {
    (rank as u64 + 1) * 7919 + buffer as u64 * 104_729 + 17
}

/// Runs `program` on both backends and compares every buffer.
fn compare(name: &str, world: &World, buffers: &[Buffer], how: Match, program: Program) {
    let ranks = world.ranks();
    let want = on_cpu(ranks, buffers, program);
    let got = on_cuda(world, buffers, program);
    for rank in 0..ranks {
        for (i, buffer) in buffers.iter().enumerate() {
            let (w, g) = (&want[rank][i], &got[rank][i]);
            if how == Match::Bits {
                let first = w.iter().zip(g).position(|(a, b)| a != b);
                assert!(
                    first.is_none(),
                    "{name}: rank {rank} buffer {i} differs from byte {first:?}"
                );
                continue;
            }
            let (w, g) = (decode(buffer.dtype, w), decode(buffer.dtype, g));
            assert!(
                g.iter().all(|x| x.is_finite()),
                "{name}: rank {rank} buffer {i} has NaN or inf"
            );
            let diff: f64 = w
                .iter()
                .zip(&g)
                .map(|(a, b)| (a - b) * (a - b))
                .sum::<f64>()
                .sqrt();
            let norm: f64 = w.iter().map(|a| a * a).sum::<f64>().sqrt();
            let error = diff / norm;
            assert!(
                error <= tolerance(buffer.dtype),
                "{name}: rank {rank} buffer {i} ({:?}) relative error {error:e}",
                buffer.dtype
            );
        }
    }
    println!("{name}: {} rank(s) match the cpu backend", ranks);
}

/// A world of `ranks` GPUs, or none (saying why).
pub(super) fn world(ranks: usize, nccl: bool) -> Option<World> {
    present(ranks, nccl).then(|| World::new(Config::new(ranks, 2)).unwrap())
}

/// Whether this machine has `ranks` GPUs (and NCCL where `nccl`); if not,
/// says why.
fn present(ranks: usize, nccl: bool) -> bool {
    let reason = match probe() {
        Err(reason) => reason,
        Ok(count) if count < ranks => format!("{ranks} GPUs needed, {count} present"),
        Ok(_) if nccl && !nccl_present() => "no libnccl.so on the library path".into(),
        Ok(_) => return true,
    };
    println!("skipping: {reason}");
    false
}

fn view(dtype: DType, base: *mut u8, offset: usize, sizes: &[usize], strides: &[usize]) -> View {
    View {
        dtype,
        ptr: base.wrapping_add(offset * dtype.size()),
        sizes: sizes.to_vec(),
        strides: strides.to_vec(),
    }
}

fn dense(dtype: DType, base: *mut u8, sizes: &[usize]) -> View {
    View::contiguous(dtype, base, sizes)
}

fn run(device: &dyn Device, op: KernelOp, inputs: Vec<View>, output: View) {
    device.compute(Kernel { op, inputs, output }).unwrap();
}

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

#[test]
fn streams_order_work_through_events() {
    let Some(world) = world(1, false) else { return };
    let dtype = DType::F32;
    let len = 1 << 20;
    let buffers = [
        Buffer { dtype, len },
        Buffer { dtype, len },
        Buffer { dtype, len },
    ];
    compare(
        "stream pipeline",
        &world,
        &buffers,
        Match::Bits,
        &|device, p| {
            let [a, b, c] = [0, 1, 2].map(|i| dense(dtype, p[i], &[len]));
            let main = device.current_stream();
            for round in 0..4 {
                let stream = device.stream_from_pool(round);
                device.set_current_stream(stream).unwrap();
                device.sync_stream(main).unwrap();
                run(
                    device,
                    KernelOp::Binary(Binary::Add),
                    vec![a.clone(), b.clone()],
                    c.clone(),
                );
                run(
                    device,
                    KernelOp::Binary(Binary::Mul),
                    vec![c.clone(), a.clone()],
                    b.clone(),
                );
                device.set_current_stream(main).unwrap();
                device.sync_stream(stream).unwrap();
                run(
                    device,
                    KernelOp::Binary(Binary::Sub),
                    vec![b.clone(), c.clone()],
                    a.clone(),
                );
            }
        },
    );
}

#[test]
fn a_freed_block_is_reused_by_its_site() {
    let Some(world) = world(1, false) else { return };
    world
        .run(|device| {
            let a = device.alloc(7, 100).unwrap();
            device.dealloc(a.as_ptr()).unwrap();
            assert_eq!(device.alloc(7, 100).unwrap(), a);
            assert_ne!(device.alloc(7, 200).unwrap(), a);
            assert_eq!(a.as_ptr() as usize % 256, 0);
            assert!(device.dealloc(std::ptr::null_mut()).is_err());
        })
        .unwrap();
}

fn collective(
    op: Collective,
    kind: ReduceKind,
    root: usize,
    axis: usize,
    input: View,
    output: View,
) -> CollectiveOp {
    CollectiveOp {
        op,
        kind,
        root,
        axis,
        team: Team::new(&[0, 1], 2).unwrap(),
        backend: Transport::Nccl,
        input,
        output,
    }
}

#[test]
fn nccl_collectives_match() {
    let Some(world) = world(2, true) else { return };
    for dtype in DType::FLOATS {
        let b = |len| Buffer { dtype, len };
        let buffers = [b(4 * 6 * 8), b(8 * 6 * 8), b(4 * 6 * 8), b(8 * 3 * 8)];
        let post = |device: &dyn Device, op: CollectiveOp| {
            let request = device.collective(op).unwrap();
            device.wait(request).unwrap();
        };
        compare(
            &format!("allgather/broadcast {dtype:?}"),
            &world,
            &buffers,
            Match::Bits,
            &|device, p| {
                let input = dense(dtype, p[0], &[4, 6, 8]);
                // Along the outermost axis (in place) and along axis 1 (staged).
                post(
                    device,
                    collective(
                        Collective::Allgather,
                        ReduceKind::Sum,
                        0,
                        0,
                        input.clone(),
                        dense(dtype, p[1], &[8, 6, 8]),
                    ),
                );
                post(
                    device,
                    collective(
                        Collective::Allgather,
                        ReduceKind::Sum,
                        0,
                        1,
                        input.clone(),
                        dense(dtype, p[1], &[4, 12, 8]),
                    ),
                );
                post(
                    device,
                    collective(
                        Collective::Broadcast,
                        ReduceKind::Sum,
                        1,
                        0,
                        input,
                        dense(dtype, p[2], &[4, 6, 8]),
                    ),
                );
            },
        );
        compare(
            &format!("allreduce/reduce_scatter/reduce {dtype:?}"),
            &world,
            &buffers,
            Match::Close,
            &|device, p| {
                let input = dense(dtype, p[1], &[8, 6, 8]);
                post(
                    device,
                    collective(
                        Collective::ReduceScatter,
                        ReduceKind::Sum,
                        0,
                        0,
                        input.clone(),
                        dense(dtype, p[0], &[4, 6, 8]),
                    ),
                );
                post(
                    device,
                    collective(
                        Collective::ReduceScatter,
                        ReduceKind::Sum,
                        0,
                        1,
                        input,
                        dense(dtype, p[3], &[8, 3, 8]),
                    ),
                );
                for kind in [ReduceKind::Sum, ReduceKind::Max, ReduceKind::Avg] {
                    let slice = view(dtype, p[2], 8, &[4, 8], &[48, 1]);
                    post(
                        device,
                        collective(Collective::Allreduce, kind, 0, 0, slice.clone(), slice),
                    );
                }
                post(
                    device,
                    collective(
                        Collective::Reduce,
                        ReduceKind::Sum,
                        0,
                        0,
                        dense(dtype, p[3], &[96]),
                        dense(dtype, p[2], &[96]),
                    ),
                );
            },
        );
    }
}

#[test]
fn nccl_send_recv_in_a_group_match() {
    let Some(world) = world(2, true) else { return };
    let dtype = DType::BF16;
    let buffers = [
        Buffer {
            dtype,
            len: 4 * 3 * 64,
        },
        Buffer {
            dtype,
            len: 4 * 3 * 64,
        },
    ];
    compare(
        "coalesced send/recv",
        &world,
        &buffers,
        Match::Bits,
        &|device, p| {
            let team = Team::new(&[0, 1], 2).unwrap();
            let peer = 1 - device.rank();
            let transfer = |buffer| Transfer {
                buffer,
                peer,
                team: team.clone(),
                backend: Transport::Nccl,
            };
            // Send a contiguous block, receive into a strided slice (staged).
            device.start_coalescing().unwrap();
            device.send(transfer(dense(dtype, p[0], &[4, 64]))).unwrap();
            device
                .recv(transfer(view(dtype, p[1], 64, &[4, 64], &[192, 1])))
                .unwrap();
            let request = device.end_coalescing().unwrap();
            device.wait(request).unwrap();
        },
    );
}

#[test]
fn gather_scatter_alltoall_match() {
    let Some(world) = world(2, true) else { return };
    for dtype in [DType::F32, DType::BF16] {
        let b = |len| Buffer { dtype, len };
        let buffers = [b(4 * 6 * 8), b(8 * 6 * 8), b(4 * 6 * 8)];
        let post = |device: &dyn Device, op: CollectiveOp| {
            let request = device.collective(op).unwrap();
            device.wait(request).unwrap();
        };
        compare(
            &format!("gather/scatter/alltoall {dtype:?}"),
            &world,
            &buffers,
            Match::Bits,
            &|device, p| {
                let part = dense(dtype, p[0], &[4, 6, 8]);
                let whole = |sizes: &[usize]| dense(dtype, p[1], sizes);
                for (axis, sizes) in [(0, [8, 6, 8]), (1, [4, 12, 8])] {
                    // Gather to rank 1 (rank 0's output stays as it was),
                    // scatter it back from rank 1 into a strided slice.
                    post(
                        device,
                        collective(
                            Collective::Gather,
                            ReduceKind::Sum,
                            1,
                            axis,
                            part.clone(),
                            whole(&sizes),
                        ),
                    );
                    // Every other row of p[2] along axis 1, from a slice
                    // of the gathered buffer twice its extent along `axis`.
                    let slice = view(dtype, p[2], 8, &[4, 3, 8], &[48, 16, 1]);
                    let input = if axis == 0 {
                        view(dtype, p[1], 0, &[8, 3, 8], &[48, 8, 1])
                    } else {
                        view(dtype, p[1], 0, &[4, 6, 8], &[96, 8, 1])
                    };
                    post(
                        device,
                        collective(Collective::Scatter, ReduceKind::Sum, 1, axis, input, slice),
                    );
                    post(
                        device,
                        collective(
                            Collective::Alltoall,
                            ReduceKind::Sum,
                            0,
                            axis,
                            part.clone(),
                            dense(dtype, p[2], &[4, 6, 8]),
                        ),
                    );
                }
                // In place, along axis 2: the output aliases the input.
                post(
                    device,
                    collective(
                        Collective::Alltoall,
                        ReduceKind::Sum,
                        0,
                        2,
                        part.clone(),
                        part,
                    ),
                );
            },
        );
    }
}

/// Team `[0, .., n)` of a device's world.
fn everyone(device: &dyn Device) -> Team {
    let n = device.num_devices();
    Team::new(&(0..n as i64).collect::<Vec<_>>(), n).unwrap()
}

#[test]
fn cuda_ipc_ring_matches_and_reuses_its_shares() {
    let Some(world) = world(2, false) else { return };
    let dtype = DType::BF16;
    let (rows, cols, rounds) = (4, 64, 3);
    // What each round sends ([rounds, rows, cols]), where it lands
    // ([rows, rounds, cols]: a round's slot is a strided slice), and a
    // contiguous landing buffer.
    let buffers = [
        Buffer {
            dtype,
            len: rounds * rows * cols,
        },
        Buffer {
            dtype,
            len: rows * rounds * cols,
        },
        Buffer {
            dtype,
            len: rows * cols,
        },
    ];
    let program = |device: &dyn Device, p: &[*mut u8]| {
        let (rank, n) = (device.rank(), device.num_devices());
        let team = everyone(device);
        let (next, prev) = ((rank + 1) % n, (rank + n - 1) % n);
        for (&base, buffer) in p.iter().zip(&buffers) {
            let whole = dense(dtype, base, &[buffer.len]);
            device.share_mem_handle(whole, team.clone()).unwrap();
        }
        // Sharing again (here a view inside a shared buffer) is free.
        let first = dense(dtype, p[0], &[rows, cols]);
        device.share_mem_handle(first, team.clone()).unwrap();
        let transfer = |buffer, peer| Transfer {
            buffer,
            peer,
            team: team.clone(),
            backend: Transport::Cuda,
        };
        let main = device.current_stream();
        for round in 0..rounds {
            let source = view(dtype, p[0], round * rows * cols, &[rows, cols], &[cols, 1]);
            let slot = view(
                dtype,
                p[1],
                round * cols,
                &[rows, cols],
                &[rounds * cols, 1],
            );
            let stream = device.stream_from_pool(round as i64);
            device.set_current_stream(stream).unwrap();
            device.sync_stream(main).unwrap();
            if round == 1 {
                // In a group any order completes: the send is posted first.
                device.start_coalescing().unwrap();
                device.send(transfer(source.clone(), next)).unwrap();
                device.recv(transfer(slot.clone(), prev)).unwrap();
                let group = device.end_coalescing().unwrap();
                device.wait(group).unwrap();
            } else {
                let received = device.recv(transfer(slot.clone(), prev)).unwrap();
                let sent = device.send(transfer(source.clone(), next)).unwrap();
                device.wait(received).unwrap();
                device.wait(sent).unwrap();
            }
            // The source is free again and the slot holds the data.
            run(device, KernelOp::Unary(Unary::Neg), vec![slot], source);
            device.set_current_stream(main).unwrap();
            device.sync_stream(stream).unwrap();
        }
        // Contiguous into contiguous of another shape (the copy engine), and
        // a transposed view into a strided one of another shape (staged,
        // then the copy kernel writes the peer's memory).
        let into_dense = device
            .recv(transfer(dense(dtype, p[2], &[rows * cols]), prev))
            .unwrap();
        let strided = view(dtype, p[1], 0, &[2, 2 * cols], &[2 * rounds * cols, 1]);
        let into_strided = device.recv(transfer(strided, prev)).unwrap();
        let block = dense(dtype, p[0], &[rows, cols]);
        let transposed = view(dtype, p[0], 0, &[cols, rows], &[1, cols]);
        let sent = [
            device.send(transfer(block, next)).unwrap(),
            device.send(transfer(transposed, next)).unwrap(),
        ];
        for request in [into_dense, into_strided].into_iter().chain(sent) {
            device.wait(request).unwrap();
        }
    };
    compare("cuda ipc ring", &world, &buffers, Match::Bits, &program);
    // The same buffers again: the shares hit the cache, the counters go on.
    compare(
        "cuda ipc ring, second run",
        &world,
        &buffers,
        Match::Bits,
        &program,
    );
}

#[test]
fn a_cuda_transfer_of_an_unshared_buffer_says_so() {
    let Some(world) = world(2, false) else { return };
    let errors = world
        .run(|device| {
            let team = everyone(device);
            let peer = 1 - device.rank();
            let transfer = |ptr| Transfer {
                buffer: dense(DType::F32, ptr, &[64]),
                peer,
                team: team.clone(),
                backend: Transport::Cuda,
            };
            let shared = device.alloc(1, 256).unwrap().as_ptr();
            let other = device.alloc(2, 256).unwrap().as_ptr();
            let before = device.recv(transfer(shared)).unwrap_err().to_string();
            device
                .share_mem_handle(dense(DType::F32, shared, &[64]), team.clone())
                .unwrap();
            let after = device.send(transfer(other)).unwrap_err().to_string();
            (before, after, other as usize)
        })
        .unwrap();
    for (rank, (before, after, other)) in errors.into_iter().enumerate() {
        let peer = 1 - rank;
        assert_eq!(
            before,
            format!(
                "recv from rank {peer}: no buffer was shared with share_mem_handle on team [0, 1]"
            )
        );
        assert_eq!(
            after,
            format!(
                "send to rank {peer}: buffer (256 bytes at {other:#x}) was not shared with \
                 share_mem_handle on team [0, 1]"
            )
        );
    }
}

/// What [`reshare_after_free`] saw on a rank.
struct Reshared {
    rank: usize,
    /// Whether the new buffer took the freed one's address.
    reused: bool,
    address: usize,
    /// The error of a receive into the new buffer before it was shared.
    unshared: String,
    /// What the new buffer received once shared.
    landed: Vec<f64>,
}

const RESHARED_LEN: usize = 1 << 16;

/// Shares a launcher's buffer, frees it, makes a new one (at its address, as
/// CUDA's allocator tends to), receives into it unshared, then shared.
fn reshare_after_free(device: &CudaDevice) -> Reshared {
    let len = RESHARED_LEN;
    let team = everyone(device);
    let (rank, peer) = (device.rank(), 1 - device.rank());
    let whole = |ptr| dense(DType::F32, ptr, &[len]);
    let transfer = |ptr| Transfer {
        buffer: whole(ptr),
        peer,
        team: team.clone(),
        backend: Transport::Cuda,
    };
    let first = device.buffer(4 * len).unwrap();
    let freed_at = first.ptr();
    device
        .share_mem_handle(whole(freed_at), team.clone())
        .unwrap();
    drop(first);
    let second = device.buffer(4 * len).unwrap();
    let address = second.ptr();
    let unshared = device.recv(transfer(address)).unwrap_err().to_string();
    device
        .share_mem_handle(whole(address), team.clone())
        .unwrap();
    let source = device.alloc(1, 4 * len).unwrap().as_ptr();
    let values: Vec<u8> = (0..len)
        .flat_map(|i| ((rank * len + i) as f32 + 0.5).to_le_bytes())
        .collect();
    device.copy_to_device(source, &values).unwrap();
    device
        .share_mem_handle(whole(source), team.clone())
        .unwrap();
    let received = device.recv(transfer(address)).unwrap();
    let sent = device.send(transfer(source)).unwrap();
    device.wait(received).unwrap();
    device.wait(sent).unwrap();
    device.synchronize().unwrap();
    let mut bytes = vec![0u8; 4 * len];
    device.copy_from_device(address, &mut bytes).unwrap();
    Reshared {
        rank,
        reused: address == freed_at,
        address: address as usize,
        unshared,
        landed: decode(DType::F32, &bytes),
    }
}

fn check_reshared(seen: &Reshared) {
    let peer = 1 - seen.rank;
    let freed = if seen.reused {
        " (an allocation shared at its address was freed since)"
    } else {
        ""
    };
    assert_eq!(
        seen.unshared,
        format!(
            "recv from rank {peer}: buffer ({} bytes at {:#x}) was not shared with \
             share_mem_handle on team [0, 1]{freed}",
            4 * RESHARED_LEN,
            seen.address
        )
    );
    let expected: Vec<f64> = (0..RESHARED_LEN)
        .map(|i| (peer * RESHARED_LEN + i) as f64 + 0.5)
        .collect();
    assert!(
        seen.landed == expected,
        "rank {}'s new buffer does not hold its peer's data",
        seen.rank
    );
    println!(
        "rank {}: the new buffer reused the freed one's address: {}",
        seen.rank, seen.reused
    );
}

/// A launcher may free a shared buffer and get a new one at its address: the
/// new one moves nothing until it is shared itself, and then its transfers
/// land in it.
#[test]
fn a_buffer_where_a_shared_one_was_freed_is_shared_anew() {
    let Some(world) = world(2, false) else { return };
    let seen = world.run(reshare_after_free).unwrap();
    seen.iter().for_each(check_reshared);
}

/// The child processes' variable: the rank to run.
const RESHARED_RANK: &str = "HIR_TEST_RESHARED_RANK";

/// The same across processes, where a rank maps its peer's memory from IPC
/// handles: the mapping of the freed allocation must give way to the new
/// one's. The test runs itself as two child processes, one rank each.
#[test]
fn across_processes_a_buffer_where_a_shared_one_was_freed_is_shared_anew() {
    const NAME: &str =
        "cuda::tests::across_processes_a_buffer_where_a_shared_one_was_freed_is_shared_anew";
    if std::env::var(RESHARED_RANK).is_ok() {
        let env = crate::bootstrap::Env::from_env().unwrap().unwrap();
        let group = crate::bootstrap::ProcessGroup::join(env, Duration::from_secs(30)).unwrap();
        let world = World::join(&group, Config::new(2, 2)).unwrap();
        let seen = world.run(reshare_after_free).unwrap();
        seen.iter().for_each(check_reshared);
        drop(world);
        group.goodbye();
        group.finish();
        return;
    }
    if !present(2, false) {
        return;
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut children: Vec<_> = (0..2)
        .map(|rank| {
            std::process::Command::new(std::env::current_exe().unwrap())
                .args([NAME, "--exact", "--nocapture", "--test-threads=1"])
                .env(RESHARED_RANK, "1")
                .env("RANK", rank.to_string())
                .env("WORLD_SIZE", "2")
                .env("MASTER_PORT", port.to_string())
                .spawn()
                .unwrap()
        })
        .collect();
    let deadline = std::time::Instant::now() + Duration::from_secs(90);
    let mut codes = vec![None; 2];
    while codes.iter().any(Option::is_none) && std::time::Instant::now() < deadline {
        for (child, code) in children.iter_mut().zip(&mut codes) {
            if code.is_none() {
                *code = child.try_wait().unwrap();
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    for (rank, (child, code)) in children.iter_mut().zip(codes).enumerate() {
        if code.is_none() {
            let _ = child.kill();
        }
        assert!(
            code.is_some_and(|code| code.success()),
            "rank {rank}'s process: {code:?}"
        );
    }
}

/// A receive whose sender never sends leaves the receiver's stream waiting on
/// its flag: the run ends with an error naming the stream after the timeout,
/// and dropping the world does not hang.
#[test]
fn a_receive_without_its_send_times_out_instead_of_hanging() {
    let Some(probe_world) = world(2, false) else {
        return;
    };
    drop(probe_world);
    let world = World::new(Config {
        timeout: std::time::Duration::from_secs(2),
        ..Config::new(2, 2)
    })
    .unwrap();
    let bytes = 256;
    let result = world.run(|device| {
        let team = Team::new(&[0, 1], 2).unwrap();
        let base = device.alloc(0, bytes).unwrap().as_ptr();
        let buffer = dense(DType::F32, base, &[bytes / 4]);
        device
            .share_mem_handle(buffer.clone(), team.clone())
            .unwrap();
        if device.rank() == 0 {
            let transfer = Transfer {
                buffer,
                peer: 1,
                team,
                backend: Transport::Cuda,
            };
            let request = device.recv(transfer).unwrap();
            device.wait(request).unwrap();
        }
    });
    let error = result.unwrap_err().to_string();
    println!("stuck receive: {error}");
    assert!(
        error.contains("rank 0") && error.contains("for stream 0 to finish"),
        "{error}"
    );
    drop(world);
}

/// Rank 0's error after `program` ran on one GPU through the C ABI:
/// `program` gets the device and a 64-byte buffer from `hir_rt_alloc` (a
/// [4, 4] f32 `g`) and makes one bad call. The next allocation, filled with
/// a pattern first, must be untouched.
fn overrun(program: &(dyn Fn(&CudaDevice, *mut u8) + Sync)) -> Option<String> {
    let world = world(1, false)?;
    let pattern: Vec<u8> = (0..64u8).map(|byte| byte ^ 0x5a).collect();
    let seen = std::sync::Mutex::new(Vec::new());
    let error = world
        .run(|device| {
            let g = crate::ffi::hir_rt_alloc(0, 64).cast::<u8>();
            let neighbour = crate::ffi::hir_rt_alloc(1, 64).cast::<u8>();
            device.copy_to_device(neighbour, &pattern).unwrap();
            program(device, g);
            assert!(device.failed());
            device.synchronize().unwrap();
            let mut bytes = vec![0u8; 64];
            device.copy_from_device(neighbour, &mut bytes).unwrap();
            *crate::lock(&seen) = bytes;
        })
        .unwrap_err();
    assert_eq!(*crate::lock(&seen), pattern, "the neighbour was written");
    Some(error.to_string())
}

#[test]
fn an_out_of_range_select_in_a_loop_is_an_error_not_a_gpu_fault() {
    // `host.select %g[0][%i]` for i in 0..=4, each row negated from a
    // launcher's buffer: row 4 is past g's end and fails before a kernel is
    // launched.
    let Some(error) = overrun(&|device, g| {
        let input = device.buffer(16).unwrap();
        device.copy_to_device(input.ptr(), &[0u8; 16]).unwrap();
        let input = Descriptor::new(input.ptr(), 0, &[4], &[1]);
        for i in 0..=4 {
            let row = Descriptor::new(g, 4 * i, &[4], &[1]);
            unsafe { crate::ffi::_mlir_ciface_hir_rt_neg_f32(input.ptr(), row.ptr()) };
        }
    }) else {
        return;
    };
    assert_eq!(
        error,
        "rank 0: hir_rt_neg_f32: operand #2 view [offset 64 B, 4 x 4 B, strides 1] \
         overruns its allocation of 64 B"
    );
}

#[test]
fn a_collective_into_a_view_past_its_buffer_is_refused_before_nccl() {
    let Some(error) = overrun(&|_, g| {
        let mut team = [0i64];
        let team = Descriptor::new(team.as_mut_ptr().cast(), 0, &[1], &[1]);
        let (input, past) = (
            Descriptor::new(g, 0, &[16], &[1]),
            Descriptor::new(g, 1, &[16], &[1]),
        );
        let allreduce = crate::ffi::_mlir_ciface_hir_rt_allreduce_f32;
        unsafe { allreduce(input.ptr(), past.ptr(), 0, 0, 0, team.ptr(), 0) };
    }) else {
        return;
    };
    assert_eq!(
        error,
        "rank 0: hir_rt_allreduce_f32: operand #2 view [offset 4 B, 16 x 4 B, strides 1] \
         overruns its allocation of 64 B"
    );
}

#[test]
fn views_of_memory_the_rank_does_not_know_are_refused_on_the_gpu() {
    // A host pointer, and a launcher's buffer after it was freed, would be
    // illegal addresses for a kernel: both are refused first.
    let mut host = [0f32; 16];
    let host = host.as_mut_ptr() as usize;
    for freed in [false, true] {
        let Some(error) = overrun(&|device, g| {
            let ptr = if freed {
                device.buffer(64).unwrap().ptr()
            } else {
                host as *mut u8
            };
            let (unknown, g) = (
                Descriptor::new(ptr, 0, &[16], &[1]),
                Descriptor::new(g, 0, &[16], &[1]),
            );
            unsafe { crate::ffi::_mlir_ciface_hir_rt_copy_f32(unknown.ptr(), g.ptr()) };
        }) else {
            return;
        };
        assert!(
            error.starts_with(
                "rank 0: hir_rt_copy_f32: operand #1 view [16 x 4 B, strides 1] points into 0x"
            ),
            "{error}"
        );
        assert!(error.contains("which is no buffer of this rank"), "{error}");
    }
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
        for (l, r, o) in super::compute::gemms(&kernel) {
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

/// A `host.alloc` in a loop over the pool: each iteration's temporary is a
/// buffer of its own while iterations overlap (a shared one would be
/// overwritten by the next iteration's abs on another stream before this
/// one's neg read it), freed stream-ordered; bits as on the cpu backend.
#[test]
fn a_loop_temporary_is_fresh_per_iteration_on_both_backends() {
    let Some(world) = world(1, false) else { return };
    let dtype = DType::F32;
    let (rows, len) = (8, 1 << 20);
    let buffers = [
        Buffer {
            dtype,
            len: rows * len,
        },
        Buffer {
            dtype,
            len: rows * len,
        },
    ];
    compare(
        "per-iteration temporaries",
        &world,
        &buffers,
        Match::Bits,
        &|device, p| {
            let main = device.current_stream();
            // The fork, then iterations that overlap on the pool.
            for i in 0..rows {
                device
                    .set_current_stream(device.stream_from_pool(i as i64))
                    .unwrap();
                device.sync_stream(main).unwrap();
            }
            for i in 0..rows {
                let stream = device.stream_from_pool(i as i64);
                device.set_current_stream(stream).unwrap();
                let temp = device.alloc(50, 4 * len).unwrap().as_ptr();
                let temp = dense(dtype, temp, &[len]);
                let input = view(dtype, p[0], i * len, &[len], &[1]);
                let output = view(dtype, p[1], i * len, &[len], &[1]);
                // Exact ops: the backends' `exp` differ in the last bit.
                run(
                    device,
                    KernelOp::Unary(Unary::Abs),
                    vec![input],
                    temp.clone(),
                );
                run(
                    device,
                    KernelOp::Unary(Unary::Neg),
                    vec![temp.clone()],
                    output,
                );
                device.dealloc(temp.ptr).unwrap();
                device.set_current_stream(main).unwrap();
                device.sync_stream(stream).unwrap();
            }
        },
    );
}

/// The loop above makes one block per pool stream, not one per iteration
/// (no `cuMemAlloc` in the steady state), and each stream reuses its own.
#[test]
fn a_pool_loop_makes_one_block_per_stream() {
    let Some(world) = world(1, false) else { return };
    world
        .run(|device| {
            let pointers: Vec<usize> = (0..6)
                .map(|i| {
                    device
                        .set_current_stream(device.stream_from_pool(i))
                        .unwrap();
                    let ptr = device.alloc(3, 4096).unwrap().as_ptr();
                    device.dealloc(ptr).unwrap();
                    ptr as usize
                })
                .collect();
            device.set_current_stream(0).unwrap();
            assert_ne!(pointers[0], pointers[1]);
            for i in 2..6 {
                assert_eq!(pointers[i], pointers[i - 2]);
            }
        })
        .unwrap();
}

/// With `Config::poison`, a reused block is NaN again when handed out.
#[test]
fn a_reused_block_is_poisoned_again_on_the_gpu() {
    if !present(1, false) {
        return;
    }
    let world = World::new(Config {
        poison: true,
        ..Config::new(1, 2)
    })
    .unwrap();
    world
        .run(|device| {
            let ptr = device.alloc(1, 64).unwrap().as_ptr();
            device.copy_to_device(ptr, &[0u8; 64]).unwrap();
            device.dealloc(ptr).unwrap();
            assert_eq!(device.alloc(1, 64).unwrap().as_ptr(), ptr);
            let mut bytes = [0u8; 64];
            device.copy_from_device(ptr, &mut bytes).unwrap();
            assert!(bytes.iter().all(|&b| b == 0xff), "{bytes:?}");
        })
        .unwrap();
}

/// Requests carried across a loop (an `scf.for` iter_arg): each iteration on
/// its pool stream posts an allreduce of its row and waits for the previous
/// iteration's; the last is waited after the loop; two more are waited in
/// the reverse of their posting order. Bits as on the cpu backend.
#[test]
fn requests_are_waited_later_and_in_any_order_on_both_backends() {
    let Some(world) = world(2, true) else { return };
    let dtype = DType::F32;
    let (rows, len) = (4, 1 << 16);
    let buffers = [
        Buffer {
            dtype,
            len: rows * len,
        },
        Buffer {
            dtype,
            len: rows * len,
        },
    ];
    compare(
        "carried requests",
        &world,
        &buffers,
        Match::Close,
        &|device, p| {
            let row = |buffer: usize, i: usize| view(dtype, p[buffer], i * len, &[len], &[1]);
            let allreduce = |input, output| {
                let op = collective(Collective::Allreduce, ReduceKind::Sum, 0, 0, input, output);
                device.collective(op).unwrap()
            };
            let mut previous = allreduce(row(0, 0), row(1, 0));
            for i in 1..rows {
                let next = allreduce(row(0, i), row(1, i));
                device.wait(previous).unwrap();
                previous = next;
            }
            device.wait(previous).unwrap();
            let first = allreduce(row(1, 0), row(0, 0));
            let second = allreduce(row(1, 1), row(0, 1));
            device.wait(second).unwrap();
            device.wait(first).unwrap();
        },
    );
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

/// An allreduce of each integer type and reduce kind (but avg) through
/// NCCL's ncclInt32/ncclInt64 gives the cpu backend's bits.
#[test]
fn integer_allreduce_matches_the_cpu_backend() {
    let Some(world) = world(2, true) else { return };
    for dtype in DType::INTS {
        let buffers = [Buffer { dtype, len: 48 }, Buffer { dtype, len: 48 }];
        for kind in [
            ReduceKind::Sum,
            ReduceKind::Prod,
            ReduceKind::Max,
            ReduceKind::Min,
        ] {
            compare(
                &format!("allreduce {kind:?} {dtype:?}"),
                &world,
                &buffers,
                Match::Bits,
                &|device, p| {
                    let op = collective(
                        Collective::Allreduce,
                        kind,
                        0,
                        0,
                        dense(dtype, p[0], &[6, 8]),
                        dense(dtype, p[1], &[6, 8]),
                    );
                    let request = device.collective(op).unwrap();
                    device.wait(request).unwrap();
                },
            );
        }
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
