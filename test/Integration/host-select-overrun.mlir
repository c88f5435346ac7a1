// An out-of-range host.select index in a loop (i = 4 of a [4, 8] buffer) is
// an error naming the entry, the operand and the sizes, on every rank; the
// kernel never writes past the buffer.
// RUN: not hir-run -n 2 %s 2>&1 | FileCheck %s
// CHECK: hir-run: error: the run failed: rank {{[01]}}: hir_rt_neg_f32: operand #2 view [offset 128 B, 8 x 4 B, strides 1] overruns its allocation of 128 B
// CHECK-NEXT: then rank {{[01]}}: hir_rt_neg_f32: operand #2 view [offset 128 B, 8 x 4 B, strides 1] overruns its allocation of 128 B

// A failed rank whose loop of 2^63 - 1 iterations calls the runtime leaves
// its program at its next call (hir-run runs the entry through
// hir_runtime::exit::call): no rank thread is left for --timeout to end.
// RUN: not hir-run -n 2 --timeout 1 %S/Inputs/overrun_long_loop.mlir 2>&1 | FileCheck %s --check-prefix=LONG
// LONG: hir-run: error: the run failed: rank {{[01]}}: hir_rt_neg_f32: operand #1 view [offset 128 B, 8 x 4 B, strides 1] overruns its allocation of 128 B
// LONG-NOT: did not return

// A failed rank whose own loop calls no runtime entry cannot be brought
// back: it gets --timeout to return; then the process ends with the error
// instead of hanging.
// RUN: not hir-run -n 2 --timeout 1 %S/Inputs/overrun_then_spin.mlir 2>&1 | FileCheck %s --check-prefix=SPIN
// SPIN: error: the run failed: rank {{[01]}}: hir_rt_neg_f32: operand #2 view [offset 128 B, 8 x 4 B, strides 1] overruns its allocation of 128 B
// SPIN: and 2 rank threads did not return within 1s of the failure (a failed rank's runtime calls do nothing, but its program's own loops run on): ending the process
func.func @overrun(%a: memref<4x8xf32>, %b: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %g = host.alloc : memref<4x8xf32>
  scf.for %i = %c0 to %c6 step %c1 {
    %ai = host.select %a[0][%c0] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    %gi = host.select %g[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.neg ins(%ai : memref<8xf32, strided<[1], offset: ?>>) outs(%gi : memref<8xf32, strided<[1], offset: ?>>)
  }
  host.copy ins(%g : memref<4x8xf32>) outs(%b : memref<4x8xf32>)
  host.dealloc %g : memref<4x8xf32>
  return
}
