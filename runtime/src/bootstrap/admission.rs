//! How the store lets a connection in: a slot among the connections it
//! holds ([`Connections`]), then the handshake ([`handshake`]), which
//! proves the client knows the job's secret, then asks the store (`admit`
//! in `store.rs`, which knows the ranks that joined) to let it in.
//!
//! A connection that has not finished its handshake holds one of
//! [`MAX_UNPROVEN`] slots for at most [`HANDSHAKE`] in all (a deadline, not
//! a timeout per read: a client that sends a byte now and then is cut off
//! all the same). When every slot is taken, a newcomer takes the slot of
//! the oldest handshake of the source address that holds the most: idle or
//! slow connections (a slow-loris) give way to new ones, while a member's
//! handshake, one round trip, is done long before it would be the oldest.
//! So strangers cannot keep the job's ranks out; they can only make one
//! retry (see `client.rs`).

use super::auth::{self, Secret, Side, same_proof};
use super::protocol::{Challenge, Hello, MAX_HANDSHAKE_FRAME, Verdict, read_frame, write_frame};
use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{IpAddr, Shutdown, TcpStream};
use std::time::{Duration, Instant};

/// The most connections open at once.
pub const MAX_CONNECTIONS: usize = 1024;
/// The most connections in their handshake at once.
pub const MAX_UNPROVEN: usize = 64;
/// How long a connection has for its whole handshake (either side).
pub const HANDSHAKE: Duration = Duration::from_secs(10);

/// The connections a server holds.
#[derive(Default)]
pub(super) struct Connections {
    next: u64,
    /// A clone of each open connection, to shut them down with the server;
    /// removed when it closes.
    open: HashMap<u64, TcpStream>,
    /// Those still in their handshake: when each came, and from where.
    unproven: HashMap<u64, (Instant, IpAddr)>,
}

impl Connections {
    /// A slot for `stream` (a clone of the accepted connection) from
    /// `source`: its id, or `None` when [`MAX_CONNECTIONS`] are open. When
    /// the handshake slots are full, the oldest handshake of the source
    /// holding the most is shut down to make room.
    pub fn enter(&mut self, stream: TcpStream, source: IpAddr) -> Option<u64> {
        if self.open.len() >= MAX_CONNECTIONS {
            return None;
        }
        if self.unproven.len() >= MAX_UNPROVEN {
            self.evict();
        }
        let id = self.next;
        self.next += 1;
        self.open.insert(id, stream);
        self.unproven.insert(id, (Instant::now(), source));
        Some(id)
    }

    /// Ends the oldest handshake of the source with the most of them.
    fn evict(&mut self) {
        let mut held: HashMap<IpAddr, usize> = HashMap::new();
        for (_, source) in self.unproven.values() {
            *held.entry(*source).or_default() += 1;
        }
        let victim = self
            .unproven
            .iter()
            .max_by_key(|&(_, (since, source))| (held[source], std::cmp::Reverse(*since)))
            .map(|(&id, _)| id);
        if let Some(id) = victim {
            self.unproven.remove(&id);
            if let Some(stream) = self.open.get(&id) {
                // Its thread's read fails, and it forgets the connection.
                let _ = stream.shutdown(Shutdown::Both);
            }
        }
    }

    /// Connection `id` finished its handshake (either way).
    pub fn proven(&mut self, id: u64) {
        self.unproven.remove(&id);
    }

    /// Connection `id` closed.
    pub fn close(&mut self, id: u64) {
        self.unproven.remove(&id);
        self.open.remove(&id);
    }

    pub fn open(&self) -> usize {
        self.open.len()
    }

    /// Shuts every connection down (the server is closing).
    pub fn shut_all(&mut self) {
        for (_, connection) in self.open.drain() {
            let _ = connection.shutdown(Shutdown::Both);
        }
        self.unproven.clear();
    }
}

/// A connection's reads and writes, each waiting only for what is left
/// until `until`.
/// (Both sides' handshakes use it.)
pub(super) struct Deadline<'s> {
    stream: &'s TcpStream,
    within: Duration,
    until: Instant,
}

impl<'s> Deadline<'s> {
    pub fn new(stream: &'s TcpStream, within: Duration) -> Deadline<'s> {
        Deadline {
            stream,
            within,
            until: Instant::now() + within,
        }
    }

    fn over(&self) -> io::Error {
        io::Error::new(
            io::ErrorKind::TimedOut,
            format!("the handshake's {:?} are over", self.within),
        )
    }

    fn left(&self) -> io::Result<Duration> {
        let left = self.until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(self.over());
        }
        Ok(left)
    }

    /// A socket timeout (which the deadline set) as the deadline's error.
    fn timed<T>(&self, result: io::Result<T>) -> io::Result<T> {
        result.map_err(|error| match error.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => self.over(),
            _ => error,
        })
    }
}

impl Read for Deadline<'_> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        self.stream.set_read_timeout(Some(self.left()?))?;
        let read = (&mut &*self.stream).read(buffer);
        self.timed(read)
    }
}

impl Write for Deadline<'_> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.stream.set_write_timeout(Some(self.left()?))?;
        let written = (&mut &*self.stream).write(bytes);
        self.timed(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The server's side of the handshake, within [`HANDSHAKE`] in all: the
/// client's hello, once it proved it knows `secret` and `admit` let it in
/// (the store decides who is a member: `store.rs`), and the connection's
/// session; else why not.
pub(super) fn handshake(
    stream: &TcpStream,
    secret: &Secret,
    admit: impl FnOnce(&Hello) -> Result<(), String>,
) -> Result<(Hello, auth::Session), String> {
    let mut timed = Deadline::new(stream, HANDSHAKE);
    let nonce = auth::random().map_err(|error| format!("the store has no randomness: {error}"))?;
    // The nonce alone: nothing derived from the secret goes to a client
    // before it proved that it knows the secret.
    write_frame(&mut timed, &Challenge { nonce }.encode(), None)
        .map_err(|error| error.to_string())?;
    let frame = read_frame(&mut timed, MAX_HANDSHAKE_FRAME, None)
        .map_err(|error| format!("no hello: {error}"))?;
    let (hello, body, proof) =
        Hello::decode(&frame).map_err(|error| format!("a bad hello: {error}"))?;
    let expected = secret.hello_proof(&nonce, &hello.nonce, body);
    if !same_proof(&proof, &expected) {
        return Err(format!(
            "{} did not prove that it knows this job's secret: a stranger, or a rank of \
             another job given this port, or one given another {}",
            hello.who(),
            auth::SECRET_VAR
        ));
    }
    admit(&hello)?;
    let welcome = Verdict::Welcome {
        proof: secret.welcome_proof(&nonce, &hello.nonce, body),
    };
    write_frame(&mut timed, &welcome.encode(), None).map_err(|error| error.to_string())?;
    let _ = stream.set_read_timeout(None);
    let _ = stream.set_write_timeout(None);
    let session = secret.session(&nonce, &hello.nonce, Side::Server);
    Ok((hello, session))
}

/// Tells a refused client why, best effort and briefly: a stranger need not
/// listen.
pub(super) fn refuse(stream: &TcpStream, why: String) {
    let mut timed = Deadline::new(stream, Duration::from_secs(1));
    let _ = write_frame(&mut timed, &Verdict::Refused(why).encode(), None);
}
