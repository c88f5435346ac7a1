// A host program that takes no arguments, linked against libhir_runtime.so
// into a native executable (hir-opt -> mlir-translate -> llc -> cc), then
// run by mlir-runner --shared-libs: the recipe of docs/Runtime.md
// ("A native executable"). It fills a[2x2x3] = 0..11 and b[3x2] = 2k + n on
// the host, computes each slice c[i] = a[i] x b on pool stream i, then
// s = sum of c over its axis 1 on the caller's stream, waits for the streams
// (hir_runtime_synchronize) and prints s with MLIR's runner utils; main
// returns what the wait returned (0, or 1 if the rank failed).
// RUN: hir-opt %s --pass-pipeline='builtin.module(%hir_llvm_pipeline)' -o %t.llvm.mlir
// RUN: mlir-translate --mlir-to-llvmir %t.llvm.mlir -o %t.ll
// RUN: %llc -O2 -relocation-model=pic -filetype=obj %t.ll -o %t.o
// RUN: %cc %t.o -L%hir_lib_dir -lhir_runtime -L%mlir_lib_dir -lmlir_runner_utils \
// RUN:   -Wl,-rpath,%hir_lib_dir -Wl,-rpath,%mlir_lib_dir -o %t.exe
// RUN: %t.exe | FileCheck %s
// RUN: HIR_NUM_STREAMS=1 %t.exe | FileCheck %s
// RUN: mlir-runner %t.llvm.mlir -e main -entry-point-result=i32 \
// RUN:   --shared-libs=%hir_runtime,%mlir_runner_utils | FileCheck %s --check-prefixes=CHECK,RUNNER

// CHECK: rank = 2 offset = 0 sizes = [2, 2] strides = [2, 1] data =
// CHECK-NEXT: {{^\[\[38, +53\], *$}}
// CHECK-NEXT: {{^ \[110, +161\]\]$}}
// The runner prints main's result.
// RUNNER-NEXT: {{^}}0{{$}}

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}
func.func private @hir_runtime_synchronize() -> i64

func.func @main() -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %a = host.alloc : memref<2x2x3xf32>
  %b = host.alloc : memref<3x2xf32>
  %c = host.alloc : memref<2x2x2xf32>
  %s = host.alloc : memref<2x2xf32>
  scf.for %i = %c0 to %c2 step %c1 {
    scf.for %m = %c0 to %c2 step %c1 {
      scf.for %k = %c0 to %c3 step %c1 {
        %im = arith.muli %i, %c2 : index
        %row = arith.addi %im, %m : index
        %row3 = arith.muli %row, %c3 : index
        %flat = arith.addi %row3, %k : index
        %v = arith.index_cast %flat : index to i64
        %f = arith.sitofp %v : i64 to f32
        memref.store %f, %a[%i, %m, %k] : memref<2x2x3xf32>
      }
    }
  }
  scf.for %k = %c0 to %c3 step %c1 {
    scf.for %n = %c0 to %c2 step %c1 {
      %k2 = arith.muli %k, %c2 : index
      %flat = arith.addi %k2, %n : index
      %v = arith.index_cast %flat : index to i64
      %f = arith.sitofp %v : i64 to f32
      memref.store %f, %b[%k, %n] : memref<3x2xf32>
    }
  }
  %main = host.get_current_stream : !host.stream
  scf.for %i = %c0 to %c2 step %c1 {
    %st = host.stream_from_pool %i : !host.stream
    host.set_current_stream %st
    host.sync_stream %main
    %ai = host.select %a[0][%i] : memref<2x2x3xf32> to memref<2x3xf32, strided<[3, 1], offset: ?>>
    %ci = host.select %c[0][%i] : memref<2x2x2xf32> to memref<2x2xf32, strided<[2, 1], offset: ?>>
    host.matmul ins(%ai, %b : memref<2x3xf32, strided<[3, 1], offset: ?>>, memref<3x2xf32>)
                outs(%ci : memref<2x2xf32, strided<[2, 1], offset: ?>>)
    host.set_current_stream %main
    host.sync_stream %st
  }
  host.sum [1] ins(%c : memref<2x2x2xf32>) outs(%s : memref<2x2xf32>)
  %failed = func.call @hir_runtime_synchronize() : () -> i64
  %u = memref.cast %s : memref<2x2xf32> to memref<*xf32>
  func.call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  %status = arith.trunci %failed : i64 to i32
  return %status : i32
}
