//! What the rank threads share to fail and to meet: the world's [`Faults`],
//! bounded waits ([`Waiter`]) that end in a timeout or when any rank fails,
//! and [`Hub`], where the ranks of a team meet to exchange one value each.

use crate::error::{Error, RankError, Result};
use crate::lock;
use crate::ops::Team;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// How often a blocked wait looks at whether another rank failed.
const POLL: Duration = Duration::from_millis(10);

/// Every rank's first error, in the order they happened.
pub(crate) struct Faults {
    failed: Vec<AtomicBool>,
    errors: Mutex<Vec<RankError>>,
}

impl Faults {
    pub fn new(ranks: usize) -> Self {
        Faults {
            failed: (0..ranks).map(|_| AtomicBool::new(false)).collect(),
            errors: Mutex::new(Vec::new()),
        }
    }

    pub fn failed(&self, rank: usize) -> bool {
        self.failed[rank].load(Ordering::Acquire)
    }

    /// Records `rank`'s error unless it already has one.
    pub fn fail(&self, rank: usize, op: &str, error: Error) {
        let mut errors = lock(&self.errors);
        if !self.failed[rank].swap(true, Ordering::AcqRel) {
            errors.push(RankError {
                rank,
                op: op.to_string(),
                error,
            });
        }
    }

    /// The rank that failed first, if any did.
    pub fn first_failed(&self) -> Option<usize> {
        lock(&self.errors).first().map(|error| error.rank)
    }

    pub fn errors(&self) -> Vec<RankError> {
        lock(&self.errors).clone()
    }
}

/// A wait for other ranks that gives up after a timeout or once any rank
/// has failed (that rank will never arrive, or its error is the cause).
pub(crate) struct Waiter<'a> {
    pub faults: &'a Faults,
    pub timeout: Duration,
    pub deadline: Instant,
}

impl<'a> Waiter<'a> {
    pub fn new(faults: &'a Faults, timeout: Duration) -> Self {
        Waiter {
            faults,
            timeout,
            deadline: Instant::now() + timeout,
        }
    }

    /// Waits on `changed` until `ready` holds; `waiting` says for what, in a
    /// timeout error. On giving up, `withdraw` runs under the same lock, so
    /// that no other rank picks up what this one leaves behind (its buffers
    /// are about to be released).
    pub fn until<'m, T>(
        &self,
        mutex: &'m Mutex<T>,
        changed: &Condvar,
        mut ready: impl FnMut(&mut T) -> bool,
        waiting: impl FnOnce(&T) -> String,
        withdraw: impl FnOnce(&mut T),
    ) -> Result<MutexGuard<'m, T>> {
        let mut guard = lock(mutex);
        let failed = loop {
            if ready(&mut guard) {
                return Ok(guard);
            }
            if let Some(rank) = self.faults.first_failed() {
                break Some(rank);
            }
            let now = Instant::now();
            if now >= self.deadline {
                break None;
            }
            let slice = POLL.min(self.deadline - now);
            guard = changed
                .wait_timeout(guard, slice)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        };
        let error = match failed {
            Some(rank) => Error::PeerFailed(rank),
            None => Error::Timeout {
                after: self.timeout,
                waiting: waiting(&guard),
            },
        };
        withdraw(&mut guard);
        Err(error)
    }
}

/// Where ranks meet: the `n` ranks of a team each bring a value to a meeting
/// named by a key, and each leaves with all of them, in team order. A meeting
/// is used once; the last rank to leave removes it.
pub(crate) struct Hub<T> {
    meetings: Mutex<HashMap<MeetingKey, Meeting<T>>>,
    changed: Condvar,
}

/// What the meeting is for (`"allgather"`, `"barrier"`...), the team, and
/// the how-manieth such meeting of the team it is.
pub(crate) type MeetingKey = (&'static str, Team, u64);

struct Meeting<T> {
    parts: Vec<Option<T>>,
    all: Option<Arc<Vec<T>>>,
    left: usize,
}

impl<T> Default for Hub<T> {
    fn default() -> Self {
        Hub {
            meetings: Mutex::new(HashMap::new()),
            changed: Condvar::new(),
        }
    }
}

impl<T: Clone> Hub<T> {
    /// Brings `part` to the meeting `key` as team member `position` and waits
    /// for the others.
    pub fn meet(
        &self,
        key: MeetingKey,
        position: usize,
        part: T,
        waiter: &Waiter,
    ) -> Result<Arc<Vec<T>>> {
        let n = key.1.len();
        {
            let mut meetings = lock(&self.meetings);
            let meeting = meetings.entry(key.clone()).or_insert_with(|| Meeting {
                parts: vec![None; n],
                all: None,
                left: 0,
            });
            meeting.parts[position] = Some(part);
            if meeting.parts.iter().all(Option::is_some) {
                let parts = meeting.parts.iter_mut().map(|part| part.take().unwrap());
                meeting.all = Some(Arc::new(parts.collect()));
                self.changed.notify_all();
            }
        }
        let mut meetings = waiter.until(
            &self.meetings,
            &self.changed,
            |meetings| meetings[&key].all.is_some(),
            |meetings| {
                let missing: Vec<usize> = key
                    .1
                    .ranks()
                    .iter()
                    .zip(&meetings[&key].parts)
                    .filter(|(_, part)| part.is_none())
                    .map(|(&rank, _)| rank)
                    .collect();
                format!(
                    "for ranks {missing:?} to join {} #{} of team {}",
                    key.0, key.2, key.1
                )
            },
            |meetings| {
                // Incomplete, so nobody took the parts: take this one back.
                let meeting = meetings.get_mut(&key).unwrap();
                meeting.parts[position] = None;
                if meeting.parts.iter().all(Option::is_none) {
                    meetings.remove(&key);
                }
            },
        )?;
        let meeting = meetings.get_mut(&key).unwrap();
        let all = meeting.all.clone().unwrap();
        meeting.left += 1;
        if meeting.left == n {
            meetings.remove(&key);
        }
        Ok(all)
    }
}
