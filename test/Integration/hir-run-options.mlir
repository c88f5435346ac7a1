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
// CHECK: 2 iterations: mean {{.*}} ms, min {{.*}} ms
// TRACE: "traceEvents"
