//! The cpu backend driven the way JIT'd code drives it (through the C-ABI
//! symbols, with descriptors built here) and through the Rust API.
//!
//! This file is the harness (C-ABI symbols, worlds, arrays and their
//! registrations, teams); the tests are split by area into the files below.

use super::*;
use crate::bounds::Registration;
use crate::error::RunError;
use crate::memref::UnrankedMemRef;
use crate::memref::tests::Descriptor;
use crate::npy::Array;
use crate::ops::KernelOp;
use hir_abi::{Binary, DType, Entry, ReduceKind, Reduction, Unary};
use std::sync::Barrier;
use std::time::Duration;

mod attention;
mod comm;
mod kernels;
mod memory;
mod programs;
mod streams;

type Buf = *const UnrankedMemRef;

type CollectiveFn = unsafe extern "C" fn(Buf, Buf, i64, i64, i64, Buf, i64) -> i64;

type TransferFn = unsafe extern "C" fn(Buf, i64, Buf, i64) -> i64;

type UnaryFn = unsafe extern "C" fn(Buf, Buf);

type BinaryFn = unsafe extern "C" fn(Buf, Buf, Buf);

/// The address the JIT would call for `entry`, as a function of type `F`.
fn symbol<F: Copy>(entry: Entry) -> F {
    let name = entry.c_name();
    let (_, address) = crate::symbols()
        .into_iter()
        .find(|(symbol, _)| *symbol == name)
        .unwrap();
    assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<*mut ()>());
    // SAFETY: `F` is the entry's C signature, as `hir_abi::Entry` documents it.
    unsafe { std::mem::transmute_copy(&address) }
}

fn world(ranks: usize, streams: usize) -> World {
    world_with(ranks, streams, Duration::from_secs(5))
}

fn world_with(ranks: usize, streams: usize, timeout: Duration) -> World {
    World::new(Config {
        timeout,
        trace: true,
        ..Config::new(ranks, streams)
    })
    .unwrap()
}

fn array(dtype: DType, shape: &[usize], values: impl Fn(usize) -> f32) -> Array {
    let n = shape.iter().product();
    Array::from_f32(dtype, shape, &(0..n).map(values).collect::<Vec<_>>())
}

fn view(array: &mut Array) -> View {
    View::contiguous(array.dtype, array.data.as_mut_ptr(), &array.shape)
}

/// Deterministic values of magnitude in `[lo, 2 lo)` and random sign: never zero.
fn noise(seed: u64, lo: f32) -> impl Fn(usize) -> f32 {
    move |e| {
        let mut h = ((seed << 32) ^ e as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        h ^= h >> 31;
        h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h ^= h >> 29;
        let magnitude = lo * (1.0 + (h >> 40) as f32 / (1u64 << 24) as f32);
        if h & 1 == 0 { magnitude } else { -magnitude }
    }
}

/// Makes the arrays buffers the rank knows, as a launcher registers its
/// arguments, so that views of them pass the entries' bounds check.
fn known<'a>(device: &'a dyn Device, arrays: &[&Array]) -> Known<'a> {
    Known::new(
        device,
        arrays
            .iter()
            .map(|array| (array.data.as_ptr(), array.data.len())),
    )
}

/// Buffers a rank knows (registered as a launcher's arguments). Dropping
/// this first waits for the rank's queued work, so that buffers declared
/// before it outlive that work even when a failed step unwinds the body: a
/// collective that ended after its rank's body gave up wrote into freed
/// memory on a 16-core host (and corrupted the heap).
pub(in crate::cpu) struct Known<'a> {
    device: &'a dyn Device,
    _registrations: Vec<Registration>,
}

impl<'a> Known<'a> {
    pub(in crate::cpu) fn new(
        device: &'a dyn Device,
        buffers: impl IntoIterator<Item = (*const u8, usize)>,
    ) -> Known<'a> {
        let allocations = device.allocations();
        let registrations = buffers
            .into_iter()
            .map(|(start, bytes)| allocations.register(start, bytes).unwrap())
            .collect();
        Known {
            device,
            _registrations: registrations,
        }
    }
}

impl Drop for Known<'_> {
    fn drop(&mut self) {
        let _ = self.device.synchronize();
    }
}

fn team_descriptor(ranks: &mut [i64]) -> Box<Descriptor> {
    Descriptor::new(ranks.as_mut_ptr().cast(), 0, &[ranks.len()], &[1])
}

fn team(ranks: &[usize]) -> Team {
    Team::new(&ranks.iter().map(|&r| r as i64).collect::<Vec<_>>(), 4).unwrap()
}

fn kernel(op: KernelOp, inputs: Vec<View>, output: View) -> Kernel {
    Kernel { op, inputs, output }
}

fn fold(kind: ReduceKind, values: &[f32]) -> f32 {
    let mut acc = values[0];
    for &v in &values[1..] {
        acc = match kind {
            ReduceKind::Sum | ReduceKind::Avg => acc + v,
            ReduceKind::Prod => acc * v,
            ReduceKind::Max => acc.max(v),
            ReduceKind::Min => acc.min(v),
        };
    }
    if kind == ReduceKind::Avg {
        acc /= values.len() as f32;
    }
    acc
}

/// `host.select %x[axis][index]` on a descriptor: the rank-reducing view.
fn select(x: &View, axis: usize, index: usize) -> View {
    let slice = x.slice(axis, index, 1);
    let (mut sizes, mut strides) = (slice.sizes, slice.strides);
    sizes.remove(axis);
    strides.remove(axis);
    View {
        sizes,
        strides,
        ..slice
    }
}
