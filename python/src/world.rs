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
//! run) run one after another, on the world's lock. What a failed or
//! interrupted call leaves is `hir::World`'s: a world of threads started
//! anew, or closed (a rank left running its program), saying why; a rank
//! of a job of processes stays failed: its job has.

use crate::dlpack::{Array, Memory};
use crate::store::TorchStore;
use anyhow::{Result, anyhow, bail};
use hir::compile::{Compiled, Failure};
use hir_runtime::Backend;
use hir_runtime::bootstrap::{Env, KeyValueStore, ProcessGroup};
use hir_runtime::world::Config;
use std::sync::Arc;
use std::time::Duration;

pub struct World {
    runtime: hir::World,
    pub backend: Backend,
    pub num_streams: usize,
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
        let runtime = hir::World::start(&config)
            .map_err(|error| anyhow!("cannot start the runtime: {error}"))?;
        Ok(World {
            runtime,
            backend,
            num_streams,
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
        let started = hir::World::process(&config, job.rank, job.local_rank, job.store.clone());
        let runtime = started.map_err(|error| {
            // The others stop waiting for this rank at once.
            let why = format!("cannot start the {} runtime: {error}", backend.name());
            let _ = job.store.post_failure(job.rank, "start", &why);
            anyhow!("rank {}: {why}", job.rank)
        })?;
        Ok(World {
            runtime,
            backend,
            num_streams,
            job: Some(job),
        })
    }

    /// Every rank of the world, of this process or not.
    pub fn size(&self) -> usize {
        match &self.job {
            Some(job) => job.world_size,
            None => self.runtime.local_ranks().len(),
        }
    }

    /// The ranks this process runs, in order.
    pub fn local_ranks(&self) -> Vec<usize> {
        self.runtime.local_ranks().to_vec()
    }

    /// Why the world runs nothing more, if it does not.
    pub fn closed(&self) -> Option<String> {
        self.runtime.closed()
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
        match streams {
            None => self.runtime.run(program, &ranks, &arrays),
            Some(streams) => self.runtime.enqueue(program, &ranks, &arrays, streams),
        }
    }

    /// Tells the other ranks of this process's job, if it is one, that its
    /// call failed with `message`, so that they stop waiting for it now
    /// rather than at their timeouts. The job stays failed.
    pub fn post_failure(&self, message: &str) {
        if let Some(job) = &self.job {
            let _ = job.store.post_failure(job.rank, "call", message);
        }
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
