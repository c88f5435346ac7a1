// RUN: hir-opt %s -split-input-file -verify-diagnostics

// One chunk per verifier rule of the fusion dialect (FusionDialect.cpp, the
// shape rules of common/Verify.cpp) and per ODS constraint; reshape's and
// slice's are in reshape-slice-invalid.mlir.

// mesh: at least one device.
// expected-error @+1 {{'fusion.mesh' op mesh has no device}}
fusion.mesh @tp = []

// -----

// mesh: device ids are non-negative.
// expected-error @+1 {{'fusion.mesh' op device id -1 is negative}}
fusion.mesh @tp = [0, -1]

// -----

// mesh: device ids are distinct.
// expected-error @+1 {{'fusion.mesh' op device 1 appears twice}}
fusion.mesh @tp = [0, 1, 2, 1]

// -----

// dist: one parallel type per axis of the tensor.
fusion.mesh @tp = [0, 1]
// expected-error @+1 {{distribution has 1 parallel types for a tensor of rank 2}}
func.func private @f(tensor<2x8xf32, #fusion.dist<@tp, [didx]>>)

// -----

// dist: at most one didx axis.
fusion.mesh @tp = [0, 1]
// expected-error @+1 {{distribution has more than one 'didx' axis}}
func.func private @f(tensor<2x2xf32, #fusion.dist<@tp, [didx, didx]>>)

// -----

// dist: at most one stream axis.
fusion.mesh @tp = [0, 1]
// expected-error @+1 {{distribution has more than one 'stream' axis}}
func.func private @f(tensor<2x2x2xf32, #fusion.dist<@tp, [stream, didx, stream]>>)

// -----

// Encodings on op types are #fusion.dist distributions.
func.func @f(%a: tensor<8xf32, "rows">) -> tensor<8xf32> {
  // expected-error @+1 {{'fusion.set' op tensor encoding "rows" is not a #fusion.dist distribution}}
  %0 = fusion.set %a : tensor<8xf32, "rows"> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// The non-dist encoding check covers results too.
func.func @f(%a: tensor<8xf32>) -> tensor<8xf32, 7 : i64> {
  // expected-error @+1 {{'fusion.neg' op tensor encoding 7 : i64 is not a #fusion.dist distribution}}
  %0 = fusion.neg %a : tensor<8xf32> -> tensor<8xf32, 7 : i64>
  return %0 : tensor<8xf32, 7 : i64>
}

// -----

// ODS: fusion tensors hold f16, bf16, f32, i32 or i64 (not i8; integers.mlir
// and integers-invalid.mlir have the integer rules).
func.func @f(%a: tensor<8xi8>) -> tensor<8xi8> {
  // expected-error @+1 {{'fusion.neg' op operand #0 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<8xi8>'}}
  %0 = fusion.neg %a : tensor<8xi8> -> tensor<8xi8>
  return %0 : tensor<8xi8>
}

// -----

// ODS: fusion tensors hold f16, bf16, f32, i32 or i64 (not f64).
func.func @f(%a: tensor<8xf32>) -> tensor<8xf64> {
  // expected-error @+1 {{'fusion.cast' op result #0 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<8xf64>'}}
  %0 = fusion.cast %a : tensor<8xf32> -> tensor<8xf64>
  return %0 : tensor<8xf64>
}

// -----

// ODS: fusion tensors have static shapes.
func.func @f(%a: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'fusion.set' op operand #0 must be statically shaped tensor}}
  %0 = fusion.set %a : tensor<?x8xf32> -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// ODS: fusion tensors are ranked (generic form: the custom one cannot spell it).
func.func @f(%a: tensor<*xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'fusion.add' op operand #0 must be statically shaped tensor}}
  %0 = "fusion.add"(%a, %b) : (tensor<*xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// set: input and result have one shape.
func.func @f(%a: tensor<4x8xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'fusion.set' op input and result differ in shape: 4x8 vs 8x4}}
  %0 = fusion.set %a : tensor<4x8xf32> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// set: input and result have one element type (cast converts).
func.func @f(%a: tensor<4x8xf32>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{'fusion.set' op input and result differ in element type: 'f32' vs 'bf16'}}
  %0 = fusion.set %a : tensor<4x8xf32> -> tensor<4x8xbf16>
  return %0 : tensor<4x8xbf16>
}

// -----

// Unary ops: input and result have one shape.
func.func @f(%a: tensor<8x16xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{'fusion.neg' op input and result differ in shape: 8x16 vs 8x8}}
  %0 = fusion.neg %a : tensor<8x16xf32> -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// exp: the unary class's one verifier holds for an op added by its def line.
func.func @f(%a: tensor<8x16xf32>) -> tensor<16x8xf32> {
  // expected-error @+1 {{'fusion.exp' op input and result differ in shape: 8x16 vs 16x8}}
  %0 = fusion.exp %a : tensor<8x16xf32> -> tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}

// -----

// gelu: the unary class's verifier, on an op added by its def line.
func.func @f(%a: tensor<8xf32>) -> tensor<8xbf16> {
  // expected-error @+1 {{'fusion.gelu' op input and result differ in element type: 'f32' vs 'bf16'}}
  %0 = fusion.gelu %a : tensor<8xf32> -> tensor<8xbf16>
  return %0 : tensor<8xbf16>
}

// -----

// where: the mask has the result's shape.
func.func @f(%m: tensor<4xf32>, %a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'fusion.where' op mask and result differ in shape: 4 vs 8}}
  %0 = fusion.where %m, %a, %b : tensor<4xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// where: the mask has the operands' element type (no i1 mask).
func.func @f(%m: tensor<8xi1>, %a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'fusion.where' op operand #0 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<8xi1>'}}
  %0 = fusion.where %m, %a, %b : tensor<8xi1>, tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// where: rhs has the result's element type.
func.func @f(%m: tensor<8xf32>, %a: tensor<8xf32>, %b: tensor<8xbf16>) -> tensor<8xf32> {
  // expected-error @+1 {{'fusion.where' op rhs and result differ in element type: 'bf16' vs 'f32'}}
  %0 = fusion.where %m, %a, %b : tensor<8xf32>, tensor<8xf32>, tensor<8xbf16> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// neg: input and result have one element type.
func.func @f(%a: tensor<8xf32>) -> tensor<8xf16> {
  // expected-error @+1 {{'fusion.neg' op input and result differ in element type: 'f32' vs 'f16'}}
  %0 = fusion.neg %a : tensor<8xf32> -> tensor<8xf16>
  return %0 : tensor<8xf16>
}

// -----

// cast: the element type may change, the shape may not.
func.func @f(%a: tensor<8xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{'fusion.cast' op input and result differ in shape: 8 vs 4}}
  %0 = fusion.cast %a : tensor<8xf32> -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// Binary ops: lhs and result have one shape.
func.func @f(%a: tensor<8xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'fusion.add' op lhs and result differ in shape: 8 vs 4}}
  %0 = fusion.add %a, %b : tensor<8xf32>, tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Binary ops: rhs and result have one shape.
func.func @f(%a: tensor<8xf32>, %b: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'fusion.mul' op rhs and result differ in shape: 4 vs 8}}
  %0 = fusion.mul %a, %b : tensor<8xf32>, tensor<4xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Binary ops: operands and result have one element type.
func.func @f(%a: tensor<8xf32>, %b: tensor<8xbf16>) -> tensor<8xf32> {
  // expected-error @+1 {{'fusion.sub' op rhs and result differ in element type: 'bf16' vs 'f32'}}
  %0 = fusion.sub %a, %b : tensor<8xf32>, tensor<8xbf16> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Binary ops: a scalar is not broadcast implicitly.
func.func @f(%a: tensor<8xf32>, %b: tensor<f32>) -> tensor<8xf32> {
  // expected-error @+1 {{'fusion.div' op rhs and result differ in shape: scalar vs 8}}
  %0 = fusion.div %a, %b : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Reductions: at least one axis.
func.func @f(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'fusion.sum' op reduces no axis}}
  %0 = fusion.sum %a [] : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Reductions: axes are in range.
func.func @f(%a: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'fusion.sum' op reduced axis 2 is out of range for rank 2}}
  %0 = fusion.sum %a [2] : tensor<4x8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Reductions: axes are non-negative.
func.func @f(%a: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'fusion.amax' op reduced axis -1 is out of range for rank 2}}
  %0 = fusion.amax %a [-1] : tensor<4x8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Reductions: an axis is listed once.
func.func @f(%a: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'fusion.amax' op reduced axis 1 is listed twice}}
  %0 = fusion.amax %a [1, 1] : tensor<4x8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Reductions: the result drops exactly the reduced axes.
func.func @f(%a: tensor<4x8x16xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'fusion.sum' op result shape 4x8 is not the input shape 4x8x16 without the reduced axes (4x16)}}
  %0 = fusion.sum %a [1] : tensor<4x8x16xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Reductions: the result does not keep the reduced axis as extent 1.
func.func @f(%a: tensor<4x8xf32>) -> tensor<4x1xf32> {
  // expected-error @+1 {{'fusion.sum' op result shape 4x1 is not the input shape 4x8 without the reduced axes (4)}}
  %0 = fusion.sum %a [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

// Reductions: input and result have one element type.
func.func @f(%a: tensor<4x8xbf16>) -> tensor<4xf32> {
  // expected-error @+1 {{'fusion.sum' op input and result differ in element type: 'bf16' vs 'f32'}}
  %0 = fusion.sum %a [1] : tensor<4x8xbf16> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Reductions: encodings are distributions.
func.func @f(%a: tensor<4x8xf32, "x">) -> tensor<4xf32> {
  // expected-error @+1 {{'fusion.amax' op tensor encoding "x" is not a #fusion.dist distribution}}
  %0 = fusion.amax %a [1] : tensor<4x8xf32, "x"> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// broadcast: at least one new axis.
func.func @f(%a: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{'fusion.broadcast' op broadcasts along no axis}}
  %0 = fusion.broadcast %a [] : tensor<16xf32> -> tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

// broadcast: new axes are in range of the result's rank.
func.func @f(%a: tensor<16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{'fusion.broadcast' op broadcast axis 2 is out of range for rank 2}}
  %0 = fusion.broadcast %a [2] : tensor<16xf32> -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// broadcast: a new axis is listed once.
func.func @f(%a: tensor<16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{'fusion.broadcast' op broadcast axis 0 is listed twice}}
  %0 = fusion.broadcast %a [0, 0] : tensor<16xf32> -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// broadcast: the result without the new axes is the input.
func.func @f(%a: tensor<16xf32>) -> tensor<16x8xf32> {
  // expected-error @+1 {{'fusion.broadcast' op result shape 16x8 without the broadcast axes (8) is not the input shape 16}}
  %0 = fusion.broadcast %a [0] : tensor<16xf32> -> tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}

// -----

// broadcast: input and result have one element type.
func.func @f(%a: tensor<16xf32>) -> tensor<8x16xf16> {
  // expected-error @+1 {{'fusion.broadcast' op input and result differ in element type: 'f32' vs 'f16'}}
  %0 = fusion.broadcast %a [0] : tensor<16xf32> -> tensor<8x16xf16>
  return %0 : tensor<8x16xf16>
}

// -----

// matmul: operands have rank 2 or more.
func.func @f(%a: tensor<64xf32>, %b: tensor<64x32xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'fusion.matmul' op operands need rank 2 or more, got 1 and 2}}
  %0 = fusion.matmul %a, %b : tensor<64xf32>, tensor<64x32xf32> -> tensor<32xf32>
  return %0 : tensor<32xf32>
}

// -----

// matmul: operands and result have one element type.
func.func @f(%a: tensor<8x64xbf16>, %b: tensor<64x32xbf16>) -> tensor<8x32xf32> {
  // expected-error @+1 {{'fusion.matmul' op operands and result differ in element type: 'bf16' vs 'f32'}}
  %0 = fusion.matmul %a, %b : tensor<8x64xbf16>, tensor<64x32xbf16> -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

// matmul: batch axes broadcast (equal, or one of them 1 or missing).
func.func @f(%a: tensor<4x8x64xf32>, %b: tensor<2x64x32xf32>) -> tensor<4x8x32xf32> {
  // expected-error @+1 {{'fusion.matmul' op batch axes do not broadcast: lhs 4x8x64, rhs 2x64x32 (lhs axis 0 has extent 4, rhs axis 0 has extent 2)}}
  %0 = fusion.matmul %a, %b : tensor<4x8x64xf32>, tensor<2x64x32xf32> -> tensor<4x8x32xf32>
  return %0 : tensor<4x8x32xf32>
}

// -----

// matmul: batch axes are aligned from the right: rhs's 3 meets lhs's 2.
func.func @f(%a: tensor<3x2x8x64xf32>, %b: tensor<3x64x32xf32>) -> tensor<3x2x8x32xf32> {
  // expected-error @+1 {{'fusion.matmul' op batch axes do not broadcast: lhs 3x2x8x64, rhs 3x64x32 (lhs axis 1 has extent 2, rhs axis 0 has extent 3)}}
  %0 = fusion.matmul %a, %b : tensor<3x2x8x64xf32>, tensor<3x64x32xf32> -> tensor<3x2x8x32xf32>
  return %0 : tensor<3x2x8x32xf32>
}

// -----

// matmul: the result's batch axes are the broadcast ones, rhs's included.
func.func @f(%a: tensor<1x8x64xf32>, %b: tensor<2x3x64x32xf32>) -> tensor<1x8x32xf32> {
  // expected-error @+1 {{'fusion.matmul' op result shape 1x8x32 is not 2x3x8x32}}
  %0 = fusion.matmul %a, %b : tensor<1x8x64xf32>, tensor<2x3x64x32xf32> -> tensor<1x8x32xf32>
  return %0 : tensor<1x8x32xf32>
}

// -----

// matmul: lhs and rhs agree on K.
func.func @f(%a: tensor<8x64xf32>, %b: tensor<32x16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{'fusion.matmul' op contraction extents differ: lhs has K = 64, rhs has K = 32}}
  %0 = fusion.matmul %a, %b : tensor<8x64xf32>, tensor<32x16xf32> -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// matmul: the result is [B..., M, N].
func.func @f(%a: tensor<4x8x64xf32>, %b: tensor<64x32xf32>) -> tensor<8x32xf32> {
  // expected-error @+1 {{'fusion.matmul' op result shape 8x32 is not 4x8x32}}
  %0 = fusion.matmul %a, %b : tensor<4x8x64xf32>, tensor<64x32xf32> -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

// matmul: encodings are distributions.
func.func @f(%a: tensor<8x64xf32>, %b: tensor<64x32xf32, "cols">) -> tensor<8x32xf32> {
  // expected-error @+1 {{'fusion.matmul' op tensor encoding "cols" is not a #fusion.dist distribution}}
  %0 = fusion.matmul %a, %b : tensor<8x64xf32>, tensor<64x32xf32, "cols"> -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

// linear: the input has rank 1 or more.
func.func @f(%x: tensor<f32>, %w: tensor<32x64xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'fusion.linear' op input needs rank 1 or more}}
  %0 = fusion.linear %x, %w : tensor<f32>, tensor<32x64xf32> -> tensor<32xf32>
  return %0 : tensor<32xf32>
}

// -----

// linear: the weight is [N, K].
func.func @f(%x: tensor<8x64xf32>, %w: tensor<2x32x64xf32>) -> tensor<8x32xf32> {
  // expected-error @+1 {{'fusion.linear' op weight must have rank 2 ([N, K]), got rank 3}}
  %0 = fusion.linear %x, %w : tensor<8x64xf32>, tensor<2x32x64xf32> -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

// linear: input and weight agree on K (the weight is not transposed).
func.func @f(%x: tensor<8x64xf32>, %w: tensor<64x32xf32>) -> tensor<8x32xf32> {
  // expected-error @+1 {{'fusion.linear' op contraction extents differ: input has K = 64, weight [N, K] has K = 32}}
  %0 = fusion.linear %x, %w : tensor<8x64xf32>, tensor<64x32xf32> -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

// linear: the bias is [N].
func.func @f(%x: tensor<8x64xf32>, %w: tensor<32x64xf32>, %b: tensor<64xf32>) -> tensor<8x32xf32> {
  // expected-error @+1 {{'fusion.linear' op bias must be [32], got 64}}
  %0 = fusion.linear %x, %w, %b : tensor<8x64xf32>, tensor<32x64xf32>, tensor<64xf32> -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

// linear: the bias has rank 1.
func.func @f(%x: tensor<8x64xf32>, %w: tensor<32x64xf32>, %b: tensor<8x32xf32>) -> tensor<8x32xf32> {
  // expected-error @+1 {{'fusion.linear' op bias must be [32], got 8x32}}
  %0 = fusion.linear %x, %w, %b : tensor<8x64xf32>, tensor<32x64xf32>, tensor<8x32xf32> -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

// linear: the bias has the element type of the others.
func.func @f(%x: tensor<8x64xbf16>, %w: tensor<32x64xbf16>, %b: tensor<32xf32>) -> tensor<8x32xbf16> {
  // expected-error @+1 {{'fusion.linear' op operands and result differ in element type: 'bf16' vs 'f32'}}
  %0 = fusion.linear %x, %w, %b : tensor<8x64xbf16>, tensor<32x64xbf16>, tensor<32xf32> -> tensor<8x32xbf16>
  return %0 : tensor<8x32xbf16>
}

// -----

// linear: the result is [B..., N].
func.func @f(%x: tensor<8x64xf32>, %w: tensor<32x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'fusion.linear' op result shape 8x64 is not 8x32}}
  %0 = fusion.linear %x, %w : tensor<8x64xf32>, tensor<32x64xf32> -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

// -----

// linear: encodings are distributions.
func.func @f(%x: tensor<8x64xf32>, %w: tensor<32x64xf32>, %b: tensor<32xf32, "b">) -> tensor<8x32xf32> {
  // expected-error @+1 {{'fusion.linear' op tensor encoding "b" is not a #fusion.dist distribution}}
  %0 = fusion.linear %x, %w, %b : tensor<8x64xf32>, tensor<32x64xf32>, tensor<32xf32, "b"> -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

// every op: the byte size of a static tensor fits in int64.
func.func @f(%a: tensor<2305843009213693952x2xbf16>) -> tensor<2305843009213693952x2xbf16> {
  // expected-error @+1 {{'fusion.neg' op operand #0: tensor of 2^62 elements of 2 bytes (2^63 bytes) overflows 64-bit sizes}}
  %0 = fusion.neg %a : tensor<2305843009213693952x2xbf16> -> tensor<2305843009213693952x2xbf16>
  return %0 : tensor<2305843009213693952x2xbf16>
}

// -----

// A 2-D mesh's shape covers its devices.
// expected-error @+1 {{'fusion.mesh' op mesh shape must have 2 or 3 axes whose product is the 4 devices}}
"fusion.mesh"() {sym_name = "m", devices = array<i64: 0, 1, 2, 3>, shape = array<i64: 3, 2>} : () -> ()

// -----

// Meshes have at most three axes (didx, didy, didz).
// expected-error @+1 {{'fusion.mesh' op mesh shape must have 2 or 3 axes whose product is the 2 devices}}
fusion.mesh @m4 = [[[[0, 1]]]]

// -----

// At most one didy axis.
// expected-error @+1 {{distribution has more than one 'didy' axis}}
func.func private @f(tensor<2x2xf32, #fusion.dist<@m, [didy, didy]>>)

// -----

// transpose: the permutation lists every input axis.
func.func @f(%a: tensor<4x8x16xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'fusion.transpose' op permutation has 2 axes for an input of rank 3}}
  %0 = fusion.transpose %a [1, 0] : tensor<4x8x16xf32> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// transpose: each axis once.
func.func @f(%a: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'fusion.transpose' op permuted axis 0 is listed twice}}
  %0 = fusion.transpose %a [0, 0] : tensor<4x8xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// transpose: each axis in range.
func.func @f(%a: tensor<4x8xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'fusion.transpose' op permuted axis 2 is out of range for rank 2}}
  %0 = fusion.transpose %a [2, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// transpose: the result is the input's shape permuted.
func.func @f(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'fusion.transpose' op result shape 4x8 is not the input shape 4x8 permuted (8x4)}}
  %0 = fusion.transpose %a [1, 0] : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// transpose: one element type.
func.func @f(%a: tensor<4x8xf32>) -> tensor<8x4xbf16> {
  // expected-error @+1 {{'fusion.transpose' op input and result differ in element type: 'f32' vs 'bf16'}}
  %0 = fusion.transpose %a [1, 0] : tensor<4x8xf32> -> tensor<8x4xbf16>
  return %0 : tensor<8x4xbf16>
}

// -----

// iota: the axis is one of the result's.
func.func @f() -> tensor<4x8xf32> {
  // expected-error @+1 {{'fusion.iota' op axis 2 is out of range for rank 2}}
  %0 = fusion.iota 2 : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// fill: encodings are distributions.
func.func @f() -> tensor<4x8xf32, "x"> {
  // expected-error @+1 {{'fusion.fill' op tensor encoding "x" is not a #fusion.dist distribution}}
  %0 = fusion.fill 1.0 : tensor<4x8xf32, "x">
  return %0 : tensor<4x8xf32, "x">
}

// -----

// dist: k chunks split the stream axis evenly.
fusion.mesh @tp = [0, 1]
// expected-error @+1 {{stream axis 1 of extent 10 does not split into 4 equal chunks}}
func.func private @f(tensor<2x10xf32, #fusion.dist<@tp, [didx, stream<4>]>>)

// -----

// dist: more chunks than indices.
fusion.mesh @tp = [0, 1]
// expected-error @+1 {{stream axis 0 of extent 2 does not split into 4 equal chunks}}
func.func private @f(tensor<2x8xf32, #fusion.dist<@tp, [stream<4>, serial]>>)

// -----

// attention: q is [B.., Sq, D], of rank 2 or more.
func.func @f(%q: tensor<16xf32>, %k: tensor<16xf32>, %v: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{'fusion.attention' op q needs rank 2 or more ([B.., Sq, D]), got rank 1}}
  %0 = fusion.attention %q, %k, %v : tensor<16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

// attention: q, k, v and the result have one rank (no broadcasting).
func.func @f(%q: tensor<4x8x16xf32>, %k: tensor<12x16xf32>, %v: tensor<4x12x8xf32>) -> tensor<4x8x8xf32> {
  // expected-error @+1 {{'fusion.attention' op k has rank 2, q has rank 3: q, k, v and the result have the same batch axes}}
  %0 = fusion.attention %q, %k, %v : tensor<4x8x16xf32>, tensor<12x16xf32>, tensor<4x12x8xf32> -> tensor<4x8x8xf32>
  return %0 : tensor<4x8x8xf32>
}

// -----

// attention: one element type.
func.func @f(%q: tensor<8x16xf32>, %k: tensor<12x16xbf16>, %v: tensor<12x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{'fusion.attention' op operands and result differ in element type: 'f32' vs 'bf16'}}
  %0 = fusion.attention %q, %k, %v : tensor<8x16xf32>, tensor<12x16xbf16>, tensor<12x8xf32> -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// attention: identical batch axes.
func.func @f(%q: tensor<4x8x16xf32>, %k: tensor<1x12x16xf32>, %v: tensor<4x12x8xf32>) -> tensor<4x8x8xf32> {
  // expected-error @+1 {{'fusion.attention' op batch axes differ: q has 4, k has 1 (attention does not broadcast)}}
  %0 = fusion.attention %q, %k, %v : tensor<4x8x16xf32>, tensor<1x12x16xf32>, tensor<4x12x8xf32> -> tensor<4x8x8xf32>
  return %0 : tensor<4x8x8xf32>
}

// -----

// attention: q and k agree on D.
func.func @f(%q: tensor<8x16xf32>, %k: tensor<12x32xf32>, %v: tensor<12x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{'fusion.attention' op head dims differ: q has D = 16, k has D = 32}}
  %0 = fusion.attention %q, %k, %v : tensor<8x16xf32>, tensor<12x32xf32>, tensor<12x8xf32> -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// attention: k and v agree on Sk.
func.func @f(%q: tensor<8x16xf32>, %k: tensor<12x16xf32>, %v: tensor<10x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{'fusion.attention' op key counts differ: k has Sk = 12, v has Sk = 10}}
  %0 = fusion.attention %q, %k, %v : tensor<8x16xf32>, tensor<12x16xf32>, tensor<10x8xf32> -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// attention: the result is [B.., Sq, Dv].
func.func @f(%q: tensor<8x16xf32>, %k: tensor<12x16xf32>, %v: tensor<12x8xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{'fusion.attention' op result shape 8x16 is not 8x8 ([B.., Sq, Dv])}}
  %0 = fusion.attention %q, %k, %v : tensor<8x16xf32>, tensor<12x16xf32>, tensor<12x8xf32> -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// attention: the mask is [Sq, Sk], shared by every batch index.
func.func @f(%q: tensor<2x8x16xf32>, %k: tensor<2x12x16xf32>, %v: tensor<2x12x8xf32>, %m: tensor<2x8x12xf32>) -> tensor<2x8x8xf32> {
  // expected-error @+1 {{'fusion.attention' op mask must be [Sq, Sk] = [8, 12], got 2x8x12}}
  %0 = fusion.attention %q, %k, %v, %m : tensor<2x8x16xf32>, tensor<2x12x16xf32>, tensor<2x12x8xf32>, tensor<2x8x12xf32> -> tensor<2x8x8xf32>
  return %0 : tensor<2x8x8xf32>
}

// -----

// attention: an explicit scale is finite.
func.func @f(%q: tensor<8x16xf32>, %k: tensor<12x16xf32>, %v: tensor<12x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{'fusion.attention' op scale must be finite, got inf}}
  %0 = fusion.attention %q, %k, %v scale 0x7FF0000000000000 : tensor<8x16xf32>, tensor<12x16xf32>, tensor<12x8xf32> -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// attention: the default scale, 1 / sqrt(D), needs D of 1 or more.
func.func @f(%q: tensor<8x0xf32>, %k: tensor<12x0xf32>, %v: tensor<12x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{'fusion.attention' op q has D = 0, whose default scale 1 / sqrt(D) is not finite; give a scale}}
  %0 = fusion.attention %q, %k, %v : tensor<8x0xf32>, tensor<12x0xf32>, tensor<12x8xf32> -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// attention: the Sq axis is not split over devices.
fusion.mesh @tp = [0, 1]
func.func @f(%q: tensor<2x8x16xf32, #fusion.dist<@tp, [serial, didx, serial]>>, %k: tensor<2x12x16xf32>, %v: tensor<2x12x8xf32>) -> tensor<2x8x8xf32> {
  // expected-error @+1 {{'fusion.attention' op q axis 1 (Sq) is didx; the Sq, Sk, D and Dv axes of attention are serial (only batch axes may be split or streamed)}}
  %0 = fusion.attention %q, %k, %v : tensor<2x8x16xf32, #fusion.dist<@tp, [serial, didx, serial]>>, tensor<2x12x16xf32>, tensor<2x12x8xf32> -> tensor<2x8x8xf32>
  return %0 : tensor<2x8x8xf32>
}

// -----

// attention: nor is Sk (a split of the keys would need a cross-device softmax).
fusion.mesh @tp = [0, 1]
func.func @f(%q: tensor<2x8x16xf32>, %k: tensor<2x12x16xf32, #fusion.dist<@tp, [serial, didx, serial]>>, %v: tensor<2x12x8xf32>) -> tensor<2x8x8xf32> {
  // expected-error @+1 {{'fusion.attention' op k axis 1 (Sk) is didx; the Sq, Sk, D and Dv axes of attention are serial}}
  %0 = fusion.attention %q, %k, %v : tensor<2x8x16xf32>, tensor<2x12x16xf32, #fusion.dist<@tp, [serial, didx, serial]>>, tensor<2x12x8xf32> -> tensor<2x8x8xf32>
  return %0 : tensor<2x8x8xf32>
}

// -----

// attention: the Dv axis of the result is not a stream axis.
fusion.mesh @tp = [0, 1]
func.func @f(%q: tensor<2x8x16xf32>, %k: tensor<2x12x16xf32>, %v: tensor<2x12x8xf32>) -> tensor<2x8x8xf32, #fusion.dist<@tp, [serial, serial, stream]>> {
  // expected-error @+1 {{'fusion.attention' op result axis 2 (Dv) is stream; the Sq, Sk, D and Dv axes of attention are serial}}
  %0 = fusion.attention %q, %k, %v : tensor<2x8x16xf32>, tensor<2x12x16xf32>, tensor<2x12x8xf32> -> tensor<2x8x8xf32, #fusion.dist<@tp, [serial, serial, stream]>>
  return %0 : tensor<2x8x8xf32, #fusion.dist<@tp, [serial, serial, stream]>>
}

// -----

// attention: q, k, v and the result are split alike on their batch axes
// (heads over the mesh: each device computes its own heads).
fusion.mesh @tp = [0, 1]
func.func @f(%q: tensor<2x8x16xf32, #fusion.dist<@tp, [didx, serial, serial]>>, %k: tensor<2x12x16xf32, #fusion.dist<@tp, [serial, serial, serial]>>, %v: tensor<2x12x8xf32>) -> tensor<2x8x8xf32> {
  // expected-error @+1 {{'fusion.attention' op batch axis 0 is didx in q but serial in k; q, k, v and the result are distributed alike on their batch axes}}
  %0 = fusion.attention %q, %k, %v : tensor<2x8x16xf32, #fusion.dist<@tp, [didx, serial, serial]>>, tensor<2x12x16xf32, #fusion.dist<@tp, [serial, serial, serial]>>, tensor<2x12x8xf32> -> tensor<2x8x8xf32>
  return %0 : tensor<2x8x8xf32>
}

// -----

// attention: the mask is replicated.
fusion.mesh @tp = [0, 1]
func.func @f(%q: tensor<2x8x16xf32>, %k: tensor<2x12x16xf32>, %v: tensor<2x12x8xf32>, %m: tensor<8x12xf32, #fusion.dist<@tp, [didx, serial]>>) -> tensor<2x8x8xf32> {
  // expected-error @+1 {{'fusion.attention' op mask axis 0 is didx; the mask is read whole by every device: every axis serial}}
  %0 = fusion.attention %q, %k, %v, %m : tensor<2x8x16xf32>, tensor<2x12x16xf32>, tensor<2x12x8xf32>, tensor<8x12xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<2x8x8xf32>
  return %0 : tensor<2x8x8xf32>
}
