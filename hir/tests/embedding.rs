//! The facade as an embedder uses it: a melior context with HIR's dialects,
//! a textual pipeline mixing upstream and HIR passes, run on an example.

use hir::melior::{Context, ir::Module, pass::PassManager, utility::parse_pass_pipeline};

#[test]
fn upstream_and_hir_passes_share_one_pipeline() {
    let context = Context::new();
    hir::register_all(&context);
    hir::passes::register_all();
    hir::register_upstream_passes();
    hir::register_upstream_passes();
    let source = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/ag_matmul.mlir"
    ))
    .unwrap();
    let mut module = Module::parse(&context, &source).expect("the example parses");
    let manager = PassManager::new(&context);
    parse_pass_pipeline(
        manager.as_operation_pass_manager(),
        "builtin.module(canonicalize,cse,hir-lower{num-streams=2},symbol-dce)",
    )
    .expect("canonicalize, cse, symbol-dce and hir-lower are registered");
    manager.run(&mut module).expect("the pipeline runs");
    let text = module.as_operation().to_string();
    assert!(text.contains("comm.allgather"), "{text}");
    assert!(!text.contains("fusion.matmul"), "{text}");
}
