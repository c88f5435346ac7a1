// fusion-differentiate's rule for fusion.attention: the backward computes
// the probabilities again from the saved q, k and v (no [heads, S, S] is
// saved), then dV = P^T dO, dP = dO V^T, dS = P dP - P rowsum(P dP),
// dQ = scale dS K, dK = dS^T (scale Q) and the mask's gradient, dS summed
// over the heads. Every product is local to a device (the heads split);
// only the mask's gradient crosses the devices: one allreduce.
// RUN: hir-opt %s --split-input-file --fusion-differentiate | FileCheck %s
// RUN: hir-opt %s --split-input-file --fusion-differentiate | hir-opt --split-input-file --hir-lower | FileCheck %s --check-prefix=LOWER
// RUN: hir-opt %s --split-input-file --pass-pipeline='builtin.module(fusion-differentiate{wrt=2})' | FileCheck %s --check-prefix=WRT2

// Heads split over 2 devices, an additive mask, causal, an explicit scale,
// fewer keys than queries. The forward saves q, k, v and the mask only.
// CHECK-LABEL: func.func @masked_forward(
// CHECK: %[[O:.+]] = fusion.attention %arg0, %arg1, %arg2, %arg3 scale 5.000000e-01 causal
// CHECK-NEXT: return %[[O]], %arg0, %arg1, %arg2, %arg3 :
// CHECK-LABEL: func.func @masked_backward(
// CHECK-SAME: %[[Q:[^:]+]]: tensor<4x8x2xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
// CHECK-SAME: %[[K:[^:]+]]: tensor<4x6x2xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
// CHECK-SAME: %[[V:[^:]+]]: tensor<4x6x3xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
// CHECK-SAME: %[[M:[^:]+]]: tensor<8x6xf32, #fusion.dist<@tp, [serial, serial]>>,
// CHECK-SAME: %[[DO:[^:]+]]: tensor<4x8x3xf32, #fusion.dist<@tp, [didx, serial, serial]>>)
// The scores again: (scale q) k^T + mask, -inf where causal hides a key.
// CHECK-NEXT: %[[SCALE:.+]] = fusion.fill 5.000000e-01 : tensor<4x8x2xf32, #fusion.dist<@tp, [didx, serial, serial]>>
// CHECK-NEXT: %[[QS:.+]] = fusion.mul %[[Q]], %[[SCALE]]
// CHECK-NEXT: %[[KT:.+]] = fusion.transpose %[[K]] [0, 2, 1] : {{.*}} -> tensor<4x2x6xf32, #fusion.dist<@tp, [didx, serial, serial]>>
// CHECK-NEXT: %[[QK:.+]] = fusion.matmul %[[QS]], %[[KT]] : {{.*}} -> tensor<4x8x6xf32, #fusion.dist<@tp, [didx, serial, serial]>>
// CHECK-NEXT: %[[MB:.+]] = fusion.broadcast %[[M]] [0] : tensor<8x6xf32, #fusion.dist<@tp, [serial, serial]>> -> tensor<4x8x6xf32, #fusion.dist<@tp, [didx, serial, serial]>>
// CHECK-NEXT: %[[S:.+]] = fusion.add %[[QK]], %[[MB]]
// CHECK-NEXT: %[[ROWS:.+]] = fusion.iota 0 : tensor<8x6xf32, #fusion.dist<@tp, [serial, serial]>>
// CHECK-NEXT: %[[COLS:.+]] = fusion.iota 1 : tensor<8x6xf32, #fusion.dist<@tp, [serial, serial]>>
// CHECK-NEXT: %[[AHEAD:.+]] = fusion.sub %[[COLS]], %[[ROWS]]
// CHECK-NEXT: %[[HID:.+]] = fusion.relu %[[AHEAD]]
// CHECK-NEXT: %[[HIDB:.+]] = fusion.broadcast %[[HID]] [0] : {{.*}} -> tensor<4x8x6xf32, #fusion.dist<@tp, [didx, serial, serial]>>
// CHECK-NEXT: %[[NEVER:.+]] = fusion.fill 0xFFF0000000000000 : tensor<4x8x6xf32, #fusion.dist<@tp, [didx, serial, serial]>>
// CHECK-NEXT: %[[SC:.+]] = fusion.where %[[HIDB]], %[[NEVER]], %[[S]]
// The softmax; with a mask, a row it hides whole is zeros, not NaN.
// CHECK-NEXT: %[[MAX:.+]] = fusion.amax %[[SC]] [2] : {{.*}} -> tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>
// CHECK-NEXT: %[[LOW:.+]] = fusion.fill -3.4028234663852886E+38 : tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>
// CHECK-NEXT: %[[MAXC:.+]] = fusion.max %[[MAX]], %[[LOW]]
// CHECK-NEXT: %[[MAXB:.+]] = fusion.broadcast %[[MAXC]] [2]
// CHECK-NEXT: %[[SH:.+]] = fusion.sub %[[SC]], %[[MAXB]]
// CHECK-NEXT: %[[E:.+]] = fusion.exp %[[SH]]
// CHECK-NEXT: %[[Z:.+]] = fusion.sum %[[E]] [2] : {{.*}} -> tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>
// CHECK-NEXT: %[[ONE:.+]] = fusion.fill 1.000000e+00 : tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>
// CHECK-NEXT: %[[ZC:.+]] = fusion.max %[[Z]], %[[ONE]]
// CHECK-NEXT: %[[ZB:.+]] = fusion.broadcast %[[ZC]] [2]
// CHECK-NEXT: %[[P:.+]] = fusion.div %[[E]], %[[ZB]] : {{.*}} -> tensor<4x8x6xf32, #fusion.dist<@tp, [didx, serial, serial]>>
// dV = P^T dO.
// CHECK-NEXT: %[[PT:.+]] = fusion.transpose %[[P]] [0, 2, 1]
// CHECK-NEXT: %[[DV:.+]] = fusion.matmul %[[PT]], %[[DO]] : {{.*}} -> tensor<4x6x3xf32, #fusion.dist<@tp, [didx, serial, serial]>>
// dP = dO V^T; dS = P dP - P rowsum(P dP).
// CHECK-NEXT: %[[VT:.+]] = fusion.transpose %[[V]] [0, 2, 1]
// CHECK-NEXT: %[[DP:.+]] = fusion.matmul %[[DO]], %[[VT]] : {{.*}} -> tensor<4x8x6xf32, #fusion.dist<@tp, [didx, serial, serial]>>
// CHECK-NEXT: %[[PDP:.+]] = fusion.mul %[[P]], %[[DP]]
// CHECK-NEXT: %[[R:.+]] = fusion.sum %[[PDP]] [2]
// CHECK-NEXT: %[[RB:.+]] = fusion.broadcast %[[R]] [2]
// CHECK-NEXT: %[[PR:.+]] = fusion.mul %[[P]], %[[RB]]
// CHECK-NEXT: %[[DS:.+]] = fusion.sub %[[PDP]], %[[PR]]
// dQ = scale dS K; dK = dS^T (scale Q); the mask's: dS summed over the heads.
// CHECK-NEXT: %[[DSK:.+]] = fusion.matmul %[[DS]], %[[K]] : {{.*}} -> tensor<4x8x2xf32, #fusion.dist<@tp, [didx, serial, serial]>>
// CHECK-NEXT: %[[DQ:.+]] = fusion.mul %[[DSK]], %[[SCALE]]
// CHECK-NEXT: %[[DST:.+]] = fusion.transpose %[[DS]] [0, 2, 1]
// CHECK-NEXT: %[[DK:.+]] = fusion.matmul %[[DST]], %[[QS]] : {{.*}} -> tensor<4x6x2xf32, #fusion.dist<@tp, [didx, serial, serial]>>
// CHECK-NEXT: %[[DM:.+]] = fusion.sum %[[DS]] [0] : tensor<4x8x6xf32, #fusion.dist<@tp, [didx, serial, serial]>> -> tensor<8x6xf32, #fusion.dist<@tp, [serial, serial]>>
// CHECK-NEXT: return %[[DQ]], %[[DK]], %[[DV]], %[[DM]] :

// LOWER-LABEL: func.func @masked_backward(
// LOWER-NOT: comm.
// LOWER: comm.allreduce %{{.+}} into %arg8 sum team [0, 1] : memref<8x6xf32> into memref<8x6xf32>
// LOWER-NOT: comm.allreduce
// LOWER: return

// Only v's gradient (wrt=2): P^T dO, no dP.
// WRT2-LABEL: func.func @masked_backward(
// WRT2: %[[P:.+]] = fusion.div
// WRT2-NEXT: %[[PT:.+]] = fusion.transpose %[[P]] [0, 2, 1]
// WRT2-NEXT: %[[DV:.+]] = fusion.matmul %[[PT]], %arg3
// WRT2-NEXT: return %[[DV]] : tensor<4x6x3xf32, #fusion.dist<@tp, [didx, serial, serial]>>
fusion.mesh @tp = [0, 1]
func.func @masked(%q: tensor<4x8x2xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
                  %k: tensor<4x6x2xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
                  %v: tensor<4x6x3xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
                  %m: tensor<8x6xf32, #fusion.dist<@tp, [serial, serial]>>)
    -> tensor<4x8x3xf32, #fusion.dist<@tp, [didx, serial, serial]>> {
  %o = fusion.attention %q, %k, %v, %m scale 0.5 causal
      : tensor<4x8x2xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
        tensor<4x6x2xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
        tensor<4x6x3xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
        tensor<8x6xf32, #fusion.dist<@tp, [serial, serial]>>
     -> tensor<4x8x3xf32, #fusion.dist<@tp, [didx, serial, serial]>>
  return %o : tensor<4x8x3xf32, #fusion.dist<@tp, [didx, serial, serial]>>
}

// -----

// q and k one tensor (its gradient sums theirs), an additive mask, and a
// batch axis streamed beside the split heads: the backward has no stream
// axis. The default scale is 1 / sqrt(4).
// CHECK-LABEL: func.func @streamed_backward(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x4x8x4xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
// CHECK-SAME: %[[V:[^:]+]]: tensor<2x4x8x4xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
// CHECK-SAME: %[[M:[^:]+]]: tensor<8x8xf32, #fusion.dist<@tp, [serial, serial]>>,
// CHECK-SAME: %[[DO:[^:]+]]: tensor<2x4x8x4xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>)
// CHECK-NOT: stream
// CHECK: %[[SCALE:.+]] = fusion.fill 5.000000e-01
// CHECK: fusion.broadcast %[[M]] [0, 1] : tensor<8x8xf32, #fusion.dist<@tp, [serial, serial]>> -> tensor<2x4x8x8xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>
// CHECK: %[[MAX:.+]] = fusion.amax %{{.+}} [3]
// CHECK: %[[DV:.+]] = fusion.matmul %{{.+}}, %[[DO]] :
// CHECK: %[[DQ:.+]] = fusion.mul %{{.+}}, %[[SCALE]]
// CHECK: %[[DK:.+]] = fusion.matmul
// CHECK-NEXT: %[[DM:.+]] = fusion.sum %{{.+}} [0, 1] : tensor<2x4x8x8xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>> -> tensor<8x8xf32, #fusion.dist<@tp, [serial, serial]>>
// CHECK-NEXT: %[[DX:.+]] = fusion.add %[[DQ]], %[[DK]]
// CHECK-NEXT: return %[[DX]], %[[DV]], %[[DM]] :

// LOWER-LABEL: func.func @streamed_backward(
// LOWER-NOT: comm.
// LOWER: comm.allreduce %{{.+}} into %arg6 sum team [0, 1] : memref<8x8xf32> into memref<8x8xf32>
// LOWER-NOT: comm.allreduce
// LOWER: return

// Only the mask's gradient (wrt=2): no dV.
// WRT2-LABEL: func.func @streamed_backward(
// WRT2-NOT: fusion.transpose %{{.+}} [0, 1, 3, 2] : tensor<2x4x8x8xf32
// WRT2: %[[DM:.+]] = fusion.sum %{{.+}} [0, 1]
// WRT2-NEXT: return %[[DM]] : tensor<8x8xf32, #fusion.dist<@tp, [serial, serial]>>
fusion.mesh @tp = [0, 1]
func.func @streamed(%x: tensor<2x4x8x4xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
                    %v: tensor<2x4x8x4xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
                    %m: tensor<8x8xf32, #fusion.dist<@tp, [serial, serial]>>)
    -> tensor<2x4x8x4xf32, #fusion.dist<@tp, [stream, didx, serial, serial]>> {
  %o = fusion.attention %x, %x, %v, %m
      : tensor<2x4x8x4xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
        tensor<2x4x8x4xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
        tensor<2x4x8x4xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
        tensor<8x8xf32, #fusion.dist<@tp, [serial, serial]>>
     -> tensor<2x4x8x4xf32, #fusion.dist<@tp, [stream, didx, serial, serial]>>
  return %o : tensor<2x4x8x4xf32, #fusion.dist<@tp, [stream, didx, serial, serial]>>
}
