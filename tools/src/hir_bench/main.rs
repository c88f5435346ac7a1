//! `hir-bench`: the overlap benchmarks. It builds its programs from
//! parameters (`hir_tools::programs`), lowers them with `hir-lower` (each
//! variant's `p2p` and stream options), JIT-compiles them and runs them on
//! the ranks of a runtime, as `hir-run` does, and under the same launcher
//! (`hir_tools::launch`: one process per GPU for `--backend cuda`); it
//! checks every variant once, then times it. `hir-bench emit` prints one
//! program instead, `hir-bench program block` a stack of transformer blocks,
//! and `hir-bench startup` times the compile stages of those and of the
//! examples.
//!
//! See `docs/Tools/hir-bench.md`.

mod bench;
mod check;
mod cli;
mod data;
mod overhead;
mod plot;
mod pointwise;
mod provenance;
mod report;
mod results;
mod startup;

use cli::{Cli, Command, Model};
use hir_tools::launch;
use hir_tools::programs;
use std::process::ExitCode;

fn main() -> ExitCode {
    hir_tools::memory::exit_on_out_of_memory("hir-bench");
    let cli = hir_tools::args::parse_or_exit("hir-bench", Cli::parse_from);
    hir_tools::log::init("hir-bench");
    let result = match cli.command {
        Command::Emit(emit) => {
            programs::generate(emit.form, &emit.params()).map(|program| print!("{}", program.text))
        }
        Command::Run(run) => {
            // Every shape must fit before any rank starts.
            if let Err(error) = bench::validate(&run) {
                return fail(error);
            }
            // Ranks in processes: a launcher, or one rank of it.
            let dispatched =
                launch::dispatch(&run.plan(), || Ok(run.fingerprint()), |_| bench::run(&run));
            if let Some(code) = dispatched {
                return code;
            }
            bench::run(&run)
        }
        Command::Overhead(overhead) => overhead::run(&overhead),
        Command::Pointwise(pointwise) => pointwise::run(&pointwise),
        Command::Program(program) => match program.model {
            Model::Block(block) => block
                .sizes
                .blocks(block.blocks)
                .generate()
                .map(|text| print!("{text}")),
            Model::Mlp(sizes) => sizes
                .mlp()
                .generate()
                .and_then(|text| training_step(text, sizes.grad))
                .map(|text| print!("{text}")),
        },
        Command::Startup(startup) => startup::run(&startup),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => fail(error),
    }
}

/// `text`, or with `grad` its forward and backward added
/// (`fusion-differentiate`), under its header.
fn training_step(text: String, grad: bool) -> anyhow::Result<String> {
    if !grad {
        return Ok(text);
    }
    let step = hir_tools::differentiate::differentiate_text(
        &text,
        "<mlp>",
        hir::passes::fusion::differentiate::Saved::Gathered,
    )?;
    let header: String = text
        .lines()
        .take_while(|line| line.starts_with("//"))
        .map(|line| format!("{line}\n"))
        .collect();
    Ok(format!(
        "{header}// with --grad: fusion-differentiate's @tp_mlp_forward and @tp_mlp_backward added\n{step}"
    ))
}

fn fail(error: anyhow::Error) -> ExitCode {
    eprintln!("hir-bench: error: {error:#}");
    ExitCode::FAILURE
}
