//! GPU tests of [`CudaDevice::capture`] and [`CudaDevice::replay`]: a
//! captured call runs nothing until replayed, and each replay computes what
//! the call computes directly, bit for bit. Without a GPU they print why and
//! pass.

use super::tests::{read_f32, world, write_f32};
use super::{CudaDevice, nccl_present};
use crate::device::Device;
use crate::memref::View;
use crate::ops::{CollectiveOp, Kernel, KernelOp, Team, Transfer};
use hir_abi::{Binary, Collective, DType, ReduceKind, Transport};

const LEN: usize = 1 << 16;

fn floats(device: &CudaDevice, ptr: *mut u8) -> Vec<f32> {
    read_f32(device, ptr, LEN)
}

fn fill(device: &CudaDevice, ptr: *mut u8, value: impl Fn(usize) -> f32) {
    write_f32(device, ptr, LEN, value)
}

/// Four slices on pool streams, forked from stream 0 and joined back:
/// `t = a + b; c = t; d = t * a` per slice (`t` a fresh temporary), then (with NCCL) an allreduce of `d`
/// over the one-rank team into `e`, waited on stream 0.
fn program(device: &CudaDevice, p: &[*mut u8], nccl: bool) {
    let slice = LEN / 4;
    let part = |ptr: *mut u8, i: usize| {
        View::contiguous(DType::F32, ptr.wrapping_add(i * slice * 4), &[slice])
    };
    let main = device.current_stream();
    for i in 0..4 {
        let stream = device.stream_from_pool(i);
        device.set_current_stream(stream).unwrap();
        device.sync_stream(main).unwrap();
        let compute = |op, inputs, output| {
            device.compute(Kernel { op, inputs, output }).unwrap();
        };
        // A per-slice temporary, freed stream-ordered: the cache hands the
        // capture the blocks the direct run used.
        let temporary = device.alloc(4000, slice * 4).unwrap().as_ptr();
        let t = View::contiguous(DType::F32, temporary, &[slice]);
        compute(
            KernelOp::Binary(Binary::Add),
            vec![part(p[0], i as usize), part(p[1], i as usize)],
            t.clone(),
        );
        compute(KernelOp::Copy, vec![t.clone()], part(p[2], i as usize));
        compute(
            KernelOp::Binary(Binary::Mul),
            vec![t, part(p[0], i as usize)],
            part(p[3], i as usize),
        );
        device.dealloc(temporary).unwrap();
        device.set_current_stream(main).unwrap();
        device.sync_stream(stream).unwrap();
    }
    if nccl {
        let request = device
            .collective(CollectiveOp {
                op: Collective::Allreduce,
                kind: ReduceKind::Sum,
                root: 0,
                axis: 0,
                team: Team::new(&[0], 1).unwrap(),
                backend: Transport::Nccl,
                input: View::contiguous(DType::F32, p[3], &[LEN]),
                output: View::contiguous(DType::F32, p[4], &[LEN]),
            })
            .unwrap();
        device.wait(request).unwrap();
    }
}

#[test]
fn a_captured_call_runs_only_when_replayed_and_replays_match_the_direct_run() {
    let Some(world) = world(1, false) else { return };
    let nccl = nccl_present();
    world
        .run(|device| {
            let p: Vec<*mut u8> = (0..5)
                .map(|i| device.alloc(2000 + i, LEN * 4).unwrap().as_ptr())
                .collect();
            fill(device, p[0], |i| (i % 97) as f32 * 0.25 - 3.0);
            fill(device, p[1], |i| (i % 89) as f32 * 0.5 + 1.0);
            let outputs = [2, 3, 4];
            let nan = |device: &CudaDevice| {
                for &o in &outputs {
                    fill(device, p[o], |_| f32::NAN);
                }
            };
            nan(device);
            program(device, &p, nccl);
            device.synchronize().unwrap();
            let direct: Vec<Vec<f32>> = outputs.iter().map(|&o| floats(device, p[o])).collect();
            assert!(direct[1].iter().all(|x| x.is_finite()));

            nan(device);
            let graph = device.capture(|| program(device, &p, nccl)).unwrap();
            device.synchronize().unwrap();
            assert!(
                floats(device, p[3]).iter().all(|x| x.is_nan()),
                "capturing ran the work"
            );
            for replay in 0..3 {
                device.replay(&graph).unwrap();
                device.synchronize().unwrap();
                for (index, &o) in outputs.iter().enumerate() {
                    if o == 4 && !nccl {
                        continue;
                    }
                    let got = floats(device, p[o]);
                    let same = got
                        .iter()
                        .zip(&direct[index])
                        .all(|(a, b)| a.to_bits() == b.to_bits());
                    assert!(
                        same,
                        "replay {replay}: buffer {o} differs from the direct run"
                    );
                }
                nan(device);
            }
            println!("captured and replayed 3 times (NCCL in the graph: {nccl})");
        })
        .unwrap();
}

#[test]
fn a_barrier_in_a_capture_is_refused() {
    let Some(world) = world(1, false) else { return };
    world
        .run(|device| {
            let team = Team::new(&[0], 1).unwrap();
            let mut refused = None;
            let captured = device.capture(|| {
                refused = Some(device.barrier(team.clone(), Transport::Nccl));
            });
            assert!(captured.is_ok(), "a refusal leaves the capture usable");
            let message = refused.unwrap().expect_err("refused").to_string();
            assert!(message.contains("cannot be captured"), "{message}");
            println!("{message}");
        })
        .unwrap();
}

const RING: usize = 1 << 14;
const CHUNKS: usize = 4;

/// A two-rank exchange over CUDA-IPC in [`CHUNKS`] chunks: on a pool
/// stream forked from stream 0, receive the other rank's chunks of `x` into
/// `y` and send this rank's; on another pool stream, which the call never
/// forks (as a lowered ring waits for a transfer where it uses it), wait for
/// each chunk and compute `z = x + y`; stream 0 joins both. `p` is
/// `[x, y, z]`.
fn ipc_ring(device: &CudaDevice, p: &[*mut u8]) {
    let team = Team::new(&[0, 1], 2).unwrap();
    let peer = 1 - device.rank();
    let whole = |ptr| View::contiguous(DType::F32, ptr, &[RING]);
    for &buffer in &p[..2] {
        device
            .share_mem_handle(whole(buffer), team.clone())
            .unwrap();
    }
    let chunk = RING / CHUNKS;
    let part = |ptr: *mut u8, i: usize| {
        View::contiguous(DType::F32, ptr.wrapping_add(i * chunk * 4), &[chunk])
    };
    let transfer = |buffer| Transfer {
        buffer,
        peer,
        team: team.clone(),
        backend: Transport::Cuda,
    };
    let main = device.current_stream();
    let (posting, waiting) = (device.stream_from_pool(0), device.stream_from_pool(1));
    device.set_current_stream(posting).unwrap();
    device.sync_stream(main).unwrap();
    let requests: Vec<_> = (0..CHUNKS)
        .map(|i| {
            let received = device.recv(transfer(part(p[1], i))).unwrap();
            (received, device.send(transfer(part(p[0], i))).unwrap())
        })
        .collect();
    device.set_current_stream(waiting).unwrap();
    for (i, (received, sent)) in requests.into_iter().enumerate() {
        device.wait(received).unwrap();
        device.wait(sent).unwrap();
        device
            .compute(Kernel {
                op: KernelOp::Binary(Binary::Add),
                inputs: vec![part(p[0], i), part(p[1], i)],
                output: part(p[2], i),
            })
            .unwrap();
    }
    device.set_current_stream(main).unwrap();
    device.sync_stream(waiting).unwrap();
    device.sync_stream(posting).unwrap();
}

/// Rank `rank`'s `x` in run `run`: distinct per rank and run, exact in f32.
fn ring_input(rank: usize, run: usize) -> impl Fn(usize) -> f32 {
    move |i| ((i * 7 + run * 13 + rank * 1000) % 4096) as f32
}

#[test]
fn a_cuda_ipc_ring_replays_a_thousand_times_with_new_inputs() {
    let Some(world) = world(2, false) else { return };
    let replays = 1000;
    world
        .run(|device| {
            let rank = device.rank();
            let p: Vec<*mut u8> = (0..3)
                .map(|i| device.alloc(5000 + i, RING * 4).unwrap().as_ptr())
                .collect();
            let check = |run: usize, how: &str| {
                let got = floats_of(device, p[2]);
                let (mine, theirs) = (ring_input(rank, run), ring_input(1 - rank, run));
                if let Some(i) = (0..RING).find(|&i| got[i] != mine(i) + theirs(i)) {
                    panic!(
                        "rank {rank}, run {run} ({how}): z[{i}] = {} where {} was expected",
                        got[i],
                        mine(i) + theirs(i)
                    );
                }
            };
            let start = |run: usize| {
                write_f32(device, p[0], RING, ring_input(rank, run));
                write_f32(device, p[2], RING, |_| f32::NAN);
            };
            start(0);
            ipc_ring(device, &p);
            device.synchronize().unwrap();
            check(0, "direct");
            let graph = device.capture(|| ipc_ring(device, &p)).unwrap();
            let began = std::time::Instant::now();
            for run in 1..=replays {
                start(run);
                if run == replays / 2 {
                    // A direct call between replays takes the next numbers.
                    ipc_ring(device, &p);
                } else {
                    device.replay(&graph).unwrap();
                }
                device.synchronize().unwrap();
                check(
                    run,
                    if run == replays / 2 {
                        "direct"
                    } else {
                        "replay"
                    },
                );
            }
            println!(
                "rank {rank}: {replays} checked runs of a captured CUDA-IPC ring in {:.1} ms",
                began.elapsed().as_secs_f64() * 1e3
            );
        })
        .unwrap();
}

fn floats_of(device: &CudaDevice, ptr: *mut u8) -> Vec<f32> {
    read_f32(device, ptr, RING)
}

/// The same exchange captured on each rank's own stream as a library op's
/// caller captures it (`torch.cuda.graph`): nothing renumbers the flags
/// before the caller's replays, which must each be right with new inputs.
#[test]
fn a_cuda_ipc_ring_captured_on_callers_streams_replays_a_thousand_times() {
    use super::caller_stream::CallerStream;
    use cudarc::driver::{result as cu, sys};
    let Some(world) = world(2, false) else { return };
    let replays = 1000;
    let buffers: Vec<[usize; 3]> = world
        .run(|device| {
            [0, 1, 2].map(|i| device.alloc(6000 + i, RING * 4).unwrap().as_ptr() as usize)
        })
        .unwrap();
    let pointers = |rank: usize| buffers[rank].map(|address| address as *mut u8);
    let start = |device: &CudaDevice, run: usize| {
        let p = pointers(device.rank());
        write_f32(device, p[0], RING, ring_input(device.rank(), run));
        write_f32(device, p[2], RING, |_| f32::NAN);
    };
    let check = |device: &CudaDevice, run: usize| {
        let rank = device.rank();
        let got = floats_of(device, pointers(rank)[2]);
        let (mine, theirs) = (ring_input(rank, run), ring_input(1 - rank, run));
        let wrong = (0..RING).find(|&i| got[i] != mine(i) + theirs(i));
        assert_eq!(wrong, None, "rank {rank}, run {run}: z = x + the peer's x");
    };
    // The warm-up: a direct call shares the buffers.
    world
        .run(|device| {
            start(device, 0);
            ipc_ring(device, &pointers(device.rank()));
            device.synchronize().unwrap();
            check(device, 0);
        })
        .unwrap();
    let relaxed = sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED;
    // SAFETY (this block and the loop): streams of each rank's bound
    // context, capturing between begin and end; the graphs are destroyed
    // below and the streams once idle.
    let callers: Vec<CallerStream> = world
        .run(|_| unsafe {
            let stream = cu::stream::create(cu::stream::StreamKind::NonBlocking).unwrap();
            cu::stream::begin_capture(stream, relaxed).unwrap();
            stream as CallerStream
        })
        .unwrap();
    world
        .run_on(&callers, |device| {
            ipc_ring(device, &pointers(device.rank()))
        })
        .unwrap();
    let graphs: Vec<(usize, usize)> = world
        .run(|device| unsafe {
            let stream = callers[device.rank()] as sys::CUstream;
            let graph = cu::stream::end_capture(stream).unwrap();
            let exec = cu::graph::instantiate(graph, sys::CUgraphInstantiate_flags(0)).unwrap();
            (graph as usize, exec as usize)
        })
        .unwrap();
    world
        .run(|device| {
            for run in 1..=replays {
                start(device, run);
                let stream = callers[device.rank()] as sys::CUstream;
                // SAFETY: the rank's instantiated graph, on its own stream.
                unsafe {
                    cu::graph::launch(graphs[device.rank()].1 as sys::CUgraphExec, stream).unwrap();
                    cu::stream::synchronize(stream).unwrap();
                }
                check(device, run);
            }
            let (graph, exec) = graphs[device.rank()];
            // SAFETY: destroyed once, the stream idle after its synchronize.
            unsafe {
                cu::graph::exec_destroy(exec as sys::CUgraphExec).unwrap();
                cu::graph::destroy(graph as sys::CUgraph).unwrap();
                cu::stream::destroy(callers[device.rank()] as sys::CUstream).unwrap();
            }
        })
        .unwrap();
    println!("{replays} checked replays of a CUDA-IPC ring captured on the callers' streams");
}
