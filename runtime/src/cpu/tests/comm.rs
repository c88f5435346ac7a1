//! Collectives and transfers: every collective in every dtype through the
//! C ABI, rings of sends and receives (coalesced or not, on both transfer
//! backends), and the errors of mismatched or unmatched communication.

use super::*;

/// What position `j` of a team of `n` holds after `op`, from the inputs in
/// team order, as `[2, width]` row-major arrays; `None` if not written.
fn expected(
    op: Collective,
    kind: ReduceKind,
    root: usize,
    j: usize,
    inputs: &[Vec<f32>],
    width: usize,
) -> Option<Vec<f32>> {
    let n = inputs.len();
    let at = |i: usize, row: usize, col: usize, w: usize| inputs[i][row * w + col];
    let mut out = Vec::new();
    match op {
        Collective::Allgather | Collective::Gather => {
            if op == Collective::Gather && j != root {
                return None;
            }
            for row in 0..2 {
                for col in 0..n * width {
                    out.push(at(col / width, row, col % width, width));
                }
            }
        }
        Collective::Allreduce | Collective::Reduce => {
            if op == Collective::Reduce && j != root {
                return None;
            }
            for e in 0..2 * width {
                let all: Vec<f32> = inputs.iter().map(|input| input[e]).collect();
                out.push(fold(kind, &all));
            }
        }
        Collective::ReduceScatter => {
            for row in 0..2 {
                for col in 0..width {
                    let all: Vec<f32> = (0..n)
                        .map(|i| at(i, row, j * width + col, n * width))
                        .collect();
                    out.push(fold(kind, &all));
                }
            }
        }
        Collective::Broadcast => out = inputs[root].clone(),
        Collective::Scatter => {
            for row in 0..2 {
                for col in 0..width {
                    out.push(at(root, row, j * width + col, n * width));
                }
            }
        }
        Collective::Alltoall => {
            for row in 0..2 {
                for col in 0..n * width {
                    out.push(at(col / width, row, j * width + col % width, n * width));
                }
            }
        }
    }
    Some(out)
}

/// `[input, output]` shapes of the `[2, width]`-based test of `op` on `n` ranks.
fn shapes(op: Collective, n: usize, width: usize) -> [Vec<usize>; 2] {
    let (small, big) = (vec![2, width], vec![2, n * width]);
    match op {
        Collective::Allgather | Collective::Gather => [small, big],
        Collective::ReduceScatter | Collective::Scatter => [big, small],
        Collective::Alltoall => [big.clone(), big],
        _ => [small.clone(), small],
    }
}

#[test]
fn every_collective_in_every_dtype_through_the_c_abi() {
    // Rank 3 is outside the team, whose order is not the ranks'.
    let world = world(4, 1);
    let members = [2usize, 0, 1];
    let width = 2;
    let root_position = 2; // rank 1
    let input_of = |rank: usize, e: usize| rank as f32 * 0.5 + e as f32 * 0.25 - 1.0;
    for dtype in DType::FLOATS {
        for op in Collective::ALL {
            for kind in [
                ReduceKind::Sum,
                ReduceKind::Prod,
                ReduceKind::Max,
                ReduceKind::Min,
                ReduceKind::Avg,
            ] {
                let reducing = matches!(
                    op,
                    Collective::Allreduce | Collective::ReduceScatter | Collective::Reduce
                );
                if !reducing && kind != ReduceKind::Sum {
                    continue;
                }
                let [in_shape, out_shape] = shapes(op, members.len(), width);
                let outputs = world
                    .run(|device| {
                        let rank = device.rank();
                        let mut input = array(dtype, &in_shape, |e| input_of(rank, e));
                        let mut output = array(dtype, &out_shape, |_| 99.0);
                        let _known = known(device, &[&input, &output]);
                        let (i, o) = (
                            Descriptor::of(&view(&mut input)),
                            Descriptor::of(&view(&mut output)),
                        );
                        let mut ranks = members.map(|r| r as i64);
                        let team = team_descriptor(&mut ranks);
                        let entry: CollectiveFn = symbol(Entry::Collective(op, dtype));
                        let root = members[root_position] as i64;
                        let request =
                            unsafe { entry(i.ptr(), o.ptr(), kind as i64, root, 1, team.ptr(), 0) };
                        crate::ffi::hir_rt_wait(request);
                        device.synchronize().unwrap();
                        output
                    })
                    .unwrap();
                let inputs: Vec<Vec<f32>> = members
                    .iter()
                    .map(|&rank| {
                        let n = in_shape.iter().product();
                        array(dtype, &in_shape, |e| input_of(rank, e)).to_f32()[..n].to_vec()
                    })
                    .collect();
                for (rank, output) in outputs.iter().enumerate() {
                    let want = match members.iter().position(|&m| m == rank) {
                        Some(j) => expected(op, kind, root_position, j, &inputs, width),
                        None => None,
                    };
                    let want = want.map_or_else(
                        || array(dtype, &out_shape, |_| 99.0),
                        |values| Array::from_f32(dtype, &out_shape, &values),
                    );
                    assert_eq!(
                        output.to_f32(),
                        want.to_f32(),
                        "{op:?} {kind:?} {dtype:?} rank {rank}"
                    );
                }
            }
        }
    }
}

#[test]
fn an_allreduce_may_be_in_place() {
    let world = world(3, 1);
    let sums = world
        .run(|device| {
            let mut buffer = array(DType::F32, &[4], |e| (device.rank() * 10 + e) as f32);
            let op = CollectiveOp {
                op: Collective::Allreduce,
                kind: ReduceKind::Sum,
                root: 0,
                axis: 0,
                team: team(&[0, 1, 2]),
                backend: Transport::Nccl,
                input: view(&mut buffer),
                output: view(&mut buffer),
            };
            let request = device.collective(op).unwrap();
            device.wait(request).unwrap();
            device.synchronize().unwrap();
            buffer.to_f32()
        })
        .unwrap();
    assert!(sums.iter().all(|sum| sum == &[30.0, 33.0, 36.0, 39.0]));
}

#[test]
fn mismatched_collectives_fail_naming_rank_and_op() {
    let world = world(2, 1);
    let error = world
        .run(|device| {
            let n = 2 + device.rank();
            let mut input = array(DType::BF16, &[n], |_| 1.0);
            let mut output = array(DType::BF16, &[n], |_| 0.0);
            let op = CollectiveOp {
                op: Collective::Allreduce,
                kind: ReduceKind::Sum,
                root: 0,
                axis: 0,
                team: team(&[0, 1]),
                backend: Transport::Nccl,
                input: view(&mut input),
                output: view(&mut output),
            };
            device.collective(op).unwrap();
            device.synchronize().unwrap();
        })
        .unwrap_err();
    let message = error.to_string();
    assert!(message.contains("hir_rt_allreduce_bf16"), "{message}");
    assert!(
        message.contains("rank 1 posted hir_rt_allreduce_bf16 of [3]"),
        "{message}"
    );
    assert_eq!(error.errors.len(), 2);
}

#[test]
fn a_recv_with_no_sender_times_out_naming_rank_and_op() {
    let world = world_with(2, 1, Duration::from_millis(200));
    let started = Instant::now();
    let error = world
        .run(|device| {
            if device.rank() == 1 {
                let mut buffer = array(DType::F32, &[8], |_| 0.0);
                let request = device
                    .recv(Transfer {
                        buffer: view(&mut buffer),
                        peer: 0,
                        team: team(&[0, 1]),
                        backend: Transport::Nccl,
                    })
                    .unwrap();
                device.wait(request).unwrap();
                device.synchronize().unwrap();
            }
        })
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(3));
    let first = error.first();
    assert_eq!((first.rank, first.op.as_str()), (1, "hir_rt_recv_f32"));
    assert!(
        first
            .to_string()
            .contains("timed out after 200ms waiting for rank 0 to post the matching send"),
        "{first}"
    );
    // Errors are sticky.
    assert!(world.run(|_| ()).is_err());
}

/// A ring step: every rank sends its buffer to the next and receives from the
/// previous, in one coalescing group, sends first or receives first.
fn ring(world: &World, sends_first: bool, via_c_abi: bool) {
    let n = world.ranks();
    let received = world
        .run(|device| {
            let rank = device.rank();
            let (next, prev) = ((rank + 1) % n, (rank + n - 1) % n);
            let mut mine = array(DType::F16, &[3, 2], |e| (rank * 10 + e) as f32);
            let mut theirs = array(DType::F16, &[3, 2], |_| -1.0);
            let _known = known(device, &[&mine, &theirs]);
            let (mine_view, theirs_view) = (view(&mut mine), view(&mut theirs));
            let members: Vec<usize> = (0..n).collect();
            let request = if via_c_abi {
                let (m, t) = (Descriptor::of(&mine_view), Descriptor::of(&theirs_view));
                let mut ranks: Vec<i64> = (0..n as i64).collect();
                let team = team_descriptor(&mut ranks);
                let send: TransferFn = symbol(Entry::Send(DType::F16));
                let recv: TransferFn = symbol(Entry::Recv(DType::F16));
                crate::ffi::hir_rt_start_coalescing();
                unsafe {
                    if sends_first {
                        send(m.ptr(), next as i64, team.ptr(), 0);
                        recv(t.ptr(), prev as i64, team.ptr(), 0);
                    } else {
                        recv(t.ptr(), prev as i64, team.ptr(), 0);
                        send(m.ptr(), next as i64, team.ptr(), 0);
                    }
                }
                crate::ffi::hir_rt_end_coalescing()
            } else {
                let transfer = |buffer: &View, peer| Transfer {
                    buffer: buffer.clone(),
                    peer,
                    team: team(&members),
                    backend: Transport::Nccl,
                };
                device.start_coalescing().unwrap();
                if sends_first {
                    device.send(transfer(&mine_view, next)).unwrap();
                    device.recv(transfer(&theirs_view, prev)).unwrap();
                } else {
                    device.recv(transfer(&theirs_view, prev)).unwrap();
                    device.send(transfer(&mine_view, next)).unwrap();
                }
                device.end_coalescing().unwrap()
            };
            device.wait(request).unwrap();
            device.synchronize().unwrap();
            theirs.to_f32()
        })
        .unwrap();
    for (rank, values) in received.iter().enumerate() {
        let prev = (rank + n - 1) % n;
        let want: Vec<f32> = (0..6).map(|e| (prev * 10 + e) as f32).collect();
        assert_eq!(values, &want, "rank {rank}");
    }
}

#[test]
fn coalesced_rings_complete_in_either_order() {
    // On one rank the ring is a send to itself and a receive from itself.
    for ranks in [1, 3] {
        let world = world_with(ranks, 1, Duration::from_secs(5));
        ring(&world, true, true);
        ring(&world, false, true);
        ring(&world, true, false);
        ring(&world, false, false);
    }
}

#[test]
fn a_rank_sends_to_itself_on_both_transfer_backends() {
    // Rank r of 2 sends to itself and to its peer in each group, twice, so
    // that the k-th send to itself must match its k-th receive from itself.
    let world = world_with(2, 1, Duration::from_secs(5));
    for backend in [Transport::Nccl, Transport::Cuda] {
        let received = world
            .run(|device| {
                let rank = device.rank();
                let members = [0, 1];
                let mut mine = array(DType::F32, &[2, 4], |e| (rank * 100 + e) as f32);
                let mut got = array(DType::F32, &[2, 2, 4], |_| -1.0);
                let _known = known(device, &[&mine, &got]);
                let (mine, got_view) = (view(&mut mine), view(&mut got));
                if backend == Transport::Cuda {
                    device
                        .share_mem_handle(mine.clone(), team(&members))
                        .unwrap();
                    device
                        .share_mem_handle(got_view.clone(), team(&members))
                        .unwrap();
                }
                let transfer = |buffer: View, peer| Transfer {
                    buffer,
                    peer,
                    team: team(&members),
                    backend,
                };
                for round in 0..2 {
                    let slot = |from: usize| select(&select(&got_view, 0, round), 0, from);
                    device.start_coalescing().unwrap();
                    for peer in [rank, 1 - rank] {
                        let row = select(&mine, 0, round);
                        device.send(transfer(row, peer)).unwrap();
                        device.recv(transfer(slot(peer), peer)).unwrap();
                    }
                    let request = device.end_coalescing().unwrap();
                    device.wait(request).unwrap();
                }
                device.synchronize().unwrap();
                got.to_f32()
            })
            .unwrap();
        for (rank, values) in received.iter().enumerate() {
            // got[round][from] is row `round` of rank `from`'s buffer.
            let want: Vec<f32> = (0..16)
                .map(|e| {
                    let (round, from, i) = (e / 8, e / 4 % 2, e % 4);
                    (from * 100 + round * 4 + i) as f32
                })
                .collect();
            assert_eq!(values, &want, "rank {rank}, {backend:?}");
        }
    }
}

#[test]
fn an_uncoalesced_ring_of_sends_deadlocks_like_nccl_and_times_out() {
    let world = world_with(2, 1, Duration::from_millis(200));
    let error = world
        .run(|device| {
            let peer = 1 - device.rank();
            let mut a = array(DType::F32, &[4], |_| 1.0);
            let mut b = array(DType::F32, &[4], |_| 0.0);
            let transfer = |buffer: View| Transfer {
                buffer,
                peer,
                team: team(&[0, 1]),
                backend: Transport::Nccl,
            };
            let sent = device.send(transfer(view(&mut a))).unwrap();
            let received = device.recv(transfer(view(&mut b))).unwrap();
            device.wait(sent).unwrap();
            device.wait(received).unwrap();
            device.synchronize().unwrap();
        })
        .unwrap_err();
    assert_eq!(error.first().op, "hir_rt_send_f32");
    assert!(
        error.to_string().contains("to post the matching recv"),
        "{error}"
    );
}

#[test]
fn cuda_transfers_write_the_mapped_peer_buffer() {
    let world = world(2, 2);
    let received = world
        .run(|device| {
            let rank = device.rank();
            let peer = 1 - rank;
            let mut out = array(DType::BF16, &[2, 4], |e| (rank * 100 + e) as f32);
            let mut into = array(DType::BF16, &[2, 4], |_| 0.0);
            let _known = known(device, &[&out, &into]);
            let (o, i) = (
                Descriptor::of(&view(&mut out)),
                Descriptor::of(&view(&mut into)),
            );
            let mut ranks = [0i64, 1];
            let team = team_descriptor(&mut ranks);
            let share = crate::ffi::_mlir_ciface_hir_rt_share_mem_handle_bf16;
            let send: TransferFn = symbol(Entry::Send(DType::BF16));
            let recv: TransferFn = symbol(Entry::Recv(DType::BF16));
            unsafe {
                share(o.ptr(), team.ptr());
                share(i.ptr(), team.ptr());
                // A second share of a buffer hits the handle cache.
                share(i.ptr(), team.ptr());
                // Transfers run on the current stream: send on stream 1,
                // receive on stream 2, and join both on stream 0.
                crate::ffi::hir_rt_set_current_stream(1);
                let sent = send(o.ptr(), peer as i64, team.ptr(), Transport::Cuda as i64);
                crate::ffi::hir_rt_set_current_stream(2);
                let got = recv(i.ptr(), peer as i64, team.ptr(), Transport::Cuda as i64);
                crate::ffi::hir_rt_set_current_stream(0);
                crate::ffi::hir_rt_wait(sent);
                crate::ffi::hir_rt_wait(got);
            }
            device.synchronize().unwrap();
            into.to_f32()
        })
        .unwrap();
    for (rank, values) in received.iter().enumerate() {
        let want: Vec<f32> = (0..8).map(|e| ((1 - rank) * 100 + e) as f32).collect();
        assert_eq!(values, &want);
    }
}

#[test]
fn a_cuda_transfer_needs_the_peer_buffer_mapped() {
    let world = world_with(2, 1, Duration::from_millis(500));
    let error = world
        .run(|device| {
            let rank = device.rank();
            let mut buffer = array(DType::F32, &[4], |_| 1.0);
            let buffer = view(&mut buffer);
            // Each rank exports its buffer to a team of its own: the sender
            // (rank 0) never maps the receiver's buffer.
            device
                .share_mem_handle(buffer.clone(), team(&[rank]))
                .unwrap();
            let transfer = Transfer {
                buffer,
                peer: 1 - rank,
                team: team(&[0, 1]),
                backend: Transport::Cuda,
            };
            let request = if rank == 0 {
                device.send(transfer)
            } else {
                device.recv(transfer)
            };
            device.wait(request.unwrap()).unwrap();
            device.synchronize().unwrap();
        })
        .unwrap_err();
    assert_eq!(error.errors.len(), 2);
    let message = error.first().to_string();
    assert!(
        message.contains("rank 1's recv buffer (16 bytes at"),
        "{message}"
    );
    assert!(message.contains("is not mapped on rank 0: share it with share_mem_handle first"));
}

#[test]
fn a_cuda_transfer_needs_its_own_buffer_shared() {
    let world = world(1, 1);
    world
        .run(|device| {
            let mut buffer = array(DType::F32, &[4], |_| 1.0);
            let transfer = Transfer {
                buffer: view(&mut buffer),
                peer: 0,
                team: team(&[0]),
                backend: Transport::Cuda,
            };
            let error = device.send(transfer).unwrap_err().to_string();
            assert!(
                error.contains("was not shared with share_mem_handle"),
                "{error}"
            );
        })
        .unwrap();
}
