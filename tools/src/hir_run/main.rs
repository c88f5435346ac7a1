//! `hir-run`: lowers a fusion program (or host IR) to LLVM, JIT-compiles it
//! with MLIR's ExecutionEngine and runs it on N ranks of the runtime, with
//! inputs from `.npy` files or seeded random values, outputs to `.npy`, and
//! `--check` against a reference evaluation of the fusion program.
//!
//! The host program's calling convention (what `convert-fusion-to-host`
//! makes): its arguments are the rank's local shard of each input, then one
//! preallocated buffer per output; it returns nothing. The global shapes and
//! distributions come from the fusion program: a `didx` axis of extent E over
//! a mesh of D devices is split into D contiguous slices of E/D, slice `j`
//! held by the rank at mesh position `j`.
//! For host IR every argument is per-rank and random.

mod cli;
mod grad;
mod tune;

use anyhow::{Context as _, Result, anyhow, bail};
use cli::Options;
use hir::compile::{Compiled, Report, Source, compile_source};
use hir_abi::DType;
use hir_runtime::Backend;
use hir_runtime::npy;
use hir_runtime::world::Graphs;
use hir_tools::buffer::{Buffer, Calls, RankCall};
use hir_tools::inputs::{self, Inputs};
use hir_tools::launch::timed::{median, slowest_rank_and_host_times};
use hir_tools::launch::{self, Fingerprint, Fnv, Session};
use hir_tools::program::{self, Placement, Signature};
use hir_tools::ranks::Ranks as _;
use hir_tools::reference;
use hir_tools::stages::Stages;
use hir_tools::tensor::{self, Rng, Tensor};
use std::{
    path::{Path, PathBuf},
    process::ExitCode,
};

fn main() -> ExitCode {
    hir_tools::memory::exit_on_out_of_memory("hir-run");
    let options = hir_tools::args::parse_or_exit("hir-run", Options::parse_from);
    hir_tools::log::init("hir-run");
    // A dry run runs nothing, so it checks all it can without running:
    // here before any rank starts, or, in a rank (its launcher's, or
    // torchrun's), once it has joined the others, so that they learn
    // of its failure at once instead of waiting for it.
    let in_rank = launch::in_rank();
    if options.dry_run
        && !in_rank
        && let Err(error) = validate(&options)
    {
        eprintln!("hir-run: error: {error:#}");
        return ExitCode::FAILURE;
    }
    // Ranks in processes: a launcher, or one rank of it.
    let dispatched = launch::dispatch(
        &options.plan(),
        || fingerprint(&options),
        |joined| {
            if !options.dry_run {
                return run(&options);
            }
            validate(&options)?;
            if joined.rank == 0 {
                println!(
                    "dry run: the program verifies and lowers for {} ranks, which run the same program (hash {:016x}) with the same inputs and passed a barrier; nothing was executed",
                    joined.world, joined.hash
                );
            }
            Ok(())
        },
    );
    if let Some(code) = dispatched {
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

/// The program's hash (its bytes and every option that changes how it
/// lowers, what it computes or what the run does with it) and its `--input`
/// files (shapes and contents), which every rank in processes must agree on.
fn fingerprint(options: &Options) -> Result<Fingerprint> {
    let bytes = program::read(&options.program)?;
    let mut hash = Fnv::default();
    hash.write(b"hir-run program\0");
    hash.write(&bytes);
    let backend = options.backend.name();
    hash.write(
        format!(
            "\0backend={backend}\0ranks={}\0num-streams={}\0hir-lower={}\0seed={}\0\
             iters={}\0check={}\0expect={:?}\0checks={:?}\0graph={}\0variant={}\0",
            options.ranks,
            options.num_streams,
            options.lower().render(),
            options.seed,
            options.iters,
            options.check,
            options.expect,
            options.plan().checks,
            options.graph,
            options.variant,
        )
        .as_bytes(),
    );
    // The last --input of an argument wins, as in the run. Its contents are
    // part of what the ranks compare, as a hash of the file.
    let latest: std::collections::BTreeMap<usize, &PathBuf> = options
        .inputs
        .iter()
        .map(|(index, path)| (*index, path))
        .collect();
    let mut inputs = Vec::new();
    for (index, path) in latest {
        // One read gives both the array and the bytes its hash is of.
        let contents =
            npy::read_bytes(path).map_err(|error| anyhow!("--input arg{index}: {error}"))?;
        let array = npy::Array::from_npy(&contents)
            .map_err(|error| anyhow!("--input arg{index}: {}: {error}", path.display()))?;
        let mut file = Fnv::default();
        file.write(&contents);
        inputs.push(format!(
            "arg{index} {:?} {} (file hash {:016x})",
            array.shape,
            array.dtype.mlir(),
            file.finish()
        ));
    }
    Ok(Fingerprint {
        hash: hash.finish(),
        inputs: inputs.join(", "),
    })
}

/// The program compiled for the run: parsed, imported, lowered with the
/// run's options and JIT-compiled (`hir::compile`), its diagnostics printed
/// as they come; its signature checked against the options (`-n` against
/// its meshes).
fn compile(options: &Options) -> Result<Compiled> {
    let report = Report {
        print_diagnostics: true,
        print_ir: options.print_ir,
    };
    let compiled = compile_source(Source::File(&options.program), &options.lower(), report)?;
    let signature = &compiled.signature;
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
    check_meshes(signature, options.ranks)?;
    Ok(compiled)
}

/// What a dry run checks: the program compiles with the run's options.
fn validate(options: &Options) -> Result<()> {
    compile(options).map(drop)
}

/// The reference evaluation of the fusion program on `globals`: parsed
/// again, since the compiled module is lowered.
fn reference(options: &Options, globals: &[Tensor]) -> Result<Vec<Tensor>> {
    let context = hir_tools::context();
    let mut module = program::parse(&context, &options.program)?;
    program::import(&context, &mut module, false)?;
    reference::evaluate(program::entry(&module)?, globals)
}

fn run(options: &Options) -> Result<()> {
    if options.grad {
        return grad::check(options);
    }
    let mut stages = Stages::start();
    let compiled = compile(options)?;
    let signature = &compiled.signature;
    tracing::debug!(
        program = %options.program.display(),
        entry = %signature.name,
        fusion = signature.fusion,
        pipeline = %compiled.options.pipeline(),
        "compiled"
    );
    stages.done("compile");
    // Where the inputs come from (the --input files are read here, once);
    // each rank's are made only once its rank is known to run here.
    let inputs = if signature.fusion {
        Some(Inputs::new(signature, &options.inputs, options.seed)?)
    } else {
        None
    };
    // The global inputs and the reference only with --check.
    let reference = match &inputs {
        Some(inputs) if options.check => {
            let globals = (0..signature.inputs.len())
                .map(|index| inputs.global(index))
                .collect::<Result<Vec<_>>>()?;
            let reference = reference(options, &globals)?;
            stages.done("reference");
            Some(reference)
        }
        _ => None,
    };
    let session = Session::start(
        &options.plan(),
        options.num_streams,
        options.trace.is_some(),
    )?;
    stages.done("world");
    let runtime = &session.runtime;
    let local = session.peers.local_ranks(options.ranks);
    // Only the ranks of this process get buffers; the others' stay empty
    // (rank 0 gets theirs after the run, from share_results).
    let mut ranks: Vec<RankCall> = (0..options.ranks)
        .map(|_| RankCall::new(Vec::new()))
        .collect();
    // On GPUs the random inputs are made there, when placed.
    let on_device = options.backend == Backend::Cuda;
    for &rank in &local {
        ranks[rank] = rank_buffers(signature, inputs.as_ref(), rank, options.seed, on_device)?;
    }
    stages.done("inputs");
    for &rank in &local {
        for buffer in &mut ranks[rank].buffers {
            runtime.place(rank, buffer)?;
        }
        tracing::debug!(
            rank,
            buffers = ranks[rank].buffers.len(),
            "placed the arguments"
        );
    }
    stages.done("placement");
    for call in &mut ranks {
        call.pack();
    }
    let calls = Calls::new(&ranks);
    let variant = match options.tuning() {
        Some(free) if signature.fusion => {
            let variant = tune::choose(options, free, &compiled, &session, &calls)?;
            // The first run starts from the arguments as placed, its
            // outputs as fresh as the candidates found them.
            restore_arguments(&session, signature, &local, &mut ranks)?;
            stages.done("variant");
            variant
        }
        _ => None,
    };
    let packed = variant.as_ref().unwrap_or(&compiled).entry;
    // SAFETY: each rank passes its own buffers, laid out as the entry's
    // descriptors, to the packed wrapper.
    let call = |rank| {
        unsafe { packed.call(calls.arguments(rank)) };
    };
    let graphs = Graphs::new(options.ranks);
    let graphed = runtime.graphed_ranks(&graphs, call);
    let graph = options.graph && options.backend == Backend::Cuda;
    let each_rank = |rank| {
        if graph { graphed(rank) } else { call(rank) }
    };
    runtime.run_ranks(call)?;
    stages.done("first-run");
    if graph {
        // The checked outputs are the replay's own.
        restore_arguments(&session, signature, &local, &mut ranks)?;
        runtime.run_ranks(each_rank)?;
        tracing::debug!("captured and replayed as a CUDA graph");
        stages.done("graph");
    }
    for &rank in &local {
        for buffer in &mut ranks[rank].buffers {
            runtime.fetch(rank, buffer)?;
        }
    }
    // Whether the outputs are looked at; rank 0 of ranks in processes then
    // gets the other ranks' buffers, which it holds only from here.
    let outputs_used = options.check || options.expect.is_some() || options.output_dir.is_some();
    if outputs_used {
        session.share_results(&mut ranks)?;
    }
    // The tests' way to show that every rank's copy of an output is checked.
    let inputs = signature.inputs.len();
    for (rank, call) in ranks.iter_mut().enumerate() {
        if launch::rank::hook(rank, "corrupt-outputs") {
            for buffer in call.buffers.iter_mut().skip(inputs) {
                buffer.bytes_mut().fill(0);
            }
        }
    }
    if !session.peers.reports() {
        // Rank 0 of a multi-process run reports for all; the others still
        // take part in the timed runs and in gathering the trace.
        stages.done("results");
        stages.first_result();
        return time_and_trace(options, &session, each_rank);
    }
    println!(
        "ran {} on {} rank{} ({} streams each)",
        signature.name,
        options.ranks,
        if options.ranks == 1 { "" } else { "s" },
        options.num_streams
    );
    let mut mismatch = false;
    if signature.fusion {
        let outputs = if outputs_used {
            assemble(signature, &ranks)?
        } else {
            Vec::new()
        };
        if let Some(reference) = &reference {
            for (index, (output, expected)) in outputs.iter().zip(reference).enumerate() {
                let name = format!("result{index}");
                let dtype = signature.outputs[index].dtype;
                mismatch |= !agrees(&name, &output.value, expected, dtype);
                mismatch |= !copies_agree(&name, &output.copies, expected, dtype);
            }
        }
        if let Some(dir) = &options.expect {
            for (index, output) in outputs.iter().enumerate() {
                let name = format!("result{index}");
                let dtype = signature.outputs[index].dtype;
                let expected = read_expected(dir, &name, &output.value.shape)?;
                let what = format!("{name} against {}", dir.display());
                mismatch |= !agrees(&what, &output.value, &expected, dtype);
                mismatch |= !copies_agree(&what, &output.copies, &expected, dtype);
            }
        }
        if let Some(dir) = &options.output_dir {
            for (index, output) in outputs.iter().enumerate() {
                write_npy(
                    &dir.join(format!("result{index}.npy")),
                    &output.value,
                    signature.outputs[index].dtype,
                )?;
            }
        }
    } else {
        for (rank, call) in ranks.iter().enumerate() {
            for (index, buffer) in call.buffers.iter().enumerate() {
                let name = format!("arg{index}.rank{rank}");
                let value = buffer.read()?;
                if let Some(dir) = &options.expect {
                    let expected = read_expected(dir, &name, &value.shape)?;
                    let what = format!("{name} against {}", dir.display());
                    mismatch |= !agrees(&what, &value, &expected, buffer.dtype);
                }
                if let Some(dir) = &options.output_dir {
                    write_npy(&dir.join(format!("{name}.npy")), &value, buffer.dtype)?;
                }
            }
        }
    }
    stages.done("results");
    stages.first_result();
    time_and_trace(options, &session, each_rank)?;
    if mismatch {
        bail!("the outputs differ from what they were compared with");
    }
    Ok(())
}

/// Puts the arguments of the ranks in `local` back as they were placed,
/// before any run: the inputs from their host copies or made on the GPU
/// again (a run may write them), a fusion program's outputs NaN, so that
/// one the next run leaves unwritten shows.
fn restore_arguments(
    session: &Session,
    signature: &Signature,
    local: &[usize],
    ranks: &mut [RankCall],
) -> Result<()> {
    let inputs = signature.inputs.len();
    for &rank in local {
        for (index, buffer) in ranks[rank].buffers.iter_mut().enumerate() {
            if signature.fusion && index >= inputs {
                let nan = vec![0xff; buffer.bytes().len()];
                session.runtime.upload(rank, buffer, &nan)?;
            } else {
                session.runtime.restore(rank, buffer)?;
            }
        }
    }
    Ok(())
}

/// The `--iters` timed runs of `call` (each rank's) and the `--trace` file.
/// An iteration is timed as hir-bench and tools/torch-layer.py time one:
/// the GPU time between events on the caller's stream (cpu: the host time
/// until the rank's queues drain) of its slowest rank, after a barrier.
/// Its host time, launch and synchronization included, is printed beside.
fn time_and_trace(options: &Options, session: &Session, call: impl Fn(usize) + Sync) -> Result<()> {
    if options.iters > 0 {
        let (mut times, mut host) =
            slowest_rank_and_host_times(&session.runtime, &session.peers, 0, options.iters, call)?;
        for (iteration, time) in (1..).zip(&times) {
            tracing::debug!(iteration, ms = %format!("{time:.3}"), "timed run");
        }
        let mean = times.iter().sum::<f64>() / times.len() as f64;
        let host_median = median(&mut host);
        let slowest_median = median(&mut times);
        let min = times[0];
        if session.peers.reports() {
            println!(
                "{} iterations: median {slowest_median:.3} ms, mean {mean:.3} ms, min {min:.3} ms (slowest rank); host {host_median:.3} ms a call",
                options.iters
            );
        }
    }
    if let Some(path) = &options.trace {
        session.write_trace(path)?;
    }
    Ok(())
}

/// Whether `actual` is within `dtype`'s tolerance of `expected`, printed as
/// a line for `name`.
fn agrees(name: &str, actual: &Tensor, expected: &Tensor, dtype: DType) -> bool {
    let (ok, line) = comparison(name, actual, expected, dtype);
    println!("{line}");
    ok
}

/// [`agrees`] for the other ranks' copies of a replicated output: only a
/// copy that differs is printed, with the rank that holds it.
fn copies_agree(name: &str, copies: &[(usize, Tensor)], expected: &Tensor, dtype: DType) -> bool {
    let mut all = true;
    for (rank, copy) in copies {
        let (ok, line) = comparison(
            &format!("{name} (rank {rank}'s copy)"),
            copy,
            expected,
            dtype,
        );
        if !ok {
            println!("{line}");
            all = false;
        }
    }
    all
}

/// Whether `actual` is within `dtype`'s tolerance of `expected`, and the line
/// that says so.
fn comparison(name: &str, actual: &Tensor, expected: &Tensor, dtype: DType) -> (bool, String) {
    // NaN compares unordered, so a NaN expected value would pass any test:
    // it is a mismatch of its own (an actual NaN makes the error infinite).
    let not_finite = expected
        .data
        .iter()
        .filter(|value| !value.is_finite())
        .count();
    if not_finite > 0 {
        let line = format!(
            "{name}: {not_finite} of {} expected values are NaN or infinite: MISMATCH",
            expected.data.len()
        );
        return (false, line);
    }
    if !dtype.is_float() {
        // Integers are exact: every element equal.
        let differ = actual
            .data
            .iter()
            .zip(&expected.data)
            .filter(|(a, b)| a != b)
            .count();
        let verdict = if differ == 0 { "ok" } else { "MISMATCH" };
        let line = format!(
            "{name}: {differ} of {} elements differ (exact for {}): {verdict}",
            expected.data.len(),
            dtype.mlir()
        );
        return (differ == 0, line);
    }
    let error = tensor::relative_error(actual, expected);
    let tolerance = tensor::tolerance(dtype);
    let verdict = if error <= tolerance { "ok" } else { "MISMATCH" };
    let line = format!(
        "{name}: relative error {error:.3e} (tolerance {tolerance:.0e} for {}): {verdict}",
        dtype.mlir()
    );
    (error <= tolerance, line)
}

/// `dir/name.npy`, as `--output-dir` wrote it, of the given shape.
fn read_expected(dir: &Path, name: &str, shape: &[usize]) -> Result<Tensor> {
    let path = dir.join(format!("{name}.npy"));
    let array = npy::read(&path).map_err(|error| anyhow!("--expect: {error}"))?;
    if array.shape != shape {
        bail!(
            "--expect: {} has shape {:?}, but {name} has shape {shape:?}",
            path.display(),
            array.shape
        );
    }
    let values = array.to_f64();
    Ok(Tensor::new(array.shape, values))
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

fn write_npy(path: &Path, tensor: &Tensor, dtype: DType) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    npy::write(
        path,
        &npy::Array::from_f64(dtype, &tensor.shape, &tensor.data),
    )
    .map_err(|error| anyhow!("{error}"))
}

/// Rank `rank`'s buffers: its shards of the inputs, made here (or, with
/// `on_device`, on its GPU when placed), and
/// NaN-filled outputs (a fusion program), or random values (host IR).
fn rank_buffers(
    signature: &Signature,
    inputs: Option<&Inputs>,
    rank: usize,
    seed: u64,
    on_device: bool,
) -> Result<RankCall> {
    let mut buffers = Vec::new();
    if let Some(inputs) = inputs {
        for index in 0..signature.inputs.len() {
            let made = if on_device {
                inputs.on_device(index, rank)?
            } else {
                None
            };
            buffers.push(match made {
                Some(buffer) => buffer,
                None => inputs.shard(index, rank)?,
            });
        }
        for param in &signature.outputs {
            buffers.push(inputs::nans(param.local_shape(), param.dtype)?);
        }
    } else {
        for (index, param) in signature.inputs.iter().enumerate() {
            let mut rng = Rng::new(
                seed.wrapping_mul(0x1_0000_0001)
                    .wrapping_add(((rank as u64) << 32) + index as u64),
            );
            let random = Tensor::try_random(param.shape.clone(), param.dtype, &mut rng)?;
            buffers.push(Buffer::try_new(&random, param.dtype)?);
        }
    }
    Ok(RankCall::new(buffers))
}

/// An output as the ranks left it.
struct Output {
    /// Its global value: the split (`didx`, `didy`, `didz`) slices joined in mesh
    /// order, or the first device's copy.
    value: Tensor,
    /// The other replicas of the value (devices that differ along a mesh
    /// axis it is not split over), each joined likewise, with the first rank
    /// that holds it: every copy must agree, not only the first.
    copies: Vec<(usize, Tensor)>,
}

/// The outputs as the ranks left them; an error when one does not fit in
/// memory.
fn assemble(signature: &Signature, ranks: &[RankCall]) -> Result<Vec<Output>> {
    let inputs = signature.inputs.len();
    signature
        .outputs
        .iter()
        .enumerate()
        .map(|(index, param)| {
            let Some(placement) = param.placement.as_ref() else {
                return Ok(Output {
                    value: ranks[0].buffers[inputs + index].read()?,
                    copies: Vec::new(),
                });
            };
            // Replicas in order of their first device; in each, every device
            // with its part along each split axis.
            let mut replicas: Vec<(Vec<usize>, usize, Vec<Part>)> = Vec::new();
            for (position, &device) in placement.devices.iter().enumerate() {
                let splits = placement.splits(position);
                let parts: Vec<usize> = splits.iter().map(|&(_, _, part)| part).collect();
                let key = replica_key(placement, position);
                let local = ranks[device].buffers[inputs + index].read()?;
                match replicas.iter_mut().find(|(other, _, _)| *other == key) {
                    Some((_, _, members)) => members.push((parts, local)),
                    None => replicas.push((key, device, vec![(parts, local)])),
                }
            }
            let splits: Vec<(usize, usize)> = placement
                .splits(0)
                .into_iter()
                .map(|(axis, parts, _)| (axis, parts))
                .collect();
            let mut joined = replicas
                .into_iter()
                .map(|(_, first, members)| Ok((first, join(members, &splits)?)))
                .collect::<Result<Vec<_>>>()?
                .into_iter();
            let (_, value) = joined.next().expect("a mesh has a device");
            Ok(Output {
                value,
                copies: joined.collect(),
            })
        })
        .collect()
}

/// A device's local value with its part along each split axis.
type Part = (Vec<usize>, Tensor);

/// Which replica mesh position `position` holds: its coordinates along the
/// mesh axes the value is not split over.
fn replica_key(placement: &Placement, position: usize) -> Vec<usize> {
    placement
        .coordinates(position)
        .into_iter()
        .zip(placement.split_axes())
        .filter(|(_, split)| split.is_none())
        .map(|(coordinate, _)| coordinate)
        .collect()
}

/// The parts of one replica joined along each split axis in turn.
fn join(members: Vec<Part>, splits: &[(usize, usize)]) -> Result<Tensor> {
    let Some(&(axis, count)) = splits.first() else {
        let (_, local) = members.into_iter().next().expect("a replica has a device");
        return Ok(local);
    };
    let mut groups: Vec<Vec<Part>> = (0..count).map(|_| Vec::new()).collect();
    for (mut parts, local) in members {
        let part = parts.remove(0);
        groups[part].push((parts, local));
    }
    let joined: Vec<Tensor> = groups
        .into_iter()
        .map(|group| join(group, &splits[1..]))
        .collect::<Result<_>>()?;
    Tensor::concat(&joined, axis)
}
