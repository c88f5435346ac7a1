//! The start-up stages of a run, timed one by one for the debug log: each
//! stage's own duration under a stable field name (`stage=lower ms=...`),
//! not the time since the start, which reads as the last stage's time and
//! hides where the start-up goes; then the total to the first result.

use std::time::Instant;

/// A clock of consecutive stages.
pub struct Stages {
    began: Instant,
    last: Instant,
}

impl Stages {
    pub fn start() -> Self {
        let now = Instant::now();
        Self {
            began: now,
            last: now,
        }
    }

    /// Logs `stage` as done, with the milliseconds since the previous stage
    /// ended (or the start), and starts the next one.
    pub fn done(&mut self, stage: &'static str) {
        let now = Instant::now();
        let ms = format!("{:.3}", (now - self.last).as_secs_f64() * 1e3);
        tracing::debug!(stage = %stage, ms = %ms, "start-up stage");
        self.last = now;
    }

    /// Logs the milliseconds from the start to now, when the first result
    /// is there.
    pub fn first_result(&self) {
        let ms = format!("{:.3}", self.began.elapsed().as_secs_f64() * 1e3);
        tracing::debug!(total_ms = %ms, "first result");
    }
}
