//! NCCL collectives, grouped send/recv and gather/scatter/all-to-all
//! against the cpu backend, floats and integers.

use super::*;

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
