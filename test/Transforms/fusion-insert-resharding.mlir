// fusion-insert-resharding isolates every resharding into its own fusion.set;
// its output passes fusion-verify-sharding, and a second run changes nothing.
// RUN: hir-opt %s --pass-pipeline='builtin.module(fusion-insert-resharding,fusion-verify-sharding)' | FileCheck %s
// RUN: hir-opt %s --pass-pipeline='builtin.module(func.func(fusion-insert-resharding))' | FileCheck %s
// RUN: hir-opt %s --fusion-insert-resharding | hir-opt --fusion-insert-resharding | FileCheck %s

fusion.mesh @tp = [0, 1, 2, 3]
fusion.mesh @pair = [4, 5]

// A weight shard whose unit batch axes the matmul broadcasts: each is read
// whole along the result's axis, didx or stream there, so no set is needed
// (the real TP-rowwise GEMM of GEMM+RS: each device its own K-slice of B).
// CHECK-LABEL: func.func @broadcast_weight
// CHECK-SAME: (%[[A:[^:]+]]: {{.*}}, %[[W:[^:]+]]: {{.*}}, %[[X:[^:]+]]: {{.*}}, %[[V:[^:]+]]: {{.*}})
// CHECK-NEXT: fusion.matmul %[[A]], %[[W]] :
// CHECK-NEXT: fusion.matmul %[[X]], %[[V]] :
// CHECK-NEXT: return
func.func @broadcast_weight(%a: tensor<4x4x8x16xf32, #fusion.dist<@tp, [didx, serial, serial, serial]>>,
                            %w: tensor<4x1x16x32xf32, #fusion.dist<@tp, [didx, serial, serial, serial]>>,
                            %x: tensor<4x4x8x16xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
                            %v: tensor<1x1x16x32xf32, #fusion.dist<@tp, [serial, serial, serial, serial]>>)
    -> (tensor<4x4x8x32xf32, #fusion.dist<@tp, [didx, stream, serial, serial]>>,
        tensor<4x4x8x32xf32, #fusion.dist<@tp, [stream, didx, serial, serial]>>) {
  %p = fusion.matmul %a, %w : tensor<4x4x8x16xf32, #fusion.dist<@tp, [didx, serial, serial, serial]>>, tensor<4x1x16x32xf32, #fusion.dist<@tp, [didx, serial, serial, serial]>> -> tensor<4x4x8x32xf32, #fusion.dist<@tp, [didx, stream, serial, serial]>>
  %q = fusion.matmul %x, %v : tensor<4x4x8x16xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>, tensor<1x1x16x32xf32, #fusion.dist<@tp, [serial, serial, serial, serial]>> -> tensor<4x4x8x32xf32, #fusion.dist<@tp, [stream, didx, serial, serial]>>
  return %p, %q : tensor<4x4x8x32xf32, #fusion.dist<@tp, [didx, stream, serial, serial]>>,
                  tensor<4x4x8x32xf32, #fusion.dist<@tp, [stream, didx, serial, serial]>>
}

// AG+GEMM: the allgather of A is its own set, stream-parallel like the
// matmul so that the two share a stream loop later.
// CHECK-LABEL: func.func @ag_matmul
// CHECK-SAME: (%[[A:[^:]+]]: {{.*}}, %[[B:[^:]+]]: {{.*}})
// CHECK-NEXT: %[[G:.*]] = fusion.set %[[A]] : tensor<4x4x8x16xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>> -> tensor<4x4x8x16xf32, #fusion.dist<@tp, [stream, serial, serial, serial]>>
// CHECK-NEXT: %[[C:.*]] = fusion.matmul %[[G]], %[[B]] : tensor<4x4x8x16xf32, #fusion.dist<@tp, [stream, serial, serial, serial]>>, tensor<16x32xf32, #fusion.dist<@tp, [serial, serial]>> -> tensor<4x4x8x32xf32, #fusion.dist<@tp, [stream, serial, serial, serial]>>
// CHECK-NEXT: return %[[C]]
func.func @ag_matmul(%a: tensor<4x4x8x16xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
                     %b: tensor<16x32xf32, #fusion.dist<@tp, [serial, serial]>>)
    -> tensor<4x4x8x32xf32, #fusion.dist<@tp, [stream, serial, serial, serial]>> {
  %c = fusion.matmul %a, %b : tensor<4x4x8x16xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>, tensor<16x32xf32, #fusion.dist<@tp, [serial, serial]>> -> tensor<4x4x8x32xf32, #fusion.dist<@tp, [stream, serial, serial, serial]>>
  return %c : tensor<4x4x8x32xf32, #fusion.dist<@tp, [stream, serial, serial, serial]>>
}

// Attention streamed over a batch axis beside split heads reads q, k, v and
// the mask as they are: its verifier keeps the heads split alike, and a
// stream axis places nothing (the stream loop slices the operands).
// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[Q:[^:]+]]: {{.*}}, %[[K:[^:]+]]: {{.*}}, %[[V:[^:]+]]: {{.*}}, %[[M:[^:]+]]: {{.*}})
// CHECK-NEXT: fusion.attention %[[Q]], %[[K]], %[[V]], %[[M]] causal :
// CHECK-NEXT: return
func.func @attention(%q: tensor<4x4x8x16xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
                     %k: tensor<4x4x12x16xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
                     %v: tensor<4x4x12x8xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
                     %m: tensor<8x12xf32, #fusion.dist<@tp, [serial, serial]>>)
    -> tensor<4x4x8x8xf32, #fusion.dist<@tp, [stream, didx, serial, serial]>> {
  %o = fusion.attention %q, %k, %v, %m causal
      : tensor<4x4x8x16xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
        tensor<4x4x12x16xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
        tensor<4x4x12x8xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
        tensor<8x12xf32, #fusion.dist<@tp, [serial, serial]>>
     -> tensor<4x4x8x8xf32, #fusion.dist<@tp, [stream, didx, serial, serial]>>
  return %o : tensor<4x4x8x8xf32, #fusion.dist<@tp, [stream, didx, serial, serial]>>
}

// Pointwise: gather one operand, slice the other; the same operand twice
// shares one set. Stream axes alone are no resharding.
// CHECK-LABEL: func.func @pointwise
// CHECK-SAME: (%[[X:[^:]+]]: {{.*}}, %[[Y:[^:]+]]: {{.*}})
// CHECK-NEXT: %[[GX:.*]] = fusion.set %[[X]] : tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<4x8xf32, #fusion.dist<@tp, [serial, serial]>>
// CHECK-NEXT: %[[S:.*]] = fusion.add %[[GX]], %[[Y]] : {{.*}} -> tensor<4x8xf32, #fusion.dist<@tp, [serial, serial]>>
// CHECK-NEXT: %[[GX2:.*]] = fusion.set %[[X]] : tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<4x8xf32, #fusion.dist<@tp, [serial, stream]>>
// CHECK-NEXT: %[[D:.*]] = fusion.mul %[[GX2]], %[[GX2]] : {{.*}} -> tensor<4x8xf32, #fusion.dist<@tp, [serial, stream]>>
// CHECK-NEXT: %[[SY:.*]] = fusion.set %[[Y]] : tensor<4x8xf32, #fusion.dist<@tp, [serial, serial]>> -> tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>
// CHECK-NEXT: %[[N:.*]] = fusion.neg %[[SY]] : tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>
// CHECK-NEXT: %[[T:.*]] = fusion.cast %[[D]] : tensor<4x8xf32, #fusion.dist<@tp, [serial, stream]>> -> tensor<4x8xbf16, #fusion.dist<@tp, [stream, serial]>>
// CHECK-NEXT: return %[[S]], %[[N]], %[[T]]
func.func @pointwise(%x: tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>, %y: tensor<4x8xf32, #fusion.dist<@tp, [serial, serial]>>)
    -> (tensor<4x8xf32, #fusion.dist<@tp, [serial, serial]>>, tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>, tensor<4x8xbf16, #fusion.dist<@tp, [stream, serial]>>) {
  %s = fusion.add %x, %y : tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>, tensor<4x8xf32, #fusion.dist<@tp, [serial, serial]>> -> tensor<4x8xf32, #fusion.dist<@tp, [serial, serial]>>
  %d = fusion.mul %x, %x : tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>, tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<4x8xf32, #fusion.dist<@tp, [serial, stream]>>
  %n = fusion.neg %y : tensor<4x8xf32, #fusion.dist<@tp, [serial, serial]>> -> tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>
  %t = fusion.cast %d : tensor<4x8xf32, #fusion.dist<@tp, [serial, stream]>> -> tensor<4x8xbf16, #fusion.dist<@tp, [stream, serial]>>
  return %s, %n, %t : tensor<4x8xf32, #fusion.dist<@tp, [serial, serial]>>, tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>, tensor<4x8xbf16, #fusion.dist<@tp, [stream, serial]>>
}

// Reducing a didx axis is the op itself (allreduce, reduce-scatter), not a
// resharding; reducing another axis of a sharded operand gathers it first.
// CHECK-LABEL: func.func @reductions
// CHECK-SAME: (%[[X:[^:]+]]: {{.*}})
// CHECK-NEXT: %[[AR:.*]] = fusion.sum %[[X]] [1] : tensor<4x4x16xf32, #fusion.dist<@tp, [serial, didx, serial]>> -> tensor<4x16xf32, #fusion.dist<@tp, [stream, serial]>>
// CHECK-NEXT: %[[RS:.*]] = fusion.sum %[[X]] [1] : tensor<4x4x16xf32, #fusion.dist<@tp, [serial, didx, serial]>> -> tensor<4x16xf32, #fusion.dist<@tp, [didx, serial]>>
// CHECK-NEXT: %[[G:.*]] = fusion.set %[[X]] : tensor<4x4x16xf32, #fusion.dist<@tp, [serial, didx, serial]>> -> tensor<4x4x16xf32, #fusion.dist<@tp, [serial, serial, serial]>>
// CHECK-NEXT: %[[M:.*]] = fusion.amax %[[G]] [2] : tensor<4x4x16xf32, #fusion.dist<@tp, [serial, serial, serial]>> -> tensor<4x4xf32, #fusion.dist<@tp, [serial, serial]>>
// CHECK-NEXT: return %[[AR]], %[[RS]], %[[M]]
func.func @reductions(%x: tensor<4x4x16xf32, #fusion.dist<@tp, [serial, didx, serial]>>)
    -> (tensor<4x16xf32, #fusion.dist<@tp, [stream, serial]>>, tensor<4x16xf32, #fusion.dist<@tp, [didx, serial]>>, tensor<4x4xf32, #fusion.dist<@tp, [serial, serial]>>) {
  %ar = fusion.sum %x [1] : tensor<4x4x16xf32, #fusion.dist<@tp, [serial, didx, serial]>> -> tensor<4x16xf32, #fusion.dist<@tp, [stream, serial]>>
  %rs = fusion.sum %x [1] : tensor<4x4x16xf32, #fusion.dist<@tp, [serial, didx, serial]>> -> tensor<4x16xf32, #fusion.dist<@tp, [didx, serial]>>
  %m = fusion.amax %x [2] : tensor<4x4x16xf32, #fusion.dist<@tp, [serial, didx, serial]>> -> tensor<4x4xf32, #fusion.dist<@tp, [serial, serial]>>
  return %ar, %rs, %m : tensor<4x16xf32, #fusion.dist<@tp, [stream, serial]>>, tensor<4x16xf32, #fusion.dist<@tp, [didx, serial]>>, tensor<4x4xf32, #fusion.dist<@tp, [serial, serial]>>
}

// A reduction over a didx axis and others is split: a local reduction over
// the others, stream-parallel like the result, then the cross-device one.
// CHECK-LABEL: func.func @split_reductions
// CHECK-SAME: (%[[X:[^:]+]]: {{.*}}, %[[Y:[^:]+]]: {{.*}})
// CHECK-NEXT: %[[P:.*]] = fusion.sum %[[X]] [2] : tensor<4x8x16xf32, #fusion.dist<@tp, [didx, serial, serial]>> -> tensor<4x8xf32, #fusion.dist<@tp, [didx, stream]>>
// CHECK-NEXT: %[[S:.*]] = fusion.sum %[[P]] [0] : tensor<4x8xf32, #fusion.dist<@tp, [didx, stream]>> -> tensor<8xf32, #fusion.dist<@tp, [stream]>>
// CHECK-NEXT: %[[Q:.*]] = fusion.amax %[[Y]] [3] : tensor<4x4x8x16xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>> -> tensor<4x4x8xf32, #fusion.dist<@tp, [serial, didx, serial]>>
// CHECK-NEXT: %[[M:.*]] = fusion.amax %[[Q]] [1] : tensor<4x4x8xf32, #fusion.dist<@tp, [serial, didx, serial]>> -> tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>
// CHECK-NEXT: return %[[S]], %[[M]]
func.func @split_reductions(%x: tensor<4x8x16xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
                            %y: tensor<4x4x8x16xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>)
    -> (tensor<8xf32, #fusion.dist<@tp, [stream]>>, tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>) {
  %s = fusion.sum %x [0, 2] : tensor<4x8x16xf32, #fusion.dist<@tp, [didx, serial, serial]>> -> tensor<8xf32, #fusion.dist<@tp, [stream]>>
  %m = fusion.amax %y [1, 3] : tensor<4x4x8x16xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>> -> tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>
  return %s, %m : tensor<8xf32, #fusion.dist<@tp, [stream]>>, tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>
}

// A contraction over a didx K (GEMM + allreduce or reduce-scatter) is the op;
// the other side of K is split to match, and a result sharded by the
// reduce-scatter needs its operand whole.
// CHECK-LABEL: func.func @contractions
// CHECK-SAME: (%[[A:[^:]+]]: {{.*}}, %[[B:[^:]+]]: {{.*}}, %[[W:[^:]+]]: {{.*}})
// CHECK-NEXT: %[[AR:.*]] = fusion.matmul %[[A]], %[[W]] : {{.*}} -> tensor<8x4xf32, #fusion.dist<@tp, [stream, serial]>>
// CHECK-NEXT: %[[SB:.*]] = fusion.set %[[B]] : tensor<4x4xf32, #fusion.dist<@tp, [serial, didx]>> -> tensor<4x4xf32, #fusion.dist<@tp, [didx, serial]>>
// CHECK-NEXT: %[[RS:.*]] = fusion.matmul %[[A]], %[[SB]] : tensor<8x4xf32, #fusion.dist<@tp, [serial, didx]>>, tensor<4x4xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<8x4xf32, #fusion.dist<@tp, [serial, didx]>>
// CHECK-NEXT: return %[[AR]], %[[RS]]
func.func @contractions(%a: tensor<8x4xf32, #fusion.dist<@tp, [serial, didx]>>, %b: tensor<4x4xf32, #fusion.dist<@tp, [serial, didx]>>,
                        %w: tensor<4x4xf32, #fusion.dist<@tp, [didx, serial]>>)
    -> (tensor<8x4xf32, #fusion.dist<@tp, [stream, serial]>>, tensor<8x4xf32, #fusion.dist<@tp, [serial, didx]>>) {
  %ar = fusion.matmul %a, %w : tensor<8x4xf32, #fusion.dist<@tp, [serial, didx]>>, tensor<4x4xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<8x4xf32, #fusion.dist<@tp, [stream, serial]>>
  %rs = fusion.matmul %a, %b : tensor<8x4xf32, #fusion.dist<@tp, [serial, didx]>>, tensor<4x4xf32, #fusion.dist<@tp, [serial, didx]>> -> tensor<8x4xf32, #fusion.dist<@tp, [serial, didx]>>
  return %ar, %rs : tensor<8x4xf32, #fusion.dist<@tp, [stream, serial]>>, tensor<8x4xf32, #fusion.dist<@tp, [serial, didx]>>
}

// linear: the bias follows the result's N; broadcast: a sharded input of a
// replicated result is gathered (the new axis needs nothing).
// CHECK-LABEL: func.func @linear_broadcast
// CHECK-SAME: (%[[X:[^:]+]]: {{.*}}, %[[W:[^:]+]]: {{.*}}, %[[BIAS:[^:]+]]: {{.*}})
// CHECK-NEXT: %[[GB:.*]] = fusion.set %[[BIAS]] : tensor<4xf32, #fusion.dist<@tp, [didx]>> -> tensor<4xf32, #fusion.dist<@tp, [serial]>>
// CHECK-NEXT: %[[Y:.*]] = fusion.linear %[[X]], %[[W]], %[[GB]] : {{.*}} -> tensor<2x8x4xf32, #fusion.dist<@tp, [serial, serial, serial]>>
// CHECK-NEXT: %[[GB2:.*]] = fusion.set %[[BIAS]] : tensor<4xf32, #fusion.dist<@tp, [didx]>> -> tensor<4xf32, #fusion.dist<@tp, [serial]>>
// CHECK-NEXT: %[[BB:.*]] = fusion.broadcast %[[GB2]] [0] : tensor<4xf32, #fusion.dist<@tp, [serial]>> -> tensor<4x4xf32, #fusion.dist<@tp, [didx, serial]>>
// CHECK-NEXT: return %[[Y]], %[[BB]]
func.func @linear_broadcast(%x: tensor<2x8x16xf32, #fusion.dist<@tp, [serial, serial, serial]>>, %w: tensor<4x16xf32, #fusion.dist<@tp, [serial, serial]>>,
                            %bias: tensor<4xf32, #fusion.dist<@tp, [didx]>>)
    -> (tensor<2x8x4xf32, #fusion.dist<@tp, [serial, serial, serial]>>, tensor<4x4xf32, #fusion.dist<@tp, [didx, serial]>>) {
  %y = fusion.linear %x, %w, %bias : tensor<2x8x16xf32, #fusion.dist<@tp, [serial, serial, serial]>>, tensor<4x16xf32, #fusion.dist<@tp, [serial, serial]>>, tensor<4xf32, #fusion.dist<@tp, [didx]>> -> tensor<2x8x4xf32, #fusion.dist<@tp, [serial, serial, serial]>>
  %bb = fusion.broadcast %bias [0] : tensor<4xf32, #fusion.dist<@tp, [didx]>> -> tensor<4x4xf32, #fusion.dist<@tp, [didx, serial]>>
  return %y, %bb : tensor<2x8x4xf32, #fusion.dist<@tp, [serial, serial, serial]>>, tensor<4x4xf32, #fusion.dist<@tp, [didx, serial]>>
}

// An operand on another mesh than the result moves through a set; sets
// themselves and unannotated operands are left alone.
// CHECK-LABEL: func.func @mesh_change
// CHECK-SAME: (%[[X:[^:]+]]: {{.*}}, %[[U:[^:]+]]: {{.*}})
// CHECK-NEXT: %[[M:.*]] = fusion.set %[[X]] : tensor<2x8xf32, #fusion.dist<@tp, [serial, serial]>> -> tensor<2x8xf32, #fusion.dist<@pair, [didx, serial]>>
// CHECK-NEXT: %[[N:.*]] = fusion.neg %[[M]] : tensor<2x8xf32, #fusion.dist<@pair, [didx, serial]>> -> tensor<2x8xf32, #fusion.dist<@pair, [didx, serial]>>
// CHECK-NEXT: %[[S:.*]] = fusion.set %[[N]] : tensor<2x8xf32, #fusion.dist<@pair, [didx, serial]>> -> tensor<2x8xf32, #fusion.dist<@tp, [serial, serial]>>
// CHECK-NEXT: %[[V:.*]] = fusion.neg %[[U]] : tensor<2x8xf32> -> tensor<2x8xf32, #fusion.dist<@tp, [serial, serial]>>
// CHECK-NEXT: return %[[S]], %[[V]]
func.func @mesh_change(%x: tensor<2x8xf32, #fusion.dist<@tp, [serial, serial]>>, %u: tensor<2x8xf32>)
    -> (tensor<2x8xf32, #fusion.dist<@tp, [serial, serial]>>, tensor<2x8xf32, #fusion.dist<@tp, [serial, serial]>>) {
  %n = fusion.neg %x : tensor<2x8xf32, #fusion.dist<@tp, [serial, serial]>> -> tensor<2x8xf32, #fusion.dist<@pair, [didx, serial]>>
  %s = fusion.set %n : tensor<2x8xf32, #fusion.dist<@pair, [didx, serial]>> -> tensor<2x8xf32, #fusion.dist<@tp, [serial, serial]>>
  %v = fusion.neg %u : tensor<2x8xf32> -> tensor<2x8xf32, #fusion.dist<@tp, [serial, serial]>>
  return %s, %v : tensor<2x8xf32, #fusion.dist<@tp, [serial, serial]>>, tensor<2x8xf32, #fusion.dist<@tp, [serial, serial]>>
}
