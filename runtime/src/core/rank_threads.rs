//! Ranks that are threads, for both backends: [`run`] runs the tool's body
//! on one thread per rank (the world's [`RankPool`], kept between runs) and
//! waits for them, one run of a world at a time ([`Calls`]), and what
//! happens when a failed rank's program does not return.
//!
//! A world's runs are serialised: its ranks number their collectives,
//! transfers and requests as they post them, and register the call's
//! arguments with their buffer tables, so two runs at once (two threads of
//! a Python program, say) would pair one call's collectives with the
//! other's and drop each other's registrations. A run waits for the one
//! before it to end, its work included.
//!
//! Once a rank has failed, its later runtime calls do nothing and return at
//! once, so its program runs on to its end. A program whose own loops are
//! long (a loop bound read from bad input, say) would then keep its thread,
//! and the run, going for as long as they take. A thread cannot be stopped
//! from outside, and the JIT'd code it runs cannot be freed under it, so
//! after the failure the rank threads get a grace period to return; past it
//! the process prints the errors and ends, as the watchdog ends a rank in a
//! process of its own.

use super::rank_pool::RankPool;
use super::sync::Faults;
use crate::device::{Device, enter};
use crate::error::{Error, Result, RunError, panic_message};
use crate::lock;
use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// What serialises the runs of one world, and the threads they run on:
/// each world holds one and passes it to [`run`]. The threads start with the
/// first run ([`RankPool`]) and end with the world.
#[derive(Default)]
pub(crate) struct Calls(Mutex<Option<RankPool>>);

/// Runs `work` on one thread per device (named `{name}-{rank}`, kept for
/// the world's later runs) with that device entered, after any other run
/// of the same world (`calls`) ended, so that the C-ABI entries reach it,
/// then `finish` (the backend waits for the work the rank enqueued).
/// Returns each rank's value, or the errors of the ranks that failed: an
/// error or a panic of `work` is one, in op `launcher`; so is the world's
/// threads failing to start. Once a rank has failed, the others get `grace`
/// to return (see [`Running::wait`]).
pub(crate) fn run<D: Device + 'static, T: Send>(
    calls: &Calls,
    devices: &[Arc<D>],
    name: &str,
    faults: &Faults,
    grace: Duration,
    work: impl Fn(&D) -> Result<T> + Sync,
    finish: impl Fn(&D) + Sync,
) -> std::result::Result<Vec<T>, RunError> {
    let mut pool = lock(&calls.0);
    if pool.as_ref().is_none_or(|pool| pool.len() != devices.len()) {
        let ranks: Vec<usize> = devices.iter().map(|device| device.rank()).collect();
        match RankPool::start(name, &ranks) {
            Ok(started) => *pool = Some(started),
            Err(error) => {
                let error = format!("cannot start the threads of ranks {ranks:?}: {error}");
                for device in devices {
                    device.fail("launcher", Error::Io(error.clone()));
                }
                return Err(RunError {
                    errors: faults.errors(),
                });
            }
        }
    }
    let pool = pool.as_ref().expect("started above");
    // Shared with the jobs, which count themselves done as their last act.
    let running = Arc::new(Running::new(devices.len()));
    let values: Vec<Mutex<Option<T>>> = devices.iter().map(|_| Mutex::new(None)).collect();
    let jobs: Vec<_> = devices
        .iter()
        .zip(&values)
        .map(|(device, value)| {
            let (work, finish, running) = (&work, &finish, running.clone());
            move || {
                let _done = running.done();
                let _entered = enter(device.clone());
                let result = match catch_unwind(AssertUnwindSafe(|| work(device))) {
                    Ok(Ok(result)) => Some(result),
                    Ok(Err(error)) => {
                        device.fail("launcher", error);
                        None
                    }
                    Err(payload) => {
                        device.fail("launcher", Error::Panic(panic_message(&*payload)));
                        None
                    }
                };
                finish(device);
                *lock(value) = result;
            }
        })
        .collect();
    for (index, job) in jobs.iter().enumerate() {
        // SAFETY: `running.wait` returns only once every job has ended (or
        // ends the process), and the jobs and what they borrow live until
        // this function returns.
        unsafe { pool.post(index, job) };
    }
    running.wait(faults, grace);
    drop(jobs);
    let errors = faults.errors();
    if errors.is_empty() {
        Ok(values
            .into_iter()
            .map(|value| {
                value
                    .into_inner()
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .expect("a rank without an error has a value")
            })
            .collect())
    } else {
        Err(RunError { errors })
    }
}

/// How many rank threads of one `run` are still running.
pub(crate) struct Running {
    remaining: Mutex<usize>,
    changed: Condvar,
}

/// Counts one rank thread as done when dropped, at its job's end. It
/// notifies under the lock, so the run cannot see the count reach zero and
/// return before the notification is made.
pub(crate) struct Done(Arc<Running>);

impl Drop for Done {
    fn drop(&mut self) {
        let mut remaining = lock(&self.0.remaining);
        *remaining -= 1;
        self.0.changed.notify_all();
    }
}

impl Running {
    /// `threads` rank threads, each of which takes one [`Running::done`].
    pub fn new(threads: usize) -> Running {
        Running {
            remaining: Mutex::new(threads),
            changed: Condvar::new(),
        }
    }

    pub fn done(self: &Arc<Self>) -> Done {
        Done(self.clone())
    }

    /// Waits until every rank thread is done. Once a rank has failed, the
    /// others get `grace` to return; a rank still running then ends the
    /// process (exit status 1) after the errors are printed.
    pub fn wait(&self, faults: &Faults, grace: Duration) {
        let mut failed_at: Option<Instant> = None;
        let mut remaining = lock(&self.remaining);
        while *remaining > 0 {
            if failed_at.is_none() && faults.first_failed().is_some() {
                failed_at = Some(Instant::now());
            }
            let wait = match failed_at {
                Some(at) if at.elapsed() >= grace => {
                    end_process(faults, *remaining, grace);
                }
                Some(at) => grace - at.elapsed(),
                // A failure does not wake this wait: look for one now and then.
                None => Duration::from_millis(100),
            };
            remaining = self
                .changed
                .wait_timeout(remaining, wait.min(Duration::from_millis(100)))
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .0;
        }
    }
}

fn end_process(faults: &Faults, running: usize, grace: Duration) -> ! {
    let errors = RunError {
        errors: faults.errors(),
    };
    // Never a panic on the way out: stderr may be gone.
    let _ = writeln!(
        std::io::stderr(),
        "error: the run failed: {errors}\n  and {running} rank thread{} did not return within \
         {}s of the failure (a failed rank's runtime calls do nothing, but its program's own \
         loops run on): ending the process",
        if running == 1 { "" } else { "s" },
        grace.as_secs_f64()
    );
    std::process::exit(1);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn every_rank_done_ends_the_wait_at_once() {
        let running = Arc::new(Running::new(2));
        let faults = Faults::new(2);
        std::thread::scope(|scope| {
            for _ in 0..2 {
                let done = running.done();
                scope.spawn(move || drop(done));
            }
            let start = Instant::now();
            running.wait(&faults, Duration::from_secs(60));
            assert!(start.elapsed() < Duration::from_secs(1));
        });
    }

    #[test]
    fn a_failure_leaves_the_others_their_grace() {
        let running = Arc::new(Running::new(1));
        let faults = Faults::new(2);
        faults.fail(1, "test", Error::Invalid("boom".into()));
        std::thread::scope(|scope| {
            let done = running.done();
            scope.spawn(move || {
                std::thread::sleep(Duration::from_millis(200));
                drop(done);
            });
            // Returns (does not end the process) since the rank returns in time.
            running.wait(&faults, Duration::from_secs(30));
        });
    }
}
