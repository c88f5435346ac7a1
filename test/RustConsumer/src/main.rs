//! An embedder of HIR: lowers a fusion program given on the command line
//! with `hir-lower{p2p=nccl}` (HIR's pipeline between upstream passes) and
//! prints how many P2P transfers the ring has.

use hir::melior::{Context, ir::Module, pass::PassManager, utility::parse_pass_pipeline};

fn main() -> Result<(), String> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: hir-rust-consumer PROGRAM.mlir")?;
    let source = std::fs::read_to_string(&path).map_err(|error| format!("{path}: {error}"))?;
    let context = Context::new();
    hir::register_all(&context);
    hir::passes::register_all();
    hir::register_upstream_passes();
    let mut module = Module::parse(&context, &source).ok_or(format!("{path} does not parse"))?;
    let manager = PassManager::new(&context);
    parse_pass_pipeline(
        manager.as_operation_pass_manager(),
        "builtin.module(canonicalize,hir-lower{p2p=nccl},cse)",
    )
    .map_err(|error| error.to_string())?;
    manager
        .run(&mut module)
        .map_err(|_| format!("{path}: the pipeline failed"))?;
    let text = module.as_operation().to_string();
    println!(
        "lowered {path}: {} comm.send, {} comm.allgather",
        text.matches("comm.send").count(),
        text.matches("comm.allgather").count()
    );
    Ok(())
}
