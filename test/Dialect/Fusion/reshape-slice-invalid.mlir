// RUN: hir-opt %s -split-input-file -verify-diagnostics

// One chunk per verifier rule of fusion.reshape and fusion.slice
// (FusionDialect.cpp, the shape rules of common/Verify.cpp): their shapes,
// and which axes they let be distributed (a reshape's kept axes and the
// outermost axes of a group it merges or splits, alike on both sides; a
// slice's axes taken whole).

// reshape: as many elements.
func.func @f(%a: tensor<4x8xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{'fusion.reshape' op result shape 16 holds 16 elements, the input shape 4x8 32}}
  %0 = fusion.reshape %a : tensor<4x8xf32> -> tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

// reshape: one element type.
func.func @f(%a: tensor<4x8xf32>) -> tensor<32xf16> {
  // expected-error @+1 {{'fusion.reshape' op input and result differ in element type: 'f32' vs 'f16'}}
  %0 = fusion.reshape %a : tensor<4x8xf32> -> tensor<32xf16>
  return %0 : tensor<32xf16>
}

// -----

// reshape: a merged group's outermost axes are distributed alike on both
// sides (an outer split) or not at all; here didx is merged into a serial axis.
fusion.mesh @tp = [0, 1, 2, 3]
func.func @f(%a: tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>) -> tensor<32xf32, #fusion.dist<@tp, [serial]>> {
  // expected-error @+1 {{'fusion.reshape' op input axis 0 is didx but result axis 0 is serial; the outermost axes of a merged or split group (input axes [0, 2) to result axes [0, 1)) are distributed alike (an outer split) or not at all}}
  %0 = fusion.reshape %a : tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<32xf32, #fusion.dist<@tp, [serial]>>
  return %0 : tensor<32xf32, #fusion.dist<@tp, [serial]>>
}

// -----

// reshape: likewise a split that appears on the result side only.
fusion.mesh @tp = [0, 1]
func.func @f(%a: tensor<8x16xf32, #fusion.dist<@tp, [serial, serial]>>) -> tensor<8x4x4xf32, #fusion.dist<@tp, [serial, didx, serial]>> {
  // expected-error @+1 {{'fusion.reshape' op input axis 1 is serial but result axis 1 is didx; the outermost axes of a merged or split group (input axes [1, 2) to result axes [1, 3)) are distributed alike (an outer split) or not at all}}
  %0 = fusion.reshape %a : tensor<8x16xf32, #fusion.dist<@tp, [serial, serial]>> -> tensor<8x4x4xf32, #fusion.dist<@tp, [serial, didx, serial]>>
  return %0 : tensor<8x4x4xf32, #fusion.dist<@tp, [serial, didx, serial]>>
}

// -----

// reshape: and an outer split keeps its parallel type (didx is not didy).
fusion.mesh @grid = [[0, 1], [2, 3]]
func.func @f(%a: tensor<8x16xf32, #fusion.dist<@grid, [serial, didx]>>) -> tensor<8x4x4xf32, #fusion.dist<@grid, [serial, didy, serial]>> {
  // expected-error @+1 {{'fusion.reshape' op input axis 1 is didx but result axis 1 is didy; the outermost axes of a merged or split group (input axes [1, 2) to result axes [1, 3)) are distributed alike (an outer split) or not at all}}
  %0 = fusion.reshape %a : tensor<8x16xf32, #fusion.dist<@grid, [serial, didx]>> -> tensor<8x4x4xf32, #fusion.dist<@grid, [serial, didy, serial]>>
  return %0 : tensor<8x4x4xf32, #fusion.dist<@grid, [serial, didy, serial]>>
}

// -----

// reshape: only a group's outermost axis may carry the split (here the inner
// one of the result).
fusion.mesh @tp = [0, 1]
func.func @f(%a: tensor<8x16xf32, #fusion.dist<@tp, [serial, serial]>>) -> tensor<8x4x4xf32, #fusion.dist<@tp, [serial, serial, didx]>> {
  // expected-error @+1 {{'fusion.reshape' op result axis 2 is didx but the reshape merges or splits it (input axes [1, 2) to result axes [1, 3)); only an axis kept whole, or the outermost axis of a merged or split group distributed alike (didx, didy or didz) on both sides, may be distributed}}
  %0 = fusion.reshape %a : tensor<8x16xf32, #fusion.dist<@tp, [serial, serial]>> -> tensor<8x4x4xf32, #fusion.dist<@tp, [serial, serial, didx]>>
  return %0 : tensor<8x4x4xf32, #fusion.dist<@tp, [serial, serial, didx]>>
}

// -----

// reshape: an inner axis is checked even where the other side is left to
// fusion-propagate-sharding (here the input's heads dimension dh).
fusion.mesh @tp = [0, 1]
func.func @f(%a: tensor<8x4x4xf32, #fusion.dist<@tp, [serial, serial, didx]>>) -> tensor<8x16xf32> {
  // expected-error @+1 {{'fusion.reshape' op input axis 2 is didx but the reshape merges or splits it (input axes [1, 3) to result axes [1, 2)); only an axis kept whole, or the outermost axis of a merged or split group distributed alike (didx, didy or didz) on both sides, may be distributed}}
  %0 = fusion.reshape %a : tensor<8x4x4xf32, #fusion.dist<@tp, [serial, serial, didx]>> -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// reshape: a stream axis is a schedule of one value, never split or merged,
// even as a group's outermost axis.
fusion.mesh @tp = [0, 1]
func.func @f(%a: tensor<8x16xf32, #fusion.dist<@tp, [stream, serial]>>) -> tensor<128xf32, #fusion.dist<@tp, [stream]>> {
  // expected-error @+1 {{'fusion.reshape' op input axis 0 is stream but the reshape merges or splits it (input axes [0, 2) to result axes [0, 1)); only an axis kept whole, or the outermost axis of a merged or split group distributed alike (didx, didy or didz) on both sides, may be distributed}}
  %0 = fusion.reshape %a : tensor<8x16xf32, #fusion.dist<@tp, [stream, serial]>> -> tensor<128xf32, #fusion.dist<@tp, [stream]>>
  return %0 : tensor<128xf32, #fusion.dist<@tp, [stream]>>
}

// -----

// reshape: nor is a stream axis split out of a group (here the result's inner
// one).
fusion.mesh @tp = [0, 1, 2, 3]
func.func @f(%a: tensor<32xf32, #fusion.dist<@tp, [serial]>>) -> tensor<4x8xf32, #fusion.dist<@tp, [serial, stream]>> {
  // expected-error @+1 {{'fusion.reshape' op result axis 1 is stream but the reshape merges or splits it (input axes [0, 1) to result axes [0, 2)); only an axis kept whole, or the outermost axis of a merged or split group distributed alike (didx, didy or didz) on both sides, may be distributed}}
  %0 = fusion.reshape %a : tensor<32xf32, #fusion.dist<@tp, [serial]>> -> tensor<4x8xf32, #fusion.dist<@tp, [serial, stream]>>
  return %0 : tensor<4x8xf32, #fusion.dist<@tp, [serial, stream]>>
}

// -----

// reshape: nor its outermost one, from an input left unannotated.
fusion.mesh @tp = [0, 1, 2, 3]
func.func @f(%a: tensor<32xf32>) -> tensor<4x8xf32, #fusion.dist<@tp, [stream, serial]>> {
  // expected-error @+1 {{'fusion.reshape' op result axis 0 is stream but the reshape merges or splits it (input axes [0, 1) to result axes [0, 2))}}
  %0 = fusion.reshape %a : tensor<32xf32> -> tensor<4x8xf32, #fusion.dist<@tp, [stream, serial]>>
  return %0 : tensor<4x8xf32, #fusion.dist<@tp, [stream, serial]>>
}

// -----

// slice: a slice keeps every axis.
func.func @f(%a: tensor<4x8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'fusion.slice' op result has rank 1, the input 2; a slice keeps every axis}}
  %0 = fusion.slice %a offsets [0, 0] strides [1, 1] : tensor<4x8xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// slice: one offset and one stride per axis.
func.func @f(%a: tensor<4x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'fusion.slice' op strides has 1 entries for an input of rank 2}}
  %0 = fusion.slice %a offsets [0, 0] strides [1] : tensor<4x8xf32> -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// slice: offsets are at least 0, strides at least 1.
func.func @f(%a: tensor<4x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'fusion.slice' op axis 0 has offset 0 and stride 0; an offset is at least 0 and a stride at least 1}}
  %0 = fusion.slice %a offsets [0, 0] strides [0, 1] : tensor<4x8xf32> -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// slice: the box is inside the input (indices 1, 3, 5 of 4).
func.func @f(%a: tensor<4x8xf32>) -> tensor<3x8xf32> {
  // expected-error @+1 {{'fusion.slice' op axis 0 takes 3 indices from 1 by 2, past the input's extent 4}}
  %0 = fusion.slice %a offsets [1, 0] strides [2, 1] : tensor<4x8xf32> -> tensor<3x8xf32>
  return %0 : tensor<3x8xf32>
}

// -----

// slice: a box whose last index overflows int64 is past the input too.
func.func @f(%a: tensor<4x8xf32>) -> tensor<3x8xf32> {
  // expected-error @+1 {{'fusion.slice' op axis 0 takes 3 indices from 0 by 4611686018427387904, past the input's extent 4}}
  %0 = fusion.slice %a offsets [0, 0] strides [4611686018427387904, 1] : tensor<4x8xf32> -> tensor<3x8xf32>
  return %0 : tensor<3x8xf32>
}

// -----

// slice: one element type.
func.func @f(%a: tensor<4x8xf32>) -> tensor<2x8xf16> {
  // expected-error @+1 {{'fusion.slice' op input and result differ in element type: 'f32' vs 'f16'}}
  %0 = fusion.slice %a offsets [0, 0] strides [1, 1] : tensor<4x8xf32> -> tensor<2x8xf16>
  return %0 : tensor<2x8xf16>
}

// -----

// slice: an axis it cuts is serial (here didx: a fused QKV weight's rows,
// whose device parts the slice would mix).
fusion.mesh @tp = [0, 1]
func.func @f(%a: tensor<48x16xf32, #fusion.dist<@tp, [didx, serial]>>) -> tensor<16x16xf32> {
  // expected-error @+1 {{'fusion.slice' op input axis 0 is didx but the slice cuts it (offset 16, stride 1, 16 of 48); only an axis taken whole may be distributed (reshard it first, or reshape the part to cut onto a serial axis)}}
  %0 = fusion.slice %a offsets [16, 0] strides [1, 1] : tensor<48x16xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}

// -----

// slice: likewise a result axis (here stream), even with the input left
// unannotated; a stride other than 1 cuts an axis of the same extent too.
fusion.mesh @tp = [0, 1]
func.func @f(%a: tensor<8x16xf32>) -> tensor<8x8xf32, #fusion.dist<@tp, [serial, stream]>> {
  // expected-error @+1 {{'fusion.slice' op result axis 1 is stream but the slice cuts it (offset 0, stride 2, 8 of 16)}}
  %0 = fusion.slice %a offsets [0, 0] strides [1, 2] : tensor<8x16xf32> -> tensor<8x8xf32, #fusion.dist<@tp, [serial, stream]>>
  return %0 : tensor<8x8xf32, #fusion.dist<@tp, [serial, stream]>>
}
