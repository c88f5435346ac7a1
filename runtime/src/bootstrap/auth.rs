//! Who may use the store: the members of one job, who share its secret.
//!
//! A launcher generates the secret ([`Secret::generate`]: 32 random bytes
//! from `getrandom`, as 64 hex digits) and gives it to its ranks in
//! `HIR_JOB_SECRET`; under torchrun (or by hand) every rank reads the same
//! variable, which the user sets. A secret is random bytes written as hex
//! or base64, at least 128 bits of them, with no repeating pattern
//! ([`Secret::parse`]): a password or a short or patterned value is refused,
//! since anyone who sees one handshake could test guesses of it offline.
//!
//! The secret never travels, nor does anything derived from it before the
//! peer proved it knows it: the store's challenge is a nonce alone (no job
//! id, which would let a stranger test guesses offline), the client proves
//! the secret with HMAC-SHA256 over both nonces and its hello, and only
//! then does the store answer with its own proof (the handshake). Then
//! every frame either side sends carries an HMAC-SHA256 tag under a key of
//! that connection ([`Session`]) and its sequence number, so a frame cannot
//! be forged, altered, replayed or reordered by anyone without the secret.
//! Someone must prove first: the client does, to whatever holds the store's
//! port, bound to that side's fresh nonce; a 128-bit secret keeps that proof
//! from being guessed back.
//!
//! Without `HIR_JOB_SECRET` a job runs only on a loopback `MASTER_ADDR`,
//! with the empty secret ([`Secret::none`]): any local user can connect.
//! Nothing is encrypted.

use crate::error::{Error, Result};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::fmt;
use std::io;

/// The variable that carries the job's secret to its ranks.
pub const SECRET_VAR: &str = "HIR_JOB_SECRET";
/// The fewest bits of random bytes a secret holds.
pub const MIN_SECRET_BITS: usize = 128;
/// A tag's length: a full HMAC-SHA256.
pub const TAG: usize = 32;
/// A nonce's length.
pub const NONCE: usize = 32;

type HmacSha256 = Hmac<Sha256>;

/// A job's shared secret. Its `Debug` never shows it, nor anything derived
/// from it.
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

    /// The secret in `value` (`HIR_JOB_SECRET`, surrounding whitespace
    /// trimmed): random bytes as hex digits or base64 (standard or URL-safe,
    /// padded or not), at least [`MIN_SECRET_BITS`] of them, which neither
    /// repeat a shorter pattern nor take fewer than half as many distinct
    /// byte values as there are bytes (up to 128). Anything else is refused
    /// with what is wrong: a secret too weak to resist guessing offline.
    pub fn parse(value: &str) -> Result<Secret> {
        let value = value.trim();
        let hint = "a job's secret is random bytes written as hex or base64, e.g. \
                    `openssl rand -hex 32`";
        let bytes = decode_hex(value)
            .or_else(|| decode_base64(value))
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "{SECRET_VAR} is neither hex nor base64 ({} characters): {hint}",
                    value.len()
                ))
            })?;
        let bits = bytes.len() * 8;
        if bits < MIN_SECRET_BITS {
            return Err(Error::Invalid(format!(
                "{SECRET_VAR} holds {bits} bits, fewer than the {MIN_SECRET_BITS} a job's \
                 secret needs: {hint}"
            )));
        }
        if let Some(why) = patterned(&bytes) {
            return Err(Error::Invalid(format!(
                "{SECRET_VAR} is not random: its {} bytes {why}: {hint}",
                bytes.len()
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
            write!(f, "Secret(hidden)")
        }
    }
}

/// The bytes of `text` if it is hex digits, two per byte.
fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if text.is_empty() || !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(text.get(at..at + 2)?, 16).ok())
        .collect()
}

/// The bytes of `text` if it is base64, standard (`+/`) or URL-safe (`-_`),
/// with or without its `=` padding.
fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let digits = text.trim_end_matches('=');
    if digits.is_empty() || text.len() - digits.len() > 2 || digits.len() % 4 == 1 {
        return None;
    }
    let value = |byte: u8| -> Option<u32> {
        Some(u32::from(match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        }))
    };
    let mut bytes = Vec::with_capacity(digits.len() * 3 / 4);
    for group in digits.as_bytes().chunks(4) {
        let mut bits = 0u32;
        for &digit in group {
            bits = bits << 6 | value(digit)?;
        }
        bits <<= 6 * (4 - group.len());
        let whole = [(bits >> 16) as u8, (bits >> 8) as u8, bits as u8];
        bytes.extend(&whole[..group.len() - 1]);
    }
    Some(bytes)
}

/// What shows that `bytes` are not random, if anything does: a shorter
/// pattern repeated, or few distinct values (16 random bytes have 8 or
/// fewer distinct values about once in 10^10 draws, 32 once in 5 * 10^14).
fn patterned(bytes: &[u8]) -> Option<String> {
    let len = bytes.len();
    if let Some(period) =
        (1..=len / 2).find(|&period| (period..len).all(|at| bytes[at] == bytes[at - period]))
    {
        return Some(format!("repeat a pattern of {period}"));
    }
    let mut seen = [false; 256];
    bytes
        .iter()
        .for_each(|&byte| seen[usize::from(byte)] = true);
    let distinct = seen.iter().filter(|&&seen| seen).count();
    let needed = len.min(256) / 2;
    (distinct <= needed).then(|| format!("take only {distinct} distinct values"))
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
        assert!(!format!("{a:?}").contains(a.value()));
        assert_eq!(format!("{a:?}"), "Secret(hidden)");
        assert!(Secret::none().is_none());
    }

    #[test]
    fn weak_secrets_are_refused_saying_why() {
        // 128 random bits or more, as hex or base64 (either alphabet,
        // padded or not): taken.
        for good in [
            "3f0c9a1d22e8b4c791aa02be5c6d7e10",
            "  3F0C9A1D22E8B4C791AA02BE5C6D7E10\n",
            "PwyaHSLotMeRqgK+XG1+EA==",
            "PwyaHSLotMeRqgK-XG1-EA",
            "uqs7m/HuDMLaLty7Sk2MpFVcr29TcvQPqqmAY3arxn0=",
        ] {
            assert!(Secret::parse(good).is_ok(), "{good}");
        }
        let error = |value: &str| Secret::parse(value).unwrap_err().to_string();
        let hint = "a job's secret is random bytes written as hex or base64, e.g. \
                    `openssl rand -hex 32`";
        // 32 characters, the old bound, of a password: not an encoding.
        assert_eq!(
            error("correct horse battery staple!!!!"),
            format!("HIR_JOB_SECRET is neither hex nor base64 (32 characters): {hint}")
        );
        assert_eq!(
            error("0123456789"),
            format!(
                "HIR_JOB_SECRET holds 40 bits, fewer than the 128 a job's secret needs: {hint}"
            )
        );
        // 120 bits of base64.
        assert!(error("PwyaHSLotMeRqgK+XG1+").contains("holds 120 bits"));
        assert_eq!(
            error(&"a".repeat(32)),
            format!("HIR_JOB_SECRET is not random: its 16 bytes repeat a pattern of 1: {hint}")
        );
        assert!(error(&"0123456789abcdef".repeat(2)).contains("repeat a pattern of 8"));
        assert!(error(&"deadbeef".repeat(8)).contains("repeat a pattern of 4"));
        assert!(error("00000000000000000000000000000001").contains("take only 2 distinct values"));
        assert!(error("0a0b0a0b0a0b0a0b0a0b0a0b0a0b0a0c").contains("distinct values"));
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
