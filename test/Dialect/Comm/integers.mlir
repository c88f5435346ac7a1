// RUN: hir-opt %s | hir-opt | FileCheck %s
// RUN: hir-opt %s --mlir-print-op-generic | hir-opt | FileCheck %s

// Collectives and transfers of integer buffers (i32, i64).

// CHECK-LABEL: func.func @collectives
func.func @collectives(%a: memref<8xi32>, %b: memref<8xi32>, %g: memref<4x8xi64>,
                       %h: memref<1x8xi64>) {
  // CHECK: comm.allreduce %{{.*}} into %{{.*}} sum team [0, 1, 2, 3] : memref<8xi32> into memref<8xi32>
  %0 = comm.allreduce %a into %b sum team [0, 1, 2, 3] : memref<8xi32> into memref<8xi32>
  // CHECK: comm.allreduce %{{.*}} into %{{.*}} max team
  %1 = comm.allreduce %a into %b max team [0, 1, 2, 3] : memref<8xi32> into memref<8xi32>
  // CHECK: comm.allgather %{{.*}} into %{{.*}} team [0, 1, 2, 3] : memref<1x8xi64> into memref<4x8xi64>
  %2 = comm.allgather %h into %g team [0, 1, 2, 3] : memref<1x8xi64> into memref<4x8xi64>
  // CHECK: comm.reduce_scatter %{{.*}} into %{{.*}} prod team
  %3 = comm.reduce_scatter %g into %h prod team [0, 1, 2, 3] : memref<4x8xi64> into memref<1x8xi64>
  // CHECK: comm.broadcast %{{.*}} into %{{.*}} root 0 team [0, 1] : memref<8xi32> into memref<8xi32>
  %4 = comm.broadcast %a into %b root 0 team [0, 1] : memref<8xi32> into memref<8xi32>
  comm.wait %0
  comm.wait %1
  comm.wait %2
  comm.wait %3
  comm.wait %4
  return
}
