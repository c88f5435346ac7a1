//! `hir-bench pointwise`: a chain of 8 pointwise ops on f32 tensors of N
//! elements (`out = max(exp(-tanh(a * b + c)) * a - c, b)`), lowered twice,
//! one kernel per op (`hir-lower{fuse=none}`) and as one fused kernel
//! (`fuse=elementwise`), both run on one rank. Each lowering's output is
//! checked against the chain evaluated here in f64, and the two against
//! each other; then each is timed with [`hir_runtime::World::run_timed`] (cuda: GPU
//! events around the call; cpu: host time until the queues drain) and the
//! median is reported with the effective bandwidth of one memory pass (the
//! three inputs read and the output written once: what a kernel at the
//! speed of memory costs).

use crate::cli::Pointwise;
use crate::data;
use crate::provenance::Provenance;
use anyhow::{Context as _, Result, bail};
use hir::dialects::OpKind;
use hir::passes::{Choice as _, Fuse, LowerOptions};
use hir_abi::DType;
use hir_runtime::{Backend, Checks};
use hir_tools::buffer::{Buffer, Calls, RankCall};
use hir_tools::program;
use hir_tools::ranks::{self, Ranks as _};
use hir_tools::tensor::Rng;
use melior::ir::operation::OperationLike;
use melior::ir::{BlockLike, OperationRef, RegionLike};
use serde::Serialize;

/// An operand of a step: input `a`, `b` or `c`, or an earlier step's result.
#[derive(Clone, Copy)]
enum Arg {
    Input(usize),
    Step(usize),
}

/// One op of the chain: its fusion mnemonic and operands.
struct Step {
    op: &'static str,
    args: &'static [Arg],
}

const INPUTS: [&str; 3] = ["a", "b", "c"];

/// The chain: `a * b + c`, then tanh, neg, exp, `* a`, `- c`, `max(., b)`.
const CHAIN: [Step; 8] = [
    Step {
        op: "mul",
        args: &[Arg::Input(0), Arg::Input(1)],
    },
    Step {
        op: "add",
        args: &[Arg::Step(0), Arg::Input(2)],
    },
    Step {
        op: "tanh",
        args: &[Arg::Step(1)],
    },
    Step {
        op: "neg",
        args: &[Arg::Step(2)],
    },
    Step {
        op: "exp",
        args: &[Arg::Step(3)],
    },
    Step {
        op: "mul",
        args: &[Arg::Step(4), Arg::Input(0)],
    },
    Step {
        op: "sub",
        args: &[Arg::Step(5), Arg::Input(2)],
    },
    Step {
        op: "max",
        args: &[Arg::Step(6), Arg::Input(1)],
    },
];

/// The two lowerings, unfused first.
const FUSE: [Fuse; 2] = [Fuse::None, Fuse::Elementwise];

/// The benchmark's program on tensors of `elements` f32.
pub fn program(elements: usize) -> String {
    let tensor = format!("tensor<{elements}xf32, #fusion.dist<@dev, [serial]>>");
    let name = |arg: &Arg| match *arg {
        Arg::Input(index) => format!("%{}", INPUTS[index]),
        Arg::Step(index) => format!("%t{index}"),
    };
    let mut text = format!(
        "// hir-bench pointwise: a chain of {} pointwise ops on {elements} f32.\n\
         fusion.mesh @dev = [0]\n\
         func.func @pointwise(%a: {tensor}, %b: {tensor}, %c: {tensor}) -> {tensor} {{\n",
        CHAIN.len()
    );
    for (index, step) in CHAIN.iter().enumerate() {
        let operands: Vec<String> = step.args.iter().map(name).collect();
        let types = vec![tensor.as_str(); step.args.len()].join(", ");
        text += &format!(
            "  %t{index} = fusion.{} {} : {types} -> {tensor}\n",
            step.op,
            operands.join(", ")
        );
    }
    text += &format!("  return %t{} : {tensor}\n}}\n", CHAIN.len() - 1);
    text
}

/// The chain at one element, in f64.
fn reference(inputs: [f64; 3]) -> f64 {
    let mut results: Vec<f64> = Vec::with_capacity(CHAIN.len());
    for step in &CHAIN {
        let values: Vec<f64> = step
            .args
            .iter()
            .map(|arg| match *arg {
                Arg::Input(index) => inputs[index],
                Arg::Step(index) => results[index],
            })
            .collect();
        results.push(match (step.op, values.as_slice()) {
            ("mul", &[x, y]) => x * y,
            ("add", &[x, y]) => x + y,
            ("sub", &[x, y]) => x - y,
            ("max", &[x, y]) => x.max(y),
            ("tanh", &[x]) => x.tanh(),
            ("neg", &[x]) => -x,
            ("exp", &[x]) => x.exp(),
            _ => unreachable!("the chain's ops are the ones above"),
        });
    }
    results[CHAIN.len() - 1]
}

/// How many ops of the lowered host program `op` launch a kernel: each
/// `host.fused` (its body is the kernel) and each compute op elsewhere.
fn kernels(op: OperationRef) -> Result<usize> {
    let name = op
        .name()
        .as_string_ref()
        .as_str()
        .unwrap_or_default()
        .to_owned();
    if name == "host.fused" {
        return Ok(1);
    }
    let mut count = usize::from(OpKind::of(&op) != OpKind::None);
    for region in 0..op.region_count() {
        let mut block = op.region(region)?.first_block();
        while let Some(current) = block {
            let mut next = current.first_operation();
            while let Some(child) = next {
                count += kernels(child)?;
                next = child.next_in_block();
            }
            block = current.next_in_region();
        }
    }
    Ok(count)
}

/// One lowering's run.
#[derive(Serialize)]
struct Row {
    fuse: &'static str,
    /// Kernels one call launches.
    kernels: usize,
    /// Relative L2 error of the output against the f64 reference.
    reference_error: f64,
    median_ms: f64,
    /// Bytes of one memory pass over the median time.
    one_pass_gb_per_s: f64,
    times_ms: Vec<f64>,
}

/// The fused output against the unfused one.
#[derive(Serialize)]
struct Agreement {
    differing_elements: usize,
    relative_error: f64,
}

fn relative_error(actual: impl Iterator<Item = (f64, f64)>) -> f64 {
    let (mut diff, mut norm) = (0.0, 0.0);
    for (got, want) in actual {
        diff += (got - want) * (got - want);
        norm += want * want;
    }
    (diff / norm).sqrt()
}

/// An output's largest relative L2 error against the f64 reference: the
/// chain's eight f32 roundings and the f32 exp and tanh are far inside it.
const REFERENCE_TOLERANCE: f64 = 1e-5;
/// The fused output's against the unfused one on cuda, where NVRTC may
/// contract `a * b + c` into one FMA (`runtime/src/cuda/fused_tests.rs`).
const AGREEMENT_TOLERANCE: f64 = 1e-6;

pub fn run(options: &Pointwise) -> Result<()> {
    let runtime = ranks::start(
        options.backend,
        1,
        1,
        false,
        options.timeout,
        Checks::default(),
    )?;
    let provenance = Provenance::new(options.backend, 1, "f32");
    let n = options.elements;
    // In u128: the product of a large --elements never wraps.
    let one_pass_bytes = 4 * n as u128 * DType::F32.size() as u128;
    println!("{}", provenance.line());
    println!(
        "hir-bench pointwise: out = max(exp(-tanh(a * b + c)) * a - c, b), {} ops on {n} f32 ({:.1} MiB a tensor), {} backend, {} timed calls (median)",
        CHAIN.len(),
        n as f64 * DType::F32.size() as f64 / (1 << 20) as f64,
        options.backend.name(),
        options.iters
    );

    // Memory reserved fallibly: `--elements` too large is an error.
    let mut rng = Rng::new(options.seed);
    let mut inputs: Vec<Vec<f32>> = Vec::new();
    for _ in 0..3 {
        let mut values = hir_tools::tensor::reserve(n, &[n])?;
        values.extend((0..n).map(|_| (rng.unit() * 2.0 - 1.0) as f32));
        inputs.push(values);
    }
    let nans = data::nans(DType::F32, n)?;
    let mut buffers: Vec<Buffer> = Vec::new();
    for values in &inputs {
        let mut buffer = Buffer::zeroed(DType::F32, vec![n])?;
        for (bytes, value) in buffer.bytes_mut().chunks_exact_mut(4).zip(values) {
            bytes.copy_from_slice(&value.to_le_bytes());
        }
        buffers.push(buffer);
    }
    buffers.push(Buffer::try_from_bytes(DType::F32, vec![n], &nans)?);
    let mut call = RankCall::new(buffers);
    for buffer in &mut call.buffers {
        runtime.place(0, buffer)?;
    }
    call.pack();
    let want: Vec<f64> = (0..n)
        .map(|i| reference([0, 1, 2].map(|k| f64::from(inputs[k][i]))))
        .collect();

    let context = hir_tools::context();
    let text = program(n);
    let mut rows = Vec::new();
    let mut outputs = Vec::new();
    for fuse in FUSE {
        let mut module = program::parse_source(&context, &text, "pointwise")?;
        let function = program::entry(&module)?;
        let signature = program::signature(&module, &function)?;
        program::lower_to_host(
            &context,
            &mut module,
            &signature,
            &LowerOptions {
                fuse,
                ..LowerOptions::default()
            },
            false,
        )?;
        let kernels = kernels(module.as_operation())?;
        program::lower_to_llvm(&context, &mut module, false)?;
        let engine = hir_tools::jit::Engine::new(&module, &hir_runtime::symbols())?;
        let packed = engine.lookup("_mlir_ciface_pointwise")?;
        let calls = Calls::new(std::slice::from_ref(&call));
        // SAFETY: rank 0's buffers, laid out as the entry's descriptors.
        let body = |_rank| {
            unsafe { packed.call(calls.arguments(0)) };
        };

        runtime.upload(0, &mut call.buffers[3], &nans)?;
        runtime.run_ranks(body)?;
        runtime.fetch(0, &mut call.buffers[3])?;
        let output = data::load_all(DType::F32, call.buffers[3].bytes())?;
        let reference_error =
            relative_error(output.iter().zip(&want).map(|(&x, &y)| (f64::from(x), y)));
        let verdict = if reference_error <= REFERENCE_TOLERANCE {
            "ok"
        } else {
            "FAILED"
        };
        let plural = if kernels == 1 { "" } else { "s" };
        println!(
            "checked fuse={} ({kernels} kernel{plural}) against the f64 reference: relative error {reference_error:.3e}: {verdict}",
            fuse.name()
        );
        if reference_error > REFERENCE_TOLERANCE {
            bail!(
                "fuse={fuse}: relative error {reference_error:e} against the f64 reference is past {REFERENCE_TOLERANCE:e}"
            );
        }
        outputs.push(output);

        for _ in 0..options.iters {
            runtime.run_ranks(body)?;
        }
        let mut times_ms = Vec::with_capacity(options.iters);
        for _ in 0..options.iters {
            times_ms.push(runtime.time_ranks(body)?[0]);
        }
        let median_ms = hir_tools::launch::timed::median(&mut times_ms.clone());
        rows.push(Row {
            fuse: fuse.name(),
            kernels,
            reference_error,
            median_ms,
            one_pass_gb_per_s: one_pass_bytes as f64 / (median_ms * 1e-3) / 1e9,
            times_ms,
        });
    }

    let agreement = agreement(options.backend, &outputs[0], &outputs[1])?;
    println!("| lowering | kernels | median ms | one-pass GB/s | speedup |");
    println!("|---|---|---|---|---|");
    for row in &rows {
        println!(
            "| fuse={} | {} | {:.4} | {:.1} | {:.2}x |",
            row.fuse,
            row.kernels,
            row.median_ms,
            row.one_pass_gb_per_s,
            rows[0].median_ms / row.median_ms
        );
    }
    println!("one memory pass: {one_pass_bytes} bytes (a, b, c read and out written once)");
    if let Some(path) = &options.json {
        let json = serde_json::json!({
            "benchmark": "pointwise",
            "provenance": provenance,
            "program": text,
            "elements": n,
            "one_pass_bytes": one_pass_bytes,
            "iters": options.iters,
            "seed": options.seed,
            "rows": rows,
            "fused_vs_unfused": agreement,
            "speedup": rows[0].median_ms / rows[1].median_ms,
        });
        std::fs::write(path, serde_json::to_string_pretty(&json)? + "\n")
            .with_context(|| format!("cannot write {}", path.display()))?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

/// The fused output against the unfused one: bit for bit on cpu (the same
/// scalar ops, each rounded to f32); on cuda within
/// [`AGREEMENT_TOLERANCE`], the differing elements counted.
fn agreement(backend: Backend, unfused: &[f32], fused: &[f32]) -> Result<Agreement> {
    let differing_elements = unfused
        .iter()
        .zip(fused)
        .filter(|(x, y)| x.to_bits() != y.to_bits())
        .count();
    let relative_error = relative_error(
        fused
            .iter()
            .zip(unfused)
            .map(|(&x, &y)| (f64::from(x), f64::from(y))),
    );
    let ok = match backend {
        Backend::Cpu => differing_elements == 0,
        Backend::Cuda => relative_error <= AGREEMENT_TOLERANCE,
    };
    println!(
        "checked fuse=elementwise against fuse=none: {differing_elements} of {} elements differ in their bits, relative error {relative_error:.3e}: {}",
        fused.len(),
        if ok { "ok" } else { "FAILED" }
    );
    if !ok {
        bail!("the fused output differs from the unfused one");
    }
    Ok(Agreement {
        differing_elements,
        relative_error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chain_lowers_to_eight_kernels_or_one() {
        let context = hir_tools::context();
        for (fuse, expected) in [(Fuse::None, 8), (Fuse::Elementwise, 1)] {
            let mut module = program::parse_source(&context, &program(64), "pointwise").unwrap();
            let function = program::entry(&module).unwrap();
            let signature = program::signature(&module, &function).unwrap();
            program::lower_to_host(
                &context,
                &mut module,
                &signature,
                &LowerOptions {
                    fuse,
                    ..LowerOptions::default()
                },
                false,
            )
            .unwrap();
            assert_eq!(
                kernels(module.as_operation()).unwrap(),
                expected,
                "fuse={fuse}"
            );
        }
    }

    #[test]
    fn the_reference_is_the_chain() {
        let (a, b, c) = (0.5f64, -0.25, 0.75);
        let want = ((-(a * b + c).tanh()).exp() * a - c).max(b);
        assert_eq!(reference([a, b, c]), want);
    }
}
