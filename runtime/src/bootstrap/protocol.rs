//! The store's messages and frames, and how each is read with length
//! checks: a message that is short, long, or holds a bad value is an error,
//! never a panic (`security_tests.rs` fuzzes every decoder here). A
//! [`Failure`] is here too: it travels in requests and responses, and the
//! server and client both hold it.
//!
//! A frame is a little-endian `u32` length, the payload, and, once the
//! handshake is done, a [`TAG`]-byte tag ([`super::auth::Session`]).
//! Requests, responses and verdicts are a tag byte and the fields; a
//! challenge starts with the protocol's magic and version. Strings and byte strings are a `u32` length and the bytes,
//! integers little-endian `i64`, nonces and proofs their bytes.
//!
//! The handshake: the server sends a [`Challenge`] (its nonce: nothing
//! derived from the secret), the client a [`Hello`] (its nonce, who it is,
//! and its proof of the secret), the server a [`Verdict`] (welcome, with
//! its own proof, or refused, with why). Then requests and responses, each
//! frame tagged.

use super::auth::{NONCE, Session, TAG};
use crate::error::Error;
use std::fmt;
use std::io::{self, Read, Write};
use std::time::Duration;

/// The largest frame before the handshake is done (challenge, hello,
/// verdict).
pub const MAX_HANDSHAKE_FRAME: usize = 4 << 10;
/// The largest frame of an authenticated connection.
pub const MAX_FRAME: usize = 1 << 30;
/// The handshake's first bytes, with its version (2: no job id).
const MAGIC: &[u8; 8] = b"HIRSTOR2";

fn invalid(what: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.into())
}

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

pub enum Request {
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
    /// The ranks of the world that never said hello.
    Absent,
}

pub enum Response {
    Ok,
    Values(Vec<Vec<u8>>),
    Int(i64),
    Timeout { missing: Vec<String> },
    Failed(Failure),
    Failures(Vec<Failure>),
    Error(String),
    Ranks(Vec<usize>),
}

/// The server's first frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Challenge {
    pub nonce: [u8; NONCE],
}

/// Who a connection is: a rank of the job (or not a rank, e.g. a probe).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hello {
    pub nonce: [u8; NONCE],
    pub rank: Option<usize>,
    pub world_size: usize,
    /// The process: a random id (the same for all its connections), its
    /// pid and host, to name it.
    pub process: u64,
    pub pid: u32,
    pub host: String,
    /// A watchdog's connection: silent this long, its rank is stuck.
    pub heartbeat: Option<Duration>,
}

/// The server's answer to a hello.
pub enum Verdict {
    Welcome { proof: [u8; TAG] },
    Refused(String),
}

#[derive(Default)]
pub(super) struct Writer(pub(super) Vec<u8>);

impl Writer {
    pub(super) fn tag(mut self, tag: u8) -> Self {
        self.0.push(tag);
        self
    }
    pub(super) fn int(mut self, value: i64) -> Self {
        self.0.extend(value.to_le_bytes());
        self
    }
    pub(super) fn raw(mut self, bytes: &[u8]) -> Self {
        self.0.extend(bytes);
        self
    }
    pub(super) fn bytes(mut self, bytes: &[u8]) -> Self {
        // Frames are at most `MAX_FRAME` long, so lengths fit in a u32.
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

/// Reads fields from a payload; every read checks that the bytes are there.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take(&mut self, n: usize) -> io::Result<&[u8]> {
        if self.0.len() < n {
            return Err(invalid(format!(
                "a truncated store message ({n} bytes wanted, {} left)",
                self.0.len()
            )));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
    fn array<const N: usize>(&mut self) -> io::Result<[u8; N]> {
        let mut array = [0u8; N];
        array.copy_from_slice(self.take(N)?);
        Ok(array)
    }
    fn tag(&mut self) -> io::Result<u8> {
        Ok(self.array::<1>()?[0])
    }
    fn int(&mut self) -> io::Result<i64> {
        Ok(i64::from_le_bytes(self.array()?))
    }
    /// A count of items at least `each` bytes long: no more than are left.
    fn count(&mut self, each: usize) -> io::Result<usize> {
        let count = self.int()?;
        usize::try_from(count)
            .ok()
            .filter(|&count| count.saturating_mul(each) <= self.0.len())
            .ok_or_else(|| invalid(format!("a bad count {count}")))
    }
    fn rank(&mut self) -> io::Result<usize> {
        checked_rank(self.int()?)
    }
    fn bytes(&mut self) -> io::Result<Vec<u8>> {
        let len = u32::from_le_bytes(self.array()?) as usize;
        Ok(self.take(len)?.to_vec())
    }
    fn string(&mut self) -> io::Result<String> {
        String::from_utf8(self.bytes()?).map_err(|_| invalid("a string that is not UTF-8"))
    }
    fn strings(&mut self) -> io::Result<Vec<String>> {
        (0..self.count(4)?).map(|_| self.string()).collect()
    }
    fn millis(&mut self) -> io::Result<Duration> {
        let millis = self.int()?;
        u64::try_from(millis)
            .map(Duration::from_millis)
            .map_err(|_| invalid(format!("a negative time {millis} ms")))
    }
    fn failure(&mut self) -> io::Result<Failure> {
        Ok(Failure {
            rank: self.rank()?,
            what: self.string()?,
        })
    }
    /// The end: bytes left over are an error.
    fn end<T>(&self, value: T) -> io::Result<T> {
        if self.0.is_empty() {
            Ok(value)
        } else {
            Err(invalid(format!(
                "{} bytes after the end of a store message",
                self.0.len()
            )))
        }
    }
}

/// The most ranks a job may have.
pub const MAX_RANKS: usize = 1 << 24;

fn checked_rank(rank: i64) -> io::Result<usize> {
    usize::try_from(rank)
        .ok()
        .filter(|&rank| rank < MAX_RANKS)
        .ok_or_else(|| invalid(format!("a bad rank {rank}")))
}

fn millis(duration: Duration) -> i64 {
    duration.as_millis().min(i64::MAX as u128) as i64
}

impl Request {
    pub fn encode(&self) -> Vec<u8> {
        let w = Writer::default();
        match self {
            Request::Set { key, value } => w.tag(2).bytes(key.as_bytes()).bytes(value),
            Request::Get { keys, timeout } => w.tag(3).strings(keys).int(millis(*timeout)),
            Request::Add { key, delta } => w.tag(4).bytes(key.as_bytes()).int(*delta),
            Request::Delete { keys } => w.tag(5).strings(keys),
            Request::Fail { failure } => w.tag(6).failure(failure),
            Request::Failures { timeout } => w.tag(7).int(millis(*timeout)),
            Request::Goodbye => w.tag(8),
            Request::Absent => w.tag(9),
        }
        .0
    }

    pub fn decode(bytes: &[u8]) -> io::Result<Request> {
        let mut r = Reader(bytes);
        let request = match r.tag()? {
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
            9 => Request::Absent,
            tag => return Err(invalid(format!("an unknown store request {tag}"))),
        };
        r.end(request)
    }
}

impl Response {
    pub fn encode(&self) -> Vec<u8> {
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
            Response::Ranks(ranks) => {
                let mut w = w.tag(7).int(ranks.len() as i64);
                for &rank in ranks {
                    w = w.int(rank as i64);
                }
                w
            }
        }
        .0
    }

    pub fn decode(bytes: &[u8]) -> io::Result<Response> {
        let mut r = Reader(bytes);
        let response = match r.tag()? {
            0 => Response::Ok,
            1 => Response::Values(
                (0..r.count(4)?)
                    .map(|_| r.bytes())
                    .collect::<io::Result<_>>()?,
            ),
            2 => Response::Int(r.int()?),
            3 => Response::Timeout {
                missing: r.strings()?,
            },
            4 => Response::Failed(r.failure()?),
            5 => Response::Failures(
                (0..r.count(12)?)
                    .map(|_| r.failure())
                    .collect::<io::Result<_>>()?,
            ),
            6 => Response::Error(r.string()?),
            7 => Response::Ranks(
                (0..r.count(8)?)
                    .map(|_| r.rank())
                    .collect::<io::Result<_>>()?,
            ),
            tag => return Err(invalid(format!("an unknown store response {tag}"))),
        };
        r.end(response)
    }
}

impl Challenge {
    pub fn encode(&self) -> Vec<u8> {
        Writer::default().raw(MAGIC).raw(&self.nonce).0
    }

    pub fn decode(bytes: &[u8]) -> io::Result<Challenge> {
        let mut r = Reader(bytes);
        if r.array::<8>()? != *MAGIC {
            return Err(invalid(
                "not a HIR store (or another version of it): its first message is not the handshake",
            ));
        }
        let challenge = Challenge { nonce: r.array()? };
        r.end(challenge)
    }
}

impl Hello {
    /// The fields the proofs cover.
    pub fn body(&self) -> Vec<u8> {
        Writer::default()
            .raw(&self.nonce)
            .int(self.rank.map_or(-1, |rank| rank as i64))
            .int(self.world_size as i64)
            .int(self.process as i64)
            .int(i64::from(self.pid))
            .bytes(self.host.as_bytes())
            .int(self.heartbeat.map_or(0, millis))
            .0
    }

    /// The hello frame: the body, then the proof.
    pub fn encode(&self, proof: &[u8; TAG]) -> Vec<u8> {
        Writer(self.body()).raw(proof).0
    }

    /// The hello, its body (what the proof covers) and the proof.
    pub fn decode(bytes: &[u8]) -> io::Result<(Hello, &[u8], [u8; TAG])> {
        let body = bytes
            .len()
            .checked_sub(TAG)
            .ok_or_else(|| invalid("a hello shorter than its proof"))?;
        let (body, proof) = bytes.split_at(body);
        let mut r = Reader(body);
        let nonce = r.array()?;
        let rank = match r.int()? {
            -1 => None,
            rank => Some(checked_rank(rank)?),
        };
        let world_size = r.rank()?;
        let process = r.int()? as u64;
        let pid = u32::try_from(r.int()?).map_err(|_| invalid("a bad pid"))?;
        let host = r.string()?;
        let heartbeat = match r.millis()? {
            Duration::ZERO => None,
            every => Some(every),
        };
        let hello = r.end(Hello {
            nonce,
            rank,
            world_size,
            process,
            pid,
            host,
            heartbeat,
        })?;
        let mut tag = [0u8; TAG];
        tag.copy_from_slice(proof);
        Ok((hello, body, tag))
    }

    /// `process P (pid N on HOST)`, to name it in messages.
    pub fn who(&self) -> String {
        format!(
            "process {:016x} (pid {} on {})",
            self.process, self.pid, self.host
        )
    }
}

impl Verdict {
    pub fn encode(&self) -> Vec<u8> {
        match self {
            Verdict::Welcome { proof } => Writer::default().tag(0).raw(proof).0,
            Verdict::Refused(why) => {
                // Short enough for a handshake frame.
                let mut end = why.len().min(MAX_HANDSHAKE_FRAME - 16);
                while !why.is_char_boundary(end) {
                    end -= 1;
                }
                Writer::default().tag(1).bytes(&why.as_bytes()[..end]).0
            }
        }
    }

    pub fn decode(bytes: &[u8]) -> io::Result<Verdict> {
        let mut r = Reader(bytes);
        let verdict = match r.tag()? {
            0 => Verdict::Welcome { proof: r.array()? },
            1 => Verdict::Refused(r.string()?),
            tag => return Err(invalid(format!("an unknown store verdict {tag}"))),
        };
        r.end(verdict)
    }
}

/// Writes one frame: the length, the payload, and its tag if `session`.
pub fn write_frame(
    stream: &mut impl Write,
    payload: &[u8],
    session: Option<&mut Session>,
) -> io::Result<()> {
    let len = u32::try_from(payload.len())
        .ok()
        .filter(|&len| len as usize <= MAX_FRAME)
        .ok_or_else(|| {
            invalid(format!(
                "a store message of {} bytes, over the limit of {MAX_FRAME}",
                payload.len()
            ))
        })?;
    let mut frame = Vec::with_capacity(4 + payload.len() + TAG);
    frame.extend(len.to_le_bytes());
    frame.extend(payload);
    if let Some(session) = session {
        frame.extend(session.seal(payload));
    }
    stream.write_all(&frame)
}

/// Reads one frame of at most `limit` bytes (the memory it takes grows
/// with the bytes that come, not with the length announced), checking its
/// tag if `session`.
pub fn read_frame(
    stream: &mut impl Read,
    limit: usize,
    session: Option<&mut Session>,
) -> io::Result<Vec<u8>> {
    let mut len = [0u8; 4];
    stream.read_exact(&mut len)?;
    let len = u32::from_le_bytes(len) as usize;
    if len > limit {
        return Err(invalid(format!(
            "a store message of {len} bytes, over the limit of {limit}"
        )));
    }
    let want = len + if session.is_some() { TAG } else { 0 };
    let mut frame = Vec::with_capacity(want.min(64 << 10));
    stream.take(want as u64).read_to_end(&mut frame)?;
    if frame.len() < want {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!(
                "a store message cut short ({} of {want} bytes)",
                frame.len()
            ),
        ));
    }
    if let Some(session) = session {
        let tag = frame.split_off(len);
        if !session.open(&frame, &tag) {
            return Err(invalid(
                "a store message whose tag is wrong (not from the job's member, altered, or out of order)",
            ));
        }
    }
    Ok(frame)
}
