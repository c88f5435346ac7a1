//! Strangers holding the store's handshake slots cannot keep a job out:
//! 64 and 1024 connections, half idle and half a slow-loris (a byte every
//! 100 ms, which a timeout per read never ends), and a job of three ranks
//! still joins within 2 s; and a handshake ends at its deadline however
//! slowly its bytes come.

use super::protocol::{MAX_HANDSHAKE_FRAME, Verdict, read_frame};
use super::store::{HANDSHAKE, MAX_UNPROVEN};
use super::tests::{SECOND, member, server, until};
use super::*;
use std::io::Write;
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Raises this process's descriptor limit towards `wanted`; the limit now.
fn descriptors(wanted: u64) -> u64 {
    // SAFETY: plain system calls on a valid struct.
    unsafe {
        let mut limit: libc::rlimit = std::mem::zeroed();
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
        if limit.rlim_cur < wanted {
            limit.rlim_cur = wanted.min(limit.rlim_max);
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
        limit.rlim_cur
    }
}

#[test]
fn a_slow_loris_does_not_keep_a_job_out() {
    // Room for the strangers' ends, the server's, and the other tests'.
    let limit = descriptors(4096);
    for wanted in [MAX_UNPROVEN, 1024] {
        let strangers = wanted.min(limit.saturating_sub(512) as usize);
        let server = server();
        let streams: Vec<TcpStream> = (0..strangers)
            .map(|_| TcpStream::connect(server.addr()).unwrap())
            .collect();
        // Every stranger was taken in (and, past the slots, evicted).
        until("the strangers to be taken in", || {
            server.refused() + server.open_connections() >= strangers
        });
        // Half of them trickle a hello of 4000 bytes, a byte every 100 ms.
        let trickling: Vec<TcpStream> = streams
            .iter()
            .step_by(2)
            .map(|stream| stream.try_clone().unwrap())
            .collect();
        for mut stream in &trickling {
            let _ = stream.write_all(&4000u32.to_le_bytes());
        }
        let stop = AtomicBool::new(false);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    for mut stream in &trickling {
                        let _ = stream.write_all(b"x");
                    }
                    std::thread::sleep(SECOND / 10);
                }
            });
            let start = Instant::now();
            let ranks: Vec<_> = (0..3)
                .map(|rank| {
                    let addr = server.addr().to_string();
                    scope.spawn(move || {
                        StoreClient::connect(&addr, &member(Some(rank)), None, 10 * SECOND)
                    })
                })
                .collect();
            for rank in ranks {
                rank.join().unwrap().unwrap().goodbye().unwrap();
            }
            let took = start.elapsed();
            stop.store(true, Ordering::Relaxed);
            assert!(
                took < 2 * SECOND,
                "{strangers} strangers delayed the job's start by {took:?}"
            );
            println!("{strangers} strangers: the job's 3 ranks joined in {took:?}");
        });
        assert!(server.failures().is_empty(), "{:?}", server.failures());
        assert!(server.open_connections() <= MAX_UNPROVEN + 3);
    }
}

#[test]
fn a_handshake_ends_at_its_deadline_however_slowly_bytes_come() {
    let server = server();
    let mut stream = TcpStream::connect(server.addr()).unwrap();
    stream.set_read_timeout(Some(HANDSHAKE * 2)).unwrap();
    let start = Instant::now();
    let _challenge = read_frame(&mut stream, MAX_HANDSHAKE_FRAME, None).unwrap();
    // A hello of 4000 bytes, one byte every 200 ms: each read of the server
    // gets a byte well within any timeout per read.
    let mut writer = stream.try_clone().unwrap();
    let trickle = std::thread::spawn(move || {
        let _ = writer.write_all(&4000u32.to_le_bytes());
        while writer.write_all(b"x").is_ok() && start.elapsed() < HANDSHAKE * 2 {
            std::thread::sleep(SECOND / 5);
        }
    });
    let verdict = read_frame(&mut stream, MAX_HANDSHAKE_FRAME, None);
    let took = start.elapsed();
    assert!(
        took >= HANDSHAKE - SECOND / 2 && took < HANDSHAKE + 2 * SECOND,
        "the handshake ended after {took:?}"
    );
    // The verdict, if the refusal got through before the close.
    if let Ok(frame) = verdict
        && let Ok(Verdict::Refused(why)) = Verdict::decode(&frame)
    {
        assert!(why.contains("the handshake's 10s are over"), "{why}");
    }
    drop(stream);
    trickle.join().unwrap();
    assert_eq!(server.refused(), 1);
}
