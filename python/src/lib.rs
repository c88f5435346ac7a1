//! `hir._native`: the Rust half of the `hir` Python package (the Python half,
//! `python/hir/__init__.py`, is the API users call).
//!
//! - `hir::compile` (the `hir` crate): a program's text lowered and
//!   JIT-compiled as `hir-run` does, and run on a world's ranks;
//! - `hir::differentiate`: a program's forward and backward programs, made
//!   by `fusion-differentiate`, for `hir.compile(..., differentiable=True)`;
//! - [`dlpack`]: numpy arrays and torch tensors read through DLPack, no copy;
//! - [`log`]: `HIR_LOG` from Python;
//! - [`world`]: the ranks this process runs, as threads or as one rank of a
//!   job of processes, and a call of a program on them;
//! - [`store`]: a job's `torch.distributed` store as the runtime's
//!   key-value store, where the ranks of `hir.init_from_torch` meet.

mod dlpack;
mod log;
mod store;
mod world;

use hir::compile::{Compiled, Failure, LowerOptions, compile};
use hir::passes::Choice as _;
use hir::passes::fusion::differentiate::Saved;
use hir_runtime::Backend;
use hir_runtime::world::{MAX_RANKS, MAX_STREAMS};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use world::World;

create_exception!(_native, HirError, PyException, "Every error HIR raises.");
create_exception!(
    _native,
    CompileError,
    HirError,
    "A program that does not parse, verify or lower; the message holds MLIR's diagnostics."
);
create_exception!(
    _native,
    RunError,
    HirError,
    "A rank failed: `rank` and `op` say where first, `errors` lists every rank's (rank, op, message)."
);

/// The world programs run on.
enum Slot {
    /// None yet: the first call makes the default world.
    Default,
    Ready(Arc<World>),
    /// The last `init*` could not start the world it was asked for: calls
    /// raise (never a default world of one rank in its place) until an
    /// `init*` succeeds.
    Failed(String),
}

static WORLD: Mutex<Slot> = Mutex::new(Slot::Default);

fn current_world() -> Option<Arc<World>> {
    match &*WORLD.lock().unwrap_or_else(PoisonError::into_inner) {
        Slot::Ready(world) => Some(world.clone()),
        Slot::Default | Slot::Failed(_) => None,
    }
}

/// The world, or, before there is one, the default world made now: one rank
/// on the backend of `arrays`' memory (made once, whichever threads ask).
/// After a failed `init*`, the error that says so.
fn default_world(arrays: &[Vec<dlpack::Array>], pool_streams: usize) -> PyResult<Arc<World>> {
    let mut world = WORLD.lock().unwrap_or_else(PoisonError::into_inner);
    match &*world {
        Slot::Ready(world) => return Ok(world.clone()),
        Slot::Failed(why) => {
            return Err(HirError::new_err(format!(
                "no world to run on: the last hir.init* failed ({why}); call it again, or \
                 hir.init() for one rank in this process"
            )));
        }
        Slot::Default => {}
    }
    let cuda = arrays
        .iter()
        .flatten()
        .any(|array| array.memory != dlpack::Memory::Host);
    let backend = if cuda { Backend::Cuda } else { Backend::Cpu };
    let made = Arc::new(
        World::threads(backend, 1, pool_streams, Duration::from_secs(60))
            .map_err(|error| HirError::new_err(format!("{error:#}")))?,
    );
    *world = Slot::Ready(made.clone());
    Ok(made)
}

fn set_world(slot: Slot) {
    // The old world drops outside the lock (a process rank says goodbye).
    let old = std::mem::replace(
        &mut *WORLD.lock().unwrap_or_else(PoisonError::into_inner),
        slot,
    );
    drop(old);
}

/// Makes the world with `start` (after dropping the old one, whose GPUs and
/// ports the new one may need); if it fails, calls raise until the next
/// `init*` succeeds.
fn start_world(start: impl FnOnce() -> anyhow::Result<World>) -> PyResult<()> {
    set_world(Slot::Default);
    match start() {
        Ok(world) => {
            set_world(Slot::Ready(Arc::new(world)));
            Ok(())
        }
        Err(error) => {
            let why = format!("{error:#}");
            set_world(Slot::Failed(why.clone()));
            Err(HirError::new_err(why))
        }
    }
}

fn timeout(seconds: f64) -> PyResult<Duration> {
    Duration::try_from_secs_f64(seconds)
        .ok()
        .filter(|timeout| !timeout.is_zero())
        .ok_or_else(|| PyValueError::new_err(format!("timeout must be positive, not {seconds}")))
}

fn backend(name: &str) -> PyResult<Backend> {
    Backend::from_name(name).ok_or_else(|| {
        PyValueError::new_err(format!("backend takes 'cpu' or 'cuda', not '{name}'"))
    })
}

/// A fusion parameter's placement as Python sees it: global shape, mesh
/// devices, mesh shape, and the axis split over each mesh axis.
type Distribution = (Vec<usize>, Vec<usize>, Vec<usize>, Vec<Option<usize>>);

/// A compiled program; `hir.Program` wraps it.
#[pyclass(frozen, module = "hir._native")]
struct Program {
    compiled: Arc<Compiled>,
}

#[pymethods]
impl Program {
    /// The entry function's name, e.g. `@ag_matmul`.
    #[getter]
    fn name(&self) -> String {
        self.compiled.signature.name.clone()
    }

    /// Whether it is a fusion program (global shapes) or host IR.
    #[getter]
    fn fusion(&self) -> bool {
        self.compiled.signature.fusion
    }

    #[getter]
    fn num_inputs(&self) -> usize {
        self.compiled.signature.inputs.len()
    }

    #[getter]
    fn num_outputs(&self) -> usize {
        self.compiled.signature.outputs.len()
    }

    #[getter]
    fn num_streams(&self) -> usize {
        self.compiled.options.num_streams
    }

    /// `hir-lower`'s options the program was lowered with, as its pipeline
    /// renders them.
    #[getter]
    fn options(&self) -> String {
        self.compiled.options.render()
    }

    /// What a rank passes, in order: `(what, local shape, dtype)`.
    #[getter]
    fn parameters(&self) -> Vec<(String, Vec<usize>, &'static str)> {
        self.compiled
            .parameters()
            .iter()
            .zip(self.compiled.dtypes())
            .map(|((what, shape), dtype)| (what.clone(), shape.clone(), dtype.mlir()))
            .collect()
    }

    /// Where each parameter lives, in `parameters` order: `(global shape,
    /// mesh devices, mesh shape, the tensor axis split over each mesh axis
    /// or None, outermost first)`, or None for host IR.
    #[getter]
    fn distributions(&self) -> Vec<Option<Distribution>> {
        let signature = &self.compiled.signature;
        signature
            .inputs
            .iter()
            .chain(&signature.outputs)
            .map(|param| {
                param.placement.as_ref().map(|placement| {
                    (
                        param.shape.clone(),
                        placement.devices.clone(),
                        placement.shape.clone(),
                        placement.split_axes(),
                    )
                })
            })
            .collect()
    }

    /// Runs the program on every rank this process holds, `ranks[i]` being
    /// the arrays of its `i`-th rank; returns once their work is done, or,
    /// given `streams` (a raw `CUstream` per rank, torch's `cuda_stream`),
    /// once it is enqueued on them.
    #[pyo3(signature = (ranks, streams=None))]
    fn run(
        &self,
        py: Python<'_>,
        ranks: Vec<Vec<Bound<'_, PyAny>>>,
        streams: Option<Vec<usize>>,
    ) -> PyResult<()> {
        let mut arrays = Vec::with_capacity(ranks.len());
        let mut capsules = Vec::new();
        for (index, objects) in ranks.iter().enumerate() {
            let mut rank = Vec::with_capacity(objects.len());
            for (position, object) in objects.iter().enumerate() {
                let what = || format!("array #{position} of rank #{index}");
                let (array, capsule) = dlpack::import(object, what)?;
                rank.push(array);
                capsules.push(capsule);
            }
            arrays.push(rank);
        }
        let world = default_world(&arrays, self.compiled.pool_streams())?;
        let compiled = self.compiled.clone();
        // The interpreter's signal handlers run only with its lock: the
        // waiting thread takes it every `interrupt::POLL` to run them, and
        // an exception they raise (KeyboardInterrupt) stops the ranks.
        let raised: Mutex<Option<PyErr>> = Mutex::new(None);
        let check = || {
            let error = Python::attach(|py| py.check_signals().err())?;
            let reason = Python::attach(|py| match error.get_type(py).name() {
                Ok(name) => format!("{name} (a Python signal handler raised it)"),
                Err(_) => "a Python signal handler raised an exception".into(),
            });
            *raised.lock().unwrap_or_else(PoisonError::into_inner) = Some(error);
            Some(reason)
        };
        // `closed` waits for the world's lock: never with the interpreter's.
        let (result, closed) = py.detach(|| {
            let result = hir_runtime::interrupt::checking(&check, || {
                world.run(&compiled, &arrays, streams.as_deref())
            });
            (result, world.closed().is_some())
        });
        if closed {
            // A rank left running its program may still use its code and
            // these arrays: they live as long as the process.
            std::mem::forget(capsules);
            std::mem::forget(compiled);
        } else {
            drop(capsules);
        }
        if let Some(error) = raised.into_inner().unwrap_or_else(PoisonError::into_inner) {
            return Err(error);
        }
        match result {
            Ok(()) => Ok(()),
            Err(Failure::Usage(message)) => Err(PyValueError::new_err(message)),
            Err(Failure::Run(error)) => Err(run_error(py, &error)),
            Err(Failure::Closed(why)) => Err(HirError::new_err(format!(
                "this world is closed: {why} (hir.init makes a new one; in a job, \
                 hir.init_from_env or hir.init_from_torch)"
            ))),
        }
    }
}

/// The `RunError` exception of `error`, with its rank, op and every error.
fn run_error(py: Python<'_>, error: &hir_runtime::RunError) -> PyErr {
    let exception = RunError::new_err(error.to_string());
    let value = exception.value(py);
    let first = error.first();
    let errors: Vec<(usize, String, String)> = error
        .errors
        .iter()
        .map(|error| (error.rank, error.op.clone(), error.error.to_string()))
        .collect();
    let set = value
        .setattr("rank", first.rank)
        .and_then(|()| value.setattr("op", first.op.clone()))
        .and_then(|()| value.setattr("errors", errors));
    match set {
        Ok(()) => exception,
        Err(error) => error,
    }
}

/// Parses, lowers with `hir-lower`'s `options` (each `(name, value)`, `_` for `-`
/// in names) and JIT-compiles `source` (named `name` in diagnostics).
#[pyfunction(name = "compile")]
fn compile_program(
    py: Python<'_>,
    source: &str,
    name: &str,
    options: Vec<(String, String)>,
) -> PyResult<Program> {
    let mut lower = LowerOptions::default();
    for (option, value) in &options {
        lower
            .set(&option.replace('_', "-"), value)
            .map_err(PyValueError::new_err)?;
    }
    lower.check().map_err(PyValueError::new_err)?;
    let compiled = py
        .detach(|| compile(source, name, &lower))
        .map_err(|error| CompileError::new_err(format!("{error:#}")))?;
    Ok(Program {
        compiled: Arc::new(compiled),
    })
}

/// `source`'s entry as its forward and backward programs' texts (see
/// `hir::differentiate`), and how many results the entry has; `wrt` the
/// arguments that get gradients (None: every floating-point one), `saved`
/// `fusion-differentiate`'s option.
#[pyfunction]
fn differentiate(
    py: Python<'_>,
    source: &str,
    name: &str,
    wrt: Option<Vec<usize>>,
    saved: &str,
) -> PyResult<(String, String, usize)> {
    let saved = Saved::parse("saved", saved).map_err(PyValueError::new_err)?;
    let made = py
        .detach(|| hir::differentiate::differentiate(source, name, wrt.as_deref(), saved))
        .map_err(|error| CompileError::new_err(format!("{error:#}")))?;
    Ok((made.forward, made.backward, made.results))
}

#[pyfunction]
fn init(world_size: usize, backend_name: &str, num_streams: usize, timeout_s: f64) -> PyResult<()> {
    let backend = backend(backend_name)?;
    let timeout = timeout(timeout_s)?;
    // Bounded as `hir-run -n` and `--num-streams` are: the ranks' threads
    // and tables of a larger world would not fit in memory.
    if !(1..=MAX_RANKS).contains(&world_size) {
        return Err(PyValueError::new_err(format!(
            "world_size must be from 1 to {MAX_RANKS}, not {world_size}"
        )));
    }
    check_streams(num_streams)?;
    start_world(|| World::threads(backend, world_size, num_streams, timeout))
}

/// Makes the world this process's rank of the job that `vars` (environment
/// variables: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, ...) describe,
/// meeting the others at HIR's own store.
#[pyfunction]
fn init_process(
    py: Python<'_>,
    vars: HashMap<String, String>,
    backend_name: &str,
    num_streams: usize,
    timeout_s: f64,
) -> PyResult<()> {
    let backend = backend(backend_name)?;
    let timeout = timeout(timeout_s)?;
    check_streams(num_streams)?;
    let env = world::env(|name| vars.get(name).cloned());
    py.detach(|| start_world(|| World::process(env?, backend, num_streams, timeout)))
}

/// Makes the world rank `rank` of `world_size` processes that meet at
/// `store`, a `torch.distributed.Store` (the job's, under a prefix of
/// HIR's), on GPU `local_rank` for cuda.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn init_torch_store(
    py: Python<'_>,
    store: Bound<'_, PyAny>,
    rank: usize,
    world_size: usize,
    local_rank: usize,
    backend_name: &str,
    num_streams: usize,
    timeout_s: f64,
) -> PyResult<()> {
    let backend = backend(backend_name)?;
    let timeout = timeout(timeout_s)?;
    check_streams(num_streams)?;
    if rank >= world_size {
        return Err(PyValueError::new_err(format!(
            "rank {rank} is not below the world size {world_size}"
        )));
    }
    let store = store::TorchStore::new(store)?;
    let place = (rank, world_size, local_rank);
    py.detach(|| {
        start_world(|| World::over_torch_store(store, place, backend, num_streams, timeout))
    })
}

fn check_streams(num_streams: usize) -> PyResult<()> {
    if !(1..=MAX_STREAMS).contains(&num_streams) {
        return Err(PyValueError::new_err(format!(
            "num_streams must be from 1 to {MAX_STREAMS}, not {num_streams}"
        )));
    }
    Ok(())
}

/// The world: `(backend, world size, this process's ranks, pool streams)`,
/// or `None` before one is made.
#[pyfunction(name = "world")]
fn world_info() -> Option<(&'static str, usize, Vec<usize>, usize)> {
    current_world().map(|world| {
        (
            world.backend.name(),
            world.size(),
            world.local_ranks(),
            world.num_streams,
        )
    })
}

/// Makes calls raise `why` until an init succeeds: an init that failed
/// before it reached the runtime (`hir.init_from_torch` without a job).
#[pyfunction]
fn fail(py: Python<'_>, why: String) {
    py.detach(|| set_world(Slot::Failed(why)));
}

/// Tells the other ranks of this process's job (if the world is a rank of
/// one) that its call failed with `message`: a rank that raises before its
/// collectives are posted would otherwise leave them waiting until their
/// timeouts.
#[pyfunction]
fn post_failure(py: Python<'_>, message: &str) {
    if let Some(world) = current_world() {
        py.detach(|| world.post_failure(message));
    }
}

/// Drops the world (a rank of a job leaves it); the next call makes the
/// default world.
#[pyfunction]
fn shutdown(py: Python<'_>) {
    py.detach(|| set_world(Slot::Default));
}

#[pymodule]
fn _native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    log::init();
    let py = module.py();
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    module.add("HirError", py.get_type::<HirError>())?;
    module.add("CompileError", py.get_type::<CompileError>())?;
    module.add("RunError", py.get_type::<RunError>())?;
    module.add_class::<Program>()?;
    module.add_function(wrap_pyfunction!(compile_program, module)?)?;
    module.add_function(wrap_pyfunction!(differentiate, module)?)?;
    module.add_function(wrap_pyfunction!(init, module)?)?;
    module.add_function(wrap_pyfunction!(init_process, module)?)?;
    module.add_function(wrap_pyfunction!(init_torch_store, module)?)?;
    module.add_function(wrap_pyfunction!(world_info, module)?)?;
    module.add_function(wrap_pyfunction!(shutdown, module)?)?;
    module.add_function(wrap_pyfunction!(fail, module)?)?;
    module.add_function(wrap_pyfunction!(post_failure, module)?)?;
    Ok(())
}
