//! The cpu backend's launcher side: a [`World`]'s [`Config`], starting its
//! ranks (and what they share), running the program on them, the trace, and
//! stopping the streams when it drops. A world holds every rank as a thread
//! ([`World::new`]), or one rank of a job whose ranks are processes meeting
//! at a key-value store ([`World::process`]).

use super::links::Links;
use super::{CpuDevice, Races, Shared};
use crate::core::rank_threads;
use crate::core::store::KeyValueStore;
use crate::core::sync::Faults;
use crate::device::Device;
use crate::error::{Error, Result, RunError};
use crate::lock;
use crate::trace::Trace;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// How a [`World`] is set up.
#[derive(Clone, Debug)]
pub struct Config {
    pub ranks: usize,
    /// Streams in each rank's pool (`host.stream_from_pool` wraps around it).
    pub num_streams: usize,
    /// How long a collective, transfer, barrier or handle exchange waits for
    /// the other ranks before it fails.
    pub timeout: Duration,
    /// Whether to record a trace of every op (see [`World::write_chrome_trace`]).
    pub trace: bool,
    /// Whether fresh memory is NaN (every byte `0xff`: NaN in f32, bf16 and
    /// f16) instead of zero: `hir_rt_alloc`'s buffers when they are made, and
    /// the collectives' staging buffers. A program that reads what it never
    /// wrote then computes NaN, which a check sees.
    pub poison: bool,
    /// What a data race does (see [`Races`]).
    pub races: Races,
}

impl Config {
    /// `ranks` ranks with `num_streams` pool streams each, a 30 s timeout,
    /// no trace, no poison, races fatal.
    pub fn new(ranks: usize, num_streams: usize) -> Config {
        Config {
            ranks,
            num_streams,
            timeout: Duration::from_secs(30),
            trace: false,
            poison: false,
            races: Races::Fatal,
        }
    }
}

/// The ranks of one process, their streams, and what they share.
pub struct World {
    pub(super) shared: Arc<Shared>,
    pub(super) devices: Vec<Arc<CpuDevice>>,
    calls: rank_threads::Calls,
}

impl World {
    pub fn new(config: Config) -> Result<World> {
        let ranks: Vec<usize> = (0..config.ranks).collect();
        World::start(config, Links::threads(), &ranks)
    }

    /// Rank `rank` of a world of `config.ranks` ranks in as many processes,
    /// which meet at `store`: their collectives and transfers go through it
    /// (see `links.rs`). [`World::run`] runs the one rank.
    pub fn process(config: Config, rank: usize, store: Arc<dyn KeyValueStore>) -> Result<World> {
        if rank >= config.ranks {
            return Err(Error::Invalid(format!(
                "rank {rank} is not in a world of {} ranks",
                config.ranks
            )));
        }
        let links = Links::processes(store, config.timeout);
        World::start(config, links, &[rank])
    }

    fn start(config: Config, links: Links, local_ranks: &[usize]) -> Result<World> {
        if config.ranks == 0 || config.num_streams == 0 {
            return Err(Error::Invalid(format!(
                "a world needs at least one rank and one pool stream, got {} and {}",
                config.ranks, config.num_streams
            )));
        }
        let shared = Arc::new(Shared {
            faults: Faults::new(config.ranks),
            trace: config.trace.then(Trace::default),
            links,
            config,
        });
        let mut world = World {
            shared,
            devices: Vec::with_capacity(local_ranks.len()),
            calls: Default::default(),
        };
        for &rank in local_ranks {
            // On an error, `world` drops: it stops the threads of the ranks
            // started so far.
            let device = CpuDevice::new(rank, world.shared.clone())?;
            world.devices.push(Arc::new(device));
        }
        Ok(world)
    }

    /// The ranks this process runs.
    pub fn ranks(&self) -> usize {
        self.devices.len()
    }

    /// The global ranks this process runs, in order.
    pub fn local_ranks(&self) -> Vec<usize> {
        self.devices.iter().map(|device| device.rank).collect()
    }

    /// The store a rank of a job of processes meets the others at.
    pub fn store(&self) -> Option<&Arc<dyn KeyValueStore>> {
        self.shared.links.store()
    }

    /// Rank `rank`'s device, e.g. to [`enter`] it on a thread of one's own;
    /// `rank` must run in this process.
    pub fn device(&self, rank: usize) -> Arc<dyn Device> {
        self.devices
            .iter()
            .find(|device| device.rank == rank)
            .unwrap_or_else(|| panic!("rank {rank} does not run in this process"))
            .clone()
    }

    /// Runs `body` on one new thread per rank, with that rank entered (so the
    /// C-ABI entries work there), then waits for all the work it enqueued.
    /// Returns each rank's value, or the errors of the ranks that failed
    /// (a panic in `body` is one, in op `launcher`; so is a rank whose
    /// thread cannot start, and the others then give up). Errors are sticky:
    /// once a rank has failed, every later run fails with the same errors.
    /// Runs from several threads run one after another.
    pub fn run<T: Send>(&self, body: impl Fn(&dyn Device) -> T + Sync) -> Result<Vec<T>, RunError> {
        rank_threads::run(
            &self.calls,
            &self.devices,
            "hir-rank",
            &self.shared.faults,
            self.shared.config.timeout,
            |device| Ok(body(device)),
            |device| device.drain(),
        )
    }

    /// Why the world runs nothing more, if it does not: an interrupted run
    /// left a rank's thread running its program.
    pub fn closed(&self) -> Option<String> {
        self.calls.closed()
    }

    /// The errors so far, first one first.
    pub fn errors(&self) -> Option<RunError> {
        let errors = self.shared.faults.errors();
        (!errors.is_empty()).then_some(RunError { errors })
    }

    /// The recorded trace, when [`Config::trace`] is on.
    pub fn trace(&self) -> Option<&Trace> {
        self.shared.trace.as_ref()
    }

    /// Writes the trace as Chrome/Perfetto JSON.
    pub fn write_chrome_trace(&self, path: &Path) -> std::io::Result<()> {
        self.trace()
            .ok_or_else(|| std::io::Error::other("no trace was recorded: set Config::trace"))?
            .write_chrome_trace(path)
    }
}

impl Drop for World {
    fn drop(&mut self) {
        for device in &self.devices {
            device.drain();
        }
        for device in &self.devices {
            for queue in &lock(&device.host).queues {
                queue.stop();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `rank_threads::run_here` (a one-rank world's enqueue on the cuda
    /// backend) runs the work on the calling thread with the rank entered,
    /// and leaves the thread as it was; a failed or panicking work is the
    /// rank's error in `launcher`.
    #[test]
    fn one_rank_runs_on_the_calling_thread() {
        let world = World::new(Config::new(1, 1)).expect("a world");
        let (device, faults) = (&world.devices[0], &world.shared.faults);
        let caller = std::thread::current().id();
        let value = rank_threads::run_here(
            &world.calls,
            device,
            faults,
            |device| {
                assert_eq!(std::thread::current().id(), caller);
                let entered = crate::device::current().map(|entered| entered.rank());
                assert_eq!(entered, Some(device.rank));
                Ok(7)
            },
            |_| {},
        );
        assert_eq!(value.expect("a value"), 7);
        assert!(crate::device::current().is_none());
        let failed = rank_threads::run_here(
            &world.calls,
            device,
            faults,
            |_| -> Result<()> { Err(Error::Invalid("no such thing".into())) },
            |_| {},
        );
        let error = failed.expect_err("the work failed");
        assert_eq!(error.errors[0].op, "launcher");
        assert!(error.to_string().contains("no such thing"), "{error}");

        let world = World::new(Config::new(1, 1)).expect("a world");
        let panicked = rank_threads::run_here(
            &world.calls,
            &world.devices[0],
            &world.shared.faults,
            |_| -> Result<()> { panic!("the work panicked") },
            |_| {},
        );
        let error = panicked.expect_err("the work panicked");
        assert!(error.to_string().contains("the work panicked"), "{error}");
    }
}
