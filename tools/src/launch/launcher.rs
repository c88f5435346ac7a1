//! The tool as a launcher: `-n N --launch processes` (the default for
//! `--backend cuda` and `--dry-run`) hosts the store on a free port of
//! localhost, starts N copies of the tool with its arguments and `RANK`,
//! `WORLD_SIZE`, `LOCAL_RANK`, `MASTER_ADDR`, `MASTER_PORT` and
//! `HIR_AGENT_STORE=1` set, forwards their output line by line with a
//! `[rank R]` prefix, and waits for them. Once a rank fails (a failure in the
//! store, or a non-zero exit), the others learn it through the store and
//! stop; any still running a grace period later are killed. The launcher
//! exits non-zero naming the rank that failed first.
//!
//! A process started with `RANK` and `WORLD_SIZE` (by this launcher or by
//! torchrun) runs that one rank ([`super::rank`]).

use super::Plan;
use crate::backend::Backend;
use hir_runtime::bootstrap::{AGENT_STORE, Failure, STORE_PORT, StoreServer, WatchdogConfig};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, ExitCode, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Starts `plan.ranks` copies of this program as ranks and waits for them.
pub fn launch(plan: &Plan) -> ExitCode {
    let tool = plan.tool;
    if plan.backend == Backend::Cpu && !plan.dry_run {
        eprintln!(
            "{tool}: error: the cpu backend runs its ranks as threads of one process: \
             --launch processes needs --dry-run or --backend cuda"
        );
        return ExitCode::FAILURE;
    }
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
    killed: bool,
}

fn supervise(plan: &Plan) -> anyhow::Result<ExitCode> {
    let server = StoreServer::bind("127.0.0.1:0")
        .map_err(|error| anyhow::anyhow!("cannot start the store on localhost: {error}"))?;
    let exe = std::env::current_exe()?;
    let args: Vec<_> = std::env::args_os().skip(1).collect();
    let world = plan.ranks;
    let mut ranks = Vec::with_capacity(world);
    let mut forwarders = Vec::new();
    for rank in 0..world {
        let spawned = Command::new(&exe)
            .args(&args)
            .env("RANK", rank.to_string())
            .env("WORLD_SIZE", world.to_string())
            .env("LOCAL_RANK", rank.to_string())
            .env("LOCAL_WORLD_SIZE", world.to_string())
            .env("MASTER_ADDR", "127.0.0.1")
            .env("MASTER_PORT", server.port().to_string())
            .env(AGENT_STORE, "1")
            .env_remove(STORE_PORT)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn();
        let mut child = match spawned {
            Ok(child) => child,
            Err(error) => {
                for started in &mut ranks {
                    let Rank { child, .. } = started;
                    let _ = child.kill();
                    let _ = child.wait();
                }
                anyhow::bail!("cannot start rank {rank}: {error}");
            }
        };
        forwarders.push(forward(child.stdout.take().unwrap(), rank, false));
        forwarders.push(forward(child.stderr.take().unwrap(), rank, true));
        ranks.push(Rank {
            child,
            status: None,
            killed: false,
        });
    }
    // A rank learns of a failure within a poll of its watchdog; it then has
    // the watchdog's grace to return before the watchdog ends it.
    let grace =
        WatchdogConfig::new(plan.timeout).grace.unwrap_or_default() + Duration::from_secs(5);
    let mut failed_at: Option<Instant> = None;
    loop {
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
        if failed_at.is_some_and(|at| at.elapsed() >= grace) {
            for process in ranks.iter_mut().filter(|process| process.status.is_none()) {
                let _ = process.child.kill();
                process.killed = true;
                process.status = Some(process.child.wait()?);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    for forwarder in forwarders {
        let _ = forwarder.join();
    }
    let failures = server.failures();
    let killed: Vec<usize> = (0..world).filter(|&rank| ranks[rank].killed).collect();
    if !killed.is_empty() {
        eprintln!(
            "{}: killed rank{} {killed:?}: still running {grace:?} after the first failure",
            plan.tool,
            if killed.len() == 1 { "" } else { "s" }
        );
    }
    match failures.first() {
        None => Ok(ExitCode::SUCCESS),
        Some(cause) => {
            eprintln!("{}: error: {cause}", plan.tool);
            Ok(ExitCode::FAILURE)
        }
    }
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

/// Copies a rank's output to ours, each line prefixed with `[rank R]`.
fn forward(
    stream: impl Read + Send + 'static,
    rank: usize,
    stderr: bool,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
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
