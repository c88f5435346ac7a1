//! A small TCP key-value store: what the ranks of a multi-process run meet
//! through (the NCCL unique id, the same-program check, barriers) and how
//! one rank's failure reaches the others.
//!
//! One [`StoreServer`] (in the launcher, or in rank 0's process), one
//! [`StoreClient`] connection per user (a rank's host, its watchdog). Each
//! connection starts with a handshake in which the client proves it knows
//! the job's secret ([`super::auth`]) and says which rank of which world it
//! is; then it is request/response, every frame tagged
//! ([`super::protocol`]):
//!
//! | request | fields | response |
//! |---|---|---|
//! | set | key, value | ok |
//! | get | keys, timeout ms | values, or timeout (the missing keys), or failed |
//! | add | key, delta | the new value (an `i64` counter) |
//! | delete | keys | ok |
//! | fail | rank (the connection's own), what | ok |
//! | failures | timeout ms | every failure so far (waits for the first up to the timeout) |
//! | goodbye | | ok |
//! | absent | | the ranks that never said hello |
//!
//! The server refuses a stranger (no proof of the secret), a second
//! process claiming a rank that has joined, and a world size other than
//! the job's; the last two are failures of the job too. Blocking requests
//! wait on the server, bounded by their timeout, and end early when any
//! failure is known: the response is then the first failure, the cause. A
//! connection that said it was rank R and closes before R said `goodbye`
//! (on any of its connections) is a failure: `rank R exited (connection
//! closed)`; so is a watchdog's connection silent for longer than the
//! heartbeat it announced (its process is stopped).
//!
//! Bounds: [`MAX_CONNECTIONS`] open and [`MAX_UNPROVEN`] in their handshake
//! (which has [`HANDSHAKE`] in all to finish, in frames of at most
//! [`MAX_HANDSHAKE_FRAME`]; when they are all taken, a newcomer takes the
//! slot of an old one: `admission.rs`), [`MAX_FRAME`] per message afterwards and
//! [`MAX_STORED`] of keys and values in all. Accept errors (`EMFILE`) back
//! off up to 1 s.

pub use super::admission::{HANDSHAKE, MAX_CONNECTIONS, MAX_UNPROVEN};
pub use super::client::{Got, StoreClient};
pub use super::protocol::{Failure, MAX_FRAME, MAX_HANDSHAKE_FRAME};

use super::admission::{self, Connections};
use super::auth::{self, Secret};
use super::protocol::{Hello, Request, Response, read_frame, write_frame};
use crate::lock;
use std::collections::{HashMap, HashSet};
use std::io;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often a server-side wait checks that its client is still there.
const POLL: Duration = Duration::from_millis(20);
/// The most bytes of keys and values the store holds.
pub const MAX_STORED: usize = 4 << 30;

/// A watchdog's connection: its rank is stuck once it is silent for
/// `limit` (not counting the requests the server holds).
struct Heartbeat {
    rank: usize,
    limit: Duration,
    since: Instant,
    busy: bool,
}

#[derive(Default)]
pub(super) struct State {
    values: HashMap<String, Vec<u8>>,
    /// Bytes of keys and values held.
    stored: usize,
    /// In the order they were reported: the first is the cause.
    failures: Vec<Failure>,
    /// Ranks that said goodbye: their connections may close.
    done: HashSet<usize>,
    /// Ranks that said hello: their process's id, and how to name it.
    pub(super) joined: HashMap<usize, (u64, String)>,
    /// By connection.
    heartbeats: HashMap<u64, Heartbeat>,
}

pub(super) struct Shared {
    pub(super) secret: Secret,
    pub(super) world_size: usize,
    state: Mutex<State>,
    pub(super) changed: Condvar,
    closing: AtomicBool,
    connections: Mutex<Connections>,
    /// Connections refused: strangers, bad hellos, over the limits.
    refused: AtomicUsize,
    /// Errors of `accept` (e.g. `EMFILE`).
    accept_errors: AtomicUsize,
}

impl Shared {
    fn new(secret: Secret, world_size: usize) -> Shared {
        Shared {
            secret,
            world_size,
            state: Default::default(),
            changed: Condvar::new(),
            closing: AtomicBool::new(false),
            connections: Default::default(),
            refused: AtomicUsize::new(0),
            accept_errors: AtomicUsize::new(0),
        }
    }

    pub(super) fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    fn record(&self, failure: Failure) {
        record(&mut self.state(), failure);
        self.changed.notify_all();
    }
}

pub(super) fn record(state: &mut State, failure: Failure) {
    if !state.failures.contains(&failure) {
        state.failures.push(failure);
    }
}

/// The store's server: a thread accepting connections, one thread per
/// connection, and one watching heartbeats. Dropping it closes every
/// connection.
pub struct StoreServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

impl StoreServer {
    /// Listens on `addr` (port 0: any free port; see [`StoreServer::addr`])
    /// for the members of the job whose secret is `secret`, a world of
    /// `world_size` ranks.
    pub fn bind(
        addr: impl ToSocketAddrs,
        secret: Secret,
        world_size: usize,
    ) -> io::Result<StoreServer> {
        let listener = TcpListener::bind(addr)?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::new(secret, world_size));
        let mut server = StoreServer {
            addr,
            shared: shared.clone(),
            threads: Vec::new(),
        };
        let watcher = shared.clone();
        server.threads.push(
            std::thread::Builder::new()
                .name("hir-store-heartbeats".into())
                .spawn(move || watch_heartbeats(&watcher))?,
        );
        server.threads.push(
            std::thread::Builder::new()
                .name("hir-store".into())
                .spawn(move || accept(listener, shared))?,
        );
        Ok(server)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Every failure so far, the cause first.
    pub fn failures(&self) -> Vec<Failure> {
        self.shared.state().failures.clone()
    }

    /// Records a failure seen from outside the ranks (a launcher whose child
    /// exited before it could say so).
    pub fn record(&self, failure: Failure) {
        self.shared.record(failure);
    }

    /// Whether `rank` said goodbye.
    pub fn done(&self, rank: usize) -> bool {
        self.shared.state().done.contains(&rank)
    }

    /// How many connections were refused (no proof of the secret, another
    /// job, a bad hello, a taken rank, another world size, over a limit).
    pub fn refused(&self) -> usize {
        self.shared.refused.load(Ordering::Relaxed)
    }

    /// How many connections are open.
    pub fn open_connections(&self) -> usize {
        lock(&self.shared.connections).open()
    }

    /// How many times `accept` failed (e.g. out of file descriptors).
    pub fn accept_errors(&self) -> usize {
        self.shared.accept_errors.load(Ordering::Relaxed)
    }

    /// Waits until every rank of `0..ranks` said goodbye, or one failed, or
    /// `timeout` passed; true when all said goodbye.
    pub fn wait_done(&self, ranks: usize, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut state = self.shared.state();
        loop {
            if (0..ranks).all(|rank| state.done.contains(&rank)) {
                return true;
            }
            // A failed rank that has not said goodbye never will.
            let failed: HashSet<usize> = state.failures.iter().map(|f| f.rank).collect();
            if (0..ranks).all(|rank| state.done.contains(&rank) || failed.contains(&rank)) {
                return false;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            state = self
                .shared
                .changed
                .wait_timeout(state, (deadline - now).min(POLL * 5))
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

impl Drop for StoreServer {
    fn drop(&mut self) {
        self.shared.closing.store(true, Ordering::Release);
        self.shared.changed.notify_all();
        // Wakes the accept loop, which then sees `closing`.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        lock(&self.shared.connections).shut_all();
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

fn accept(listener: TcpListener, shared: Arc<Shared>) {
    let mut backoff = Duration::ZERO;
    loop {
        let accepted = listener.accept();
        if shared.closing.load(Ordering::Acquire) {
            break;
        }
        let (stream, source) = match accepted {
            Ok((stream, source)) => {
                backoff = Duration::ZERO;
                (stream, source.ip())
            }
            Err(_) => {
                // Out of descriptors or memory, or a connection reset before
                // it was accepted: wait rather than spin; what is queued
                // stays queued.
                shared.accept_errors.fetch_add(1, Ordering::Relaxed);
                backoff = (backoff * 2).clamp(Duration::from_millis(5), Duration::from_secs(1));
                std::thread::sleep(backoff);
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let Ok(clone) = stream.try_clone() else {
            continue;
        };
        let Some(id) = lock(&shared.connections).enter(clone, source) else {
            shared.refused.fetch_add(1, Ordering::Relaxed);
            continue;
        };
        let serving = shared.clone();
        let spawned = std::thread::Builder::new()
            .name("hir-store-conn".into())
            .spawn(move || serve(stream, id, &serving));
        if spawned.is_err() {
            lock(&shared.connections).close(id);
        }
    }
}

/// Serves one connection until it closes, then forgets it.
fn serve(mut stream: TcpStream, id: u64, shared: &Shared) {
    let proven = admission::handshake(&stream, &shared.secret, |hello| admit(hello, shared));
    lock(&shared.connections).proven(id);
    match proven {
        Ok((hello, session)) => {
            // A heartbeat counts for a rank's connection only.
            if let (Some(limit), Some(rank)) = (hello.heartbeat, hello.rank) {
                shared.state().heartbeats.insert(
                    id,
                    Heartbeat {
                        rank,
                        limit,
                        since: Instant::now(),
                        busy: false,
                    },
                );
            }
            requests(&mut stream, id, hello.rank, session, shared);
            shared.state().heartbeats.remove(&id);
        }
        Err(why) => {
            shared.refused.fetch_add(1, Ordering::Relaxed);
            admission::refuse(&stream, why);
        }
    }
    lock(&shared.connections).close(id);
    let _ = stream.shutdown(Shutdown::Both);
}

/// Lets a member of the job in, unless its world size is not the job's or
/// its rank was taken by another process: both are failures of the job (its
/// ranks will not all meet), recorded so that every rank stops at once.
fn admit(hello: &Hello, shared: &Shared) -> Result<(), String> {
    let mut state = shared.state();
    let who = hello.who();
    let rank = hello.rank;
    let refuse = |state: &mut State, why: String| {
        if let Some(rank) = rank {
            record(state, Failure::failed(rank, "bootstrap", &why));
            shared.changed.notify_all();
        }
        Err(why)
    };
    if hello.world_size != shared.world_size {
        let whom = rank.map_or("a client".to_string(), |rank| format!("rank {rank}"));
        return refuse(
            &mut state,
            format!(
                "{whom} ({who}) was started with WORLD_SIZE {}, but this job's store \
                 serves {} ranks",
                hello.world_size, shared.world_size
            ),
        );
    }
    let Some(rank) = rank else { return Ok(()) };
    if rank >= shared.world_size {
        return refuse(
            &mut state,
            format!(
                "rank {rank} ({who}) is not below WORLD_SIZE {}",
                shared.world_size
            ),
        );
    }
    match state.joined.get(&rank) {
        Some((process, first)) if *process != hello.process => {
            let why = format!(
                "rank {rank} joined twice: first {first}, then {who} (two processes were \
                 given RANK={rank})"
            );
            refuse(&mut state, why)
        }
        Some(_) => Ok(()),
        None => {
            state.joined.insert(rank, (hello.process, who));
            Ok(())
        }
    }
}

/// Answers a member's requests until its connection closes.
fn requests(
    stream: &mut TcpStream,
    id: u64,
    rank: Option<usize>,
    mut session: auth::Session,
    shared: &Shared,
) {
    let beat = |busy: bool| {
        if let Some(heartbeat) = shared.state().heartbeats.get_mut(&id) {
            heartbeat.busy = busy;
            heartbeat.since = Instant::now();
        }
    };
    let mut goodbye = false;
    let ended = loop {
        let frame = match read_frame(stream, MAX_FRAME, Some(&mut session)) {
            Ok(frame) => frame,
            Err(error) => break Some(error),
        };
        beat(true);
        let response = match Request::decode(&frame) {
            Err(error) => Response::Error(error.to_string()),
            Ok(request) => {
                goodbye |= matches!(request, Request::Goodbye);
                let gone = || closed(stream);
                match handle(request, rank, &gone, shared) {
                    Some(response) => response,
                    // The client went away during a wait.
                    None => break None,
                }
            }
        };
        if write_frame(stream, &response.encode(), Some(&mut session)).is_err() {
            break None;
        }
        beat(false);
    };
    if let Some(rank) = rank {
        let done = goodbye || shared.state().done.contains(&rank);
        if !done && !shared.closing.load(Ordering::Acquire) {
            shared.record(Failure {
                rank,
                what: ended_as(ended.as_ref()),
            });
        }
    }
}

/// How a rank's connection that closed before its goodbye ended, for its
/// failure: a frame that failed its check (its tag: altered, forged,
/// replayed or reordered on the way; or over the size limit) is named as
/// such, anything else is the rank's exit.
fn ended_as(error: Option<&io::Error>) -> String {
    match error {
        Some(error) if error.kind() == io::ErrorKind::InvalidData => format!(
            "sent the store a frame that failed its check ({error}): the store closed its \
             connection, as it closes any that carries a tampered frame"
        ),
        _ => "exited (connection closed)".into(),
    }
}

/// Fails the rank of a watchdog connection silent for longer than its
/// heartbeat (its process is stopped or cannot run), while no failure is
/// known (after one, the ranks stop anyway). When this thread itself did
/// not run for a while (the whole job was stopped, e.g. by Ctrl-Z, or the
/// host suspended), nobody is blamed: every heartbeat starts again.
fn watch_heartbeats(shared: &Shared) {
    let tick = POLL * 5;
    let mut state = shared.state();
    let mut last = Instant::now();
    while !shared.closing.load(Ordering::Acquire) {
        let now = Instant::now();
        if now.duration_since(last) > tick * 4 {
            for heartbeat in state.heartbeats.values_mut() {
                heartbeat.since = now;
            }
        }
        last = now;
        if state.failures.is_empty() {
            let silent = state.heartbeats.values().find(|heartbeat| {
                !heartbeat.busy
                    && !state.done.contains(&heartbeat.rank)
                    && heartbeat.since.elapsed() > heartbeat.limit
            });
            if let Some(heartbeat) = silent {
                let failure = Failure {
                    rank: heartbeat.rank,
                    what: format!(
                        "stopped responding: its watchdog was silent for {:.1?}, over its \
                         heartbeat limit of {:?} (the process is stopped, e.g. by SIGSTOP or a \
                         debugger, or cannot run)",
                        heartbeat.since.elapsed(),
                        heartbeat.limit
                    ),
                };
                record(&mut state, failure);
                shared.changed.notify_all();
            }
        }
        state = shared
            .changed
            .wait_timeout(state, tick)
            .unwrap_or_else(PoisonError::into_inner)
            .0;
    }
}

/// Whether the peer of `stream` closed its end (a wait then stops early).
fn closed(stream: &TcpStream) -> bool {
    if stream.set_nonblocking(true).is_err() {
        return true;
    }
    let closed = match stream.peek(&mut [0u8; 1]) {
        Ok(0) => true,
        Ok(_) => false,
        Err(error) => error.kind() != io::ErrorKind::WouldBlock,
    };
    closed || stream.set_nonblocking(false).is_err()
}

/// Waits until `ready` gives a response, the timeout passes (`timeout`
/// gives it), or the client is `gone` (`None`).
fn wait(
    shared: &Shared,
    gone: &dyn Fn() -> bool,
    timeout: Duration,
    mut ready: impl FnMut(&mut State) -> Option<Response>,
    on_timeout: impl FnOnce(&State) -> Response,
) -> Option<Response> {
    let deadline = Instant::now().checked_add(timeout);
    let mut state = shared.state();
    loop {
        if let Some(response) = ready(&mut state) {
            return Some(response);
        }
        let now = Instant::now();
        let left = deadline.map_or(POLL, |deadline| deadline.saturating_duration_since(now));
        if left.is_zero() || shared.closing.load(Ordering::Acquire) {
            return Some(on_timeout(&state));
        }
        state = shared
            .changed
            .wait_timeout(state, left.min(POLL))
            .unwrap_or_else(PoisonError::into_inner)
            .0;
        drop(state);
        if gone() {
            return None;
        }
        state = shared.state();
    }
}

/// The values of `keys`, if all are set and fit in one response.
fn values(state: &State, keys: &[String]) -> Option<Response> {
    let mut size = 16usize;
    for key in keys {
        size = size.saturating_add(4 + state.values.get(key)?.len());
    }
    Some(if size > MAX_FRAME {
        Response::Error(format!(
            "the values of {} keys come to {size} bytes, over the store's message limit of \
             {MAX_FRAME}",
            keys.len()
        ))
    } else {
        Response::Values(keys.iter().map(|key| state.values[key].clone()).collect())
    })
}

/// Stores `value` at `key` within [`MAX_STORED`].
fn put(state: &mut State, key: String, value: Vec<u8>) -> Response {
    let old = state
        .values
        .get(&key)
        .map_or(0, |old| key.len() + old.len());
    let stored = state.stored - old + key.len() + value.len();
    if stored > MAX_STORED {
        return Response::Error(format!(
            "setting {key} ({} bytes) would bring the store to {stored} bytes, over its limit \
             of {MAX_STORED}",
            value.len()
        ));
    }
    state.stored = stored;
    state.values.insert(key, value);
    Response::Ok
}

/// The response to `request` from the connection of `rank`; `None` when
/// the client went away during a wait. `pub(super)` for the fuzz tests.
pub(super) fn handle(
    request: Request,
    rank: Option<usize>,
    gone: &dyn Fn() -> bool,
    shared: &Shared,
) -> Option<Response> {
    Some(match request {
        Request::Set { key, value } => {
            let response = put(&mut shared.state(), key, value);
            shared.changed.notify_all();
            response
        }
        Request::Add { key, delta } => {
            let mut state = shared.state();
            let sum = match state.values.get(&key) {
                None => Ok(delta),
                Some(value) => <[u8; 8]>::try_from(value.as_slice())
                    .map(|bytes| i64::from_le_bytes(bytes).wrapping_add(delta))
                    .map_err(|_| {
                        format!("{key} holds {} bytes, not the 8 of a counter", value.len())
                    }),
            };
            let response = match sum {
                Ok(sum) => match put(&mut state, key, sum.to_le_bytes().to_vec()) {
                    Response::Ok => Response::Int(sum),
                    error => error,
                },
                Err(error) => Response::Error(error),
            };
            shared.changed.notify_all();
            response
        }
        Request::Delete { keys } => {
            let mut state = shared.state();
            for key in keys {
                if let Some(value) = state.values.remove(&key) {
                    state.stored -= key.len() + value.len();
                }
            }
            Response::Ok
        }
        Request::Get { keys, timeout } => {
            return wait(
                shared,
                gone,
                timeout,
                |state| {
                    values(state, &keys)
                        .or_else(|| state.failures.first().cloned().map(Response::Failed))
                },
                |state| Response::Timeout {
                    missing: keys
                        .iter()
                        .filter(|key| !state.values.contains_key(*key))
                        .cloned()
                        .collect(),
                },
            );
        }
        Request::Fail { failure } => {
            if Some(failure.rank) == rank {
                shared.record(failure);
                Response::Ok
            } else {
                Response::Error(format!(
                    "a connection of {} may not report a failure of rank {}",
                    rank.map_or("no rank".to_string(), |rank| format!("rank {rank}")),
                    failure.rank
                ))
            }
        }
        Request::Failures { timeout } => {
            return wait(
                shared,
                gone,
                timeout,
                |state| {
                    (!state.failures.is_empty()).then(|| Response::Failures(state.failures.clone()))
                },
                |state| Response::Failures(state.failures.clone()),
            );
        }
        Request::Absent => {
            let state = shared.state();
            Response::Ranks(
                (0..shared.world_size)
                    .filter(|rank| !state.joined.contains_key(rank))
                    .collect(),
            )
        }
        Request::Goodbye => {
            if let Some(rank) = rank {
                shared.state().done.insert(rank);
                shared.changed.notify_all();
            }
            Response::Ok
        }
    })
}

/// A store's state without a network, for the fuzz tests.
#[cfg(test)]
pub(super) fn detached(world_size: usize) -> Shared {
    Shared::new(Secret::none(), world_size)
}
