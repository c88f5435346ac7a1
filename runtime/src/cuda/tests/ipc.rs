//! `cuda` (CUDA-IPC) transfers: a ring against the cpu backend, unshared
//! and re-shared buffers (in one process and across two), and a receive
//! whose send never comes.

use super::*;

/// Team `[0, .., n)` of a device's world.
fn everyone(device: &dyn Device) -> Team {
    let n = device.num_devices();
    Team::new(&(0..n as i64).collect::<Vec<_>>(), n).unwrap()
}

#[test]
fn cuda_ipc_ring_matches_and_reuses_its_shares() {
    let Some(world) = world(2, false) else { return };
    let dtype = DType::BF16;
    let (rows, cols, rounds) = (4, 64, 3);
    // What each round sends ([rounds, rows, cols]), where it lands
    // ([rows, rounds, cols]: a round's slot is a strided slice), and a
    // contiguous landing buffer.
    let buffers = [
        Buffer {
            dtype,
            len: rounds * rows * cols,
        },
        Buffer {
            dtype,
            len: rows * rounds * cols,
        },
        Buffer {
            dtype,
            len: rows * cols,
        },
    ];
    let program = |device: &dyn Device, p: &[*mut u8]| {
        let (rank, n) = (device.rank(), device.num_devices());
        let team = everyone(device);
        let (next, prev) = ((rank + 1) % n, (rank + n - 1) % n);
        for (&base, buffer) in p.iter().zip(&buffers) {
            let whole = dense(dtype, base, &[buffer.len]);
            device.share_mem_handle(whole, team.clone()).unwrap();
        }
        // Sharing again (here a view inside a shared buffer) is free.
        let first = dense(dtype, p[0], &[rows, cols]);
        device.share_mem_handle(first, team.clone()).unwrap();
        let transfer = |buffer, peer| Transfer {
            buffer,
            peer,
            team: team.clone(),
            backend: Transport::Cuda,
        };
        let main = device.current_stream();
        for round in 0..rounds {
            let source = view(dtype, p[0], round * rows * cols, &[rows, cols], &[cols, 1]);
            let slot = view(
                dtype,
                p[1],
                round * cols,
                &[rows, cols],
                &[rounds * cols, 1],
            );
            let stream = device.stream_from_pool(round as i64);
            device.set_current_stream(stream).unwrap();
            device.sync_stream(main).unwrap();
            if round == 1 {
                // In a group any order completes: the send is posted first.
                device.start_coalescing().unwrap();
                device.send(transfer(source.clone(), next)).unwrap();
                device.recv(transfer(slot.clone(), prev)).unwrap();
                let group = device.end_coalescing().unwrap();
                device.wait(group).unwrap();
            } else {
                let received = device.recv(transfer(slot.clone(), prev)).unwrap();
                let sent = device.send(transfer(source.clone(), next)).unwrap();
                device.wait(received).unwrap();
                device.wait(sent).unwrap();
            }
            // The source is free again and the slot holds the data.
            run(device, KernelOp::Unary(Unary::Neg), vec![slot], source);
            device.set_current_stream(main).unwrap();
            device.sync_stream(stream).unwrap();
        }
        // Contiguous into contiguous of another shape (the copy engine), and
        // a transposed view into a strided one of another shape (staged,
        // then the copy kernel writes the peer's memory).
        let into_dense = device
            .recv(transfer(dense(dtype, p[2], &[rows * cols]), prev))
            .unwrap();
        let strided = view(dtype, p[1], 0, &[2, 2 * cols], &[2 * rounds * cols, 1]);
        let into_strided = device.recv(transfer(strided, prev)).unwrap();
        let block = dense(dtype, p[0], &[rows, cols]);
        let transposed = view(dtype, p[0], 0, &[cols, rows], &[1, cols]);
        let sent = [
            device.send(transfer(block, next)).unwrap(),
            device.send(transfer(transposed, next)).unwrap(),
        ];
        for request in [into_dense, into_strided].into_iter().chain(sent) {
            device.wait(request).unwrap();
        }
    };
    compare("cuda ipc ring", &world, &buffers, Match::Bits, &program);
    // The same buffers again: the shares hit the cache, the counters go on.
    compare(
        "cuda ipc ring, second run",
        &world,
        &buffers,
        Match::Bits,
        &program,
    );
}

#[test]
fn a_cuda_transfer_of_an_unshared_buffer_says_so() {
    let Some(world) = world(2, false) else { return };
    let errors = world
        .run(|device| {
            let team = everyone(device);
            let peer = 1 - device.rank();
            let transfer = |ptr| Transfer {
                buffer: dense(DType::F32, ptr, &[64]),
                peer,
                team: team.clone(),
                backend: Transport::Cuda,
            };
            let shared = device.alloc(1, 256).unwrap().as_ptr();
            let other = device.alloc(2, 256).unwrap().as_ptr();
            let before = device.recv(transfer(shared)).unwrap_err().to_string();
            device
                .share_mem_handle(dense(DType::F32, shared, &[64]), team.clone())
                .unwrap();
            let after = device.send(transfer(other)).unwrap_err().to_string();
            (before, after, other as usize)
        })
        .unwrap();
    for (rank, (before, after, other)) in errors.into_iter().enumerate() {
        let peer = 1 - rank;
        assert_eq!(
            before,
            format!(
                "recv from rank {peer}: no buffer was shared with share_mem_handle on team [0, 1]"
            )
        );
        assert_eq!(
            after,
            format!(
                "send to rank {peer}: buffer (256 bytes at {other:#x}) was not shared with \
                 share_mem_handle on team [0, 1]"
            )
        );
    }
}

/// What [`reshare_after_free`] saw on a rank.
struct Reshared {
    rank: usize,
    /// Whether the new buffer took the freed one's address.
    reused: bool,
    address: usize,
    /// The error of a receive into the new buffer before it was shared.
    unshared: String,
    /// What the new buffer received once shared.
    landed: Vec<f64>,
}

const RESHARED_LEN: usize = 1 << 16;

/// Shares a launcher's buffer, frees it, makes a new one (at its address, as
/// CUDA's allocator tends to), receives into it unshared, then shared.
fn reshare_after_free(device: &CudaDevice) -> Reshared {
    let len = RESHARED_LEN;
    let team = everyone(device);
    let (rank, peer) = (device.rank(), 1 - device.rank());
    let whole = |ptr| dense(DType::F32, ptr, &[len]);
    let transfer = |ptr| Transfer {
        buffer: whole(ptr),
        peer,
        team: team.clone(),
        backend: Transport::Cuda,
    };
    let first = device.buffer(4 * len).unwrap();
    let freed_at = first.ptr();
    device
        .share_mem_handle(whole(freed_at), team.clone())
        .unwrap();
    drop(first);
    let second = device.buffer(4 * len).unwrap();
    let address = second.ptr();
    let unshared = device.recv(transfer(address)).unwrap_err().to_string();
    device
        .share_mem_handle(whole(address), team.clone())
        .unwrap();
    let source = device.alloc(1, 4 * len).unwrap().as_ptr();
    let values: Vec<u8> = (0..len)
        .flat_map(|i| ((rank * len + i) as f32 + 0.5).to_le_bytes())
        .collect();
    device.copy_to_device(source, &values).unwrap();
    device
        .share_mem_handle(whole(source), team.clone())
        .unwrap();
    let received = device.recv(transfer(address)).unwrap();
    let sent = device.send(transfer(source)).unwrap();
    device.wait(received).unwrap();
    device.wait(sent).unwrap();
    device.synchronize().unwrap();
    let mut bytes = vec![0u8; 4 * len];
    device.copy_from_device(address, &mut bytes).unwrap();
    Reshared {
        rank,
        reused: address == freed_at,
        address: address as usize,
        unshared,
        landed: decode(DType::F32, &bytes),
    }
}

fn check_reshared(seen: &Reshared) {
    let peer = 1 - seen.rank;
    let freed = if seen.reused {
        " (an allocation shared at its address was freed since)"
    } else {
        ""
    };
    assert_eq!(
        seen.unshared,
        format!(
            "recv from rank {peer}: buffer ({} bytes at {:#x}) was not shared with \
             share_mem_handle on team [0, 1]{freed}",
            4 * RESHARED_LEN,
            seen.address
        )
    );
    let expected: Vec<f64> = (0..RESHARED_LEN)
        .map(|i| (peer * RESHARED_LEN + i) as f64 + 0.5)
        .collect();
    assert!(
        seen.landed == expected,
        "rank {}'s new buffer does not hold its peer's data",
        seen.rank
    );
    println!(
        "rank {}: the new buffer reused the freed one's address: {}",
        seen.rank, seen.reused
    );
}

/// A launcher may free a shared buffer and get a new one at its address: the
/// new one moves nothing until it is shared itself, and then its transfers
/// land in it.
#[test]
fn a_buffer_where_a_shared_one_was_freed_is_shared_anew() {
    let Some(world) = world(2, false) else { return };
    let seen = world.run(reshare_after_free).unwrap();
    seen.iter().for_each(check_reshared);
}

/// The child processes' variable: the rank to run.
const RESHARED_RANK: &str = "HIR_TEST_RESHARED_RANK";

/// The same across processes, where a rank maps its peer's memory from IPC
/// handles: the mapping of the freed allocation must give way to the new
/// one's. The test runs itself as two child processes, one rank each.
#[test]
fn across_processes_a_buffer_where_a_shared_one_was_freed_is_shared_anew() {
    const NAME: &str =
        "cuda::tests::ipc::across_processes_a_buffer_where_a_shared_one_was_freed_is_shared_anew";
    if std::env::var(RESHARED_RANK).is_ok() {
        let env = crate::bootstrap::Env::from_env().unwrap().unwrap();
        let group = crate::bootstrap::ProcessGroup::join(env, Duration::from_secs(30)).unwrap();
        let world = World::join(&group, Config::new(2, 2)).unwrap();
        let seen = world.run(reshare_after_free).unwrap();
        seen.iter().for_each(check_reshared);
        drop(world);
        group.goodbye();
        group.finish();
        return;
    }
    if !present(2, false) {
        return;
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut children: Vec<_> = (0..2)
        .map(|rank| {
            std::process::Command::new(std::env::current_exe().unwrap())
                .args([NAME, "--exact", "--nocapture", "--test-threads=1"])
                .env(RESHARED_RANK, "1")
                .env("RANK", rank.to_string())
                .env("WORLD_SIZE", "2")
                .env("MASTER_PORT", port.to_string())
                .spawn()
                .unwrap()
        })
        .collect();
    let deadline = std::time::Instant::now() + Duration::from_secs(90);
    let mut codes = vec![None; 2];
    while codes.iter().any(Option::is_none) && std::time::Instant::now() < deadline {
        for (child, code) in children.iter_mut().zip(&mut codes) {
            if code.is_none() {
                *code = child.try_wait().unwrap();
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    for (rank, (child, code)) in children.iter_mut().zip(codes).enumerate() {
        if code.is_none() {
            let _ = child.kill();
        }
        assert!(
            code.is_some_and(|code| code.success()),
            "rank {rank}'s process: {code:?}"
        );
    }
}

/// A receive whose sender never sends leaves the receiver's stream waiting on
/// its flag: the run ends with an error naming the stream after the timeout,
/// and dropping the world does not hang.
#[test]
fn a_receive_without_its_send_times_out_instead_of_hanging() {
    let Some(probe_world) = world(2, false) else {
        return;
    };
    drop(probe_world);
    let _turn = serial();
    let world = World::new(Config {
        timeout: std::time::Duration::from_secs(2),
        ..Config::new(2, 2)
    })
    .unwrap();
    let bytes = 256;
    let result = world.run(|device| {
        let team = Team::new(&[0, 1], 2).unwrap();
        let base = device.alloc(0, bytes).unwrap().as_ptr();
        let buffer = dense(DType::F32, base, &[bytes / 4]);
        device
            .share_mem_handle(buffer.clone(), team.clone())
            .unwrap();
        if device.rank() == 0 {
            let transfer = Transfer {
                buffer,
                peer: 1,
                team,
                backend: Transport::Cuda,
            };
            let request = device.recv(transfer).unwrap();
            device.wait(request).unwrap();
        }
    });
    let error = result.unwrap_err().to_string();
    println!("stuck receive: {error}");
    assert!(
        error.contains("rank 0") && error.contains("for stream 0 to finish"),
        "{error}"
    );
    drop(world);
}
