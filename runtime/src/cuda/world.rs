//! The cuda backend's launcher side: whether it can run here ([`probe`]),
//! a [`World`] of ranks (threads of one process, one GPU each, or one rank
//! of a multi-process world), running the program on them, their trace,
//! and what a watchdog sees of each rank.

use super::CudaDevice;
use super::nccl::CommCell;
use crate::bootstrap::{Stuck, Watched};
use crate::core::bootstrap::{Bootstrap, ThreadBootstrap};
use crate::core::rank_threads;
use crate::core::sync::Faults;
use crate::device::Device;
use crate::error::{Error, RankError, Result, RunError};
use crate::lock;
use crate::trace::Trace;
use cudarc::driver::{result as cu, sys};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Whether this machine can run the cuda backend: the number of devices, or
/// why not. Probes the libraries before cudarc's loader, which panics when
/// one is missing.
pub fn probe() -> std::result::Result<usize, String> {
    // SAFETY: only tries to open the libraries.
    let missing: Vec<&str> = unsafe {
        [
            (
                "libcuda (the driver)",
                cudarc::driver::sys::is_culib_present(),
            ),
            ("libnvrtc", cudarc::nvrtc::sys::is_culib_present()),
            ("libcublasLt", cudarc::cublaslt::sys::is_culib_present()),
        ]
    }
    .into_iter()
    .filter(|(_, present)| !present)
    .map(|(name, _)| name)
    .collect();
    if !missing.is_empty() {
        return Err(format!("no {} on the library path", missing.join(", ")));
    }
    cu::init().map_err(|error| format!("cuInit failed: {error}"))?;
    match cu::device::get_count() {
        Ok(0) => Err("no CUDA device".into()),
        Ok(count) => Ok(count as usize),
        Err(error) => Err(format!("cuDeviceGetCount failed: {error}")),
    }
}

/// Whether NCCL can be loaded (`libnccl.so` on the library path).
pub fn nccl_present() -> bool {
    // SAFETY: only tries to open the library.
    unsafe { cudarc::nccl::sys::is_culib_present() }
}

/// How a [`World`] is set up.
#[derive(Clone, Debug)]
pub struct Config {
    /// Ranks, one GPU each: rank `r` runs on device `r`.
    pub ranks: usize,
    pub num_streams: usize,
    /// How long the NCCL bootstrap and barriers wait for the other ranks.
    pub timeout: Duration,
    /// Whether to time every op with CUDA events (see [`World::write_chrome_trace`]).
    pub trace: bool,
    /// Whether fresh device memory is NaN (every byte `0xff`: NaN in f32,
    /// bf16 and f16) instead of zero: `hir_rt_alloc`'s buffers when they are
    /// made, and the temporaries of every op (staging copies), so that a
    /// read of what nobody wrote computes NaN.
    pub poison: bool,
}

impl Config {
    pub fn new(ranks: usize, num_streams: usize) -> Config {
        Config {
            ranks,
            num_streams,
            timeout: Duration::from_secs(60),
            trace: false,
            poison: false,
        }
    }
}

/// The ranks of one process, each a thread on its own GPU.
pub struct World {
    pub(super) faults: Arc<Faults>,
    pub(super) devices: Vec<Arc<CudaDevice>>,
    trace: Option<Arc<Trace>>,
    /// Serialises [`World::run`] and [`World::run_on`].
    pub(super) calls: rank_threads::Calls,
}

impl World {
    pub fn new(config: Config) -> Result<World> {
        let count = probe()
            .map_err(|reason| Error::Cuda(format!("the cuda backend cannot start: {reason}")))?;
        if config.ranks == 0 || config.num_streams == 0 {
            return Err(Error::Invalid(format!(
                "a world needs at least one rank and one pool stream, got {} and {}",
                config.ranks, config.num_streams
            )));
        }
        if config.ranks > count {
            return Err(Error::Invalid(format!(
                "{} ranks need as many GPUs; this machine has {count}",
                config.ranks
            )));
        }
        let faults = Arc::new(Faults::new(config.ranks));
        let bootstrap: Arc<dyn Bootstrap> =
            Arc::new(ThreadBootstrap::new(faults.clone(), config.timeout));
        let trace = config.trace.then(|| Arc::new(Trace::default()));
        let devices = (0..config.ranks)
            .map(|rank| {
                CudaDevice::new(
                    rank,
                    rank,
                    &config,
                    faults.clone(),
                    bootstrap.clone(),
                    trace.clone(),
                )
                .map(Arc::new)
            })
            .collect::<Result<_>>()?;
        Ok(World {
            faults,
            devices,
            trace,
            calls: Default::default(),
        })
    }

    /// Writes the ops' GPU times and the host calls as Chrome/Perfetto JSON.
    pub fn write_chrome_trace(&self, path: &Path) -> std::io::Result<()> {
        self.recorded()?.write_chrome_trace(path)
    }

    /// The trace's events, for a launcher that merges the traces of ranks
    /// in several processes with [`crate::trace::chrome_json`].
    pub fn chrome_events(&self) -> std::io::Result<Vec<String>> {
        Ok(self.recorded()?.chrome_events())
    }

    fn recorded(&self) -> std::io::Result<&Trace> {
        self.trace
            .as_deref()
            .ok_or_else(|| std::io::Error::other("no trace was recorded: set Config::trace"))
    }

    /// One rank of a world of `config.ranks` ranks in as many processes:
    /// this process runs rank `rank` on its GPU `local_device`, and its NCCL
    /// communicators span the processes, which exchange their unique ids
    /// through `bootstrap` (a [`crate::bootstrap::StoreBootstrap`]).
    /// `Device::num_devices` is `config.ranks`; [`World::run`] runs the one
    /// rank. Start a watchdog on [`World::watched`] so that a hang in NCCL
    /// becomes an error (see [`crate::bootstrap::ProcessGroup::watch`]), and
    /// stop it before the world drops.
    pub fn process(
        config: Config,
        rank: usize,
        local_device: usize,
        bootstrap: Arc<dyn Bootstrap>,
    ) -> Result<World> {
        let count = probe()
            .map_err(|reason| Error::Cuda(format!("the cuda backend cannot start: {reason}")))?;
        if config.num_streams == 0 {
            return Err(Error::Invalid(
                "a world needs at least one pool stream, got 0".into(),
            ));
        }
        if rank >= config.ranks {
            return Err(Error::Invalid(format!(
                "rank {rank} is not in a world of {} ranks",
                config.ranks
            )));
        }
        if local_device >= count {
            return Err(Error::Invalid(format!(
                "rank {rank} runs on GPU {local_device} (its local rank); this machine has {count}"
            )));
        }
        let faults = Arc::new(Faults::new(config.ranks));
        let trace = config.trace.then(|| Arc::new(Trace::default()));
        let device = CudaDevice::new(
            rank,
            local_device,
            &config,
            faults.clone(),
            bootstrap,
            trace.clone(),
        )?;
        Ok(World {
            faults,
            devices: vec![Arc::new(device)],
            trace,
            calls: Default::default(),
        })
    }

    /// The ranks this process runs (all of them for [`World::new`]).
    pub fn ranks(&self) -> usize {
        self.devices.len()
    }

    /// The global ranks this process runs, in order.
    pub fn local_ranks(&self) -> Vec<usize> {
        self.devices.iter().map(|device| device.rank).collect()
    }

    /// Rank `rank`'s device, e.g. to copy a launcher's inputs to it; `rank`
    /// must run in this process.
    pub fn device(&self, rank: usize) -> Arc<CudaDevice> {
        self.devices
            .iter()
            .find(|device| device.rank == rank)
            .unwrap_or_else(|| panic!("rank {rank} does not run in this process"))
            .clone()
    }

    /// Why the world runs nothing more, if it does not: an interrupted run
    /// left a rank's thread running its program.
    pub fn closed(&self) -> Option<String> {
        self.calls.closed()
    }

    /// What a watchdog watches of each rank of this process: its NCCL
    /// requests in flight (events it queries with `cuEventQuery`), its
    /// error, and its communicators to abort.
    pub fn watched(&self) -> Vec<Arc<dyn Watched>> {
        self.devices
            .iter()
            .map(|device| Arc::new(CudaWatch(device.clone())) as Arc<dyn Watched>)
            .collect()
    }

    /// Runs `body` on one thread per rank with that rank entered, then waits
    /// for all the work it enqueued, as the cpu backend's `World::run` does
    /// (one run at a time).
    pub fn run<T: Send>(&self, body: impl Fn(&CudaDevice) -> T + Sync) -> Result<Vec<T>, RunError> {
        rank_threads::run(
            &self.calls,
            &self.devices,
            "hir-cuda-rank",
            &self.faults,
            // The devices share one timeout, and a world has at least one.
            self.devices[0].timeout,
            |device| {
                device.bind()?;
                Ok(body(device))
            },
            |device| {
                if let Err(error) = device.synchronize() {
                    device.fail("synchronize", error);
                }
            },
        )
    }
}

/// What the watchdog watches of a cuda rank.
struct CudaWatch(Arc<CudaDevice>);

impl Watched for CudaWatch {
    fn rank(&self) -> usize {
        self.0.rank
    }

    fn stuck(&self, timeout: Duration) -> Option<Stuck> {
        // The events belong to the rank's context.
        self.0.bind().ok()?;
        self.0.inflight.stuck(Instant::now(), timeout, |event| {
            let Some(event) = event.0 else {
                // Still being posted (creating a communicator, or inside NCCL).
                return false;
            };
            // SAFETY: a live event (retired ones are not asked about).
            match unsafe { cu::event::query(event) } {
                Ok(()) => true,
                Err(error) => error.0 != sys::cudaError_enum::CUDA_ERROR_NOT_READY,
            }
        })
    }

    fn error(&self) -> Option<RankError> {
        self.0
            .faults
            .errors()
            .into_iter()
            .find(|error| error.rank == self.0.rank)
    }

    fn fail(&self, op: &str, error: Error) {
        self.0.fail(op, error);
    }

    fn abort(&self) {
        let _ = self.0.bind();
        let cells: Vec<Arc<CommCell>> = lock(&self.0.live).clone();
        for cell in cells {
            cell.abort(Duration::from_secs(1));
        }
    }
}
