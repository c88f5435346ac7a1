//! `hir-bench run`: for every family and shape, the logical inputs once and
//! a runtime of D ranks; for every variant, its program built, lowered and
//! JIT-compiled, its buffers placed, one checked run, then the warm-up and
//! the timed iterations.

use crate::cli::Run;
use crate::data::{self, Inputs, Values};
use crate::{plot, report};
use anyhow::{Context as _, Result, bail};
use hir_runtime::abi::DType;
use hir_tools::backend::{Backend, Runtime};
use hir_tools::buffer::{Buffer, Calls, RankCall};
use hir_tools::programs::{self, Family, Form, Logical, Params, Variant};
use hir_tools::tensor::{self, Rng};
use hir_tools::{jit, program};
use std::borrow::Cow;

/// `(M, K, N)`.
pub type Shape = (usize, usize, usize);

/// What one (family, shape, variant) gave.
pub struct Row {
    pub family: Family,
    pub shape: Shape,
    pub variant: Variant,
    pub program: &'static str,
    pub p2p: &'static str,
    pub outcome: Outcome,
}

pub enum Outcome {
    /// Not run, and why.
    Skipped(String),
    Measured(Measure),
}

pub struct Measure {
    /// Per iteration, the slowest rank's time (ms).
    pub times: Vec<f64>,
    pub median_ms: f64,
    pub min_ms: f64,
    /// Per-GPU TFLOP/s at the median time (variants with a GEMM).
    pub tflops: Option<f64>,
    /// The GEMM alone's median time over this one's (variants with a GEMM,
    /// when the GEMM alone ran).
    pub ratio: Option<f64>,
    /// Bus bandwidth in GB/s, as nccl-tests defines it (the collective alone).
    pub busbw: Option<f64>,
    pub check: Check,
}

pub struct Check {
    /// `max |out - ref| / max |ref|` over the sampled entries, against f64
    /// references computed from the inputs.
    pub sample_error: f64,
    pub samples: usize,
    /// The same over every entry of every rank, against the full reference
    /// (the GEMM alone's output, or the inputs for the collectives alone).
    pub full_error: Option<f64>,
    pub tolerance: f64,
    pub ok: bool,
}

/// The settings a report states.
pub struct Setup<'a> {
    pub run: &'a Run,
}

/// The median of `times` (sorted in place).
pub fn median(times: &mut [f64]) -> f64 {
    times.sort_by(f64::total_cmp);
    let len = times.len();
    if len % 2 == 1 {
        times[len / 2]
    } else {
        (times[len / 2 - 1] + times[len / 2]) / 2.0
    }
}

fn variants_of(run: &Run, family: Family) -> Vec<Variant> {
    Variant::ALL
        .into_iter()
        .filter(|variant| match &run.variants {
            Some(chosen) => chosen.contains(variant),
            None => variant.program(family).is_some(),
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

pub fn run(run: &Run) -> Result<()> {
    // Every program must be buildable before anything runs.
    let mut errors = Vec::new();
    for &family in &run.families {
        for &shape in &run.shapes {
            for variant in variants_of(run, family) {
                let checked = variant
                    .program(family)
                    .map(|(form, _)| programs::check(form, &params(run, shape)));
                if let Some(Err(error)) = checked {
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
    if run.backend == Backend::Cpu {
        eprintln!(
            "hir-bench: note: the cpu backend runs the ranks as threads of the reference runtime: \
             its times are not meaningful as performance"
        );
    }
    let mut rows = Vec::new();
    for &family in &run.families {
        let variants = variants_of(run, family);
        for &shape in &run.shapes {
            let params = params(run, shape);
            let inputs = make_inputs(family, &params, &variants, run.seed);
            let runtime = Runtime::start(run.backend, run.devices, run.num_streams, false)?;
            let mut reference: Option<Vec<f32>> = None;
            for &variant in &variants {
                let Some((form, p2p)) = variant.program(family) else {
                    rows.push(Row {
                        family,
                        shape,
                        variant,
                        program: "-",
                        p2p: "-",
                        outcome: Outcome::Skipped(format!(
                            "does not apply to {}: host-p2p-pipeline makes rings of allgathers and reduce-scatters only",
                            family.name()
                        )),
                    });
                    continue;
                };
                eprintln!(
                    "hir-bench: {} {}x{}x{} {} ({}, p2p={p2p})",
                    family.name(),
                    shape.0,
                    shape.1,
                    shape.2,
                    variant.name(),
                    form.name()
                );
                let outcome =
                    bench_variant(run, &runtime, &inputs, form, p2p, variant, &mut reference)
                        .with_context(|| {
                            format!(
                                "{} {}x{}x{} {}",
                                family.name(),
                                shape.0,
                                shape.1,
                                shape.2,
                                variant.name()
                            )
                        })?;
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
    fill_ratios(&mut rows);
    let setup = Setup { run };
    print!("{}", report::table(&setup, &rows));
    if let Some(path) = &run.json {
        write(path, &report::json(&setup, &rows))?;
    }
    if let Some(path) = &run.csv {
        write(path, &report::csv(&rows))?;
    }
    if let Some(path) = &run.png {
        let (width, height, png) = plot::chart(&setup, &rows);
        std::fs::write(path, png).with_context(|| format!("cannot write {}", path.display()))?;
        println!("wrote {} ({width}x{height})", path.display());
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

fn write(path: &std::path::Path, text: &str) -> Result<()> {
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?;
    println!("wrote {}", path.display());
    Ok(())
}

/// The logical inputs the family's chosen variants read, each from its own
/// seed.
fn make_inputs(family: Family, params: &Params, variants: &[Variant], seed: u64) -> Inputs {
    let needed: Vec<Logical> = variants
        .iter()
        .filter_map(|variant| variant.program(family))
        .flat_map(|(form, _)| form_inputs(form))
        .collect();
    let make = |logical: Logical, number: u64| {
        needed.contains(&logical).then(|| {
            Values::random(
                logical.shape(params),
                params.dtype,
                seed.wrapping_mul(0x1_0000_0001).wrapping_add(number),
            )
        })
    };
    Inputs {
        params: params.clone(),
        a: make(Logical::A, 1),
        b: make(Logical::B, 2),
        l: make(Logical::L, 3),
        bd: make(Logical::Bd, 4),
        p: make(Logical::P, 5),
    }
}

fn form_inputs(form: Form) -> Vec<Logical> {
    match form {
        Form::AgGemm | Form::AgPipeline | Form::AgRing => vec![Logical::A, Logical::B],
        Form::AgAllgather => vec![Logical::A],
        Form::RsReduceScatter | Form::ArAllreduce => vec![Logical::P],
        _ => vec![Logical::L, Logical::Bd],
    }
}

/// Builds, checks and times one variant. The first GEMM alone of a family
/// and shape leaves its output in `reference`, for the others' full check.
fn bench_variant(
    run: &Run,
    runtime: &Runtime,
    inputs: &Inputs,
    form: Form,
    p2p: &str,
    variant: Variant,
    reference: &mut Option<Vec<f32>>,
) -> Result<Outcome> {
    let params = &inputs.params;
    let dtype = params.dtype;
    let generated = programs::generate(form, params)?;
    debug_assert_eq!(generated.inputs, form_inputs(form));
    let context = hir_tools::context();
    let mut module = program::parse_source(&context, &generated.text, form.name())?;
    let function = program::entry(&module)?;
    let signature = program::signature(&module, &function)?;
    program::lower_to_host(
        &context,
        &mut module,
        &signature,
        &format!("p2p={p2p} num-streams={}", run.lower_streams),
        false,
    )?;
    if p2p != "none" && !module.as_operation().to_string().contains("comm.send") {
        return Ok(Outcome::Skipped(format!(
            "hir-lower{{p2p={p2p}}} made no ring of {}: its collective stays whole (as in nooverlap)",
            form.name()
        )));
    }
    program::lower_to_llvm(&context, &mut module, false)?;
    let engine = jit::Engine::new(&module, &hir_runtime::symbols())?;
    let packed = engine.lookup(&format!("_mlir_ciface_{}", generated.entry))?;

    // Each rank's shards of the inputs, and its output filled with NaN.
    let output = &signature.outputs[0];
    let output_didx = output
        .placement
        .as_ref()
        .and_then(|placement| placement.didx);
    let mut ranks: Vec<RankCall> = (0..run.devices)
        .map(|rank| {
            let mut buffers = Vec::new();
            for (param, &logical) in signature.inputs.iter().zip(&generated.inputs) {
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
                    )),
                    None => Cow::Borrowed(&values.bytes),
                };
                buffers.push(Buffer::from_bytes(dtype, param.local_shape(), &bytes));
            }
            let local = output.local_shape();
            let len = local.iter().product();
            buffers.push(Buffer::from_bytes(dtype, local, &data::nans(dtype, len)));
            RankCall::new(buffers)
        })
        .collect();
    for (rank, call) in ranks.iter_mut().enumerate() {
        for buffer in &mut call.buffers {
            runtime.place(rank, buffer)?;
        }
        call.pack();
    }
    let calls = Calls::new(&ranks);
    let body = |rank: usize| {
        // SAFETY: each rank passes its own buffers, laid out as the entry's
        // descriptors, to the packed wrapper.
        unsafe { packed(calls.arguments(rank)) }
    };

    // One checked run.
    runtime.run(body)?;
    for (rank, call) in ranks.iter_mut().enumerate() {
        let last = call.buffers.len() - 1;
        runtime.fetch(rank, &mut call.buffers[last])?;
    }
    let outputs: Vec<&[u8]> = ranks
        .iter()
        .map(|call| call.buffers.last().expect("an output").bytes())
        .collect();
    let gathered = inputs.a.as_ref();
    let full: Option<Box<dyn Fn(usize) -> f64 + Sync + '_>> = match generated.output {
        Logical::AgC | Logical::RowC => reference
            .as_ref()
            .map(|values| Box::new(move |index: usize| f64::from(values[index])) as Box<_>),
        Logical::Gathered => gathered.map(|a| Box::new(move |index| a.get(index)) as Box<_>),
        Logical::ReducedP => Some(Box::new(|index| inputs.expected(Logical::ReducedP, index))),
        _ => None,
    };
    let check = check_outputs(
        run,
        inputs,
        generated.output,
        &output.shape,
        output_didx,
        &outputs,
        full.as_deref(),
    );
    drop(full);
    if variant == Variant::Gemm && reference.is_none() {
        *reference = Some(full_output(dtype, generated.output, &outputs));
    }
    drop(outputs);
    eprintln!(
        "hir-bench:   check: sampled error {:.2e}{} (tolerance {:.0e}): {}",
        check.sample_error,
        check
            .full_error
            .map_or(String::new(), |error| format!(", full error {error:.2e}")),
        check.tolerance,
        if check.ok { "ok" } else { "MISMATCH" }
    );

    for _ in 0..run.warmup {
        runtime.run_timed(body)?;
    }
    let mut times = Vec::with_capacity(run.iters);
    for _ in 0..run.iters {
        let per_rank = runtime.run_timed(body)?;
        times.push(per_rank.into_iter().fold(0.0, f64::max));
    }
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
    eprintln!(
        "hir-bench:   {} iterations: median {median_ms:.3} ms, min {min_ms:.3} ms",
        run.iters
    );
    drop(engine);
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

/// The logical output of the GEMM alone, as the reference of its family:
/// rank 0's C (ag), or the sum of every rank's partial product (rs, ar).
fn full_output(dtype: DType, output: Logical, outputs: &[&[u8]]) -> Vec<f32> {
    match output {
        Logical::Partial => {
            let mut sum = data::load_all(dtype, outputs[0]);
            for bytes in &outputs[1..] {
                for (index, value) in sum.iter_mut().enumerate() {
                    *value += data::load(dtype, bytes, index);
                }
            }
            sum
        }
        _ => data::load_all(dtype, outputs[0]),
    }
}

/// Checks every rank's output: sampled entries against f64 references
/// computed from the inputs, and every entry against `full` where there is
/// one (else only that every entry is finite).
fn check_outputs(
    run: &Run,
    inputs: &Inputs,
    output: Logical,
    shape: &[usize],
    didx: Option<usize>,
    outputs: &[&[u8]],
    full: Option<&(dyn Fn(usize) -> f64 + Sync)>,
) -> Check {
    let dtype = inputs.params.dtype;
    let mut rng = Rng::new(run.seed ^ 0x5eed);
    let (mut sample_diff, mut sample_scale, mut samples) = (0.0f64, 0.0f64, 0);
    // Every entry of every rank (a thread per rank): finite, and against the
    // full reference.
    let scans: Vec<(bool, f64, f64)> = std::thread::scope(|scope| {
        let threads: Vec<_> = outputs
            .iter()
            .enumerate()
            .map(|(rank, bytes)| {
                scope.spawn(move || {
                    let (mut finite, mut diff, mut scale) = (true, 0.0f64, 0.0f64);
                    for local in 0..bytes.len() / dtype.size() {
                        let value = f64::from(data::load(dtype, bytes, local));
                        finite &= value.is_finite();
                        if let Some(full) = full {
                            let expected = full(data::global_index(shape, didx, rank, local));
                            diff = diff.max((value - expected).abs());
                            scale = scale.max(expected.abs());
                        }
                    }
                    (finite, diff, scale)
                })
            })
            .collect();
        threads
            .into_iter()
            .map(|thread| thread.join().expect("a check thread panicked"))
            .collect()
    });
    let finite = scans.iter().all(|(finite, _, _)| *finite);
    let (full_diff, full_scale) = scans
        .iter()
        .fold((0.0f64, 0.0f64), |(diff, scale), (_, d, s)| {
            (diff.max(*d), scale.max(*s))
        });
    // Sampled entries against f64 references computed from the inputs.
    for (rank, bytes) in outputs.iter().enumerate() {
        let len = bytes.len() / dtype.size();
        let global = |local: usize| data::global_index(shape, didx, rank, local);
        let picks: Vec<usize> = if len <= run.samples {
            (0..len).collect()
        } else {
            let mut picks = vec![0, len - 1];
            picks.extend((2..run.samples).map(|_| (rng.next_u64() % len as u64) as usize));
            picks
        };
        for local in picks {
            let value = f64::from(data::load(dtype, bytes, local));
            let expected = inputs.expected(output, global(local));
            sample_diff = sample_diff.max((value - expected).abs());
            sample_scale = sample_scale.max(expected.abs());
            samples += 1;
        }
    }
    let relative = |diff: f64, scale: f64| {
        if finite {
            diff / scale.max(f64::MIN_POSITIVE)
        } else {
            f64::INFINITY
        }
    };
    let sample_error = relative(sample_diff, sample_scale);
    let full_error = full.map(|_| relative(full_diff, full_scale));
    let tolerance = tensor::tolerance(dtype);
    Check {
        sample_error,
        samples,
        full_error,
        tolerance,
        ok: sample_error <= tolerance && full_error.is_none_or(|error| error <= tolerance),
    }
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
    fn medians() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
