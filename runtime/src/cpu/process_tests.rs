//! Ranks of the cpu backend in different worlds, as ranks in processes are:
//! each world holds one rank and reaches the others through HIR's TCP store
//! (`links.rs`). Their collectives and transfers must give what the same
//! data summed, gathered and moved by hand gives.

use super::tests::Known;
use super::{Config, World};
use crate::bootstrap::tests::server_of;
use crate::bootstrap::{Member, StoreClient};
use crate::device::Device;
use crate::error::Error;
use crate::memref::View;
use crate::ops::{CollectiveOp, Team, Transfer};
use hir_abi::{Collective, DType, ReduceKind, Transport};
use std::sync::Arc;
use std::time::Duration;

const RANKS: usize = 3;
const N: usize = 6;

/// What one rank got: allreduce, allgather, reduce-scatter, broadcast from
/// rank 1, and the ring receive from its left neighbour.
type Got = [Vec<f32>; 5];

/// One world per rank over one store, each running `body` on its rank.
fn run_ranks<T: Send>(
    body: impl Fn(&dyn Device) -> T + Sync,
) -> Vec<crate::error::Result<T, crate::RunError>> {
    let server = server_of(RANKS);
    let addr = server.addr().to_string();
    // When each rank got where: printed, so that a failed run shows whether
    // a rank started late or waited in vain (see docs/Runtime.md, "Verified").
    let start = std::time::Instant::now();
    std::thread::scope(|scope| {
        let threads: Vec<_> = (0..RANKS)
            .map(|rank| {
                let (addr, body) = (addr.clone(), &body);
                scope.spawn(move || {
                    let member = Member::new(crate::bootstrap::tests::secret(), RANKS, Some(rank));
                    let timeout = Duration::from_secs(10);
                    let client =
                        Arc::new(StoreClient::connect(&addr, &member, None, timeout).unwrap());
                    let connected = start.elapsed();
                    let config = Config {
                        timeout,
                        ..Config::new(RANKS, 2)
                    };
                    let world = World::process(config, rank, client.clone()).unwrap();
                    assert_eq!(world.local_ranks(), vec![rank]);
                    let started = start.elapsed();
                    let got = world.run(body).map(|mut values| values.remove(0));
                    println!(
                        "rank {rank}: connected at {connected:?}, world at {started:?}, \
                         run ended at {:?} ({})",
                        start.elapsed(),
                        if got.is_ok() { "ok" } else { "failed" }
                    );
                    // Done: its connection may close while the others still
                    // read what it left in the store.
                    client.goodbye().unwrap();
                    got
                })
            })
            .collect();
        threads
            .into_iter()
            .map(|thread| thread.join().unwrap())
            .collect()
    })
}

fn input(rank: usize) -> Vec<f32> {
    (0..N).map(|e| (rank * 10 + e) as f32 * 0.5).collect()
}

fn collectives(device: &dyn Device) -> Got {
    let rank = device.rank();
    let team = Team::new(&(0..RANKS as i64).collect::<Vec<_>>(), RANKS).unwrap();
    let mine = input(rank);
    let outputs = [
        vec![0f32; N],
        vec![0f32; N * RANKS],
        vec![0f32; N / RANKS],
        vec![0f32; N],
        vec![0f32; N],
    ];
    let buffers = std::iter::once(&mine).chain(&outputs);
    let _known = Known::new(
        device,
        buffers.map(|buffer| (buffer.as_ptr().cast(), buffer.len() * 4)),
    );
    let view = |buffer: &Vec<f32>| {
        View::contiguous(
            DType::F32,
            buffer.as_ptr().cast_mut().cast(),
            &[buffer.len()],
        )
    };
    let ops = [
        (Collective::Allreduce, 0),
        (Collective::Allgather, 1),
        (Collective::ReduceScatter, 2),
        (Collective::Broadcast, 3),
    ];
    for (op, output) in ops {
        let op = CollectiveOp {
            op,
            kind: ReduceKind::Sum,
            root: if op == Collective::Broadcast { 1 } else { 0 },
            axis: 0,
            team: team.clone(),
            backend: Transport::Nccl,
            input: view(&mine),
            output: view(&outputs[output]),
        };
        let request = device.collective(op).unwrap();
        device.wait(request).unwrap();
    }
    // A ring: each rank sends its input right and receives from its left.
    let transfer = |buffer: &Vec<f32>, peer: usize| Transfer {
        buffer: view(buffer),
        peer,
        team: team.clone(),
        backend: Transport::Nccl,
    };
    device.start_coalescing().unwrap();
    device.send(transfer(&mine, (rank + 1) % RANKS)).unwrap();
    device
        .recv(transfer(&outputs[4], (rank + RANKS - 1) % RANKS))
        .unwrap();
    let group = device.end_coalescing().unwrap();
    device.wait(group).unwrap();
    device.barrier(team, Transport::Nccl).unwrap();
    device.synchronize().unwrap();
    outputs
}

#[test]
fn ranks_in_processes_compute_what_the_data_gives() {
    let got = run_ranks(collectives);
    let sum: Vec<f32> = (0..N)
        .map(|e| (0..RANKS).map(|rank| input(rank)[e]).sum())
        .collect();
    let gathered: Vec<f32> = (0..RANKS).flat_map(input).collect();
    for (rank, got) in got.into_iter().enumerate() {
        let got = got.unwrap_or_else(|error| panic!("rank {rank}: {error}"));
        let chunk = N / RANKS;
        let expected: Got = [
            sum.clone(),
            gathered.clone(),
            sum[rank * chunk..(rank + 1) * chunk].to_vec(),
            input(1),
            input((rank + RANKS - 1) % RANKS),
        ];
        assert_eq!(got, expected, "rank {rank}");
    }
}

#[test]
fn ranks_in_processes_that_post_different_collectives_fail_naming_both() {
    let got = run_ranks(|device| {
        let rank = device.rank();
        // Rank 2 brings one element more than the others.
        let length = if rank == 2 { N + 1 } else { N };
        let (input, mut output) = (vec![1f32; length], vec![0f32; length]);
        let _known = Known::new(
            device,
            [&input, &output].map(|buffer| (buffer.as_ptr().cast(), buffer.len() * 4)),
        );
        let view = |buffer: &[f32]| {
            View::contiguous(
                DType::F32,
                buffer.as_ptr().cast_mut().cast(),
                &[buffer.len()],
            )
        };
        let op = CollectiveOp {
            op: Collective::Allreduce,
            kind: ReduceKind::Sum,
            root: 0,
            axis: 0,
            team: Team::new(&[0, 1, 2], RANKS).unwrap(),
            backend: Transport::Nccl,
            input: view(&input),
            output: view(&output),
        };
        let request = device.collective(op).unwrap();
        let _ = device.wait(request);
        device.synchronize().unwrap();
        output.truncate(0);
    });
    for (rank, result) in got.into_iter().enumerate() {
        let error = result
            .expect_err("a mismatch fails every rank")
            .first()
            .error
            .clone();
        let Error::Mismatch(message) = &error else {
            panic!("rank {rank}: {error}");
        };
        assert!(
            message.contains("rank 2 posted hir_rt_allreduce_f32 of [7]")
                && message.contains("rank 0 posted hir_rt_allreduce_f32 of [6]"),
            "rank {rank}: {message}"
        );
    }
}
