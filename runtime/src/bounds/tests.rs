//! The bounds check: the table itself, and views that overrun their buffer
//! through the C ABI on the cpu backend (the cuda backend's are in
//! `cuda/tests.rs`): each is an error naming the entry and the operand, the
//! rank fails cleanly, and no byte outside or inside the view is written.

use super::*;
use crate::cpu::{Config, World};
use crate::ffi::{
    _mlir_ciface_hir_rt_neg_f32, _mlir_ciface_hir_rt_send_f32, hir_rt_alloc, hir_rt_rank,
};
use crate::memref::View;
use crate::memref::tests::Descriptor;
use hir_abi::DType;

fn operand(allocated: usize, ptr: usize, sizes: &[usize], strides: &[usize]) -> Operand {
    Operand {
        view: View {
            dtype: DType::F32,
            ptr: ptr as *mut u8,
            sizes: crate::memref::Extents::from_slice(sizes),
            strides: crate::memref::Extents::from_slice(strides),
        },
        allocated,
    }
}

#[test]
fn a_view_must_lie_inside_the_buffer_it_names() {
    let table = Arc::new(Allocations::default());
    let _a = table.register(0x1000 as *const u8, 256).unwrap();
    let _b = table.register(0x1100 as *const u8, 256).unwrap();
    let check = |operand: &Operand| table.checker().check(1, operand);
    // The whole of a, a strided view of it, a broadcast, an empty view.
    check(&operand(0x1000, 0x1000, &[64], &[1])).unwrap();
    check(&operand(0x1000, 0x1000, &[4, 8], &[16, 2])).unwrap();
    check(&operand(0x1000, 0x10fc, &[1 << 40], &[0])).unwrap();
    check(&operand(0x1000, 0x9999_0000, &[0, 4], &[1, 1])).unwrap();
    // One element past a ends in b: still an overrun of a.
    let error = check(&operand(0x1000, 0x1004, &[64], &[1])).unwrap_err();
    assert_eq!(
        error.to_string(),
        "operand #1 view [offset 4 B, 64 x 4 B, strides 1] overruns its allocation of 256 B"
    );
    let error = check(&operand(0x1100, 0x10f0, &[4], &[1])).unwrap_err();
    assert!(error.to_string().contains("starts before"), "{error}");
    // An allocated pointer in no buffer, or just past one.
    for base in [0x800, 0x1200] {
        let error = check(&operand(base, base, &[1], &[1])).unwrap_err();
        assert!(
            error.to_string().contains("is no buffer of this rank"),
            "{error}"
        );
    }
}

#[test]
fn registrations_end_when_dropped_and_stale_records_are_replaced() {
    let table = Arc::new(Allocations::default());
    let old = table.register(0x1000 as *const u8, 256).unwrap();
    // Memory handed out again over the old record replaces it ...
    let new = table.register(0x1080 as *const u8, 64).unwrap();
    assert!(
        table
            .checker()
            .check(1, &operand(0x1000, 0x1000, &[1], &[1]))
            .is_err()
    );
    // ... and dropping the old registration leaves the new one.
    drop(old);
    let inside = operand(0x1080, 0x1080, &[16], &[1]);
    table.checker().check(1, &inside).unwrap();
    drop(new);
    assert!(table.checker().check(1, &inside).is_err());
    assert!(table.register(usize::MAX as *const u8, 2).is_err());
}

/// `[f32; 32]` where only the first 16 are the rank's buffer: the other 16
/// are its neighbour, which no entry may touch.
const BUFFER: usize = 16;

#[test]
fn an_overrunning_view_fails_the_rank_and_writes_nothing() {
    let world = World::new(Config::new(1, 1)).unwrap();
    let mut memory: Vec<f32> = (0..2 * BUFFER).map(|e| e as f32 + 1.0).collect();
    let before = memory.clone();
    let address = memory.as_mut_ptr() as usize;
    let error = world
        .run(|device| {
            let base = address as *mut u8;
            let _known = device
                .allocations()
                .register(base, BUFFER * size_of::<f32>())
                .unwrap();
            let input = Descriptor::new(base, 0, &[8], &[1]);
            // Elements 12..20: the last 4 are the neighbour's.
            let output = Descriptor::new(base, 12, &[8], &[1]);
            unsafe { _mlir_ciface_hir_rt_neg_f32(input.ptr(), output.ptr()) };
            assert!(device.failed());
            // The rank's later work is skipped; queries still answer.
            let inside = Descriptor::new(base, 0, &[8], &[1]);
            unsafe { _mlir_ciface_hir_rt_neg_f32(input.ptr(), inside.ptr()) };
            assert_eq!(hir_rt_rank(), 0);
        })
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "rank 0: hir_rt_neg_f32: operand #2 view [offset 48 B, 8 x 4 B, strides 1] \
         overruns its allocation of 64 B"
    );
    assert_eq!(memory, before, "nothing was written");
}

#[test]
fn an_out_of_range_select_in_a_loop_stops_at_the_first_bad_index() {
    // `host.select %g[0][%i]` for i in 0..=4 of a [4, 4] buffer from
    // hir_rt_alloc: the descriptor keeps g's allocated pointer and moves its
    // offset. Index 4 is past the end: the call fails before it writes, and
    // the next allocation is untouched.
    let world = World::new(Config::new(1, 1)).unwrap();
    let mut source = vec![1f32; 4];
    let address = source.as_mut_ptr() as usize;
    let neighbour = std::sync::Mutex::new(Vec::new());
    let error = world
        .run(|device| {
            let source_ptr = address as *mut u8;
            let _known = device.allocations().register(source_ptr, 16).unwrap();
            let g = hir_rt_alloc(0, 64).cast::<u8>();
            let next = hir_rt_alloc(1, 64).cast::<f32>();
            let input = Descriptor::new(source_ptr, 0, &[4], &[1]);
            for i in 0..=4 {
                let row = Descriptor::new(g, 4 * i, &[4], &[1]);
                unsafe { _mlir_ciface_hir_rt_neg_f32(input.ptr(), row.ptr()) };
            }
            device.synchronize().unwrap();
            // SAFETY: 16 f32 from hir_rt_alloc, all work done.
            *crate::lock(&neighbour) = unsafe { std::slice::from_raw_parts(next, 16) }.to_vec();
        })
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "rank 0: hir_rt_neg_f32: operand #2 view [offset 64 B, 4 x 4 B, strides 1] \
         overruns its allocation of 64 B"
    );
    assert_eq!(*crate::lock(&neighbour), [0.0; 16]);
}

#[test]
fn a_transfer_of_memory_the_rank_does_not_know_is_refused() {
    let world = World::new(Config::new(2, 1)).unwrap();
    let error = world
        .run(|_| {
            let mut data = [0f32; 4];
            let buffer = Descriptor::new(data.as_mut_ptr().cast(), 0, &[4], &[1]);
            let mut ranks = [0i64, 1];
            let team = Descriptor::new(ranks.as_mut_ptr().cast(), 0, &[2], &[1]);
            unsafe { _mlir_ciface_hir_rt_send_f32(buffer.ptr(), 1, team.ptr(), 0) };
        })
        .unwrap_err();
    let first = error.first();
    assert_eq!(first.op, "hir_rt_send_f32");
    assert!(
        first
            .error
            .to_string()
            .contains("is no buffer of this rank"),
        "{error}"
    );
}
