// fusion-propagate-sharding fills the distributions left unannotated, from
// producers to consumers and back; annotated values are kept as written.
// RUN: hir-opt %s -split-input-file --fusion-propagate-sharding | FileCheck %s
// A second run finds nothing left to infer.
// RUN: hir-opt %s -split-input-file --fusion-propagate-sharding | hir-opt -split-input-file --fusion-propagate-sharding | FileCheck %s

fusion.mesh @tp = [0, 1, 2, 3]
fusion.mesh @other = [4, 5]

// Forward through pointwise ops, to the function's result type.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[A:[^:]+]]: tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>)
// CHECK-SAME: -> tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>
// CHECK-NEXT: %[[N:.*]] = fusion.neg %[[A]] : tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>
// CHECK-NEXT: %[[S:.*]] = fusion.add %[[N]], %[[A]] : tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>, tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>
// CHECK-NEXT: return %[[S]] : tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>
func.func @forward(%a: tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>) -> tensor<4x8xf32> {
  %n = fusion.neg %a : tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<4x8xf32>
  %s = fusion.add %n, %a : tensor<4x8xf32>, tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}

// Backward from an annotated result to the arguments; the result's stream
// axis is a schedule and is not propagated.
// CHECK-LABEL: func.func @backward
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x8xbf16, #fusion.dist<@tp, [serial, serial]>>, %[[Y:[^:]+]]: tensor<4x8xf32, #fusion.dist<@tp, [serial, serial]>>)
// CHECK-NEXT: %[[C:.*]] = fusion.cast %[[X]] : tensor<4x8xbf16, #fusion.dist<@tp, [serial, serial]>> -> tensor<4x8xf32, #fusion.dist<@tp, [serial, serial]>>
// CHECK-NEXT: fusion.mul %[[C]], %[[Y]] : {{.*}} -> tensor<4x8xf32, #fusion.dist<@tp, [stream, serial]>>
func.func @backward(%x: tensor<4x8xbf16>, %y: tensor<4x8xf32>) -> tensor<4x8xf32, #fusion.dist<@tp, [stream, serial]>> {
  %c = fusion.cast %x : tensor<4x8xbf16> -> tensor<4x8xf32>
  %m = fusion.mul %c, %y : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32, #fusion.dist<@tp, [stream, serial]>>
  return %m : tensor<4x8xf32, #fusion.dist<@tp, [stream, serial]>>
}

// A reduction drops the reduced axes forward; backward, a reduced axis
// nothing else constrains is serial.
// CHECK-LABEL: func.func @reductions
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x8x4xf32, #fusion.dist<@tp, [serial, serial, didx]>>, %[[Y:[^:]+]]: tensor<4x8x16xf32, #fusion.dist<@tp, [didx, serial, serial]>>)
// CHECK-SAME: -> (tensor<2x4xf32, #fusion.dist<@tp, [serial, didx]>>, tensor<4x16xf32, #fusion.dist<@tp, [didx, serial]>>)
// CHECK-NEXT: %[[S:.*]] = fusion.sum %[[X]] [1] : tensor<2x8x4xf32, #fusion.dist<@tp, [serial, serial, didx]>> -> tensor<2x4xf32, #fusion.dist<@tp, [serial, didx]>>
// CHECK-NEXT: %[[M:.*]] = fusion.amax %[[Y]] [1] : tensor<4x8x16xf32, #fusion.dist<@tp, [didx, serial, serial]>> -> tensor<4x16xf32, #fusion.dist<@tp, [didx, serial]>>
// CHECK-NEXT: return %[[S]], %[[M]]
func.func @reductions(%x: tensor<2x8x4xf32, #fusion.dist<@tp, [serial, serial, didx]>>, %y: tensor<4x8x16xf32>)
    -> (tensor<2x4xf32>, tensor<4x16xf32, #fusion.dist<@tp, [didx, serial]>>) {
  %s = fusion.sum %x [1] : tensor<2x8x4xf32, #fusion.dist<@tp, [serial, serial, didx]>> -> tensor<2x4xf32>
  %m = fusion.amax %y [1] : tensor<4x8x16xf32> -> tensor<4x16xf32, #fusion.dist<@tp, [didx, serial]>>
  return %s, %m : tensor<2x4xf32>, tensor<4x16xf32, #fusion.dist<@tp, [didx, serial]>>
}

// A broadcast inserts serial axes forward and drops them backward.
// CHECK-LABEL: func.func @broadcasts
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x16xf32, #fusion.dist<@tp, [didx, serial]>>, %[[Y:[^:]+]]: tensor<4x16xf32, #fusion.dist<@tp, [didx, serial]>>)
// CHECK-NEXT: fusion.broadcast %[[X]] [0, 2] : tensor<4x16xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<2x4x3x16xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>
// CHECK-NEXT: fusion.broadcast %[[Y]] [1] : tensor<4x16xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<4x4x16xf32, #fusion.dist<@tp, [didx, serial, stream]>>
func.func @broadcasts(%x: tensor<4x16xf32, #fusion.dist<@tp, [didx, serial]>>, %y: tensor<4x16xf32>)
    -> (tensor<2x4x3x16xf32>, tensor<4x4x16xf32, #fusion.dist<@tp, [didx, serial, stream]>>) {
  %bx = fusion.broadcast %x [0, 2] : tensor<4x16xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<2x4x3x16xf32>
  %by = fusion.broadcast %y [1] : tensor<4x16xf32> -> tensor<4x4x16xf32, #fusion.dist<@tp, [didx, serial, stream]>>
  return %bx, %by : tensor<2x4x3x16xf32>, tensor<4x4x16xf32, #fusion.dist<@tp, [didx, serial, stream]>>
}

// matmul: batch and M from lhs, N from rhs's last axis, and K tied across the
// two sides; linear: N from the weight and the bias.
// CHECK-LABEL: func.func @contractions
// CHECK-SAME: (%[[A:[^:]+]]: tensor<2x4x4xf32, #fusion.dist<@tp, [serial, serial, didx]>>, %[[B:[^:]+]]: tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>,
// CHECK-SAME: %[[W:[^:]+]]: tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>, %[[BIAS:[^:]+]]: tensor<4xf32, #fusion.dist<@tp, [didx]>>)
// CHECK-NEXT: %[[C:.*]] = fusion.matmul %[[A]], %[[B]] : {{.*}} -> tensor<2x4x8xf32, #fusion.dist<@tp, [serial, serial, serial]>>
// CHECK-NEXT: %[[Y:.*]] = fusion.linear %[[C]], %[[W]], %[[BIAS]] : {{.*}} -> tensor<2x4x4xf32, #fusion.dist<@tp, [serial, serial, didx]>>
// CHECK-NEXT: return %[[Y]]
func.func @contractions(%a: tensor<2x4x4xf32, #fusion.dist<@tp, [serial, serial, didx]>>, %b: tensor<4x8xf32>,
                        %w: tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>, %bias: tensor<4xf32>) -> tensor<2x4x4xf32> {
  %c = fusion.matmul %a, %b : tensor<2x4x4xf32, #fusion.dist<@tp, [serial, serial, didx]>>, tensor<4x8xf32> -> tensor<2x4x8xf32>
  %y = fusion.linear %c, %w, %bias : tensor<2x4x8xf32>, tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>, tensor<4xf32> -> tensor<2x4x4xf32>
  return %y : tensor<2x4x4xf32>
}

// A batched rhs maps its batch axes to the result's; backward, lhs gets batch
// and M from the result, rhs N.
// CHECK-LABEL: func.func @batched
// CHECK-SAME: (%[[A:[^:]+]]: tensor<4x2x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>, %[[B:[^:]+]]: tensor<4x8x4xf32, #fusion.dist<@tp, [didx, serial, serial]>>)
// CHECK-NEXT: fusion.matmul %[[A]], %[[B]]
func.func @batched(%a: tensor<4x2x8xf32>, %b: tensor<4x8x4xf32>) -> tensor<4x2x4xf32, #fusion.dist<@tp, [didx, serial, stream]>> {
  %c = fusion.matmul %a, %b : tensor<4x2x8xf32>, tensor<4x8x4xf32> -> tensor<4x2x4xf32, #fusion.dist<@tp, [didx, serial, stream]>>
  return %c : tensor<4x2x4xf32, #fusion.dist<@tp, [didx, serial, stream]>>
}

// A broadcast batch axis (rhs's unit axis 1 against the result's 4) is tied to
// nothing: it stays serial while the result's axis is didx, forward from the
// lhs and backward to an unannotated lhs; the rhs's other batch axis maps to
// the result's axis 0 from the right.
// CHECK-LABEL: func.func @broadcast_batch
// CHECK-SAME: (%[[A:[^:]+]]: tensor<2x4x8x16xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>, %[[B:[^:]+]]: tensor<2x1x16x4xf32, #fusion.dist<@tp, [serial, serial, serial, serial]>>,
// CHECK-SAME: %[[X:[^:]+]]: tensor<4x8x16xf32, #fusion.dist<@tp, [didx, serial, serial]>>, %[[W:[^:]+]]: tensor<1x16x4xf32, #fusion.dist<@tp, [serial, serial, serial]>>)
// CHECK-NEXT: fusion.matmul %[[A]], %[[B]] : {{.*}} -> tensor<2x4x8x4xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>
// CHECK-NEXT: fusion.matmul %[[X]], %[[W]]
func.func @broadcast_batch(%a: tensor<2x4x8x16xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>, %b: tensor<2x1x16x4xf32>,
                           %x: tensor<4x8x16xf32>, %w: tensor<1x16x4xf32>)
    -> (tensor<2x4x8x4xf32>, tensor<4x8x4xf32, #fusion.dist<@tp, [didx, stream, serial]>>) {
  %c = fusion.matmul %a, %b : tensor<2x4x8x16xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>, tensor<2x1x16x4xf32> -> tensor<2x4x8x4xf32>
  %y = fusion.matmul %x, %w : tensor<4x8x16xf32>, tensor<1x16x4xf32> -> tensor<4x8x4xf32, #fusion.dist<@tp, [didx, stream, serial]>>
  return %c, %y : tensor<2x4x8x4xf32>, tensor<4x8x4xf32, #fusion.dist<@tp, [didx, stream, serial]>>
}

// The mesh comes from the neighbour, through a set too.
// CHECK-LABEL: func.func @mesh_from_neighbour
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x8xf32, #fusion.dist<@other, [didx, serial]>>)
// CHECK-NEXT: %[[C:.*]] = fusion.set %[[X]] : tensor<2x8xf32, #fusion.dist<@other, [didx, serial]>> -> tensor<2x8xf32, #fusion.dist<@other, [didx, serial]>>
// CHECK-NEXT: %[[Y:.*]] = fusion.set %[[C]] : tensor<2x8xf32, #fusion.dist<@other, [didx, serial]>> -> tensor<2x8xf32, #fusion.dist<@tp, [serial, serial]>>
// CHECK-NEXT: return %[[Y]]
func.func @mesh_from_neighbour(%x: tensor<2x8xf32>) -> tensor<2x8xf32, #fusion.dist<@tp, [serial, serial]>> {
  %c = fusion.set %x : tensor<2x8xf32> -> tensor<2x8xf32, #fusion.dist<@other, [didx, serial]>>
  %y = fusion.set %c : tensor<2x8xf32, #fusion.dist<@other, [didx, serial]>> -> tensor<2x8xf32, #fusion.dist<@tp, [serial, serial]>>
  return %y : tensor<2x8xf32, #fusion.dist<@tp, [serial, serial]>>
}

// Functions with no fusion op and no annotated tensor, and declarations, are
// left alone.
// CHECK-LABEL: func.func private @declaration(tensor<4xf32>)
// CHECK-LABEL: func.func @not_a_fusion
// CHECK-SAME: (%{{.*}}: tensor<4xf32>) -> tensor<4xf32>
func.func private @declaration(tensor<4xf32>)
func.func @not_a_fusion(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// Attention ties the batch (head) axes of q, k, v and the result, and q's
// and the mask's Sq to the result's: heads split in q split k, v and the
// result alike; the mask, its axes tied to nothing split, is serial.
// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<4x8x16xf32, #fusion.dist<@tp, [didx, serial, serial]>>, %[[K:[^:]+]]: tensor<4x12x16xf32, #fusion.dist<@tp, [didx, serial, serial]>>, %[[V:[^:]+]]: tensor<4x12x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>, %[[M:[^:]+]]: tensor<8x12xf32, #fusion.dist<@tp, [serial, serial]>>)
// CHECK-SAME: -> tensor<4x8x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>
// CHECK-NEXT: fusion.attention %[[Q]], %[[K]], %[[V]], %[[M]] causal : {{.*}} -> tensor<4x8x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>
func.func @attention(%q: tensor<4x8x16xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
                     %k: tensor<4x12x16xf32>, %v: tensor<4x12x8xf32>, %m: tensor<8x12xf32>)
    -> tensor<4x8x8xf32> {
  %o = fusion.attention %q, %k, %v, %m causal
      : tensor<4x8x16xf32, #fusion.dist<@tp, [didx, serial, serial]>>, tensor<4x12x16xf32>,
        tensor<4x12x8xf32>, tensor<8x12xf32> -> tensor<4x8x8xf32>
  return %o : tensor<4x8x8xf32>
}

// -----

// A value connected to nothing annotated, in a module of one mesh, is serial
// on it (here an unused argument).
// A didx is not propagated to an axis whose extent is not a multiple of the
// mesh size (an annotation verify-sharding rejects, but the pass does not
// rely on it); it is to a multiple (a split axis: two rows per device).
fusion.mesh @dev = [0, 1]
// CHECK-LABEL: func.func @unannotated
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>, %{{.*}}: tensor<8xf32, #fusion.dist<@dev, [serial]>>, %{{.*}}: index)
// CHECK-SAME: -> tensor<8xf32, #fusion.dist<@dev, [serial]>>
// CHECK-NEXT: fusion.sum %[[X]] [0] : tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>> -> tensor<8xf32, #fusion.dist<@dev, [serial]>>
func.func @unannotated(%x: tensor<4x8xf32>, %unused: tensor<8xf32>, %i: index) -> tensor<8xf32> {
  %s = fusion.sum %x [0] : tensor<4x8xf32> -> tensor<8xf32>
  return %s : tensor<8xf32>
}
// CHECK-LABEL: func.func @extent_is_not_a_multiple_of_the_mesh_size
// CHECK-NEXT: fusion.neg %{{.*}} : tensor<3x8xf32, #fusion.dist<@dev, [didx, serial]>> -> tensor<3x8xf32, #fusion.dist<@dev, [serial, serial]>>
func.func @extent_is_not_a_multiple_of_the_mesh_size(%x: tensor<3x8xf32, #fusion.dist<@dev, [didx, serial]>>) -> tensor<3x8xf32> {
  %n = fusion.neg %x : tensor<3x8xf32, #fusion.dist<@dev, [didx, serial]>> -> tensor<3x8xf32>
  return %n : tensor<3x8xf32>
}
// CHECK-LABEL: func.func @split_axis
// CHECK-NEXT: fusion.neg %{{.*}} : tensor<4x8xf32, #fusion.dist<@dev, [didx, serial]>> -> tensor<4x8xf32, #fusion.dist<@dev, [didx, serial]>>
func.func @split_axis(%x: tensor<4x8xf32, #fusion.dist<@dev, [didx, serial]>>) -> tensor<4x8xf32> {
  %n = fusion.neg %x : tensor<4x8xf32, #fusion.dist<@dev, [didx, serial]>> -> tensor<4x8xf32>
  return %n : tensor<4x8xf32>
}

// -----

// A reshape carries a split across a group it splits or merges on the
// group's outermost axes (an outer split), forward and backward; its other
// axes are serial. [S, H] split on H: the heads are split after the split,
// and the merge back, inferred from its annotated result, splits the heads
// before it.
fusion.mesh @tp = [0, 1]
// CHECK-LABEL: func.func @outer_split
// CHECK-SAME: -> tensor<4x8x4xf32, #fusion.dist<@tp, [didx, serial, serial]>>
// CHECK-NEXT: fusion.reshape %{{.*}} : tensor<8x16xf32, #fusion.dist<@tp, [serial, didx]>> -> tensor<8x4x4xf32, #fusion.dist<@tp, [serial, didx, serial]>>
// CHECK-NEXT: fusion.transpose %{{.*}} [1, 0, 2] : tensor<8x4x4xf32, #fusion.dist<@tp, [serial, didx, serial]>> -> tensor<4x8x4xf32, #fusion.dist<@tp, [didx, serial, serial]>>
func.func @outer_split(%x: tensor<8x16xf32, #fusion.dist<@tp, [serial, didx]>>) -> tensor<4x8x4xf32> {
  %s = fusion.reshape %x : tensor<8x16xf32, #fusion.dist<@tp, [serial, didx]>> -> tensor<8x4x4xf32>
  %t = fusion.transpose %s [1, 0, 2] : tensor<8x4x4xf32> -> tensor<4x8x4xf32>
  return %t : tensor<4x8x4xf32>
}
// CHECK-LABEL: func.func @outer_merge
// CHECK-SAME: (%{{[^:]+}}: tensor<4x8x4xf32, #fusion.dist<@tp, [didx, serial, serial]>>)
// CHECK-NEXT: fusion.transpose %{{.*}} [1, 0, 2] : tensor<4x8x4xf32, #fusion.dist<@tp, [didx, serial, serial]>> -> tensor<8x4x4xf32, #fusion.dist<@tp, [serial, didx, serial]>>
// CHECK-NEXT: fusion.reshape %{{.*}} : tensor<8x4x4xf32, #fusion.dist<@tp, [serial, didx, serial]>> -> tensor<8x16xf32, #fusion.dist<@tp, [serial, didx]>>
func.func @outer_merge(%x: tensor<4x8x4xf32>) -> tensor<8x16xf32, #fusion.dist<@tp, [serial, didx]>> {
  %t = fusion.transpose %x [1, 0, 2] : tensor<4x8x4xf32> -> tensor<8x4x4xf32>
  %m = fusion.reshape %t : tensor<8x4x4xf32> -> tensor<8x16xf32, #fusion.dist<@tp, [serial, didx]>>
  return %m : tensor<8x16xf32, #fusion.dist<@tp, [serial, didx]>>
}
// A group that is neither a pure split nor a merge ([4, 6] as [2, 12]) is
// an outer split too; an axis the reshape keeps whole keeps its split.
// CHECK-LABEL: func.func @outer_regroup
// CHECK-NEXT: fusion.reshape %{{.*}} : tensor<4x6xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<2x12xf32, #fusion.dist<@tp, [didx, serial]>>
// CHECK-NEXT: fusion.reshape %{{.*}} : tensor<2x12xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<2x3x4xf32, #fusion.dist<@tp, [didx, serial, serial]>>
func.func @outer_regroup(%x: tensor<4x6xf32, #fusion.dist<@tp, [didx, serial]>>) -> tensor<2x3x4xf32> {
  %r = fusion.reshape %x : tensor<4x6xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<2x12xf32>
  %s = fusion.reshape %r : tensor<2x12xf32> -> tensor<2x3x4xf32>
  return %s : tensor<2x3x4xf32>
}

// -----

// A slice carries the split of an axis it takes whole, forward and
// backward; an axis it cuts is tied to nothing, so serial on both sides.
fusion.mesh @tp = [0, 1]
// CHECK-LABEL: func.func @slice
// CHECK-SAME: (%{{[^:]+}}: tensor<8x4x12xf32, #fusion.dist<@tp, [serial, didx, serial]>>)
// CHECK-SAME: -> tensor<4x4x4xf32, #fusion.dist<@tp, [serial, didx, serial]>>
// CHECK-NEXT: fusion.slice %{{.*}} offsets [0, 0, 4] strides [1, 1, 2] : tensor<8x4x12xf32, #fusion.dist<@tp, [serial, didx, serial]>> -> tensor<8x4x4xf32, #fusion.dist<@tp, [serial, didx, serial]>>
// CHECK-NEXT: fusion.slice %{{.*}} offsets [2, 0, 0] strides [1, 1, 1] : tensor<8x4x4xf32, #fusion.dist<@tp, [serial, didx, serial]>> -> tensor<4x4x4xf32, #fusion.dist<@tp, [serial, didx, serial]>>
func.func @slice(%x: tensor<8x4x12xf32>) -> tensor<4x4x4xf32> {
  %k = fusion.slice %x offsets [0, 0, 4] strides [1, 1, 2] : tensor<8x4x12xf32> -> tensor<8x4x4xf32, #fusion.dist<@tp, [serial, didx, serial]>>
  %r = fusion.slice %k offsets [2, 0, 0] strides [1, 1, 1] : tensor<8x4x4xf32, #fusion.dist<@tp, [serial, didx, serial]>> -> tensor<4x4x4xf32>
  return %r : tensor<4x4x4xf32>
}
