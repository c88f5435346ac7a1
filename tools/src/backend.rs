//! The runtime a run uses, behind what the launcher needs from it: run the
//! entry on every rank, time it, and keep the arguments where that backend's
//! kernels read them (host memory for cpu, each rank's GPU for cuda).

use crate::buffer::Buffer;
use anyhow::{Result, anyhow};
use hir_runtime::bounds::Registration;
use hir_runtime::{Device, RunError, cpu, cuda};
use std::path::Path;
use std::sync::{Barrier, Mutex};
use std::time::Duration;
use std::time::Instant;

/// A runtime backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    Cpu,
    Cuda,
}

impl Backend {
    pub fn parse(flag: &str, value: &str) -> Result<Self> {
        match value {
            "cpu" => Ok(Backend::Cpu),
            "cuda" => Ok(Backend::Cuda),
            other => anyhow::bail!("{flag} takes cpu or cuda, not '{other}'"),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Backend::Cpu => "cpu",
            Backend::Cuda => "cuda",
        }
    }
}

/// The runtime's test modes, the same for every rank.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Checks {
    /// Fresh memory (`host.alloc`'s buffers, the runtime's temporaries) is
    /// NaN instead of zero, so a read of what nobody wrote shows.
    pub poison: bool,
    /// What a data race does on the cpu backend (the cuda backend has no
    /// race detector).
    pub races: cpu::Races,
}

/// Each rank's host program captured as a CUDA graph ([`Runtime::graphed`]),
/// none until its first graphed call.
pub struct Graphs(Vec<Mutex<Option<cuda::Graph>>>);

impl Graphs {
    pub fn new(ranks: usize) -> Graphs {
        Graphs((0..ranks).map(|_| Mutex::new(None)).collect())
    }
}

pub enum Runtime {
    Cpu(cpu::World),
    Cuda(cuda::World),
}

impl Runtime {
    /// `timeout` bounds every wait of one rank on the others, and how long
    /// the other ranks may run on after one has failed.
    pub fn start(
        backend: Backend,
        ranks: usize,
        num_streams: usize,
        trace: bool,
        timeout: Duration,
        checks: Checks,
    ) -> Result<Self> {
        let runtime = match backend {
            Backend::Cpu => cpu::World::new(cpu::Config {
                trace,
                timeout,
                poison: checks.poison,
                races: checks.races,
                ..cpu::Config::new(ranks, num_streams)
            })
            .map(Runtime::Cpu),
            Backend::Cuda => cuda::World::new(cuda::Config {
                trace,
                timeout,
                poison: checks.poison,
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

    /// Runs `body(rank)` on every rank's thread as [`Runtime::run`], timed:
    /// the ranks first meet at a host barrier (all their earlier work is
    /// done: every run ends with a synchronization), then each times its
    /// call until all the work it enqueued is done. On cuda that is the GPU
    /// time between two events recorded on the rank's stream 0 (the caller's
    /// stream, which the program's streams join before it returns), the
    /// first after an all-reduce that lines the ranks' GPUs up; on cpu,
    /// the host time until the rank's queues are drained. Returns each
    /// rank's time in milliseconds.
    pub fn run_timed(&self, body: impl Fn(usize) + Sync) -> Result<Vec<f64>> {
        let barrier = Barrier::new(self.ranks());
        let times = match self {
            Runtime::Cpu(world) => world.run(|device| {
                barrier.wait();
                let start = Instant::now();
                body(device.rank());
                device
                    .synchronize()
                    .map(|()| start.elapsed().as_secs_f64() * 1e3)
            }),
            Runtime::Cuda(world) => world.run(|device| {
                barrier.wait();
                device.align_ranks()?;
                let start = device.record_timing_event()?;
                body(device.rank());
                let end = device.record_timing_event()?;
                start.elapsed_ms(&end).map(f64::from)
            }),
        }
        .map_err(|error| anyhow!("the run failed: {error}"))?;
        times
            .into_iter()
            .enumerate()
            .map(|(rank, time)| {
                time.map_err(|error| anyhow!("rank {rank}: timing failed: {error}"))
            })
            .collect()
    }

    /// `call` as a body for [`Runtime::run`] or [`Runtime::run_timed`] that,
    /// on cuda, runs each rank's call as a CUDA graph: captured into `graphs`
    /// on its first use, replayed then and after. A graph replays the
    /// buffers and allocations of its capture, so `call` must have run
    /// directly once before, on the same arguments. On cpu, `call` itself.
    pub fn graphed<'a>(
        &'a self,
        graphs: &'a Graphs,
        call: impl Fn(usize) + Sync + 'a,
    ) -> impl Fn(usize) + Sync + 'a {
        move |rank| {
            let Runtime::Cuda(world) = self else {
                return call(rank);
            };
            let device = world.device(rank);
            let mut graph = graphs.0[rank].lock().unwrap_or_else(|e| e.into_inner());
            let replayed = match &*graph {
                Some(captured) => device.replay(captured),
                None => device.capture(|| call(rank)).and_then(|captured| {
                    let replayed = device.replay(&captured);
                    *graph = Some(captured);
                    replayed
                }),
            };
            if let Err(error) = replayed {
                device.fail("cuda graph", error);
            }
        }
    }

    /// Overwrites `buffer`'s memory on rank `rank` with `bytes`, where the
    /// program reads it (cuda: its device copy, at the same address).
    pub fn upload(&self, rank: usize, buffer: &mut Buffer, bytes: &[u8]) -> Result<()> {
        match (self, &buffer.device) {
            (Runtime::Cuda(world), Some(memory)) => world
                .device(rank)
                .copy_to_device(memory.ptr(), bytes)
                .map_err(|error| anyhow!("rank {rank}: {error}")),
            _ => {
                buffer.bytes_mut().copy_from_slice(bytes);
                Ok(())
            }
        }
    }

    pub fn ranks(&self) -> usize {
        match self {
            Runtime::Cpu(world) => world.ranks(),
            Runtime::Cuda(world) => world.ranks(),
        }
    }

    /// Moves `buffer`'s values to rank `rank`'s memory and points its
    /// descriptor there; either way the buffer becomes one the rank knows,
    /// which the runtime checks the program's views against.
    pub fn place(&self, rank: usize, buffer: &mut Buffer) -> Result<()> {
        let world = match self {
            Runtime::Cpu(world) => {
                return buffer
                    .register(world.device(rank).allocations())
                    .map_err(|error| anyhow!("rank {rank}: {error}"));
            }
            Runtime::Cuda(world) => world,
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

impl hir::compile::World for Runtime {
    fn run_ranks(
        &self,
        body: &(dyn Fn(&dyn Device) -> hir_runtime::error::Result<Vec<Registration>> + Sync),
    ) -> Result<Vec<hir_runtime::error::Result<Vec<Registration>>>, RunError> {
        match self {
            Runtime::Cpu(world) => world.run_ranks(body),
            Runtime::Cuda(world) => world.run_ranks(body),
        }
    }
}
