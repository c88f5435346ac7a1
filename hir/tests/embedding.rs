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

/// The compile-and-run API: the README's program compiled from text and run
/// on a cpu world of 4 ranks, each on its own row of x, every rank's y
/// checked against the sum computed here; a wrong shape is refused first.
#[test]
fn a_program_compiles_from_text_and_runs_on_the_callers_arrays() {
    use hir::compile::{Array, DType, Failure, LowerOptions, compile};
    use hir::runtime::{Backend, World, world::Config};
    let source = include_str!("../../examples/sum.mlir");
    let program = compile(source, "sum.mlir", &LowerOptions::default()).expect("it compiles");
    let shapes: Vec<Vec<usize>> = program
        .parameters()
        .iter()
        .map(|(_, shape)| shape.clone())
        .collect();
    assert_eq!(shapes, vec![vec![1, 8], vec![8]], "a row of x in, y out");
    let world = World::start(&Config::new(Backend::Cpu, 4, program.pool_streams())).unwrap();
    let mut rows: Vec<Vec<f32>> = (0..4)
        .map(|rank| (0..8).map(|i| (rank * 8 + i) as f32 * 0.5).collect())
        .collect();
    let mut outputs = vec![vec![f32::NAN; 8]; 4];
    let arrays: Vec<Vec<Array>> = rows
        .iter_mut()
        .zip(&mut outputs)
        .map(|(row, y)| {
            vec![
                Array::of(row.as_mut_ptr(), vec![1, 8], DType::F32),
                Array::of(y.as_mut_ptr(), vec![8], DType::F32),
            ]
        })
        .collect();
    program
        .run(&world, &[0, 1, 2, 3], &arrays)
        .expect("it runs");
    let expected: Vec<f32> = (0..8)
        .map(|i| (0..4).map(|rank| rows[rank][i]).sum())
        .collect();
    for (rank, y) in outputs.iter().enumerate() {
        assert_eq!(y, &expected, "rank {rank}'s y");
    }
    let mut short = vec![0f32; 4];
    let wrong = vec![vec![Array::of(short.as_mut_ptr(), vec![4], DType::F32)]; 4];
    match program.run(&world, &[0, 1, 2, 3], &wrong) {
        Err(Failure::Usage(message)) => assert!(message.contains("takes 2 arrays"), "{message}"),
        other => panic!("a wrong call ran: {other:?}"),
    }
}
