//! `hir-run`'s launcher against faults from outside: killed (`SIGKILL`),
//! asked to stop (`SIGTERM`), and one of its ranks stopped (`SIGSTOP`).
//! Each starts the real binary with 4 ranks in processes (`--dry-run`).

use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const HIR_RUN: &str = env!("CARGO_BIN_EXE_hir-run");

fn program() -> String {
    format!("{}/../examples/allgather.mlir", env!("CARGO_MANIFEST_DIR"))
}

/// The launcher, with `hook` and `timeout` (seconds).
fn launcher(hook: &str, timeout: u32) -> Child {
    Command::new(HIR_RUN)
        .args(["-n", "4", "--dry-run", "--timeout", &timeout.to_string()])
        .arg(program())
        .env("HIR_TEST_HOOK", hook)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// `/proc/PID/stat`'s state and parent.
fn stat(pid: u32) -> Option<(String, u32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace();
    let state = fields.next()?.to_string();
    Some((state, fields.next()?.parse().ok()?))
}

/// The processes whose parent is `parent`.
fn children(parent: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
        .filter(|&pid| stat(pid).is_some_and(|(_, ppid)| ppid == parent))
        .collect()
}

/// Whether `pid` still runs (a zombie nobody reaped does not).
fn alive(pid: u32) -> bool {
    stat(pid).is_some_and(|(state, _)| state != "Z" && state != "X")
}

/// The launcher's 4 ranks, once they started (and a moment to join).
fn ranks_of(launcher: &Child) -> Vec<u32> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let ranks = children(launcher.id());
        if ranks.len() == 4 {
            std::thread::sleep(Duration::from_secs(2));
            return ranks;
        }
        assert!(Instant::now() < deadline, "the ranks did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn signal(pid: u32, signal: libc::c_int) {
    // SAFETY: a plain system call.
    assert_eq!(unsafe { libc::kill(pid as libc::pid_t, signal) }, 0);
}

/// Waits up to 10 s for every one of `ranks` to be gone.
fn all_gone(ranks: &[u32]) -> Vec<u32> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left: Vec<u32> = ranks.iter().copied().filter(|&pid| alive(pid)).collect();
        if left.is_empty() || Instant::now() >= deadline {
            for &pid in &left {
                signal(pid, libc::SIGKILL);
            }
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn stderr(child: &mut Child) -> String {
    let mut text = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    text
}

#[test]
fn ranks_die_with_a_killed_launcher() {
    // Rank 1 hangs where nothing reaches it; the others wait for it.
    let mut launcher = launcher("1:stall", 60);
    let ranks = ranks_of(&launcher);
    launcher.kill().unwrap();
    launcher.wait().unwrap();
    assert_eq!(
        all_gone(&ranks),
        Vec::<u32>::new(),
        "ranks outlived the launcher"
    );
}

#[test]
fn a_signal_to_the_launcher_reaches_its_ranks() {
    for (number, name) in [(libc::SIGTERM, "15"), (libc::SIGINT, "2")] {
        let mut launcher = launcher("1:stall", 60);
        let ranks = ranks_of(&launcher);
        signal(launcher.id(), number);
        let status = launcher.wait().unwrap();
        let text = stderr(&mut launcher);
        assert_eq!(status.code(), Some(128 + number), "{text}");
        assert!(
            text.contains(&format!(
                "hir-run: stopped by signal {name}: forwarded to ranks [0, 1, 2, 3]"
            )),
            "{text}"
        );
        assert_eq!(all_gone(&ranks), Vec::<u32>::new(), "{text}");
    }
}

#[test]
fn a_stopped_rank_is_named_and_killed() {
    // Rank 1 stops itself (SIGSTOP) before the barrier; the timeout (20 s)
    // is far; its heartbeat (5 s) names it.
    let began = Instant::now();
    let mut launcher = launcher("1:stop", 20);
    let status = launcher.wait().unwrap();
    let text = stderr(&mut launcher);
    assert_eq!(status.code(), Some(1), "{text}");
    assert!(
        text.contains("hir-run: error: rank 1 stopped responding: its watchdog was silent for"),
        "{text}"
    );
    assert!(
        text.contains("hir-run: killed rank [1]: stopped when the job failed"),
        "{text}"
    );
    assert!(
        began.elapsed() < Duration::from_secs(15),
        "{:?}",
        began.elapsed()
    );
}
