//! Compile and run: a program's text parsed, lowered and JIT-compiled as
//! `hir-run` does it ([`crate::program`], [`crate::jit`]), with MLIR's
//! diagnostics collected into the error instead of printed; then run on the
//! ranks of a runtime world with the caller's arrays as its arguments,
//! zero-copy.
//!
//! ```no_run
//! use hir::compile::{Array, LowerOptions, compile};
//! use hir::runtime::{Backend, World, world::Config};
//! let program = compile(&std::fs::read_to_string("sum.mlir")?, "sum.mlir", &LowerOptions::default())?;
//! let world = World::start(&Config::new(Backend::Cpu, 4, program.pool_streams()))?;
//! // Per rank: each input's local shard, then one array per output.
//! let mut data: Vec<Vec<Vec<f32>>> = /* ... */ vec![];
//! let arrays: Vec<Vec<Array>> = data.iter_mut().map(|rank| {
//!     rank.iter_mut().zip(program.parameters()).zip(program.dtypes())
//!         .map(|((values, (_, shape)), &dtype)| Array::of(values.as_mut_ptr(), shape.clone(), dtype))
//!         .collect()
//! }).collect();
//! program.run(&world, &[0, 1, 2, 3], &arrays)?;
//! # Ok::<(), anyhow::Error>(())
//! ```

pub use crate::arguments::{Arguments, Array};
use crate::cache::Cache;
use crate::jit::{Engine, Packed};
use crate::program::{self, Param, Signature};
use anyhow::{Context as _, Result, anyhow};
pub use hir_abi::DType;
pub use hir_passes::LowerOptions;
use hir_runtime::bounds::Registration;
use hir_runtime::{Device, RunError, cuda};
use melior::ir::Module;
use std::ffi::c_void;
use std::path::Path;
use std::time::{Duration, Instant};

/// A program ready to run on any rank of a world.
pub struct Compiled {
    /// Owns the code `entry` points into.
    _engine: Engine,
    pub entry: Packed,
    pub signature: Signature,
    /// How it was lowered.
    pub options: LowerOptions,
    /// How long each step of its compilation took, in order.
    pub stages: Vec<Stage>,
    /// [`Compiled::parameters`], made once: every call checks its arrays
    /// against them.
    parameters: Vec<(String, Vec<usize>)>,
    /// [`Compiled::dtypes`], likewise.
    dtypes: Vec<hir_abi::DType>,
}

// SAFETY: the engine is only destroyed (on drop), never changed, once
// built; its compiled code and `entry` may be called from any thread, as
// hir-run's rank threads do.
unsafe impl Send for Compiled {}
// SAFETY: as above: nothing of it is mutated after construction.
unsafe impl Sync for Compiled {}

/// The streams of a pool a world makes for a program that does not say
/// (`num-streams=0`: its loops rotate over all the pool has).
pub const DEFAULT_POOL_STREAMS: usize = 4;

/// A program's text, and the name its diagnostics' locations use.
#[derive(Clone, Copy, Debug)]
pub enum Source<'a> {
    /// Text named `name` (a file name, or `<string>`).
    Text { text: &'a str, name: &'a str },
    /// A `.mlir` file, read and parsed by MLIR (locations name the file).
    File(&'a Path),
}

/// What compiling shows as it goes; by default nothing: MLIR's diagnostics
/// are collected into the error.
#[derive(Clone, Copy, Debug, Default)]
pub struct Report {
    /// Diagnostics printed on stderr as MLIR emits them (a command-line
    /// tool), instead of collected into the error.
    pub print_diagnostics: bool,
    /// The IR printed on stdout after each lowering step.
    pub print_ir: bool,
}

/// One step of a compilation and how long it took.
#[derive(Clone, Copy, Debug)]
pub struct Stage {
    pub name: &'static str,
    pub time: Duration,
}

/// Times each step of a compilation, logging each as its own duration.
struct Stages {
    last: Instant,
    done: Vec<Stage>,
}

impl Stages {
    fn start() -> Stages {
        Stages {
            last: Instant::now(),
            done: Vec::new(),
        }
    }

    /// Ends step `name`, begun when the previous one ended.
    fn end(&mut self, name: &'static str) {
        let now = Instant::now();
        let time = now - self.last;
        self.last = now;
        tracing::debug!(
            stage = name,
            ms = %format!("{:.3}", time.as_secs_f64() * 1e3),
            "compile"
        );
        self.done.push(Stage { name, time });
    }
}

/// Compiles `source` (named `name` in diagnostics) lowered with `options`.
pub fn compile(source: &str, name: &str, options: &LowerOptions) -> Result<Compiled> {
    compile_source(
        Source::Text { text: source, name },
        options,
        Report::default(),
    )
}

/// Parses, imports (a program of upstream `shard` ops), lowers with
/// `options` and JIT-compiles `source`: the one road from a program's text
/// to an entry every rank can call, which `hir-run`, `hir-bench` and the
/// Python package all take.
pub fn compile_source(
    source: Source<'_>,
    options: &LowerOptions,
    report: Report,
) -> Result<Compiled> {
    options.check().map_err(|error| anyhow!("{error}"))?;
    let mut stages = Stages::start();
    let context = crate::context::registered_context();
    let diagnostics = crate::context::Collected::attach(&context, report.print_diagnostics);
    let with_diagnostics = |error| diagnostics.add_to(error);
    let file_text: String;
    let (module, name, text) = match source {
        Source::Text { text, name } => (
            program::parse_source(&context, text, name),
            name.to_owned(),
            text,
        ),
        Source::File(path) => {
            // The text keys the compile cache; MLIR parses the file itself,
            // so that locations name it.
            file_text = String::from_utf8_lossy(&program::read(path)?).into_owned();
            (
                program::parse(&context, path),
                path.display().to_string(),
                file_text.as_str(),
            )
        }
    };
    let mut module = module.map_err(with_diagnostics)?;
    stages.end("parse");
    if program::import(&context, &mut module, report.print_ir).map_err(with_diagnostics)? {
        tracing::debug!("imported the shard program into fusion");
    }
    stages.end("import");
    let signature = program::entry(&module)
        .and_then(|function| program::signature(&module, &function))
        .map_err(with_diagnostics)?;
    if report.print_ir {
        println!("// ----- input\n{}", module.as_operation());
    }
    // A hit in the compile cache skips the lowering and the JIT's code
    // generation; --print-ir prints what the lowering does, so it lowers.
    let cache = if report.print_ir {
        Cache::disabled()
    } else {
        Cache::from_env()
    };
    let lower = |module: &mut Module| -> Result<()> {
        if signature.fusion {
            program::lower_to_host(&context, module, &signature, options, report.print_ir)?;
            stages.end("hir-lower");
        }
        program::lower_to_llvm(&context, module, report.print_ir)?;
        stages.end("llvm");
        Ok(())
    };
    let engine = cache
        .jit(
            text,
            &options.render(),
            &mut module,
            lower,
            &hir_runtime::symbols(),
        )
        .map_err(with_diagnostics)?;
    let symbol = format!("_mlir_ciface_{}", &signature.name[1..]);
    let entry = engine
        .lookup(&symbol)
        .with_context(|| format!("compiling {name}"))?;
    stages.end("jit");
    Ok(Compiled {
        _engine: engine,
        entry,
        parameters: parameters(&signature),
        dtypes: signature
            .inputs
            .iter()
            .chain(&signature.outputs)
            .map(|param| param.dtype)
            .collect(),
        signature,
        options: options.clone(),
        stages: stages.done,
    })
}

/// What one rank passes, in order: each input's local shard, then one
/// buffer per output (a fusion program), or every argument (host IR).
fn parameters(signature: &Signature) -> Vec<(String, Vec<usize>)> {
    let local =
        |kind: &str, index: usize, param: &Param| (format!("{kind} #{index}"), param.local_shape());
    let inputs = signature.inputs.iter().enumerate();
    let outputs = signature.outputs.iter().enumerate();
    inputs
        .map(|(index, param)| local("input", index, param))
        .chain(outputs.map(|(index, param)| local("output", index, param)))
        .collect()
}

impl Compiled {
    /// The streams of the pool a world made for this program has.
    pub fn pool_streams(&self) -> usize {
        match self.options.num_streams {
            0 => DEFAULT_POOL_STREAMS,
            streams => streams,
        }
    }

    /// What one rank passes, in order: each input's local shard, then one
    /// buffer per output (a fusion program), or every argument (host IR).
    pub fn parameters(&self) -> &[(String, Vec<usize>)] {
        &self.parameters
    }

    /// The element type of every parameter, in [`Compiled::parameters`] order.
    pub fn dtypes(&self) -> &[hir_abi::DType] {
        &self.dtypes
    }
}

/// Why [`Compiled::run`] did not run or failed.
#[derive(Debug)]
pub enum Failure {
    /// The arrays do not fit the program or the world.
    Usage(String),
    /// A rank failed: the runtime's errors, each with its rank and op.
    Run(RunError),
    /// The world runs nothing more ([`crate::World`]): why.
    Closed(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Usage(message) => f.write_str(message),
            Failure::Run(error) => write!(f, "{error}"),
            Failure::Closed(why) => write!(f, "this world is closed: {why}"),
        }
    }
}

impl std::error::Error for Failure {}

/// What a world runs on each rank: the call, returning the registrations
/// of its arguments.
pub type Body<'a> =
    dyn Fn(&dyn Device) -> hir_runtime::error::Result<Vec<Registration>> + Sync + 'a;

impl Compiled {
    /// Runs the program on every rank `world` holds in this process, rank
    /// `ranks[i]` on `arrays[i]` (its [`Compiled::parameters`], in order),
    /// until their work is done. The arrays are the arguments, registered
    /// with the rank for the views' checks; nothing is copied. Wrong shapes
    /// or types are an error before anything runs.
    pub fn run(
        &self,
        world: &hir_runtime::World,
        ranks: &[usize],
        arrays: &[Vec<Array>],
    ) -> Result<(), Failure> {
        self.call(ranks, arrays, |body| world.run(body))
    }

    /// Enqueues the program on every rank `world` holds in this process,
    /// rank `ranks[i]` on `arrays[i]` with the caller's CUDA stream
    /// `streams[i]` as its stream 0, as a library op is enqueued on its
    /// caller's stream: the work runs after what is queued on that stream
    /// and later work queued there runs after it; this returns without
    /// waiting for it ([`cuda::CudaDevice::on_stream`]). The arrays must
    /// stay alive until that stream has passed the call. A failure on the
    /// GPU is reported by a later call at the latest.
    pub fn enqueue(
        &self,
        world: &cuda::World,
        ranks: &[usize],
        arrays: &[Vec<Array>],
        streams: &[cuda::CallerStream],
    ) -> Result<(), Failure> {
        if streams.len() != ranks.len() {
            return Err(Failure::Usage(format!(
                "{} caller streams were given for {} ranks",
                streams.len(),
                ranks.len()
            )));
        }
        let streams = world
            .local_ranks()
            .iter()
            .map(|local| {
                ranks
                    .iter()
                    .position(|rank| rank == local)
                    .map(|index| streams[index])
                    .ok_or_else(|| {
                        Failure::Usage(format!("rank {local} of this process was given no arrays"))
                    })
            })
            .collect::<Result<Vec<_>, Failure>>()?;
        self.call(ranks, arrays, |body| {
            world.run_on(&streams, |device| body(device))
        })
    }

    /// Checks the arrays, then runs the entry on each rank through `run`.
    fn call(
        &self,
        ranks: &[usize],
        arrays: &[Vec<Array>],
        run: impl FnOnce(
            &Body<'_>,
        )
            -> Result<Vec<hir_runtime::error::Result<Vec<Registration>>>, RunError>,
    ) -> Result<(), Failure> {
        if arrays.len() != ranks.len() {
            return Err(Failure::Usage(format!(
                "this process runs {} rank{} of the world, but arrays were given for {}",
                ranks.len(),
                if ranks.len() == 1 { "" } else { "s" },
                arrays.len()
            )));
        }
        for (&rank, arrays) in ranks.iter().zip(arrays) {
            self.check(rank, arrays).map_err(Failure::Usage)?;
        }
        let calls: Vec<Call> = arrays.iter().map(|arrays| Call::new(arrays)).collect();
        let body = |device: &dyn Device| -> hir_runtime::error::Result<Vec<Registration>> {
            let index = ranks
                .iter()
                .position(|&rank| rank == device.rank())
                .expect("the world runs only the given ranks");
            let call = &calls[index];
            let known = call.register(device)?;
            // SAFETY: the descriptors point at arrays of the entry's shapes
            // and types (checked above), which the caller keeps alive until
            // the rank's work is done (`run` waits for it; `enqueue`'s
            // caller keeps them until its stream has passed the call).
            // A failed or interrupted rank leaves its program at its next
            // runtime call (`Packed::call`).
            unsafe { self.entry.call(call.arguments()) };
            Ok(known)
        };
        let results = run(&body).map_err(Failure::Run)?;
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

    /// Whether `arrays` are the local shards `rank` passes.
    pub fn check(&self, rank: usize, arrays: &[Array]) -> Result<(), String> {
        let parameters = self.parameters();
        if arrays.len() != parameters.len() {
            return Err(format!(
                "{} takes {} arrays on a rank ({} inputs, then {} outputs), got {}",
                self.signature.name,
                parameters.len(),
                self.signature.inputs.len(),
                self.signature.outputs.len(),
                arrays.len()
            ));
        }
        for ((array, (what, shape)), &dtype) in arrays.iter().zip(parameters).zip(self.dtypes()) {
            if array.shape != *shape || array.dtype != dtype {
                return Err(format!(
                    "rank {rank}: {what} of {} is a {:?} {} array, but it takes a {shape:?} {} \
                     array (a rank's local shard)",
                    self.signature.name,
                    array.shape,
                    array.dtype.mlir(),
                    dtype.mlir()
                ));
            }
        }
        Ok(())
    }
}

/// One rank's arguments, packed for the entry, and the memory to register.
struct Call {
    arguments: Arguments,
    /// Byte ranges of the arrays, overlapping ones merged.
    ranges: Vec<(usize, usize)>,
}

impl Call {
    fn new(arrays: &[Array]) -> Call {
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
            arguments: Arguments::new(arrays),
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
        self.arguments.packed()
    }
}
