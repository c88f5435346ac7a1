//! A man in the middle of a member's connection to the store, after the
//! handshake: a request altered or replayed on the way, and a response
//! altered. The store closes the connection and names the tampered frame
//! as the rank's failure (not an exit); the member names a tampered
//! response (not the store's exit).

use super::auth::TAG;
use super::tests::{SECOND, client, member, server, until};
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
        let times = match tamper.filter(|_| first) {
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
        let requests = (tamper != Tamper::AlterResponse).then_some(tamper);
        let responses = (tamper == Tamper::AlterResponse).then_some(tamper);
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
