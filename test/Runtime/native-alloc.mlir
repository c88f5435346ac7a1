// A native program's memref.alloc goes through libhir_runtime.so's checked
// heap: 64 MiB is allocated, written and freed; 2^60 B fits in no address
// space, and the program, which runs outside hir_runtime::exit::call and
// cannot go on without the memory, ends with status 1 and the rank's error
// (before: malloc's null result was stored through, a segfault; `not`
// fails on a signal).
// RUN: hir-opt %s --pass-pipeline='builtin.module(%hir_llvm_pipeline)' | mlir-translate --mlir-to-llvmir -o %t.ll
// RUN: %llc -O2 -relocation-model=pic -filetype=obj %t.ll -o %t.o
// RUN: %cc %t.o -L%hir_lib_dir -lhir_runtime -Wl,-rpath,%hir_lib_dir -o %t.exe
// RUN: not %t.exe 2>&1 | FileCheck %s

// The same program under mlir-runner.
// RUN: hir-opt %s --pass-pipeline='builtin.module(%hir_llvm_pipeline)' \
// RUN:   | not mlir-runner -e main -entry-point-result=i32 --shared-libs=%hir_runtime 2>&1 \
// RUN:   | FileCheck %s

// CHECK: allocated 64 MiB
// CHECK-NEXT: hir runtime: rank 0: memref.alloc: out of memory: the program's memref.alloc of 1152921504606846976 B; the program runs outside hir_runtime::exit::call and cannot go on, so the process ends
// CHECK-NOT: unreachable

llvm.mlir.global internal constant @fits("allocated 64 MiB\0A\00") {addr_space = 0 : i32}
llvm.mlir.global internal constant @after("unreachable\0A\00") {addr_space = 0 : i32}
llvm.func @printf(!llvm.ptr, ...) -> i32
llvm.func @fflush(!llvm.ptr) -> i32

func.func @fill(%bytes: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %v = arith.constant 7 : i8
  %last = arith.subi %bytes, %c1 : index
  %m = memref.alloc(%bytes) : memref<?xi8>
  memref.store %v, %m[%c0] : memref<?xi8>
  memref.store %v, %m[%last] : memref<?xi8>
  memref.dealloc %m : memref<?xi8>
  return
}

func.func @main() -> i32 {
  %fits = arith.constant 67108864 : index
  %enormous = arith.constant 1152921504606846976 : index
  func.call @fill(%fits) : (index) -> ()
  %fits_text = llvm.mlir.addressof @fits : !llvm.ptr
  %null = llvm.mlir.zero : !llvm.ptr
  llvm.call @printf(%fits_text) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr) -> i32
  llvm.call @fflush(%null) : (!llvm.ptr) -> i32
  func.call @fill(%enormous) : (index) -> ()
  %after_text = llvm.mlir.addressof @after : !llvm.ptr
  llvm.call @printf(%after_text) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr) -> i32
  %zero = arith.constant 0 : i32
  return %zero : i32
}
