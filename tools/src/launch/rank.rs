//! The tool as one rank of a multi-process run: `RANK` and `WORLD_SIZE` are
//! set (by the launcher, see [`super::launcher`], or by torchrun). The rank
//! joins the others through the store, checks that every rank runs the same
//! thing (the tool's [`Fingerprint`]), starts its watchdog, meets the
//! others at a barrier if it is a dry run, and runs the tool.
//!
//! Its messages go to stderr with write errors ignored: when the launcher is
//! gone, so is the pipe, and the rank must still end (it is killed anyway,
//! see [`super::launcher`]).
//!
//! Test hooks: `HIR_TEST_HOOK=R:ACTION` makes rank `R` misbehave on purpose,
//! so that the tests can show what the others do: `exit-after-bootstrap`
//! (exits with status 0 without a word, as a crash would), `stall` (hangs
//! where abort cannot reach it, before the dry run's barrier), `stop` (stops
//! its own process with `SIGSTOP` there: its watchdog falls silent and the
//! store names it), `fail-after-run` (fails once its run succeeded: the
//! others, done by then, exit non-zero too); and, in `hir-run`,
//! `corrupt-outputs` (rank `R`'s outputs are zeroed after the run, before
//! they are checked).

use super::Plan;
use hir_runtime::bootstrap::{
    Env, Inflight, ProcessGroup, Stuck, Watchdog, WatchdogConfig, Watched,
};
use hir_runtime::error::{Error, RankError};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The test hook variable.
pub const TEST_HOOK: &str = "HIR_TEST_HOOK";

/// This process's group and its watched rank, for the tool's runtime
/// (`--backend cuda` builds its world with `cuda::World::join` and
/// puts it under the watchdog with [`watch`]).
static RANK: OnceLock<(Arc<ProcessGroup>, Arc<HostRank>)> = OnceLock::new();

/// This process's rank group, when the tool runs one rank of a
/// multi-process run.
pub fn group() -> Option<Arc<ProcessGroup>> {
    RANK.get().map(|(group, _)| group.clone())
}

/// Puts `runtime` (this rank's world) under the process's one watchdog,
/// until [`unwatch`]: one watchdog, so that its store connection closes only
/// after the rank's goodbye.
pub fn watch(runtime: Arc<dyn Watched>) {
    if let Some((_, host)) = RANK.get() {
        *host.runtime.lock().unwrap() = Some(runtime);
    }
}

/// Takes the runtime from the watchdog, before it drops.
pub fn unwatch() {
    if let Some((_, host)) = RANK.get() {
        host.runtime.lock().unwrap().take();
    }
}

/// Whether the test hook asks `rank` to do `action`.
pub fn hook(rank: usize, action: &str) -> bool {
    std::env::var(TEST_HOOK).is_ok_and(|hook| hook == format!("{rank}:{action}"))
}

/// What a rank runs, which every rank must agree on: a hash of what it
/// builds and computes, and a description of its inputs (empty: random).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fingerprint {
    pub hash: u64,
    pub inputs: String,
}

impl Fingerprint {
    fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = self.hash.to_le_bytes().to_vec();
        bytes.extend(self.inputs.as_bytes());
        bytes
    }

    /// The fingerprint a rank brought, or what is wrong with its bytes.
    fn from_bytes(bytes: &[u8]) -> std::result::Result<Fingerprint, String> {
        let Some((hash, inputs)) = bytes.split_first_chunk::<8>() else {
            return Err(format!(
                "{} bytes, fewer than the 8 of a program hash",
                bytes.len()
            ));
        };
        Ok(Fingerprint {
            hash: u64::from_le_bytes(*hash),
            inputs: String::from_utf8_lossy(inputs).into_owned(),
        })
    }

    fn describe_inputs(&self) -> &str {
        if self.inputs.is_empty() {
            "random"
        } else {
            &self.inputs
        }
    }
}

/// This process's rank, once it joined the others and they agreed.
pub struct Joined {
    pub rank: usize,
    pub world: usize,
    /// Every rank's [`Fingerprint::hash`].
    pub hash: u64,
}

/// Runs rank `env.rank` of a multi-process run; `run` runs the tool.
pub fn run_rank(
    plan: &Plan,
    env: Env,
    fingerprint: impl FnOnce() -> anyhow::Result<Fingerprint>,
    run: impl FnOnce(&Joined) -> anyhow::Result<()>,
) -> ExitCode {
    let (tool, rank) = (plan.tool, env.rank);
    // Every log line of this process names its rank.
    let _span = tracing::info_span!("rank", rank).entered();
    if plan.ranks != env.world_size {
        say(&format!(
            "{tool}: error: rank {rank}: -n {} does not match WORLD_SIZE {}",
            plan.ranks, env.world_size
        ));
        return ExitCode::FAILURE;
    }
    let world = env.world_size;
    let group = match ProcessGroup::join(env, plan.timeout) {
        Ok(group) => {
            tracing::debug!(world, "joined the store");
            Arc::new(group)
        }
        Err(error) => {
            say(&format!("{tool}: error: rank {rank}: bootstrap: {error}"));
            return ExitCode::FAILURE;
        }
    };
    if hook(rank, "exit-after-bootstrap") {
        std::process::exit(0);
    }
    let host = Arc::new(HostRank::new(rank));
    let watchdog = match group.watch(host.clone(), WatchdogConfig::new(plan.timeout)) {
        Ok(watchdog) => watchdog,
        Err(error) => {
            host.fail("watchdog", error);
            return leave(tool, group, None, &host);
        }
    };
    let result = steps(plan, &group, &host, fingerprint, run);
    if let Err((op, error)) = result {
        host.fail(&op, error);
    }
    leave(tool, group, Some(watchdog), &host)
}

/// Prints `line` on stderr, if there still is one.
fn say(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// Leaves the group, telling it this rank's error if it has one.
fn leave(
    tool: &str,
    group: Arc<ProcessGroup>,
    watchdog: Option<Watchdog>,
    host: &HostRank,
) -> ExitCode {
    let error = host.error();
    if let Some(error) = &error {
        group.fail(&error.op, &error.error);
        say(&format!("{tool}: error: {error}"));
    }
    // Goodbye first: the watchdog's connection closes when it stops.
    group.goodbye();
    if let Some(watchdog) = watchdog {
        watchdog.stop();
    }
    // The job's failures the store knew of: another rank's (one that failed
    // after this rank's part was done, or a process refused as a taken
    // rank) fails this rank's exit too, so that no rank of a failed job
    // exits 0.
    let failures = group.finish();
    if error.is_some() {
        return ExitCode::FAILURE;
    }
    match failures.first() {
        Some(cause) => {
            say(&format!(
                "{tool}: error: rank {}: the job failed: {cause}",
                host.rank
            ));
            ExitCode::FAILURE
        }
        None => ExitCode::SUCCESS,
    }
}

type Step = std::result::Result<(), (String, Error)>;

fn steps(
    plan: &Plan,
    group: &Arc<ProcessGroup>,
    host: &Arc<HostRank>,
    fingerprint: impl FnOnce() -> anyhow::Result<Fingerprint>,
    run: impl FnOnce(&Joined) -> anyhow::Result<()>,
) -> Step {
    let (rank, world) = (group.rank(), group.world_size());
    let mine = fingerprint().map_err(|error| {
        (
            "same-program check".to_string(),
            Error::Invalid(format!("{error:#}")),
        )
    })?;
    let all = {
        let (group, bytes) = (group.clone(), mine.to_bytes());
        host.communicate("same-program check", move || {
            group.all_gather_within("check", bytes, group.timeout() * 2)
        })
    }
    .map_err(|error| ("same-program check".to_string(), error))?;
    let all: Vec<Fingerprint> = all
        .iter()
        .enumerate()
        .map(|(rank, bytes)| {
            Fingerprint::from_bytes(bytes).map_err(|error| {
                (
                    "same-program check".to_string(),
                    Error::Invalid(format!("rank {rank} brought {error}")),
                )
            })
        })
        .collect::<std::result::Result<_, _>>()?;
    agree(&all).map_err(|error| ("same-program check".to_string(), Error::Mismatch(error)))?;
    if plan.dry_run {
        println!(
            "rank {rank} of {world}: joined; program hash {:016x}; inputs {}",
            mine.hash,
            mine.describe_inputs()
        );
        if hook(rank, "stall") {
            loop {
                std::thread::sleep(Duration::from_secs(1));
            }
        }
        if hook(rank, "stop") {
            // SAFETY: raise is a plain system call.
            unsafe { libc::raise(libc::SIGSTOP) };
        }
        let group = group.clone();
        host.communicate("barrier", move || {
            group.all_gather_within("barrier", Vec::new(), group.timeout() * 2)
        })
        .map_err(|error| ("barrier".to_string(), error))?;
    }
    RANK.get_or_init(|| (group.clone(), host.clone()));
    let joined = Joined {
        rank,
        world,
        hash: mine.hash,
    };
    run(&joined).map_err(|error| ("run".to_string(), Error::Io(format!("{error:#}"))))?;
    if hook(rank, "fail-after-run") {
        return Err((
            "run".to_string(),
            Error::Invalid("the test hook failed it after its run".into()),
        ));
    }
    Ok(())
}

/// Every rank's fingerprint must be rank 0's: the error names the first
/// rank that differs.
fn agree(all: &[Fingerprint]) -> std::result::Result<(), String> {
    let Some(first) = all.first() else {
        return Ok(());
    };
    for (rank, other) in all.iter().enumerate().skip(1) {
        if other.hash != first.hash {
            return Err(format!(
                "rank {rank} runs a different program (hash {:016x}) than rank 0 (hash {:016x})",
                other.hash, first.hash
            ));
        }
        if other.inputs != first.inputs {
            let describe = |fingerprint: &Fingerprint| {
                if fingerprint.inputs.is_empty() {
                    "random inputs".to_string()
                } else {
                    fingerprint.inputs.clone()
                }
            };
            return Err(format!(
                "rank {rank} has other inputs ({}) than rank 0 ({})",
                describe(other),
                describe(first)
            ));
        }
    }
    Ok(())
}

/// 64-bit FNV-1a: the same on every host and build.
pub struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    pub fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0 ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    pub fn finish(&self) -> u64 {
        self.0
    }
}

/// A rank whose communications are host-side waits on the store (the
/// same-program check, the dry run's barrier) and, once [`watch`]ed, those of
/// its runtime: the watchdog sees them as in flight until they return, and
/// its abort releases the host from them.
struct HostRank {
    rank: usize,
    error: Mutex<Option<RankError>>,
    inflight: Inflight<Arc<AtomicBool>>,
    runtime: Mutex<Option<Arc<dyn Watched>>>,
    /// Set by an abort, with `wake`.
    aborted: Mutex<bool>,
    wake: Condvar,
}

impl HostRank {
    fn new(rank: usize) -> HostRank {
        HostRank {
            rank,
            error: Mutex::new(None),
            inflight: Inflight::default(),
            runtime: Mutex::new(None),
            aborted: Mutex::new(false),
            wake: Condvar::new(),
        }
    }

    /// Runs `wait` (a wait on the other ranks) on a thread of its own as the
    /// communication `op`, until it returns or the watchdog aborts it.
    fn communicate<T: Send + 'static>(
        &self,
        op: &str,
        wait: impl FnOnce() -> hir_runtime::error::Result<T> + Send + 'static,
    ) -> hir_runtime::error::Result<T> {
        let done = Arc::new(AtomicBool::new(false));
        let result = Arc::new(Mutex::new(None));
        {
            let (done, result) = (done.clone(), result.clone());
            // On a thread of its own, so that an abort releases the host
            // from it (the thread then ends with the process).
            std::thread::Builder::new()
                .spawn(move || {
                    let value = wait();
                    *result.lock().unwrap() = Some(value);
                    done.store(true, Ordering::Release);
                })
                .map_err(|error| Error::Io(format!("cannot start a thread for {op}: {error}")))?;
        }
        self.inflight.post(op.to_string(), done.clone());
        let began = Instant::now();
        let mut aborted = self.aborted.lock().unwrap();
        loop {
            if done.load(Ordering::Acquire) {
                drop(aborted);
                self.inflight.retire();
                return result.lock().unwrap().take().unwrap();
            }
            if *aborted {
                drop(aborted);
                self.inflight.retire();
                return Err(self.error().map(|error| error.error).unwrap_or_else(|| {
                    Error::Io(format!("{op} was aborted after {:?}", began.elapsed()))
                }));
            }
            aborted = self
                .wake
                .wait_timeout(aborted, Duration::from_millis(10))
                .unwrap()
                .0;
        }
    }
}

impl HostRank {
    fn runtime(&self) -> Option<Arc<dyn Watched>> {
        self.runtime.lock().unwrap().clone()
    }
}

impl Watched for HostRank {
    fn rank(&self) -> usize {
        self.rank
    }

    fn stuck(&self, timeout: Duration) -> Option<Stuck> {
        self.inflight
            .stuck(Instant::now(), timeout, |done| done.load(Ordering::Acquire))
            .or_else(|| self.runtime()?.stuck(timeout))
    }

    fn error(&self) -> Option<RankError> {
        let own = self.error.lock().unwrap().clone();
        own.or_else(|| self.runtime()?.error())
    }

    fn fail(&self, op: &str, error: Error) {
        if let Some(runtime) = self.runtime() {
            // Its synchronize then ends with the error instead of waiting on.
            runtime.fail(op, error.clone());
        }
        let mut first = self.error.lock().unwrap();
        if first.is_none() {
            *first = Some(RankError {
                rank: self.rank,
                op: op.to_string(),
                error,
            });
        }
    }

    fn abort(&self) {
        if let Some(runtime) = self.runtime() {
            runtime.abort();
        }
        *self.aborted.lock().unwrap() = true;
        self.wake.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fingerprint(hash: u64, inputs: &str) -> Fingerprint {
        let fingerprint = Fingerprint {
            hash,
            inputs: inputs.to_string(),
        };
        // As it travels through the store.
        Fingerprint::from_bytes(&fingerprint.to_bytes()).unwrap()
    }

    #[test]
    fn a_short_fingerprint_is_an_error() {
        assert_eq!(
            Fingerprint::from_bytes(&[1, 2, 3]),
            Err("3 bytes, fewer than the 8 of a program hash".to_string())
        );
        assert_eq!(
            Fingerprint::from_bytes(&7u64.to_le_bytes()),
            Ok(Fingerprint {
                hash: 7,
                inputs: String::new()
            })
        );
    }

    #[test]
    fn ranks_agree_or_the_first_that_differs_is_named() {
        assert_eq!(agree(&[fingerprint(1, ""), fingerprint(1, "")]), Ok(()));
        assert_eq!(
            agree(&[fingerprint(1, ""), fingerprint(1, ""), fingerprint(2, "")]).unwrap_err(),
            "rank 2 runs a different program (hash 0000000000000002) than rank 0 (hash 0000000000000001)"
        );
        assert_eq!(
            agree(&[fingerprint(1, "arg0 [4, 8] f32"), fingerprint(1, "")]).unwrap_err(),
            "rank 1 has other inputs (random inputs) than rank 0 (arg0 [4, 8] f32)"
        );
    }

    #[test]
    fn fnv_is_stable() {
        let mut hash = Fnv::default();
        hash.write(b"a");
        assert_eq!(hash.finish(), 0xaf63_dc4c_8601_ec8c);
    }
}
