//! Streams, requests and the stream-ordered allocator: events ordering
//! work, requests waited late or out of order, loop temporaries, block
//! reuse and poisoning.

use super::*;

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
    let _turn = serial();
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
