//! The mailboxes across real processes: this test binary started again as
//! two ranks (`mailbox_process_rank`) of a process group, through the
//! bootstrap's process-test harness (the cuda backend stands on the
//! bootstrap, not the other way round).

use super::Mailbox;
use crate::bootstrap::process_tests::{ROLE, spawn, wait_all};
use crate::bootstrap::tests::{SECOND, server_of};
use crate::bootstrap::{Env, ProcessGroup};
use crate::core::bootstrap::Bootstrap;
use crate::ops::Team;
use std::path::Path;
use std::time::Instant;

/// Starts this test binary as rank `rank` of 2, running
/// `mailbox_process_rank` with `role`.
fn spawn_rank(rank: usize, role: &str, port: u16) -> std::process::Child {
    spawn(
        "cuda::mailbox::process_tests::mailbox_process_rank",
        rank,
        2,
        port,
        true,
        role,
    )
}

/// A rank process (started by the tests below; does nothing otherwise).
#[test]
fn mailbox_process_rank() {
    let Ok(role) = std::env::var(ROLE) else {
        return;
    };
    let env = Env::from_env().unwrap().unwrap();
    let group = ProcessGroup::join(env, 10 * SECOND).unwrap();
    mailbox_rank(&group, &role);
}

/// A rank of the mailbox tests: the two ranks connect their mailboxes
/// through the store; rank 0 then posts messages for rank 1 (`mailbox`), or
/// exits without posting (`mailbox-exit`).
fn mailbox_rank(group: &ProcessGroup, role: &str) {
    let rank = group.rank();
    let bootstrap = group.bootstrap();
    let team = Team::new(&[0, 1], 2).unwrap();
    let mut mailbox = Mailbox::create(&team, rank).unwrap();
    let name = mailbox.name().unwrap().to_string();
    let names = bootstrap
        .all_gather(&team, 0, rank, name.into_bytes())
        .unwrap();
    let names: Vec<String> = names
        .into_iter()
        .map(|name| String::from_utf8(name).unwrap())
        .collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    mailbox.connect(&refs, &*bootstrap).unwrap();
    // Its own region's name is gone (a peer's may still be there a moment).
    let path = Path::new("/dev/shm").join(names[rank].trim_start_matches('/'));
    assert!(!path.exists(), "{} is still linked", path.display());
    println!("rank {rank} connected");
    let count = 200;
    let outcome = match (rank, role) {
        (0, "mailbox-exit") => std::process::exit(0),
        (0, _) => (0..count).try_for_each(|number| {
            mailbox.post(1, number, &[number, 7], &*bootstrap, || "post".into())
        }),
        _ => (0..count).try_for_each(|number| {
            let taken = mailbox.take(0, number, &*bootstrap, || "take".into())?;
            assert_eq!(taken, [number, 7]);
            Ok(())
        }),
    };
    match outcome {
        Ok(()) => {
            println!("rank {rank} passed {count} messages");
            group.finish();
        }
        Err(error) => {
            println!("rank {rank}: {error}");
            group.finish();
            std::process::exit(3);
        }
    }
}

#[test]
fn mailboxes_carry_messages_between_processes() {
    let server = server_of(2);
    let children = (0..2)
        .map(|rank| spawn_rank(rank, "mailbox", server.port()))
        .collect();
    for (rank, (code, output)) in wait_all(children).into_iter().enumerate() {
        assert_eq!(code, 0, "rank {rank}:\n{output}");
        assert!(
            output.contains(&format!("rank {rank} passed 200 messages")),
            "{output}"
        );
    }
}

#[test]
fn a_mailbox_wait_ends_when_the_peer_process_exits() {
    let server = server_of(2);
    let start = Instant::now();
    let children = (0..2)
        .map(|rank| spawn_rank(rank, "mailbox-exit", server.port()))
        .collect();
    let results = wait_all(children);
    assert_eq!(results[0].0, 0, "{}", results[0].1);
    let (code, output) = &results[1];
    assert_eq!(*code, 3, "{output}");
    assert!(output.contains("rank 1 connected"), "{output}");
    assert!(
        output.contains("rank 1: gave up: rank 0 exited (connection closed)"),
        "{output}"
    );
    // The ranks' timeout is 10 s: the failure, not the timeout, ended it.
    assert!(start.elapsed() < 8 * SECOND, "{:?}", start.elapsed());
}
