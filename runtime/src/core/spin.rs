//! Waiting a few microseconds without sleeping. A run hands its rank
//! threads their jobs and waits for them to end: with a condition variable
//! alone that is two futex wake-ups a call (tens of microseconds on a
//! loaded or virtual machine), while a small program's rank is done, and
//! the next call posted, within microseconds. Each side first polls for a
//! short while, yielding the CPU between polls, and only then sleeps.

use std::time::{Duration, Instant};

/// How long a side polls before it sleeps.
pub(crate) const SPIN: Duration = Duration::from_micros(50);

/// Polls `ready` for up to [`SPIN`], yielding between polls; whether it
/// became true.
pub(crate) fn briefly(ready: impl Fn() -> bool) -> bool {
    let start = Instant::now();
    loop {
        if ready() {
            return true;
        }
        if start.elapsed() >= SPIN {
            return false;
        }
        std::thread::yield_now();
    }
}
