// A rank that fails in a native program: the loop runs one slice past the
// end of %a, so the third hir_rt_neg_f32 fails its bounds check. main
// returns 0 and never waits for the streams: libhir_runtime.so's exit check
// waits, reports the rank's error and makes the exit status 1.
// RUN: hir-opt %s --pass-pipeline='builtin.module(%hir_llvm_pipeline)' | mlir-translate --mlir-to-llvmir -o %t.ll
// RUN: %llc -O2 -relocation-model=pic -filetype=obj %t.ll -o %t.o
// RUN: %cc %t.o -L%hir_lib_dir -lhir_runtime -Wl,-rpath,%hir_lib_dir -o %t.exe
// RUN: not %t.exe 2>&1 | FileCheck %s

// The same program under mlir-runner fails the same way.
// RUN: hir-opt %s --pass-pipeline='builtin.module(%hir_llvm_pipeline)' \
// RUN:   | not mlir-runner -e main -entry-point-result=i32 --shared-libs=%hir_runtime 2>&1 \
// RUN:   | FileCheck %s

// Configuration errors end the process before the program's first call.
// RUN: WORLD_SIZE=2 not %t.exe 2>&1 | FileCheck %s --check-prefix=SIZE
// RUN: HIR_BACKEND=tpu not %t.exe 2>&1 | FileCheck %s --check-prefix=BACKEND
// RUN: HIR_NUM_STREAMS=0 not %t.exe 2>&1 | FileCheck %s --check-prefix=STREAMS

// CHECK: hir runtime: the run failed: rank 0: hir_rt_neg_f32: operand #1 view [offset 32 B, 4 x 4 B, strides 1] overruns its allocation of 32 B
// SIZE: hir runtime: WORLD_SIZE=2: a native program is one rank
// BACKEND: hir runtime: HIR_BACKEND=tpu: libhir_runtime.so runs the cpu backend only
// STREAMS: hir runtime: HIR_NUM_STREAMS=0: expected a positive integer

func.func @main() -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %a = host.alloc : memref<2x4xf32>
  %b = host.alloc : memref<3x4xf32>
  scf.for %i = %c0 to %c3 step %c1 {
    %ai = host.select %a[0][%i] : memref<2x4xf32> to memref<4xf32, strided<[1], offset: ?>>
    %bi = host.select %b[0][%i] : memref<3x4xf32> to memref<4xf32, strided<[1], offset: ?>>
    host.neg ins(%ai : memref<4xf32, strided<[1], offset: ?>>) outs(%bi : memref<4xf32, strided<[1], offset: ?>>)
  }
  %zero = arith.constant 0 : i32
  return %zero : i32
}
