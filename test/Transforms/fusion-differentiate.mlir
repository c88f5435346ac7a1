// fusion-differentiate, one case per op family: the backward's structure.
// Each case's @X_backward takes the saved forward values (in the order the
// forward defines them), then one cotangent per floating-point result, and
// returns the gradient of each floating-point argument.
// RUN: hir-opt %s --split-input-file --fusion-differentiate | FileCheck %s

// neg: -dy.
// CHECK-LABEL: func.func @neg_backward(
// CHECK-SAME: %[[A0:[^:]+]]: tensor<4xf32>
// CHECK-NEXT: %[[V0:[^ ]+]] = fusion.neg %[[A0]] : tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: return %[[V0]] : tensor<4xf32>
func.func @neg(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = fusion.neg %x : tensor<4xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// exp: dy * y; the forward returns y again, saved for the backward, which
// takes the saved values, then one cotangent per float result.
// CHECK-LABEL: func.func @exp_forward(
// CHECK-SAME: %[[A0:[^:]+]]: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT: %[[V0:[^ ]+]] = fusion.exp %[[A0]] : tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: return %[[V0]], %[[V0]] : tensor<4xf32>, tensor<4xf32>
// CHECK-LABEL: func.func @exp_backward(
// CHECK-SAME: %[[A0:[^:]+]]: tensor<4xf32>
// CHECK-SAME: %[[A1:[^:]+]]: tensor<4xf32>
// CHECK-NEXT: %[[V0:[^ ]+]] = fusion.mul %[[A1]], %[[A0]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: return %[[V0]] : tensor<4xf32>
func.func @exp(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = fusion.exp %x : tensor<4xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// tanh: dy * (1 - y^2).
// CHECK-LABEL: func.func @tanh_backward(
// CHECK-SAME: %[[A0:[^:]+]]: tensor<4xf32>
// CHECK-SAME: %[[A1:[^:]+]]: tensor<4xf32>
// CHECK-NEXT: %[[V0:[^ ]+]] = fusion.fill 1.000000e+00 : tensor<4xf32>
// CHECK-NEXT: %[[V1:[^ ]+]] = fusion.mul %[[A0]], %[[A0]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V2:[^ ]+]] = fusion.sub %[[V0]], %[[V1]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V3:[^ ]+]] = fusion.mul %[[A1]], %[[V2]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: return %[[V3]] : tensor<4xf32>
func.func @tanh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = fusion.tanh %x : tensor<4xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// rsqrt: dy * (-1/2) y^3.
// CHECK-LABEL: func.func @rsqrt_backward(
// CHECK-SAME: %[[A0:[^:]+]]: tensor<4xf32>
// CHECK-SAME: %[[A1:[^:]+]]: tensor<4xf32>
// CHECK-NEXT: %[[V0:[^ ]+]] = fusion.fill -5.000000e-01 : tensor<4xf32>
// CHECK-NEXT: %[[V1:[^ ]+]] = fusion.mul %[[A0]], %[[A0]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V2:[^ ]+]] = fusion.mul %[[V1]], %[[A0]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V3:[^ ]+]] = fusion.mul %[[V0]], %[[V2]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V4:[^ ]+]] = fusion.mul %[[A1]], %[[V3]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: return %[[V4]] : tensor<4xf32>
func.func @rsqrt(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = fusion.rsqrt %x : tensor<4xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// relu: dy where y (= relu(x)) is nonzero, i.e. x > 0; 0 at x = 0.
// CHECK-LABEL: func.func @relu_backward(
// CHECK-SAME: %[[A0:[^:]+]]: tensor<4xf32>
// CHECK-SAME: %[[A1:[^:]+]]: tensor<4xf32>
// CHECK-NEXT: %[[V0:[^ ]+]] = fusion.fill 0.000000e+00 : tensor<4xf32>
// CHECK-NEXT: %[[V1:[^ ]+]] = fusion.where %[[A0]], %[[A1]], %[[V0]] : tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: return %[[V1]] : tensor<4xf32>
func.func @relu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = fusion.relu %x : tensor<4xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// abs: sign(x) dy, without dividing by |x|: 0 at x = 0.
// CHECK-LABEL: func.func @abs_backward(
// CHECK-SAME: %[[A0:[^:]+]]: tensor<4xf32>
// CHECK-SAME: %[[A1:[^:]+]]: tensor<4xf32>
// CHECK-NEXT: %[[V0:[^ ]+]] = fusion.relu %[[A0]] : tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V1:[^ ]+]] = fusion.neg %[[A1]] : tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V2:[^ ]+]] = fusion.where %[[V0]], %[[A1]], %[[V1]] : tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V3:[^ ]+]] = fusion.fill 0.000000e+00 : tensor<4xf32>
// CHECK-NEXT: %[[V4:[^ ]+]] = fusion.where %[[A0]], %[[V2]], %[[V3]] : tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: return %[[V4]] : tensor<4xf32>
func.func @abs(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = fusion.abs %x : tensor<4xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// gelu, in the tanh form the runtime and the reference compute:
// (1 + t)/2 + x/2 (1 - t^2) c (1 + 3 a x^2), t = tanh(c (x + a x^3)).
// Of bf16, in f32 between a cast in and a cast out, as torch computes it.
// CHECK-LABEL: func.func @gelu_backward(
// CHECK-SAME: %[[B0:[^:]+]]: tensor<4xbf16>
// CHECK-SAME: %[[B1:[^:]+]]: tensor<4xbf16>
// CHECK-NEXT: %[[A0:[^ ]+]] = fusion.cast %[[B0]] : tensor<4xbf16> -> tensor<4xf32>
// CHECK-NEXT: %[[A1:[^ ]+]] = fusion.cast %[[B1]] : tensor<4xbf16> -> tensor<4xf32>
// CHECK-NEXT: %[[V0:[^ ]+]] = fusion.fill 5.000000e-01 : tensor<4xf32>
// CHECK-NEXT: %[[V1:[^ ]+]] = fusion.fill 1.000000e+00 : tensor<4xf32>
// CHECK-NEXT: %[[V2:[^ ]+]] = fusion.fill 0.79788456080286541 : tensor<4xf32>
// CHECK-NEXT: %[[V3:[^ ]+]] = fusion.fill 4.471500e-02 : tensor<4xf32>
// CHECK-NEXT: %[[V4:[^ ]+]] = fusion.fill 1.341450e-01 : tensor<4xf32>
// CHECK-NEXT: %[[V5:[^ ]+]] = fusion.mul %[[A0]], %[[A0]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V6:[^ ]+]] = fusion.mul %[[V5]], %[[A0]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V7:[^ ]+]] = fusion.mul %[[V3]], %[[V6]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V8:[^ ]+]] = fusion.add %[[V7]], %[[A0]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V9:[^ ]+]] = fusion.mul %[[V2]], %[[V8]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V10:[^ ]+]] = fusion.tanh %[[V9]] : tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V11:[^ ]+]] = fusion.add %[[V1]], %[[V10]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V12:[^ ]+]] = fusion.mul %[[V0]], %[[V11]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V13:[^ ]+]] = fusion.mul %[[V10]], %[[V10]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V14:[^ ]+]] = fusion.sub %[[V1]], %[[V13]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V15:[^ ]+]] = fusion.mul %[[V4]], %[[V5]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V16:[^ ]+]] = fusion.add %[[V1]], %[[V15]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V17:[^ ]+]] = fusion.mul %[[V2]], %[[V16]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V18:[^ ]+]] = fusion.mul %[[V0]], %[[A0]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V19:[^ ]+]] = fusion.mul %[[V18]], %[[V14]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V20:[^ ]+]] = fusion.mul %[[V19]], %[[V17]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V21:[^ ]+]] = fusion.add %[[V12]], %[[V20]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V22:[^ ]+]] = fusion.mul %[[A1]], %[[V21]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V23:[^ ]+]] = fusion.cast %[[V22]] : tensor<4xf32> -> tensor<4xbf16>
// CHECK-NEXT: return %[[V23]] : tensor<4xbf16>
func.func @gelu(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  %y = fusion.gelu %x : tensor<4xbf16> -> tensor<4xbf16>
  return %y : tensor<4xbf16>
}

// -----

// cast: the gradient is cast back to the operand's element type.
// CHECK-LABEL: func.func @cast_backward(
// CHECK-SAME: %[[A0:[^:]+]]: tensor<4xf32>
// CHECK-NEXT: %[[V0:[^ ]+]] = fusion.cast %[[A0]] : tensor<4xf32> -> tensor<4xbf16>
// CHECK-NEXT: return %[[V0]] : tensor<4xbf16>
func.func @cast(%x: tensor<4xbf16>) -> tensor<4xf32> {
  %y = fusion.cast %x : tensor<4xbf16> -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// add and sub: dy and -dy; b, used twice, gets the sum of both.
// CHECK-LABEL: func.func @add_sub_backward(
// CHECK-SAME: %[[A0:[^:]+]]: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT: %[[V0:[^ ]+]] = fusion.neg %[[A0]] : tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V1:[^ ]+]] = fusion.add %[[V0]], %[[A0]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: return %[[A0]], %[[V1]] : tensor<4xf32>, tensor<4xf32>
func.func @add_sub(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %s = fusion.add %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %d = fusion.sub %s, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %d : tensor<4xf32>
}

// -----

// mul: each operand's gradient is dy times the other.
// CHECK-LABEL: func.func @mul_backward(
// CHECK-SAME: %[[A0:[^:]+]]: tensor<4xf32>
// CHECK-SAME: %[[A1:[^:]+]]: tensor<4xf32>
// CHECK-SAME: %[[A2:[^:]+]]: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT: %[[V0:[^ ]+]] = fusion.mul %[[A2]], %[[A1]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V1:[^ ]+]] = fusion.mul %[[A2]], %[[A0]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: return %[[V0]], %[[V1]] : tensor<4xf32>, tensor<4xf32>
func.func @mul(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %y = fusion.mul %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// div: da = dy / b, db = -da * y.
// CHECK-LABEL: func.func @div_backward(
// CHECK-SAME: %[[A0:[^:]+]]: tensor<4xf32>
// CHECK-SAME: %[[A1:[^:]+]]: tensor<4xf32>
// CHECK-SAME: %[[A2:[^:]+]]: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT: %[[V0:[^ ]+]] = fusion.div %[[A2]], %[[A0]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V1:[^ ]+]] = fusion.mul %[[V0]], %[[A1]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V2:[^ ]+]] = fusion.neg %[[V1]] : tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: return %[[V0]], %[[V2]] : tensor<4xf32>, tensor<4xf32>
func.func @div(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %y = fusion.div %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// max: the lhs's share is 1 where it leads, 0 where it trails, 1/2 at a
// tie (torch.maximum); the rhs gets the rest.
// CHECK-LABEL: func.func @max_backward(
// CHECK-SAME: %[[A0:[^:]+]]: tensor<4xf32>
// CHECK-SAME: %[[A1:[^:]+]]: tensor<4xf32>
// CHECK-SAME: %[[A2:[^:]+]]: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT: %[[V0:[^ ]+]] = fusion.sub %[[A0]], %[[A1]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V1:[^ ]+]] = fusion.fill 1.000000e+00 : tensor<4xf32>
// CHECK-NEXT: %[[V2:[^ ]+]] = fusion.fill 0.000000e+00 : tensor<4xf32>
// CHECK-NEXT: %[[V3:[^ ]+]] = fusion.fill 5.000000e-01 : tensor<4xf32>
// CHECK-NEXT: %[[V4:[^ ]+]] = fusion.relu %[[V0]] : tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V5:[^ ]+]] = fusion.where %[[V0]], %[[V2]], %[[V3]] : tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V6:[^ ]+]] = fusion.where %[[V4]], %[[V1]], %[[V5]] : tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V7:[^ ]+]] = fusion.mul %[[A2]], %[[V6]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V8:[^ ]+]] = fusion.sub %[[A2]], %[[V7]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: return %[[V7]], %[[V8]] : tensor<4xf32>, tensor<4xf32>
func.func @max(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %y = fusion.max %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// min: as max, with the lead b - a.
// CHECK-LABEL: func.func @min_backward(
// CHECK-SAME: %[[A0:[^:]+]]: tensor<4xf32>
// CHECK-SAME: %[[A1:[^:]+]]: tensor<4xf32>
// CHECK-SAME: %[[A2:[^:]+]]: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT: %[[V0:[^ ]+]] = fusion.sub %[[A1]], %[[A0]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V1:[^ ]+]] = fusion.fill 1.000000e+00 : tensor<4xf32>
// CHECK-NEXT: %[[V2:[^ ]+]] = fusion.fill 0.000000e+00 : tensor<4xf32>
// CHECK-NEXT: %[[V3:[^ ]+]] = fusion.fill 5.000000e-01 : tensor<4xf32>
// CHECK-NEXT: %[[V4:[^ ]+]] = fusion.relu %[[V0]] : tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V5:[^ ]+]] = fusion.where %[[V0]], %[[V2]], %[[V3]] : tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V6:[^ ]+]] = fusion.where %[[V4]], %[[V1]], %[[V5]] : tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V7:[^ ]+]] = fusion.mul %[[A2]], %[[V6]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V8:[^ ]+]] = fusion.sub %[[A2]], %[[V7]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: return %[[V7]], %[[V8]] : tensor<4xf32>, tensor<4xf32>
func.func @min(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %y = fusion.min %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// where: the selected side gets dy; the mask gets no gradient (zeros).
// CHECK-LABEL: func.func @where_backward(
// CHECK-SAME: %[[A0:[^:]+]]: tensor<4xf32>
// CHECK-SAME: %[[A1:[^:]+]]: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT: %[[V0:[^ ]+]] = fusion.fill 0.000000e+00 : tensor<4xf32>
// CHECK-NEXT: %[[V1:[^ ]+]] = fusion.where %[[A0]], %[[A1]], %[[V0]] : tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V2:[^ ]+]] = fusion.where %[[A0]], %[[V0]], %[[A1]] : tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: return %[[V0]], %[[V1]], %[[V2]] : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
func.func @where(%m: tensor<4xf32>, %a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %y = fusion.where %m, %a, %b : tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// transpose: the inverse permutation.
// CHECK-LABEL: func.func @transpose_backward(
// CHECK-SAME: %[[A0:[^:]+]]: tensor<4x2x3xf32>
// CHECK-NEXT: %[[V0:[^ ]+]] = fusion.transpose %[[A0]] [1, 2, 0] : tensor<4x2x3xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT: return %[[V0]] : tensor<2x3x4xf32>
func.func @transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %y = fusion.transpose %x [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  return %y : tensor<4x2x3xf32>
}

// -----

// reshape: back to the operand's shape.
// CHECK-LABEL: func.func @reshape_backward(
// CHECK-SAME: %[[A0:[^:]+]]: tensor<3x4xf32>
// CHECK-NEXT: %[[V0:[^ ]+]] = fusion.reshape %[[A0]] : tensor<3x4xf32> -> tensor<2x6xf32>
// CHECK-NEXT: return %[[V0]] : tensor<2x6xf32>
func.func @reshape(%x: tensor<2x6xf32>) -> tensor<3x4xf32> {
  %y = fusion.reshape %x : tensor<2x6xf32> -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// -----

// slice: dy scattered into zeros by a linear with the 0/1 selection
// matrix P[j, i] = (j == 1 + 2 i), the cut axis moved last and back.
// CHECK-LABEL: func.func @slice_backward(
// CHECK-SAME: %[[A0:[^:]+]]: tensor<3x6xf32>
// CHECK-NEXT: %[[V0:[^ ]+]] = fusion.transpose %[[A0]] [1, 0] : tensor<3x6xf32> -> tensor<6x3xf32>
// CHECK-NEXT: %[[V1:[^ ]+]] = fusion.iota 0 : tensor<8x3xf32>
// CHECK-NEXT: %[[V2:[^ ]+]] = fusion.iota 1 : tensor<8x3xf32>
// CHECK-NEXT: %[[V3:[^ ]+]] = fusion.fill 2.000000e+00 : tensor<8x3xf32>
// CHECK-NEXT: %[[V4:[^ ]+]] = fusion.fill 1.000000e+00 : tensor<8x3xf32>
// CHECK-NEXT: %[[V5:[^ ]+]] = fusion.mul %[[V2]], %[[V3]] : tensor<8x3xf32>, tensor<8x3xf32> -> tensor<8x3xf32>
// CHECK-NEXT: %[[V6:[^ ]+]] = fusion.add %[[V5]], %[[V4]] : tensor<8x3xf32>, tensor<8x3xf32> -> tensor<8x3xf32>
// CHECK-NEXT: %[[V7:[^ ]+]] = fusion.sub %[[V1]], %[[V6]] : tensor<8x3xf32>, tensor<8x3xf32> -> tensor<8x3xf32>
// CHECK-NEXT: %[[V8:[^ ]+]] = fusion.fill 0.000000e+00 : tensor<8x3xf32>
// CHECK-NEXT: %[[V9:[^ ]+]] = fusion.where %[[V7]], %[[V8]], %[[V4]] : tensor<8x3xf32>, tensor<8x3xf32>, tensor<8x3xf32> -> tensor<8x3xf32>
// CHECK-NEXT: %[[V10:[^ ]+]] = fusion.linear %[[V0]], %[[V9]] : tensor<6x3xf32>, tensor<8x3xf32> -> tensor<6x8xf32>
// CHECK-NEXT: %[[V11:[^ ]+]] = fusion.transpose %[[V10]] [1, 0] : tensor<6x8xf32> -> tensor<8x6xf32>
// CHECK-NEXT: return %[[V11]] : tensor<8x6xf32>
func.func @slice(%x: tensor<8x6xf32>) -> tensor<3x6xf32> {
  %y = fusion.slice %x offsets [1, 0] strides [2, 1] : tensor<8x6xf32> -> tensor<3x6xf32>
  return %y : tensor<3x6xf32>
}

// -----

// broadcast: a sum over the new axes.
// CHECK-LABEL: func.func @broadcast_backward(
// CHECK-SAME: %[[A0:[^:]+]]: tensor<3x4xf32>
// CHECK-NEXT: %[[V0:[^ ]+]] = fusion.sum %[[A0]] [0] : tensor<3x4xf32> -> tensor<4xf32>
// CHECK-NEXT: return %[[V0]] : tensor<4xf32>
func.func @broadcast(%x: tensor<4xf32>) -> tensor<3x4xf32> {
  %y = fusion.broadcast %x [0] : tensor<4xf32> -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// -----

// sum: a broadcast along the summed axes.
// CHECK-LABEL: func.func @sum_backward(
// CHECK-SAME: %[[A0:[^:]+]]: tensor<4xf32>
// CHECK-NEXT: %[[V0:[^ ]+]] = fusion.broadcast %[[A0]] [0] : tensor<4xf32> -> tensor<3x4xf32>
// CHECK-NEXT: return %[[V0]] : tensor<3x4xf32>
func.func @sum(%x: tensor<3x4xf32>) -> tensor<4xf32> {
  %y = fusion.sum %x [0] : tensor<3x4xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// amax: dy where x is the maximum, split evenly between ties.
// CHECK-LABEL: func.func @amax_backward(
// CHECK-SAME: %[[A0:[^:]+]]: tensor<3x4xf32>
// CHECK-SAME: %[[A1:[^:]+]]: tensor<3xf32>
// CHECK-SAME: %[[A2:[^:]+]]: tensor<3xf32>
// CHECK-NEXT: %[[V0:[^ ]+]] = fusion.broadcast %[[A1]] [1] : tensor<3xf32> -> tensor<3x4xf32>
// CHECK-NEXT: %[[V1:[^ ]+]] = fusion.sub %[[A0]], %[[V0]] : tensor<3x4xf32>, tensor<3x4xf32> -> tensor<3x4xf32>
// CHECK-NEXT: %[[V2:[^ ]+]] = fusion.fill 0.000000e+00 : tensor<3x4xf32>
// CHECK-NEXT: %[[V3:[^ ]+]] = fusion.fill 1.000000e+00 : tensor<3x4xf32>
// CHECK-NEXT: %[[V4:[^ ]+]] = fusion.where %[[V1]], %[[V2]], %[[V3]] : tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32> -> tensor<3x4xf32>
// CHECK-NEXT: %[[V5:[^ ]+]] = fusion.sum %[[V4]] [1] : tensor<3x4xf32> -> tensor<3xf32>
// CHECK-NEXT: %[[V6:[^ ]+]] = fusion.div %[[A2]], %[[V5]] : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
// CHECK-NEXT: %[[V7:[^ ]+]] = fusion.broadcast %[[V6]] [1] : tensor<3xf32> -> tensor<3x4xf32>
// CHECK-NEXT: %[[V8:[^ ]+]] = fusion.where %[[V1]], %[[V2]], %[[V7]] : tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32> -> tensor<3x4xf32>
// CHECK-NEXT: return %[[V8]] : tensor<3x4xf32>
func.func @amax(%x: tensor<3x4xf32>) -> tensor<3xf32> {
  %y = fusion.amax %x [1] : tensor<3x4xf32> -> tensor<3xf32>
  return %y : tensor<3xf32>
}

// -----

// matmul: dA = dC B^T; dB = A^T dC summed over the batch axis B lacks.
// CHECK-LABEL: func.func @matmul_backward(
// CHECK-SAME: %[[A0:[^:]+]]: tensor<2x8x16xf32>
// CHECK-SAME: %[[A1:[^:]+]]: tensor<16x4xf32>
// CHECK-SAME: %[[A2:[^:]+]]: tensor<2x8x4xf32>) -> (tensor<2x8x16xf32>, tensor<16x4xf32>
// CHECK-NEXT: %[[V0:[^ ]+]] = fusion.transpose %[[A1]] [1, 0] : tensor<16x4xf32> -> tensor<4x16xf32>
// CHECK-NEXT: %[[V1:[^ ]+]] = fusion.matmul %[[A2]], %[[V0]] : tensor<2x8x4xf32>, tensor<4x16xf32> -> tensor<2x8x16xf32>
// CHECK-NEXT: %[[V2:[^ ]+]] = fusion.transpose %[[A0]] [0, 2, 1] : tensor<2x8x16xf32> -> tensor<2x16x8xf32>
// CHECK-NEXT: %[[V3:[^ ]+]] = fusion.matmul %[[V2]], %[[A2]] : tensor<2x16x8xf32>, tensor<2x8x4xf32> -> tensor<2x16x4xf32>
// CHECK-NEXT: %[[V4:[^ ]+]] = fusion.sum %[[V3]] [0] : tensor<2x16x4xf32> -> tensor<16x4xf32>
// CHECK-NEXT: return %[[V1]], %[[V4]] : tensor<2x8x16xf32>, tensor<16x4xf32>
func.func @matmul(%a: tensor<2x8x16xf32>, %b: tensor<16x4xf32>) -> tensor<2x8x4xf32> {
  %y = fusion.matmul %a, %b : tensor<2x8x16xf32>, tensor<16x4xf32> -> tensor<2x8x4xf32>
  return %y : tensor<2x8x4xf32>
}

// -----

// linear with bias: dx = linear(dy, W^T), dW = dy^T x, db = dy summed over rows.
// CHECK-LABEL: func.func @linear_backward(
// CHECK-SAME: %[[A0:[^:]+]]: tensor<8x16xf32>
// CHECK-SAME: %[[A1:[^:]+]]: tensor<4x16xf32>
// CHECK-SAME: %[[A2:[^:]+]]: tensor<8x4xf32>) -> (tensor<8x16xf32>, tensor<4x16xf32>, tensor<4xf32>
// CHECK-NEXT: %[[V0:[^ ]+]] = fusion.transpose %[[A1]] [1, 0] : tensor<4x16xf32> -> tensor<16x4xf32>
// CHECK-NEXT: %[[V1:[^ ]+]] = fusion.linear %[[A2]], %[[V0]] : tensor<8x4xf32>, tensor<16x4xf32> -> tensor<8x16xf32>
// CHECK-NEXT: %[[V2:[^ ]+]] = fusion.transpose %[[A2]] [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
// CHECK-NEXT: %[[V3:[^ ]+]] = fusion.matmul %[[V2]], %[[A0]] : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT: %[[V4:[^ ]+]] = fusion.sum %[[A2]] [0] : tensor<8x4xf32> -> tensor<4xf32>
// CHECK-NEXT: return %[[V1]], %[[V3]], %[[V4]] : tensor<8x16xf32>, tensor<4x16xf32>, tensor<4xf32>
func.func @linear(%x: tensor<8x16xf32>, %w: tensor<4x16xf32>, %b: tensor<4xf32>) -> tensor<8x4xf32> {
  %y = fusion.linear %x, %w, %b : tensor<8x16xf32>, tensor<4x16xf32>, tensor<4xf32> -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

// linear of a vector: dW is the outer product dy x^T.
// CHECK-LABEL: func.func @linear_vector_backward(
// CHECK-SAME: %[[A0:[^:]+]]: tensor<16xf32>
// CHECK-SAME: %[[A1:[^:]+]]: tensor<4x16xf32>
// CHECK-SAME: %[[A2:[^:]+]]: tensor<4xf32>) -> (tensor<16xf32>, tensor<4x16xf32>
// CHECK-NEXT: %[[V0:[^ ]+]] = fusion.transpose %[[A1]] [1, 0] : tensor<4x16xf32> -> tensor<16x4xf32>
// CHECK-NEXT: %[[V1:[^ ]+]] = fusion.linear %[[A2]], %[[V0]] : tensor<4xf32>, tensor<16x4xf32> -> tensor<16xf32>
// CHECK-NEXT: %[[V2:[^ ]+]] = fusion.reshape %[[A2]] : tensor<4xf32> -> tensor<4x1xf32>
// CHECK-NEXT: %[[V3:[^ ]+]] = fusion.reshape %[[A0]] : tensor<16xf32> -> tensor<1x16xf32>
// CHECK-NEXT: %[[V4:[^ ]+]] = fusion.matmul %[[V2]], %[[V3]] : tensor<4x1xf32>, tensor<1x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT: return %[[V1]], %[[V4]] : tensor<16xf32>, tensor<4x16xf32>
func.func @linear_vector(%x: tensor<16xf32>, %w: tensor<4x16xf32>) -> tensor<4xf32> {
  %y = fusion.linear %x, %w : tensor<16xf32>, tensor<4x16xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// A value used twice gets the sum of both gradients.
// CHECK-LABEL: func.func @reuse_backward(
// CHECK-SAME: %[[A0:[^:]+]]: tensor<4xf32>
// CHECK-SAME: %[[A1:[^:]+]]: tensor<4xf32>
// CHECK-NEXT: %[[V0:[^ ]+]] = fusion.mul %[[A1]], %[[A0]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V1:[^ ]+]] = fusion.mul %[[A1]], %[[A0]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V2:[^ ]+]] = fusion.add %[[V0]], %[[V1]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: return %[[V2]] : tensor<4xf32>
func.func @reuse(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = fusion.mul %x, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// fill and iota get no gradient and are made again, not saved; an integer
// argument and result get none either (no cotangent argument for %i).
// CHECK-LABEL: func.func @constants_backward(
// CHECK-SAME: %[[A0:[^:]+]]: tensor<4xf32>
// CHECK-NEXT: %[[V0:[^ ]+]] = fusion.fill 2.000000e+00 : tensor<4xf32>
// CHECK-NEXT: %[[V1:[^ ]+]] = fusion.mul %[[A0]], %[[V0]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: return %[[V1]] : tensor<4xf32>
func.func @constants(%x: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>) {
  %z = fusion.fill 2.0 : tensor<4xf32>
  %n = fusion.iota 0 : tensor<4xf32>
  %c = fusion.cast %i : tensor<4xi32> -> tensor<4xf32>
  %y = fusion.mul %x, %z : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %u = fusion.add %y, %c : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %v = fusion.add %u, %n : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %v, %i : tensor<4xf32>, tensor<4xi32>
}

// -----

// The backward has no stream axis: a stream schedules the forward op that
// made a value, but the backward takes the value as an argument (which
// cannot stream) and reduces its gradient along the axis.
// CHECK-LABEL: func.func @streamed_backward(
// CHECK-SAME: %[[Y:[^:]+]]: tensor<4x8xf32, #fusion.dist<@tp, [serial, serial]>>, %[[DY:[^:]+]]: tensor<4x8xf32, #fusion.dist<@tp, [serial, serial]>>)
// CHECK-NOT: stream
// CHECK: return
fusion.mesh @tp = [0, 1]
func.func @streamed(%x: tensor<4x8xf32, #fusion.dist<@tp, [serial, serial]>>) -> tensor<4x8xf32, #fusion.dist<@tp, [stream, serial]>> {
  %y = fusion.exp %x : tensor<4x8xf32, #fusion.dist<@tp, [serial, serial]>> -> tensor<4x8xf32, #fusion.dist<@tp, [stream, serial]>>
  return %y : tensor<4x8xf32, #fusion.dist<@tp, [stream, serial]>>
}

// -----

// A sum crosses one mesh axis at a time: the bias gradient of a linear
// whose rows are split over both axes of a 2-D mesh sums each in turn.
// CHECK-LABEL: func.func @two_axes_backward(
// CHECK: %[[P:.+]] = fusion.sum %{{.+}} [1] : tensor<4x4x6xf32, #fusion.dist<@mesh, [didy, didx, serial]>> -> tensor<4x6xf32, #fusion.dist<@mesh, [didy, serial]>>
// CHECK-NEXT: fusion.sum %[[P]] [0] : tensor<4x6xf32, #fusion.dist<@mesh, [didy, serial]>> -> tensor<6xf32, #fusion.dist<@mesh, [serial]>>
fusion.mesh @mesh = [[0, 1], [2, 3]]
func.func @two_axes(%x: tensor<4x4x8xf32, #fusion.dist<@mesh, [didy, didx, serial]>>,
                    %w: tensor<6x8xf32, #fusion.dist<@mesh, [serial, serial]>>,
                    %b: tensor<6xf32, #fusion.dist<@mesh, [serial]>>)
    -> tensor<4x4x6xf32, #fusion.dist<@mesh, [didy, didx, serial]>> {
  %y = fusion.linear %x, %w, %b : tensor<4x4x8xf32, #fusion.dist<@mesh, [didy, didx, serial]>>, tensor<6x8xf32, #fusion.dist<@mesh, [serial, serial]>>, tensor<6xf32, #fusion.dist<@mesh, [serial]>> -> tensor<4x4x6xf32, #fusion.dist<@mesh, [didy, didx, serial]>>
  return %y : tensor<4x4x6xf32, #fusion.dist<@mesh, [didy, didx, serial]>>
}
