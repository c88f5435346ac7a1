// RUN: hir-opt %s -split-input-file -verify-diagnostics

// Malformed fusion IR: each chunk must fail to parse with a located
// diagnostic.

// An unknown parallel type.
fusion.mesh @tp = [0, 1]
// expected-error @+1 {{expected one of [serial, didx, stream, didy, didz] for how one axis of a tensor is distributed, got: foo}}
func.func private @f(tensor<2xf32, #fusion.dist<@tp, [foo]>>)

// -----

// The mesh of a distribution is a symbol reference.
// expected-error @+1 {{expected attribute value}}
func.func private @f(tensor<2xf32, #fusion.dist<tp, [serial]>>)

// -----

// A distribution lists its parallel types in brackets.
// expected-error @+1 {{expected '['}}
func.func private @f(tensor<2xf32, #fusion.dist<@tp, serial>>)

// -----

// An unknown fusion attribute.
// expected-error @+1 {{unknown attribute `distribution` in dialect `fusion`}}
func.func private @f(tensor<2xf32, #fusion.distribution<@tp, [serial]>>)

// -----

// An unknown fusion op.
func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{custom op 'fusion.frobnicate' is unknown}}
  %0 = fusion.frobnicate %a : tensor<2xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// A mesh lists its devices in brackets.
// expected-error @+1 {{expected '['}}
fusion.mesh @tp = 0, 1

// -----

// A mesh is named by a symbol.
// expected-error @+1 {{expected valid '@'-identifier for symbol name}}
fusion.mesh tp = [0, 1]

// -----

// A reduction lists its axes.
func.func @f(%a: tensor<2xf32>) -> tensor<f32> {
  // expected-error @+1 {{expected '['}}
  %0 = fusion.sum %a : tensor<2xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// linear: the bias type is listed only with a bias operand.
func.func @f(%x: tensor<8x64xf32>, %w: tensor<32x64xf32>) -> tensor<8x32xf32> {
  // expected-error @+1 {{number of operands and types do not match: got 0 operands and 1 types}}
  %0 = fusion.linear %x, %w : tensor<8x64xf32>, tensor<32x64xf32>, tensor<32xf32> -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

// Fusion ops take tensors; the custom form rejects other types.
func.func @f(%a: memref<2xf32>) {
  // expected-error @+1 {{invalid kind of type specified: expected builtin.tensor, but found 'memref<2xf32>'}}
  %0 = fusion.neg %a : memref<2xf32> -> memref<2xf32>
  return
}

// -----

// The rows of a 2-D mesh have one length.
// expected-error @+1 {{mesh rows differ in size}}
fusion.mesh @m = [[0, 1], [2]]

// -----

// expected-error @+1 {{mesh rows differ in size}}
fusion.mesh @m3 = [[[0, 1], [2, 3]], [[4, 5]]]

// -----

// A stream axis has at least one chunk.
fusion.mesh @tp = [0, 1]
// expected-error @+1 {{a stream axis has at least one chunk, not 0}}
func.func private @f(tensor<2xf32, #fusion.dist<@tp, [stream<0>]>>)

// -----

// The chunk count is an integer.
fusion.mesh @tp = [0, 1]
// expected-error @+1 {{expected integer value}}
func.func private @f(tensor<2xf32, #fusion.dist<@tp, [stream<k>]>>)

// -----

// Only a stream axis has chunks: didx takes the mesh's split.
fusion.mesh @tp = [0, 1]
// expected-error @+1 {{expected ']'}}
func.func private @f(tensor<2xf32, #fusion.dist<@tp, [didx<2>]>>)
