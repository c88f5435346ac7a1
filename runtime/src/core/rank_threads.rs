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
use super::spin;
use super::sync::Faults;
use crate::device::{Device, enter};
use crate::error::{Error, RankError, Result, RunError, panic_message};
use crate::interrupt;
use crate::lock;
use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// What serialises the runs of one world, and the threads they run on:
/// each world holds one and passes it to [`run`]. The threads start with the
/// first run ([`RankPool`]) and end with the world.
#[derive(Default)]
pub(crate) struct Calls(Mutex<Pool>);

#[derive(Default)]
struct Pool {
    threads: Option<RankPool>,
    /// Why the world runs nothing more: an interrupted run left a rank's
    /// thread running its program.
    closed: Option<String>,
}

impl Calls {
    /// Why the world is closed, if it is.
    pub fn closed(&self) -> Option<String> {
        lock(&self.0).closed.clone()
    }
}

/// Runs `work` on one thread per device (named `{name}-{rank}`, kept for
/// the world's later runs) with that device entered, after any other run
/// of the same world (`calls`) ended, so that the C-ABI entries reach it,
/// then `finish` (the backend waits for the work the rank enqueued).
/// Returns each rank's value, or the errors of the ranks that failed: an
/// error or a panic of `work` is one, in op `launcher`; so is the world's
/// threads failing to start. Once a rank has failed, the others get `grace`
/// to return (see [`Running::wait`]); once the run is interrupted
/// ([`interrupt::checking`]), [`interrupt::STOP`].
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
    if let Some(why) = &pool.closed {
        return Err(closed(devices, why));
    }
    if pool
        .threads
        .as_ref()
        .is_none_or(|threads| threads.len() != devices.len())
    {
        let ranks: Vec<usize> = devices.iter().map(|device| device.rank()).collect();
        match RankPool::start(name, &ranks) {
            Ok(started) => pool.threads = Some(started),
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
    let threads = pool.threads.as_ref().expect("started above");
    // Shared with the jobs, which count themselves done as their last act.
    let running = Arc::new(Running::new(devices.len()));
    let values: Vec<Mutex<Option<T>>> = devices.iter().map(|_| Mutex::new(None)).collect();
    // Boxed, so that a job left running (below) keeps what it holds.
    let jobs: Vec<Box<dyn Fn() + Sync + '_>> = devices
        .iter()
        .zip(&values)
        .enumerate()
        .map(|(index, (device, value))| {
            let (work, finish, running) = (&work, &finish, running.clone());
            let device = device.clone();
            Box::new(move || {
                let _done = running.done(index);
                let _entered = enter(device.clone());
                let result = catch_unwind(AssertUnwindSafe(|| work(&device)));
                // A job left running touches nothing of the run from here.
                if !running.left_program(index) {
                    return;
                }
                let result = value_or_failure(&*device, result);
                finish(&device);
                *lock(value) = result;
            }) as Box<dyn Fn() + Sync + '_>
        })
        .collect();
    for (index, job) in jobs.iter().enumerate() {
        // SAFETY: `running.wait` returns only once every job has ended, or
        // ends the process, or once the jobs still running have promised to
        // touch nothing of the run (`left_program`), whose boxes are then
        // leaked; the jobs and what they borrow live until this function
        // returns.
        unsafe { threads.post(index, &**job) };
    }
    let stop = |reason: &str| {
        for device in devices {
            device.fail("interrupt", Error::Interrupted(reason.to_owned()));
        }
    };
    if let Some(left) = running.wait(faults, grace, &stop) {
        std::mem::forget(jobs);
        let threads = pool.threads.take().expect("posted above");
        threads.detach();
        let ranks: Vec<usize> = left.iter().map(|&index| devices[index].rank()).collect();
        let why = format!(
            "an interrupted run left rank{} {ranks:?} running its program (a loop that makes no \
             runtime call) after {}s, on a thread of its own; start a new world",
            if ranks.len() == 1 { "" } else { "s" },
            interrupt::STOP.as_secs_f64()
        );
        pool.closed = Some(why.clone());
        let mut errors = faults.errors();
        errors.extend(ranks.iter().map(|&rank| RankError {
            rank,
            op: "launcher".into(),
            error: Error::Closed(why.clone()),
        }));
        return Err(RunError { errors });
    }
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

/// [`run`] for a world of one rank whose `work` only enqueues (a call on a
/// caller's CUDA stream): it runs on the calling thread, after any other
/// run of the world, with the device entered, then `finish`. Two thread
/// hand-offs a call fewer (most of a small call's host time); the cost is
/// that the caller cannot be interrupted while the work runs, which is why
/// only work that waits for nothing but its own GPU comes here.
pub(crate) fn run_here<D: Device + 'static, T>(
    calls: &Calls,
    device: &Arc<D>,
    faults: &Faults,
    work: impl FnOnce(&D) -> Result<T>,
    finish: impl FnOnce(&D),
) -> std::result::Result<T, RunError> {
    let pool = lock(&calls.0);
    if let Some(why) = &pool.closed {
        return Err(closed(std::slice::from_ref(device), why));
    }
    let result = {
        let _entered = enter(device.clone());
        catch_unwind(AssertUnwindSafe(|| work(device)))
    };
    let value = value_or_failure(&**device, result);
    finish(device);
    drop(pool);
    match value {
        Some(value) if faults.first_failed().is_none() => Ok(value),
        _ => Err(RunError {
            errors: faults.errors(),
        }),
    }
}

/// Every rank of `devices` refused, in op `launcher`: the world is closed.
fn closed<D: Device>(devices: &[Arc<D>], why: &str) -> RunError {
    let errors = devices
        .iter()
        .map(|device| RankError {
            rank: device.rank(),
            op: "launcher".into(),
            error: Error::Closed(why.to_owned()),
        })
        .collect();
    RunError { errors }
}

/// The value of a rank's `work`, or none once its error or panic is the
/// rank's failure in op `launcher`.
fn value_or_failure<D: Device + ?Sized, T>(
    device: &D,
    result: std::thread::Result<Result<T>>,
) -> Option<T> {
    match result {
        Ok(Ok(value)) => Some(value),
        Ok(Err(error)) => {
            device.fail("launcher", error);
            None
        }
        Err(payload) => {
            device.fail("launcher", Error::Panic(panic_message(&*payload)));
            None
        }
    }
}

/// Where the rank threads of one `run` are.
pub(crate) struct Running {
    state: Mutex<State>,
    changed: Condvar,
    /// Whether every job has ended, for the run to poll before it sleeps
    /// ([`spin`]).
    ended: AtomicBool,
}

struct State {
    /// Jobs not yet ended.
    remaining: usize,
    /// Jobs still inside the program (`work`), by index.
    in_program: Vec<bool>,
    /// Whether the run returned without the jobs still in the program:
    /// they must then touch nothing of it.
    abandoned: bool,
}

/// Counts one rank thread as done when dropped, at its job's end. It
/// notifies under the lock, so the run cannot see the count reach zero and
/// return before the notification is made.
pub(crate) struct Done(Arc<Running>, usize);

impl Drop for Done {
    fn drop(&mut self) {
        let mut state = lock(&self.0.state);
        state.remaining -= 1;
        state.in_program[self.1] = false;
        self.0.ended.store(state.remaining == 0, Ordering::Release);
        self.0.changed.notify_all();
    }
}

impl Running {
    /// `threads` rank threads, each of which takes one [`Running::done`].
    pub fn new(threads: usize) -> Running {
        Running {
            state: Mutex::new(State {
                remaining: threads,
                in_program: vec![true; threads],
                abandoned: false,
            }),
            changed: Condvar::new(),
            ended: AtomicBool::new(threads == 0),
        }
    }

    /// The guard that counts job `index` done when it ends.
    pub fn done(self: &Arc<Self>, index: usize) -> Done {
        Done(self.clone(), index)
    }

    /// Job `index` has returned from the program: whether it may go on to
    /// finish the run's work, false if the run returned without it.
    pub fn left_program(&self, index: usize) -> bool {
        let mut state = lock(&self.state);
        state.in_program[index] = false;
        !state.abandoned
    }

    /// Waits until every rank thread is done, calling the thread's
    /// [`interrupt`] check every [`interrupt::POLL`]; when it gives a
    /// reason, `stop` fails every rank with it. Once a rank has failed, the
    /// others get `grace` to return; a rank still running then ends the
    /// process (exit status 1) after the errors are printed. Once
    /// interrupted, they get [`interrupt::STOP`]: the jobs still inside the
    /// program then are left running, and their indices returned, once the
    /// others have ended.
    pub fn wait(
        &self,
        faults: &Faults,
        grace: Duration,
        stop: &dyn Fn(&str),
    ) -> Option<Vec<usize>> {
        if spin::briefly(|| self.ended.load(Ordering::Acquire)) {
            return None;
        }
        let mut failed_at: Option<Instant> = None;
        let mut interrupted_at: Option<Instant> = None;
        let mut state = lock(&self.state);
        while state.remaining > 0 {
            if interrupted_at.is_none() {
                // The check may take the interpreter's lock: not under ours.
                drop(state);
                if let Some(reason) = interrupt::poll() {
                    stop(&reason);
                    interrupted_at = Some(Instant::now());
                }
                state = lock(&self.state);
                if state.remaining == 0 {
                    break;
                }
            }
            if failed_at.is_none() && faults.first_failed().is_some() {
                failed_at = Some(Instant::now());
            }
            let wait = match (interrupted_at, failed_at) {
                (Some(at), _) if at.elapsed() >= interrupt::STOP => {
                    state.abandoned = true;
                    // The jobs past the program finish the run's work first.
                    let left: Vec<usize> = (0..state.in_program.len())
                        .filter(|&index| state.in_program[index])
                        .collect();
                    while state.remaining > left.len() {
                        state = self
                            .changed
                            .wait(state)
                            .unwrap_or_else(|poisoned| poisoned.into_inner());
                    }
                    return (!left.is_empty()).then_some(left);
                }
                (Some(at), _) => interrupt::STOP - at.elapsed(),
                (None, Some(at)) if at.elapsed() >= grace => {
                    end_process(faults, state.remaining, grace);
                }
                (None, Some(at)) => grace - at.elapsed(),
                // A failure does not wake this wait: look for one now and then.
                (None, None) => interrupt::POLL,
            };
            state = self
                .changed
                .wait_timeout(state, wait.min(interrupt::POLL))
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .0;
        }
        None
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

    fn no_stop(_: &str) {}

    #[test]
    fn every_rank_done_ends_the_wait_at_once() {
        let running = Arc::new(Running::new(2));
        let faults = Faults::new(2);
        std::thread::scope(|scope| {
            for index in 0..2 {
                let done = running.done(index);
                scope.spawn(move || drop(done));
            }
            let start = Instant::now();
            assert_eq!(
                running.wait(&faults, Duration::from_secs(60), &no_stop),
                None
            );
            assert!(start.elapsed() < Duration::from_secs(1));
        });
    }

    #[test]
    fn a_failure_leaves_the_others_their_grace() {
        let running = Arc::new(Running::new(1));
        let faults = Faults::new(2);
        faults.fail(1, "test", Error::Invalid("boom".into()));
        std::thread::scope(|scope| {
            let done = running.done(0);
            scope.spawn(move || {
                std::thread::sleep(Duration::from_millis(200));
                drop(done);
            });
            // Returns (does not end the process) since the rank returns in time.
            running.wait(&faults, Duration::from_secs(30), &no_stop);
        });
    }

    /// Job 0 leaves its program when stopped, job 1 never does: the wait
    /// ends within `STOP` of the interrupt, job 0 done and job 1 left.
    #[test]
    fn an_interrupt_leaves_a_job_that_does_not_stop() {
        let running = Arc::new(Running::new(2));
        let faults = Faults::new(2);
        let stopped = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (release, never) = std::sync::mpsc::channel::<()>();
        let stoppable = {
            let (done, running, stopped) = (running.done(0), running.clone(), stopped.clone());
            std::thread::spawn(move || {
                while !stopped.load(std::sync::atomic::Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(5));
                }
                assert!(running.left_program(0));
                drop(done);
            })
        };
        let stuck = {
            let (done, running) = (running.done(1), running.clone());
            std::thread::spawn(move || {
                let _ = never.recv();
                // The run returned without it: it must touch nothing.
                assert!(!running.left_program(1));
                drop(done);
            })
        };
        let start = Instant::now();
        let check = || (start.elapsed() > Duration::from_millis(100)).then(|| "Ctrl-C".to_string());
        let stop = |reason: &str| {
            assert_eq!(reason, "Ctrl-C");
            stopped.store(true, std::sync::atomic::Ordering::SeqCst);
        };
        let left = interrupt::checking(&check, || {
            running.wait(&faults, Duration::from_secs(60), &stop)
        });
        assert_eq!(left, Some(vec![1]));
        assert!(
            start.elapsed() < Duration::from_secs(1),
            "{:?}",
            start.elapsed()
        );
        stoppable.join().unwrap();
        release.send(()).unwrap();
        stuck.join().unwrap();
    }
}
