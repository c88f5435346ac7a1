//! The store, the bootstrap over it, and the watchdog, between threads with
//! connections of their own (across real processes: `process_tests.rs`;
//! against strangers: `security_tests.rs`).

use super::store::Got;
use super::watchdog::decide;
use super::*;
use crate::error::RankError;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

pub(crate) const SECOND: Duration = Duration::from_secs(1);

/// The ranks of the tests' jobs.
const WORLD: usize = 3;

/// The secret of this test process's jobs.
pub(crate) fn secret() -> Secret {
    static SECRET: std::sync::OnceLock<Secret> = std::sync::OnceLock::new();
    SECRET.get_or_init(|| Secret::generate().unwrap()).clone()
}

pub(super) fn server() -> StoreServer {
    server_of(WORLD)
}

pub(crate) fn server_of(world: usize) -> StoreServer {
    StoreServer::bind("127.0.0.1:0", secret(), world).unwrap()
}

pub(super) fn member(rank: Option<usize>) -> Member {
    Member::new(secret(), WORLD, rank)
}

pub(super) fn client(server: &StoreServer, rank: Option<usize>) -> StoreClient {
    StoreClient::connect(&server.addr().to_string(), &member(rank), None, 5 * SECOND).unwrap()
}

pub(super) fn keys(names: &[&str]) -> Vec<String> {
    names.iter().map(|name| name.to_string()).collect()
}

#[test]
fn set_get_add_delete() {
    let server = server();
    let (a, b) = (client(&server, Some(0)), client(&server, Some(1)));
    a.set("x", b"one").unwrap();
    assert_eq!(b.get(&keys(&["x"]), SECOND).unwrap(), vec![b"one".to_vec()]);
    assert_eq!(a.add("n", 2).unwrap(), 2);
    assert_eq!(b.add("n", 3).unwrap(), 5);
    b.delete(&keys(&["x"])).unwrap();
    match a
        .get_or_missing(&keys(&["x", "n"]), Duration::ZERO)
        .unwrap()
    {
        Got::Missing(missing) => assert_eq!(missing, keys(&["x"])),
        Got::Values(_) => panic!("x was deleted"),
    }
    a.goodbye().unwrap();
    b.goodbye().unwrap();
}

#[test]
fn a_get_waits_for_the_set() {
    let server = server();
    let waiter = client(&server, Some(0));
    let setter = client(&server, Some(1));
    std::thread::scope(|scope| {
        let got = scope.spawn(|| waiter.get(&keys(&["late"]), 10 * SECOND));
        std::thread::sleep(Duration::from_millis(100));
        setter.set("late", b"here").unwrap();
        assert_eq!(got.join().unwrap().unwrap(), vec![b"here".to_vec()]);
    });
}

#[test]
fn a_get_times_out_naming_the_missing_keys() {
    let server = server();
    let client = client(&server, Some(0));
    let began = Instant::now();
    let error = client
        .get(&keys(&["never"]), Duration::from_millis(200))
        .unwrap_err();
    assert!(began.elapsed() >= Duration::from_millis(200));
    assert!(
        error
            .to_string()
            .starts_with("timed out after 200ms waiting for [\"never\"]"),
        "{error}"
    );
}

#[test]
fn a_posted_failure_ends_every_wait() {
    let server = server();
    let waiter = client(&server, Some(0));
    let failing = client(&server, Some(1));
    std::thread::scope(|scope| {
        let got = scope.spawn(|| waiter.get(&keys(&["never"]), 30 * SECOND));
        std::thread::sleep(Duration::from_millis(100));
        failing
            .fail(Failure::failed(1, "hir_rt_allgather_f32", "bad shapes"))
            .unwrap();
        let began = Instant::now();
        let error = got.join().unwrap().unwrap_err();
        assert!(began.elapsed() < 5 * SECOND);
        assert_eq!(
            error.to_string(),
            "gave up: rank 1 failed in hir_rt_allgather_f32: bad shapes"
        );
    });
}

#[test]
fn a_connection_closed_without_goodbye_is_a_failure() {
    let server = server();
    let waiter = client(&server, Some(0));
    std::thread::scope(|scope| {
        let got = scope.spawn(|| waiter.get(&keys(&["never"]), 30 * SECOND));
        std::thread::sleep(Duration::from_millis(100));
        drop(client(&server, Some(2)));
        let error = got.join().unwrap().unwrap_err();
        assert_eq!(
            error.to_string(),
            "gave up: rank 2 exited (connection closed)"
        );
    });
    assert_eq!(
        server.failures()[0].to_string(),
        "rank 2 exited (connection closed)"
    );
}

#[test]
fn goodbye_lets_a_rank_close_all_its_connections() {
    let server = server();
    let main = client(&server, Some(1));
    let second = client(&server, Some(1));
    main.goodbye().unwrap();
    drop(second);
    drop(main);
    // Not a rank: closing says nothing.
    drop(client(&server, None));
    std::thread::sleep(Duration::from_millis(100));
    assert!(server.failures().is_empty());
    assert!(server.done(1));
}

#[test]
fn a_client_whose_store_host_exits_names_it() {
    let server = server();
    let client = StoreClient::connect(
        &server.addr().to_string(),
        &member(Some(1)),
        Some(0),
        5 * SECOND,
    )
    .unwrap();
    drop(server);
    let error = client.get(&keys(&["x"]), SECOND).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("gave up: rank 0 exited (the store it hosts"),
        "{error}"
    );
}

#[test]
fn the_bootstrap_gathers_in_team_order_and_cleans_up() {
    let server = server();
    let team = Team::new(&[2, 0, 1], 3).unwrap();
    let all: Vec<Vec<Vec<u8>>> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..3)
            .map(|position| {
                let client = Arc::new(client(&server, Some(team.ranks()[position])));
                let team = team.clone();
                scope.spawn(move || {
                    let bootstrap = StoreBootstrap::new(client.clone(), "nccl", 10 * SECOND);
                    assert!(!bootstrap.same_process());
                    let first = bootstrap
                        .all_gather(&team, 0, position, vec![position as u8])
                        .unwrap();
                    // The same team again: a new exchange number.
                    let second = bootstrap
                        .all_gather(&team, 1, position, vec![10 + position as u8])
                        .unwrap();
                    client.goodbye().unwrap();
                    [first, second].concat()
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    for gathered in &all {
        assert_eq!(
            gathered,
            &vec![vec![0], vec![1], vec![2], vec![10], vec![11], vec![12]]
        );
    }
    let probe = client(&server, None);
    let left = keys(&["nccl/2,0,1/0/0", "nccl/2,0,1/0/read", "nccl/2,0,1/1/2"]);
    match probe.get_or_missing(&left, Duration::ZERO).unwrap() {
        Got::Missing(missing) => assert_eq!(missing, left),
        Got::Values(_) => panic!("the exchanges' keys were not deleted"),
    }
}

#[test]
fn a_bootstrap_timeout_names_the_missing_ranks() {
    let server = server();
    let team = Team::new(&[0, 1, 2], 3).unwrap();
    let bootstrap = StoreBootstrap::new(
        Arc::new(client(&server, Some(0))),
        "nccl",
        Duration::from_millis(100),
    );
    let error = bootstrap.all_gather(&team, 0, 0, vec![]).unwrap_err();
    assert_eq!(
        error.to_string(),
        "timed out after 100ms waiting for ranks [1, 2] to join nccl #0 of team [0, 1, 2]"
    );
}

/// The `Env` of a process whose environment is `vars`.
fn env(vars: &[(&str, &str)]) -> crate::error::Result<Option<Env>> {
    Env::from_vars(|name| {
        vars.iter()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| value.to_string())
    })
}

#[test]
fn env_reads_torchrun_variables() {
    assert_eq!(env(&[]).unwrap(), None);
    let e = env(&[
        ("RANK", "3"),
        ("WORLD_SIZE", "8"),
        ("LOCAL_RANK", "1"),
        ("MASTER_ADDR", "node0"),
        ("MASTER_PORT", "29500"),
        (SECRET_VAR, secret().value()),
    ])
    .unwrap()
    .unwrap();
    assert_eq!((e.rank, e.world_size, e.local_rank), (3, 8, 1));
    assert_eq!(e.store_addr(), "node0:29500");
    assert!(!e.agent_store);
    assert_eq!(e.secret, secret());
    let torchrun = env(&[
        ("RANK", "0"),
        ("WORLD_SIZE", "2"),
        ("MASTER_PORT", "29500"),
        ("TORCHELASTIC_USE_AGENT_STORE", "True"),
    ])
    .unwrap()
    .unwrap();
    assert_eq!(torchrun.store_addr(), "127.0.0.1:29501");
    assert_eq!(torchrun.local_rank, 0);
    // No secret: loopback only.
    assert!(torchrun.secret.is_none());
    let overridden = env(&[
        ("RANK", "0"),
        ("WORLD_SIZE", "2"),
        ("MASTER_PORT", "29500"),
        (AGENT_STORE, "1"),
        (STORE_PORT, "4000"),
    ])
    .unwrap()
    .unwrap();
    assert_eq!(overridden.store_port, 4000);
    assert!(overridden.agent_store);
    let error = |vars: &[(&str, &str)]| env(vars).unwrap_err().to_string();
    assert_eq!(
        error(&[("RANK", "0")]),
        "RANK is set but WORLD_SIZE is not: a rank needs both"
    );
    assert_eq!(
        error(&[("RANK", "2"), ("WORLD_SIZE", "2"), ("MASTER_PORT", "1")]),
        "RANK 2 is not below WORLD_SIZE 2"
    );
    assert_eq!(
        error(&[("RANK", "0"), ("WORLD_SIZE", "2")]),
        "MASTER_PORT is not set: the ranks need a port to meet on"
    );
    assert_eq!(
        error(&[("RANK", "x"), ("WORLD_SIZE", "2")]),
        "RANK must be a non-negative integer, not 'x'"
    );
    assert_eq!(
        error(&[("RANK", "0"), ("WORLD_SIZE", "18446744073709551615")]),
        "WORLD_SIZE 18446744073709551615 is more ranks than a job may have (16777216)"
    );
    assert_eq!(
        error(&[("RANK", "0"), ("WORLD_SIZE", "18446744073709551616")]),
        "WORLD_SIZE must be a non-negative integer, not '18446744073709551616'"
    );
    let remote = [
        ("RANK", "1"),
        ("WORLD_SIZE", "2"),
        ("MASTER_ADDR", "10.0.0.7"),
        ("MASTER_PORT", "29500"),
    ];
    assert!(
        error(&remote).starts_with(
            "HIR_JOB_SECRET is not set, and MASTER_ADDR 10.0.0.7 is not a loopback address"
        ),
        "{}",
        error(&remote)
    );
    assert!(
        error(&[remote.as_slice(), &[(SECRET_VAR, "c0ffee")]].concat())
            .starts_with("HIR_JOB_SECRET holds 24 bits, fewer than the 128")
    );
    for loopback in ["127.0.0.1", "localhost", "::1", "[::1]", "127.1.2.3"] {
        assert!(is_loopback(loopback), "{loopback}");
    }
    for other in ["10.0.0.7", "node0", "0.0.0.0", "::"] {
        assert!(!is_loopback(other), "{other}");
    }
}

#[test]
fn env_reads_open_mpi_and_slurm_variables() {
    let place = |vars: &[(&str, &str)]| {
        let env = env(vars).unwrap().unwrap();
        (env.rank, env.world_size, env.local_rank)
    };
    let port = ("MASTER_PORT", "29500");
    let slurm = [
        ("SLURM_PROCID", "5"),
        ("SLURM_NTASKS", "8"),
        ("SLURM_LOCALID", "1"),
    ];
    assert_eq!(place(&[&slurm[..], &[port]].concat()), (5, 8, 1));
    let mpi = [
        ("OMPI_COMM_WORLD_RANK", "2"),
        ("OMPI_COMM_WORLD_SIZE", "4"),
        ("OMPI_COMM_WORLD_LOCAL_RANK", "0"),
    ];
    assert_eq!(place(&[&mpi[..], &[port]].concat()), (2, 4, 0));
    // mpirun inside a Slurm allocation: Open MPI's are the ranks it started.
    assert_eq!(place(&[&slurm[..], &mpi[..], &[port]].concat()), (2, 4, 0));
    // torchrun (or HIR's launcher) inside either: its own.
    let torchrun = [("RANK", "1"), ("WORLD_SIZE", "2"), ("LOCAL_RANK", "1")];
    assert_eq!(
        place(&[&slurm[..], &mpi[..], &torchrun[..], &[port]].concat()),
        (1, 2, 1)
    );
    // Without a local rank, the rank's GPU is its rank.
    assert_eq!(place(&[&slurm[..2], &[port]].concat()), (5, 8, 5));
    let error = |vars: &[(&str, &str)]| env(vars).unwrap_err().to_string();
    assert_eq!(
        error(&[("SLURM_NTASKS", "4"), port]),
        "SLURM_NTASKS is set but SLURM_PROCID is not: a rank needs both"
    );
    assert_eq!(
        error(&[
            ("OMPI_COMM_WORLD_RANK", "4"),
            ("OMPI_COMM_WORLD_SIZE", "4"),
            port
        ]),
        "OMPI_COMM_WORLD_RANK 4 is not below OMPI_COMM_WORLD_SIZE 4"
    );
    assert_eq!(
        error(&[&slurm[..2], &[("SLURM_LOCALID", "one"), port]].concat()),
        "SLURM_LOCALID must be a non-negative integer, not 'one'"
    );
    assert_eq!(RankVars::of(|_| None), None);
}

// ----- the watchdog

#[test]
fn inflight_reports_the_oldest_pending_op_past_the_timeout() {
    let inflight: Inflight<Arc<AtomicBool>> = Inflight::default();
    let (a, b) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    inflight.post("allgather on team [0, 1]".into(), a.clone());
    inflight.post("send to rank 1".into(), b.clone());
    let done = |flag: &Arc<AtomicBool>| flag.load(Ordering::Acquire);
    let now = Instant::now();
    assert_eq!(inflight.stuck(now, 10 * SECOND, done), None);
    let later = now + 11 * SECOND;
    assert_eq!(
        inflight.stuck(later, 10 * SECOND, done).unwrap().op,
        "allgather on team [0, 1]"
    );
    a.store(true, Ordering::Release);
    let stuck = inflight.stuck(later, 10 * SECOND, done).unwrap();
    assert_eq!(stuck.op, "send to rank 1");
    assert!(stuck.pending >= 10 * SECOND);
    // The completed one is forgotten.
    assert_eq!(inflight.len(), 1);
    inflight.retire();
    assert!(inflight.is_empty());
    assert_eq!(inflight.stuck(later, 10 * SECOND, done), None);
}

#[test]
fn inflight_retires_the_ops_posted_before_an_id() {
    let inflight: Inflight<()> = Inflight::default();
    inflight.post("allgather on team [0, 1]".into(), ());
    let boundary = inflight.next_id();
    inflight.post("send to rank 1".into(), ());
    inflight.retire_before(boundary);
    let now = Instant::now() + 11 * SECOND;
    assert_eq!(inflight.len(), 1);
    assert_eq!(
        inflight.stuck(now, 10 * SECOND, |_| false).unwrap().op,
        "send to rank 1"
    );
    inflight.retire_before(inflight.next_id());
    assert!(inflight.is_empty());
}

#[test]
fn decide_prefers_a_peers_failure_to_a_stuck_op() {
    let stuck = Stuck {
        op: "hir_rt_allreduce_f32 on team [0, 1]".into(),
        pending: 3 * SECOND,
    };
    let peer = Failure {
        rank: 1,
        what: "exited (connection closed)".into(),
    };
    let own = Failure::failed(0, "launcher", "bad input");
    assert_eq!(decide(0, &[], SECOND, None, SECOND), None);
    // Pending, not for long enough.
    let young = Stuck {
        op: "barrier".into(),
        pending: SECOND / 2,
    };
    assert_eq!(decide(0, &[], SECOND, Some(&young), SECOND), None);
    // Its own failure is not news to a rank.
    assert_eq!(
        decide(0, std::slice::from_ref(&own), SECOND, None, SECOND),
        None
    );
    let (op, error) = decide(
        0,
        &[own, peer.clone()],
        watchdog::SETTLE,
        Some(&stuck),
        SECOND,
    )
    .unwrap();
    assert_eq!(op, "hir_rt_allreduce_f32 on team [0, 1]");
    assert_eq!(
        error.to_string(),
        "gave up: rank 1 exited (connection closed)"
    );
    // For a while, the host may find out by itself.
    assert_eq!(
        decide(
            0,
            std::slice::from_ref(&peer),
            Duration::ZERO,
            Some(&stuck),
            SECOND
        ),
        None
    );
    let (op, error) = decide(0, &[peer], watchdog::SETTLE, None, SECOND).unwrap();
    assert_eq!(op, "watchdog");
    assert!(matches!(error, Error::Peer { rank: 1, .. }));
    let (op, error) = decide(0, &[], Duration::ZERO, Some(&stuck), SECOND).unwrap();
    assert_eq!(op, "hir_rt_allreduce_f32 on team [0, 1]");
    assert!(
        error
            .to_string()
            .starts_with("timed out after 1s waiting for it to complete"),
        "{error}"
    );
}

/// A rank without a GPU: what the watchdog sees of it is set by the test.
pub(super) struct Fake {
    rank: usize,
    stuck: Mutex<Option<Stuck>>,
    error: Mutex<Option<RankError>>,
    aborted: AtomicBool,
}

impl Fake {
    pub(super) fn new(rank: usize) -> Arc<Fake> {
        Arc::new(Fake {
            rank,
            stuck: Mutex::new(None),
            error: Mutex::new(None),
            aborted: AtomicBool::new(false),
        })
    }
}

impl Watched for Fake {
    fn rank(&self) -> usize {
        self.rank
    }
    fn stuck(&self, _timeout: Duration) -> Option<Stuck> {
        self.stuck.lock().unwrap().clone()
    }
    fn error(&self) -> Option<RankError> {
        self.error.lock().unwrap().clone()
    }
    fn fail(&self, op: &str, error: Error) {
        let mut first = self.error.lock().unwrap();
        if first.is_none() {
            *first = Some(RankError {
                rank: self.rank,
                op: op.into(),
                error,
            });
        }
    }
    fn abort(&self) {
        self.aborted.store(true, Ordering::Release);
    }
}

fn config() -> WatchdogConfig {
    WatchdogConfig {
        timeout: SECOND,
        poll: Duration::from_millis(20),
        heartbeat: 5 * SECOND,
        grace: None,
    }
}

pub(super) fn until(what: &str, condition: impl Fn() -> bool) {
    let deadline = Instant::now() + 10 * SECOND;
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn the_watchdog_fails_a_rank_whose_peer_failed_and_aborts() {
    let server = server();
    let fake = Fake::new(0);
    let dog = Watchdog::start(fake.clone(), client(&server, Some(0)), config()).unwrap();
    *fake.stuck.lock().unwrap() = None;
    std::thread::sleep(Duration::from_millis(100));
    assert!(!dog.fired() && fake.error().is_none());
    client(&server, Some(1))
        .fail(Failure::failed(1, "hir_rt_send_f32", "bad peer"))
        .unwrap();
    until("the watchdog", || fake.aborted.load(Ordering::Acquire));
    assert!(dog.fired());
    assert_eq!(
        fake.error().unwrap().to_string(),
        "rank 0: watchdog: gave up: rank 1 failed in hir_rt_send_f32: bad peer"
    );
    dog.stop();
}

#[test]
fn the_watchdog_turns_a_stuck_op_into_an_error_every_rank_sees() {
    let server = server();
    let fake = Fake::new(1);
    let dog = Watchdog::start(fake.clone(), client(&server, Some(1)), config()).unwrap();
    *fake.stuck.lock().unwrap() = Some(Stuck {
        op: "hir_rt_allgather_f32 on team [0, 1]".into(),
        pending: 2 * SECOND,
    });
    let peer = client(&server, Some(0));
    let failures = peer.failures(10 * SECOND).unwrap();
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0].rank, 1);
    assert!(
        failures[0]
            .what
            .starts_with("failed in hir_rt_allgather_f32 on team [0, 1]: timed out after 1s"),
        "{}",
        failures[0]
    );
    // Rank 2 of the 3 never came: the error says so.
    assert!(
        failures[0]
            .what
            .ends_with("2] never joined the store (not started, or ended before joining)"),
        "{}",
        failures[0]
    );
    until("the abort", || fake.aborted.load(Ordering::Acquire));
    // A peer's wait gives up at once, naming rank 1.
    let error = peer.get(&keys(&["never"]), 30 * SECOND).unwrap_err();
    assert!(matches!(error, Error::Peer { rank: 1, .. }), "{error}");
    dog.stop();
}

#[test]
fn the_watchdog_posts_the_ranks_own_error() {
    let server = server();
    let fake = Fake::new(2);
    let dog = Watchdog::start(fake.clone(), client(&server, Some(2)), config()).unwrap();
    fake.fail("hir_rt_matmul_f32", Error::Invalid("bad shapes".into()));
    let failures = client(&server, None).failures(10 * SECOND).unwrap();
    assert_eq!(
        failures[0].to_string(),
        "rank 2 failed in hir_rt_matmul_f32: bad shapes"
    );
    until("the abort", || fake.aborted.load(Ordering::Acquire));
    dog.stop();
}

#[test]
fn the_bootstrap_reports_a_posted_failure() {
    let server = server();
    let bootstrap = StoreBootstrap::new(Arc::new(client(&server, Some(0))), "nccl", SECOND);
    assert_eq!(bootstrap.timeout(), SECOND);
    assert_eq!(bootstrap.check_failed(), Ok(()));
    client(&server, Some(1))
        .fail(Failure::failed(1, "hir_rt_send", "boom"))
        .unwrap();
    assert_eq!(
        bootstrap.check_failed().unwrap_err().to_string(),
        "gave up: rank 1 failed in hir_rt_send: boom"
    );
}

#[test]
fn rank_0_binds_the_store_to_master_addr_only() {
    // 127.0.0.2 is loopback too, but not 127.0.0.1.
    let env = Env {
        rank: 0,
        world_size: 1,
        local_rank: 0,
        master_addr: "127.0.0.2".into(),
        store_port: 0,
        agent_store: false,
        secret: secret(),
    };
    let group = ProcessGroup::join(env, 5 * SECOND).unwrap();
    let addr: std::net::SocketAddr = group.client().addr().parse().unwrap();
    assert_eq!(addr.ip().to_string(), "127.0.0.2");
    assert!(std::net::TcpStream::connect(("127.0.0.1", addr.port())).is_err());
    assert!(group.finish().is_empty());
}

/// A thread that waits on a client in slices (a cpu rank's comm queue in a
/// collective) must not starve another thread's requests on the same
/// client (its host thread's barrier): each takes its turn between slices.
/// Unfair, a 16-core host let one rank's waits shut out its own posts
/// until the other ranks timed out.
#[test]
fn a_client_serves_its_threads_in_turn() {
    let server = server();
    let shared = client(&server, Some(0));
    let store: &dyn KeyValueStore = &shared;
    std::thread::scope(|scope| {
        let waiting = scope.spawn(|| store.wait(&keys(&["never"]), 3 * SECOND));
        std::thread::sleep(Duration::from_millis(50));
        let start = Instant::now();
        for n in 0..20 {
            store.set(&format!("k{n}"), b"v").unwrap();
        }
        let took = start.elapsed();
        assert!(
            took < SECOND,
            "20 sets took {took:?} beside a waiting thread"
        );
        assert!(matches!(waiting.join().unwrap().unwrap(), Got::Missing(_)));
    });
}
