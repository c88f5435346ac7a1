//! `hir-run --grad`: the program's gradients, computed as HIR computes them
//! and checked against finite differences.
//!
//! `fusion-differentiate` makes `@f_forward` and `@f_backward` of the
//! program's entry `@f`; each is lowered with the run's options, compiled
//! and run on the ranks: the forward on the program's inputs (seeded random
//! values or `--input` files), the backward on the forward's saved values
//! and a random cotangent `dy` of each floating-point result. The gradient
//! `g` of each floating-point argument is then checked, along random
//! directions `v` of that argument alone, against central differences of
//! the f64 reference evaluation of `@f` (the one `--check` compares with,
//! unrounded): `<g, v>` against `<dy, f(x + εv) - f(x - εv)> / 2ε`. The
//! error is relative to `Σ |g v|`, the scale the gradient's own rounding
//! errors have in `<g, v>`, and must be within the tolerance of the
//! gradient's element type. Each replica of a gradient is checked.

use super::cli::Options;
use anyhow::{Result, anyhow, bail};
use hir::compile::{Compiled, compile};
use hir_tools::buffer::{Calls, RankCall};
use hir_tools::differentiate::differentiate;
use hir_tools::inputs::Inputs;
use hir_tools::launch::{self, Session};
use hir_tools::program;
use hir_tools::ranks::Ranks as _;
use hir_tools::reference::{self, Rounding};
use hir_tools::tensor::{self, Rng, Tensor};
use melior::ir::{BlockLike, Module, OperationRef, RegionLike, operation::OperationLike};

/// The step of the central differences: small enough that the f64
/// reference's curvature term (ε²) is far below any tolerance, large
/// enough that its rounding (1e-16 / ε) is too.
const EPSILON: f64 = 1e-6;
/// Random directions per argument.
const DIRECTIONS: usize = 2;

/// Runs the check; an error when a gradient is off.
pub fn check(options: &Options) -> Result<()> {
    let context = hir_tools::context();
    let mut module = program::parse(&context, &options.program)?;
    program::import(&context, &mut module, false)?;
    let entry = program::function_name(&program::entry(&module)?);
    let name = entry.trim_start_matches('@').to_owned();
    differentiate(&context, &mut module, &name, options.saved)?;

    let forward = compile_alone(&module, &format!("{name}_forward"), options)?;
    let backward = compile_alone(&module, &format!("{name}_backward"), options)?;
    super::check_meshes(&forward.signature, options.ranks)?;
    let forward_inputs = Inputs::new(&forward.signature, &options.inputs, options.seed)?;
    let forward_outputs = execute(&forward, &forward_inputs, options, None)?;
    let function = function_named(&module, &name)?;
    let float_results: Vec<usize> = result_dtypes(&function)
        .iter()
        .enumerate()
        .filter(|(_, dtype)| dtype.is_float())
        .map(|(index, _)| index)
        .collect();
    let results = forward_outputs.len() - (backward.signature.inputs.len() - float_results.len());
    let mut rng = Rng::new(options.seed ^ 0x6772_6164);
    let mut backward_globals: Vec<Tensor> = forward_outputs[results..]
        .iter()
        .map(|output| output.value.try_clone())
        .collect::<Result<_>>()?;
    let saved = backward_globals.len();
    for param in &backward.signature.inputs[saved..] {
        backward_globals.push(Tensor::try_random(
            param.shape.clone(),
            param.dtype,
            &mut rng,
        )?);
    }
    let cotangents = &backward_globals[saved..];
    let backward_inputs = Inputs::from_globals(&backward.signature, &backward_globals)?;
    let corrupt = Some("corrupt-gradients");
    let gradients = execute(&backward, &backward_inputs, options, corrupt)?;
    println!(
        "ran {entry}'s forward and backward on {} rank{} ({} streams each)",
        options.ranks,
        if options.ranks == 1 { "" } else { "s" },
        options.num_streams
    );

    let arguments: Vec<Tensor> = (0..forward.signature.inputs.len())
        .map(|index| forward_inputs.global(index))
        .collect::<Result<_>>()?;
    let wrt: Vec<usize> = (0..arguments.len())
        .filter(|&index| forward.signature.inputs[index].dtype.is_float())
        .collect();
    // The forward's roundings reach the gradient: the coarsest type it
    // computes in bounds how close it can be.
    let coarsest = value_tolerance(&function);
    let mut ok = true;
    for (gradient, &argument) in gradients.iter().zip(&wrt) {
        let dtype = forward.signature.inputs[argument].dtype;
        let tolerance = tensor::tolerance(dtype).max(coarsest);
        for (rank, copy) in &gradient.copies {
            let error = tensor::relative_error(copy, &gradient.value);
            if error > tolerance {
                println!(
                    "d arg{argument} (rank {rank}'s copy): relative error {error:.3e} to the first copy: MISMATCH"
                );
                ok = false;
            }
        }
        for direction in 0..DIRECTIONS {
            let v = Tensor::try_random(arguments[argument].shape.clone(), dtype, &mut rng)?;
            let along = dot(&gradient.value, &v);
            let scale = gradient
                .value
                .data
                .iter()
                .zip(&v.data)
                .map(|(g, v)| (g * v).abs())
                .sum::<f64>()
                .max(f64::MIN_POSITIVE);
            let mut slope = 0.0;
            for sign in [1.0, -1.0] {
                let mut shifted: Vec<Tensor> = arguments
                    .iter()
                    .map(Tensor::try_clone)
                    .collect::<Result<_>>()?;
                for (value, step) in shifted[argument].data.iter_mut().zip(&v.data) {
                    *value += sign * EPSILON * step;
                }
                let outputs = reference::evaluate_with(function, &shifted, Rounding::None)?;
                for (&result, dy) in float_results.iter().zip(cotangents) {
                    slope += sign * dot(dy, &outputs[result]) / (2.0 * EPSILON);
                }
            }
            let error = (along - slope).abs() / scale;
            let verdict = if error <= tolerance { "ok" } else { "MISMATCH" };
            ok &= error <= tolerance;
            println!(
                "d arg{argument}, direction {direction}: <g, v> = {along:.6e}, finite difference {slope:.6e}: relative error {error:.3e} (tolerance {tolerance:.0e}): {verdict}"
            );
        }
    }
    if !ok {
        bail!("the gradients differ from the finite differences");
    }
    Ok(())
}

fn dot(a: &Tensor, b: &Tensor) -> f64 {
    a.data.iter().zip(&b.data).map(|(a, b)| a * b).sum()
}

fn function_named<'c, 'a>(module: &'a Module<'c>, name: &str) -> Result<OperationRef<'c, 'a>> {
    let body = module.body();
    std::iter::successors(body.first_operation(), |op| op.next_in_block())
        .find(|op| program::function_name(op) == format!("@{name}"))
        .ok_or_else(|| anyhow!("no function @{name} after fusion-differentiate"))
}

/// The largest tolerance of the floating-point types of `function`'s
/// arguments and op results.
fn value_tolerance(function: &OperationRef) -> f64 {
    let Some(block) = function
        .region(0)
        .ok()
        .and_then(|region| region.first_block())
    else {
        return 0.0;
    };
    let arguments = (0..block.argument_count())
        .filter_map(|index| block.argument(index).ok())
        .map(|argument| melior::ir::ValueLike::r#type(&argument));
    let results =
        std::iter::successors(block.first_operation(), |op| op.next_in_block()).flat_map(|op| {
            op.results()
                .map(|result| melior::ir::ValueLike::r#type(&result))
                .collect::<Vec<_>>()
        });
    arguments
        .chain(results)
        .filter_map(|r#type| program::element_dtype(r#type).ok())
        .map(tensor::tolerance)
        .fold(0.0, f64::max)
}

fn result_dtypes(function: &OperationRef) -> Vec<hir_abi::DType> {
    let block = function
        .region(0)
        .ok()
        .and_then(|region| region.first_block());
    let returned = block.and_then(|block| block.terminator());
    returned
        .map(|ret| {
            ret.operands()
                .filter_map(|value| {
                    program::element_dtype(melior::ir::ValueLike::r#type(&value)).ok()
                })
                .collect()
        })
        .unwrap_or_default()
}

/// `module`'s function `name` (with the meshes), compiled alone, since a
/// program runs its only public function.
fn compile_alone(module: &Module, name: &str, options: &Options) -> Result<Compiled> {
    let text = hir::differentiate::alone(&hir_tools::context(), module, &format!("@{name}"))?;
    compile(&text, name, &options.lower()).map_err(|error| anyhow!("{name}: {error}"))
}

/// `compiled` run on every rank with `inputs`, its outputs assembled. A
/// rank the test hook names with `corrupt` has its outputs zeroed, the
/// tests' way to show that a wrong gradient is caught. Each program runs
/// in a world of its own: the runtime caches what ranks exchanged about a
/// buffer (CUDA-IPC handles) by its address, which the next program's
/// buffers may reuse on some ranks and not on others.
fn execute(
    compiled: &Compiled,
    inputs: &Inputs,
    options: &Options,
    corrupt: Option<&str>,
) -> Result<Vec<super::Output>> {
    let session = Session::start(&options.plan(), options.num_streams, false)?;
    let signature = &compiled.signature;
    let runtime = &session.runtime;
    let mut ranks: Vec<RankCall> = (0..options.ranks)
        .map(|rank| super::rank_buffers(signature, Some(inputs), rank, options.seed, false))
        .collect::<Result<_>>()?;
    for (rank, call) in ranks.iter_mut().enumerate() {
        for buffer in &mut call.buffers {
            runtime.place(rank, buffer)?;
        }
        call.pack();
    }
    let calls = Calls::new(&ranks);
    let packed = compiled.entry;
    // SAFETY: each rank passes its own buffers, laid out as the entry's
    // descriptors, to the packed wrapper.
    runtime.run_ranks(|rank| {
        unsafe { packed.call(calls.arguments(rank)) };
    })?;
    for (rank, call) in ranks.iter_mut().enumerate() {
        for buffer in &mut call.buffers {
            runtime.fetch(rank, buffer)?;
        }
        if corrupt.is_some_and(|action| launch::rank::hook(rank, action)) {
            for buffer in call.buffers.iter_mut().skip(signature.inputs.len()) {
                buffer.bytes_mut().fill(0);
            }
        }
    }
    super::assemble(signature, &ranks)
}
