//! A stream of the cpu backend: an ordered queue of tasks drained by its own
//! worker thread, so that work on different streams runs concurrently and
//! asynchronously to the host. Tasks are numbered from 1 in enqueue order; an
//! event is a (queue, number) pair, complete once the worker has finished
//! that many tasks.

use crate::lock;
use std::sync::mpsc::{Sender, channel};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

pub(crate) type Task = Box<dyn FnOnce() + Send>;

pub(crate) struct Queue {
    /// How the trace and error messages name it: `stream 1`, `comm [0, 1]`.
    pub name: String,
    sender: Mutex<Option<Sender<Task>>>,
    worker: Mutex<Option<JoinHandle<()>>>,
    finished: Mutex<u64>,
    changed: Condvar,
}

impl Queue {
    /// Starts the queue's worker thread (an error when the system has no
    /// thread to give).
    pub fn start(name: String, thread_name: String) -> std::io::Result<Arc<Queue>> {
        let (sender, receiver) = channel::<Task>();
        let queue = Arc::new(Queue {
            name,
            sender: Mutex::new(Some(sender)),
            worker: Mutex::new(None),
            finished: Mutex::new(0),
            changed: Condvar::new(),
        });
        let drained = queue.clone();
        let worker = std::thread::Builder::new()
            .name(thread_name)
            .spawn(move || {
                for task in receiver {
                    task();
                    *lock(&drained.finished) += 1;
                    drained.changed.notify_all();
                }
            })?;
        *lock(&queue.worker) = Some(worker);
        Ok(queue)
    }

    pub fn push(&self, task: Task) {
        lock(&self.sender)
            .as_ref()
            .expect("task pushed on a stopped queue")
            .send(task)
            .expect("stream worker is gone");
    }

    /// How many tasks have finished.
    pub fn finished(&self) -> u64 {
        *lock(&self.finished)
    }

    /// Blocks until task `number` has finished. Waits need no timeout: every
    /// task ends, since those that wait for other ranks are bounded.
    pub fn wait_for(&self, number: u64) {
        let mut finished = lock(&self.finished);
        while *finished < number {
            finished = self
                .changed
                .wait(finished)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }

    /// Lets the worker drain what is queued, then joins it.
    pub fn stop(&self) {
        lock(&self.sender).take();
        if let Some(worker) = lock(&self.worker).take() {
            // A task never panics out of the worker (each catches its own).
            worker.join().expect("stream worker panicked");
        }
    }
}
