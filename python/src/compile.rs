//! `hir.compile`: a program's text parsed, lowered and JIT-compiled as
//! `hir-run` does it (`hir_tools::program`, `hir_tools::jit`), with the
//! MLIR diagnostics collected into the error instead of printed.

use anyhow::{Context as _, Result, anyhow};
use hir_tools::jit::{Engine, Packed};
use hir_tools::program::{self, Param, Signature};
use std::cell::RefCell;
use std::rc::Rc;

/// A program ready to run on any rank of a world.
pub struct Compiled {
    /// Owns the code `entry` points into.
    _engine: Engine,
    pub entry: Packed,
    pub signature: Signature,
    pub num_streams: usize,
}

// SAFETY: the engine is only destroyed (on drop), never changed, once
// built; its compiled code and `entry` may be called from any thread, as
// hir-run's rank threads do.
unsafe impl Send for Compiled {}
// SAFETY: as above: nothing of it is mutated after construction.
unsafe impl Sync for Compiled {}

/// The options of `hir.compile`.
pub struct Options {
    pub num_streams: usize,
    pub p2p: String,
    pub ring_chunks: usize,
}

/// Compiles `source` (named `name` in diagnostics) for a world whose ranks'
/// pools have `options.num_streams` streams.
pub fn compile(source: &str, name: &str, options: &Options) -> Result<Compiled> {
    let context = hir_tools::registered_context();
    let diagnostics = Rc::new(RefCell::new(String::new()));
    let sink = diagnostics.clone();
    context.attach_diagnostic_handler(move |diagnostic| {
        sink.borrow_mut()
            .push_str(&hir_tools::format_diagnostic(&diagnostic));
        true
    });
    let with_diagnostics = |error: anyhow::Error| {
        let text = diagnostics.borrow();
        if text.is_empty() {
            error
        } else {
            anyhow!("{error:#}\n{}", text.trim_end())
        }
    };
    let mut module = program::parse_source(&context, source, name).map_err(with_diagnostics)?;
    let signature = program::entry(&module)
        .and_then(|function| program::signature(&module, &function))
        .map_err(with_diagnostics)?;
    let hir_lower = format!(
        "num-streams={} p2p={} ring-chunks={}",
        options.num_streams, options.p2p, options.ring_chunks
    );
    program::lower(&context, &mut module, &signature, &hir_lower, false)
        .map_err(with_diagnostics)?;
    let engine = Engine::new(&module, &hir_runtime::symbols()).map_err(with_diagnostics)?;
    let symbol = format!("_mlir_ciface_{}", &signature.name[1..]);
    let entry = engine
        .lookup(&symbol)
        .with_context(|| format!("compiling {name}"))?;
    Ok(Compiled {
        _engine: engine,
        entry,
        signature,
        num_streams: options.num_streams,
    })
}

impl Compiled {
    /// What one rank passes, in order: each input's local shard, then one
    /// buffer per output (a fusion program), or every argument (host IR).
    pub fn parameters(&self) -> Vec<(String, Vec<usize>)> {
        let local = |kind: &str, index: usize, param: &Param| {
            (format!("{kind} #{index}"), param.local_shape())
        };
        let inputs = self.signature.inputs.iter().enumerate();
        let outputs = self.signature.outputs.iter().enumerate();
        inputs
            .map(|(index, param)| local("input", index, param))
            .chain(outputs.map(|(index, param)| local("output", index, param)))
            .collect()
    }

    /// The element type of every parameter, in [`Compiled::parameters`] order.
    pub fn dtypes(&self) -> Vec<hir_abi::DType> {
        let signature = &self.signature;
        signature
            .inputs
            .iter()
            .chain(&signature.outputs)
            .map(|param| param.dtype)
            .collect()
    }
}
