//! The store against strangers and accidents: connections without the
//! secret, forged and replayed handshakes, another job, a taken rank,
//! another world size, oversize frames, connection floods, running out of
//! file descriptors, a stopped rank; and a bounded fuzz run of every
//! decoder of the protocol.

use super::auth::{NONCE, Side, TAG};
use super::protocol::{
    Challenge, Hello, MAX_HANDSHAKE_FRAME, Request, Response, Verdict, Writer, read_frame,
    write_frame,
};
use super::store::{self, MAX_UNPROVEN};
use super::tests::{SECOND, member, secret, server, until};
use super::*;
use std::io::{Cursor, Read, Write};
use std::net::TcpStream;
use std::time::Instant;

const WORLD: usize = 3;

fn connect(server: &StoreServer, member: &Member) -> Result<StoreClient> {
    StoreClient::connect(&server.addr().to_string(), member, None, 2 * SECOND)
}

/// A raw connection that read the server's challenge.
fn raw(server: &StoreServer) -> (TcpStream, Challenge) {
    let mut stream = TcpStream::connect(server.addr()).unwrap();
    stream.set_read_timeout(Some(20 * SECOND)).unwrap();
    let frame = read_frame(&mut stream, MAX_HANDSHAKE_FRAME, None).unwrap();
    (stream, Challenge::decode(&frame).unwrap())
}

fn hello(rank: Option<usize>) -> Hello {
    Hello {
        nonce: [7; NONCE],
        rank,
        world_size: WORLD,
        process: 42,
        pid: 1,
        host: "stranger".into(),
        heartbeat: None,
    }
}

/// The verdict the server sends on `stream`, or `None` if it just closed.
fn verdict(stream: &mut TcpStream) -> Option<String> {
    match Verdict::decode(&read_frame(stream, MAX_HANDSHAKE_FRAME, None).ok()?).ok()? {
        Verdict::Refused(why) => Some(why),
        Verdict::Welcome { .. } => Some("welcome".into()),
    }
}

/// Nothing a stranger did reached the store's state.
fn untouched(server: &StoreServer) {
    assert!(server.failures().is_empty(), "{:?}", server.failures());
    let probe = connect(server, &member(None)).unwrap();
    match probe
        .get_or_missing(&["x".to_string()], Duration::ZERO)
        .unwrap()
    {
        store::Got::Missing(missing) => assert_eq!(missing, ["x"]),
        store::Got::Values(_) => panic!("a stranger set x"),
    }
}

#[test]
fn a_stranger_without_the_secret_cannot_hello_set_fail_or_get() {
    let server = server();
    let store = server.addr().to_string();
    // A member of another job (or with another secret): refused by the
    // store, which cannot tell the two apart: it sends nothing derived from
    // its secret (no job id) before the client proved it.
    let other = Member::new(Secret::generate().unwrap(), WORLD, Some(0));
    let error = connect(&server, &other).unwrap_err().to_string();
    assert!(
        error.starts_with(&format!("the store at {store} refused rank 0: process ")),
        "{error}"
    );
    assert!(
        error.ends_with(
            "did not prove that it knows this job's secret: a stranger, or a rank of another \
             job given this port, or one given another HIR_JOB_SECRET"
        ),
        "{error}"
    );
    // A stranger who cannot prove the secret.
    let (mut stream, challenge) = raw(&server);
    let forged = hello(Some(1));
    let proof =
        Secret::generate()
            .unwrap()
            .hello_proof(&challenge.nonce, &forged.nonce, &forged.body());
    write_frame(&mut stream, &forged.encode(&proof), None).unwrap();
    let why = verdict(&mut stream).unwrap();
    assert!(
        why.contains("did not prove that it knows this job's secret"),
        "{why}"
    );
    // A hello proven for one challenge, replayed on another connection.
    let (first, challenge) = raw(&server);
    let replayed = hello(None);
    let proof = secret().hello_proof(&challenge.nonce, &replayed.nonce, &replayed.body());
    let (mut second, _) = raw(&server);
    write_frame(&mut second, &replayed.encode(&proof), None).unwrap();
    assert!(verdict(&mut second).unwrap().contains("did not prove"));
    drop(first.shutdown(std::net::Shutdown::Both));
    // Requests without a handshake: set, fail, get.
    let requests = [
        Request::Set {
            key: "x".into(),
            value: b"evil".to_vec(),
        },
        Request::Fail {
            failure: Failure::failed(1, "evil", "posed as rank 1"),
        },
        Request::Get {
            keys: vec!["x".into()],
            timeout: Duration::ZERO,
        },
    ];
    for request in &requests {
        let (mut stream, _) = raw(&server);
        write_frame(&mut stream, &request.encode(), None).unwrap();
        let why = verdict(&mut stream).unwrap();
        assert!(why.starts_with("a bad hello"), "{why}");
    }
    untouched(&server);
    // Each of them, the other job's member and the connection that never
    // said hello.
    assert_eq!(server.refused(), 7);
}

#[test]
fn a_member_refuses_a_stranger_posing_as_the_store() {
    // Anyone can send a challenge; only the store can prove the secret in
    // its welcome.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let fake = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let challenge = Challenge { nonce: [1; NONCE] };
        write_frame(&mut stream, &challenge.encode(), None).unwrap();
        let _ = read_frame(&mut stream, MAX_HANDSHAKE_FRAME, None).unwrap();
        let welcome = Verdict::Welcome { proof: [0; TAG] };
        write_frame(&mut stream, &welcome.encode(), None).unwrap();
    });
    let error = StoreClient::connect(&addr, &member(Some(0)), None, 2 * SECOND)
        .unwrap_err()
        .to_string();
    assert!(
        error.ends_with("secret: something else holds its port"),
        "{error}"
    );
    fake.join().unwrap();
}

#[test]
fn a_forged_frame_after_the_handshake_ends_the_connection() {
    let server = server();
    let (mut stream, challenge) = raw(&server);
    let mine = hello(None);
    let proof = secret().hello_proof(&challenge.nonce, &mine.nonce, &mine.body());
    write_frame(&mut stream, &mine.encode(&proof), None).unwrap();
    assert_eq!(verdict(&mut stream).unwrap(), "welcome");
    // A tag under another key (as an injected frame would have).
    let mut wrong =
        Secret::generate()
            .unwrap()
            .session(&challenge.nonce, &mine.nonce, Side::Client);
    let set = Request::Set {
        key: "x".into(),
        value: b"evil".to_vec(),
    };
    write_frame(&mut stream, &set.encode(), Some(&mut wrong)).unwrap();
    let mut rest = Vec::new();
    assert_eq!(stream.read_to_end(&mut rest).unwrap(), 0);
    untouched(&server);
}

#[test]
fn a_second_process_with_a_taken_rank_is_refused_naming_both() {
    let server = server();
    let first = connect(&server, &member(Some(1))).unwrap();
    // Its own second connection (a watchdog's) is welcome.
    let watchdog = connect(&server, &member(Some(1))).unwrap();
    let impostor = Member {
        process: 0xdead_beef,
        ..member(Some(1))
    };
    let error = connect(&server, &impostor).unwrap_err().to_string();
    assert!(
        error.contains("refused rank 1: rank 1 joined twice: first process"),
        "{error}"
    );
    assert!(
        error.contains("then process 00000000deadbeef (pid "),
        "{error}"
    );
    assert!(
        error.ends_with("(two processes were given RANK=1)"),
        "{error}"
    );
    // The job cannot go on: every rank learns it.
    let failures = first.failures(Duration::ZERO).unwrap();
    assert_eq!(failures.len(), 1);
    assert!(
        failures[0]
            .to_string()
            .starts_with("rank 1 failed in bootstrap: rank 1 joined twice"),
        "{}",
        failures[0]
    );
    drop(watchdog);
}

#[test]
fn another_world_size_is_refused_naming_both() {
    let server = server();
    let waiter = connect(&server, &member(Some(0))).unwrap();
    let bigger = Member::new(secret(), 8, Some(5));
    let error = connect(&server, &bigger).unwrap_err().to_string();
    assert!(
        error.contains("refused rank 5: rank 5 (process "),
        "{error}"
    );
    assert!(
        error.ends_with("was started with WORLD_SIZE 8, but this job's store serves 3 ranks"),
        "{error}"
    );
    // The ranks waiting for the others stop at once, rather than time out.
    let began = Instant::now();
    let error = waiter
        .get(&["never".to_string()], 30 * SECOND)
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("gave up: rank 5 failed in bootstrap: rank 5 (process"),
        "{error}"
    );
    assert!(began.elapsed() < 5 * SECOND);
}

#[test]
fn a_rank_may_report_only_its_own_failure() {
    let server = server();
    let rank = connect(&server, &member(Some(0))).unwrap();
    let error = rank
        .fail(Failure::failed(2, "x", "framed"))
        .unwrap_err()
        .to_string();
    assert!(
        error.ends_with("a connection of rank 0 may not report a failure of rank 2"),
        "{error}"
    );
    let nobody = connect(&server, &member(None)).unwrap();
    assert!(nobody.fail(Failure::failed(0, "x", "framed")).is_err());
    assert!(server.failures().is_empty());
}

#[test]
fn oversize_frames_are_refused_before_they_are_read() {
    let server = server();
    // Before the handshake: 4 KiB at most; a 1 GiB announcement is refused
    // at once (nothing of it is allocated or waited for).
    let (mut stream, _) = raw(&server);
    stream.write_all(&(1u32 << 30).to_le_bytes()).unwrap();
    let began = Instant::now();
    let why = verdict(&mut stream).unwrap();
    assert!(
        why.contains("a store message of 1073741824 bytes, over the limit of 4096"),
        "{why}"
    );
    assert!(began.elapsed() < 5 * SECOND);
    // The frame reader itself, on any stream: over the limit is an error,
    // and a length that is a lie ends with the stream.
    let mut huge = Cursor::new((u32::MAX).to_le_bytes().to_vec());
    assert!(read_frame(&mut huge, store::MAX_FRAME, None).is_err());
    let mut short = Cursor::new([100u8, 0, 0, 0, 1, 2, 3].to_vec());
    let error = read_frame(&mut short, 4096, None).unwrap_err();
    assert!(
        error.to_string().contains("cut short (3 of 100 bytes)"),
        "{error}"
    );
    // Values too large for one response are an error, not a lost connection.
    let client = connect(&server, &member(Some(0))).unwrap();
    client.set("small", &[1; 16]).unwrap();
    assert_eq!(
        client.get(&["small".into()], SECOND).unwrap(),
        [vec![1; 16]]
    );
    untouched_but(&server);
}

/// No failure recorded.
fn untouched_but(server: &StoreServer) {
    assert!(server.failures().is_empty(), "{:?}", server.failures());
}

/// The open file descriptors of this process.
fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// This process's descriptors of TCP sockets with `port` at either end
/// (the server's listener, its connections and their clients). Not all
/// descriptors: the tests running beside this one open their own (a GPU
/// test's driver opens hundreds).
fn fds_of_port(port: u16) -> usize {
    let port_of = |address: &str| {
        let hex = address.rsplit(':').next()?;
        u16::from_str_radix(hex, 16).ok()
    };
    // /proc/net/tcp{,6}: `sl local rem st ... uid timeout inode`.
    let inodes: std::collections::HashSet<String> = ["/proc/self/net/tcp", "/proc/self/net/tcp6"]
        .iter()
        .filter_map(|table| std::fs::read_to_string(table).ok())
        .flat_map(|table| {
            let rows = table.lines().skip(1).map(|row| {
                row.split_whitespace()
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            });
            rows.filter(|row| row.len() > 9)
                .filter(|row| port_of(&row[1]) == Some(port) || port_of(&row[2]) == Some(port))
                .map(|row| row[9].clone())
                .collect::<Vec<_>>()
        })
        .collect();
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|entry| std::fs::read_link(entry.ok()?.path()).ok())
        .filter(|target| {
            let inode = target
                .to_str()
                .and_then(|target| target.strip_prefix("socket:[")?.strip_suffix(']'));
            inode.is_some_and(|inode| inodes.contains(inode))
        })
        .count()
}

#[test]
fn closed_connections_are_forgotten_and_floods_bounded() {
    let server = server();
    let port = server.addr().port();
    let before = fds_of_port(port);
    assert!(before >= 1, "the listener's socket is not found");
    // 2000 connections opened and closed: strangers that leave at once,
    // ones that send junk, and members that say goodbye.
    for round in 0..2000 {
        match round % 10 {
            0 => {
                let client = connect(&server, &member(None)).unwrap();
                client.set("k", &[round as u8]).unwrap();
            }
            1 => {
                let (mut stream, _) = raw(&server);
                let _ = stream.write_all(b"\x05\x00\x00\x00junk!");
            }
            _ => drop(TcpStream::connect(server.addr()).unwrap()),
        }
    }
    until("the connections to close", || {
        server.open_connections() == 0
    });
    // A connection's serving thread closes its socket just after the
    // server forgets it: the descriptors go a moment after the count.
    until("the connections' descriptors to close", || {
        fds_of_port(port) <= before
    });
    // Strangers holding handshakes open get at most MAX_UNPROVEN of them:
    // each newcomer past them closes the oldest.
    let idle: Vec<TcpStream> = (0..MAX_UNPROVEN + 40)
        .map(|_| TcpStream::connect(server.addr()).unwrap())
        .collect();
    until("the flood to be bounded", || {
        server.refused() >= 1800 + 40 && server.open_connections() <= MAX_UNPROVEN
    });
    drop(idle);
    until("the flood to close", || server.open_connections() == 0);
    // A member still gets in.
    connect(&server, &member(Some(0)))
        .unwrap()
        .goodbye()
        .unwrap();
}

/// The child process of `accept_errors_back_off_instead_of_spinning`.
const EMFILE_ROLE: &str = "HIR_STORE_TEST_EMFILE";

#[test]
fn accept_errors_back_off_instead_of_spinning() {
    if std::env::var(EMFILE_ROLE).is_ok() {
        return out_of_descriptors();
    }
    // In a child process: it lowers its own descriptor limit.
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "bootstrap::security_tests::accept_errors_back_off_instead_of_spinning",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(EMFILE_ROLE, "1")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{text}");
    assert!(text.contains("out of descriptors: ok"), "{text}");
}

/// With no descriptor left, the accept loop fails and waits (little CPU),
/// and takes members again once descriptors are free.
fn out_of_descriptors() {
    let server = server();
    // Once a member was served, the accept loop waits in `accept`, which
    // holds a descriptor for the next connection.
    connect(&server, &member(None)).unwrap().goodbye().unwrap();
    std::thread::sleep(SECOND / 5);
    let fds = open_fds() as u64;
    let limit = libc::rlimit {
        rlim_cur: fds + 24,
        rlim_max: fds + 24,
    };
    // SAFETY: a plain system call on a valid struct.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) }, 0);
    // Every descriptor taken, then two given back: one for a connection, one
    // for the server's copy of it; its next `accept` has none.
    let mut hogs = Vec::new();
    while let Ok(file) = std::fs::File::open("/dev/null") {
        hogs.push(file);
    }
    hogs.truncate(hogs.len() - 2);
    let first = TcpStream::connect(server.addr()).unwrap();
    until("accept to fail", || server.accept_errors() > 0);
    let cpu = || {
        // SAFETY: getrusage fills the zeroed struct.
        let usage = unsafe {
            let mut usage: libc::rusage = std::mem::zeroed();
            libc::getrusage(libc::RUSAGE_SELF, &mut usage);
            usage
        };
        let time = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
        time(usage.ru_utime) + time(usage.ru_stime)
    };
    let (began, errors) = (cpu(), server.accept_errors());
    std::thread::sleep(2 * SECOND);
    let (spent, failed) = (cpu() - began, server.accept_errors() - errors);
    assert!(spent < 0.5, "{spent} s of CPU in 2 s of failing accepts");
    assert!(failed < 100, "{failed} accept errors in 2 s");
    drop((hogs, first));
    // Descriptors are free again: a member gets in.
    let member = connect(&server, &member(Some(0))).unwrap();
    member.goodbye().unwrap();
    println!("out of descriptors: ok ({failed} accept errors in 2 s, {spent:.3} s of CPU)");
}

// ----- fuzzing the decoders

/// SplitMix64: a seeded, deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// A valid message of every kind: the seeds that mutations start from.
fn corpus() -> Vec<Vec<u8>> {
    let failure = Failure::failed(2, "hir_rt_allgather_f32", "bad shapes");
    let keys = vec!["nccl/0,1/0/0".to_string(), "nccl/0,1/0/1".to_string()];
    let mut seeds: Vec<Vec<u8>> = [
        Request::Set {
            key: "k".into(),
            value: vec![1, 2, 3],
        },
        Request::Get {
            keys: keys.clone(),
            timeout: SECOND,
        },
        Request::Add {
            key: "n".into(),
            delta: -3,
        },
        Request::Delete { keys: keys.clone() },
        Request::Fail {
            failure: failure.clone(),
        },
        Request::Failures { timeout: SECOND },
        Request::Goodbye,
        Request::Absent,
    ]
    .iter()
    .map(Request::encode)
    .collect();
    seeds.extend(
        [
            Response::Ok,
            Response::Values(vec![vec![1; 8], vec![]]),
            Response::Int(7),
            Response::Timeout { missing: keys },
            Response::Failed(failure.clone()),
            Response::Failures(vec![failure.clone(), failure]),
            Response::Error("no".into()),
            Response::Ranks(vec![0, 3]),
        ]
        .iter()
        .map(Response::encode),
    );
    seeds.push(Challenge { nonce: [3; NONCE] }.encode());
    let mut watched = hello(Some(2));
    watched.heartbeat = Some(SECOND);
    seeds.push(watched.encode(&[9; TAG]));
    seeds.push(hello(None).encode(&[9; TAG]));
    seeds.push(Verdict::Welcome { proof: [4; TAG] }.encode());
    seeds.push(Verdict::Refused("taken".into()).encode());
    // A frame (length first) of each, for the frame reader.
    let framed: Vec<Vec<u8>> = seeds
        .iter()
        .map(|seed| {
            let mut frame = Vec::new();
            write_frame(&mut frame, seed, None).unwrap();
            frame
        })
        .collect();
    seeds.extend(framed);
    seeds
}

/// One mutation of `input`.
fn mutate(rng: &mut Rng, input: &mut Vec<u8>, corpus: &[Vec<u8>]) {
    const INTERESTING: [u8; 8] = [0, 1, 0x7f, 0x80, 0xfe, 0xff, 8, 32];
    let at = |rng: &mut Rng, input: &Vec<u8>| rng.below(input.len() + 1);
    match rng.below(9) {
        0 if !input.is_empty() => {
            let i = rng.below(input.len());
            input[i] ^= 1 << rng.below(8);
        }
        1 if !input.is_empty() => {
            let i = rng.below(input.len());
            input[i] = INTERESTING[rng.below(INTERESTING.len())];
        }
        2 => input.truncate(at(rng, input)),
        3 => {
            let i = at(rng, input);
            let bytes: Vec<u8> = (0..rng.below(16)).map(|_| rng.next() as u8).collect();
            input.splice(i..i, bytes);
        }
        4 => {
            // A length or count field set to something extreme.
            let i = at(rng, input);
            let value: [u8; 8] = match rng.below(4) {
                0 => u64::MAX.to_le_bytes(),
                1 => (i64::MAX as u64).to_le_bytes(),
                2 => u64::from(u32::MAX).to_le_bytes(),
                _ => (rng.below(1 << 20) as u64).to_le_bytes(),
            };
            let width = [4, 8][rng.below(2)];
            let end = (i + width).min(input.len());
            input.splice(i..end, value[..width].iter().copied());
        }
        5 => {
            // Splice in part of another seed.
            let other = &corpus[rng.below(corpus.len())];
            let from = rng.below(other.len() + 1);
            let to = from + rng.below(other.len() - from + 1);
            let i = at(rng, input);
            input.splice(i..i, other[from..to].iter().copied());
        }
        6 if !input.is_empty() => {
            let i = rng.below(input.len());
            let end = (i + rng.below(8)).min(input.len());
            input.drain(i..end);
        }
        7 => *input = (0..rng.below(64)).map(|_| rng.next() as u8).collect(),
        _ => {
            if let Some(first) = input.first_mut() {
                *first = rng.below(12) as u8;
            }
        }
    }
}

/// Feeds `input` to every decoder; a request that decodes is also handled
/// by a store (its waits cut to zero). Returns how many decoders took it.
fn feed(input: &[u8], store: &store::Shared) -> usize {
    let mut took = 0;
    if let Ok(request) = Request::decode(input) {
        took += 1;
        let request = match request {
            Request::Get { keys, .. } => Request::Get {
                keys,
                timeout: Duration::ZERO,
            },
            Request::Failures { .. } => Request::Failures {
                timeout: Duration::ZERO,
            },
            other => other,
        };
        let _ = store::handle(request, Some(2), &|| true, store);
    }
    took += usize::from(Response::decode(input).is_ok());
    took += usize::from(Challenge::decode(input).is_ok());
    took += usize::from(Hello::decode(input).is_ok());
    took += usize::from(Verdict::decode(input).is_ok());
    took += usize::from(read_frame(&mut Cursor::new(input), MAX_HANDSHAKE_FRAME, None).is_ok());
    let mut session = secret().session(&[0; NONCE], &[0; NONCE], Side::Server);
    took += usize::from(read_frame(&mut Cursor::new(input), 1 << 20, Some(&mut session)).is_ok());
    took
}

#[test]
fn the_decoders_take_any_bytes_without_a_panic() {
    let corpus = corpus();
    // Every seed is valid for at least one decoder.
    let store = store::detached(WORLD);
    for seed in &corpus {
        assert!(feed(seed, &store) > 0, "{seed:?}");
    }
    let mut rng = Rng(0x48_49_52_53_54_4f_52_45);
    let (runs, mut accepted, mut rejected) = (500_000, 0usize, 0usize);
    let began = Instant::now();
    let mut store = store::detached(WORLD);
    for run in 0..runs {
        if run % 10_000 == 0 {
            store = store::detached(WORLD);
        }
        let mut input = corpus[rng.below(corpus.len())].clone();
        for _ in 0..1 + rng.below(4) {
            mutate(&mut rng, &mut input, &corpus);
        }
        let outcome =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| feed(&input, &store)));
        match outcome {
            Ok(0) => rejected += 1,
            Ok(_) => accepted += 1,
            Err(_) => panic!("a decoder panicked on {input:02x?} (run {run})"),
        }
    }
    println!(
        "fuzzed the store's decoders with {runs} mutated messages in {:?}: {accepted} taken by \
         some decoder, {rejected} refused by all, 0 panics",
        began.elapsed()
    );
    assert!(accepted > runs / 20 && rejected > runs / 20);
}

#[test]
fn the_decoders_read_back_what_the_encoders_write() {
    let failure = Failure::failed(1, "op", "message");
    let Ok(Request::Fail { failure: back }) = Request::decode(
        &Request::Fail {
            failure: failure.clone(),
        }
        .encode(),
    ) else {
        panic!("a fail request did not decode");
    };
    assert_eq!(back, failure);
    let mut watched = hello(Some(2));
    watched.heartbeat = Some(SECOND);
    let encoded = watched.encode(&[5; TAG]);
    let (back, body, proof) = Hello::decode(&encoded).unwrap();
    assert_eq!(
        (back, body, proof),
        (watched.clone(), &watched.body()[..], [5; TAG])
    );
    // Trailing bytes, negative times and counts past the end are errors.
    let mut long = Request::Goodbye.encode();
    long.push(0);
    assert!(Request::decode(&long).is_err());
    let negative = Writer::default().tag(7).int(-5).0;
    assert!(Request::decode(&negative).is_err());
    let counted = Writer::default().tag(5).int(1 << 40).0;
    assert!(Request::decode(&counted).is_err());
    // A short string length, and nothing at all.
    assert!(Request::decode(&[2, 1, 2, 3]).is_err());
    assert!(Response::decode(&[]).is_err());
}

// ----- a stopped rank

#[test]
fn a_silent_watchdog_names_its_rank() {
    let server = server();
    let waiter = connect(&server, &member(Some(0))).unwrap();
    let stopped = StoreClient::connect_watched(
        &server.addr().to_string(),
        &member(Some(1)),
        None,
        Some(SECOND / 2),
        2 * SECOND,
    )
    .unwrap();
    // It polls, then falls silent (as a stopped process's watchdog would).
    for _ in 0..5 {
        assert!(
            stopped
                .failures(Duration::from_millis(50))
                .unwrap()
                .is_empty()
        );
    }
    let began = Instant::now();
    let error = waiter
        .get(&["never".to_string()], 30 * SECOND)
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("gave up: rank 1 stopped responding: its watchdog was silent for"),
        "{error}"
    );
    assert!(began.elapsed() < 5 * SECOND, "{:?}", began.elapsed());
}
