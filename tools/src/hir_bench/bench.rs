//! `hir-bench run`: for every family and shape, the logical inputs once and
//! a runtime of the ranks this process runs (all D as threads, or its one
//! rank of D processes); for every variant, its program built, lowered and
//! JIT-compiled, its buffers placed, one checked run, then the warm-up and
//! the timed iterations. Ranks in processes bring their checks and times to
//! each other through the store, and rank 0 reports.

use crate::check::{Check, RankCheck, Target, check_rank, full_output};
use crate::cli::Run;
use crate::data::{self, Inputs, Values};
use crate::plot::{self, Metric};
use crate::provenance::Provenance;
use crate::report;
use crate::results::{Measure, Outcome, Row, Setup, Shape};
use anyhow::{Context as _, Result, bail};
use hir::passes::{Allreduce, Choice as _, LowerOptions, P2p, StreamSync};
use hir_runtime::Backend;
use hir_runtime::world::Graphs;
use hir_tools::buffer::{Buffer, Calls, RankCall};
use hir_tools::jit;
use hir_tools::launch::timed::{self, median};
use hir_tools::launch::{Fnv, Peers, Session};
use hir_tools::program::{self, Signature};
use hir_tools::programs::{self, Family, Form, Logical, Params, Program, Variant};
use hir_tools::ranks::Ranks as _;
use melior::Context;
use std::borrow::Cow;

fn variants_of(run: &Run) -> Vec<Variant> {
    Variant::ALL
        .into_iter()
        .filter(|variant| {
            run.variants
                .as_ref()
                .is_none_or(|chosen| chosen.contains(variant))
        })
        .collect()
}

fn params(run: &Run, (m, k, n): (usize, usize, usize)) -> Params {
    Params {
        devices: run.devices,
        chunks: run.chunks,
        m,
        k,
        n,
        dtype: run.dtype,
    }
}

/// Refuses shapes that some chosen program cannot split, before anything
/// runs.
pub fn validate(run: &Run) -> Result<()> {
    let mut errors = Vec::new();
    for &family in &run.families {
        for &shape in &run.shapes {
            for variant in variants_of(run) {
                let (form, _) = variant.program(family);
                if let Err(error) = programs::check(form, &params(run, shape)) {
                    errors.push(format!("{} {}: {error}", family.name(), variant.name()));
                }
            }
        }
    }
    if !errors.is_empty() {
        errors.dedup();
        bail!(
            "these shapes do not fit the programs (D={}, S={}):\n  {}",
            run.devices,
            run.chunks,
            errors.join("\n  ")
        );
    }
    Ok(())
}

/// `hir-bench run` on the ranks of this process: all of them (threads), or
/// its one rank of a multi-process run, where rank 0 reports for all.
pub fn run(run: &Run) -> Result<()> {
    if run.dry_run {
        return dry_run(run);
    }
    let plan = run.plan();
    let peers = Peers::here();
    if run.backend == Backend::Cpu {
        tracing::info!(
            "note: the cpu backend runs the ranks on the reference runtime: \
             its times are not meaningful as performance"
        );
    }
    let mut rows = Vec::new();
    for &family in &run.families {
        let variants = variants_of(run);
        for &shape in &run.shapes {
            let params = params(run, shape);
            let inputs = make_inputs(family, &params, &variants, run.seed)?;
            let session = Session::start(&plan, run.num_streams, false)?;
            let mut reference: Option<Vec<f32>> = None;
            for &variant in &variants {
                let (form, p2p) = variant.program(family);
                let name = format!(
                    "{} {}x{}x{} {}",
                    family.name(),
                    shape.0,
                    shape.1,
                    shape.2,
                    variant.name()
                );
                // What is logged of the variant names it.
                let span = tracing::info_span!("variant", message = %name).entered();
                if peers.reports() {
                    hir_tools::progress!("{} with p2p={}", form.name(), p2p.name());
                }
                let outcome =
                    bench_variant(run, &session, &inputs, form, p2p, variant, &mut reference)
                        .with_context(|| name)?;
                drop(span);
                rows.push(Row {
                    family,
                    shape,
                    variant,
                    program: form.name(),
                    p2p,
                    outcome,
                });
            }
        }
    }
    if !peers.reports() {
        return Ok(());
    }
    fill_ratios(&mut rows);
    let setup = Setup {
        run,
        provenance: Provenance::of(run),
    };
    print!("{}", report::table(&setup, &rows));
    if let Some(path) = &run.json {
        write(path, &report::json(&setup, &rows))?;
    }
    if let Some(path) = &run.csv {
        write(path, &report::csv(&setup, &rows))?;
    }
    if let Some(path) = &run.png {
        // The ratio chart beside the TFLOP/s one: `bench.png`, `bench-vs-gemm.png`.
        let stem = path.file_stem().unwrap_or_default().to_string_lossy();
        let ratio = path.with_file_name(format!("{stem}-vs-gemm.png"));
        for (path, metric) in [(path.clone(), Metric::Tflops), (ratio, Metric::VsGemm)] {
            let (width, height, png) = plot::chart(&setup, &rows, metric);
            std::fs::write(&path, png)
                .with_context(|| format!("cannot write {}", path.display()))?;
            println!("wrote {} ({width}x{height})", path.display());
        }
    }
    let failed: Vec<String> = rows
        .iter()
        .filter_map(|row| match &row.outcome {
            Outcome::Measured(measure) if !measure.check.ok => Some(format!(
                "{} {}x{}x{} {}",
                row.family.name(),
                row.shape.0,
                row.shape.1,
                row.shape.2,
                row.variant.name()
            )),
            _ => None,
        })
        .collect();
    if !failed.is_empty() {
        bail!("wrong results: {}", failed.join(", "));
    }
    Ok(())
}

/// `--dry-run`, on one rank of a multi-process run: every variant built,
/// lowered and JIT-compiled as for a run, and the hashes of the lowered
/// programs compared across the ranks through the store. Nothing runs on a
/// device and nothing is timed.
fn dry_run(run: &Run) -> Result<()> {
    let peers = Peers::here();
    let mut names = Vec::new();
    let mut hashes = Vec::new();
    for &family in &run.families {
        for &shape in &run.shapes {
            let params = params(run, shape);
            for variant in variants_of(run) {
                let (form, p2p) = variant.program(family);
                let name = format!(
                    "{} {}x{}x{} {} ({}, p2p={})",
                    family.name(),
                    shape.0,
                    shape.1,
                    shape.2,
                    variant.name(),
                    form.name(),
                    p2p.name(),
                );
                let context = hir_tools::context();
                let built =
                    build(&context, run, &params, form, p2p).with_context(|| name.clone())?;
                names.push(match &built {
                    Ok(built) => format!("{name}: lowered hash {:016x}", built.lowered),
                    Err(skipped) => format!("{name}: skipped: {skipped}"),
                });
                hashes.push(built.map_or(0, |built| built.lowered));
            }
        }
    }
    let mine = hashes.iter().flat_map(|hash| hash.to_le_bytes()).collect();
    let all = peers.all_ranks("dry-run", vec![mine])?;
    if let Some((rank, index)) = first_difference(&all) {
        let name = names.get(index).map_or("", String::as_str);
        bail!("rank {rank} lowered another program than rank 0: {name}");
    }
    if peers.reports() {
        for name in &names {
            println!("{name}");
        }
        let skipped = hashes.iter().filter(|&&hash| hash == 0).count();
        println!(
            "dry run: {} ranks built, lowered and JIT-compiled the same {} programs ({skipped} skipped); nothing was timed",
            all.len(),
            hashes.len() - skipped
        );
    }
    Ok(())
}

/// The first rank whose hashes (little-endian `u64`s) differ from rank 0's,
/// and the index of the first that differs.
fn first_difference(all: &[Vec<u8>]) -> Option<(usize, usize)> {
    let hashes = |bytes: &[u8]| -> Vec<u64> {
        bytes
            .chunks_exact(8)
            .map(|chunk| u64::from_le_bytes(chunk.try_into().unwrap()))
            .collect()
    };
    let first = hashes(&all[0]);
    all.iter().enumerate().skip(1).find_map(|(rank, bytes)| {
        let other = hashes(bytes);
        let index = first
            .iter()
            .zip(&other)
            .position(|(a, b)| a != b)
            .or_else(|| (first.len() != other.len()).then(|| first.len().min(other.len())))?;
        Some((rank, index))
    })
}

fn write(path: &std::path::Path, text: &str) -> Result<()> {
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?;
    println!("wrote {}", path.display());
    Ok(())
}

/// The logical inputs the family's chosen variants read, each from its own
/// seed.
fn make_inputs(family: Family, params: &Params, variants: &[Variant], seed: u64) -> Result<Inputs> {
    let needed: Vec<Logical> = variants
        .iter()
        .map(|variant| variant.program(family))
        .flat_map(|(form, _)| form_inputs(form))
        .collect();
    let make = |logical: Logical, number: u64| {
        needed
            .contains(&logical)
            .then(|| {
                Values::random(
                    logical.shape(params),
                    params.dtype,
                    seed.wrapping_mul(0x1_0000_0001).wrapping_add(number),
                )
            })
            .transpose()
    };
    Ok(Inputs {
        params: params.clone(),
        a: make(Logical::A, 1)?,
        b: make(Logical::B, 2)?,
        l: make(Logical::L, 3)?,
        p: make(Logical::P, 5)?,
    })
}

fn form_inputs(form: Form) -> Vec<Logical> {
    match form {
        Form::AgGemm | Form::AgPipeline | Form::AgRing => vec![Logical::A, Logical::B],
        Form::AgAllgather => vec![Logical::A],
        Form::RsReduceScatter | Form::ArAllreduce => vec![Logical::P],
        _ => vec![Logical::L, Logical::B],
    }
}

/// A variant's program, lowered and JIT-compiled.
struct Built {
    /// Holds the code `packed` points into.
    _engine: jit::Engine,
    packed: jit::Packed,
    signature: Signature,
    generated: Program,
    /// The hash of the lowered program (LLVM dialect), the same on every
    /// rank.
    lowered: u64,
}

/// How a variant with `p2p` is lowered: the run's ring and stream options,
/// and GEMM+AR's allreduce as rings where there are rings (no other
/// program has an allreduce to split).
fn lower_options(run: &Run, p2p: P2p) -> LowerOptions {
    let rings = p2p != P2p::None;
    LowerOptions {
        num_streams: run.lower_streams,
        p2p,
        ring_chunks: run.ring_chunks,
        ring_sync: if rings {
            run.ring_sync
        } else {
            StreamSync::Step
        },
        allreduce: if rings {
            Allreduce::Ring
        } else {
            Allreduce::Whole
        },
        ..LowerOptions::default()
    }
}

/// Builds `form` with `p2p`: the program, or why it is skipped (a P2P
/// lowering that made no ring).
fn build(
    context: &Context,
    run: &Run,
    params: &Params,
    form: Form,
    p2p: P2p,
) -> Result<std::result::Result<Built, String>> {
    let generated = programs::generate(form, params)?;
    debug_assert_eq!(generated.inputs, form_inputs(form));
    let mut module = program::parse_source(context, &generated.text, form.name())?;
    let function = program::entry(&module)?;
    let signature = program::signature(&module, &function)?;
    program::lower_to_host(
        context,
        &mut module,
        &signature,
        &lower_options(run, p2p),
        false,
    )?;
    if p2p != P2p::None && !module.as_operation().to_string().contains("comm.send") {
        return Ok(Err(format!(
            "hir-lower{{p2p={}}} made no ring of {}: its collective stays whole (as in nooverlap)",
            p2p.name(),
            form.name()
        )));
    }
    program::lower_to_llvm(context, &mut module, false)?;
    let mut lowered = Fnv::default();
    lowered.write(module.as_operation().to_string().as_bytes());
    let engine = jit::Engine::new(&module, &hir_runtime::symbols())?;
    let packed = engine.lookup(&format!("_mlir_ciface_{}", generated.entry))?;
    Ok(Ok(Built {
        _engine: engine,
        packed,
        signature,
        generated,
        lowered: lowered.finish(),
    }))
}

/// Rank `rank`'s arguments: its shards of the inputs, and its output filled
/// with NaN.
fn rank_call(built: &Built, inputs: &Inputs, rank: usize) -> Result<RankCall> {
    let dtype = inputs.params.dtype;
    let mut buffers = Vec::new();
    for (param, &logical) in built.signature.inputs.iter().zip(&built.generated.inputs) {
        let values = inputs.get(logical);
        let didx = param
            .placement
            .as_ref()
            .and_then(|placement| placement.didx);
        let bytes = match didx {
            Some(axis) => Cow::Owned(data::shard(
                &values.bytes,
                &param.shape,
                dtype.size(),
                axis,
                rank,
            )?),
            None => Cow::Borrowed(&values.bytes),
        };
        buffers.push(Buffer::try_from_bytes(dtype, param.local_shape(), &bytes)?);
    }
    let local = built.signature.outputs[0].local_shape();
    let len = hir_tools::tensor::numel(&local)?;
    buffers.push(Buffer::try_from_bytes(
        dtype,
        local,
        &data::nans(dtype, len)?,
    )?);
    Ok(RankCall::new(buffers))
}

/// Builds, checks and times one variant on the ranks of this process (all
/// of them, or its one rank: every exchange with the others goes through
/// `session.peers`). The first GEMM alone of a family and shape leaves its
/// output in `reference`, for the others' full check.
fn bench_variant(
    run: &Run,
    session: &Session,
    inputs: &Inputs,
    form: Form,
    p2p: P2p,
    variant: Variant,
    reference: &mut Option<Vec<f32>>,
) -> Result<Outcome> {
    let (runtime, peers) = (&session.runtime, &session.peers);
    let params = &inputs.params;
    let dtype = params.dtype;
    let context = hir_tools::context();
    let began = std::time::Instant::now();
    let built = match build(&context, run, params, form, p2p)? {
        Ok(built) => built,
        Err(skipped) => return Ok(Outcome::Skipped(skipped)),
    };
    tracing::debug!(
        lowered_hash = %format!("{:016x}", built.lowered),
        ms = %format!("{:.3}", began.elapsed().as_secs_f64() * 1e3),
        "built, lowered and JIT-compiled"
    );
    let output = &built.signature.outputs[0];
    let output_didx = output
        .placement
        .as_ref()
        .and_then(|placement| placement.didx);
    let output_logical = built.generated.output;

    // The ranks that run here, with their buffers on their devices.
    let local = peers.local_ranks(run.devices);
    let mut calls: Vec<RankCall> = local
        .iter()
        .map(|&rank| rank_call(&built, inputs, rank))
        .collect::<Result<_>>()?;
    for (&rank, call) in local.iter().zip(&mut calls) {
        for buffer in &mut call.buffers {
            runtime.place(rank, buffer)?;
        }
        call.pack();
        tracing::debug!(rank, buffers = call.buffers.len(), "placed the shards");
    }
    let packed = Calls::new(&calls);
    let position = |rank: usize| local.iter().position(|&here| here == rank);
    let body = |rank: usize| {
        let index = position(rank).expect("the rank runs here");
        // SAFETY: each rank passes its own buffers, laid out as the entry's
        // descriptors, to the packed wrapper.
        unsafe { built.packed.call(packed.arguments(index)) };
    };

    // With --graph on cuda, a direct run first (it makes the communicators
    // and buffers a capture needs), the output set to NaN again, then the
    // checked run captures and replays: the check and the times are the
    // replays'.
    let graphs = Graphs::new(run.devices);
    let graphed = runtime.graphed_ranks(&graphs, body);
    let call: &(dyn Fn(usize) + Sync) = if run.graph && run.backend == Backend::Cuda {
        runtime.run_ranks(body)?;
        for (&rank, call) in local.iter().zip(&mut calls) {
            let last = call.buffers.len() - 1;
            let nans = data::nans(dtype, call.buffers[last].bytes().len() / dtype.size())?;
            runtime.upload(rank, &mut call.buffers[last], &nans)?;
        }
        &graphed
    } else {
        &body
    };
    // One checked run: each rank checks its own output, and every rank gets
    // every rank's errors.
    runtime.run_ranks(call)?;
    for (&rank, call) in local.iter().zip(&mut calls) {
        let last = call.buffers.len() - 1;
        runtime.fetch(rank, &mut call.buffers[last])?;
    }
    let outputs: Vec<&[u8]> = calls
        .iter()
        .map(|call| call.buffers.last().expect("an output").bytes())
        .collect();
    let gathered = inputs.a.as_ref();
    let full: Option<Box<dyn Fn(usize) -> f64 + Sync + '_>> = match output_logical {
        Logical::AgC | Logical::RowC => reference
            .as_ref()
            .map(|values| Box::new(move |index: usize| f64::from(values[index])) as Box<_>),
        Logical::Gathered => gathered.map(|a| Box::new(move |index| a.get(index)) as Box<_>),
        Logical::ReducedP => Some(Box::new(|index| inputs.expected(Logical::ReducedP, index))),
        _ => None,
    };
    let target = Target {
        output: output_logical,
        shape: &output.shape,
        didx: output_didx,
        full: full.as_deref(),
    };
    let checks: Vec<RankCheck> = std::thread::scope(|scope| {
        // A thread per rank: the full check reads every entry.
        let threads: Vec<_> = local
            .iter()
            .zip(&outputs)
            .map(|(&rank, bytes)| {
                let target = &target;
                scope.spawn(move || check_rank(run, inputs, target, rank, bytes))
            })
            .collect();
        threads
            .into_iter()
            .map(|thread| thread.join().expect("a check thread panicked"))
            .collect()
    });
    for (&rank, check) in local.iter().zip(&checks) {
        tracing::debug!(
            rank,
            finite = check.finite,
            samples = check.samples,
            sample_diff = %format!("{:.3e}", check.sample_diff),
            full_diff = %format!("{:.3e}", check.full_diff),
            "checked the rank's output"
        );
    }
    let all = peers.all_ranks(
        "check",
        checks.iter().map(|check| check.to_bytes()).collect(),
    )?;
    let checks = all
        .iter()
        .map(|bytes| RankCheck::from_bytes(bytes))
        .collect::<Result<Vec<_>>>()?;
    let check = Check::of(&checks, full.is_some(), dtype);
    drop(full);
    if variant == Variant::Gemm && reference.is_none() {
        *reference = Some(full_output(peers, dtype, output_logical, &outputs)?);
    }
    drop(outputs);
    if peers.reports() {
        let line = format!(
            "check: sampled error {:.2e}{} (tolerance {:.0e}): {}",
            check.sample_error,
            check
                .full_error
                .map_or(String::new(), |error| format!(", full error {error:.2e}")),
            check.tolerance,
            if check.ok { "ok" } else { "MISMATCH" }
        );
        // A mismatch shows wherever stderr goes; the table says it too.
        if check.ok {
            hir_tools::progress!("{line}");
        } else {
            tracing::warn!("{line}");
        }
    }

    let times = timed::slowest_rank_times(runtime, peers, run.warmup, run.iters, call)?;
    let mut sorted = times.clone();
    let median_ms = median(&mut sorted);
    let min_ms = sorted[0];
    let family = form.family();
    let seconds = median_ms * 1e-3;
    let (tflops, busbw) = if variant == Variant::Comm {
        (None, Some(bus_bandwidth(family, params) / seconds / 1e9))
    } else {
        (Some(family.flops_per_device(params) / seconds / 1e12), None)
    };
    if peers.reports() {
        hir_tools::progress!(
            "{} iterations: median {median_ms:.3} ms, min {min_ms:.3} ms",
            run.iters
        );
    }
    Ok(Outcome::Measured(Measure {
        times,
        median_ms,
        min_ms,
        tflops,
        ratio: None,
        busbw,
        check,
    }))
}

/// The bytes nccl-tests' bus bandwidth counts for the family's collective
/// alone: the gathered (ag) or reduced (rs, ar) size times `(D-1)/D`
/// (`2(D-1)/D` for allreduce).
fn bus_bandwidth(family: Family, params: &Params) -> f64 {
    let d = params.devices as f64;
    let size = params.dtype.size() as f64;
    let (bytes, factor) = match family {
        Family::Ag => (params.m as f64 * params.k as f64 * size, (d - 1.0) / d),
        Family::Rs => (params.m as f64 * params.n as f64 * size, (d - 1.0) / d),
        Family::Ar => (
            params.m as f64 * params.n as f64 * size,
            2.0 * (d - 1.0) / d,
        ),
    };
    bytes * factor
}

/// Each measured variant's ratio to the GEMM alone of its family and shape.
fn fill_ratios(rows: &mut [Row]) {
    let gemm: Vec<((Family, Shape), f64)> = rows
        .iter()
        .filter_map(|row| match &row.outcome {
            Outcome::Measured(measure) if row.variant == Variant::Gemm => {
                Some(((row.family, row.shape), measure.median_ms))
            }
            _ => None,
        })
        .collect();
    for row in rows {
        if row.variant == Variant::Comm {
            continue;
        }
        let Some(&(_, gemm_ms)) = gemm.iter().find(|(key, _)| *key == (row.family, row.shape))
        else {
            continue;
        };
        if let Outcome::Measured(measure) = &mut row.outcome {
            measure.ratio = Some(gemm_ms / measure.median_ms);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_rank_that_lowered_another_program_is_named() {
        let hashes = |hashes: &[u64]| -> Vec<u8> {
            hashes.iter().flat_map(|hash| hash.to_le_bytes()).collect()
        };
        let same = [hashes(&[1, 2, 3]), hashes(&[1, 2, 3])];
        assert_eq!(first_difference(&same), None);
        let other = [hashes(&[1, 2, 3]), hashes(&[1, 2, 3]), hashes(&[1, 5, 3])];
        assert_eq!(first_difference(&other), Some((2, 1)));
        assert_eq!(
            first_difference(&[hashes(&[1, 2]), hashes(&[1])]),
            Some((1, 1))
        );
    }
}
