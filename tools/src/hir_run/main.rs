//! `hir-run`: lowers a fusion program (or host IR) to LLVM, JIT-compiles it
//! with MLIR's ExecutionEngine and runs it on N ranks of the runtime, with
//! inputs from `.npy` files or seeded random values, outputs to `.npy`, and
//! `--check` against a reference evaluation of the fusion program.
//!
//! The host program's calling convention (what `convert-fusion-to-host`
//! makes): its arguments are the rank's local shard of each input, then one
//! preallocated buffer per output; it returns nothing. The global shapes and
//! distributions come from the fusion program: a `didx` axis of extent D over
//! a mesh of D devices is held as slice `j` by the rank at mesh position `j`.
//! For host IR every argument is per-rank and random.

mod cli;
mod jit;
mod launch;
mod program;
mod reference;
mod rendezvous;
mod tensor;

use anyhow::{Context as _, Result, anyhow, bail};
use cli::{Backend, Command, Options};
use hir_runtime::{
    abi::DType,
    cpu::{Config, World},
    npy,
};
use melior::{
    Context,
    diagnostic::{Diagnostic, DiagnosticSeverity},
};
use program::{Param, Signature};
use std::{ffi::c_void, path::Path, process::ExitCode, time::Instant};
use tensor::{Rng, Tensor};

fn main() -> ExitCode {
    let command = match cli::parse(std::env::args().skip(1)) {
        Ok(command) => command,
        Err(error) => {
            eprintln!("hir-run: error: {error:#}");
            return ExitCode::from(2);
        }
    };
    match command {
        Command::Help => {
            println!("{}", cli::USAGE);
            ExitCode::SUCCESS
        }
        Command::Run(options) => {
            // Ranks in processes: a launcher, or one rank of it.
            if let Some(code) = launch::dispatch(&options, run) {
                return code;
            }
            match run(&options) {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) => {
                    eprintln!("hir-run: error: {error:#}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}

fn run(options: &Options) -> Result<()> {
    if options.backend == Backend::Cuda {
        bail!("the cuda backend is not part of this build of the runtime yet; use --backend cpu");
    }
    let context = Context::new();
    context.attach_diagnostic_handler(|diagnostic| {
        print_diagnostic(&diagnostic);
        true
    });
    hir::register_all(&context);
    hir::passes::register_all();
    // SAFETY: the context is valid.
    unsafe { hir::dialects::ffi::hirRegisterLLVMTranslations(context.to_raw()) };

    let mut module = program::parse(&context, &options.program)?;
    let function = program::entry(&module)?;
    let signature = program::signature(&module, &function)?;
    if !signature.fusion {
        if options.check {
            bail!(
                "--check needs a fusion program: host IR has no global semantics to compare with"
            );
        }
        if !options.inputs.is_empty() {
            bail!(
                "--input needs a fusion program: host IR has no global shapes (its inputs are random)"
            );
        }
    }
    check_meshes(&signature, options.ranks)?;

    // Global inputs, and the reference, before the module is lowered in place.
    let globals = if signature.fusion {
        global_inputs(&signature, options)?
    } else {
        Vec::new()
    };
    let reference = if options.check {
        Some(reference::evaluate(function, &globals)?)
    } else {
        None
    };

    program::lower(
        &context,
        &mut module,
        &signature,
        &options.p2p,
        options.print_ir,
    )?;
    let engine = jit::Engine::new(&module, &hir_runtime::symbols())?;
    let packed = engine.lookup(&format!("_mlir_ciface_{}", &signature.name[1..]))?;

    let mut ranks: Vec<RankCall> = (0..options.ranks)
        .map(|rank| rank_buffers(&signature, &globals, rank, options.seed))
        .collect();
    for call in &mut ranks {
        call.pack();
    }
    let calls = Calls(&ranks);
    let config = Config {
        trace: options.trace.is_some(),
        ..Config::new(options.ranks, options.num_streams)
    };
    let world = World::new(config).map_err(|error| anyhow!("cannot start the runtime: {error}"))?;
    let launch = || {
        world
            .run(|device| {
                // SAFETY: each rank passes its own buffers, laid out as the
                // entry's descriptors, to the packed wrapper.
                unsafe { packed(calls.arguments(device.rank())) }
            })
            .map_err(|error| anyhow!("the run failed: {error}"))
    };
    launch()?;
    println!(
        "ran {} on {} rank{} ({} streams each)",
        signature.name,
        options.ranks,
        if options.ranks == 1 { "" } else { "s" },
        options.num_streams
    );
    let mut mismatch = false;
    if signature.fusion {
        let outputs = assemble(&signature, &ranks);
        if let Some(reference) = &reference {
            for (index, (output, expected)) in outputs.iter().zip(reference).enumerate() {
                let dtype = signature.outputs[index].dtype;
                let error = tensor::relative_error(output, expected);
                let tolerance = tensor::tolerance(dtype);
                let verdict = if error <= tolerance { "ok" } else { "MISMATCH" };
                println!(
                    "result{index}: relative error {error:.3e} (tolerance {tolerance:.0e} for {}): {verdict}",
                    dtype.mlir()
                );
                mismatch |= error > tolerance;
            }
        }
        if let Some(dir) = &options.output_dir {
            for (index, output) in outputs.iter().enumerate() {
                write_npy(
                    &dir.join(format!("result{index}.npy")),
                    output,
                    signature.outputs[index].dtype,
                )?;
            }
        }
    } else if let Some(dir) = &options.output_dir {
        for (rank, call) in ranks.iter().enumerate() {
            for (index, buffer) in call.buffers.iter().enumerate() {
                write_npy(
                    &dir.join(format!("arg{index}.rank{rank}.npy")),
                    &buffer.read(),
                    buffer.dtype,
                )?;
            }
        }
    }
    if options.iters > 0 {
        let mut times = Vec::with_capacity(options.iters);
        let began = Instant::now();
        for iteration in 1..=options.iters {
            let start = Instant::now();
            launch()?;
            times.push(start.elapsed().as_secs_f64() * 1e3);
            // Long runs show progress on stderr, where it does not mix with results.
            if began.elapsed().as_secs() >= 2 {
                eprint!("\rhir-run: iteration {iteration}/{}", options.iters);
                if iteration == options.iters {
                    eprintln!();
                }
            }
        }
        let mean = times.iter().sum::<f64>() / times.len() as f64;
        let min = times.iter().copied().fold(f64::INFINITY, f64::min);
        println!(
            "{} iterations: mean {mean:.3} ms, min {min:.3} ms",
            options.iters
        );
    }
    if let Some(path) = &options.trace {
        world
            .write_chrome_trace(path)
            .with_context(|| format!("cannot write the trace {}", path.display()))?;
    }
    if mismatch {
        bail!("the outputs differ from the reference");
    }
    Ok(())
}

/// Prints a diagnostic as `file:line:col: error: message`, with its notes.
fn print_diagnostic(diagnostic: &Diagnostic) {
    let location = diagnostic.location().to_string();
    // `loc("file":line:col)` reads as `file:line:col`.
    let location = location
        .strip_prefix("loc(")
        .and_then(|location| location.strip_suffix(')'))
        .map_or(location.clone(), |location| location.replacen('"', "", 2));
    let severity = match diagnostic.severity() {
        DiagnosticSeverity::Error => "error",
        DiagnosticSeverity::Warning => "warning",
        DiagnosticSeverity::Note => "note",
        DiagnosticSeverity::Remark => "remark",
    };
    eprintln!("{location}: {severity}: {diagnostic}");
    for index in 0..diagnostic.note_count() {
        if let Ok(note) = diagnostic.note(index) {
            print_diagnostic(&note);
        }
    }
}

/// Every mesh of the entry's values must be the ranks of the run.
fn check_meshes(signature: &Signature, ranks: usize) -> Result<()> {
    for param in signature.inputs.iter().chain(&signature.outputs) {
        let Some(placement) = &param.placement else {
            continue;
        };
        let mut devices = placement.devices.clone();
        devices.sort_unstable();
        if devices != (0..ranks).collect::<Vec<_>>() {
            bail!(
                "{} uses mesh @{} of devices {:?}, but -n {ranks} runs ranks 0..{}: run it with -n {} on devices 0..{}",
                signature.name,
                placement.mesh,
                placement.devices,
                ranks - 1,
                devices.len(),
                devices.len() - 1
            );
        }
    }
    Ok(())
}

/// The global value of every input: from `--input` or seeded random.
fn global_inputs(signature: &Signature, options: &Options) -> Result<Vec<Tensor>> {
    if let Some((index, _)) = options
        .inputs
        .iter()
        .find(|(index, _)| *index >= signature.inputs.len())
    {
        bail!(
            "--input names arg{index}, but {} takes {} arguments",
            signature.name,
            signature.inputs.len()
        );
    }
    signature
        .inputs
        .iter()
        .enumerate()
        .map(|(index, param)| {
            match options
                .inputs
                .iter()
                .rev()
                .find(|(input, _)| *input == index)
            {
                Some((_, path)) => read_npy(path, param, index),
                None => {
                    let mut rng = Rng::new(
                        options
                            .seed
                            .wrapping_mul(0x1_0000_0001)
                            .wrapping_add(index as u64),
                    );
                    Ok(Tensor::random(param.shape.clone(), param.dtype, &mut rng))
                }
            }
        })
        .collect()
}

fn read_npy(path: &Path, param: &Param, index: usize) -> Result<Tensor> {
    let array = npy::read(path).map_err(|error| anyhow!("--input arg{index}: {error}"))?;
    if array.shape != param.shape {
        bail!(
            "--input arg{index}: {} has shape {:?}, but argument #{index} has the global shape {:?}",
            path.display(),
            array.shape,
            param.shape
        );
    }
    let values = array.cast(param.dtype).to_f32();
    Ok(Tensor::new(
        array.shape,
        values.into_iter().map(f64::from).collect(),
    ))
}

fn write_npy(path: &Path, tensor: &Tensor, dtype: DType) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let values: Vec<f32> = tensor.data.iter().map(|&value| value as f32).collect();
    npy::write(path, &npy::Array::from_f32(dtype, &tensor.shape, &values))
        .map_err(|error| anyhow!("{error}"))
}

/// One argument of one rank: its elements in a buffer of the element type,
/// and the ranked memref descriptor the entry's C interface takes.
struct Buffer {
    dtype: DType,
    shape: Vec<usize>,
    /// `u64`s, so that every element type is aligned.
    storage: Vec<u64>,
    /// `{ allocated, aligned, offset, sizes[rank], strides[rank] }`.
    descriptor: Vec<i64>,
}

impl Buffer {
    fn new(tensor: &Tensor, dtype: DType) -> Self {
        let values: Vec<f32> = tensor.data.iter().map(|&value| value as f32).collect();
        let bytes = npy::Array::from_f32(dtype, &tensor.shape, &values).data;
        let mut storage = vec![0u64; bytes.len().div_ceil(8).max(1)];
        // SAFETY: `storage` holds at least `bytes.len()` bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                storage.as_mut_ptr().cast::<u8>(),
                bytes.len(),
            )
        };
        let address = storage.as_mut_ptr() as i64;
        let mut descriptor = vec![address, address, 0];
        descriptor.extend(tensor.shape.iter().map(|&extent| extent as i64));
        descriptor.extend(tensor.strides().iter().map(|&stride| stride as i64));
        Self {
            dtype,
            shape: tensor.shape.clone(),
            storage,
            descriptor,
        }
    }

    fn read(&self) -> Tensor {
        let len: usize = self.shape.iter().product();
        // SAFETY: `storage` holds `len` elements of `dtype`.
        let bytes = unsafe {
            std::slice::from_raw_parts(self.storage.as_ptr().cast::<u8>(), len * self.dtype.size())
        };
        let array = npy::Array {
            dtype: self.dtype,
            shape: self.shape.clone(),
            data: bytes.to_vec(),
        };
        Tensor::new(
            self.shape.clone(),
            array.to_f32().into_iter().map(f64::from).collect(),
        )
    }
}

/// One rank's arguments, packed as the entry's `_mlir_ciface_` wrapper wants.
struct RankCall {
    buffers: Vec<Buffer>,
    /// A pointer to each descriptor.
    descriptors: Vec<*mut i64>,
    /// A pointer to each of `descriptors`.
    arguments: Vec<*mut c_void>,
}

impl RankCall {
    fn pack(&mut self) {
        self.descriptors = self
            .buffers
            .iter_mut()
            .map(|buffer| buffer.descriptor.as_mut_ptr())
            .collect();
        self.arguments = self
            .descriptors
            .iter_mut()
            .map(|descriptor| (descriptor as *mut *mut i64).cast())
            .collect();
    }
}

/// Every rank's call, shared with the rank threads: each uses its own only.
struct Calls<'a>(&'a [RankCall]);

// SAFETY: rank `r`'s thread is the only one to touch `self.0[r]`'s buffers.
unsafe impl Sync for Calls<'_> {}

impl Calls<'_> {
    fn arguments(&self, rank: usize) -> *mut *mut c_void {
        self.0[rank].arguments.as_ptr().cast_mut()
    }
}

/// Rank `rank`'s buffers: the shards of the global inputs and NaN-filled
/// outputs (a fusion program), or random values (host IR).
fn rank_buffers(signature: &Signature, globals: &[Tensor], rank: usize, seed: u64) -> RankCall {
    let position = |param: &Param| {
        param
            .placement
            .as_ref()
            .and_then(|placement| placement.devices.iter().position(|&device| device == rank))
    };
    let mut buffers = Vec::new();
    if signature.fusion {
        for (param, global) in signature.inputs.iter().zip(globals) {
            let didx = param
                .placement
                .as_ref()
                .and_then(|placement| placement.didx);
            let local = match (didx, position(param)) {
                (Some(axis), Some(index)) => global.slice(axis, index),
                _ => global.clone(),
            };
            buffers.push(Buffer::new(&local, param.dtype));
        }
        for param in &signature.outputs {
            let shape = param.local_shape();
            let len = shape.iter().product();
            buffers.push(Buffer::new(
                &Tensor::new(shape, vec![f64::NAN; len]),
                param.dtype,
            ));
        }
    } else {
        for (index, param) in signature.inputs.iter().enumerate() {
            let mut rng = Rng::new(
                seed.wrapping_mul(0x1_0000_0001)
                    .wrapping_add(((rank as u64) << 32) + index as u64),
            );
            buffers.push(Buffer::new(
                &Tensor::random(param.shape.clone(), param.dtype, &mut rng),
                param.dtype,
            ));
        }
    }
    RankCall {
        buffers,
        descriptors: Vec::new(),
        arguments: Vec::new(),
    }
}

/// The global value of every output: the `didx` slices in mesh order, or
/// the first device's copy.
fn assemble(signature: &Signature, ranks: &[RankCall]) -> Vec<Tensor> {
    let inputs = signature.inputs.len();
    signature
        .outputs
        .iter()
        .enumerate()
        .map(|(index, param)| {
            let placement = param.placement.as_ref();
            let devices: Vec<usize> =
                placement.map_or_else(|| vec![0], |placement| placement.devices.clone());
            let local = |device: usize| ranks[device].buffers[inputs + index].read();
            match placement.and_then(|placement| placement.didx) {
                Some(axis) => Tensor::concat(
                    &devices
                        .iter()
                        .map(|&device| local(device))
                        .collect::<Vec<_>>(),
                    axis,
                ),
                None => local(devices[0]),
            }
        })
        .collect()
}
