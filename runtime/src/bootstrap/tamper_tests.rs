//! A man in the middle of a member's connection to the store, after the
//! handshake: a request altered or replayed on the way, and a response
//! altered. The store closes the connection and names the tampered frame
//! as the rank's failure (not an exit); the member names a tampered
//! response (not the store's exit), and a store that stops answering as
//! not responding, within the request's wait and the client's slack. And a
//! stranger's handshake gets nothing derived from the secret.

use super::auth::TAG;
use super::tests::{self, SECOND, client, member, server, until};
use super::*;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};

/// What the man in the middle does to the first frame after the handshake.
#[derive(Clone, Copy, PartialEq)]
enum Tamper {
    /// Flips a bit of the member's first request.
    AlterRequest,
    /// Sends the member's first request twice.
    ReplayRequest,
    /// Flips a bit of the store's first response.
    AlterResponse,
    /// Passes no response at all, as a stopped store's host would.
    Silence,
}

/// One whole frame as it travels: its length, payload and, after the
/// handshake, its tag.
fn raw_frame(stream: &mut TcpStream, tagged: bool) -> std::io::Result<Vec<u8>> {
    let mut frame = vec![0u8; 4];
    stream.read_exact(&mut frame)?;
    let len = u32::from_le_bytes(frame[..4].try_into().unwrap()) as usize;
    frame.resize(4 + len + if tagged { TAG } else { 0 }, 0);
    stream.read_exact(&mut frame[4..])?;
    Ok(frame)
}

/// Passes the frames of `from` to `to`, doing `tamper` to the first.
fn forward(mut from: TcpStream, mut to: TcpStream, tamper: Option<Tamper>) {
    let mut first = true;
    while let Ok(mut frame) = raw_frame(&mut from, true) {
        let times = match tamper.filter(|&tamper| first || tamper == Tamper::Silence) {
            Some(Tamper::Silence) => 0,
            Some(Tamper::ReplayRequest) => 2,
            Some(_) => {
                frame[4] ^= 1;
                1
            }
            None => 1,
        };
        first = false;
        for _ in 0..times {
            if to.write_all(&frame).is_err() {
                return;
            }
        }
    }
    let _ = to.shutdown(std::net::Shutdown::Both);
}

/// A proxy to `store` for one connection, tampering as `tamper` says.
fn proxy(store: SocketAddr, tamper: Tamper) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let (mut member, _) = listener.accept().unwrap();
        let mut store = TcpStream::connect(store).unwrap();
        // The handshake: challenge, hello, verdict, passed as they are.
        for (from, to) in [(0, 1), (1, 0), (0, 1)] {
            let streams = [&mut store, &mut member];
            let frame = raw_frame(streams[from], false).unwrap();
            let streams = [&mut store, &mut member];
            streams[to].write_all(&frame).unwrap();
        }
        let (up, down) = (member.try_clone().unwrap(), store.try_clone().unwrap());
        let on_responses = matches!(tamper, Tamper::AlterResponse | Tamper::Silence);
        let requests = (!on_responses).then_some(tamper);
        let responses = on_responses.then_some(tamper);
        let thread = std::thread::spawn(move || forward(up, down, requests));
        forward(store, member, responses);
        let _ = thread.join();
    });
    addr
}

#[test]
fn a_tampered_or_replayed_request_is_named_as_such() {
    for tamper in [Tamper::AlterRequest, Tamper::ReplayRequest] {
        let server = server();
        let addr = proxy(server.addr(), tamper).to_string();
        let rank = StoreClient::connect(&addr, &member(Some(1)), None, 5 * SECOND).unwrap();
        // Altered, the set never lands; replayed, the second copy fails.
        let _ = rank.set("x", b"value");
        until("the store to name the tampered frame", || {
            !server.failures().is_empty()
        });
        let failure = &server.failures()[0];
        assert_eq!(failure.rank, 1);
        assert!(
            failure
                .what
                .starts_with("sent the store a frame that failed its check"),
            "{failure}"
        );
        assert!(failure.what.contains("tag is wrong"), "{failure}");
        assert!(!failure.what.contains("exited"), "{failure}");
        // The job learns it as that failure.
        let other = client(&server, Some(0));
        match other.failures(SECOND).unwrap().first() {
            Some(first) => assert_eq!(first, failure),
            None => panic!("no failure"),
        }
    }
}

#[test]
fn a_silent_store_is_not_responding_within_the_wait_and_slack() {
    use super::client::SLACK;
    let server = server();
    let addr = proxy(server.addr(), Tamper::Silence).to_string();
    // Rank 0 hosts the store, as in a job without a launcher.
    let rank = StoreClient::connect(&addr, &member(Some(1)), Some(0), 5 * SECOND).unwrap();
    let start = std::time::Instant::now();
    let error = rank.get(&["never".to_string()], SECOND).unwrap_err();
    let took = start.elapsed();
    assert!(
        took >= SECOND + SLACK && took < SECOND + SLACK + 2 * SECOND,
        "{took:?}"
    );
    assert_eq!(
        error.to_string(),
        format!(
            "gave up: rank 0 is not responding: the store it hosts at {addr} did not answer \
             within the request's wait and 5s of slack (stopped, or its host unreachable)"
        )
    );
    // The connection is given up: the next request fails at once, rather
    // than wait again (or read the late response as its own).
    let start = std::time::Instant::now();
    assert_eq!(rank.set("x", b"value").unwrap_err(), error);
    assert!(start.elapsed() < SECOND / 10);
}

#[test]
fn a_tampered_response_is_named_by_the_member() {
    let server = server();
    let addr = proxy(server.addr(), Tamper::AlterResponse).to_string();
    let rank = StoreClient::connect(&addr, &member(Some(1)), Some(0), 5 * SECOND).unwrap();
    let error = rank.set("x", b"value").unwrap_err().to_string();
    assert!(
        error.starts_with(&format!(
            "a response from the store at {addr} failed its check"
        )),
        "{error}"
    );
    assert!(!error.contains("exited"), "{error}");
}

/// The job id the protocol's first version sent in every challenge: the
/// first 8 bytes of an HMAC of a fixed label under the secret.
fn old_job_id(secret: &Secret) -> [u8; 8] {
    use hmac::{Hmac, Mac};
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(secret.value().as_bytes()).unwrap();
    mac.update(b"hir-store/job-id/v1");
    let mut id = [0u8; 8];
    id.copy_from_slice(&mac.finalize().into_bytes()[..8]);
    id
}

#[test]
fn a_stranger_gets_nothing_derived_from_the_secret() {
    use super::protocol::{
        Challenge, Hello, MAX_HANDSHAKE_FRAME, Verdict, read_frame, write_frame,
    };
    let server = server();
    let id = old_job_id(&tests::secret());
    let hex: String = id.iter().map(|byte| format!("{byte:02x}")).collect();
    // The challenge is the protocol's magic and a nonce, and differs on
    // every connection; a hello without the proof gets a refusal that
    // names nothing of the secret.
    let mut challenges = Vec::new();
    for _ in 0..2 {
        let mut stream = TcpStream::connect(server.addr()).unwrap();
        stream.set_read_timeout(Some(5 * SECOND)).unwrap();
        let frame = read_frame(&mut stream, MAX_HANDSHAKE_FRAME, None).unwrap();
        assert_eq!(frame.len(), 8 + auth::NONCE);
        assert!(!frame.windows(8).any(|window| window == id));
        let challenge = Challenge::decode(&frame).unwrap();
        let hello = Hello {
            nonce: [7; auth::NONCE],
            rank: Some(1),
            world_size: 3,
            process: 42,
            pid: 1,
            host: "stranger".into(),
            heartbeat: None,
        };
        write_frame(&mut stream, &hello.encode(&[0; TAG]), None).unwrap();
        let verdict = read_frame(&mut stream, MAX_HANDSHAKE_FRAME, None).unwrap();
        assert!(!verdict.windows(8).any(|window| window == id));
        match Verdict::decode(&verdict).unwrap() {
            Verdict::Refused(why) => {
                assert!(why.contains("did not prove"), "{why}");
                assert!(!why.contains(&hex), "{why}");
            }
            Verdict::Welcome { .. } => panic!("a stranger was welcome"),
        }
        challenges.push(challenge.nonce);
    }
    assert_ne!(challenges[0], challenges[1]);
}
