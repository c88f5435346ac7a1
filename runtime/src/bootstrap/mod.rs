//! Running one rank per process: where the ranks find each other, exchange
//! bytes, check that they agree, and learn of each other's failures.
//!
//! - [`store`]: a small TCP key-value store ([`StoreServer`],
//!   [`StoreClient`]) that also carries failures; [`auth`]: the job's
//!   secret that every connection proves; [`protocol`]: its messages.
//! - [`Env`]: the rank's place, from `RANK`, `WORLD_SIZE`, `LOCAL_RANK`,
//!   `MASTER_ADDR`, `MASTER_PORT` (as torchrun sets them).
//! - [`ProcessGroup`]: this process's rank joined to the others through the
//!   store (hosted by rank 0's process unless a launcher hosts it).
//! - [`StoreBootstrap`]: either backend's [`Bootstrap`] over a
//!   [`KeyValueStore`]: this store, or a job's `torch.distributed` one.
//! - [`watchdog`]: the thread that turns a hang or a peer's failure into
//!   this rank's error and keeps the process from hanging.

mod admission;
pub mod auth;
mod client;
#[cfg(test)]
mod flood_tests;
#[cfg(test)]
pub(crate) mod process_tests;
pub mod protocol;
#[cfg(test)]
mod security_tests;
pub mod store;
#[cfg(test)]
mod tamper_tests;
#[cfg(test)]
pub(crate) mod tests;
pub mod watchdog;

pub use crate::core::store::{Got, KeyValueStore, StoreBootstrap};
pub use auth::{SECRET_VAR, Secret};
pub use client::Member;
pub use store::{Failure, StoreClient, StoreServer};
pub use watchdog::{Inflight, Stuck, Watchdog, WatchdogConfig, Watched};

use crate::core::bootstrap::Bootstrap;
use crate::error::{Error, Result};
use crate::ops::Team;
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

/// Set by a launcher that hosts the store itself (as torchrun's
/// `TORCHELASTIC_USE_AGENT_STORE`): rank 0 then connects like the others.
pub const AGENT_STORE: &str = "HIR_AGENT_STORE";
/// Overrides the store's port (default `MASTER_PORT`, or `MASTER_PORT + 1`
/// under torchrun, whose agent holds `MASTER_PORT` with its own store).
pub const STORE_PORT: &str = "HIR_STORE_PORT";

/// A launcher's names for a rank's place: its rank, the number of ranks,
/// and its index among the ranks of its host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RankVars {
    pub launcher: &'static str,
    pub rank: &'static str,
    pub world_size: &'static str,
    pub local_rank: &'static str,
}

/// The launchers whose rank variables [`Env`] reads, the first one whose
/// rank or world size is set winning: torchrun's (also set by hand and by
/// HIR's own launcher), then Open MPI's (an `mpirun` inside a Slurm
/// allocation sees Slurm's too, for the allocation), then Slurm's (`srun`).
pub const LAUNCHERS: [RankVars; 3] = [
    RankVars {
        launcher: "torchrun",
        rank: "RANK",
        world_size: "WORLD_SIZE",
        local_rank: "LOCAL_RANK",
    },
    RankVars {
        launcher: "Open MPI",
        rank: "OMPI_COMM_WORLD_RANK",
        world_size: "OMPI_COMM_WORLD_SIZE",
        local_rank: "OMPI_COMM_WORLD_LOCAL_RANK",
    },
    RankVars {
        launcher: "Slurm",
        rank: "SLURM_PROCID",
        world_size: "SLURM_NTASKS",
        local_rank: "SLURM_LOCALID",
    },
];

impl RankVars {
    /// The launcher that started this process as a rank, read through `var`.
    pub fn of(var: impl Fn(&str) -> Option<String>) -> Option<RankVars> {
        LAUNCHERS
            .into_iter()
            .find(|vars| var(vars.rank).is_some() || var(vars.world_size).is_some())
    }

    /// The launcher that started this process as a rank, if one did.
    pub fn from_env() -> Option<RankVars> {
        RankVars::of(|name| std::env::var(name).ok())
    }
}

/// Where this process's rank is, from the environment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Env {
    pub rank: usize,
    pub world_size: usize,
    /// The GPU of this host the rank runs on (`LOCAL_RANK`, default `rank`).
    pub local_rank: usize,
    /// Where the store is (`MASTER_ADDR`, default `127.0.0.1`).
    pub master_addr: String,
    pub store_port: u16,
    /// Whether the launcher hosts the store (rank 0 then does not).
    pub agent_store: bool,
    /// The job's secret (`HIR_JOB_SECRET`; [`Secret::none`] without it, on
    /// a loopback `MASTER_ADDR` only).
    pub secret: Secret,
}

impl Env {
    /// This process's rank from `RANK` and `WORLD_SIZE` (or Open MPI's or
    /// Slurm's, see [`LAUNCHERS`]; and the other variables); `None` when no
    /// launcher's are set.
    pub fn from_env() -> Result<Option<Env>> {
        Env::from_vars(|name| std::env::var(name).ok())
    }

    /// As [`Env::from_env`], reading the variables through `var`.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Option<Env>> {
        let Some(names) = RankVars::of(&var) else {
            return Ok(None);
        };
        let (rank, world_size) = match (var(names.rank), var(names.world_size)) {
            (Some(rank), Some(world_size)) => (rank, world_size),
            (rank, _) => {
                let (set, unset) = if rank.is_some() {
                    (names.rank, names.world_size)
                } else {
                    (names.world_size, names.rank)
                };
                return Err(Error::Invalid(format!(
                    "{set} is set but {unset} is not: a rank needs both"
                )));
            }
        };
        let number = |name: &str, value: &str| {
            value.trim().parse::<usize>().map_err(|_| {
                Error::Invalid(format!(
                    "{name} must be a non-negative integer, not '{value}'"
                ))
            })
        };
        let rank = number(names.rank, &rank)?;
        let world_size = number(names.world_size, &world_size)?;
        if world_size > protocol::MAX_RANKS {
            return Err(Error::Invalid(format!(
                "{} {world_size} is more ranks than a job may have ({})",
                names.world_size,
                protocol::MAX_RANKS
            )));
        }
        if rank >= world_size {
            return Err(Error::Invalid(format!(
                "{} {rank} is not below {} {world_size}",
                names.rank, names.world_size
            )));
        }
        let local_rank = match var(names.local_rank) {
            Some(value) => number(names.local_rank, &value)?,
            None => rank,
        };
        let master_addr = var("MASTER_ADDR").unwrap_or_else(|| "127.0.0.1".into());
        let port = |name: &str, value: &str| {
            value
                .trim()
                .parse::<u16>()
                .map_err(|_| Error::Invalid(format!("{name} must be a TCP port, not '{value}'")))
        };
        let torchrun = var("TORCHELASTIC_USE_AGENT_STORE").is_some_and(|value| value == "True");
        let store_port = match (var(STORE_PORT), var("MASTER_PORT")) {
            (Some(value), _) => port(STORE_PORT, &value)?,
            (None, Some(value)) => {
                let master = port("MASTER_PORT", &value)?;
                if torchrun {
                    master.checked_add(1).ok_or_else(|| {
                        Error::Invalid("MASTER_PORT 65535 leaves no port for the store".into())
                    })?
                } else {
                    master
                }
            }
            (None, None) if world_size == 1 => 0,
            (None, None) => {
                return Err(Error::Invalid(
                    "MASTER_PORT is not set: the ranks need a port to meet on".into(),
                ));
            }
        };
        let secret = match var(SECRET_VAR) {
            Some(value) => Secret::parse(&value)?,
            None if is_loopback(&master_addr) => Secret::none(),
            None => {
                return Err(Error::Invalid(format!(
                    "{SECRET_VAR} is not set, and MASTER_ADDR {master_addr} is not a loopback \
                     address: a store others can reach needs the job's secret (set \
                     {SECRET_VAR} to the same random value for every rank, e.g. `export \
                     {SECRET_VAR}=$(openssl rand -hex 32)` before torchrun)"
                )));
            }
        };
        Ok(Some(Env {
            rank,
            world_size,
            local_rank,
            master_addr,
            store_port,
            agent_store: var(AGENT_STORE).is_some_and(|value| value == "1"),
            secret,
        }))
    }

    /// This rank as a member of the job, for the store.
    pub fn member(&self) -> Member {
        Member::new(self.secret.clone(), self.world_size, Some(self.rank))
    }

    /// `host:port` of the store.
    pub fn store_addr(&self) -> String {
        if self.master_addr.contains(':') {
            format!("[{}]:{}", self.master_addr, self.store_port)
        } else {
            format!("{}:{}", self.master_addr, self.store_port)
        }
    }
}

/// Whether `addr` is `localhost` or a loopback IP address.
pub fn is_loopback(addr: &str) -> bool {
    let addr = addr.trim_start_matches('[').trim_end_matches(']');
    addr.eq_ignore_ascii_case("localhost")
        || addr
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// This process's rank, joined to the others through the store.
pub struct ProcessGroup {
    env: Env,
    timeout: Duration,
    client: Arc<StoreClient>,
    /// Rank 0's process hosts the server unless a launcher does.
    server: Option<StoreServer>,
    /// The exchanges of [`ProcessGroup::all_gather`] so far.
    exchanges: std::sync::atomic::AtomicU64,
}

impl ProcessGroup {
    /// Joins the ranks of `env`: rank 0 starts the store (unless the
    /// launcher hosts it) and every rank connects, waiting up to `timeout`.
    /// Rank 0 binds the store to `MASTER_ADDR` (an address of its host):
    /// only that interface listens.
    pub fn join(env: Env, timeout: Duration) -> Result<ProcessGroup> {
        let server = if env.rank == 0 && !env.agent_store {
            if env.secret.is_none() {
                let mut stderr = std::io::stderr().lock();
                let _ = writeln!(
                    stderr,
                    "warning: {SECRET_VAR} is not set: the store at {} lets any local user \
                     in; set it to the same random value for every rank",
                    env.store_addr()
                );
            }
            let server = StoreServer::bind(
                env.store_addr().as_str(),
                env.secret.clone(),
                env.world_size,
            )
            .map_err(|error| {
                let hint = match error.kind() {
                    std::io::ErrorKind::AddrInUse => {
                        " (another process, maybe another job, holds the port)"
                    }
                    std::io::ErrorKind::AddrNotAvailable => {
                        " (MASTER_ADDR must be an address of rank 0's host)"
                    }
                    _ => "",
                };
                Error::Io(format!(
                    "rank 0 cannot host the store on {}{hint}: {error}",
                    env.store_addr()
                ))
            })?;
            Some(server)
        } else {
            None
        };
        let addr = match &server {
            Some(server) => server.addr().to_string(),
            None => env.store_addr(),
        };
        let host = (!env.agent_store).then_some(0);
        let client = StoreClient::connect(&addr, &env.member(), host, timeout)?;
        Ok(ProcessGroup {
            env,
            timeout,
            client: Arc::new(client),
            server,
            exchanges: Default::default(),
        })
    }

    pub fn env(&self) -> &Env {
        &self.env
    }

    pub fn rank(&self) -> usize {
        self.env.rank
    }

    pub fn world_size(&self) -> usize {
        self.env.world_size
    }

    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    pub fn client(&self) -> &Arc<StoreClient> {
        &self.client
    }

    /// A second connection to the store; with a `heartbeat`, for a
    /// watchdog (see [`StoreClient::connect_watched`]).
    pub fn connect(&self, heartbeat: Option<Duration>) -> Result<StoreClient> {
        StoreClient::connect_watched(
            self.client.addr(),
            &self.env.member(),
            self.client_host(),
            heartbeat,
            self.timeout,
        )
    }

    fn client_host(&self) -> Option<usize> {
        (!self.env.agent_store).then_some(0)
    }

    /// The store, as either backend meets through it.
    pub fn store(&self) -> Arc<dyn KeyValueStore> {
        self.client.clone()
    }

    /// The cuda backend's bootstrap over this store.
    pub fn bootstrap(&self) -> Arc<StoreBootstrap> {
        Arc::new(StoreBootstrap::new(self.store(), "nccl", self.timeout))
    }

    /// Every rank brings `bytes` to the exchange named `name` and gets every
    /// rank's, in rank order.
    pub fn all_gather(&self, name: &str, bytes: Vec<u8>) -> Result<Vec<Vec<u8>>> {
        self.all_gather_within(name, bytes, self.timeout)
    }

    /// As [`ProcessGroup::all_gather`], waiting up to `timeout`.
    pub fn all_gather_within(
        &self,
        name: &str,
        bytes: Vec<u8>,
        timeout: Duration,
    ) -> Result<Vec<Vec<u8>>> {
        let number = self
            .exchanges
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let team = self.team();
        StoreBootstrap::new(self.store(), &format!("group/{name}"), timeout).all_gather(
            &team,
            number,
            self.env.rank,
            bytes,
        )
    }

    /// Every rank waits for the others.
    pub fn barrier(&self, name: &str) -> Result<()> {
        self.all_gather(name, Vec::new()).map(drop)
    }

    fn team(&self) -> Team {
        let ranks: Vec<i64> = (0..self.env.world_size as i64).collect();
        Team::new(&ranks, self.env.world_size).expect("0..world_size is a team")
    }

    /// Tells the others that this rank failed in `op` (best effort: the
    /// store may be what failed).
    pub fn fail(&self, op: &str, error: &Error) {
        let _ = self
            .client
            .fail(Failure::failed(self.env.rank, op, &error.to_string()));
    }

    /// Starts the watchdog of `watched`, with a connection of its own.
    pub fn watch(&self, watched: Arc<dyn Watched>, config: WatchdogConfig) -> Result<Watchdog> {
        let client = self.connect(Some(config.heartbeat))?;
        Watchdog::start(watched, client, config)
            .map_err(|error| Error::Io(format!("cannot start the watchdog: {error}")))
    }

    /// Says this rank is done: its connections (its watchdog's too) may
    /// close from now on without that being a failure.
    pub fn goodbye(&self) {
        let _ = self.client.goodbye();
    }

    /// Leaves the group: says goodbye (this rank's connections may close),
    /// and, where this process hosts the store, keeps it up until every rank
    /// said goodbye or failed (bounded by the timeout). The failures the
    /// store knew of, the cause first.
    pub fn finish(&self) -> Vec<Failure> {
        let _ = self.client.goodbye();
        match &self.server {
            Some(server) => {
                server.wait_done(self.env.world_size, self.timeout);
                server.failures()
            }
            None => self.client.failures(Duration::ZERO).unwrap_or_default(),
        }
    }

    /// The GPU of this process's rank (`LOCAL_RANK`): its index among the
    /// host's GPUs.
    pub fn local_rank(&self) -> usize {
        self.env.local_rank
    }
}
