//! One world called from many threads at once, as a Python program's
//! threads call it: every call's outputs are its own inputs' sum, whichever
//! calls run beside it, threads that pass the very same input arrays
//! included, and a refused call in between changes nothing.

use hir::compile::{Array, DType, Failure, LowerOptions, compile};
use hir::runtime::{Backend, World, world::Config};

/// The README's program: `y = x[0] + x[1] + x[2] + x[3]`, rows over 4 ranks.
const SUM: &str = include_str!("../../examples/sum.mlir");

const THREADS: usize = 8;
const CALLS: usize = 1000;
const RANKS: usize = 4;

/// Each rank's row of x: `set` tells the two input sets apart.
fn rows(set: usize) -> Vec<Vec<f32>> {
    (0..RANKS)
        .map(|rank| (0..8).map(|i| (set * 100 + rank * 8 + i) as f32).collect())
        .collect()
}

#[test]
fn eight_threads_call_one_world_and_each_gets_its_own_sums() {
    let program = compile(SUM, "sum.mlir", &LowerOptions::default()).expect("it compiles");
    let world = World::start(&Config::new(Backend::Cpu, RANKS, program.pool_streams())).unwrap();
    // Even threads pass the arrays of set 0, odd ones those of set 1: the
    // same arrays in four threads at once.
    let inputs = [rows(0), rows(1)];
    let sums: Vec<Vec<f32>> = inputs
        .iter()
        .map(|rows| {
            (0..8)
                .map(|i| rows.iter().map(|row| row[i]).sum())
                .collect()
        })
        .collect();
    std::thread::scope(|scope| {
        for thread in 0..THREADS {
            let (program, world, inputs, sums) = (&program, &world, &inputs, &sums);
            scope.spawn(move || {
                let set = thread % 2;
                let mut outputs = vec![vec![f32::NAN; 8]; RANKS];
                for call in 0..CALLS {
                    outputs.iter_mut().for_each(|y| y.fill(f32::NAN));
                    let arrays: Vec<Vec<Array>> = inputs[set]
                        .iter()
                        .zip(&mut outputs)
                        .map(|(row, y)| {
                            vec![
                                Array::of(row.as_ptr().cast_mut(), vec![1, 8], DType::F32),
                                Array::of(y.as_mut_ptr(), vec![8], DType::F32),
                            ]
                        })
                        .collect();
                    program
                        .run(world, &[0, 1, 2, 3], &arrays)
                        .unwrap_or_else(|error| panic!("thread {thread}, call {call}: {error}"));
                    for (rank, y) in outputs.iter().enumerate() {
                        assert_eq!(y, &sums[set], "thread {thread}, call {call}, rank {rank}");
                    }
                    if thread == 0 && call % 100 == 0 {
                        // A refused call among the others breaks nothing.
                        let mut short = vec![0f32; 4];
                        let wrong =
                            vec![vec![Array::of(short.as_mut_ptr(), vec![4], DType::F32)]; 4];
                        assert!(matches!(
                            program.run(world, &[0, 1, 2, 3], &wrong),
                            Err(Failure::Usage(_))
                        ));
                    }
                }
            });
        }
    });
}
