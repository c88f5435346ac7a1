//! The bootstrap across real processes: this test binary started again as
//! ranks (see `process_rank`), which meet through a store, exchange, fail,
//! exit early or stop. Other modules' process tests (the cuda mailboxes)
//! start their ranks with [`spawn`].

use super::tests::{Fake, SECOND, secret, server};
use super::*;
use std::process::{Command, Stdio};
use std::time::Instant;

/// The environment variable that makes a rank test (`process_rank`, or
/// another module's) act as a rank.
pub(crate) const ROLE: &str = "HIR_BOOTSTRAP_TEST_ROLE";

/// Starts this test binary as rank `rank` of `world`, running
/// `process_rank` with `role`.
fn spawn_rank(
    rank: usize,
    world: usize,
    port: u16,
    agent: bool,
    role: &str,
) -> std::process::Child {
    spawn(
        "bootstrap::process_tests::process_rank",
        rank,
        world,
        port,
        agent,
        role,
    )
}

/// Starts this test binary as rank `rank` of `world`, running the test
/// `test` (which joins the group on [`ROLE`]) with `role`.
pub(crate) fn spawn(
    test: &str,
    rank: usize,
    world: usize,
    port: u16,
    agent: bool,
    role: &str,
) -> std::process::Child {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(ROLE, role)
        .env("RANK", rank.to_string())
        .env("WORLD_SIZE", world.to_string())
        .env("MASTER_ADDR", "127.0.0.1")
        .env("MASTER_PORT", port.to_string())
        .env(SECRET_VAR, secret().value())
        .env_remove(AGENT_STORE)
        .env_remove(STORE_PORT)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if agent {
        command.env(AGENT_STORE, "1");
    }
    command.spawn().unwrap()
}

/// Waits for every child (at most 60 s) and returns its exit code and output.
pub(crate) fn wait_all(children: Vec<std::process::Child>) -> Vec<(i32, String)> {
    let deadline = Instant::now() + 60 * SECOND;
    let mut children = children;
    loop {
        if children
            .iter_mut()
            .all(|child| child.try_wait().unwrap().is_some())
        {
            break;
        }
        if Instant::now() >= deadline {
            for child in &mut children {
                let _ = child.kill();
            }
            panic!("the rank processes did not finish within 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    children
        .into_iter()
        .map(|child| {
            let output = child.wait_with_output().unwrap();
            (
                output.status.code().unwrap_or(-1),
                String::from_utf8_lossy(&output.stdout).into_owned()
                    + &String::from_utf8_lossy(&output.stderr),
            )
        })
        .collect()
}

/// A rank process (started by the tests below; does nothing otherwise).
#[test]
fn process_rank() {
    let Ok(role) = std::env::var(ROLE) else {
        return;
    };
    let env = Env::from_env().unwrap().unwrap();
    let rank = env.rank;
    let group = ProcessGroup::join(env, 10 * SECOND).unwrap();
    let all = group.all_gather("ranks", vec![rank as u8]).unwrap();
    assert_eq!(
        all,
        (0..group.world_size() as u8)
            .map(|r| vec![r])
            .collect::<Vec<_>>()
    );
    println!("rank {rank} gathered {all:?}");
    // Under a watchdog whose heartbeat the store checks; rank 1 then stops.
    let _watchdog = (role == "stop").then(|| {
        let config = WatchdogConfig {
            // Long enough that a loaded machine does not starve the others'.
            heartbeat: 2 * SECOND,
            grace: None,
            ..WatchdogConfig::new(10 * SECOND)
        };
        let watchdog = group.watch(Fake::new(rank), config).unwrap();
        if rank == 1 {
            // SAFETY: a plain system call.
            unsafe { libc::raise(libc::SIGSTOP) };
        }
        watchdog
    });
    if role == "exit" && rank == 1 {
        // Gone without a goodbye, as a crash would be.
        std::process::exit(0);
    }
    match group.barrier("end") {
        Ok(()) => {
            println!("rank {rank} passed the barrier");
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
fn ranks_in_processes_meet_through_rank_0s_store() {
    // A free port for rank 0 to host the store on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let children = (0..3)
        .map(|rank| spawn_rank(rank, 3, port, false, "ok"))
        .collect();
    for (rank, (code, output)) in wait_all(children).into_iter().enumerate() {
        assert_eq!(code, 0, "rank {rank}:\n{output}");
        assert!(
            output.contains(&format!("rank {rank} gathered [[0], [1], [2]]")),
            "{output}"
        );
        assert!(
            output.contains(&format!("rank {rank} passed the barrier")),
            "{output}"
        );
    }
}

#[test]
fn a_rank_process_that_exits_early_brings_the_others_down() {
    // The store in this process, as a launcher hosts it.
    let server = server();
    let children = (0..3)
        .map(|rank| spawn_rank(rank, 3, server.port(), true, "exit"))
        .collect();
    let results = wait_all(children);
    assert_eq!(results[1].0, 0, "{}", results[1].1);
    for rank in [0, 2] {
        let (code, output) = &results[rank];
        assert_eq!(*code, 3, "rank {rank}:\n{output}");
        assert!(
            output.contains(&format!(
                "rank {rank}: gave up: rank 1 exited (connection closed)"
            )),
            "{output}"
        );
    }
    assert_eq!(
        server.failures()[0].to_string(),
        "rank 1 exited (connection closed)"
    );
}

#[test]
fn a_stopped_rank_process_is_named_by_the_store() {
    let server = server();
    let began = Instant::now();
    let mut children: Vec<_> = (0..3)
        .map(|rank| spawn_rank(rank, 3, server.port(), true, "stop"))
        .collect();
    let mut stopped = children.remove(1);
    let results = wait_all(children);
    stopped.kill().unwrap();
    stopped.wait().unwrap();
    for (rank, (code, output)) in [0, 2].into_iter().zip(results) {
        assert_eq!(code, 3, "rank {rank}:\n{output}");
        assert!(
            output.contains(&format!(
                "rank {rank}: gave up: rank 1 stopped responding: its watchdog was silent for"
            )),
            "{output}"
        );
    }
    assert!(
        server.failures()[0]
            .to_string()
            .starts_with("rank 1 stopped responding"),
        "{:?}",
        server.failures()
    );
    // The heartbeat (2 s), not the ranks' timeout (10 s), ended it.
    assert!(began.elapsed() < 8 * SECOND, "{:?}", began.elapsed());
}

/// The child process of `stopping_the_whole_job_is_not_a_failure`.
const WHOLE: &str = "HIR_BOOTSTRAP_TEST_WHOLE_JOB";

/// A store and a watchdog-like client in one process, stopped together (as
/// Ctrl-Z stops a launcher and its ranks) for 2.5 heartbeats: when they go
/// on, nobody is blamed.
#[test]
fn stopping_the_whole_job_is_not_a_failure() {
    if std::env::var(WHOLE).is_ok() {
        return whole_job();
    }
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "bootstrap::process_tests::stopping_the_whole_job_is_not_a_failure",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(WHOLE, "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    // After the harness's own words (`test NAME ... `).
    while !line.trim_end().ends_with("polling") {
        line.clear();
        let read = std::io::BufRead::read_line(&mut stdout, &mut line).unwrap();
        assert!(read > 0, "the child ended before it polled");
    }
    let pid = child.id() as libc::pid_t;
    // SAFETY: plain system calls on our child.
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    std::thread::sleep(5 * SECOND / 2);
    unsafe { libc::kill(pid, libc::SIGCONT) };
    let output = child.wait_with_output().unwrap();
    let mut text = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut text).unwrap();
    text += &String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{text}");
    assert!(text.contains("no failure after the stop"), "{text}");
}

fn whole_job() {
    let server = server();
    let client = StoreClient::connect_watched(
        &server.addr().to_string(),
        &Member::new(secret(), 3, Some(1)),
        None,
        Some(SECOND),
        5 * SECOND,
    )
    .unwrap();
    let poll = || {
        for _ in 0..10 {
            assert!(
                client
                    .failures(Duration::from_millis(50))
                    .unwrap()
                    .is_empty()
            );
        }
    };
    poll();
    println!("polling");
    // Stopped by the parent somewhere in here, for 2.5 s.
    let began = Instant::now();
    while began.elapsed() < 4 * SECOND {
        poll();
    }
    assert!(server.failures().is_empty(), "{:?}", server.failures());
    println!("no failure after the stop");
}
