// --print-ir shows each stage, --iters times runs after the first, --trace
// writes a Chrome/Perfetto timeline, --output-dir the global outputs.
// RUN: hir-run -n 4 --print-ir --iters 2 --trace %t.json --output-dir %t %examples/allgather.mlir | FileCheck %s
// RUN: FileCheck %s --input-file=%t.json --check-prefix=TRACE
// RUN: %python %S/Inputs/check_npy.py %t "len(result0) > 0 and all(abs(x) >= 0.09 for x in result0)"

// CHECK: // ----- input
// CHECK: fusion.set
// CHECK: // ----- IR after hir-lower
// CHECK: comm.allgather
// CHECK: // ----- IR after LLVM lowering
// CHECK: llvm.call @hir_rt_allgather_f32
// CHECK: ran @allgather on 4 ranks
// CHECK: 2 iterations: median {{.*}} ms, mean {{.*}} ms, min {{.*}} ms (slowest rank); host {{.*}} ms a call
// TRACE: "traceEvents"

// --version: the crate's version and the commit the tools were built from.
// RUN: hir-run --version | FileCheck %s --check-prefix=VERSION
// VERSION: hir-run {{[0-9]+\.[0-9]+\.[0-9]+}} (commit {{.+}})

// HIR_LOG=debug logs each phase on stderr, with a rank field for what is
// about one rank; stdout keeps the results alone.
// RUN: HIR_LOG=debug hir-run -n 4 --iters 2 %examples/allgather.mlir 2> %t.log | FileCheck %s --check-prefix=QUIET-OUT
// RUN: FileCheck %s --input-file=%t.log --check-prefix=LOG --implicit-check-not='iteration 1/2'
// QUIET-OUT: ran @allgather on 4 ranks
// Each start-up stage is logged with its own duration (the compile's own
// stages by hir::compile, then the compile as one hir-run stage), then the
// total to the first result.
// LOG: hir-run: debug: compile stage="parse" ms={{[0-9.]+$}}
// LOG-NEXT: hir-run: debug: compile stage="import" ms={{[0-9.]+$}}
// LOG-NEXT: hir-run: debug: compile stage="hir-lower" ms={{[0-9.]+$}}
// LOG-NEXT: hir-run: debug: compile stage="llvm" ms={{[0-9.]+$}}
// LOG-NEXT: hir-run: debug: compile stage="jit" ms={{[0-9.]+$}}
// LOG-NEXT: hir-run: debug: compiled program={{.*}}allgather.mlir entry=@allgather fusion=true pipeline=hir-lower{num-streams=0 p2p=none ring-chunks=0{{.*}}}{{$}}
// LOG-NEXT: hir-run: debug: start-up stage stage=compile ms={{[0-9.]+$}}
// LOG-NEXT: hir-run: debug: start-up stage stage=world ms={{[0-9.]+$}}
// LOG-NEXT: hir-run: debug: start-up stage stage=inputs ms={{[0-9.]+$}}
// LOG: hir-run: debug: placed the arguments rank=3 buffers=2
// LOG-NEXT: hir-run: debug: start-up stage stage=placement ms={{[0-9.]+$}}
// LOG-NEXT: hir-run: debug: start-up stage stage=first-run ms={{[0-9.]+$}}
// LOG-NEXT: hir-run: debug: start-up stage stage=results ms={{[0-9.]+$}}
// LOG-NEXT: hir-run: debug: first result total_ms={{[0-9.]+$}}
// LOG: hir-run: debug: timed run iteration=2
// With --check, the reference is a stage of its own, after the compile.
// RUN: HIR_LOG=hir_tools::stages=debug hir-run -n 4 --check %examples/allgather.mlir 2>&1 >/dev/null | FileCheck %s --check-prefix=STAGES
// STAGES: hir-run: debug: start-up stage stage=compile
// STAGES-NEXT: hir-run: debug: start-up stage stage=reference
// STAGES-NEXT: hir-run: debug: start-up stage stage=world
// By default (info) nothing is logged on a run that succeeds.
// RUN: hir-run -n 4 --iters 2 %examples/allgather.mlir 2> %t.quiet
// RUN: count 0 < %t.quiet
