//! A program's forward and backward, as programs of their own:
//! `fusion-differentiate` run on its entry, and each function it adds taken
//! out alone (with the meshes), since a program runs its one public
//! function. The Python package compiles both (`hir.compile(...,
//! differentiable=True)`); `hir-run --grad` takes them out of the module it
//! differentiated.

use crate::passes::Choice as _;
use crate::passes::fusion::differentiate::Saved;
use crate::program;
use anyhow::{Result, anyhow, bail};
use melior::Context;
use melior::ir::{BlockLike, Module, OperationRef, operation::OperationLike};

/// The program `@f` as a forward and a backward program.
#[derive(Clone, Debug)]
pub struct Differentiated {
    /// `@f_forward`: `@f`'s results, then the saved values.
    pub forward: String,
    /// `@f_backward`: the saved values, then one cotangent per
    /// floating-point result of `@f`; returns the gradients in `wrt` order.
    pub backward: String,
    /// How many results `@f` has (the forward's first ones).
    pub results: usize,
}

/// Differentiates the entry of `source` (named `name` in diagnostics; a
/// program of `shard` ops is imported first) with respect to the arguments
/// `wrt` (`None`: every floating-point one). An error holds MLIR's
/// diagnostics, located in `source`.
pub fn differentiate(
    source: &str,
    name: &str,
    wrt: Option<&[usize]>,
    saved: Saved,
) -> Result<Differentiated> {
    let context = crate::context::registered_context();
    let diagnostics = crate::context::Collected::attach(&context, false);
    let with_diagnostics = |error| diagnostics.add_to(error);
    let run = || -> Result<Differentiated> {
        let mut module = program::parse_source(&context, source, name)?;
        program::import(&context, &mut module, false)?;
        let entry = program::entry(&module)?;
        let function = program::function_name(&entry);
        let signature = program::signature(&module, &entry)?;
        if !signature.fusion {
            bail!("{function} is host IR: only a fusion program can be differentiated");
        }
        let wrt = wrt.map_or(String::new(), |wrt| {
            let positions: Vec<String> = wrt.iter().map(usize::to_string).collect();
            format!(" wrt={}", positions.join(","))
        });
        let pipeline = format!(
            "fusion-differentiate{{function={function}{wrt} saved={}}}",
            saved.name()
        );
        program::run_pipeline(
            &context,
            &mut module,
            &pipeline,
            "fusion-differentiate",
            false,
        )
        .map_err(|_| anyhow!("cannot differentiate {function} (the diagnostics say why)"))?;
        Ok(Differentiated {
            forward: alone(&context, &module, &format!("{function}_forward"))?,
            backward: alone(&context, &module, &format!("{function}_backward"))?,
            results: signature.outputs.len(),
        })
    };
    run().map_err(with_diagnostics)
}

/// The text of `module` with `function` (`@f_forward`) its only function,
/// from a copy parsed in `context`: the module stays whole.
pub fn alone(context: &Context, module: &Module, function: &str) -> Result<String> {
    let copy = program::parse_source(context, &module.as_operation().to_string(), function)?;
    let body = copy.body();
    let functions: Vec<OperationRef> =
        std::iter::successors(body.first_operation(), |op| op.next_in_block())
            .filter(|op| op.name().as_string_ref().as_str() == Ok("func.func"))
            .collect();
    if !functions
        .iter()
        .any(|op| program::function_name(op) == function)
    {
        bail!("no function {function} in the module");
    }
    for op in functions {
        if program::function_name(&op) == function {
            continue;
        }
        // SAFETY: `op` is in `copy`'s body, which nothing else references;
        // it is taken out of the block, then destroyed, once.
        unsafe {
            mlir_sys::mlirOperationRemoveFromParent(op.to_raw());
            mlir_sys::mlirOperationDestroy(op.to_raw());
        }
    }
    Ok(copy.as_operation().to_string())
}
