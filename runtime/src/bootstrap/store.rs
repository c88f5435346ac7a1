//! A small TCP key-value store: what the ranks of a multi-process run meet
//! through (the NCCL unique id, the same-program check, barriers) and how
//! one rank's failure reaches the others.
//!
//! One [`StoreServer`] (in the launcher, or in rank 0's process), one
//! [`StoreClient`] connection per user (a rank's host, its watchdog). The
//! protocol is request/response over one TCP connection, each message a
//! frame: a little-endian `u32` length, then the payload (a tag byte and the
//! fields; strings and byte strings as a `u32` length and the bytes,
//! integers as little-endian 64-bit).
//!
//! | request | fields | response |
//! |---|---|---|
//! | hello | rank (`-1`: not a rank) | ok |
//! | set | key, value | ok |
//! | get | keys, timeout ms | values, or timeout (the missing keys), or failed |
//! | add | key, delta | the new value (an `i64` counter) |
//! | delete | keys | ok |
//! | fail | rank, what | ok |
//! | failures | timeout ms | every failure so far (waits for the first up to the timeout) |
//! | goodbye | | ok |
//!
//! Blocking requests wait on the server, bounded by their timeout, and end
//! early when any failure is known: the response is then the first failure,
//! the cause. A connection that said `hello` with a rank and closes before
//! that rank said `goodbye` (on any of its connections) is a failure:
//! `rank R exited (connection closed)`.

use crate::error::{Error, Result};
use crate::lock;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often a server-side wait checks that its client is still there.
const POLL: Duration = Duration::from_millis(20);
/// The largest message either side accepts.
const MAX_FRAME: usize = 1 << 30;

/// One rank's failure, as every rank learns it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub rank: usize,
    /// What happened, after `rank R `: `failed in OP: message`, `exited
    /// (connection closed)`.
    pub what: String,
}

impl Failure {
    /// `rank` failed in `op` with `message`.
    pub fn failed(rank: usize, op: &str, message: &str) -> Failure {
        Failure {
            rank,
            what: format!("failed in {op}: {message}"),
        }
    }

    /// The error of a rank that gave up because of this failure.
    pub fn error(&self) -> Error {
        Error::Peer {
            rank: self.rank,
            what: self.what.clone(),
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "rank {} {}", self.rank, self.what)
    }
}

// ----- messages

enum Request {
    Hello {
        rank: Option<usize>,
    },
    Set {
        key: String,
        value: Vec<u8>,
    },
    Get {
        keys: Vec<String>,
        timeout: Duration,
    },
    Add {
        key: String,
        delta: i64,
    },
    Delete {
        keys: Vec<String>,
    },
    Fail {
        failure: Failure,
    },
    Failures {
        timeout: Duration,
    },
    Goodbye,
}

enum Response {
    Ok,
    Values(Vec<Vec<u8>>),
    Int(i64),
    Timeout { missing: Vec<String> },
    Failed(Failure),
    Failures(Vec<Failure>),
    Error(String),
}

#[derive(Default)]
struct Writer(Vec<u8>);

impl Writer {
    fn tag(mut self, tag: u8) -> Self {
        self.0.push(tag);
        self
    }
    fn int(mut self, value: i64) -> Self {
        self.0.extend(value.to_le_bytes());
        self
    }
    fn bytes(mut self, bytes: &[u8]) -> Self {
        self.0.extend((bytes.len() as u32).to_le_bytes());
        self.0.extend(bytes);
        self
    }
    fn strings(self, strings: &[String]) -> Self {
        let mut this = self.int(strings.len() as i64);
        for string in strings {
            this = this.bytes(string.as_bytes());
        }
        this
    }
    fn failure(self, failure: &Failure) -> Self {
        self.int(failure.rank as i64).bytes(failure.what.as_bytes())
    }
}

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take(&mut self, n: usize) -> io::Result<&[u8]> {
        if self.0.len() < n {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "a truncated store message",
            ));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
    fn tag(&mut self) -> io::Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn int(&mut self) -> io::Result<i64> {
        Ok(i64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }
    fn count(&mut self) -> io::Result<usize> {
        usize::try_from(self.int()?)
            .ok()
            .filter(|&count| count <= MAX_FRAME)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "a bad count"))
    }
    fn bytes(&mut self) -> io::Result<Vec<u8>> {
        let len = u32::from_le_bytes(self.take(4)?.try_into().unwrap()) as usize;
        Ok(self.take(len)?.to_vec())
    }
    fn string(&mut self) -> io::Result<String> {
        String::from_utf8(self.bytes()?)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "a key that is not UTF-8"))
    }
    fn strings(&mut self) -> io::Result<Vec<String>> {
        (0..self.count()?).map(|_| self.string()).collect()
    }
    fn millis(&mut self) -> io::Result<Duration> {
        Ok(Duration::from_millis(self.int()?.max(0) as u64))
    }
    fn failure(&mut self) -> io::Result<Failure> {
        Ok(Failure {
            rank: self.count()?,
            what: self.string()?,
        })
    }
}

fn millis(duration: Duration) -> i64 {
    duration.as_millis().min(i64::MAX as u128) as i64
}

impl Request {
    fn encode(&self) -> Vec<u8> {
        let w = Writer::default();
        match self {
            Request::Hello { rank } => w.tag(1).int(rank.map_or(-1, |rank| rank as i64)),
            Request::Set { key, value } => w.tag(2).bytes(key.as_bytes()).bytes(value),
            Request::Get { keys, timeout } => w.tag(3).strings(keys).int(millis(*timeout)),
            Request::Add { key, delta } => w.tag(4).bytes(key.as_bytes()).int(*delta),
            Request::Delete { keys } => w.tag(5).strings(keys),
            Request::Fail { failure } => w.tag(6).failure(failure),
            Request::Failures { timeout } => w.tag(7).int(millis(*timeout)),
            Request::Goodbye => w.tag(8),
        }
        .0
    }

    fn decode(bytes: &[u8]) -> io::Result<Request> {
        let mut r = Reader(bytes);
        Ok(match r.tag()? {
            1 => Request::Hello {
                rank: usize::try_from(r.int()?).ok(),
            },
            2 => Request::Set {
                key: r.string()?,
                value: r.bytes()?,
            },
            3 => Request::Get {
                keys: r.strings()?,
                timeout: r.millis()?,
            },
            4 => Request::Add {
                key: r.string()?,
                delta: r.int()?,
            },
            5 => Request::Delete { keys: r.strings()? },
            6 => Request::Fail {
                failure: r.failure()?,
            },
            7 => Request::Failures {
                timeout: r.millis()?,
            },
            8 => Request::Goodbye,
            tag => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("an unknown store request {tag}"),
                ));
            }
        })
    }
}

impl Response {
    fn encode(&self) -> Vec<u8> {
        let w = Writer::default();
        match self {
            Response::Ok => w.tag(0),
            Response::Values(values) => {
                let mut w = w.tag(1).int(values.len() as i64);
                for value in values {
                    w = w.bytes(value);
                }
                w
            }
            Response::Int(value) => w.tag(2).int(*value),
            Response::Timeout { missing } => w.tag(3).strings(missing),
            Response::Failed(failure) => w.tag(4).failure(failure),
            Response::Failures(failures) => {
                let mut w = w.tag(5).int(failures.len() as i64);
                for failure in failures {
                    w = w.failure(failure);
                }
                w
            }
            Response::Error(message) => w.tag(6).bytes(message.as_bytes()),
        }
        .0
    }

    fn decode(bytes: &[u8]) -> io::Result<Response> {
        let mut r = Reader(bytes);
        Ok(match r.tag()? {
            0 => Response::Ok,
            1 => Response::Values(
                (0..r.count()?)
                    .map(|_| r.bytes())
                    .collect::<io::Result<_>>()?,
            ),
            2 => Response::Int(r.int()?),
            3 => Response::Timeout {
                missing: r.strings()?,
            },
            4 => Response::Failed(r.failure()?),
            5 => Response::Failures(
                (0..r.count()?)
                    .map(|_| r.failure())
                    .collect::<io::Result<_>>()?,
            ),
            6 => Response::Error(r.string()?),
            tag => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("an unknown store response {tag}"),
                ));
            }
        })
    }
}

fn write_frame(stream: &mut TcpStream, payload: &[u8]) -> io::Result<()> {
    let mut frame = Vec::with_capacity(4 + payload.len());
    frame.extend((payload.len() as u32).to_le_bytes());
    frame.extend(payload);
    stream.write_all(&frame)
}

fn read_frame(stream: &mut TcpStream) -> io::Result<Vec<u8>> {
    let mut len = [0u8; 4];
    stream.read_exact(&mut len)?;
    let len = u32::from_le_bytes(len) as usize;
    if len > MAX_FRAME {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a store message of {len} bytes"),
        ));
    }
    let mut payload = vec![0u8; len];
    stream.read_exact(&mut payload)?;
    Ok(payload)
}

// ----- server

#[derive(Default)]
struct State {
    values: HashMap<String, Vec<u8>>,
    /// In the order they were reported: the first is the cause.
    failures: Vec<Failure>,
    /// Ranks that said goodbye: their connections may close.
    done: HashSet<usize>,
    /// Ranks that said hello.
    joined: HashSet<usize>,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    changed: Condvar,
    closing: AtomicBool,
    /// Every connection, to shut them down with the server.
    connections: Mutex<Vec<TcpStream>>,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    fn record(&self, failure: Failure) {
        let mut state = self.state();
        if !state.failures.contains(&failure) {
            state.failures.push(failure);
        }
        self.changed.notify_all();
    }
}

/// The store's server: a thread accepting connections and one thread per
/// connection. Dropping it closes every connection.
pub struct StoreServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

impl StoreServer {
    /// Listens on `addr` (port 0: any free port; see [`StoreServer::addr`]).
    pub fn bind(addr: impl ToSocketAddrs) -> io::Result<StoreServer> {
        let listener = TcpListener::bind(addr)?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::default());
        let accept = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("hir-store".into())
                .spawn(move || accept(listener, shared))?
        };
        Ok(StoreServer {
            addr,
            shared,
            accept: Some(accept),
        })
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
        for connection in lock(&self.shared.connections).drain(..) {
            let _ = connection.shutdown(Shutdown::Both);
        }
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

fn accept(listener: TcpListener, shared: Arc<Shared>) {
    for stream in listener.incoming() {
        if shared.closing.load(Ordering::Acquire) {
            break;
        }
        let Ok(stream) = stream else { continue };
        let _ = stream.set_nodelay(true);
        if let Ok(clone) = stream.try_clone() {
            lock(&shared.connections).push(clone);
        }
        let shared = shared.clone();
        let _ = std::thread::Builder::new()
            .name("hir-store-conn".into())
            .spawn(move || serve(stream, shared));
    }
}

/// Serves one connection until it closes.
fn serve(mut stream: TcpStream, shared: Arc<Shared>) {
    let mut rank = None;
    let mut goodbye = false;
    while let Ok(frame) = read_frame(&mut stream) {
        let response = match Request::decode(&frame) {
            Err(error) => Response::Error(error.to_string()),
            Ok(request) => {
                match &request {
                    Request::Hello { rank: Some(r) } => {
                        rank = Some(*r);
                        shared.state().joined.insert(*r);
                    }
                    Request::Goodbye => goodbye = true,
                    _ => {}
                }
                match handle(request, rank, &stream, &shared) {
                    Some(response) => response,
                    // The client went away during a wait.
                    None => break,
                }
            }
        };
        if write_frame(&mut stream, &response.encode()).is_err() {
            break;
        }
    }
    if let Some(rank) = rank {
        let done = goodbye || shared.state().done.contains(&rank);
        if !done && !shared.closing.load(Ordering::Acquire) {
            shared.record(Failure {
                rank,
                what: "exited (connection closed)".into(),
            });
        }
    }
    let _ = stream.shutdown(Shutdown::Both);
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
/// gives it), or the client closes (`None`).
fn wait(
    shared: &Shared,
    stream: &TcpStream,
    timeout: Duration,
    mut ready: impl FnMut(&mut State) -> Option<Response>,
    on_timeout: impl FnOnce(&State) -> Response,
) -> Option<Response> {
    let deadline = Instant::now() + timeout;
    let mut state = shared.state();
    loop {
        if let Some(response) = ready(&mut state) {
            return Some(response);
        }
        let now = Instant::now();
        if now >= deadline || shared.closing.load(Ordering::Acquire) {
            return Some(on_timeout(&state));
        }
        state = shared
            .changed
            .wait_timeout(state, (deadline - now).min(POLL))
            .unwrap_or_else(PoisonError::into_inner)
            .0;
        drop(state);
        if closed(stream) {
            return None;
        }
        state = shared.state();
    }
}

fn handle(
    request: Request,
    rank: Option<usize>,
    stream: &TcpStream,
    shared: &Shared,
) -> Option<Response> {
    Some(match request {
        Request::Hello { .. } => Response::Ok,
        Request::Set { key, value } => {
            shared.state().values.insert(key, value);
            shared.changed.notify_all();
            Response::Ok
        }
        Request::Add { key, delta } => {
            let mut state = shared.state();
            let value = state
                .values
                .entry(key)
                .or_insert_with(|| 0i64.to_le_bytes().to_vec());
            let sum = <[u8; 8]>::try_from(value.as_slice())
                .map(i64::from_le_bytes)
                .unwrap_or(0)
                .wrapping_add(delta);
            *value = sum.to_le_bytes().to_vec();
            shared.changed.notify_all();
            Response::Int(sum)
        }
        Request::Delete { keys } => {
            let mut state = shared.state();
            for key in keys {
                state.values.remove(&key);
            }
            Response::Ok
        }
        Request::Get { keys, timeout } => {
            return wait(
                shared,
                stream,
                timeout,
                |state| {
                    if keys.iter().all(|key| state.values.contains_key(key)) {
                        Some(Response::Values(
                            keys.iter().map(|key| state.values[key].clone()).collect(),
                        ))
                    } else {
                        state.failures.first().cloned().map(Response::Failed)
                    }
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
            shared.record(failure);
            Response::Ok
        }
        Request::Failures { timeout } => {
            return wait(
                shared,
                stream,
                timeout,
                |state| {
                    (!state.failures.is_empty()).then(|| Response::Failures(state.failures.clone()))
                },
                |state| Response::Failures(state.failures.clone()),
            );
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

// ----- client

/// A connection to the store. Requests are serialized: a thread that needs
/// to block on its own (a watchdog) opens a connection of its own.
pub struct StoreClient {
    stream: Mutex<TcpStream>,
    addr: String,
    rank: Option<usize>,
    /// The rank whose process hosts the server, if a rank does.
    host: Option<usize>,
}

/// What a blocking get ended with.
pub enum Got {
    Values(Vec<Vec<u8>>),
    /// The keys still missing at the timeout.
    Missing(Vec<String>),
}

impl StoreClient {
    /// Connects to the store at `addr` as `rank` (`None`: not a rank, e.g. a
    /// launcher), retrying until `timeout` (the server may not be up yet).
    /// `host` is the rank whose process runs the server, if one does: losing
    /// the connection then means that rank exited.
    pub fn connect(
        addr: &str,
        rank: Option<usize>,
        host: Option<usize>,
        timeout: Duration,
    ) -> Result<StoreClient> {
        let deadline = Instant::now() + timeout;
        let stream = loop {
            let attempt = addr
                .to_socket_addrs()
                .and_then(|mut addrs| {
                    addrs.next().ok_or_else(|| {
                        io::Error::new(io::ErrorKind::NotFound, "the name has no address")
                    })
                })
                .and_then(|resolved| TcpStream::connect_timeout(&resolved, Duration::from_secs(1)));
            match attempt {
                Ok(stream) => break stream,
                Err(error) if Instant::now() >= deadline => {
                    return Err(Error::Timeout {
                        after: timeout,
                        waiting: format!("to connect to the store at {addr} (last error: {error})"),
                    });
                }
                Err(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        };
        let _ = stream.set_nodelay(true);
        let client = StoreClient {
            stream: Mutex::new(stream),
            addr: addr.to_string(),
            rank,
            host,
        };
        client.expect_ok(Request::Hello { rank }, Duration::ZERO)?;
        Ok(client)
    }

    pub fn addr(&self) -> &str {
        &self.addr
    }

    pub fn rank(&self) -> Option<usize> {
        self.rank
    }

    /// The error for a lost connection.
    fn lost(&self, error: io::Error) -> Error {
        match self.host {
            Some(host) if Some(host) != self.rank => Error::Peer {
                rank: host,
                what: format!(
                    "exited (the store it hosts at {} closed the connection: {error})",
                    self.addr
                ),
            },
            _ => Error::Io(format!(
                "lost the connection to the store at {}: {error}",
                self.addr
            )),
        }
    }

    /// Sends `request` and reads the response; `blocks` is how long the
    /// server may hold it.
    fn call(&self, request: Request, blocks: Duration) -> Result<Response> {
        let mut stream = lock(&self.stream);
        let slack = Duration::from_secs(30);
        let _ = stream.set_write_timeout(Some(slack));
        let _ = stream.set_read_timeout(Some(blocks + slack));
        write_frame(&mut stream, &request.encode()).map_err(|error| self.lost(error))?;
        let frame = read_frame(&mut stream).map_err(|error| self.lost(error))?;
        match Response::decode(&frame).map_err(|error| self.lost(error))? {
            Response::Error(message) => Err(Error::Io(format!(
                "the store at {} refused a request: {message}",
                self.addr
            ))),
            response => Ok(response),
        }
    }

    fn unexpected(&self) -> Error {
        Error::Io(format!(
            "an unexpected response from the store at {}",
            self.addr
        ))
    }

    fn expect_ok(&self, request: Request, blocks: Duration) -> Result<()> {
        match self.call(request, blocks)? {
            Response::Ok => Ok(()),
            _ => Err(self.unexpected()),
        }
    }

    pub fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        self.expect_ok(
            Request::Set {
                key: key.into(),
                value: value.into(),
            },
            Duration::ZERO,
        )
    }

    /// Waits until every key is set (their values, in order), `timeout`
    /// passes (the keys still missing), or a rank fails (its error).
    pub fn get_or_missing(&self, keys: &[String], timeout: Duration) -> Result<Got> {
        let request = Request::Get {
            keys: keys.to_vec(),
            timeout,
        };
        match self.call(request, timeout)? {
            Response::Values(values) if values.len() == keys.len() => Ok(Got::Values(values)),
            Response::Timeout { missing } => Ok(Got::Missing(missing)),
            Response::Failed(failure) => Err(failure.error()),
            _ => Err(self.unexpected()),
        }
    }

    /// As [`StoreClient::get_or_missing`], a timeout being an error.
    pub fn get(&self, keys: &[String], timeout: Duration) -> Result<Vec<Vec<u8>>> {
        match self.get_or_missing(keys, timeout)? {
            Got::Values(values) => Ok(values),
            Got::Missing(missing) => Err(Error::Timeout {
                after: timeout,
                waiting: format!("for {missing:?} in the store at {}", self.addr),
            }),
        }
    }

    /// Adds `delta` to the counter `key` (0 if unset) and returns the sum.
    pub fn add(&self, key: &str, delta: i64) -> Result<i64> {
        match self.call(
            Request::Add {
                key: key.into(),
                delta,
            },
            Duration::ZERO,
        )? {
            Response::Int(value) => Ok(value),
            _ => Err(self.unexpected()),
        }
    }

    pub fn delete(&self, keys: &[String]) -> Result<()> {
        self.expect_ok(
            Request::Delete {
                keys: keys.to_vec(),
            },
            Duration::ZERO,
        )
    }

    /// Tells every rank that `failure` happened.
    pub fn fail(&self, failure: Failure) -> Result<()> {
        self.expect_ok(Request::Fail { failure }, Duration::ZERO)
    }

    /// Every failure so far, the cause first; waits up to `timeout` for the
    /// first one.
    pub fn failures(&self, timeout: Duration) -> Result<Vec<Failure>> {
        match self.call(Request::Failures { timeout }, timeout)? {
            Response::Failures(failures) => Ok(failures),
            _ => Err(self.unexpected()),
        }
    }

    /// Says this rank is done: its connections may close from now on.
    pub fn goodbye(&self) -> Result<()> {
        self.expect_ok(Request::Goodbye, Duration::ZERO)
    }
}
