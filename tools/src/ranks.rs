//! What the tools do with a runtime world ([`hir_runtime::World`], one
//! type over either backend): run and time a body per rank number with the
//! tools' errors, capture it as CUDA graphs, and keep their [`Buffer`]s
//! where the backend's kernels read them (host memory for cpu, each rank's
//! GPU for cuda).

use crate::buffer::Buffer;
use anyhow::{Result, anyhow, ensure};
use hir_runtime::world::{Config, Graphs};
use hir_runtime::{Backend, Checks, World};
use std::path::Path;
use std::time::Duration;

/// Starts a world of `ranks` ranks in this process; `timeout` bounds every
/// wait of one rank on the others, and how long the other ranks may run on
/// after one has failed.
pub fn start(
    backend: Backend,
    ranks: usize,
    num_streams: usize,
    trace: bool,
    timeout: Duration,
    checks: Checks,
) -> Result<World> {
    World::start(&Config {
        trace,
        timeout,
        checks,
        ..Config::new(backend, ranks, num_streams)
    })
    .map_err(|error| anyhow!("cannot start the runtime: {error}"))
}

/// A world's ranks as the tools use them.
pub trait Ranks {
    /// Runs `body(rank)` on every rank's thread, with the rank entered, and
    /// waits for the work it enqueued.
    fn run_ranks(&self, body: impl Fn(usize) + Sync) -> Result<()>;

    /// [`Ranks::run_ranks`], timed as [`World::run_timed`] times it: each
    /// rank's time in milliseconds.
    fn time_ranks(&self, body: impl Fn(usize) + Sync) -> Result<Vec<f64>>;

    /// `call` run as each rank's CUDA graph on cuda ([`World::graphed`]).
    fn graphed_ranks<'a>(
        &'a self,
        graphs: &'a Graphs,
        call: impl Fn(usize) + Sync + 'a,
    ) -> impl Fn(usize) + Sync + 'a;

    /// Overwrites `buffer`'s memory on rank `rank` with `bytes`, where the
    /// program reads it (cuda: its device copy, at the same address).
    fn upload(&self, rank: usize, buffer: &mut Buffer, bytes: &[u8]) -> Result<()>;

    /// Moves `buffer`'s values to rank `rank`'s memory, where it is
    /// packed from then on; either way the buffer becomes one the rank knows,
    /// which the runtime checks the program's views against.
    fn place(&self, rank: usize, buffer: &mut Buffer) -> Result<()>;

    /// Copies `buffer`'s values back from rank `rank`'s memory (a buffer
    /// made on the GPU, an input, keeps its host storage as it is).
    fn fetch(&self, rank: usize, buffer: &mut Buffer) -> Result<()>;

    /// Makes a placed buffer's values again as they were placed: made on
    /// the GPU again, or uploaded from its host storage.
    fn restore(&self, rank: usize, buffer: &mut Buffer) -> Result<()>;

    fn write_trace(&self, path: &Path) -> std::io::Result<()>;
}

impl Ranks for World {
    fn run_ranks(&self, body: impl Fn(usize) + Sync) -> Result<()> {
        self.run(|device| body(device.rank()))
            .map(drop)
            .map_err(|error| anyhow!("the run failed: {error}"))
    }

    fn time_ranks(&self, body: impl Fn(usize) + Sync) -> Result<Vec<f64>> {
        let times = self
            .run_timed(|device| body(device.rank()))
            .map_err(|error| anyhow!("the run failed: {error}"))?;
        times
            .into_iter()
            .enumerate()
            .map(|(rank, time)| {
                time.map_err(|error| anyhow!("rank {rank}: timing failed: {error}"))
            })
            .collect()
    }

    fn graphed_ranks<'a>(
        &'a self,
        graphs: &'a Graphs,
        call: impl Fn(usize) + Sync + 'a,
    ) -> impl Fn(usize) + Sync + 'a {
        let graphed = self.graphed(graphs, move |device| call(device.rank()));
        move |rank| match self {
            World::Cuda(world) => graphed(&*world.device(rank)),
            World::Cpu(world) => graphed(&*world.device(rank)),
        }
    }

    fn write_trace(&self, path: &Path) -> std::io::Result<()> {
        self.write_chrome_trace(path)
    }

    fn upload(&self, rank: usize, buffer: &mut Buffer, bytes: &[u8]) -> Result<()> {
        match (self, &buffer.device) {
            (World::Cuda(world), Some(memory)) => world
                .device(rank)
                .copy_to_device(memory.ptr(), bytes)
                .map_err(|error| anyhow!("rank {rank}: {error}")),
            _ => {
                buffer.bytes_mut().copy_from_slice(bytes);
                Ok(())
            }
        }
    }

    fn place(&self, rank: usize, buffer: &mut Buffer) -> Result<()> {
        let world = match self {
            World::Cpu(world) => {
                ensure!(
                    buffer.made.is_none(),
                    "rank {rank}: a buffer made on a GPU is placed on the cpu backend"
                );
                return buffer
                    .register(world.device(rank).allocations())
                    .map_err(|error| anyhow!("rank {rank}: {error}"));
            }
            World::Cuda(world) => world,
        };
        let memory = world
            .device(rank)
            .buffer(buffer.bytes().len())
            .map_err(|error| anyhow!("rank {rank}: {error}"))?;
        buffer.device = Some(memory);
        self.restore(rank, buffer)
    }

    fn restore(&self, rank: usize, buffer: &mut Buffer) -> Result<()> {
        let (World::Cuda(world), Some(memory)) = (self, &buffer.device) else {
            return Ok(());
        };
        let device = world.device(rank);
        let made = match &buffer.made {
            Some(made) => device.fill_random(
                memory.ptr(),
                buffer.dtype,
                &buffer.shape,
                &made.global_strides,
                made.first,
                made.key,
            ),
            None => device.copy_to_device(memory.ptr(), buffer.bytes()),
        };
        made.map_err(|error| anyhow!("rank {rank}: {error}"))
    }

    fn fetch(&self, rank: usize, buffer: &mut Buffer) -> Result<()> {
        let (World::Cuda(world), Some(memory), None) = (self, &buffer.device, &buffer.made) else {
            return Ok(());
        };
        let ptr = memory.ptr();
        world
            .device(rank)
            .copy_from_device(ptr, buffer.bytes_mut())
            .map_err(|error| anyhow!("rank {rank}: {error}"))
    }
}
