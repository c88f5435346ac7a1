//! Who may use the store: the members of one job, who share its secret.
//!
//! A launcher generates the secret ([`Secret::generate`]: 32 random bytes
//! from `getrandom`, as 64 hex digits) and gives it to its ranks in
//! `HIR_JOB_SECRET`; under torchrun (or by hand) every rank reads the same
//! variable, which the user sets. The secret never travels: each connection
//! proves it knows it with HMAC-SHA256 over nonces of both sides (the
//! handshake), and then every frame either side sends carries an
//! HMAC-SHA256 tag under a key of that connection ([`Session`]) and its
//! sequence number, so a frame cannot be forged, altered, replayed or
//! reordered by anyone without the secret.
//!
//! The [`JobId`] (a hash of the secret, safe to show) tells two jobs apart:
//! a store refuses a member of another job, and a member another job's
//! store, naming both ids.
//!
//! Without `HIR_JOB_SECRET` a job runs only on a loopback `MASTER_ADDR`,
//! with the empty secret ([`Secret::none`]): every such job has the same id
//! and any local user can connect. Nothing is encrypted.

use crate::error::{Error, Result};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::fmt;
use std::io;

/// The variable that carries the job's secret to its ranks.
pub const SECRET_VAR: &str = "HIR_JOB_SECRET";
/// The fewest characters a secret may have (128 bits as hex).
pub const MIN_SECRET: usize = 32;
/// A tag's length: a full HMAC-SHA256.
pub const TAG: usize = 32;
/// A nonce's length.
pub const NONCE: usize = 32;

type HmacSha256 = Hmac<Sha256>;

/// A job's shared secret. Its `Debug` shows the job id, never the secret.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret {
    value: String,
}

impl Secret {
    /// 32 random bytes as 64 hex digits: what a launcher gives its ranks.
    pub fn generate() -> io::Result<Secret> {
        let bytes: [u8; 32] = random()?;
        Ok(Secret {
            value: bytes.iter().map(|byte| format!("{byte:02x}")).collect(),
        })
    }

    /// The secret in `value` (`HIR_JOB_SECRET`): at least [`MIN_SECRET`]
    /// characters, used as they are (surrounding whitespace trimmed).
    pub fn parse(value: &str) -> Result<Secret> {
        let value = value.trim();
        if value.len() < MIN_SECRET {
            return Err(Error::Invalid(format!(
                "{SECRET_VAR} has {} characters, fewer than the {MIN_SECRET} a job's secret \
                 needs (e.g. `openssl rand -hex 32`)",
                value.len()
            )));
        }
        Ok(Secret {
            value: value.to_string(),
        })
    }

    /// The empty secret of a job without `HIR_JOB_SECRET` (loopback only):
    /// anyone can prove it.
    pub fn none() -> Secret {
        Secret {
            value: String::new(),
        }
    }

    /// Whether this is [`Secret::none`].
    pub fn is_none(&self) -> bool {
        self.value.is_empty()
    }

    /// The value to set `HIR_JOB_SECRET` to.
    pub fn value(&self) -> &str {
        &self.value
    }

    /// The job's id: the first 8 bytes of an HMAC of a fixed label.
    pub fn job_id(&self) -> JobId {
        let mac = self.mac(&[b"hir-store/job-id/v1"]);
        let mut id = [0u8; 8];
        id.copy_from_slice(&mac[..8]);
        JobId(id)
    }

    /// HMAC-SHA256 of the concatenated `parts` under the secret.
    fn mac(&self, parts: &[&[u8]]) -> [u8; TAG] {
        mac(self.value.as_bytes(), parts)
    }

    /// The proof in a client's hello, over both nonces and its fields.
    pub fn hello_proof(
        &self,
        server: &[u8; NONCE],
        client: &[u8; NONCE],
        body: &[u8],
    ) -> [u8; TAG] {
        self.mac(&[b"hir-store/hello/v1", server, client, body])
    }

    /// The server's proof in its welcome (so that a client knows the store
    /// is the job's, not a stranger's on its port).
    pub fn welcome_proof(
        &self,
        server: &[u8; NONCE],
        client: &[u8; NONCE],
        body: &[u8],
    ) -> [u8; TAG] {
        self.mac(&[b"hir-store/welcome/v1", server, client, body])
    }

    /// The connection's frame key, for one side.
    pub fn session(&self, server: &[u8; NONCE], client: &[u8; NONCE], side: Side) -> Session {
        Session {
            key: self.mac(&[b"hir-store/session/v1", server, client]),
            side,
            sent: 0,
            received: 0,
        }
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_none() {
            write!(f, "Secret(none)")
        } else {
            write!(f, "Secret(job {})", self.job_id())
        }
    }
}

fn mac(key: &[u8], parts: &[&[u8]]) -> [u8; TAG] {
    let mut mac = HmacSha256::new_from_slice(key).expect("HMAC takes a key of any length");
    for part in parts {
        mac.update(part);
    }
    mac.finalize().into_bytes().into()
}

/// Whether `tag` is the HMAC-SHA256 of `parts` under `key`, in constant time.
fn verify(key: &[u8], parts: &[&[u8]], tag: &[u8]) -> bool {
    let mut mac = HmacSha256::new_from_slice(key).expect("HMAC takes a key of any length");
    for part in parts {
        mac.update(part);
    }
    mac.verify_slice(tag).is_ok()
}

/// Whether `proof` is `expected`, in constant time.
pub fn same_proof(proof: &[u8], expected: &[u8; TAG]) -> bool {
    proof.len() == TAG
        && proof
            .iter()
            .zip(expected)
            .fold(0u8, |diff, (a, b)| diff | (a ^ b))
            == 0
}

/// A job's public id, derived from its secret.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct JobId(pub [u8; 8]);

impl fmt::Display for JobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|byte| write!(f, "{byte:02x}"))
    }
}

impl fmt::Debug for JobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JobId({self})")
    }
}

/// Which end of a connection a [`Session`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Client,
    Server,
}

impl Side {
    fn byte(self) -> u8 {
        match self {
            Side::Client => 0,
            Side::Server => 1,
        }
    }

    fn other(self) -> Side {
        match self {
            Side::Client => Side::Server,
            Side::Server => Side::Client,
        }
    }
}

/// One end of an authenticated connection: the tag of each frame is an
/// HMAC under the connection's key of the sender's side, the frame's
/// number in its direction, and the payload.
pub struct Session {
    key: [u8; TAG],
    side: Side,
    sent: u64,
    received: u64,
}

impl Session {
    /// The tag of the next frame this side sends.
    pub fn seal(&mut self, payload: &[u8]) -> [u8; TAG] {
        let number = self.sent.to_le_bytes();
        self.sent += 1;
        mac(&self.key, &[&[self.side.byte()], &number, payload])
    }

    /// Whether `tag` is that of the next frame from the other side.
    pub fn open(&mut self, payload: &[u8], tag: &[u8]) -> bool {
        let number = self.received.to_le_bytes();
        self.received += 1;
        verify(
            &self.key,
            &[&[self.side.other().byte()], &number, payload],
            tag,
        )
    }
}

/// `N` random bytes from the kernel (`getrandom`, else `/dev/urandom`).
pub fn random<const N: usize>() -> io::Result<[u8; N]> {
    let mut bytes = [0u8; N];
    let mut filled = 0;
    while filled < N {
        // SAFETY: the pointer and length are those of the unfilled part of
        // `bytes`, which the call writes at most.
        let got = unsafe { libc::getrandom(bytes[filled..].as_mut_ptr().cast(), N - filled, 0) };
        if got < 0 {
            let error = io::Error::last_os_error();
            if error.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            use std::io::Read;
            std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes[filled..])?;
            return Ok(bytes);
        }
        filled += got as usize;
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_random_long_and_never_shown() {
        let (a, b) = (Secret::generate().unwrap(), Secret::generate().unwrap());
        assert_ne!(a, b);
        assert_eq!(a.value().len(), 64);
        assert_eq!(Secret::parse(a.value()).unwrap(), a);
        assert_ne!(a.job_id(), b.job_id());
        assert!(!format!("{a:?}").contains(a.value()));
        assert_eq!(format!("{a:?}"), format!("Secret(job {})", a.job_id()));
        let short = Secret::parse("0123456789").unwrap_err().to_string();
        assert!(
            short.starts_with("HIR_JOB_SECRET has 10 characters"),
            "{short}"
        );
        assert!(Secret::none().is_none());
    }

    #[test]
    fn a_session_takes_only_the_other_sides_frames_in_order() {
        let secret = Secret::generate().unwrap();
        let (server, client) = ([1u8; NONCE], [2u8; NONCE]);
        let mut near = secret.session(&server, &client, Side::Client);
        let mut far = secret.session(&server, &client, Side::Server);
        let first = near.seal(b"one");
        let second = near.seal(b"two");
        // Out of order, altered, or reflected back: refused.
        assert!(!far.open(b"two", &second));
        let mut far = secret.session(&server, &client, Side::Server);
        assert!(!far.open(b"One", &first));
        let mut far = secret.session(&server, &client, Side::Server);
        assert!(far.open(b"one", &first));
        assert!(far.open(b"two", &second));
        let reply = far.seal(b"ok");
        let mut echo = secret.session(&server, &client, Side::Server);
        assert!(!echo.open(b"ok", &reply));
        assert!(near.open(b"ok", &reply));
        // Another secret, or other nonces: another key.
        let mut stranger = Secret::generate()
            .unwrap()
            .session(&server, &client, Side::Server);
        assert!(!stranger.open(b"one", &first));
        let mut replayed = secret.session(&[3u8; NONCE], &client, Side::Server);
        assert!(!replayed.open(b"one", &first));
    }
}
