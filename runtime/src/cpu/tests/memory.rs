//! The allocator: blocks cached by site, loop temporaries fresh per
//! iteration, a block reused on another stream waiting for its users, and
//! poisoning on reuse.

use super::*;

#[test]
fn alloc_caches_by_site_and_barrier_meets() {
    let world = world(2, 1);
    let pointers = world
        .run(|device| {
            let a = crate::ffi::hir_rt_alloc(1, 1000);
            crate::ffi::hir_rt_dealloc(a);
            let again = crate::ffi::hir_rt_alloc(1, 1000);
            let mut ranks = [1i64, 0];
            let team = team_descriptor(&mut ranks);
            unsafe { crate::ffi::_mlir_ciface_hir_rt_barrier(team.ptr(), 0) };
            assert!(!device.failed());
            (a as usize, again as usize)
        })
        .unwrap();
    for (a, again) in pointers {
        assert_eq!(a, again);
        assert_eq!(a % 64, 0);
    }
}

/// A `host.alloc` in a loop over a pool of streams: every iteration that
/// overlaps another gets a buffer of its own, and an iteration reuses the
/// block its stream freed before (one block per stream, not per
/// iteration). Each iteration copies its input through the temporary into
/// its output slice; with the race detector fatal, a shared temporary would
/// fail the run.
#[test]
fn a_loop_temporary_is_fresh_per_iteration_and_reused_per_stream() {
    let world = world(1, 2);
    let (pointers, out) = world
        .run(|device| {
            let mut input = array(DType::F32, &[6, 4], |i| i as f32);
            let mut out = array(DType::F32, &[6, 4], |_| 0.0);
            let _known = known(device, &[&input, &out]);
            let mut pointers = Vec::new();
            for i in 0..6 {
                let stream = device.stream_from_pool(i as i64);
                device.set_current_stream(stream).unwrap();
                let temp = device.alloc(9, 16).unwrap().as_ptr();
                let temp = View::contiguous(DType::F32, temp, &[4]);
                let (x, y) = (
                    view(&mut input).slice(0, i, 1),
                    view(&mut out).slice(0, i, 1),
                );
                let (x, y) = (reshape(x, &[4]), reshape(y, &[4]));
                device
                    .compute(kernel(KernelOp::Copy, vec![x], temp.clone()))
                    .unwrap();
                device
                    .compute(kernel(KernelOp::Copy, vec![temp.clone()], y))
                    .unwrap();
                device.dealloc(temp.ptr).unwrap();
                device.set_current_stream(0).unwrap();
                device.sync_stream(stream).unwrap();
                pointers.push(temp.ptr as usize);
            }
            device.synchronize().unwrap();
            assert!(!device.failed());
            (pointers, out.to_f32())
        })
        .unwrap()
        .remove(0);
    assert_ne!(pointers[0], pointers[1]);
    for i in 2..6 {
        assert_eq!(
            pointers[i],
            pointers[i - 2],
            "iteration {i} reuses its stream's block"
        );
    }
    assert_eq!(out, (0..24).map(|i| i as f32).collect::<Vec<_>>());
}

/// `view` (contiguous, `numel` elements) seen with `sizes`.
fn reshape(view: View, sizes: &[usize]) -> View {
    View::contiguous(view.dtype, view.ptr, sizes)
}

/// Once a site has a block per stream, a stream that freed none gets the
/// block freed longest ago on another stream, and waits for its last users
/// there: no `sync_stream` orders the two streams here, so without that
/// wait the race detector (fatal) would fail the write on stream 0.
#[test]
fn a_block_reused_on_another_stream_waits_for_its_last_users() {
    let world = world(1, 1);
    world
        .run(|device| {
            let mut input = array(DType::F32, &[4], |i| i as f32);
            let _known = known(device, &[&input]);
            device.set_current_stream(1).unwrap();
            let a = device.alloc(1, 16).unwrap().as_ptr();
            let b = device.alloc(1, 16).unwrap().as_ptr();
            let a_view = View::contiguous(DType::F32, a, &[4]);
            device
                .compute(kernel(
                    KernelOp::Copy,
                    vec![view(&mut input)],
                    a_view.clone(),
                ))
                .unwrap();
            device.dealloc(a).unwrap();
            device.dealloc(b).unwrap();
            device.set_current_stream(0).unwrap();
            let c = device.alloc(1, 16).unwrap().as_ptr();
            assert_eq!(c, a, "the block freed longest ago");
            device
                .compute(kernel(KernelOp::Copy, vec![view(&mut input)], a_view))
                .unwrap();
            device.synchronize().unwrap();
            assert!(!device.failed());
        })
        .unwrap();
}

/// With `Config::poison`, a reused block is NaN again when handed out, as a
/// new one is: a program that reads what it never wrote computes NaN.
#[test]
fn a_reused_block_is_poisoned_again() {
    let world = World::new(Config {
        poison: true,
        ..Config::new(1, 1)
    })
    .unwrap();
    world
        .run(|device| {
            let mut input = array(DType::F32, &[4], |_| 1.0);
            let mut out = array(DType::F32, &[4], |_| 0.0);
            let _known = known(device, &[&input, &out]);
            let a = device.alloc(1, 16).unwrap().as_ptr();
            let a_view = View::contiguous(DType::F32, a, &[4]);
            device
                .compute(kernel(
                    KernelOp::Copy,
                    vec![view(&mut input)],
                    a_view.clone(),
                ))
                .unwrap();
            device.dealloc(a).unwrap();
            assert_eq!(device.alloc(1, 16).unwrap().as_ptr(), a);
            device
                .compute(kernel(KernelOp::Copy, vec![a_view], view(&mut out)))
                .unwrap();
            device.synchronize().unwrap();
            assert!(!device.failed());
            assert!(
                out.to_f32().iter().all(|x| x.is_nan()),
                "{:?}",
                out.to_f32()
            );
        })
        .unwrap();
}
