//! The ranks this Python process runs a program on: its world. Either all
//! the ranks as threads of this process (`hir.init`, one rank by default),
//! or this process's one rank of a job whose ranks are processes
//! (`hir.init_from_env`, `hir.init_from_torch`), joined through HIR's
//! bootstrap (`hir_runtime::bootstrap::ProcessGroup`) with the cuda backend.
//!
//! A call runs every rank this process holds with its arrays, through the
//! backend's `World::run` (a thread per rank, which waits for the rank's
//! work): the arrays' memory is the program's arguments, registered with
//! the rank so that its views are checked against them; nothing is copied.

use crate::compile::Compiled;
use crate::dlpack::{Array, Memory};
use anyhow::{Result, anyhow, bail};
use hir_runtime::bootstrap::{Env, ProcessGroup};
use hir_runtime::bounds::Registration;
use hir_runtime::{Device, RunError, cuda};
use hir_tools::backend::{Backend, Checks, Runtime};
use std::ffi::c_void;
use std::sync::Arc;
use std::time::Duration;

pub struct World {
    pub runtime: Runtime,
    pub backend: Backend,
    pub num_streams: usize,
    /// The job this process is one rank of, if its ranks are processes.
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
        Ok(World {
            runtime: Runtime::start(
                backend,
                ranks,
                num_streams,
                false,
                timeout,
                Checks::default(),
            )?,
            backend,
            num_streams,
            group: None,
        })
    }

    /// This process's rank of the job `env` describes (`RANK`,
    /// `WORLD_SIZE`, `MASTER_ADDR`, `MASTER_PORT`, ...), on the cuda backend.
    pub fn process(env: Env, num_streams: usize, timeout: Duration) -> Result<World> {
        let rank = env.rank;
        let group = ProcessGroup::join(env, timeout)
            .map_err(|error| anyhow!("rank {rank}: joining the job: {error}"))?;
        let group = Arc::new(group);
        let world = cuda::World::join(
            &group,
            cuda::Config {
                timeout,
                ..cuda::Config::new(group.world_size(), num_streams)
            },
        )
        .map_err(|error| anyhow!("rank {rank}: cannot start the cuda runtime: {error}"))?;
        Ok(World {
            runtime: Runtime::Cuda(world),
            backend: Backend::Cuda,
            num_streams,
            group: Some(group),
        })
    }

    /// Every rank of the world, of this process or not.
    pub fn size(&self) -> usize {
        match &self.group {
            Some(group) => group.world_size(),
            None => self.runtime.ranks(),
        }
    }

    /// The ranks this process runs, in order.
    pub fn local_ranks(&self) -> Vec<usize> {
        match &self.group {
            Some(group) => vec![group.rank()],
            None => (0..self.runtime.ranks()).collect(),
        }
    }

    /// Runs `program` on every rank of this process, rank `local_ranks()[i]`
    /// on `arrays[i]`, until the work is done.
    pub fn run(&self, program: &Compiled, arrays: &[Vec<Array>]) -> Result<(), Failure> {
        let ranks = self.local_ranks();
        if arrays.len() != ranks.len() {
            return Err(Failure::Usage(format!(
                "this process runs {} rank{} of the world, but arrays were given for {}",
                ranks.len(),
                if ranks.len() == 1 { "" } else { "s" },
                arrays.len()
            )));
        }
        for (&rank, arrays) in ranks.iter().zip(arrays) {
            self.check(program, rank, arrays).map_err(Failure::Usage)?;
        }
        let calls: Vec<Call> = arrays.iter().map(|arrays| Call::new(arrays)).collect();
        let body = |device: &dyn Device| -> hir_runtime::error::Result<Vec<Registration>> {
            let index = ranks
                .iter()
                .position(|&rank| rank == device.rank())
                .expect("the world runs only its own ranks");
            let call = &calls[index];
            let known = call.register(device)?;
            // SAFETY: the descriptors point at arrays of the entry's shapes
            // and types (checked above), which the caller keeps alive
            // until `run` returns, after the rank's work is done.
            unsafe { (program.entry)(call.arguments()) };
            Ok(known)
        };
        let results = match &self.runtime {
            Runtime::Cpu(world) => world.run(body),
            Runtime::Cuda(world) => world.run(|device| body(device)),
        }
        .map_err(Failure::Run)?;
        for (rank, result) in ranks.iter().zip(results) {
            result.map_err(|error| {
                Failure::Run(RunError {
                    errors: vec![hir_runtime::RankError {
                        rank: *rank,
                        op: "registering the arguments".into(),
                        error,
                    }],
                })
            })?;
        }
        Ok(())
    }

    /// Whether `arrays` are what `program` takes on `rank` of this world.
    fn check(&self, program: &Compiled, rank: usize, arrays: &[Array]) -> Result<(), String> {
        let parameters = program.parameters();
        if arrays.len() != parameters.len() {
            return Err(format!(
                "{} takes {} arrays on a rank ({} inputs, then {} outputs), got {}",
                program.signature.name,
                parameters.len(),
                program.signature.inputs.len(),
                program.signature.outputs.len(),
                arrays.len()
            ));
        }
        let memory = match self.backend {
            Backend::Cpu => Memory::Host,
            Backend::Cuda => Memory::Cuda(self.ordinal(rank)),
        };
        for ((array, (what, shape)), dtype) in arrays.iter().zip(&parameters).zip(program.dtypes())
        {
            if array.shape != *shape || array.dtype != dtype {
                return Err(format!(
                    "rank {rank}: {what} of {} is a {:?} {} array, but it takes a {shape:?} {} \
                     array (a rank's local shard)",
                    program.signature.name,
                    array.shape,
                    array.dtype.mlir(),
                    dtype.mlir()
                ));
            }
            if array.memory != memory {
                return Err(format!(
                    "rank {rank}: {what} of {} is in {}, but the {} backend runs rank {rank} on {memory}",
                    program.signature.name,
                    array.memory,
                    self.backend.name()
                ));
            }
        }
        Ok(())
    }

    /// The GPU of this host that `rank` runs on.
    fn ordinal(&self, rank: usize) -> usize {
        match &self.group {
            Some(group) => group.local_rank(),
            None => rank,
        }
    }
}

impl Drop for World {
    fn drop(&mut self) {
        if let Some(group) = &self.group {
            group.goodbye();
            group.finish();
        }
    }
}

/// Why a run did not happen or failed.
pub enum Failure {
    /// The arrays do not fit the program or the world.
    Usage(String),
    /// A rank failed: the runtime's errors, with rank and op.
    Run(RunError),
}

/// One rank's arguments: a ranked memref descriptor per array, packed as
/// the entry's `_mlir_ciface_` wrapper takes them, and the memory to register.
struct Call {
    /// `{ allocated, aligned, offset, sizes[rank], strides[rank] }` each;
    /// held for `arguments`, which point into them.
    _descriptors: Vec<Vec<i64>>,
    /// A pointer to each descriptor; held as `_descriptors`.
    _pointers: Vec<*mut i64>,
    /// A pointer to each of `pointers`: the packed arguments.
    arguments: Vec<*mut c_void>,
    /// Byte ranges of the arrays, overlapping ones merged.
    ranges: Vec<(usize, usize)>,
}

// SAFETY: the pointers point into the call's own heap vectors, which are not
// changed after `new`; each rank's thread reads only its own call.
unsafe impl Sync for Call {}

impl Call {
    fn new(arrays: &[Array]) -> Call {
        let mut descriptors: Vec<Vec<i64>> = arrays.iter().map(descriptor).collect();
        let mut pointers: Vec<*mut i64> = descriptors
            .iter_mut()
            .map(|descriptor| descriptor.as_mut_ptr())
            .collect();
        let arguments = pointers
            .iter_mut()
            .map(|pointer| (pointer as *mut *mut i64).cast())
            .collect();
        let mut ranges: Vec<(usize, usize)> = arrays
            .iter()
            .map(|array| (array.address, array.address + array.bytes().max(1)))
            .collect();
        ranges.sort_unstable();
        let mut merged: Vec<(usize, usize)> = Vec::with_capacity(ranges.len());
        for (start, end) in ranges {
            match merged.last_mut() {
                Some(last) if start < last.1 => last.1 = last.1.max(end),
                _ => merged.push((start, end)),
            }
        }
        Call {
            _descriptors: descriptors,
            _pointers: pointers,
            arguments,
            ranges: merged,
        }
    }

    /// Makes the arrays buffers the rank knows while the registrations live.
    fn register(&self, device: &dyn Device) -> hir_runtime::error::Result<Vec<Registration>> {
        self.ranges
            .iter()
            .map(|&(start, end)| {
                device
                    .allocations()
                    .register(start as *const u8, end - start)
            })
            .collect()
    }

    /// The packed arguments, valid while `self` lives.
    fn arguments(&self) -> *mut *mut c_void {
        self.arguments.as_ptr().cast_mut()
    }
}

/// The ranked memref descriptor of a dense row-major array.
fn descriptor(array: &Array) -> Vec<i64> {
    let address = array.address as i64;
    let mut descriptor = vec![address, address, 0];
    descriptor.extend(array.shape.iter().map(|&extent| extent as i64));
    let mut strides = vec![1i64; array.shape.len()];
    for axis in (0..array.shape.len().saturating_sub(1)).rev() {
        strides[axis] = strides[axis + 1] * array.shape[axis + 1] as i64;
    }
    descriptor.extend(strides);
    descriptor
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
