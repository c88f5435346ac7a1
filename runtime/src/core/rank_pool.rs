//! One thread per rank of a world, kept for the world's life, so that a
//! run does not start threads: starting them took 90-260 µs a call on a
//! 2×H200 host (`HIR_PROF`-style timing of `rank_threads::run`), more than a
//! small program's whole GPU time.
//!
//! A run hands each thread a job that borrows the run's state (its body,
//! the devices, the slots for the values) and waits until every job has
//! ended ([`super::rank_threads::Running`]), or ends the process: a job is
//! never left running when the run returns, which is what makes lending
//! it a borrowed closure sound, as `std::thread::scope` does. The one
//! exception is an interrupted run's job that cannot be stopped: the run
//! leaks it, it promises to touch nothing of the run once it returns, and
//! its thread is detached.

use super::spin;
use crate::lock;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

/// A run's job for one thread, its lifetime erased (see the module's doc).
struct Job(*const (dyn Fn() + Sync + 'static));

// SAFETY: the closure is Sync and outlives its use (the module's doc).
unsafe impl Send for Job {}

enum Posted {
    Idle,
    Run(Job),
    Quit,
}

/// Where a thread finds its next job.
struct Mailbox {
    posted: Mutex<Posted>,
    changed: Condvar,
    /// Whether `posted` holds a job or a quit, for the thread to poll
    /// before it sleeps ([`spin`]).
    pending: AtomicBool,
}

/// The threads of one world, one per rank it runs, in its devices' order.
pub(crate) struct RankPool {
    threads: Vec<(Arc<Mailbox>, Option<JoinHandle<()>>)>,
}

impl RankPool {
    /// One thread named `{name}-{rank}` for each of `ranks`.
    pub fn start(name: &str, ranks: &[usize]) -> std::io::Result<RankPool> {
        let mut pool = RankPool {
            threads: Vec::with_capacity(ranks.len()),
        };
        for rank in ranks {
            let mailbox = Arc::new(Mailbox {
                posted: Mutex::new(Posted::Idle),
                changed: Condvar::new(),
                pending: AtomicBool::new(false),
            });
            let theirs = mailbox.clone();
            // A failure drops `pool`, which stops the threads started.
            let thread = std::thread::Builder::new()
                .name(format!("{name}-{rank}"))
                .spawn(move || serve(&theirs))?;
            pool.threads.push((mailbox, Some(thread)));
        }
        Ok(pool)
    }

    pub fn len(&self) -> usize {
        self.threads.len()
    }

    /// Has thread `index` run `job` once.
    ///
    /// # Safety
    /// `job` and all it borrows must live until it has returned (or
    /// unwound): the caller waits for that before they go.
    pub unsafe fn post(&self, index: usize, job: &(dyn Fn() + Sync)) {
        // SAFETY: only the lifetime changes; the caller keeps `job` alive
        // for as long as the thread uses it.
        let job: &'static (dyn Fn() + Sync) = unsafe { std::mem::transmute(job) };
        let mailbox = &self.threads[index].0;
        mailbox.give(Posted::Run(Job(job)));
    }
}

impl RankPool {
    /// Tells every thread to end once its job has, without waiting for
    /// them: a job may never end (`rank_threads`' interrupted run).
    pub fn detach(mut self) {
        self.quit();
        for (_, thread) in &mut self.threads {
            drop(thread.take());
        }
    }

    fn quit(&self) {
        for (mailbox, _) in &self.threads {
            mailbox.give(Posted::Quit);
        }
    }
}

impl Drop for RankPool {
    fn drop(&mut self) {
        self.quit();
        for (_, thread) in &mut self.threads {
            if let Some(thread) = thread.take() {
                // A job's panic is caught in the thread, which then serves on.
                let _ = thread.join();
            }
        }
    }
}

/// A thread's life: run each job posted, until told to quit.
impl Mailbox {
    fn give(&self, posted: Posted) {
        *lock(&self.posted) = posted;
        self.pending.store(true, Ordering::Release);
        self.changed.notify_one();
    }
}

fn serve(mailbox: &Mailbox) {
    loop {
        spin::briefly(|| mailbox.pending.load(Ordering::Acquire));
        let job = {
            let mut posted = lock(&mailbox.posted);
            mailbox.pending.store(false, Ordering::Relaxed);
            loop {
                match std::mem::replace(&mut *posted, Posted::Idle) {
                    Posted::Idle => {
                        posted = mailbox
                            .changed
                            .wait(posted)
                            .unwrap_or_else(|poisoned| poisoned.into_inner());
                    }
                    Posted::Run(job) => break job,
                    Posted::Quit => return,
                }
            }
        };
        // SAFETY: the run that posted the job waits for it to end.
        let job = unsafe { &*job.0 };
        // The job reports its own failures; a panic past them must not end
        // the thread, which later runs need.
        let _ = catch_unwind(AssertUnwindSafe(job));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn threads_run_posted_jobs_and_outlive_them() {
        let pool = RankPool::start("test-rank", &[0, 1, 2]).unwrap();
        assert_eq!(pool.len(), 3);
        for round in 1..=50 {
            let ran = AtomicUsize::new(0);
            let names = Mutex::new(Vec::new());
            let job = || {
                lock(&names).push(std::thread::current().name().unwrap().to_owned());
                ran.fetch_add(1, Ordering::SeqCst);
            };
            for index in 0..pool.len() {
                // SAFETY: `job` lives until every thread has run it (below).
                unsafe { pool.post(index, &job) };
            }
            while ran.load(Ordering::SeqCst) < 3 {
                std::thread::yield_now();
            }
            let mut names = names.into_inner().unwrap();
            names.sort();
            assert_eq!(
                names,
                ["test-rank-0", "test-rank-1", "test-rank-2"],
                "round {round}"
            );
        }
    }

    #[test]
    fn a_panicking_job_leaves_its_thread_serving() {
        let pool = RankPool::start("test-panic", &[7]).unwrap();
        let ran = AtomicUsize::new(0);
        let panics = || {
            ran.fetch_add(1, Ordering::SeqCst);
            panic!("the job fails");
        };
        // SAFETY: waited for below.
        unsafe { pool.post(0, &panics) };
        while ran.load(Ordering::SeqCst) < 1 {
            std::thread::yield_now();
        }
        let works = || {
            ran.fetch_add(1, Ordering::SeqCst);
        };
        // SAFETY: waited for below.
        unsafe { pool.post(0, &works) };
        while ran.load(Ordering::SeqCst) < 2 {
            std::thread::yield_now();
        }
    }
}
