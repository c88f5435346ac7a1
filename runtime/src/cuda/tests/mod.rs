//! GPU tests: every scenario runs on the cpu backend and on this one from the
//! same random inputs (never zeros), and the whole of every buffer is
//! compared, so a write outside an output view is caught too. Pointwise ops,
//! copies, broadcasts, amax and data movement must match bit for bit; sums,
//! matmuls and reductions across ranks within a per-dtype relative error.
//! Without a GPU (or NCCL, or two GPUs) a test prints why and passes.
//!
//! This file is the harness (random inputs, running a scenario on both
//! backends, comparing); the tests are split by area into the files below.

use super::{Config, CudaDevice, World, nccl_present, probe};
use crate::device::Device;
use crate::memref::View;
use crate::memref::tests::Descriptor;
use crate::ops::{CollectiveOp, Kernel, KernelOp, Team, Transfer};
use half::{bf16, f16};
use hir_abi::{Binary, Collective, DType, ReduceKind, Reduction, Transport, Unary};
use std::ops::Deref;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

mod attention;
mod bounds;
mod epilogue;
mod ipc;
mod kernels;
mod matmul;
mod nccl;
mod streams;

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
    /// Relative L2 error at most this, whatever the dtype.
    Relative(f64),
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
            let limit = match how {
                Match::Relative(limit) => limit,
                _ => tolerance(buffer.dtype),
            };
            assert!(
                error <= limit,
                "{name}: rank {rank} buffer {i} ({:?}) relative error {error:e}",
                buffer.dtype
            );
        }
    }
    println!("{name}: {} rank(s) match the cpu backend", ranks);
}

/// The GPU tests' turn. Their worlds share the process's primary context,
/// where one test's work stops another's: a capture (global mode) makes
/// every other thread's allocation fail, and a stream held on a flag holds
/// the module loads queued behind it. Run together (cargo's default
/// threads) they failed and even computed wrong results; one at a time
/// they pass.
static GPU: Mutex<()> = Mutex::new(());

/// Waits for the GPU tests' turn (a failed test's turn is taken over).
pub(super) fn serial() -> MutexGuard<'static, ()> {
    GPU.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A test's world, holding the GPU tests' turn until it drops.
pub(super) struct TestWorld {
    world: World,
    _turn: MutexGuard<'static, ()>,
}

impl Deref for TestWorld {
    type Target = World;

    fn deref(&self) -> &World {
        &self.world
    }
}

/// A world of `ranks` GPUs, or none (saying why).
pub(super) fn world(ranks: usize, nccl: bool) -> Option<TestWorld> {
    present(ranks, nccl).then(|| {
        let turn = serial();
        TestWorld {
            world: World::new(Config::new(ranks, 2)).unwrap(),
            _turn: turn,
        }
    })
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
        sizes: crate::memref::Extents::from_slice(sizes),
        strides: crate::memref::Extents::from_slice(strides),
    }
}

fn dense(dtype: DType, base: *mut u8, sizes: &[usize]) -> View {
    View::contiguous(dtype, base, sizes)
}

fn run(device: &dyn Device, op: KernelOp, inputs: Vec<View>, output: View) {
    device.compute(Kernel { op, inputs, output }).unwrap();
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
