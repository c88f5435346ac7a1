//! How the ranks of the cuda backend exchange bytes on the host: the NCCL
//! unique id, CUDA-IPC exports, and each `cuda` receive's destination.
//!
//! [`Bootstrap`] is the boundary a launcher fills: [`ThreadBootstrap`] when
//! the ranks are threads of one process (this crate's `World`); a
//! multi-process launcher provides one over its TCP store, exchanging the same
//! bytes.

use crate::cpu::sync::{Faults, Hub, Waiter};
use crate::error::Result;
use crate::lock;
use crate::ops::Team;
use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// Which message: the team, the sender's and receiver's positions in it, and
/// the message's number between the two in that direction.
pub type MessageKey = (Team, usize, usize, u64);

/// What the ranks of a team use to reach each other before (and besides)
/// the GPU: every wait is bounded by the bootstrap's timeout and gives up
/// once a rank has failed.
pub trait Bootstrap: Send + Sync {
    /// Whether every rank runs in this process (then device pointers and
    /// contexts can be exchanged as they are, rather than as IPC handles).
    fn same_process(&self) -> bool;

    /// Team member `position` brings `bytes` to the team's `number`-th
    /// exchange and gets every member's, in team order. Blocks until all
    /// have come, a rank failed, or the bootstrap's timeout.
    fn all_gather(
        &self,
        team: &Team,
        number: u64,
        position: usize,
        bytes: Vec<u8>,
    ) -> Result<Vec<Vec<u8>>>;

    /// Leaves `bytes` for the receiver of message `key`; does not block.
    fn put(&self, key: MessageKey, bytes: Vec<u8>) -> Result<()>;

    /// Takes message `key`, waiting until its sender has left it.
    fn take(&self, key: MessageKey) -> Result<Vec<u8>>;
}

/// The bootstrap of ranks that are threads of one process.
pub(crate) struct ThreadBootstrap {
    hub: Hub<Vec<u8>>,
    messages: Mutex<HashMap<MessageKey, Vec<u8>>>,
    arrived: Condvar,
    faults: Arc<Faults>,
    timeout: Duration,
}

impl ThreadBootstrap {
    pub fn new(faults: Arc<Faults>, timeout: Duration) -> ThreadBootstrap {
        ThreadBootstrap {
            hub: Hub::default(),
            messages: Mutex::new(HashMap::new()),
            arrived: Condvar::new(),
            faults,
            timeout,
        }
    }
}

impl Bootstrap for ThreadBootstrap {
    fn same_process(&self) -> bool {
        true
    }

    fn all_gather(
        &self,
        team: &Team,
        number: u64,
        position: usize,
        bytes: Vec<u8>,
    ) -> Result<Vec<Vec<u8>>> {
        let waiter = Waiter::new(&self.faults, self.timeout);
        let all = self.hub.meet(
            ("bootstrap", team.clone(), number),
            position,
            bytes,
            &waiter,
        )?;
        Ok(all.to_vec())
    }

    fn put(&self, key: MessageKey, bytes: Vec<u8>) -> Result<()> {
        lock(&self.messages).insert(key, bytes);
        self.arrived.notify_all();
        Ok(())
    }

    fn take(&self, key: MessageKey) -> Result<Vec<u8>> {
        let waiter = Waiter::new(&self.faults, self.timeout);
        let mut messages = waiter.until(
            &self.messages,
            &self.arrived,
            |messages| messages.contains_key(&key),
            |_| {
                let (team, from, to, number) = &key;
                format!(
                    "for team member {from} to leave message #{number} for member {to} \
                     on team {team}"
                )
            },
            |_| {},
        )?;
        Ok(messages.remove(&key).expect("waited for"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    fn bootstrap(timeout: Duration) -> ThreadBootstrap {
        ThreadBootstrap::new(Arc::new(Faults::new(2)), timeout)
    }

    #[test]
    fn messages_are_taken_once_by_key() {
        let bootstrap = bootstrap(Duration::from_secs(5));
        let team = Team::new(&[0, 1], 2).unwrap();
        std::thread::scope(|scope| {
            let taker = scope.spawn(|| bootstrap.take((team.clone(), 1, 0, 0)));
            bootstrap.put((team.clone(), 1, 0, 1), vec![2]).unwrap();
            bootstrap.put((team.clone(), 1, 0, 0), vec![1]).unwrap();
            assert_eq!(taker.join().unwrap().unwrap(), vec![1]);
        });
        assert_eq!(bootstrap.take((team.clone(), 1, 0, 1)).unwrap(), vec![2]);
        assert!(lock(&bootstrap.messages).is_empty());
    }

    #[test]
    fn a_missing_message_times_out_naming_it() {
        let bootstrap = bootstrap(Duration::from_millis(30));
        let team = Team::new(&[0, 1], 2).unwrap();
        let error = bootstrap.take((team, 0, 1, 3)).unwrap_err();
        assert!(
            matches!(&error, Error::Timeout { waiting, .. }
                if waiting == "for team member 0 to leave message #3 for member 1 on team [0, 1]"),
            "{error}"
        );
    }
}
