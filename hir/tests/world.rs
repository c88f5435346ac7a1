//! `hir::World` after a failed or interrupted call: a world of threads is
//! started anew, so that the next call is right; an interrupted call's
//! ranks leave their programs at their next runtime call; a rank that
//! cannot be stopped leaves the world closed, and every later call says so.

use hir::World;
use hir::compile::{Array, Compiled, DType, Failure, LowerOptions, compile};
use hir::runtime::{Backend, Error, interrupt, world::Config};
use std::time::{Duration, Instant};

/// `b = -a[4]` of a 4-row `a`: past its end (the Python tests' program).
const OVERRUN: &str = r#"
func.func @overrun(%a: memref<4x8xf32>, %b: memref<8xf32>) {
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c4 to %c5 step %c1 {
    %ai = host.select %a[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.neg ins(%ai : memref<8xf32, strided<[1], offset: ?>>) outs(%b : memref<8xf32>)
  }
  return
}
"#;

const NEG: &str = r#"
func.func @neg(%a: memref<8xf32>, %b: memref<8xf32>) {
  host.neg ins(%a : memref<8xf32>) outs(%b : memref<8xf32>)
  return
}
"#;

/// Never ends; calls the runtime on every iteration.
const SPIN: &str = r#"
func.func @spin(%a: memref<8xf32>, %b: memref<8xf32>) {
  %true = arith.constant true
  scf.while : () -> () {
    scf.condition(%true)
  } do {
    host.neg ins(%a : memref<8xf32>) outs(%b : memref<8xf32>)
    scf.yield
  }
  return
}
"#;

/// Sums `0..n[0]` into `out[0]` without a runtime call.
const BUSY: &str = r#"
func.func @busy(%n: memref<1xi64>, %out: memref<1xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0 : i64
  %bound = memref.load %n[%c0] : memref<1xi64>
  %ub = arith.index_cast %bound : i64 to index
  %sum = scf.for %i = %c0 to %ub step %c1 iter_args(%acc = %zero) -> (i64) {
    %ii = arith.index_cast %i : index to i64
    %next = arith.addi %acc, %ii : i64
    scf.yield %next : i64
  }
  memref.store %sum, %out[%c0] : memref<1xi64>
  return
}
"#;

fn program(text: &str) -> Compiled {
    compile(text, "<test>", &LowerOptions::default()).expect("it compiles")
}

fn f32s(data: &mut [f32]) -> Array {
    Array::of(data.as_mut_ptr(), vec![data.len()], DType::F32)
}

/// `neg` on the world's one rank is right.
fn assert_neg_runs(world: &World) {
    let (mut a, mut b) = ((0..8).map(|i| i as f32).collect::<Vec<_>>(), vec![0f32; 8]);
    world
        .run(&program(NEG), &[0], &[vec![f32s(&mut a), f32s(&mut b)]])
        .expect("the world runs again");
    assert_eq!(b, a.iter().map(|x| -x).collect::<Vec<_>>());
}

fn one_rank() -> World {
    World::start(&Config::new(Backend::Cpu, 1, 2)).unwrap()
}

#[test]
fn a_failed_call_leaves_the_world_running_the_next_one() {
    let world = one_rank();
    let (mut a, mut b) = (vec![0f32; 32], vec![7f32; 8]);
    let arrays = [vec![
        Array::of(a.as_mut_ptr(), vec![4, 8], DType::F32),
        f32s(&mut b),
    ]];
    for _ in 0..2 {
        match world.run(&program(OVERRUN), &[0], &arrays) {
            Err(Failure::Run(error)) => {
                assert!(
                    error.to_string().contains("overruns its allocation"),
                    "{error}"
                )
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(world.closed(), None);
        assert_neg_runs(&world);
    }
}

#[test]
fn an_interrupt_stops_a_program_that_calls_the_runtime() {
    let world = one_rank();
    let (mut a, mut b) = (vec![1f32; 8], vec![0f32; 8]);
    let spin = program(SPIN);
    let start = Instant::now();
    let check = || (start.elapsed() > Duration::from_millis(200)).then(|| "Ctrl-C".to_string());
    let result = interrupt::checking(&check, || {
        world.run(&spin, &[0], &[vec![f32s(&mut a), f32s(&mut b)]])
    });
    assert!(
        start.elapsed() < Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );
    match result {
        Err(Failure::Run(error)) => assert_eq!(
            error.first().error,
            Error::Interrupted("Ctrl-C".into()),
            "{error}"
        ),
        other => panic!("{other:?}"),
    }
    assert_eq!(world.closed(), None);
    assert_neg_runs(&world);
}

#[test]
fn a_rank_that_cannot_be_stopped_leaves_the_world_closed() {
    let world = one_rank();
    // Left to the rank's thread, which runs on after the call returns. A
    // loop that outlives the test: 2e9 iterations (vectorized) could end
    // within the interrupt's grace on a fast or idle machine.
    let n: &mut [i64] = Box::leak(Box::new([1i64 << 62]));
    let out: &mut [i64] = Box::leak(Box::new([0i64]));
    let arrays = [vec![
        Array::of(n.as_mut_ptr(), vec![1], DType::I64),
        Array::of(out.as_mut_ptr(), vec![1], DType::I64),
    ]];
    let busy: &'static Compiled = Box::leak(Box::new(program(BUSY)));
    let start = Instant::now();
    let check = || (start.elapsed() > Duration::from_millis(200)).then(|| "Ctrl-C".to_string());
    let result = interrupt::checking(&check, || world.run(busy, &[0], &arrays));
    assert!(
        start.elapsed() < Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );
    let Err(Failure::Run(error)) = result else {
        panic!("{result:?}")
    };
    let message = error.to_string();
    assert!(message.contains("interrupted: Ctrl-C"), "{message}");
    assert!(
        message.contains("left rank [0] running its program"),
        "{message}"
    );
    let closed = world.closed().expect("closed");
    match world.run(&program(NEG), &[0], &[vec![]]) {
        Err(Failure::Closed(why)) => assert_eq!(why, closed),
        other => panic!("{other:?}"),
    }
}
