// RUN: hir-opt %s | hir-opt | FileCheck %s
// RUN: hir-opt %s --mlir-print-op-generic | hir-opt | FileCheck %s

// The host ops that take integer buffers (i32, i64) survive printing and
// re-parsing.

// CHECK-LABEL: func.func @compute
func.func @compute(%a: memref<4x8xi32>, %b: memref<4x8xi32>, %c: memref<8xi32>,
                   %w: memref<8x4xi64>, %i: index) {
  // CHECK: %[[T:.*]] = host.alloc : memref<4x8xi32>
  %t = host.alloc : memref<4x8xi32>
  // CHECK: host.copy ins(%{{.*}} : memref<4x8xi32>) outs(%[[T]] : memref<4x8xi32>)
  host.copy ins(%a : memref<4x8xi32>) outs(%t : memref<4x8xi32>)
  // CHECK: host.neg ins
  host.neg ins(%a : memref<4x8xi32>) outs(%t : memref<4x8xi32>)
  // CHECK: host.abs ins
  host.abs ins(%t : memref<4x8xi32>) outs(%t : memref<4x8xi32>)
  // CHECK: host.relu ins
  host.relu ins(%t : memref<4x8xi32>) outs(%t : memref<4x8xi32>)
  // CHECK: host.add ins(%{{.*}}, %{{.*}} : memref<4x8xi32>, memref<4x8xi32>) outs(%[[T]] : memref<4x8xi32>)
  host.add ins(%a, %b : memref<4x8xi32>, memref<4x8xi32>) outs(%t : memref<4x8xi32>)
  // CHECK: host.sub ins
  host.sub ins(%t, %b : memref<4x8xi32>, memref<4x8xi32>) outs(%t : memref<4x8xi32>)
  // CHECK: host.mul ins
  host.mul ins(%t, %b : memref<4x8xi32>, memref<4x8xi32>) outs(%t : memref<4x8xi32>)
  // CHECK: host.max ins
  host.max ins(%t, %b : memref<4x8xi32>, memref<4x8xi32>) outs(%t : memref<4x8xi32>)
  // CHECK: host.min ins
  host.min ins(%t, %b : memref<4x8xi32>, memref<4x8xi32>) outs(%t : memref<4x8xi32>)
  // CHECK: host.where ins
  host.where ins(%a, %t, %b : memref<4x8xi32>, memref<4x8xi32>, memref<4x8xi32>)
             outs(%t : memref<4x8xi32>)
  // CHECK: host.sum [0] ins(%{{.*}} : memref<4x8xi32>) outs(%{{.*}} : memref<8xi32>)
  host.sum [0] ins(%t : memref<4x8xi32>) outs(%c : memref<8xi32>)
  // CHECK: host.amax [0] ins
  host.amax [0] ins(%t : memref<4x8xi32>) outs(%c : memref<8xi32>)
  // CHECK: host.broadcast [0] ins(%{{.*}} : memref<8xi32>) outs(%{{.*}} : memref<4x8xi32>)
  host.broadcast [0] ins(%c : memref<8xi32>) outs(%t : memref<4x8xi32>)
  // CHECK: host.fill -7.000000e+00 outs(%{{.*}} : memref<4x8xi32>)
  host.fill -7.0 outs(%t : memref<4x8xi32>)
  // CHECK: host.iota 0, %{{.*}} outs(%{{.*}} : memref<8x4xi64>)
  host.iota 0, %i outs(%w : memref<8x4xi64>)
  %u = host.alloc : memref<4x8xi64>
  // CHECK: host.transpose [1, 0] ins(%{{.*}} : memref<8x4xi64>) outs(%{{.*}} : memref<4x8xi64>)
  host.transpose [1, 0] ins(%w : memref<8x4xi64>) outs(%u : memref<4x8xi64>)
  %r = host.alloc : memref<32xi64>
  // CHECK: host.reshape ins(%{{.*}} : memref<4x8xi64>) outs(%{{.*}} : memref<32xi64>)
  host.reshape ins(%u : memref<4x8xi64>) outs(%r : memref<32xi64>)
  // CHECK: host.select %{{.*}}[0][%{{.*}}] : memref<4x8xi64> to memref<8xi64, strided<[1], offset: ?>>
  %row = host.select %u[0][%i] : memref<4x8xi64> to memref<8xi64, strided<[1], offset: ?>>
  // Casts to and from the float types and between the integer ones.
  %f = host.alloc : memref<4x8xf32>
  // CHECK: host.cast ins(%{{.*}} : memref<4x8xi32>) outs(%{{.*}} : memref<4x8xf32>)
  host.cast ins(%a : memref<4x8xi32>) outs(%f : memref<4x8xf32>)
  // CHECK: host.cast ins(%{{.*}} : memref<4x8xf32>) outs(%{{.*}} : memref<4x8xi64>)
  host.cast ins(%f : memref<4x8xf32>) outs(%u : memref<4x8xi64>)
  // CHECK: host.cast ins(%{{.*}} : memref<4x8xi64>) outs(%{{.*}} : memref<4x8xi32>)
  host.cast ins(%u : memref<4x8xi64>) outs(%t : memref<4x8xi32>)
  host.dealloc %f : memref<4x8xf32>
  host.dealloc %r : memref<32xi64>
  host.dealloc %u : memref<4x8xi64>
  host.dealloc %t : memref<4x8xi32>
  return
}
