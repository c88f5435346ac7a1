// A rank's stack does not grow with a loop's trip count: the descriptors of
// each iteration's runtime calls are freed when it ends
// (hir-scope-loop-allocas). Before, a rank thread overflowed its stack after
// 15-20k calls.
// RUN: hir-run -n 1 %s | FileCheck %s --check-prefix=HOST
// RUN: hir-run -n 1 --check %S/Inputs/stream_axis_65536.mlir | FileCheck %s --check-prefix=STREAM
// A ring on one rank: its steps branch (scf.if) inside the bracketed body.
// RUN: hir-bench emit ag-ring -D 1 --m 64 --k 32 --n 16 --dtype f32 > %t.ring.mlir
// RUN: hir-run -n 1 --p2p nccl --num-streams 2 --check %t.ring.mlir | FileCheck %s --check-prefix=RING
// RING: result0: relative error {{.*}}: ok

// HOST: ran @million_calls on 1 rank
// STREAM: ran @long_stream on 1 rank
// STREAM: result0: relative error {{.*}}: ok

// A host loop of 10^6 runtime calls.
func.func @million_calls(%a: memref<4xf32>, %b: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 1000000 : index
  scf.for %i = %c0 to %n step %c1 {
    host.neg ins(%a : memref<4xf32>) outs(%b : memref<4xf32>)
  }
  return
}
