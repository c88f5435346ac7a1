//! The tool as a launcher: `-n N --launch processes` (the default for
//! `--backend cuda` and `--dry-run`) hosts the store on a free port of
//! `127.0.0.1` with a new job secret, starts N copies of the tool with its
//! arguments and `RANK`, `WORLD_SIZE`, `LOCAL_RANK`, `MASTER_ADDR`,
//! `MASTER_PORT`, `HIR_JOB_SECRET` and `HIR_AGENT_STORE=1` set, forwards
//! their output line by line with a `[rank R]` prefix, and waits for them.
//! Once a rank fails (a failure in the store, or a non-zero exit), the others
//! learn it through the store and stop; a stopped one (`SIGSTOP`) is killed
//! at once, any still running a grace period later too. The launcher exits
//! non-zero naming the rank that failed first.
//!
//! The ranks do not outlive it: each gets `SIGKILL` when the launcher dies
//! (`PR_SET_PDEATHSIG`), and a `SIGTERM` or `SIGINT` to the launcher goes
//! to every rank before it exits (`128 + signal`); ranks still there 5 s
//! later are killed.
//!
//! A process started with `RANK` and `WORLD_SIZE` (by this launcher or by
//! torchrun) runs that one rank ([`super::rank`]).

use super::Plan;
use hir_runtime::bootstrap::{
    AGENT_STORE, Failure, SECRET_VAR, STORE_PORT, Secret, StoreServer, WatchdogConfig,
};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitCode, ExitStatus, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

/// How long ranks have to end after the launcher forwarded a signal.
const SIGNAL_GRACE: Duration = Duration::from_secs(5);

/// Starts `plan.ranks` copies of this program as ranks and waits for them.
pub fn launch(plan: &Plan) -> ExitCode {
    let tool = plan.tool;
    match supervise(plan) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("{tool}: error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// A rank's process.
struct Rank {
    child: Child,
    status: Option<ExitStatus>,
    /// Why the launcher killed it, if it did.
    killed: Option<Killed>,
}

/// The last of SIGTERM and SIGINT the launcher got (0: none).
static SIGNALLED: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(signal: libc::c_int) {
    SIGNALLED.store(signal, Ordering::Relaxed);
}

/// Catches SIGTERM and SIGINT, for the supervising loop to forward.
fn catch_signals() -> anyhow::Result<()> {
    for signal in [libc::SIGTERM, libc::SIGINT] {
        // SAFETY: the handler only stores to an atomic (async-signal-safe);
        // the struct is zeroed, then its handler and mask set.
        let installed = unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as *const () as libc::sighandler_t;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut())
        };
        if installed != 0 {
            anyhow::bail!(
                "cannot catch signal {signal}: {}",
                std::io::Error::last_os_error()
            );
        }
    }
    Ok(())
}

/// In a rank's process, before it runs the tool: it is killed when the
/// launcher (`parent`) dies, and ends at once if that already happened.
/// Runs between fork and exec: async-signal-safe calls only.
fn die_with(parent: libc::pid_t) -> std::io::Result<()> {
    // SAFETY: prctl and getppid are async-signal-safe system calls.
    unsafe {
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if libc::getppid() != parent {
            return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
        }
    }
    Ok(())
}

fn supervise(plan: &Plan) -> anyhow::Result<ExitCode> {
    let secret = Secret::generate()
        .map_err(|error| anyhow::anyhow!("cannot make the job's secret: {error}"))?;
    let world = plan.ranks;
    let server = StoreServer::bind("127.0.0.1:0", secret.clone(), world)
        .map_err(|error| anyhow::anyhow!("cannot start the store on localhost: {error}"))?;
    catch_signals()?;
    let exe = std::env::current_exe()?;
    let args: Vec<_> = std::env::args_os().skip(1).collect();
    // SAFETY: getpid cannot fail.
    let launcher = unsafe { libc::getpid() };
    let mut ranks = Vec::with_capacity(world);
    let mut forwarders = Vec::new();
    for rank in 0..world {
        let mut command = Command::new(&exe);
        // SAFETY: `die_with` makes only async-signal-safe calls.
        unsafe {
            command.pre_exec(move || die_with(launcher));
        }
        let spawned = command
            .args(&args)
            .env("RANK", rank.to_string())
            .env("WORLD_SIZE", world.to_string())
            .env("LOCAL_RANK", rank.to_string())
            .env("LOCAL_WORLD_SIZE", world.to_string())
            .env("MASTER_ADDR", "127.0.0.1")
            .env("MASTER_PORT", server.port().to_string())
            .env(AGENT_STORE, "1")
            .env(SECRET_VAR, secret.value())
            .env_remove(STORE_PORT)
            .env(
                crate::log::PROGRESS_ENV,
                if crate::log::progress_shown() {
                    "1"
                } else {
                    "0"
                },
            )
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn();
        let started = spawned.and_then(|mut child| {
            tracing::debug!(rank, pid = child.id(), "started the rank");
            let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
            ranks.push(Rank {
                child,
                status: None,
                killed: None,
            });
            forwarders.push(forward(stdout, rank, false)?);
            forwarders.push(forward(stderr, rank, true)?);
            Ok(())
        });
        if let Err(error) = started {
            for Rank { child, .. } in &mut ranks {
                let _ = child.kill();
                let _ = child.wait();
            }
            anyhow::bail!("cannot start rank {rank}: {error}");
        }
    }
    // A rank learns of a failure within a poll of its watchdog; it then has
    // the watchdog's grace to return before the watchdog ends it.
    let grace =
        WatchdogConfig::new(plan.timeout).grace.unwrap_or_default() + Duration::from_secs(5);
    let mut failed_at: Option<Instant> = None;
    loop {
        let signal = SIGNALLED.load(Ordering::Relaxed);
        if signal != 0 {
            return Ok(forward_signal(plan.tool, signal, &mut ranks));
        }
        for (rank, process) in ranks.iter_mut().enumerate() {
            if process.status.is_some() {
                continue;
            }
            if let Some(status) = process.child.try_wait()? {
                process.status = Some(status);
                if !status.success() {
                    // The rank may have exited before it could say why (or
                    // before it joined the store).
                    server.record(Failure {
                        rank,
                        what: describe(status),
                    });
                }
            }
        }
        if ranks.iter().all(|process| process.status.is_some()) {
            break;
        }
        if failed_at.is_none() && !server.failures().is_empty() {
            failed_at = Some(Instant::now());
        }
        if let Some(at) = failed_at {
            // A stopped rank cannot return: it is killed at once, the others
            // when the grace ends.
            let late = at.elapsed() >= grace;
            for process in ranks.iter_mut().filter(|process| process.status.is_none()) {
                let why = if stopped(process.child.id()) {
                    Killed::Stopped
                } else if late {
                    Killed::Late
                } else {
                    continue;
                };
                let _ = process.child.kill();
                process.killed = Some(why);
                process.status = Some(process.child.wait()?);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    for forwarder in forwarders {
        let _ = forwarder.join();
    }
    let failures = server.failures();
    for (why, reason) in [
        (Killed::Stopped, "stopped when the job failed".to_string()),
        (
            Killed::Late,
            format!("still running {grace:?} after the first failure"),
        ),
    ] {
        let killed: Vec<usize> = (0..world)
            .filter(|&rank| ranks[rank].killed == Some(why))
            .collect();
        if !killed.is_empty() {
            eprintln!(
                "{}: killed rank{} {killed:?}: {reason}",
                plan.tool,
                if killed.len() == 1 { "" } else { "s" }
            );
        }
    }
    match failures.first() {
        None => Ok(ExitCode::SUCCESS),
        Some(cause) => {
            eprintln!("{}: error: {cause}", plan.tool);
            Ok(ExitCode::FAILURE)
        }
    }
}

/// Sends `signal` to every rank still running (with `SIGCONT`, so that a
/// stopped one gets it), kills those still there [`SIGNAL_GRACE`] later,
/// and gives the launcher's exit code, `128 + signal`.
fn forward_signal(tool: &str, signal: i32, ranks: &mut [Rank]) -> ExitCode {
    let running: Vec<usize> = (0..ranks.len())
        .filter(|&rank| ranks[rank].status.is_none())
        .collect();
    for &rank in &running {
        let pid = ranks[rank].child.id() as libc::pid_t;
        // SAFETY: plain system calls; the child is not reaped yet, so the
        // pid is still its own.
        unsafe {
            libc::kill(pid, signal);
            libc::kill(pid, libc::SIGCONT);
        }
    }
    let deadline = Instant::now() + SIGNAL_GRACE;
    let mut killed = Vec::new();
    for &rank in &running {
        let child = &mut ranks[rank].child;
        loop {
            match child.try_wait() {
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10))
                }
                Ok(None) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    killed.push(rank);
                    break;
                }
                Ok(Some(_)) | Err(_) => break,
            }
        }
    }
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(
        stderr,
        "{tool}: stopped by signal {signal}: forwarded to ranks {running:?}{}",
        if killed.is_empty() {
            String::new()
        } else {
            format!(", killed ranks {killed:?} still running {SIGNAL_GRACE:?} later")
        }
    );
    ExitCode::from(128u8.saturating_add(signal as u8))
}

/// Why the launcher killed a rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Killed {
    /// Stopped (`SIGSTOP`) once the job failed: it could not return.
    Stopped,
    /// Still running when the grace after the first failure ended.
    Late,
}

/// Whether process `pid` is stopped (`T` or `t` in `/proc/PID/stat`).
fn stopped(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        // The state follows the command's closing parenthesis.
        stat.rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state == "T" || state == "t")
    })
}

/// How a rank's process ended, after `rank R `.
fn describe(status: ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("was killed by signal {signal}");
        }
    }
    match status.code() {
        Some(code) => format!("exited with status {code}"),
        None => format!("ended: {status}"),
    }
}

/// Copies a rank's output (piped, so there) to ours, each line prefixed
/// with `[rank R]`, on a thread of its own.
fn forward(
    stream: Option<impl Read + Send + 'static>,
    rank: usize,
    stderr: bool,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new().spawn(move || {
        let Some(stream) = stream else { return };
        let mut reader = BufReader::new(stream);
        let mut line = Vec::new();
        loop {
            line.clear();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let text = String::from_utf8_lossy(&line);
            let text = text.trim_end_matches(['\n', '\r']);
            let prefixed = format!("[rank {rank}] {text}\n");
            // One write per line, so that lines of different ranks do not mix.
            let _ = if stderr {
                std::io::stderr().lock().write_all(prefixed.as_bytes())
            } else {
                std::io::stdout().lock().write_all(prefixed.as_bytes())
            };
        }
    })
}
