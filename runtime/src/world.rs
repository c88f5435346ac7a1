//! One world over either backend: what a launcher (`hir-run`, `hir-bench`,
//! the Python package, an embedder) starts, runs the ranks of, times and
//! captures as graphs, without caring whether the ranks are cpu threads or
//! GPUs. [`Backend`] names the two.

use crate::core::store::{KeyValueStore, StoreBootstrap};
use crate::device::Device;
use crate::error::{Result, RunError};
use crate::{cpu, cuda};
use std::path::Path;
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

/// The most ranks a world of this process starts (`hir-run -n`, Python's
/// `hir.init`): far above the GPUs of a host, far below what the ranks'
/// threads and tables would need of memory.
pub const MAX_RANKS: usize = 1024;
/// The most streams a rank's pool holds.
pub const MAX_STREAMS: usize = 1024;

/// A runtime backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// Ranks as threads of the process, on host memory.
    Cpu,
    /// Ranks on GPUs, with NCCL, CUDA IPC and cuBLASLt.
    Cuda,
}

impl Backend {
    pub const ALL: &'static [Backend] = &[Backend::Cpu, Backend::Cuda];

    /// The backend's name on command lines and in Python.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Cpu => "cpu",
            Backend::Cuda => "cuda",
        }
    }

    /// The backend named `name`.
    pub fn from_name(name: &str) -> Option<Backend> {
        Self::ALL
            .iter()
            .copied()
            .find(|backend| backend.name() == name)
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

/// How a world is started: the same for either backend.
#[derive(Clone, Debug)]
pub struct Config {
    pub backend: Backend,
    /// Ranks in this process.
    pub ranks: usize,
    /// Streams in each rank's pool.
    pub num_streams: usize,
    /// Whether ops are recorded for a Chrome trace.
    pub trace: bool,
    /// Bounds every wait of one rank on the others, and how long the other
    /// ranks may run on after one has failed.
    pub timeout: Duration,
    pub checks: Checks,
}

impl Config {
    /// `ranks` ranks of `backend` with pools of `num_streams`, the other
    /// settings at their defaults.
    pub fn new(backend: Backend, ranks: usize, num_streams: usize) -> Config {
        Config {
            backend,
            ranks,
            num_streams,
            trace: false,
            timeout: Duration::from_secs(60),
            checks: Checks::default(),
        }
    }
}

/// The ranks of this process on one backend.
pub enum World {
    Cpu(cpu::World),
    Cuda(cuda::World),
}

/// Each rank's host program captured as a CUDA graph ([`World::graphed`]),
/// none until its first graphed call.
pub struct Graphs(Vec<Mutex<Option<cuda::Graph>>>);

impl Graphs {
    pub fn new(ranks: usize) -> Graphs {
        Graphs((0..ranks).map(|_| Mutex::new(None)).collect())
    }
}

impl World {
    /// Starts the ranks `config` describes, all in this process: at most
    /// [`MAX_RANKS`] ranks of at most [`MAX_STREAMS`] pool streams.
    pub fn start(config: &Config) -> Result<World> {
        if config.ranks > MAX_RANKS || config.num_streams > MAX_STREAMS {
            return Err(crate::error::Error::Invalid(format!(
                "a world of {} ranks of {} pool streams each is larger than a world may be \
                 ({MAX_RANKS} ranks, {MAX_STREAMS} streams)",
                config.ranks, config.num_streams
            )));
        }
        match config.backend {
            Backend::Cpu => cpu::World::new(cpu::Config {
                trace: config.trace,
                timeout: config.timeout,
                poison: config.checks.poison,
                races: config.checks.races,
                ..cpu::Config::new(config.ranks, config.num_streams)
            })
            .map(World::Cpu),
            Backend::Cuda => cuda::World::new(cuda::Config {
                trace: config.trace,
                timeout: config.timeout,
                poison: config.checks.poison,
                ..cuda::Config::new(config.ranks, config.num_streams)
            })
            .map(World::Cuda),
        }
    }

    /// Rank `rank` of a world of `config.ranks` ranks in as many processes,
    /// which meet at `store` (HIR's own, or a job's `torch.distributed`
    /// store). On cuda the rank runs on GPU `local_device` and its NCCL
    /// communicators are made from unique ids exchanged through the store;
    /// on cpu its collectives and transfers go through the store.
    pub fn process(
        config: &Config,
        rank: usize,
        local_device: usize,
        store: Arc<dyn KeyValueStore>,
    ) -> Result<World> {
        if config.ranks > crate::bootstrap::protocol::MAX_RANKS || config.num_streams > MAX_STREAMS
        {
            return Err(crate::error::Error::Invalid(format!(
                "a world of {} ranks of {} pool streams each is larger than a world may be",
                config.ranks, config.num_streams
            )));
        }
        match config.backend {
            Backend::Cpu => cpu::World::process(
                cpu::Config {
                    trace: config.trace,
                    timeout: config.timeout,
                    poison: config.checks.poison,
                    races: config.checks.races,
                    ..cpu::Config::new(config.ranks, config.num_streams)
                },
                rank,
                store,
            )
            .map(World::Cpu),
            Backend::Cuda => cuda::World::process(
                cuda::Config {
                    trace: config.trace,
                    timeout: config.timeout,
                    poison: config.checks.poison,
                    ..cuda::Config::new(config.ranks, config.num_streams)
                },
                rank,
                local_device,
                Arc::new(StoreBootstrap::new(store, "nccl", config.timeout)),
            )
            .map(World::Cuda),
        }
    }

    pub fn backend(&self) -> Backend {
        match self {
            World::Cpu(_) => Backend::Cpu,
            World::Cuda(_) => Backend::Cuda,
        }
    }

    /// The ranks this process runs.
    pub fn ranks(&self) -> usize {
        match self {
            World::Cpu(world) => world.ranks(),
            World::Cuda(world) => world.ranks(),
        }
    }

    /// The global ranks this process runs, in order.
    pub fn local_ranks(&self) -> Vec<usize> {
        match self {
            World::Cpu(world) => world.local_ranks(),
            World::Cuda(world) => world.local_ranks(),
        }
    }

    /// Why the world runs nothing more, if it does not: an interrupted run
    /// ([`crate::interrupt`]) left a rank's thread running its program.
    /// Every later run fails at once with [`crate::Error::Closed`].
    pub fn closed(&self) -> Option<String> {
        match self {
            World::Cpu(world) => world.closed(),
            World::Cuda(world) => world.closed(),
        }
    }

    /// Runs `body` on one thread per rank with that rank entered, then waits
    /// for all the work it enqueued.
    pub fn run<T: Send>(
        &self,
        body: impl Fn(&dyn Device) -> T + Sync,
    ) -> std::result::Result<Vec<T>, RunError> {
        match self {
            World::Cpu(world) => world.run(body),
            World::Cuda(world) => world.run(|device| body(device)),
        }
    }

    /// Runs `body` on every rank's thread as [`World::run`], timed: the
    /// ranks first meet at a host barrier (all their earlier work is done:
    /// every run ends with a synchronization), then each times its call
    /// until all the work it enqueued is done. On cuda that is the GPU time
    /// between two events recorded on the rank's stream 0 (the caller's
    /// stream, which the program's streams join before it returns), the
    /// first after an all-reduce that lines the ranks' GPUs up; on cpu, the
    /// host time until the rank's queues are drained. Returns each rank's
    /// time in milliseconds, or the first rank's timing error.
    pub fn run_timed(
        &self,
        body: impl Fn(&dyn Device) + Sync,
    ) -> std::result::Result<Vec<Result<f64>>, RunError> {
        let barrier = Barrier::new(self.ranks());
        match self {
            World::Cpu(world) => world.run(|device| {
                barrier.wait();
                let start = Instant::now();
                body(device);
                device
                    .synchronize()
                    .map(|()| start.elapsed().as_secs_f64() * 1e3)
            }),
            World::Cuda(world) => world.run(|device| {
                barrier.wait();
                device.align_ranks()?;
                let start = device.record_timing_event()?;
                body(device);
                let end = device.record_timing_event()?;
                start.elapsed_ms(&end).map(f64::from)
            }),
        }
    }

    /// `call` as a body for [`World::run`] or [`World::run_timed`] that, on
    /// cuda, runs each rank's call as a CUDA graph: captured into `graphs`
    /// on its first use, replayed then and after. A graph replays the
    /// buffers and allocations of its capture, so `call` must have run
    /// directly once before, on the same arguments. On cpu, `call` itself.
    pub fn graphed<'a>(
        &'a self,
        graphs: &'a Graphs,
        call: impl Fn(&dyn Device) + Sync + 'a,
    ) -> impl Fn(&dyn Device) + Sync + 'a {
        move |device| {
            let World::Cuda(world) = self else {
                return call(device);
            };
            let rank = device.rank();
            let cuda = world.device(rank);
            let mut graph = graphs.0[rank].lock().unwrap_or_else(|e| e.into_inner());
            let replayed = match &*graph {
                Some(captured) => cuda.replay(captured),
                None => cuda.capture(|| call(device)).and_then(|captured| {
                    let replayed = cuda.replay(&captured);
                    *graph = Some(captured);
                    replayed
                }),
            };
            if let Err(error) = replayed {
                cuda.fail("cuda graph", error);
            }
        }
    }

    /// The trace's events, for a launcher that merges the traces of ranks
    /// in several processes with [`crate::trace::chrome_json`].
    pub fn chrome_events(&self) -> std::io::Result<Vec<String>> {
        match self {
            World::Cpu(world) => world
                .trace()
                .map(|trace| trace.chrome_events())
                .ok_or_else(|| std::io::Error::other("no trace was recorded: set Config::trace")),
            World::Cuda(world) => world.chrome_events(),
        }
    }

    pub fn write_chrome_trace(&self, path: &Path) -> std::io::Result<()> {
        match self {
            World::Cpu(world) => world.write_chrome_trace(path),
            World::Cuda(world) => world.write_chrome_trace(path),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backends_by_name() {
        for &backend in Backend::ALL {
            assert_eq!(Backend::from_name(backend.name()), Some(backend));
        }
        assert_eq!(Backend::from_name("tpu"), None);
    }

    #[test]
    fn a_world_larger_than_the_bounds_is_an_error() {
        for (ranks, streams) in [(1 << 40, 4), (MAX_RANKS + 1, 1), (2, MAX_STREAMS + 1)] {
            let error = World::start(&Config::new(Backend::Cpu, ranks, streams))
                .err()
                .unwrap()
                .to_string();
            assert!(error.contains("is larger than a world may be"), "{error}");
        }
    }

    #[test]
    fn one_world_runs_and_times_the_cpu_ranks() {
        let world = World::start(&Config::new(Backend::Cpu, 3, 2)).unwrap();
        assert_eq!(world.backend(), Backend::Cpu);
        assert_eq!(world.local_ranks(), vec![0, 1, 2]);
        let ranks = world.run(|device| device.rank()).unwrap();
        assert_eq!(ranks, vec![0, 1, 2]);
        let times = world.run_timed(|_| ()).unwrap();
        assert_eq!(times.len(), 3);
        assert!(times.into_iter().all(|time| time.unwrap() >= 0.0));
    }

    /// What one rank of [`allreduce_call`] got: the sum of `shared`, then of
    /// `mine`.
    type Sums = (Vec<f32>, Vec<f32>);

    /// One call as a program makes it: each rank registers its arguments,
    /// allreduces `shared` (the same array in every call) into `sums` and its
    /// own `mine` into `totals`, and waits. Returns what each rank got.
    fn allreduce_call(
        world: &World,
        shared: &[Vec<f32>],
        mine: &[Vec<f32>],
    ) -> std::result::Result<Vec<Sums>, RunError> {
        use crate::memref::View;
        use crate::ops::{CollectiveOp, Team};
        use hir_abi::{Collective, DType, ReduceKind, Transport};
        let ranks = world.ranks();
        let team = Team::new(&(0..ranks as i64).collect::<Vec<_>>(), ranks).unwrap();
        world.run(|device| {
            let rank = device.rank();
            let n = shared[rank].len();
            let (mut sums, mut totals) = (vec![0f32; n], vec![0f32; n]);
            let view = |data: *mut f32| View::contiguous(DType::F32, data.cast(), &[n]);
            let allocations = device.allocations();
            let (sums_at, totals_at) = (sums.as_mut_ptr(), totals.as_mut_ptr());
            let inputs = [
                shared[rank].as_ptr().cast_mut(),
                mine[rank].as_ptr().cast_mut(),
            ];
            let _known: Vec<_> = inputs
                .into_iter()
                .chain([sums_at, totals_at])
                .map(|data| allocations.register(data.cast(), n * 4).unwrap())
                .collect();
            // The collectives only read their inputs.
            for (input, output) in inputs.into_iter().zip([sums_at, totals_at]) {
                let op = CollectiveOp {
                    op: Collective::Allreduce,
                    kind: ReduceKind::Sum,
                    root: 0,
                    axis: 0,
                    team: team.clone(),
                    backend: Transport::Nccl,
                    input: view(input),
                    output: view(output),
                };
                let request = device.collective(op).unwrap();
                device.wait(request).unwrap();
            }
            device.synchronize().unwrap();
            (sums, totals)
        })
    }

    #[test]
    fn calls_from_many_threads_are_serialised_and_right() {
        const THREADS: usize = 8;
        const CALLS: usize = 250;
        const RANKS: usize = 4;
        const N: usize = 64;
        let world = World::start(&Config::new(Backend::Cpu, RANKS, 2)).unwrap();
        // Every call passes the same arrays as `shared`.
        let shared: Vec<Vec<f32>> = (0..RANKS)
            .map(|rank| (0..N).map(|e| (rank * N + e) as f32).collect())
            .collect();
        let shared_sum: Vec<f32> = (0..N)
            .map(|e| (0..RANKS).map(|rank| shared[rank][e]).sum())
            .collect();
        std::thread::scope(|scope| {
            for thread in 0..THREADS {
                let (world, shared, shared_sum) = (&world, &shared, &shared_sum);
                scope.spawn(move || {
                    for call in 0..CALLS {
                        let tag = (thread * CALLS + call) as f32;
                        let mine: Vec<Vec<f32>> = (0..RANKS)
                            .map(|rank| (0..N).map(|e| tag + (rank + e) as f32).collect())
                            .collect();
                        let got = allreduce_call(world, shared, &mine)
                            .unwrap_or_else(|error| panic!("thread {thread} call {call}: {error}"));
                        for (rank, (sums, totals)) in got.iter().enumerate() {
                            assert_eq!(sums, shared_sum, "thread {thread} call {call} rank {rank}");
                            let expected: Vec<f32> = (0..N)
                                .map(|e| (0..RANKS).map(|r| mine[r][e]).sum())
                                .collect();
                            assert_eq!(
                                totals, &expected,
                                "thread {thread} call {call} rank {rank}"
                            );
                        }
                    }
                });
            }
        });
    }
}
