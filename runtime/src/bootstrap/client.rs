//! A connection to the store: [`StoreClient`], as a [`Member`] of the job.
//!
//! Connecting retries until its timeout while the store is not up (or
//! drops the connection, e.g. when full), then does the handshake of
//! [`super::protocol`]: the client proves it knows the job's secret, the
//! server proves it too (a stranger holding the port cannot pose as the
//! store). A refusal (no proof of the secret: another job, or another
//! secret; a taken rank, another world size) is an error at once, naming
//! both sides.

use super::admission::Deadline;
use super::auth::{self, Secret, Side, same_proof};
use super::protocol::Failure;
use super::protocol::{
    Challenge, Hello, MAX_FRAME, MAX_HANDSHAKE_FRAME, Request, Response, Verdict, read_frame,
    write_frame,
};
use super::store::HANDSHAKE;
use crate::core::store::KeyValueStore;
use crate::error::{Error, Result};
use parking_lot::FairMutex;
use std::io;
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How much longer than the server may hold a request (its wait, at most
/// the job's timeout) a client waits for the response: past it, the store
/// is not responding (its host is stopped, or unreachable). One request
/// waits at most its wait plus this; the connection is then given up, so
/// that the requests after it fail at once.
pub const SLACK: Duration = Duration::from_secs(5);

/// Who connects: a member of the job whose secret is `secret`, of
/// `world_size` ranks, as rank `rank` (`None`: not a rank).
#[derive(Clone, Debug)]
pub struct Member {
    pub secret: Secret,
    pub world_size: usize,
    pub rank: Option<usize>,
    /// The process (random, one per process): the connections of one rank
    /// share it, so the store tells them from another process given the
    /// same rank.
    pub process: u64,
}

impl Member {
    /// This process, as `rank` of the job.
    pub fn new(secret: Secret, world_size: usize, rank: Option<usize>) -> Member {
        Member {
            secret,
            world_size,
            rank,
            process: this_process(),
        }
    }

    fn whom(&self) -> String {
        self.rank
            .map_or("a client".to_string(), |rank| format!("rank {rank}"))
    }
}

fn this_process() -> u64 {
    static ID: OnceLock<u64> = OnceLock::new();
    *ID.get_or_init(|| {
        auth::random().map_or_else(
            |_| {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |since| since.as_nanos() as u64);
                u64::from(std::process::id()) << 32 ^ now
            },
            u64::from_le_bytes,
        )
    })
}

/// This host's name, to name a process in the store's messages.
fn host_name() -> String {
    let mut name = [0u8; 256];
    // SAFETY: the buffer is writable for its length; the name is cut at the
    // first NUL (or the end).
    let ok = unsafe { libc::gethostname(name.as_mut_ptr().cast(), name.len()) } == 0;
    let end = name
        .iter()
        .position(|&byte| byte == 0)
        .unwrap_or(name.len());
    if ok {
        String::from_utf8_lossy(&name[..end]).into_owned()
    } else {
        "an unnamed host".into()
    }
}

/// Why a handshake did not end in a session.
enum Refusal {
    /// For good: another job, a refusal, a store that is not one.
    Final(Error),
    /// The connection broke: worth another try until the timeout.
    Retry(io::Error),
}

/// A connection to the store. Requests are serialized, in the order they
/// were made: a thread waiting in slices (a cpu rank's collective on its
/// comm queue) must not shut out another's requests (its host thread's
/// barrier), as an unfair lock let it on a 16-core host. A thread that
/// needs to block on its own (a watchdog) opens a connection of its own.
pub struct StoreClient {
    /// The connection and its session, or why it was given up.
    connection: FairMutex<Result<(TcpStream, auth::Session), Error>>,
    addr: String,
    rank: Option<usize>,
    /// The rank whose process hosts the server, if a rank does.
    host: Option<usize>,
}

impl std::fmt::Debug for StoreClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreClient")
            .field("addr", &self.addr)
            .field("rank", &self.rank)
            .finish_non_exhaustive()
    }
}

pub use crate::core::store::Got;

impl StoreClient {
    /// Connects to the store at `addr` as `member`, retrying until
    /// `timeout` (the server may not be up yet). `host` is the rank whose
    /// process runs the server, if one does: losing the connection then
    /// means that rank exited.
    pub fn connect(
        addr: &str,
        member: &Member,
        host: Option<usize>,
        timeout: Duration,
    ) -> Result<StoreClient> {
        StoreClient::connect_watched(addr, member, host, None, timeout)
    }

    /// As [`StoreClient::connect`], for a watchdog that makes a request at
    /// least every `heartbeat`: silent longer, its rank is failed by the
    /// store as stopped.
    pub fn connect_watched(
        addr: &str,
        member: &Member,
        host: Option<usize>,
        heartbeat: Option<Duration>,
        timeout: Duration,
    ) -> Result<StoreClient> {
        let deadline = Instant::now() + timeout;
        loop {
            let attempt = addr
                .to_socket_addrs()
                .and_then(|mut addrs| {
                    addrs.next().ok_or_else(|| {
                        io::Error::new(io::ErrorKind::NotFound, "the name has no address")
                    })
                })
                .and_then(|resolved| TcpStream::connect_timeout(&resolved, Duration::from_secs(1)))
                .map_err(Refusal::Retry)
                .and_then(|stream| {
                    // Within the connect's own deadline: a store whose host is
                    // stopped accepts (the kernel does) but never answers.
                    let left = deadline.saturating_duration_since(Instant::now());
                    let limit = HANDSHAKE.min(left).max(Duration::from_millis(100));
                    handshake(stream, addr, member, heartbeat, limit)
                });
            match attempt {
                Ok((stream, session)) => {
                    return Ok(StoreClient {
                        connection: FairMutex::new(Ok((stream, session))),
                        addr: addr.to_string(),
                        rank: member.rank,
                        host,
                    });
                }
                Err(Refusal::Final(error)) => return Err(error),
                Err(Refusal::Retry(error)) if Instant::now() >= deadline => {
                    return Err(Error::Timeout {
                        after: timeout,
                        waiting: format!("to connect to the store at {addr} (last error: {error})"),
                    });
                }
                Err(Refusal::Retry(_)) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }

    pub fn addr(&self) -> &str {
        &self.addr
    }

    pub fn rank(&self) -> Option<usize> {
        self.rank
    }

    /// The error for a lost connection: a response that failed its check
    /// (tampered with on the way) and a store that stopped answering are
    /// named as such; else the connection closed, and the rank hosting the
    /// store, if one does, exited.
    fn lost(&self, error: io::Error) -> Error {
        let addr = &self.addr;
        if error.kind() == io::ErrorKind::InvalidData {
            return Error::Io(format!(
                "a response from the store at {addr} failed its check ({error}): someone \
                 tampers with the connection"
            ));
        }
        if matches!(
            error.kind(),
            io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
        ) {
            let silent = format!(
                "did not answer within the request's wait and {}s of slack (stopped, or its \
                 host unreachable)",
                SLACK.as_secs()
            );
            return match self.host {
                Some(host) if Some(host) != self.rank => Error::Peer {
                    rank: host,
                    what: format!("is not responding: the store it hosts at {addr} {silent}"),
                },
                _ => Error::Io(format!(
                    "the store at {addr} is not responding: it {silent}"
                )),
            };
        }
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
    ///
    /// A connection that failed once (no response in time, a frame that
    /// failed its check, a close) is given up: a late response would be
    /// read as the next request's. Every later request fails at once with
    /// the same error.
    fn call(&self, request: Request, blocks: Duration) -> Result<Response> {
        let mut connection = self.connection.lock();
        let (stream, session) = match &mut *connection {
            Ok(open) => open,
            Err(lost) => return Err(lost.clone()),
        };
        let _ = stream.set_write_timeout(Some(SLACK));
        let _ = stream.set_read_timeout(Some(blocks.saturating_add(SLACK)));
        let frame = write_frame(stream, &request.encode(), Some(session))
            .and_then(|()| read_frame(stream, MAX_FRAME, Some(session)))
            .and_then(|frame| Response::decode(&frame));
        let response = match frame {
            Ok(response) => response,
            Err(error) => {
                let error = self.lost(error);
                let _ = stream.shutdown(std::net::Shutdown::Both);
                *connection = Err(error.clone());
                return Err(error);
            }
        };
        match response {
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

    /// Tells every rank that `failure` (of this connection's rank) happened.
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

    /// The ranks of the world that never joined the store.
    pub fn absent(&self) -> Result<Vec<usize>> {
        match self.call(Request::Absent, Duration::ZERO)? {
            Response::Ranks(ranks) => Ok(ranks),
            _ => Err(self.unexpected()),
        }
    }

    /// Says this rank is done: its connections may close from now on.
    pub fn goodbye(&self) -> Result<()> {
        self.expect_ok(Request::Goodbye, Duration::ZERO)
    }
}

/// HIR's own store as the job's store: the bootstrap of either backend,
/// and the cpu backend's collectives between processes, go through it.
impl KeyValueStore for StoreClient {
    fn describe(&self) -> String {
        format!("the store at {}", self.addr)
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        StoreClient::set(self, key, value)
    }

    fn get_or_missing(&self, keys: &[String], timeout: Duration) -> Result<Got> {
        StoreClient::get_or_missing(self, keys, timeout)
    }

    fn add(&self, key: &str, delta: i64) -> Result<i64> {
        StoreClient::add(self, key, delta)
    }

    fn delete(&self, keys: &[String]) -> Result<()> {
        StoreClient::delete(self, keys)
    }

    fn post_failure(&self, rank: usize, op: &str, message: &str) -> Result<()> {
        self.fail(Failure::failed(rank, op, message))
    }

    fn check_failed(&self) -> Result<()> {
        match self.failures(Duration::ZERO)?.first() {
            Some(failure) => Err(failure.error()),
            None => Ok(()),
        }
    }
}

/// The client's side of the handshake, within `limit` in all.
fn handshake(
    stream: TcpStream,
    addr: &str,
    member: &Member,
    heartbeat: Option<Duration>,
    limit: Duration,
) -> std::result::Result<(TcpStream, auth::Session), Refusal> {
    let _ = stream.set_nodelay(true);
    let mut timed = Deadline::new(&stream, limit);
    let frame = read_frame(&mut timed, MAX_HANDSHAKE_FRAME, None).map_err(Refusal::Retry)?;
    let challenge = Challenge::decode(&frame).map_err(|error| {
        Refusal::Final(Error::Io(format!(
            "the server at {addr} is not a HIR store: {error}"
        )))
    })?;
    let hello = Hello {
        nonce: auth::random().map_err(Refusal::Retry)?,
        rank: member.rank,
        world_size: member.world_size,
        process: member.process,
        pid: std::process::id(),
        host: host_name(),
        heartbeat,
    };
    let body = hello.body();
    let proof = member
        .secret
        .hello_proof(&challenge.nonce, &hello.nonce, &body);
    write_frame(&mut timed, &hello.encode(&proof), None).map_err(Refusal::Retry)?;
    let frame = read_frame(&mut timed, MAX_HANDSHAKE_FRAME, None).map_err(Refusal::Retry)?;
    let verdict = Verdict::decode(&frame).map_err(|error| {
        Refusal::Final(Error::Io(format!(
            "a bad answer from the store at {addr}: {error}"
        )))
    })?;
    match verdict {
        Verdict::Refused(why) => Err(Refusal::Final(Error::Invalid(format!(
            "the store at {addr} refused {}: {why}",
            member.whom()
        )))),
        Verdict::Welcome { proof } => {
            let expected = member
                .secret
                .welcome_proof(&challenge.nonce, &hello.nonce, &body);
            if !same_proof(&proof, &expected) {
                return Err(Refusal::Final(Error::Invalid(format!(
                    "the store at {addr} did not prove that it knows this job's secret: \
                     something else holds its port"
                ))));
            }
            let _ = stream.set_read_timeout(None);
            let _ = stream.set_write_timeout(None);
            let session = member
                .secret
                .session(&challenge.nonce, &hello.nonce, Side::Client);
            Ok((stream, session))
        }
    }
}
