// RUN: hir-opt %s -split-input-file -verify-diagnostics

// avg divides: the reducing collectives refuse it on integer buffers.

func.func @allreduce(%a: memref<8xi32>, %b: memref<8xi32>) {
  // expected-error @+1 {{'comm.allreduce' op avg of 'i32' is not supported (integer division)}}
  %0 = comm.allreduce %a into %b avg team [0, 1] : memref<8xi32> into memref<8xi32>
  return
}

// -----

func.func @reduce_scatter(%a: memref<2x8xi64>, %b: memref<1x8xi64>) {
  // expected-error @+1 {{'comm.reduce_scatter' op avg of 'i64' is not supported (integer division)}}
  %0 = comm.reduce_scatter %a into %b avg team [0, 1] : memref<2x8xi64> into memref<1x8xi64>
  return
}

// -----

func.func @reduce(%a: memref<8xi64>, %b: memref<8xi64>) {
  // expected-error @+1 {{'comm.reduce' op avg of 'i64' is not supported (integer division)}}
  %0 = comm.reduce %a into %b avg root 0 team [0, 1] : memref<8xi64> into memref<8xi64>
  return
}

// -----

func.func @unsigned(%a: memref<8xui32>, %b: memref<8xui32>) {
  // expected-error @+1 {{'comm.allreduce' op operand #0 must be memref of 16-bit float or bfloat16 type or 32-bit float or 32-bit signless integer or 64-bit signless integer values, but got 'memref<8xui32>'}}
  %0 = comm.allreduce %a into %b sum team [0, 1] : memref<8xui32> into memref<8xui32>
  return
}
