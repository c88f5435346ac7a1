//! Where a tool's ranks run, the same for `hir-run` and `hir-bench`: as
//! threads of one process, or one rank per process (the default for the
//! cuda backend and for a dry run).
//!
//! - [`launcher`]: the tool as a launcher, which hosts the store and starts
//!   one copy of itself per rank;
//! - [`rank`]: the tool as one of those ranks (`RANK` and `WORLD_SIZE` set,
//!   by the launcher or by torchrun): it joins the others, checks that they
//!   all run the same thing, and runs under a watchdog;
//! - [`session`]: the runtime of the ranks a process runs, and its
//!   [`Peers`]: how results of the other processes' ranks reach it;
//! - [`combine`]: combining what the ranks gathered;
//! - [`timed`]: timing a call on every rank.

pub mod combine;
pub mod launcher;
pub mod rank;
pub mod session;
pub mod timed;

pub use rank::{Fingerprint, Fnv, Joined};
pub use session::{Peers, Session};

use hir_runtime::bootstrap::{Env, RankVars};
use hir_runtime::{Backend, Checks};
use std::process::ExitCode;
use std::time::Duration;

/// How the ranks of a run are started.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Launch {
    Threads,
    Processes,
}

impl Launch {
    pub fn name(self) -> &'static str {
        match self {
            Launch::Threads => "threads",
            Launch::Processes => "processes",
        }
    }
}

/// What the launcher needs of a tool's command line.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The tool's name, which starts its messages (`hir-run: error: ...`).
    pub tool: &'static str,
    pub ranks: usize,
    pub backend: Backend,
    /// `None`: the default (see [`Plan::launch`]).
    pub launch: Option<Launch>,
    /// Ranks in processes that run no GPU work: what CI can test.
    pub dry_run: bool,
    /// How long ranks in processes wait for each other, and how long a
    /// communication may stay pending before the watchdog fails it.
    pub timeout: Duration,
    /// The runtime's test modes.
    pub checks: Checks,
}

impl Plan {
    /// How the ranks are started: as asked, else processes for a dry run or
    /// the cuda backend, threads for the cpu backend.
    pub fn launch(&self) -> Launch {
        match self.launch {
            Some(launch) => launch,
            None if self.dry_run || self.backend == Backend::Cuda => Launch::Processes,
            None => Launch::Threads,
        }
    }
}

/// The ranks of a run whose `-n` was not given: `WORLD_SIZE` (or Open
/// MPI's or Slurm's, see [`RankVars`]) in a rank a launcher such as
/// torchrun, `mpirun` or `srun` started, else `None` (one rank). A world
/// size that does not parse is the bootstrap's error to report; an `-n`
/// that differs from it is [`rank::run_rank`]'s.
pub fn world_size_of_rank() -> Option<usize> {
    let names = RankVars::from_env()?;
    std::env::var(names.world_size).ok()?.trim().parse().ok()
}

/// Whether a launcher (torchrun, `mpirun`, `srun`, or HIR's own) started
/// this process as one rank of a job.
pub fn in_rank() -> bool {
    RankVars::from_env().is_some()
}

/// What the tool does with `plan`: run one rank (`RANK` set; `fingerprint`
/// says what it runs, `run` runs it), launch ranks in processes, or `None`:
/// run the ranks as threads here.
pub fn dispatch(
    plan: &Plan,
    fingerprint: impl FnOnce() -> anyhow::Result<Fingerprint>,
    run: impl FnOnce(&Joined) -> anyhow::Result<()>,
) -> Option<ExitCode> {
    if plan.launch == Some(Launch::Threads) {
        return None;
    }
    match Env::from_env() {
        Ok(Some(env)) => return Some(rank::run_rank(plan, env, fingerprint, run)),
        Ok(None) => {}
        Err(error) => {
            eprintln!("{}: error: {error}", plan.tool);
            return Some(ExitCode::FAILURE);
        }
    }
    (plan.launch() == Launch::Processes).then(|| launcher::launch(plan))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(backend: Backend, launch: Option<Launch>, dry_run: bool) -> Plan {
        Plan {
            tool: "test",
            ranks: 2,
            backend,
            launch,
            dry_run,
            timeout: Duration::from_secs(1),
            checks: Checks::default(),
        }
    }

    #[test]
    fn launch_defaults_to_the_backends() {
        assert_eq!(plan(Backend::Cpu, None, false).launch(), Launch::Threads);
        assert_eq!(plan(Backend::Cuda, None, false).launch(), Launch::Processes);
        assert_eq!(plan(Backend::Cpu, None, true).launch(), Launch::Processes);
        let threads = Some(Launch::Threads);
        assert_eq!(
            plan(Backend::Cuda, threads, false).launch(),
            Launch::Threads
        );
    }
}
