// --poison (on with --check) fills every fresh buffer with NaN: a program
// that copies out an intermediate it wrote only half of gives NaN where it
// missed, instead of the zeros that hid the missing write. The host program
// negates row 0 of its input into a fresh buffer and copies all of it out.

// RUN: hir-run --poison --output-dir %t.poisoned %s | FileCheck %s
// RUN: %python %S/Inputs/check_npy.py %t.poisoned "close(arg1_rank0[:4], [-x for x in arg0_rank0[:4]]) and all(x != x for x in arg1_rank0[4:])"
// RUN: hir-run --output-dir %t.zeroed %s | FileCheck %s
// RUN: %python %S/Inputs/check_npy.py %t.zeroed "close(arg1_rank0[:4], [-x for x in arg0_rank0[:4]]) and arg1_rank0[4:] == [0.0] * 4"
// RUN: hir-run --poison -n 2 --num-streams 1 --output-dir %t.two %s | FileCheck %s --check-prefix=TWO
// RUN: %python %S/Inputs/check_npy.py %t.two "all(x != x for x in arg1_rank0[4:] + arg1_rank1[4:])"

// A fusion program under --check runs poisoned: every example still matches
// its reference (test/Integration/examples.mlir), so no pass leaves a fresh
// buffer partly unwritten.
// RUN: hir-run --check -n 4 %examples/ag_matmul.mlir | FileCheck %s --check-prefix=FUSION

// CHECK: ran @missing_write on 1 rank
// TWO: ran @missing_write on 2 ranks
// FUSION: result0: relative error {{.*}}: ok
func.func @missing_write(%a: memref<2x4xf32>, %out: memref<2x4xf32>) {
  %c0 = arith.constant 0 : index
  %t = host.alloc : memref<2x4xf32>
  %a0 = host.select %a[0][%c0] : memref<2x4xf32> to memref<4xf32, strided<[1], offset: ?>>
  %t0 = host.select %t[0][%c0] : memref<2x4xf32> to memref<4xf32, strided<[1], offset: ?>>
  host.neg ins(%a0 : memref<4xf32, strided<[1], offset: ?>>) outs(%t0 : memref<4xf32, strided<[1], offset: ?>>)
  host.copy ins(%t : memref<2x4xf32>) outs(%out : memref<2x4xf32>)
  host.dealloc %t : memref<2x4xf32>
  return
}
