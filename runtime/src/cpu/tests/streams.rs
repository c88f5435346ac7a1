//! Streams and races: order within a stream and overlap across them,
//! `sync_stream` and `wait` ordering work (and the race reported without
//! them), and requests waited late or out of order.

use super::*;

#[test]
fn one_stream_runs_in_order_and_streams_run_concurrently() {
    let world = world(2, 2);
    let gate = Barrier::new(2);
    let results = world
        .run(|device| {
            let rank = device.rank();
            let mut total = array(DType::F32, &[16], |_| 0.0);
            let mut ones = array(DType::F32, &[16], |_| 1.0);
            let mut gathered = array(DType::F32, &[2], |_| 0.0);
            let mut mine = array(DType::F32, &[1], |_| rank as f32);
            let (total, ones) = (view(&mut total), view(&mut ones));
            if rank == 0 {
                // An allgather on stream 1 cannot complete before rank 1 joins ...
                device.set_current_stream(1).unwrap();
                let op = CollectiveOp {
                    op: Collective::Allgather,
                    kind: ReduceKind::Sum,
                    root: 0,
                    axis: 0,
                    team: team(&[0, 1]),
                    backend: Transport::Nccl,
                    input: view(&mut mine),
                    output: view(&mut gathered),
                };
                let request = device.collective(op).unwrap();
                device.wait(request).unwrap();
                // ... while 50 dependent adds on stream 2 run in order.
                device.set_current_stream(2).unwrap();
                for _ in 0..50 {
                    let add = KernelOp::Binary(Binary::Add);
                    device
                        .compute(kernel(
                            add,
                            vec![total.clone(), ones.clone()],
                            total.clone(),
                        ))
                        .unwrap();
                }
                let host = lock(&devices_of(&world)[0].host);
                host.queues[2].wait_for(50);
                drop(host);
                gate.wait();
            } else {
                gate.wait();
                let op = CollectiveOp {
                    op: Collective::Allgather,
                    kind: ReduceKind::Sum,
                    root: 0,
                    axis: 0,
                    team: team(&[0, 1]),
                    backend: Transport::Nccl,
                    input: view(&mut mine),
                    output: view(&mut gathered),
                };
                let request = device.collective(op).unwrap();
                device.wait(request).unwrap();
            }
            device.synchronize().unwrap();
            (
                crate::cpu::elements::load(&total).unwrap(),
                gathered.to_f32(),
            )
        })
        .unwrap();
    assert_eq!(results[0].0, vec![50.0; 16]);
    assert_eq!(results[0].1, [0.0, 1.0]);
    assert_eq!(results[1].1, [0.0, 1.0]);
}

fn devices_of(world: &World) -> &[Arc<CpuDevice>] {
    &world.devices
}

/// Stream 1 writes `b` from `a`; stream 2 then reads `b`, after a
/// `sync_stream` or without one.
fn producer_consumer(with_sync: bool) -> Result<Vec<f32>, RunError> {
    let world = world(1, 2);
    world
        .run(|device| {
            let mut a = array(DType::F32, &[64], |e| e as f32);
            let mut b = array(DType::F32, &[64], |_| 0.0);
            let mut c = array(DType::F32, &[64], |_| 0.0);
            let _known = known(device, &[&a, &b, &c]);
            let (a, b, c_view) = (view(&mut a), view(&mut b), view(&mut c));
            let neg: UnaryFn = symbol(Entry::Unary(Unary::Neg, DType::F32));
            let (a, b, c_desc) = (
                Descriptor::of(&a),
                Descriptor::of(&b),
                Descriptor::of(&c_view),
            );
            unsafe {
                crate::ffi::hir_rt_set_current_stream(1);
                neg(a.ptr(), b.ptr());
                crate::ffi::hir_rt_set_current_stream(2);
                if with_sync {
                    crate::ffi::hir_rt_sync_stream(1);
                }
                neg(b.ptr(), c_desc.ptr());
            }
            device.synchronize().unwrap();
            c.to_f32()
        })
        .map(|mut values| values.remove(0))
}

#[test]
fn sync_stream_orders_streams_and_a_missing_one_is_a_race() {
    let values = producer_consumer(true).unwrap();
    assert_eq!(values, (0..64).map(|e| e as f32).collect::<Vec<_>>());
    let error = producer_consumer(false).unwrap_err();
    let message = error.to_string();
    assert!(
        message.starts_with(
            "rank 0: hir_rt_neg_f32: data race: hir_rt_neg_f32 on stream 2 reads 256 bytes"
        ),
        "{message}"
    );
    assert!(
        message.contains("while hir_rt_neg_f32 on stream 1 may still write them"),
        "{message}"
    );
}

/// An allgather then a matmul reading its output on the same stream, with or
/// without the `comm.wait` between them.
fn allgather_then_matmul(with_wait: bool) -> Result<Vec<Vec<f32>>, RunError> {
    let world = world(2, 1);
    world.run(|device| {
        let rank = device.rank();
        let mut a = array(DType::BF16, &[1, 2, 3], |e| (rank * 6 + e) as f32);
        let mut gathered = array(DType::BF16, &[2, 2, 3], |_| 0.0);
        let mut w = array(DType::BF16, &[3, 2], |e| e as f32);
        let mut c = array(DType::BF16, &[2, 2, 2], |_| 0.0);
        let op = CollectiveOp {
            op: Collective::Allgather,
            kind: ReduceKind::Sum,
            root: 0,
            axis: 0,
            team: team(&[0, 1]),
            backend: Transport::Nccl,
            input: view(&mut a),
            output: view(&mut gathered),
        };
        let request = device.collective(op).unwrap();
        if with_wait {
            device.wait(request).unwrap();
        }
        let matmul = kernel(
            KernelOp::Matmul,
            vec![view(&mut gathered), view(&mut w)],
            view(&mut c),
        );
        if let Err(error) = device.compute(matmul) {
            device.fail("hir_rt_matmul_bf16", error);
        }
        device.synchronize().unwrap();
        c.to_f32()
    })
}

#[test]
fn comm_wait_orders_a_collective_and_a_missing_one_is_a_race() {
    let products = allgather_then_matmul(true).unwrap();
    // Rows of the gathered [4, 3] matrix times [[0, 1], [2, 3], [4, 5]].
    let want = [10.0, 13.0, 28.0, 40.0, 46.0, 67.0, 64.0, 94.0];
    assert!(products.iter().all(|p| p == &want), "{products:?}");
    let error = allgather_then_matmul(false).unwrap_err();
    let message = error.first().to_string();
    assert!(
        message.contains("hir_rt_matmul_bf16 on stream 0 reads 24 bytes")
            && message.contains("while hir_rt_allgather_bf16 on comm [0, 1] may still write them"),
        "{message}"
    );
}

#[test]
fn disjoint_slices_on_concurrent_streams_do_not_race() {
    // Each pool stream negates its own slice along the middle axis of a
    // [4, 2, 8] buffer: interleaved memory, no overlap.
    let world = world(1, 2);
    let values = world
        .run(|device| {
            let mut x = array(DType::F16, &[4, 2, 8], |e| e as f32);
            let full = view(&mut x);
            let main = device.current_stream();
            for i in 0..2 {
                device
                    .set_current_stream(device.stream_from_pool(i))
                    .unwrap();
                device.sync_stream(main).unwrap();
                let slice = View {
                    ptr: full.ptr.wrapping_add(i as usize * 8 * 2),
                    sizes: smallvec::smallvec![4, 8],
                    strides: smallvec::smallvec![16, 1],
                    ..full.clone()
                };
                device
                    .compute(kernel(
                        KernelOp::Unary(Unary::Neg),
                        vec![slice.clone()],
                        slice,
                    ))
                    .unwrap();
            }
            device.set_current_stream(main).unwrap();
            for i in 0..2 {
                device.sync_stream(device.stream_from_pool(i)).unwrap();
            }
            device
                .compute(kernel(
                    KernelOp::Unary(Unary::Neg),
                    vec![full.clone()],
                    full,
                ))
                .unwrap();
            device.synchronize().unwrap();
            x.to_f32()
        })
        .unwrap();
    assert_eq!(values[0], (0..64).map(|e| e as f32).collect::<Vec<_>>());
}

/// Requests carried across a loop, as `scf.for` iter_args carry them: each
/// iteration posts an allreduce and waits for the previous iteration's, and
/// the last is waited after the loop; a request is waited in any order
/// relative to those posted after it. The race detector (fatal) checks that
/// each wait orders its allreduce before what reads its output.
#[test]
fn requests_are_waited_later_and_in_any_order() {
    let world = world(2, 1);
    let sums = world
        .run(|device| {
            let rank = device.rank();
            let mut a = array(DType::F32, &[4, 2], |i| (rank * 8 + i) as f32);
            let mut b = array(DType::F32, &[4, 2], |_| 0.0);
            let mut c = array(DType::F32, &[4, 2], |_| 0.0);
            let allreduce = |row: usize, a: &mut Array, b: &mut Array| CollectiveOp {
                op: Collective::Allreduce,
                kind: ReduceKind::Sum,
                root: 0,
                axis: 0,
                team: team(&[0, 1]),
                backend: Transport::Nccl,
                input: view(a).slice(0, row, 1),
                output: view(b).slice(0, row, 1),
            };
            let mut previous = device.collective(allreduce(0, &mut a, &mut b)).unwrap();
            for row in 1..4 {
                let next = device.collective(allreduce(row, &mut a, &mut b)).unwrap();
                device.wait(previous).unwrap();
                previous = next;
            }
            device.wait(previous).unwrap();
            // Waited in the reverse of their posting order.
            let first = device.collective(allreduce(0, &mut b, &mut c)).unwrap();
            let second = device.collective(allreduce(1, &mut b, &mut c)).unwrap();
            device.wait(second).unwrap();
            device.wait(first).unwrap();
            device
                .compute(kernel(KernelOp::Copy, vec![view(&mut c)], view(&mut a)))
                .unwrap();
            device.synchronize().unwrap();
            assert!(!device.failed());
            (b.to_f32(), a.to_f32())
        })
        .unwrap();
    let want: Vec<f32> = (0..8).map(|i| (i + 8 + i) as f32).collect();
    for (b, copied) in &sums {
        assert_eq!(b, &want);
        let doubled: Vec<f32> = want[..4].iter().map(|x| 2.0 * x).collect();
        assert_eq!(&copied[..4], &doubled[..]);
    }
}
