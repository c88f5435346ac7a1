//! The watchdog: one thread per process that turns a hang into an error.
//!
//! It watches two things: the store, for a failure of any rank (then this
//! rank gives up too, naming that rank), and the rank's communications in
//! flight ([`Inflight`]), for one that has not completed within the timeout
//! (then this rank fails in that op, and tells the others through the
//! store). Either way it then [`Watched::abort`]s what could still wait on
//! a peer (NCCL communicators), so the rank's host returns with the error;
//! and if the host has not finished `grace` later, it ends the process with
//! the error rather than let it hang (printing it if it can: a launcher
//! that is gone leaves no stderr, and the process still ends).
//!
//! Its store connection is the rank's heartbeat: it makes a request every
//! `poll`, and the store fails the rank when it is silent for longer than
//! [`WatchdogConfig::heartbeat`] (the process is stopped). A failure of
//! this rank that the rank did not report (stopped, joined twice) fails it
//! too.
//!
//! What is watched is behind [`Watched`], and the decision ([`decide`]) is a
//! plain function, so all of it is tested without a GPU.

use super::store::{Failure, StoreClient};
use crate::error::{Error, RankError};
use crate::lock;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A communication pending for too long.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stuck {
    /// What it is, e.g. `hir_rt_allgather_f32 on team [0, 1]`.
    pub op: String,
    /// How long ago it was posted.
    pub pending: Duration,
}

/// A rank's communications in flight, each with the handle that says whether
/// it completed (a CUDA event, a flag). The rank posts them and retires them
/// all once it has synchronized; the watchdog asks which is stuck. Both sides
/// hold the same lock, so a handle is never asked about after its retirement
/// (when the rank may reuse it).
pub struct Inflight<H> {
    entries: Mutex<Vec<Entry<H>>>,
    next: std::sync::atomic::AtomicU64,
}

struct Entry<H> {
    id: u64,
    op: String,
    posted: Instant,
    handle: H,
}

impl<H> Default for Inflight<H> {
    fn default() -> Self {
        Inflight {
            entries: Mutex::new(Vec::new()),
            next: Default::default(),
        }
    }
}

impl<H> Inflight<H> {
    /// Posts the communication `op`; the id names it to
    /// [`Inflight::update`] and [`Inflight::remove`].
    pub fn post(&self, op: String, handle: H) -> u64 {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        lock(&self.entries).push(Entry {
            id,
            op,
            posted: Instant::now(),
            handle,
        });
        id
    }

    /// Gives communication `id` a new handle (e.g. its event, once posted).
    pub fn update(&self, id: u64, handle: H) {
        if let Some(entry) = lock(&self.entries).iter_mut().find(|entry| entry.id == id) {
            entry.handle = handle;
        }
    }

    /// Forgets communication `id` (its posting failed).
    pub fn remove(&self, id: u64) {
        lock(&self.entries).retain(|entry| entry.id != id);
    }

    /// The id the next communication posted gets: those posted so far are
    /// below it, for [`Inflight::retire_before`].
    pub fn next_id(&self) -> u64 {
        self.next.load(Ordering::Relaxed)
    }

    /// Forgets the communications posted before `id` (they completed).
    pub fn retire_before(&self, id: u64) {
        lock(&self.entries).retain(|entry| entry.id >= id);
    }

    /// Forgets every communication (they completed: the rank synchronized).
    pub fn retire(&self) {
        lock(&self.entries).clear();
    }

    pub fn len(&self) -> usize {
        lock(&self.entries).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The oldest communication pending for `timeout` or longer, if any.
    /// `done` says whether a handle's communication completed; those that
    /// did are forgotten. `now` is a parameter so that tests need no sleep.
    pub fn stuck(
        &self,
        now: Instant,
        timeout: Duration,
        mut done: impl FnMut(&H) -> bool,
    ) -> Option<Stuck> {
        let mut entries = lock(&self.entries);
        // Only entries old enough to matter are asked about.
        entries.retain(|entry| now.duration_since(entry.posted) < timeout || !done(&entry.handle));
        entries
            .iter()
            .filter(|entry| now.duration_since(entry.posted) >= timeout)
            .min_by_key(|entry| entry.posted)
            .map(|entry| Stuck {
                op: entry.op.clone(),
                pending: now.duration_since(entry.posted),
            })
    }
}

/// What a watchdog watches: one rank of this process.
pub trait Watched: Send + Sync {
    fn rank(&self) -> usize;
    /// The communication pending longest, if for `timeout` or more.
    fn stuck(&self, timeout: Duration) -> Option<Stuck>;
    /// The rank's first error, if it has one.
    fn error(&self) -> Option<RankError>;
    /// Records the rank's error in `op` (unless it has one already).
    fn fail(&self, op: &str, error: Error);
    /// Unblocks whatever may wait on the peers (for NCCL, aborts the
    /// communicators), so that the rank's host returns.
    fn abort(&self);
}

/// How long a peer's failure is known before the watchdog fails this rank
/// for it: meanwhile the host may find out by itself (a wait on the store
/// ends with that failure, the rank fails for a reason of its own, or a
/// communication that had all it needed completes), which says more.
pub const SETTLE: Duration = Duration::from_secs(1);

/// What the watchdog makes of what it saw (the failures in the store, for
/// how long a peer's has been known, this rank's oldest communication in
/// flight): the op to fail the rank in, and the error; `None` while all is
/// well. A peer's failure comes first (it is the cause; the pending op is
/// what waited for it), [`SETTLE`] after it became known; then an op pending
/// for `timeout` or more.
pub fn decide(
    rank: usize,
    failures: &[Failure],
    known_for: Duration,
    pending: Option<&Stuck>,
    timeout: Duration,
) -> Option<(String, Error)> {
    if let Some(failure) = failures.iter().find(|failure| failure.rank != rank) {
        if known_for < SETTLE {
            return None;
        }
        let op = pending.map_or_else(|| "watchdog".to_string(), |pending| pending.op.clone());
        return Some((op, failure.error()));
    }
    pending
        .filter(|pending| pending.pending >= timeout)
        .map(|stuck| {
            (
                stuck.op.clone(),
                Error::Timeout {
                    after: timeout,
                    waiting: "for it to complete: the watchdog found it still pending \
                          (a peer that never posted it, or one that hangs)"
                        .into(),
                },
            )
        })
}

/// How a watchdog behaves.
#[derive(Clone, Debug)]
pub struct WatchdogConfig {
    /// A communication pending this long is stuck.
    pub timeout: Duration,
    /// How often it looks (and so asks the store: a heartbeat).
    pub poll: Duration,
    /// Silent this long, the rank is failed by the store as stopped.
    pub heartbeat: Duration,
    /// After a failure, how long the rank's host has to return (see
    /// [`Watchdog::stop`]) before the watchdog ends the process; `None`:
    /// never.
    pub grace: Option<Duration>,
}

impl WatchdogConfig {
    /// Stuck after `timeout`, a look every 100 ms, stopped when silent for
    /// `timeout / 2` within 1 to 5 s (so before its peers' waits on it time
    /// out, for timeouts of 2 s or more), and the process ended
    /// `min(timeout, 10 s)` after a failure the host did not return from.
    pub fn new(timeout: Duration) -> WatchdogConfig {
        WatchdogConfig {
            timeout,
            poll: Duration::from_millis(100),
            heartbeat: (timeout / 2).clamp(Duration::from_secs(1), Duration::from_secs(5)),
            grace: Some(timeout.min(Duration::from_secs(10))),
        }
    }
}

#[derive(Default)]
struct Control {
    stop: Mutex<bool>,
    stopped: Condvar,
    fired: AtomicBool,
}

/// The watchdog thread of one rank; [`Watchdog::stop`] (or dropping it)
/// ends it.
pub struct Watchdog {
    control: Arc<Control>,
    thread: Option<JoinHandle<()>>,
}

impl Watchdog {
    /// Starts watching `watched`, with `client` (a connection of its own) to
    /// the store.
    pub fn start(
        watched: Arc<dyn Watched>,
        client: StoreClient,
        config: WatchdogConfig,
    ) -> std::io::Result<Watchdog> {
        let control = Arc::new(Control::default());
        let thread = {
            let control = control.clone();
            std::thread::Builder::new()
                .name(format!("hir-watchdog-{}", watched.rank()))
                .spawn(move || watch(&*watched, &client, &config, &control))?
        };
        Ok(Watchdog {
            control,
            thread: Some(thread),
        })
    }

    /// Whether it found a failure (and failed the rank).
    pub fn fired(&self) -> bool {
        self.control.fired.load(Ordering::Acquire)
    }

    /// Ends the watch: the rank's host has returned.
    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        *lock(&self.control.stop) = true;
        self.control.stopped.notify_all();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.halt();
    }
}

fn stopped(control: &Control, within: Duration) -> bool {
    let stop = lock(&control.stop);
    let (stop, _) = control
        .stopped
        .wait_timeout_while(stop, within, |stop| !*stop)
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    *stop
}

fn watch(watched: &dyn Watched, client: &StoreClient, config: &WatchdogConfig, control: &Control) {
    let rank = watched.rank();
    // Since when a peer's failure is known.
    let mut known: Option<Instant> = None;
    loop {
        if stopped(control, Duration::ZERO) {
            return;
        }
        // Blocks on the server up to `poll` for a failure of any rank.
        let failures = match client.failures(config.poll) {
            Ok(failures) => failures,
            // The store's host is gone (rank 0's process).
            Err(Error::Peer { rank, what }) => vec![Failure { rank, what }],
            // The store is gone (a launcher's): nothing can be agreed on.
            Err(error) => {
                watched.fail("watchdog", error);
                Vec::new()
            }
        };
        let pending = watched.stuck(Duration::ZERO);
        if failures.iter().any(|failure| failure.rank != rank) {
            known.get_or_insert_with(Instant::now);
        }
        let known_for = known.map_or(Duration::ZERO, |since| since.elapsed());
        // Its own failure, not of its own telling: the store found the rank
        // stopped, or another process with its rank.
        if let Some(failure) = failures.first().filter(|failure| failure.rank == rank)
            && watched.error().is_none()
        {
            watched.fail("watchdog", failure.error());
        }
        if let Some((op, mut error)) =
            decide(rank, &failures, known_for, pending.as_ref(), config.timeout)
        {
            // A stuck op with ranks that never came: they are why.
            if let Error::Timeout { waiting, .. } = &mut error
                && let Ok(absent) = client.absent()
                && !absent.is_empty()
            {
                waiting.push_str(&format!(
                    "; ranks {absent:?} never joined the store (not started, or ended before \
                     joining)"
                ));
            }
            watched.fail(&op, error);
        }
        if let Some(error) = watched.error() {
            // Best effort: the store may be what failed.
            let _ = client.fail(Failure::failed(rank, &error.op, &error.error.to_string()));
            control.fired.store(true, Ordering::Release);
            watched.abort();
            if let Some(grace) = config.grace
                && !stopped(control, grace)
            {
                // Never `eprintln!`: with stderr gone (a killed launcher's
                // pipe) it would panic this thread, and the process would
                // hang on.
                let _ = writeln!(
                    std::io::stderr(),
                    "{error}\n(the watchdog ends the process: rank {rank} did not return within {grace:?} of the failure)"
                );
                std::process::exit(1);
            }
            // Stopped, or never ends the process: nothing more to watch.
            let stop = lock(&control.stop);
            drop(control.stopped.wait_while(stop, |stop| !*stop));
            return;
        }
        if !failures.is_empty() {
            // Only this rank's own (the store answered at once): pace the loop.
            let _ = stopped(control, config.poll);
        }
    }
}
