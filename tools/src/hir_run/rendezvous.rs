//! One rank of a multi-process run: `RANK` and `WORLD_SIZE` are set (by
//! `hir-run`'s launcher, see `launch.rs`, or by torchrun). The rank joins the
//! others through the store, checks that every rank runs the same program
//! with the same input shapes, starts its watchdog, and then either meets the
//! others at a barrier and stops (`--dry-run`) or runs the program.
//!
//! Test hooks: `HIR_TEST_HOOK=R:ACTION` makes rank `R` misbehave on purpose,
//! so that the tests can show what the others do: `exit-after-bootstrap`
//! (exits with status 0 without a word, as a crash would), `stall` (hangs
//! where abort cannot reach it, before the barrier).

use crate::cli::Options;
use anyhow::{Result, anyhow};
use hir_runtime::bootstrap::{
    Env, Inflight, ProcessGroup, Stuck, Watchdog, WatchdogConfig, Watched,
};
use hir_runtime::error::{Error, RankError};
use hir_runtime::npy;
use hir_tools::backend::Backend;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The test hook variable.
pub const TEST_HOOK: &str = "HIR_TEST_HOOK";

/// This process's group and its watched rank, for the runner of the program
/// (`--backend cuda` builds its world with `ProcessGroup::cuda_world` and
/// puts it under the watchdog with [`watch`]).
static RANK: OnceLock<(Arc<ProcessGroup>, Arc<HostRank>)> = OnceLock::new();

/// This process's rank group, when hir-run runs one rank of a multi-process
/// run.
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
fn hook(rank: usize, action: &str) -> bool {
    std::env::var(TEST_HOOK).is_ok_and(|hook| hook == format!("{rank}:{action}"))
}

/// Runs rank `env.rank` of a multi-process run; `run` runs the program.
pub fn run_rank(options: &Options, env: Env, run: impl FnOnce(&Options) -> Result<()>) -> ExitCode {
    let rank = env.rank;
    if options.ranks != 1 && options.ranks != env.world_size {
        eprintln!(
            "hir-run: error: rank {rank}: -n {} does not match WORLD_SIZE {}",
            options.ranks, env.world_size
        );
        return ExitCode::FAILURE;
    }
    let group = match ProcessGroup::join(env, options.timeout) {
        Ok(group) => Arc::new(group),
        Err(error) => {
            eprintln!("hir-run: error: rank {rank}: bootstrap: {error}");
            return ExitCode::FAILURE;
        }
    };
    if hook(rank, "exit-after-bootstrap") {
        std::process::exit(0);
    }
    let host = Arc::new(HostRank::new(rank));
    let watchdog = match group.watch(host.clone(), WatchdogConfig::new(options.timeout)) {
        Ok(watchdog) => watchdog,
        Err(error) => {
            host.fail("watchdog", error);
            return leave(group, None, &host);
        }
    };
    let result = steps(options, &group, &host, run);
    if let Err((op, error)) = result {
        host.fail(&op, error);
    }
    leave(group, Some(watchdog), &host)
}

/// Leaves the group, telling it this rank's error if it has one.
fn leave(group: Arc<ProcessGroup>, watchdog: Option<Watchdog>, host: &HostRank) -> ExitCode {
    let error = host.error();
    if let Some(error) = &error {
        group.fail(&error.op, &error.error);
        eprintln!("hir-run: error: {error}");
    }
    // Goodbye first: the watchdog's connection closes when it stops.
    group.goodbye();
    if let Some(watchdog) = watchdog {
        watchdog.stop();
    }
    group.finish();
    if error.is_some() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

type Step = std::result::Result<(), (String, Error)>;

fn steps(
    options: &Options,
    group: &Arc<ProcessGroup>,
    host: &Arc<HostRank>,
    run: impl FnOnce(&Options) -> Result<()>,
) -> Step {
    let (rank, world) = (group.rank(), group.world_size());
    if options.backend == Backend::Cpu && !options.dry_run {
        return Err((
            "launcher".into(),
            Error::Invalid(
                "the cpu backend runs its ranks as threads of one process: \
                 ranks in processes need --dry-run or --backend cuda"
                    .into(),
            ),
        ));
    }
    let (hash, inputs) = fingerprint(options).map_err(|error| {
        (
            "same-program check".to_string(),
            Error::Invalid(format!("{error:#}")),
        )
    })?;
    let mut mine = hash.to_le_bytes().to_vec();
    mine.extend(inputs.as_bytes());
    let all = {
        let group = group.clone();
        host.communicate("same-program check", move || {
            group.all_gather_within("check", mine, group.timeout() * 2)
        })
    }
    .map_err(|error| ("same-program check".to_string(), error))?;
    agree(&all).map_err(|error| ("same-program check".to_string(), Error::Mismatch(error)))?;
    if options.dry_run {
        println!(
            "rank {rank} of {world}: joined; program hash {hash:016x}; inputs {}",
            if inputs.is_empty() { "random" } else { &inputs }
        );
        if hook(rank, "stall") {
            loop {
                std::thread::sleep(Duration::from_secs(1));
            }
        }
        let group = group.clone();
        host.communicate("barrier", move || {
            group.all_gather_within("barrier", Vec::new(), group.timeout() * 2)
        })
        .map_err(|error| ("barrier".to_string(), error))?;
        if rank == 0 {
            println!(
                "dry run: {world} ranks run the same program (hash {hash:016x}) with the same inputs and passed a barrier; nothing was executed"
            );
        }
        return Ok(());
    }
    RANK.get_or_init(|| (group.clone(), host.clone()));
    run(options).map_err(|error| ("run".to_string(), Error::Io(format!("{error:#}"))))
}

/// The program's hash (its bytes and the options that change how it
/// lowers and what it computes) and its `--input` shapes.
fn fingerprint(options: &Options) -> Result<(u64, String)> {
    let bytes = std::fs::read(&options.program)
        .map_err(|error| anyhow!("cannot read {}: {error}", options.program.display()))?;
    let mut hash = Fnv::default();
    hash.write(b"hir-run program\0");
    hash.write(&bytes);
    let backend = match options.backend {
        Backend::Cpu => "cpu",
        Backend::Cuda => "cuda",
    };
    hash.write(
        format!(
            "\0backend={backend}\0num-streams={}\0p2p={}\0seed={}\0",
            options.num_streams, options.p2p, options.seed
        )
        .as_bytes(),
    );
    let mut inputs: Vec<(usize, String)> = Vec::new();
    for (index, path) in &options.inputs {
        let array = npy::read(path).map_err(|error| anyhow!("--input arg{index}: {error}"))?;
        inputs.retain(|(other, _)| other != index);
        inputs.push((
            *index,
            format!("arg{index} {:?} {}", array.shape, array.dtype.mlir()),
        ));
    }
    inputs.sort();
    let inputs: Vec<String> = inputs.into_iter().map(|(_, input)| input).collect();
    Ok((hash.0, inputs.join(", ")))
}

/// Every rank's fingerprint must be rank 0's: the error names the first
/// rank that differs.
fn agree(all: &[Vec<u8>]) -> std::result::Result<(), String> {
    let split = |bytes: &Vec<u8>| {
        let hash = u64::from_le_bytes(bytes[..8].try_into().unwrap());
        (hash, String::from_utf8_lossy(&bytes[8..]).into_owned())
    };
    let (hash0, inputs0) = split(&all[0]);
    let describe = |inputs: &str| {
        if inputs.is_empty() {
            "random inputs".to_string()
        } else {
            inputs.to_string()
        }
    };
    for (rank, bytes) in all.iter().enumerate().skip(1) {
        let (hash, inputs) = split(bytes);
        if hash != hash0 {
            return Err(format!(
                "rank {rank} runs a different program (hash {hash:016x}) than rank 0 (hash {hash0:016x})"
            ));
        }
        if inputs != inputs0 {
            return Err(format!(
                "rank {rank} has other inputs ({}) than rank 0 ({})",
                describe(&inputs),
                describe(&inputs0)
            ));
        }
    }
    Ok(())
}

/// 64-bit FNV-1a: the same on every host and build.
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0 ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
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
        self.inflight.post(op.to_string(), done.clone());
        {
            let (done, result) = (done.clone(), result.clone());
            // On a thread of its own, so that an abort releases the host
            // from it (the thread then ends with the process).
            std::thread::spawn(move || {
                let value = wait();
                *result.lock().unwrap() = Some(value);
                done.store(true, Ordering::Release);
            });
        }
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

    fn fingerprint(hash: u64, inputs: &str) -> Vec<u8> {
        let mut bytes = hash.to_le_bytes().to_vec();
        bytes.extend(inputs.as_bytes());
        bytes
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
        assert_eq!(hash.0, 0xaf63_dc4c_8601_ec8c);
    }
}
