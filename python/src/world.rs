//! The ranks this Python process runs a program on: its world. Either all
//! the ranks as threads of this process (`hir.init`, one rank by default),
//! or this process's one rank of a job whose ranks are processes, on either
//! backend, meeting at a key-value store: HIR's own
//! (`hir.init_from_env`: `hir_runtime::bootstrap::ProcessGroup`), or the
//! job's `torch.distributed` store (`hir.init_from_torch`: [`TorchStore`]).
//!
//! A call runs every rank this process holds with its arrays, through the
//! backend's `World::run` (a thread per rank, which waits for the rank's
//! work), or, given a caller's CUDA stream per rank (torch's current
//! stream), enqueued on those streams without waiting (`World::run_on`):
//! the arrays' memory is the program's arguments, registered with the rank
//! so that its views are checked against them; nothing is copied.
//!
//! Calls from several Python threads (each releases the GIL while its ranks
//! run) run one after another, on the world's lock. A call whose ranks
//! failed leaves a world of threads as it found it: after a failed call
//! that waited for its work (every call but one enqueued on caller
//! streams), the runtime's world, whose failure is sticky, is started anew
//! with the same settings before the next call runs. A rank of a job of
//! processes stays failed: its job has.

use crate::dlpack::{Array, Memory};
use crate::store::TorchStore;
use anyhow::{Result, anyhow, bail};
use hir::compile::{Compiled, Failure};
use hir_runtime::Backend;
use hir_runtime::bootstrap::{Env, KeyValueStore, ProcessGroup};
use hir_runtime::world::Config;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

pub struct World {
    /// The runtime's world, locked for a call; why not, once a failed world
    /// of threads could not be started anew (`restart`).
    runtime: Mutex<Result<hir_runtime::World, String>>,
    pub backend: Backend,
    pub num_streams: usize,
    local_ranks: Vec<usize>,
    /// How a world of threads is started (again after a failed call); `None`
    /// for a rank of a job of processes.
    config: Option<Config>,
    /// The job this process is one rank of, if its ranks are processes.
    job: Option<Job>,
}

/// This process's rank of a job whose ranks are processes.
struct Job {
    rank: usize,
    world_size: usize,
    /// The GPU of this host the rank runs on.
    local_rank: usize,
    /// Where the ranks meet; a failed call posts its failure there.
    store: Arc<dyn KeyValueStore>,
    /// HIR's own store's group, when the ranks met there: left on drop.
    group: Option<Arc<ProcessGroup>>,
}

impl World {
    /// `ranks` ranks as threads of this process.
    pub fn threads(
        backend: Backend,
        ranks: usize,
        num_streams: usize,
        timeout: Duration,
    ) -> Result<World> {
        let config = Config {
            timeout,
            ..Config::new(backend, ranks, num_streams)
        };
        let runtime = hir_runtime::World::start(&config)
            .map_err(|error| anyhow!("cannot start the runtime: {error}"))?;
        Ok(World {
            local_ranks: runtime.local_ranks(),
            runtime: Mutex::new(Ok(runtime)),
            backend,
            num_streams,
            config: Some(config),
            job: None,
        })
    }

    /// This process's rank of the job `env` describes (`RANK`,
    /// `WORLD_SIZE`, `MASTER_ADDR`, `MASTER_PORT`, ...), meeting the others
    /// at HIR's own store.
    pub fn process(
        env: Env,
        backend: Backend,
        num_streams: usize,
        timeout: Duration,
    ) -> Result<World> {
        let rank = env.rank;
        let group = ProcessGroup::join(env, timeout)
            .map_err(|error| anyhow!("rank {rank}: joining the job: {error}"))?;
        let group = Arc::new(group);
        let job = Job {
            rank,
            world_size: group.world_size(),
            local_rank: group.local_rank(),
            store: group.store(),
            group: Some(group),
        };
        World::job(job, backend, num_streams, timeout)
    }

    /// Rank `rank` of `world_size` ranks in processes that meet at the
    /// job's `torch.distributed` store, on GPU `local_rank` for cuda.
    pub fn over_torch_store(
        store: TorchStore,
        (rank, world_size, local_rank): (usize, usize, usize),
        backend: Backend,
        num_streams: usize,
        timeout: Duration,
    ) -> Result<World> {
        let job = Job {
            rank,
            world_size,
            local_rank,
            store: Arc::new(store),
            group: None,
        };
        World::job(job, backend, num_streams, timeout)
    }

    fn job(job: Job, backend: Backend, num_streams: usize, timeout: Duration) -> Result<World> {
        let config = Config {
            timeout,
            ..Config::new(backend, job.world_size, num_streams)
        };
        let started =
            hir_runtime::World::process(&config, job.rank, job.local_rank, job.store.clone());
        let runtime = started.map_err(|error| {
            // The others stop waiting for this rank at once.
            let why = format!("cannot start the {} runtime: {error}", backend.name());
            let _ = job.store.post_failure(job.rank, "start", &why);
            anyhow!("rank {}: {why}", job.rank)
        })?;
        Ok(World {
            local_ranks: runtime.local_ranks(),
            runtime: Mutex::new(Ok(runtime)),
            backend,
            num_streams,
            config: None,
            job: Some(job),
        })
    }

    /// Every rank of the world, of this process or not.
    pub fn size(&self) -> usize {
        match &self.job {
            Some(job) => job.world_size,
            None => self.local_ranks.len(),
        }
    }

    /// The ranks this process runs, in order.
    pub fn local_ranks(&self) -> Vec<usize> {
        self.local_ranks.clone()
    }

    /// Runs `program` on every rank of this process, rank `local_ranks()[i]`
    /// on `arrays[i]`, after checking that each array lives where its rank
    /// runs: until the work is done (`hir::compile`'s run), or, with
    /// `streams` on the cuda backend, enqueued on the caller's stream
    /// `streams[i]` (`hir::compile`'s enqueue). Waits for the calls of
    /// other threads before it.
    pub fn run(
        &self,
        program: &Compiled,
        arrays: &[Vec<Array>],
        streams: Option<&[usize]>,
    ) -> Result<(), Failure> {
        let ranks = self.local_ranks();
        for (&rank, arrays) in ranks.iter().zip(arrays) {
            self.check_memory(program, rank, arrays)
                .map_err(Failure::Usage)?;
        }
        let arrays: Vec<Vec<hir::compile::Array>> = arrays
            .iter()
            .map(|arrays| {
                arrays
                    .iter()
                    .map(|array| hir::compile::Array {
                        address: array.address,
                        shape: array.shape.clone(),
                        dtype: array.dtype,
                    })
                    .collect()
            })
            .collect();
        let mut runtime = self.runtime.lock().unwrap_or_else(PoisonError::into_inner);
        let world = match &*runtime {
            Ok(world) => world,
            Err(why) => {
                return Err(Failure::Usage(format!(
                    "this world failed, and starting it again failed: {why}; make a new one \
                     with hir.init"
                )));
            }
        };
        let result = match (world, streams) {
            (_, None) => program.run(world, &ranks, &arrays),
            (hir_runtime::World::Cuda(world), Some(streams)) => {
                program.enqueue(world, &ranks, &arrays, streams)
            }
            (hir_runtime::World::Cpu(_), Some(_)) => Err(Failure::Usage(
                "CUDA streams were given, but this world runs on the cpu backend".into(),
            )),
        };
        if let (Err(Failure::Run(_)), None, None) = (&result, streams, &self.job) {
            self.restart(&mut runtime);
        }
        result
    }

    /// Tells the other ranks of this process's job, if it is one, that its
    /// call failed with `message`, so that they stop waiting for it now
    /// rather than at their timeouts. The job stays failed.
    pub fn post_failure(&self, message: &str) {
        if let Some(job) = &self.job {
            let _ = job.store.post_failure(job.rank, "call", message);
        }
    }

    /// Starts a failed world of threads anew (the old one dropped first, so
    /// that its GPUs are free), so that the next call does not inherit the
    /// failure; a rank of a job of processes keeps it.
    fn restart(&self, runtime: &mut Result<hir_runtime::World, String>) {
        let Some(config) = &self.config else {
            return;
        };
        drop(std::mem::replace(runtime, Err("not started yet".into())));
        *runtime = hir_runtime::World::start(config).map_err(|error| error.to_string());
    }

    /// Whether `arrays` are in the memory `rank` of this world runs on.
    fn check_memory(
        &self,
        program: &Compiled,
        rank: usize,
        arrays: &[Array],
    ) -> Result<(), String> {
        let backend = self.backend;
        let memory = match backend {
            Backend::Cpu => Memory::Host,
            Backend::Cuda => Memory::Cuda(self.ordinal(rank)),
        };
        for (array, (what, _)) in arrays.iter().zip(program.parameters()) {
            if array.memory != memory {
                return Err(format!(
                    "rank {rank}: {what} of {} is in {}, but the {} backend runs rank {rank} on {memory}",
                    program.signature.name,
                    array.memory,
                    backend.name()
                ));
            }
        }
        Ok(())
    }

    /// The GPU of this host that `rank` runs on.
    fn ordinal(&self, rank: usize) -> usize {
        match &self.job {
            Some(job) => job.local_rank,
            None => rank,
        }
    }
}

impl Drop for World {
    fn drop(&mut self) {
        if let Some(group) = self.job.as_ref().and_then(|job| job.group.as_ref()) {
            group.goodbye();
            group.finish();
        }
    }
}

/// The world's environment from a mapping of variable names (the process's
/// environment, or what `hir.init_from_torch` made of torch.distributed).
pub fn env(var: impl Fn(&str) -> Option<String>) -> Result<Env> {
    match Env::from_vars(var) {
        Ok(Some(env)) => Ok(env),
        Ok(None) => bail!("RANK and WORLD_SIZE are not set: no job to join"),
        Err(error) => Err(anyhow!("{error}")),
    }
}
