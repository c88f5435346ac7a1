// One chunk per error of fusion-propagate-sharding.
// RUN: hir-opt %s -split-input-file -verify-diagnostics --fusion-propagate-sharding

// A value that its producer and a consumer distribute differently.
fusion.mesh @tp = [0, 1, 2, 3]
func.func @f(%x: tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>, %w: tensor<4x8xf32, #fusion.dist<@tp, [serial, serial]>>)
    -> tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>> {
  %y = fusion.neg %w : tensor<4x8xf32, #fusion.dist<@tp, [serial, serial]>> -> tensor<4x8xf32>
  // expected-error @+1 {{conflicting distributions inferred for operand #1 of 'fusion.add': #fusion.dist<@tp, [serial, serial]> vs #fusion.dist<@tp, [didx, serial]>; annotate it}}
  %z = fusion.add %x, %y : tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>, tensor<4x8xf32> -> tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>
  return %z : tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>
}

// -----

// A result whose operands disagree.
fusion.mesh @tp = [0, 1, 2, 3]
func.func @f(%x: tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>, %w: tensor<4x8xf32, #fusion.dist<@tp, [serial, serial]>>) -> tensor<4x8xf32> {
  // expected-error @+1 {{conflicting distributions inferred for result #0 of 'fusion.sub': #fusion.dist<@tp, [didx, serial]> vs #fusion.dist<@tp, [serial, serial]>; annotate it}}
  %z = fusion.sub %x, %w : tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>, tensor<4x8xf32, #fusion.dist<@tp, [serial, serial]>> -> tensor<4x8xf32>
  return %z : tensor<4x8xf32>
}

// -----

// Or their meshes do.
fusion.mesh @a = [0, 1]
fusion.mesh @b = [2, 3]
func.func @f(%x: tensor<8xf32, #fusion.dist<@a, [serial]>>, %y: tensor<8xf32, #fusion.dist<@b, [serial]>>) -> tensor<8xf32> {
  // expected-error @+1 {{conflicting distributions inferred for result #0 of 'fusion.max': #fusion.dist<@a, [serial]> vs #fusion.dist<@b, [serial]>; annotate it}}
  %z = fusion.max %x, %y : tensor<8xf32, #fusion.dist<@a, [serial]>>, tensor<8xf32, #fusion.dist<@b, [serial]>> -> tensor<8xf32>
  return %z : tensor<8xf32>
}

// -----

// Nothing annotated, and no single mesh to default to.
fusion.mesh @a = [0, 1]
fusion.mesh @b = [2, 3]
// expected-error @+1 {{cannot infer a distribution for the tensors of @f: none is annotated and the module has 2 fusion.mesh ops; annotate at least one tensor}}
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  %y = fusion.neg %x : tensor<8xf32> -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

// Nor when the module declares no mesh.
// expected-error @+1 {{cannot infer a distribution for the tensors of @f: none is annotated and the module has 0 fusion.mesh ops; annotate at least one tensor}}
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  %y = fusion.neg %x : tensor<8xf32> -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

// A value that no annotated tensor reaches.
fusion.mesh @a = [0, 1]
fusion.mesh @b = [2, 3]
// expected-error @+1 {{cannot infer a distribution for argument #1 of @f: no annotated tensor is connected to it and the module has 2 fusion.mesh ops; annotate it}}
func.func @f(%x: tensor<8xf32, #fusion.dist<@a, [serial]>>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %n = fusion.neg %x : tensor<8xf32, #fusion.dist<@a, [serial]>> -> tensor<8xf32>
  return %n : tensor<8xf32>
}

// -----

// A value that would get two didx axes.
fusion.mesh @tp = [0, 1, 2, 3]
func.func @f(%a: tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>, %b: tensor<8x4xf32, #fusion.dist<@tp, [serial, didx]>>) -> tensor<4x4xf32> {
  // expected-error @+1 {{cannot infer a distribution for result #0 of 'fusion.matmul': axes 0 and 1 would both be didx; annotate it}}
  %c = fusion.matmul %a, %b : tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>, tensor<8x4xf32, #fusion.dist<@tp, [serial, didx]>> -> tensor<4x4xf32>
  return %c : tensor<4x4xf32>
}

// -----

// A didx axis that the matmul broadcasts (the rhs's unit batch axis against
// the result's 4), here on a mesh of one device where extent 1 fits.
fusion.mesh @one = [0]
func.func @f(%a: tensor<4x8x16xf32, #fusion.dist<@one, [serial, serial, serial]>>,
             %w: tensor<1x16x4xf32, #fusion.dist<@one, [didx, serial, serial]>>) -> tensor<4x8x4xf32> {
  // expected-error @+1 {{operand #1 of 'fusion.matmul' is didx on axis 0, which the op broadcasts (extent 1 read for every index of the result's axis): a broadcast axis is whole on every device; make it serial}}
  %y = fusion.matmul %a, %w : tensor<4x8x16xf32, #fusion.dist<@one, [serial, serial, serial]>>, tensor<1x16x4xf32, #fusion.dist<@one, [didx, serial, serial]>> -> tensor<4x8x4xf32>
  return %y : tensor<4x8x4xf32>
}

// -----

// Or didy, on a mesh of one row of one device.
fusion.mesh @one = [[0]]
func.func @f(%a: tensor<4x8x16xf32, #fusion.dist<@one, [serial, serial, serial]>>,
             %w: tensor<1x16x4xf32, #fusion.dist<@one, [didy, serial, serial]>>) -> tensor<4x8x4xf32> {
  // expected-error @+1 {{operand #1 of 'fusion.matmul' is didy on axis 0, which the op broadcasts}}
  %y = fusion.matmul %a, %w : tensor<4x8x16xf32, #fusion.dist<@one, [serial, serial, serial]>>, tensor<1x16x4xf32, #fusion.dist<@one, [didy, serial, serial]>> -> tensor<4x8x4xf32>
  return %y : tensor<4x8x4xf32>
}

// -----

// A reshape's outer split needs the devices to divide the other side's outer
// extent: 6 columns over 2 devices split into 3 heads cannot stay split.
fusion.mesh @tp = [0, 1]
func.func @f(%x: tensor<8x6xf32, #fusion.dist<@tp, [serial, didx]>>) -> tensor<8x3x2xf32> {
  // expected-error @+1 {{cannot carry didx from input axis 1 of 'fusion.reshape' to result axis 1 of extent 3, not a multiple of the 2 devices of mesh '@tp' (an outer split needs the devices to divide the outermost extents of the merged or split group on both sides)}}
  %s = fusion.reshape %x : tensor<8x6xf32, #fusion.dist<@tp, [serial, didx]>> -> tensor<8x3x2xf32>
  return %s : tensor<8x3x2xf32>
}

// -----

// Likewise backward, from a merge's annotated result.
fusion.mesh @tp = [0, 1]
func.func @f(%x: tensor<8x3x2xf32>) -> tensor<8x6xf32, #fusion.dist<@tp, [serial, didx]>> {
  // expected-error @+1 {{cannot carry didx from result axis 1 of 'fusion.reshape' to input axis 1 of extent 3}}
  %m = fusion.reshape %x : tensor<8x3x2xf32> -> tensor<8x6xf32, #fusion.dist<@tp, [serial, didx]>>
  return %m : tensor<8x6xf32, #fusion.dist<@tp, [serial, didx]>>
}
