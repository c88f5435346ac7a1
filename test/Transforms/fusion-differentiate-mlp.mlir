// The backward of Megatron's TP/SP MLP (hir-bench program mlp --t 64 --h 32
// --f 64 -n 2 --dtype f32): its collectives are the pipelines the forward's
// are. FC2's input gradient gathers dy into a GEMM (AG+GEMM, a ring with
// p2p=nccl), FC1's is a GEMM reduced into x's row split (GEMM+RS, a chain of
// accumulating GEMMs with p2p=nccl), and FC1's weight gradient reads the
// gathered input, saved by the forward or (saved=recompute) gathered again.
// RUN: hir-opt %s --fusion-differentiate | FileCheck %s --check-prefix=FUSION
// RUN: hir-opt %s --pass-pipeline='builtin.module(fusion-differentiate{saved=recompute})' | FileCheck %s --check-prefix=RECOMPUTE
// RUN: hir-opt %s --fusion-differentiate | hir-opt --hir-lower | FileCheck %s --check-prefix=LOWER
// RUN: hir-opt %s --fusion-differentiate | hir-opt --pass-pipeline='builtin.module(hir-lower{p2p=nccl})' | FileCheck %s --check-prefix=RING

// FUSION-LABEL: func.func @tp_mlp_forward(
// FUSION: %[[XG:.+]] = fusion.set %arg0
// FUSION: %[[H:.+]] = fusion.linear %[[XG]], %arg1, %arg2
// FUSION: %[[A:.+]] = fusion.gelu %[[H]]
// FUSION: %[[Y:.+]] = fusion.linear %[[A]], %arg3
// FUSION-NEXT: return %[[Y]], %arg1, %arg3, %[[XG]], %[[H]], %[[A]] :

// FUSION-LABEL: func.func @tp_mlp_backward(
// FUSION-SAME: %[[W1:[^:]+]]: tensor<64x32xf32, #fusion.dist<@tp, [didx, serial]>>,
// FUSION-SAME: %[[W2:[^:]+]]: tensor<32x64xf32, #fusion.dist<@tp, [serial, didx]>>,
// FUSION-SAME: %[[XG:[^:]+]]: tensor<64x32xf32, #fusion.dist<@tp, [serial, serial]>>,
// FUSION-SAME: %[[H:[^:]+]]: tensor<64x64xf32, #fusion.dist<@tp, [serial, didx]>>,
// FUSION-SAME: %[[A:[^:]+]]: tensor<64x64xf32, #fusion.dist<@tp, [serial, didx]>>,
// FUSION-SAME: %[[DY:[^:]+]]: tensor<64x32xf32, #fusion.dist<@tp, [didx, serial]>>)
// FUSION-SAME: -> (tensor<64x32xf32, #fusion.dist<@tp, [didx, serial]>>, tensor<64x32xf32, #fusion.dist<@tp, [didx, serial]>>, tensor<64xf32, #fusion.dist<@tp, [didx]>>, tensor<32x64xf32, #fusion.dist<@tp, [serial, didx]>>)
// FC2's input gradient: dy gathered, into a GEMM over H.
// FUSION-NEXT: %[[DYG:.+]] = fusion.set %[[DY]] : tensor<64x32xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<64x32xf32, #fusion.dist<@tp, [serial, serial]>>
// FUSION-NEXT: %[[W2T:.+]] = fusion.transpose %[[W2]] [1, 0] : {{.*}} -> tensor<64x32xf32, #fusion.dist<@tp, [didx, serial]>>
// FUSION-NEXT: %[[DA:.+]] = fusion.linear %[[DYG]], %[[W2T]] : {{.*}} -> tensor<64x64xf32, #fusion.dist<@tp, [serial, didx]>>
// FC2's weight gradient reads the same gathered dy.
// FUSION-NEXT: %[[DYGT:.+]] = fusion.transpose %[[DYG]] [1, 0]
// FUSION-NEXT: %[[DW2:.+]] = fusion.matmul %[[DYGT]], %[[A]] : {{.*}} -> tensor<32x64xf32, #fusion.dist<@tp, [serial, didx]>>
// gelu's derivative at h, times dA.
// FUSION: %[[DH:.+]] = fusion.mul %[[DA]], %{{.+}} : {{.*}} -> tensor<64x64xf32, #fusion.dist<@tp, [serial, didx]>>
// FC1's input gradient: a GEMM over the split F reduced straight into x's
// row split (a reduce-scatter), not into a replicated xg then sliced.
// FUSION-NEXT: %[[W1T:.+]] = fusion.transpose %[[W1]] [1, 0] : {{.*}} -> tensor<32x64xf32, #fusion.dist<@tp, [serial, didx]>>
// FUSION-NEXT: %[[DX:.+]] = fusion.linear %[[DH]], %[[W1T]] : {{.*}} -> tensor<64x32xf32, #fusion.dist<@tp, [didx, serial]>>
// FC1's weight gradient reads the gathered input; the bias's sums the rows.
// FUSION-NEXT: %[[DHT:.+]] = fusion.transpose %[[DH]] [1, 0]
// FUSION-NEXT: %[[DW1:.+]] = fusion.matmul %[[DHT]], %[[XG]] : {{.*}} -> tensor<64x32xf32, #fusion.dist<@tp, [didx, serial]>>
// FUSION-NEXT: %[[DC1:.+]] = fusion.sum %[[DH]] [0] : {{.*}} -> tensor<64xf32, #fusion.dist<@tp, [didx]>>
// FUSION-NEXT: return %[[DX]], %[[DW1]], %[[DC1]], %[[DW2]] :

// Recomputed: the forward saves x, and the backward gathers it again.
// RECOMPUTE-LABEL: func.func @tp_mlp_forward(
// RECOMPUTE: return %{{[^,]+}}, %arg0, %arg1, %arg3, %{{[^,]+}}, %{{[^,]+}} :
// RECOMPUTE-LABEL: func.func @tp_mlp_backward(
// RECOMPUTE-SAME: %[[X:[^:]+]]: tensor<64x32xf32, #fusion.dist<@tp, [didx, serial]>>,
// RECOMPUTE: %[[XG:.+]] = fusion.set %[[X]] : tensor<64x32xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<64x32xf32, #fusion.dist<@tp, [serial, serial]>>
// RECOMPUTE: fusion.matmul %{{.+}}, %[[XG]] :

// Without rings: dy's allgather whole, then FC2's input gradient in a loop
// of GEMMs on its chunks; FC1's input gradient a loop of GEMMs, each
// chunk's partial sums reduced to its owner (a reduce-scatter in parts).
// LOWER-LABEL: func.func @tp_mlp_backward(
// LOWER-SAME: %[[XG:arg2]]: memref<64x32xf32>
// LOWER-SAME: %[[DY:arg5]]: memref<32x32xf32>
// LOWER: comm.allgather %{{.+}} into %[[DYG:[^ ]+]] team [0, 1]
// LOWER: scf.for
// LOWER: host.select %[[DYG]]
// LOWER-NEXT: host.select
// LOWER-NEXT: host.linear
// LOWER: scf.for
// LOWER: host.linear
// LOWER: comm.reduce %{{.+}} sum root %{{.+}} team [0, 1]
// LOWER: host.matmul ins(%{{.+}}, %[[XG]] :
// LOWER-NOT: comm.
// LOWER: return

// With p2p=nccl: an AG ring into FC2's input-gradient GEMM, then its
// weight gradient on the gathered dy; a GEMM+RS chain for FC1's input
// gradient (each step's GEMM accumulates into the partial it passes on),
// then its weight gradient on the saved gathered input. No collective is
// left whole, and no transpose is copied: the GEMMs read transposed views.
// RING-LABEL: func.func @tp_mlp_backward(
// RING-SAME: %[[XG:arg2]]: memref<64x32xf32>
// RING-NOT: comm.allgather
// RING: scf.for
// RING: comm.recv
// RING-NEXT: comm.send
// RING: host.linear
// RING: %[[DYGT:.+]] = memref.transpose %{{[0-9]+}} (d0, d1) -> (d1, d0) : memref<64x32xf32> to memref<32x64xf32, strided<[1, 32]>>
// RING-NEXT: host.matmul ins(%[[DYGT]], 
// RING-NOT: comm.reduce_scatter
// RING: scf.for
// RING: host.linear {{.*}} {accumulate}
// RING: comm.recv
// RING-NEXT: comm.send
// RING: host.matmul ins(%{{.+}}, %[[XG]] :
// RING-NOT: comm.
// RING: return
fusion.mesh @tp = [0, 1]
func.func @tp_mlp(%x: tensor<64x32xf32, #fusion.dist<@tp, [didx, serial]>>, %w1: tensor<64x32xf32, #fusion.dist<@tp, [didx, serial]>>, %c1: tensor<64xf32, #fusion.dist<@tp, [didx]>>, %w2: tensor<32x64xf32, #fusion.dist<@tp, [serial, didx]>>) -> tensor<64x32xf32, #fusion.dist<@tp, [didx, serial]>> {
  %xg = fusion.set %x : tensor<64x32xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<64x32xf32, #fusion.dist<@tp, [serial, serial]>>
  %h = fusion.linear %xg, %w1, %c1 : tensor<64x32xf32, #fusion.dist<@tp, [serial, serial]>>, tensor<64x32xf32, #fusion.dist<@tp, [didx, serial]>>, tensor<64xf32, #fusion.dist<@tp, [didx]>> -> tensor<64x64xf32, #fusion.dist<@tp, [serial, didx]>>
  %a = fusion.gelu %h : tensor<64x64xf32, #fusion.dist<@tp, [serial, didx]>> -> tensor<64x64xf32, #fusion.dist<@tp, [serial, didx]>>
  %y = fusion.linear %a, %w2 : tensor<64x64xf32, #fusion.dist<@tp, [serial, didx]>>, tensor<32x64xf32, #fusion.dist<@tp, [serial, didx]>> -> tensor<64x32xf32, #fusion.dist<@tp, [didx, serial]>>
  return %y : tensor<64x32xf32, #fusion.dist<@tp, [didx, serial]>>
}
