//! The runtime a run uses, behind what the launcher needs from it: run the
//! entry on every rank, and keep the arguments where that backend's kernels
//! read them (host memory for cpu, each rank's GPU for cuda).

use crate::Buffer;
use crate::cli::Backend;
use anyhow::{Result, anyhow};
use hir_runtime::{Device, cpu, cuda};
use std::path::Path;

pub enum Runtime {
    Cpu(cpu::World),
    Cuda(cuda::World),
}

impl Runtime {
    pub fn start(backend: Backend, ranks: usize, num_streams: usize, trace: bool) -> Result<Self> {
        let runtime = match backend {
            Backend::Cpu => cpu::World::new(cpu::Config {
                trace,
                ..cpu::Config::new(ranks, num_streams)
            })
            .map(Runtime::Cpu),
            Backend::Cuda => cuda::World::new(cuda::Config {
                trace,
                ..cuda::Config::new(ranks, num_streams)
            })
            .map(Runtime::Cuda),
        };
        runtime.map_err(|error| anyhow!("cannot start the runtime: {error}"))
    }

    /// Runs `body(rank)` on every rank's thread, with the rank entered, and
    /// waits for the work it enqueued.
    pub fn run(&self, body: impl Fn(usize) + Sync) -> Result<()> {
        match self {
            Runtime::Cpu(world) => world.run(|device| body(device.rank())).map(drop),
            Runtime::Cuda(world) => world.run(|device| body(device.rank())).map(drop),
        }
        .map_err(|error| anyhow!("the run failed: {error}"))
    }

    /// Moves `buffer`'s values to rank `rank`'s memory and points its
    /// descriptor there.
    pub fn place(&self, rank: usize, buffer: &mut Buffer) -> Result<()> {
        let Runtime::Cuda(world) = self else {
            return Ok(());
        };
        let device = world.device(rank);
        let memory = device
            .buffer(buffer.bytes().len())
            .map_err(|error| anyhow!("rank {rank}: {error}"))?;
        device
            .copy_to_device(memory.ptr(), buffer.bytes())
            .map_err(|error| anyhow!("rank {rank}: {error}"))?;
        buffer.point_to(memory.ptr());
        buffer.device = Some(memory);
        Ok(())
    }

    /// Copies `buffer`'s values back from rank `rank`'s memory.
    pub fn fetch(&self, rank: usize, buffer: &mut Buffer) -> Result<()> {
        let (Runtime::Cuda(world), Some(memory)) = (self, &buffer.device) else {
            return Ok(());
        };
        let ptr = memory.ptr();
        world
            .device(rank)
            .copy_from_device(ptr, buffer.bytes_mut())
            .map_err(|error| anyhow!("rank {rank}: {error}"))
    }

    pub fn write_chrome_trace(&self, path: &Path) -> std::io::Result<()> {
        match self {
            Runtime::Cpu(world) => world.write_chrome_trace(path),
            Runtime::Cuda(world) => world.write_chrome_trace(path),
        }
    }
}
