// fusion.reshape splitting and merging a distributed axis as an outer split
// (issue 38): [S, H] with H split over the devices becomes [S, heads, dh]
// with the heads split, each device reshaping its own contiguous shard; the
// merge back feeds a row-parallel linear (a reduce-scatter). Checked against
// the f64 reference on 2 and 4 cpu ranks; on 4 the values between the split
// and the merge are left to fusion-propagate-sharding.
// RUN: hir-run -n 2 --check %S/Inputs/reshape_heads_2.mlir | FileCheck %s
// RUN: hir-run -n 4 --check %S/Inputs/reshape_heads_4.mlir | FileCheck %s
// RUN: hir-opt --pass-pipeline='builtin.module(hir-lower{overlap=none})' %S/Inputs/reshape_heads_2.mlir | FileCheck %s --check-prefix=HOST
// RUN: hir-opt --pass-pipeline='builtin.module(hir-lower{overlap=none})' %S/Inputs/reshape_heads_4.mlir | FileCheck %s --check-prefix=HOST4
// RUN: not hir-opt --hir-lower %s 2>&1 | FileCheck %s --check-prefix=INDIVISIBLE

// CHECK: ran @heads on {{[24]}} ranks
// CHECK-NEXT: result0: relative error {{.*}}: ok

// Local shapes on both sides of each reshape; no collective but the
// row-parallel linear's reduce-scatter (whole: overlap=none).
// HOST: host.reshape ins(%{{.+}} : memref<8x8xf32>) outs(%{{.+}} : memref<8x2x4xf32>)
// HOST: host.transpose [1, 0, 2] ins(%{{.+}} : memref<8x2x4xf32>) outs(%{{.+}} : memref<2x8x4xf32>)
// HOST: host.reshape ins(%{{.+}} : memref<8x2x4xf32>) outs(%{{.+}} : memref<8x8xf32>)
// HOST: host.linear ins(%{{.+}}, %{{.+}} : memref<8x8xf32>, memref<16x8xf32>)
// HOST-NOT: comm.allgather
// HOST: comm.reduce_scatter
// HOST-NEXT: comm.wait
// HOST-NOT: comm.allgather
// HOST4: host.reshape ins(%{{.+}} : memref<8x4xf32>) outs(%{{.+}} : memref<8x1x4xf32>)
// HOST4: host.reshape ins(%{{.+}} : memref<8x1x4xf32>) outs(%{{.+}} : memref<8x4xf32>)
// HOST4-NOT: comm.allgather
// HOST4: comm.reduce_scatter

// The device count must divide the split's outer extent (3 heads on 2).
// INDIVISIBLE: reshape-heads.mlir:[[@LINE+4]]:8: error: result #0: didx axis 1 has extent 3, not a multiple of the 2 devices of mesh '@tp'
fusion.mesh @tp = [0, 1]
func.func @indivisible(%x: tensor<8x6xf32, #fusion.dist<@tp, [serial, didx]>>)
    -> tensor<8x3x2xf32, #fusion.dist<@tp, [serial, didx, serial]>> {
  %r = fusion.reshape %x : tensor<8x6xf32, #fusion.dist<@tp, [serial, didx]>> -> tensor<8x3x2xf32, #fusion.dist<@tp, [serial, didx, serial]>>
  return %r : tensor<8x3x2xf32, #fusion.dist<@tp, [serial, didx, serial]>>
}
