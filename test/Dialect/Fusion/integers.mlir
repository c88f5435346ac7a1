// RUN: hir-opt %s | hir-opt | FileCheck %s
// RUN: hir-opt %s --mlir-print-op-generic | hir-opt | FileCheck %s

// The fusion ops that take integer tensors (i32, i64) survive printing and
// re-parsing: set, neg, abs, relu, add, sub, mul, max, min, where,
// transpose, reshape, slice, fill, iota, sum, amax, broadcast and cast (to
// and from every element type).

fusion.mesh @tp = [0, 1, 2, 3]

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%a: tensor<8x16xi32>, %b: tensor<8x16xi32>) -> tensor<8x16xi32> {
  // CHECK: fusion.neg %{{.*}} : tensor<8x16xi32> -> tensor<8x16xi32>
  %0 = fusion.neg %a : tensor<8x16xi32> -> tensor<8x16xi32>
  // CHECK: fusion.abs
  %1 = fusion.abs %0 : tensor<8x16xi32> -> tensor<8x16xi32>
  // CHECK: fusion.relu
  %2 = fusion.relu %1 : tensor<8x16xi32> -> tensor<8x16xi32>
  // CHECK: fusion.add
  %3 = fusion.add %2, %b : tensor<8x16xi32>, tensor<8x16xi32> -> tensor<8x16xi32>
  // CHECK: fusion.sub
  %4 = fusion.sub %3, %b : tensor<8x16xi32>, tensor<8x16xi32> -> tensor<8x16xi32>
  // CHECK: fusion.mul
  %5 = fusion.mul %4, %b : tensor<8x16xi32>, tensor<8x16xi32> -> tensor<8x16xi32>
  // CHECK: fusion.max
  %6 = fusion.max %5, %b : tensor<8x16xi32>, tensor<8x16xi32> -> tensor<8x16xi32>
  // CHECK: fusion.min
  %7 = fusion.min %6, %b : tensor<8x16xi32>, tensor<8x16xi32> -> tensor<8x16xi32>
  // CHECK: fusion.where %{{.*}}, %{{.*}}, %{{.*}} : tensor<8x16xi32>, tensor<8x16xi32>, tensor<8x16xi32> -> tensor<8x16xi32>
  %8 = fusion.where %a, %7, %b : tensor<8x16xi32>, tensor<8x16xi32>, tensor<8x16xi32>
                             -> tensor<8x16xi32>
  return %8 : tensor<8x16xi32>
}

// CHECK-LABEL: func.func @layout
func.func @layout(%x: tensor<8x16xi64, #fusion.dist<@tp, [didx, serial]>>)
    -> tensor<16x8xi64, #fusion.dist<@tp, [serial, serial]>> {
  // CHECK: fusion.set %{{.*}} : tensor<8x16xi64, #fusion.dist<@tp, [didx, serial]>> -> tensor<8x16xi64, #fusion.dist<@tp, [serial, serial]>>
  %0 = fusion.set %x : tensor<8x16xi64, #fusion.dist<@tp, [didx, serial]>>
                    -> tensor<8x16xi64, #fusion.dist<@tp, [serial, serial]>>
  // CHECK: fusion.transpose %{{.*}} [1, 0]
  %1 = fusion.transpose %0 [1, 0] : tensor<8x16xi64, #fusion.dist<@tp, [serial, serial]>>
                                 -> tensor<16x8xi64, #fusion.dist<@tp, [serial, serial]>>
  // CHECK: fusion.reshape %{{.*}} : tensor<16x8xi64, {{.*}}> -> tensor<128xi64, {{.*}}>
  %2 = fusion.reshape %1 : tensor<16x8xi64, #fusion.dist<@tp, [serial, serial]>>
                        -> tensor<128xi64, #fusion.dist<@tp, [serial]>>
  %3 = fusion.reshape %2 : tensor<128xi64, #fusion.dist<@tp, [serial]>>
                        -> tensor<16x8xi64, #fusion.dist<@tp, [serial, serial]>>
  // CHECK: fusion.slice %{{.*}} offsets [0, 0] strides [1, 1] : tensor<16x8xi64, {{.*}}> -> tensor<16x8xi64, {{.*}}>
  %4 = fusion.slice %3 offsets [0, 0] strides [1, 1] : tensor<16x8xi64, #fusion.dist<@tp, [serial, serial]>>
                                                   -> tensor<16x8xi64, #fusion.dist<@tp, [serial, serial]>>
  return %4 : tensor<16x8xi64, #fusion.dist<@tp, [serial, serial]>>
}

// CHECK-LABEL: func.func @generate_and_reduce
func.func @generate_and_reduce() -> (tensor<16xi32>, tensor<16xi64>, tensor<8x16xi64>) {
  // CHECK: fusion.fill -3.000000e+00 : tensor<8x16xi32>
  %f = fusion.fill -3.0 : tensor<8x16xi32>
  // The largest i32 (printed as the f64's bits).
  // CHECK: fusion.fill 0x41DFFFFFFFC00000 : tensor<16xi32>
  %big = fusion.fill 2147483647.0 : tensor<16xi32>
  // CHECK: fusion.iota 1 : tensor<8x16xi64>
  %i = fusion.iota 1 : tensor<8x16xi64>
  // CHECK: fusion.sum %{{.*}} [0] : tensor<8x16xi32> -> tensor<16xi32>
  %s = fusion.sum %f [0] : tensor<8x16xi32> -> tensor<16xi32>
  // CHECK: fusion.amax %{{.*}} [0] : tensor<8x16xi64> -> tensor<16xi64>
  %m = fusion.amax %i [0] : tensor<8x16xi64> -> tensor<16xi64>
  // CHECK: fusion.broadcast %{{.*}} [0] : tensor<16xi64> -> tensor<8x16xi64>
  %b = fusion.broadcast %m [0] : tensor<16xi64> -> tensor<8x16xi64>
  %t = fusion.add %s, %big : tensor<16xi32>, tensor<16xi32> -> tensor<16xi32>
  return %t, %m, %b : tensor<16xi32>, tensor<16xi64>, tensor<8x16xi64>
}

// CHECK-LABEL: func.func @casts
func.func @casts(%ids: tensor<8xi32>, %x: tensor<8xbf16>)
    -> (tensor<8xf32>, tensor<8xf16>, tensor<8xbf16>, tensor<8xi32>, tensor<8xi64>) {
  // CHECK: fusion.cast %{{.*}} : tensor<8xi32> -> tensor<8xf32>
  %0 = fusion.cast %ids : tensor<8xi32> -> tensor<8xf32>
  // CHECK: fusion.cast %{{.*}} : tensor<8xi32> -> tensor<8xi64>
  %1 = fusion.cast %ids : tensor<8xi32> -> tensor<8xi64>
  // CHECK: fusion.cast %{{.*}} : tensor<8xi64> -> tensor<8xf16>
  %2 = fusion.cast %1 : tensor<8xi64> -> tensor<8xf16>
  // CHECK: fusion.cast %{{.*}} : tensor<8xi64> -> tensor<8xbf16>
  %3 = fusion.cast %1 : tensor<8xi64> -> tensor<8xbf16>
  // CHECK: fusion.cast %{{.*}} : tensor<8xbf16> -> tensor<8xi32>
  %4 = fusion.cast %x : tensor<8xbf16> -> tensor<8xi32>
  // CHECK: fusion.cast %{{.*}} : tensor<8xf32> -> tensor<8xi64>
  %5 = fusion.cast %0 : tensor<8xf32> -> tensor<8xi64>
  // CHECK: fusion.cast %{{.*}} : tensor<8xi64> -> tensor<8xi32>
  %6 = fusion.cast %5 : tensor<8xi64> -> tensor<8xi32>
  %7 = fusion.add %4, %6 : tensor<8xi32>, tensor<8xi32> -> tensor<8xi32>
  return %0, %2, %3, %7, %5 : tensor<8xf32>, tensor<8xf16>, tensor<8xbf16>, tensor<8xi32>, tensor<8xi64>
}
