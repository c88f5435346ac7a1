//! How the ranks of the cuda backend exchange bytes on the host (the NCCL
//! unique id, CUDA-IPC exports) and learn of each other's failures.
//!
//! [`Bootstrap`] is the boundary a launcher fills: [`ThreadBootstrap`] when
//! the ranks are threads of one process (the cuda `World`); the process
//! group (`crate::bootstrap`) provides one over its TCP store, exchanging the
//! same bytes. It lives in the core so that neither `cuda/` nor `bootstrap/`
//! needs the other for it. A `cuda` receive's destination does not go through it: it travels
//! through shared memory (`mailbox.rs`), whose waits ask
//! [`Bootstrap::check_failed`] now and then.

use crate::core::sync::{Faults, Hub, Waiter};
use crate::error::{Error, Result};
use crate::ops::Team;
use std::sync::Arc;
use std::time::Duration;

/// What the ranks of a team use to reach each other before (and besides)
/// the GPU: every wait is bounded by the bootstrap's timeout and gives up
/// once a rank has failed.
pub trait Bootstrap: Send + Sync {
    /// Whether every rank runs in this process (then device pointers and
    /// contexts can be exchanged as they are, rather than as IPC handles).
    fn same_process(&self) -> bool;

    /// How long a wait for the other ranks lasts before it is an error.
    fn timeout(&self) -> Duration;

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

    /// The error of a rank that gives up because another failed, if one
    /// has (or the bootstrap itself is lost). Waits outside the bootstrap
    /// call it every few milliseconds, not on every poll: it may cost a
    /// round trip.
    fn check_failed(&self) -> Result<()>;
}

/// The bootstrap of ranks that are threads of one process.
pub(crate) struct ThreadBootstrap {
    hub: Hub<Vec<u8>>,
    faults: Arc<Faults>,
    timeout: Duration,
}

impl ThreadBootstrap {
    pub fn new(faults: Arc<Faults>, timeout: Duration) -> ThreadBootstrap {
        ThreadBootstrap {
            hub: Hub::default(),
            faults,
            timeout,
        }
    }
}

impl Bootstrap for ThreadBootstrap {
    fn same_process(&self) -> bool {
        true
    }

    fn timeout(&self) -> Duration {
        self.timeout
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

    fn check_failed(&self) -> Result<()> {
        match self.faults.first_failed() {
            Some(rank) => Err(Error::PeerFailed(rank)),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_failed_names_the_first_failed_rank() {
        let faults = Arc::new(Faults::new(3));
        let bootstrap = ThreadBootstrap::new(faults.clone(), Duration::from_secs(5));
        assert_eq!(bootstrap.timeout(), Duration::from_secs(5));
        assert_eq!(bootstrap.check_failed(), Ok(()));
        faults.fail(2, "test", Error::Invalid("first".into()));
        faults.fail(0, "test", Error::Invalid("then".into()));
        assert_eq!(bootstrap.check_failed(), Err(Error::PeerFailed(2)));
    }
}
