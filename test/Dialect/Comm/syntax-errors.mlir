// RUN: hir-opt %s -split-input-file -verify-diagnostics

// Malformed comm IR: each chunk must fail to parse with a located diagnostic.

// An unknown reduce kind.
func.func @f(%a: memref<8xf32>, %b: memref<8xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'kind' [sum, prod, max, min, avg]}}
  %0 = comm.allreduce %a into %b mean team [0, 1] : memref<8xf32> into memref<8xf32>
  return
}

// -----

// An unknown backend.
func.func @f(%a: memref<8xf32>, %b: memref<8xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'backend' [nccl, cuda]}}
  %0 = comm.allreduce %a into %b sum team [0, 1] on mpi : memref<8xf32> into memref<8xf32>
  return
}

// -----

// Every communication names its team.
func.func @f(%a: memref<8xf32>, %b: memref<8xf32>) {
  // expected-error @+1 {{expected 'team'}}
  %0 = comm.allreduce %a into %b sum : memref<8xf32> into memref<8xf32>
  return
}

// -----

// The rooted collectives name their root.
func.func @f(%a: memref<8xf32>, %b: memref<8xf32>) {
  // expected-error @+1 {{expected 'root'}}
  %0 = comm.broadcast %a into %b team [0, 1] : memref<8xf32> into memref<8xf32>
  return
}

// -----

// An unknown comm type.
// expected-error @+1 {{unknown  type `req` in dialect `comm`}}
func.func private @f(!comm.req)

// -----

// An unknown comm op.
func.func @f(%a: memref<8xf32>, %b: memref<8xf32>) {
  // expected-error @+1 {{custom op 'comm.allgatherv' is unknown}}
  %0 = comm.allgatherv %a into %b team [0, 1] : memref<8xf32> into memref<8xf32>
  return
}

// -----

// A root value is an index.
// expected-note @+1 {{prior use here}}
func.func @f(%a: memref<8xf32>, %b: memref<8xf32>, %i: i64) {
  // expected-error @+1 {{use of value '%i' expects different type than prior uses: 'index' vs 'i64'}}
  %0 = comm.broadcast %a into %b root %i team [0, 1] : memref<8xf32> into memref<8xf32>
  return
}

// -----

// Several teams have one size.
func.func @f(%a: memref<8xf32>, %b: memref<8xf32>) {
  // expected-error @+1 {{teams differ in size}}
  %0 = comm.allreduce %a into %b sum team [[0, 1], [2]] : memref<8xf32> into memref<8xf32>
  return
}
