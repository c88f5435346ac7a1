//! A world whose calls' failures stay with them: [`World`] wraps the
//! runtime's world, whose errors are sticky (a failed rank's world fails
//! every later run), and, after a call whose ranks failed, starts a world of
//! threads anew with the same settings, so that the next call runs on
//! healthy ranks. What cannot be started anew is closed, and says why: a
//! world left with a rank's thread running its program by an interrupted
//! call ([`hir_runtime::interrupt`]), or one whose restart failed. A rank
//! of a job of processes keeps its failure (the job's failure is every
//! rank's), as does a world after a call enqueued on caller streams (its
//! failure may show only in a later call).

use crate::compile::{Array, Compiled, Failure};
use hir_runtime::bootstrap::KeyValueStore;
use hir_runtime::world::Config;
use hir_runtime::{Backend, cuda};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

pub struct World {
    /// The runtime's world, locked for a call, or why there is none.
    runtime: Mutex<Result<hir_runtime::World, String>>,
    /// How a failed world is started again; `None` when it is not.
    restart: Option<Config>,
    backend: Backend,
    local_ranks: Vec<usize>,
}

impl World {
    /// Every rank of `config` as a thread of this process
    /// ([`hir_runtime::World::start`]), started anew after a failed call.
    pub fn start(config: &Config) -> hir_runtime::error::Result<World> {
        let runtime = hir_runtime::World::start(config)?;
        Ok(World::of(runtime, Some(config.clone())))
    }

    /// Rank `rank` of a job of processes meeting at `store`
    /// ([`hir_runtime::World::process`]): its failures stay.
    pub fn process(
        config: &Config,
        rank: usize,
        local_device: usize,
        store: Arc<dyn KeyValueStore>,
    ) -> hir_runtime::error::Result<World> {
        let runtime = hir_runtime::World::process(config, rank, local_device, store)?;
        Ok(World::of(runtime, None))
    }

    fn of(runtime: hir_runtime::World, restart: Option<Config>) -> World {
        World {
            backend: runtime.backend(),
            local_ranks: runtime.local_ranks(),
            runtime: Mutex::new(Ok(runtime)),
            restart,
        }
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The global ranks this process runs, in order.
    pub fn local_ranks(&self) -> &[usize] {
        &self.local_ranks
    }

    /// Why the world runs nothing more, if it does not.
    pub fn closed(&self) -> Option<String> {
        self.lock().as_ref().err().cloned()
    }

    /// [`Compiled::run`] on this world's ranks, after the calls of other
    /// threads before it; a failed call's world is started anew (or
    /// closed) before this returns.
    pub fn run(
        &self,
        program: &Compiled,
        ranks: &[usize],
        arrays: &[Vec<Array>],
    ) -> Result<(), Failure> {
        let mut runtime = self.lock();
        let world = runtime
            .as_ref()
            .map_err(|why| Failure::Closed(why.clone()))?;
        let result = program.run(world, ranks, arrays);
        if let Err(Failure::Run(_)) = &result {
            self.recover(&mut runtime, self.restart.as_ref());
        }
        result
    }

    /// [`Compiled::enqueue`] on the caller's CUDA streams (a cuda world
    /// only). A failure keeps the world failed: it may surface in a later
    /// call.
    pub fn enqueue(
        &self,
        program: &Compiled,
        ranks: &[usize],
        arrays: &[Vec<Array>],
        streams: &[cuda::CallerStream],
    ) -> Result<(), Failure> {
        let mut runtime = self.lock();
        let result = match runtime
            .as_ref()
            .map_err(|why| Failure::Closed(why.clone()))?
        {
            hir_runtime::World::Cuda(world) => program.enqueue(world, ranks, arrays, streams),
            hir_runtime::World::Cpu(_) => Err(Failure::Usage(
                "CUDA streams were given, but this world runs on the cpu backend".into(),
            )),
        };
        if let Err(Failure::Run(_)) = &result {
            self.recover(&mut runtime, None);
        }
        result
    }

    /// After a failed call: closes a world the runtime closed, else starts
    /// it anew from `restart` (the old one dropped first, so that its GPUs
    /// are free), if given.
    fn recover(&self, runtime: &mut Result<hir_runtime::World, String>, restart: Option<&Config>) {
        let closed = runtime.as_ref().ok().and_then(hir_runtime::World::closed);
        if let Some(why) = closed {
            *runtime = Err(why);
            return;
        }
        let Some(config) = restart else {
            return;
        };
        drop(std::mem::replace(runtime, Err("not started yet".into())));
        *runtime = hir_runtime::World::start(config)
            .map_err(|error| format!("a call failed, and starting its world anew failed: {error}"));
    }

    fn lock(&self) -> MutexGuard<'_, Result<hir_runtime::World, String>> {
        self.runtime.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
