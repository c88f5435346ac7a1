//! Where ranks in different processes meet: a key-value store, whichever
//! one the job has. [`KeyValueStore`] is the boundary: HIR's own TCP store
//! (`crate::bootstrap::StoreClient`) is one implementation, a job's
//! `torch.distributed` store (the Python package's, through PyO3) another.
//! [`StoreBootstrap`] is the [`Bootstrap`] of ranks in processes over any of
//! them: the cuda backend exchanges its NCCL unique ids and IPC handles
//! through it, the cpu backend its collectives' bytes.

use super::bootstrap::Bootstrap;
use crate::error::{Error, Result};
use crate::ops::Team;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long one blocking get may hold the store: the threads of a rank may
/// share one connection (HIR's store serializes its requests), and a cpu
/// rank's receive waiting on one queue must not keep the send on another,
/// which its peer waits for, from reaching the store.
const SLICE: Duration = Duration::from_millis(10);

/// What a blocking get ended with.
pub enum Got {
    Values(Vec<Vec<u8>>),
    /// The keys still missing at the timeout.
    Missing(Vec<String>),
}

/// A key-value store the ranks of a job share. Every call is bounded: a get
/// by its timeout, the others by the store's own (a store that stops
/// answering is an error, never a hang).
pub trait KeyValueStore: Send + Sync {
    /// Where the store is, for messages: `the store at 127.0.0.1:29501`.
    fn describe(&self) -> String;

    fn set(&self, key: &str, value: &[u8]) -> Result<()>;

    /// Waits until every key is set (their values, in order), `timeout`
    /// passes (the keys still missing), or a rank posted a failure (its
    /// error).
    fn get_or_missing(&self, keys: &[String], timeout: Duration) -> Result<Got>;

    /// Adds `delta` to the counter `key` (0 if unset) and returns the sum.
    fn add(&self, key: &str, delta: i64) -> Result<i64>;

    fn delete(&self, keys: &[String]) -> Result<()>;

    /// Tells every rank that `rank` failed in `op`, so that their waits end
    /// now rather than at their timeouts.
    fn post_failure(&self, rank: usize, op: &str, message: &str) -> Result<()>;

    /// The error of a rank that gives up because another failed, if one
    /// posted a failure: one round trip, no wait.
    fn check_failed(&self) -> Result<()>;

    /// As [`KeyValueStore::get_or_missing`], in requests that each block
    /// at most a few milliseconds (see [`SLICE`]).
    fn wait(&self, keys: &[String], timeout: Duration) -> Result<Got> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let slice = left.min(SLICE);
            let got = self.get_or_missing(keys, slice)?;
            if matches!(got, Got::Values(_)) || slice == left {
                return Ok(got);
            }
        }
    }

    /// As [`KeyValueStore::wait`], a timeout being an error.
    fn get(&self, keys: &[String], timeout: Duration) -> Result<Vec<Vec<u8>>> {
        match self.wait(keys, timeout)? {
            Got::Values(values) => Ok(values),
            Got::Missing(missing) => Err(Error::Timeout {
                after: timeout,
                waiting: format!("for {missing:?} in {}", self.describe()),
            }),
        }
    }
}

/// The [`Bootstrap`] of ranks in different processes, over a store: each
/// exchange is a key per team member (`PREFIX/TEAM/NUMBER/POS`), which every
/// member reads once all are there; the last to read deletes them.
pub struct StoreBootstrap {
    store: Arc<dyn KeyValueStore>,
    prefix: String,
    timeout: Duration,
}

impl StoreBootstrap {
    pub fn new(store: Arc<dyn KeyValueStore>, prefix: &str, timeout: Duration) -> StoreBootstrap {
        StoreBootstrap {
            store,
            prefix: prefix.to_string(),
            timeout,
        }
    }
}

impl Bootstrap for StoreBootstrap {
    fn all_gather(
        &self,
        team: &Team,
        number: u64,
        position: usize,
        bytes: Vec<u8>,
    ) -> Result<Vec<Vec<u8>>> {
        let ranks: Vec<String> = team.ranks().iter().map(usize::to_string).collect();
        let base = format!("{}/{}/{number}", self.prefix, ranks.join(","));
        let keys: Vec<String> = (0..team.len()).map(|p| format!("{base}/{p}")).collect();
        self.store.set(&keys[position], &bytes)?;
        match self.store.wait(&keys, self.timeout)? {
            Got::Values(values) => {
                let left = format!("{base}/read");
                if self.store.add(&left, 1)? == team.len() as i64 {
                    let mut all = keys;
                    all.push(left);
                    self.store.delete(&all)?;
                }
                Ok(values)
            }
            Got::Missing(missing) => {
                let missing: Vec<usize> = keys
                    .iter()
                    .zip(team.ranks())
                    .filter(|(key, _)| missing.contains(key))
                    .map(|(_, &rank)| rank)
                    .collect();
                Err(Error::Timeout {
                    after: self.timeout,
                    waiting: format!(
                        "for ranks {missing:?} to join {} #{number} of team {team}",
                        self.prefix
                    ),
                })
            }
        }
    }

    fn same_process(&self) -> bool {
        false
    }

    fn timeout(&self) -> Duration {
        self.timeout
    }

    fn check_failed(&self) -> Result<()> {
        self.store.check_failed()
    }
}
