// A failed rank leaves its program at its next runtime call in hir-run too:
// hir-run calls the entry through hir_runtime::exit::call (hir::jit's
// Packed::call, the only way to call a JIT'd entry). Both ranks fail the
// bounds check of their loop's first call; the loop would then run 10^10
// skipped calls (about 30 ns each, minutes) if its rank did not leave.
// RUN: %python %S/Inputs/within.py 60 hir-run -n 2 %s | FileCheck %s
// CHECK: hir-run: error: the run failed: rank {{[01]}}: hir_rt_neg_f32: operand #1 view [offset 32 B, 4 x 4 B, strides 1] overruns its allocation of 32 B
// CHECK: exit 1

// The same with ranks in processes.
// RUN: %python %S/Inputs/within.py 60 hir-run -n 2 --launch processes %s | FileCheck %s --check-prefix=PROCESSES
// PROCESSES: hir-run: error: rank {{[01]}} failed in run: the run failed: rank {{[01]}}: hir_rt_neg_f32: operand #1 view [offset 32 B, 4 x 4 B, strides 1] overruns its allocation of 32 B
// PROCESSES: exit 1

func.func @leave(%a: memref<2x4xf32>, %b: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = arith.constant 10000000000 : index
  scf.for %i = %c2 to %n step %c1 {
    %ai = host.select %a[0][%i] : memref<2x4xf32> to memref<4xf32, strided<[1], offset: ?>>
    host.neg ins(%ai : memref<4xf32, strided<[1], offset: ?>>) outs(%b : memref<4xf32>)
  }
  return
}
