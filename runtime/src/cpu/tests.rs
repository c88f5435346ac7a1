//! The cpu backend driven the way JIT'd code drives it (through the C-ABI
//! symbols, with descriptors built here) and through the Rust API.

use super::*;
use crate::bounds::Registration;
use crate::memref::UnrankedMemRef;
use crate::memref::tests::Descriptor;
use crate::npy::Array;
use crate::ops::KernelOp;
use hir_abi::{Binary, DType, Entry, ReduceKind, Reduction, Unary};
use std::sync::Barrier;

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

/// Makes the arrays buffers the rank knows, as a launcher registers its
/// arguments, so that views of them pass the entries' bounds check.
fn known(device: &dyn Device, arrays: &[&Array]) -> Vec<Registration> {
    arrays
        .iter()
        .map(|array| {
            let data = &array.data;
            device
                .allocations()
                .register(data.as_ptr(), data.len())
                .unwrap()
        })
        .collect()
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
                    sizes: vec![4, 8],
                    strides: vec![16, 1],
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

#[test]
fn compute_kernels_on_strided_views() {
    let world = world(1, 1);
    world
        .run(|device| {
            let run = |op: KernelOp, inputs: Vec<View>, output: &mut Array| {
                device.compute(kernel(op, inputs, view(output))).unwrap();
                device.synchronize().unwrap();
                output.to_f32()
            };
            // x: [2, 3] viewed transposed from a [3, 2] buffer.
            let mut storage = array(DType::F32, &[3, 2], |e| e as f32 - 2.0);
            let x = View {
                sizes: vec![2, 3],
                strides: vec![1, 2],
                ..view(&mut storage)
            };
            let xt = [-2.0, 0.0, 2.0, -1.0, 1.0, 3.0];
            let mut y = array(DType::BF16, &[2, 3], |_| 0.0);
            assert_eq!(run(KernelOp::Cast, vec![x.clone()], &mut y), xt);
            let mut out = array(DType::F32, &[2, 3], |_| 0.0);
            assert_eq!(
                run(KernelOp::Unary(Unary::Neg), vec![x.clone()], &mut out),
                xt.map(|v| -v)
            );
            let mut other = array(DType::F32, &[2, 3], |e| e as f32);
            let other = view(&mut other);
            for (op, f) in [
                (Binary::Sub, (|a, b| a - b) as fn(f32, f32) -> f32),
                (Binary::Div, |a, b| a / b),
                (Binary::Max, f32::max),
                (Binary::Min, f32::min),
            ] {
                let want: Vec<f32> = xt
                    .iter()
                    .enumerate()
                    .map(|(e, &v)| f(v, e as f32))
                    .collect();
                let got = run(
                    KernelOp::Binary(op),
                    vec![x.clone(), other.clone()],
                    &mut out,
                );
                assert_eq!(got, want, "{op:?}");
            }
            let mut sums = array(DType::F32, &[3], |_| 0.0);
            assert_eq!(
                run(
                    KernelOp::Reduce(Reduction::Sum, vec![0]),
                    vec![x.clone()],
                    &mut sums
                ),
                [-3.0, 1.0, 5.0]
            );
            let mut maxes = array(DType::F32, &[2], |_| 0.0);
            assert_eq!(
                run(
                    KernelOp::Reduce(Reduction::Amax, vec![1]),
                    vec![x.clone()],
                    &mut maxes
                ),
                [2.0, 3.0]
            );
            let mut spread = array(DType::F32, &[2, 2, 3], |_| 0.0);
            let got = run(KernelOp::Broadcast(vec![1]), vec![x.clone()], &mut spread);
            assert_eq!(got, [&xt[..3], &xt[..3], &xt[3..], &xt[3..]].concat());
            // Batched matmul: [2, 2, 3] x [2, 3, 1] and linear with bias.
            let mut lhs = array(DType::F16, &[2, 2, 3], |e| e as f32);
            let mut rhs = array(DType::F16, &[2, 3, 1], |e| (e % 3) as f32);
            let mut product = array(DType::F16, &[2, 2, 1], |_| 0.0);
            let got = run(
                KernelOp::Matmul,
                vec![view(&mut lhs), view(&mut rhs)],
                &mut product,
            );
            assert_eq!(got, [5.0, 14.0, 23.0, 32.0]);
            // A [K] lhs (a matmul row): [3] x [3, 2].
            let mut row = array(DType::F32, &[3], |e| e as f32 + 1.0);
            let mut cols = array(DType::F32, &[3, 2], |e| e as f32);
            let mut out_row = array(DType::F32, &[2], |_| 0.0);
            let got = run(
                KernelOp::Matmul,
                vec![view(&mut row), view(&mut cols)],
                &mut out_row,
            );
            // [1, 2, 3] @ [[0, 1], [2, 3], [4, 5]].
            assert_eq!(got, [16.0, 22.0]);
            let mut w = array(DType::F32, &[2, 3], |e| e as f32);
            let mut bias = array(DType::F32, &[2], |e| e as f32 * 100.0);
            let mut lin = array(DType::F32, &[2, 2], |_| 0.0);
            let got = run(
                KernelOp::Linear,
                vec![x.clone(), view(&mut w), view(&mut bias)],
                &mut lin,
            );
            // x @ w^T + bias, x rows [-2, 0, 2] and [-1, 1, 3].
            assert_eq!(got, [4.0, 104.0, 7.0, 116.0]);
            let bad = kernel(KernelOp::Matmul, vec![x.clone(), x.clone()], view(&mut lin));
            assert!(
                device
                    .compute(bad)
                    .unwrap_err()
                    .to_string()
                    .contains("contract 3 with 2")
            );
        })
        .unwrap();
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

#[test]
fn matmul_accumulate_adds_the_product_to_the_output() {
    // Through the C ABI, as the lowering calls it: [B, M, K] x [K, N] into a
    // strided [B, M, N] view (columns 1..=N of a [B, M, W] buffer), and the
    // row case [K] x [K, N] into every other element of a [2N] buffer.
    let (b, m, k, n, w) = (2, 3, 4, 5, 8);
    let world = world(1, 1);
    for dtype in DType::FLOATS {
        let (lhs, rhs, initial, out, row_initial, row_out) = world
            .run(|device| {
                let mut lhs = array(dtype, &[b, m, k], noise(1, 0.25));
                let mut rhs = array(dtype, &[k, n], noise(2, 0.25));
                let mut out = array(dtype, &[b, m, w], noise(3, 1.0));
                let mut row_out = array(dtype, &[2 * n], noise(4, 1.0));
                let _known = known(device, &[&lhs, &rhs, &out, &row_out]);
                let (initial, row_initial) = (out.to_f32(), row_out.to_f32());
                let (lhs_view, rhs_view) = (view(&mut lhs), view(&mut rhs));
                let row = select(&select(&lhs_view, 0, 1), 0, 2);
                let row_target = View {
                    sizes: vec![n],
                    strides: vec![2],
                    ..view(&mut row_out)
                };
                let [l, r, o, row, row_o] = [
                    lhs_view,
                    rhs_view,
                    view(&mut out).slice(2, 1, n),
                    row,
                    row_target,
                ]
                .map(|v| Descriptor::of(&v));
                let accumulate: BinaryFn = symbol(Entry::MatmulAccumulate(dtype));
                unsafe {
                    accumulate(l.ptr(), r.ptr(), o.ptr());
                    accumulate(row.ptr(), r.ptr(), row_o.ptr());
                }
                device.synchronize().unwrap();
                assert!(!device.failed());
                (
                    lhs.to_f32(),
                    rhs.to_f32(),
                    initial,
                    out.to_f32(),
                    row_initial,
                    row_out.to_f32(),
                )
            })
            .unwrap()
            .remove(0);
        // One rounding of the f32 sum to the element type (half an ulp), and
        // f32 accumulation of the K products; products are at most 0.25 and
        // outputs at least 1, so a kernel that drops the output fails.
        let half_ulp = match dtype {
            DType::F32 => 2f64.powi(-24),
            DType::BF16 => 2f64.powi(-8),
            DType::F16 => 2f64.powi(-11),
            DType::I32 | DType::I64 => unreachable!("floats only"),
        };
        let check = |got: f32, old: f32, lhs_row: &[f32], col: usize, what: &str| {
            let terms: Vec<f64> = (0..k)
                .map(|p| lhs_row[p] as f64 * rhs[p * n + col] as f64)
                .collect();
            let want = old as f64 + terms.iter().sum::<f64>();
            let scale = old.abs() as f64 + terms.iter().map(|t| t.abs()).sum::<f64>();
            let tol = half_ulp * want.abs() + 8.0 * 2f64.powi(-24) * scale;
            assert!(
                (got as f64 - want).abs() <= tol,
                "{dtype:?} {what}: got {got}, want {want} (tolerance {tol:e})"
            );
        };
        for bi in 0..b {
            for i in 0..m {
                let lhs_row = &lhs[(bi * m + i) * k..][..k];
                for col in 0..w {
                    let e = (bi * m + i) * w + col;
                    if (1..=n).contains(&col) {
                        let at = format!("[{bi}, {i}, {}]", col - 1);
                        check(out[e], initial[e], lhs_row, col - 1, &at);
                    } else {
                        assert_eq!(out[e], initial[e], "{dtype:?}: outside the view at {e}");
                    }
                }
            }
        }
        let lhs_row = &lhs[(m + 2) * k..][..k];
        for e in 0..2 * n {
            if e % 2 == 0 {
                let at = format!("row [{}]", e / 2);
                check(row_out[e], row_initial[e], lhs_row, e / 2, &at);
            } else {
                assert_eq!(
                    row_out[e], row_initial[e],
                    "{dtype:?}: outside the row at {e}"
                );
            }
        }
    }
}

#[test]
fn matmul_accumulate_rounds_the_sum_once() {
    // 1 + (2^-8 + 2^-16) in bf16 (8 significant bits): rounded once, the sum
    // is above the tie between 1 and 1 + 2^-7 and goes up; a product rounded
    // to bf16 first (2^-8, a tie itself) would make a tie that goes to 1.
    let world = world(1, 1);
    let out = world
        .run(|device| {
            let mut lhs = Array::from_f32(DType::BF16, &[1, 2], &[2f32.powi(-8), 2f32.powi(-16)]);
            let mut rhs = array(DType::BF16, &[2, 1], |_| 1.0);
            let mut out = array(DType::BF16, &[1, 1], |_| 1.0);
            let matmul = kernel(
                KernelOp::MatmulAccumulate,
                vec![view(&mut lhs), view(&mut rhs)],
                view(&mut out),
            );
            device.compute(matmul).unwrap();
            device.synchronize().unwrap();
            out.to_f32()
        })
        .unwrap();
    assert_eq!(out[0], [1.0 + 2f32.powi(-7)]);
}

/// A naive f64 matmul with torch.matmul's batch broadcasting: each output
/// entry indexes each operand directly, at 0 along an axis of extent 1 or
/// one the operand lacks.
fn broadcast_matmul_reference(
    lhs: &[f32],
    lhs_shape: &[usize],
    rhs: &[f32],
    rhs_shape: &[usize],
    out_shape: &[usize],
) -> Vec<f64> {
    let rank = out_shape.len();
    let k = lhs_shape[lhs_shape.len() - 1];
    let index = |shape: &[usize], coordinates: &[usize]| -> usize {
        // `coordinates` are the output's batch coordinates then two more.
        let skip = rank - shape.len();
        shape.iter().enumerate().fold(0, |flat, (axis, &extent)| {
            let coordinate = coordinates[axis + skip];
            flat * extent + if extent == 1 { 0 } else { coordinate }
        })
    };
    let count: usize = out_shape.iter().product();
    (0..count)
        .map(|flat| {
            let mut coordinates = vec![0; rank];
            let mut rest = flat;
            for axis in (0..rank).rev() {
                coordinates[axis] = rest % out_shape[axis];
                rest /= out_shape[axis];
            }
            let (i, j) = (coordinates[rank - 2], coordinates[rank - 1]);
            (0..k)
                .map(|p| {
                    coordinates[rank - 2] = i;
                    coordinates[rank - 1] = p;
                    let a = lhs[index(lhs_shape, &coordinates)] as f64;
                    coordinates[rank - 2] = p;
                    coordinates[rank - 1] = j;
                    a * rhs[index(rhs_shape, &coordinates)] as f64
                })
                .sum()
        })
        .collect()
}

#[test]
fn matmul_broadcasts_batch_axes_as_torch() {
    // (lhs, rhs, output): unit batch axes of the rhs (a per-device weight
    // shard beside a stream axis), an rhs with fewer batch axes than the lhs,
    // an lhs with fewer than the rhs, and unit axes on both sides.
    let cases: [(&[usize], &[usize], &[usize]); 4] = [
        (&[4, 2, 3, 5], &[1, 1, 5, 6], &[4, 2, 3, 6]),
        (&[3, 1, 3, 5], &[4, 5, 6], &[3, 4, 3, 6]),
        (&[3, 5], &[2, 5, 6], &[2, 3, 6]),
        (&[2, 1, 3, 5], &[1, 3, 5, 6], &[2, 3, 3, 6]),
    ];
    let world = world(1, 1);
    world
        .run(|device| {
            for (seed, &(lhs_shape, rhs_shape, out_shape)) in cases.iter().enumerate() {
                let mut lhs = array(DType::F32, lhs_shape, noise(2 * seed as u64, 0.5));
                let mut rhs = array(DType::F32, rhs_shape, noise(2 * seed as u64 + 1, 0.5));
                let mut out = array(DType::F32, out_shape, |_| f32::NAN);
                let matmul = kernel(
                    KernelOp::Matmul,
                    vec![view(&mut lhs), view(&mut rhs)],
                    view(&mut out),
                );
                device.compute(matmul).unwrap();
                device.synchronize().unwrap();
                let want = broadcast_matmul_reference(
                    &lhs.to_f32(),
                    lhs_shape,
                    &rhs.to_f32(),
                    rhs_shape,
                    out_shape,
                );
                for (e, (&got, want)) in out.to_f32().iter().zip(want).enumerate() {
                    assert!(
                        (got as f64 - want).abs() <= 1e-5,
                        "{lhs_shape:?} x {rhs_shape:?} at {e}: got {got}, want {want}"
                    );
                }
            }
            // Batch axes that do not broadcast are refused.
            let mut lhs = array(DType::F32, &[2, 3, 5], |_| 1.0);
            let mut rhs = array(DType::F32, &[3, 5, 6], |_| 1.0);
            let mut out = array(DType::F32, &[3, 3, 6], |_| 0.0);
            let bad = kernel(
                KernelOp::Matmul,
                vec![view(&mut lhs), view(&mut rhs)],
                view(&mut out),
            );
            let error = device.compute(bad).unwrap_err().to_string();
            assert!(error.contains("do not broadcast"), "{error}");
        })
        .unwrap();
}

#[test]
fn an_error_skips_the_rest_of_the_rank_and_names_the_op() {
    let world = world(1, 1);
    let error = world
        .run(|device| {
            let mut a = array(DType::F32, &[4], |e| e as f32);
            let mut b = array(DType::F32, &[5], |_| 0.0);
            let mut c = array(DType::F32, &[4], |_| 0.0);
            let _known = known(device, &[&a, &b, &c]);
            let (a, b, c_view) = (
                Descriptor::of(&view(&mut a)),
                Descriptor::of(&view(&mut b)),
                Descriptor::of(&view(&mut c)),
            );
            let copy: UnaryFn = symbol(Entry::Copy(DType::F32));
            let add: BinaryFn = symbol(Entry::Binary(Binary::Add, DType::F32));
            unsafe {
                copy(a.ptr(), b.ptr());
                add(a.ptr(), a.ptr(), c_view.ptr());
            }
            device.synchronize().unwrap();
            assert_eq!(c.to_f32(), [0.0; 4]);
        })
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "rank 0: hir_rt_copy_f32: output has shape [5], expected [4]"
    );
}

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

#[test]
fn the_trace_has_a_track_per_rank_and_stream() {
    let world = world(2, 1);
    world
        .run(|device| {
            let mut a = array(DType::F32, &[4], |_| 1.0);
            let mut b = array(DType::F32, &[4], |_| 0.0);
            device.set_current_stream(1).unwrap();
            device
                .compute(kernel(KernelOp::Copy, vec![view(&mut a)], view(&mut b)))
                .unwrap();
            let op = CollectiveOp {
                op: Collective::Allreduce,
                kind: ReduceKind::Max,
                root: 0,
                axis: 0,
                team: team(&[0, 1]),
                backend: Transport::Nccl,
                input: view(&mut a),
                output: view(&mut b),
            };
            let request = device.collective(op).unwrap();
            device.wait(request).unwrap();
            device.synchronize().unwrap();
        })
        .unwrap();
    let json = world.trace().unwrap().to_chrome_json();
    for rank in 0..2 {
        assert!(json.contains(&format!(r#""pid":{rank},"args":{{"name":"rank {rank}"}}"#)));
        assert!(json.contains(&format!(
            r#""pid":{rank},"tid":2,"args":{{"name":"stream 1"}}"#
        )));
        assert!(json.contains(&format!(
            r#""pid":{rank},"tid":3,"args":{{"name":"comm [0, 1]"}}"#
        )));
        assert!(json.contains(&format!(
            r#"{{"ph":"X","name":"copy_f32","pid":{rank},"tid":2,"#
        )));
        assert!(json.contains(&format!(
            r#"{{"ph":"X","name":"allreduce_f32","pid":{rank},"tid":3,"#
        )));
    }
    let path = std::env::temp_dir().join(format!("hir-trace-{}.json", std::process::id()));
    world.write_chrome_trace(&path).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), json);
    std::fs::remove_file(path).unwrap();
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

#[test]
fn the_stream_parallel_ag_matmul_host_program_through_the_c_abi() {
    // Host.md's @ag_matmul on 2 ranks and 2 streams, each call as the
    // lowering emits it: a: [S, 1, M, K], b: [K, N], c: [S, D, M, N].
    let (s, d, m, k, n) = (2usize, 2usize, 3usize, 4usize, 5usize);
    let world = world(d, s);
    let a_of = |rank: usize, e: usize| ((rank * 7 + e) % 11) as f32 - 5.0;
    let b_of = |e: usize| (e % 5) as f32 - 2.0;
    let outputs = world
        .run(|device| {
            let rank = device.rank();
            let mut a = array(DType::BF16, &[s, 1, m, k], |e| a_of(rank, e));
            let mut b = array(DType::BF16, &[k, n], b_of);
            let mut c = array(DType::BF16, &[s, d, m, n], |_| 0.0);
            let _known = known(device, &[&a, &b, &c]);
            let (a, b_view, c_view) = (view(&mut a), view(&mut b), view(&mut c));
            let bytes = (s * d * m * k * 2) as i64;
            let g_ptr = crate::ffi::hir_rt_alloc(0, bytes).cast::<u8>();
            let g = View::contiguous(DType::BF16, g_ptr, &[s, d, m, k]);
            let mut ranks = [0i64, 1];
            let team = team_descriptor(&mut ranks);
            let allgather: CollectiveFn =
                symbol(Entry::Collective(Collective::Allgather, DType::BF16));
            let matmul: BinaryFn = symbol(Entry::Matmul(DType::BF16));
            use crate::ffi::*;
            let main = hir_rt_get_current_stream();
            for i in 0..s as i64 {
                hir_rt_set_current_stream(hir_rt_stream_from_pool(i));
                hir_rt_sync_stream(main);
            }
            for i in 0..s {
                let stream = hir_rt_stream_from_pool(i as i64);
                hir_rt_set_current_stream(stream);
                let ai = Descriptor::of(&select(&a, 0, i));
                let gi = Descriptor::of(&select(&g, 0, i));
                let ci = Descriptor::of(&select(&c_view, 0, i));
                let b = Descriptor::of(&b_view);
                unsafe {
                    let request = allgather(ai.ptr(), gi.ptr(), 0, 0, 0, team.ptr(), 0);
                    hir_rt_wait(request);
                    matmul(gi.ptr(), b.ptr(), ci.ptr());
                }
                hir_rt_set_current_stream(main);
                hir_rt_sync_stream(stream);
            }
            hir_rt_dealloc(g_ptr.cast());
            device.synchronize().unwrap();
            c.to_f32()
        })
        .unwrap();
    // c[i, r] = a_r[i, 0] @ b, on every rank.
    let b: Vec<f32> = (0..k * n).map(b_of).collect();
    let mut want = Vec::new();
    for i in 0..s {
        for r in 0..d {
            for row in 0..m {
                for col in 0..n {
                    let dot: f32 = (0..k)
                        .map(|p| a_of(r, (i * m + row) * k + p) * b[p * n + col])
                        .sum();
                    want.push(dot);
                }
            }
        }
    }
    assert_eq!(outputs[0], want);
    assert_eq!(outputs[1], want);
    // Slice i's allgather and matmul ran on pool stream i + 1 (track i + 2).
    let slices = world.trace().unwrap().slices();
    for rank in 0..d {
        for stream in 1..=s {
            assert!(
                slices
                    .iter()
                    .any(|x| x.rank == rank && x.tid == stream + 1 && x.name == "matmul_bf16")
            );
        }
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
