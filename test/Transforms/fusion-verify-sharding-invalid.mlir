// One chunk per rule of fusion-verify-sharding.
// RUN: hir-opt %s -split-input-file -verify-diagnostics --fusion-verify-sharding

// The mesh must exist.
fusion.mesh @tp = [0, 1]
// expected-error @+1 {{function argument #0 is distributed over '@nope', which is not a fusion.mesh of the module}}
func.func @f(%a: tensor<8xf32, #fusion.dist<@nope, [serial]>>) {
  return
}

// -----

// A symbol that is not a mesh does not count.
func.func private @tp()
func.func @f(%a: tensor<8xf32>) {
  // expected-error @+1 {{result #0 is distributed over '@tp', which is not a fusion.mesh of the module}}
  %b = fusion.neg %a : tensor<8xf32> -> tensor<8xf32, #fusion.dist<@tp, [serial]>>
  return
}

// -----

// A didx axis splits into one equal slice per device.
fusion.mesh @tp = [0, 1, 2, 3]
// expected-error @+1 {{function argument #0: didx axis 1 has extent 2, not a multiple of the 4 devices of mesh '@tp'}}
func.func @f(%a: tensor<8x2xf32, #fusion.dist<@tp, [serial, didx]>>) {
  return
}

// -----

// Also on results.
fusion.mesh @tp = [0, 1]
func.func @f(%a: tensor<3x8xf32, #fusion.dist<@tp, [serial, serial]>>) {
  // expected-error @+1 {{result #0: didx axis 0 has extent 3, not a multiple of the 2 devices of mesh '@tp'}}
  %b = fusion.set %a : tensor<3x8xf32, #fusion.dist<@tp, [serial, serial]>> -> tensor<3x8xf32, #fusion.dist<@tp, [didx, serial]>>
  return
}

// -----

// Only fusion.set moves a tensor between meshes.
fusion.mesh @a = [0, 1]
fusion.mesh @b = [2, 3]
func.func @f(%x: tensor<8xf32, #fusion.dist<@a, [serial]>>, %y: tensor<8xf32, #fusion.dist<@b, [serial]>>) {
  // expected-error @+1 {{'fusion.add' mixes meshes '@a' and '@b'; only fusion.set moves a tensor between meshes}}
  %z = fusion.add %x, %y : tensor<8xf32, #fusion.dist<@a, [serial]>>, tensor<8xf32, #fusion.dist<@b, [serial]>> -> tensor<8xf32, #fusion.dist<@a, [serial]>>
  return
}

// -----

// A reduced axis is not a stream axis: only a contraction sums over one.
fusion.mesh @tp = [0]
func.func @f(%in: tensor<4x8xf32, #fusion.dist<@tp, [serial, serial]>>) {
  %x = fusion.set %in : tensor<4x8xf32, #fusion.dist<@tp, [serial, serial]>> -> tensor<4x8xf32, #fusion.dist<@tp, [stream, serial]>>
  // expected-error @+1 {{'fusion.sum' reduces axis 0 of operand #0, which is a stream axis; a stream axis must index independent slices (only a matmul or linear sums a loop's iterations, over its contracted axis)}}
  %s = fusion.sum %x [0] : tensor<4x8xf32, #fusion.dist<@tp, [stream, serial]>> -> tensor<8xf32>
  return
}

// -----

// A matmul may contract a stream axis (its iterations' products summed),
// but not with the other operand's K split over devices: that sum is a
// collective, not a loop.
fusion.mesh @tp = [0, 1]
func.func @f(%in: tensor<8x4xf32>, %b: tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>) {
  %a = fusion.neg %in : tensor<8x4xf32> -> tensor<8x4xf32, #fusion.dist<@tp, [serial, stream<2>]>>
  // expected-error @+1 {{'fusion.matmul' contracts axis 1 of operand #0, a stream axis, with axis 0 of operand #1, which is didx; a contraction streamed over its contracted axis sums its iterations on each device, so every operand's contracted axis must be the stream axis or serial}}
  %c = fusion.matmul %a, %b : tensor<8x4xf32, #fusion.dist<@tp, [serial, stream<2>]>>, tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<8x8xf32, #fusion.dist<@tp, [serial, serial]>>
  return
}

// -----

// Operands that both stream K stream it in as many iterations.
fusion.mesh @tp = [0]
func.func @f(%in: tensor<8x4xf32>, %win: tensor<2x4xf32>) {
  %x = fusion.neg %in : tensor<8x4xf32> -> tensor<8x4xf32, #fusion.dist<@tp, [serial, stream<2>]>>
  %w = fusion.neg %win : tensor<2x4xf32> -> tensor<2x4xf32, #fusion.dist<@tp, [serial, stream<4>]>>
  // expected-error @+1 {{'fusion.linear' contracts axis 1 of operand #0, streamed in 2 iterations, with axis 1 of operand #1, streamed in 4; the operands of a contraction streamed over its contracted axis stream it alike}}
  %y = fusion.linear %x, %w : tensor<8x4xf32, #fusion.dist<@tp, [serial, stream<2>]>>, tensor<2x4xf32, #fusion.dist<@tp, [serial, stream<4>]>> -> tensor<8x2xf32, #fusion.dist<@tp, [serial, serial]>>
  return
}

// -----

// One loop per op: a contraction over a stream axis streams no result axis.
fusion.mesh @tp = [0]
func.func @f(%in: tensor<8x4xf32>, %b: tensor<4x8xf32>) {
  %a = fusion.neg %in : tensor<8x4xf32> -> tensor<8x4xf32, #fusion.dist<@tp, [serial, stream]>>
  // expected-error @+1 {{'fusion.matmul' contracts axis 1 of operand #0, a stream axis, and streams result axis 0; a contraction streams its contracted axis (its result summed over the loop) or an output axis, not both}}
  %c = fusion.matmul %a, %b : tensor<8x4xf32, #fusion.dist<@tp, [serial, stream]>>, tensor<4x8xf32> -> tensor<8x8xf32, #fusion.dist<@tp, [stream<2>, serial]>>
  return
}

// -----

// An empty stream axis has no iteration to write the sum (of no products).
fusion.mesh @tp = [0]
func.func @f(%in: tensor<8x0xf32>, %b: tensor<0x8xf32>) {
  %a = fusion.neg %in : tensor<8x0xf32> -> tensor<8x0xf32, #fusion.dist<@tp, [serial, stream]>>
  // expected-error @+1 {{'fusion.matmul' contracts axis 1 of operand #0, a stream axis of extent 0; a contraction streamed over its contracted axis needs an iteration}}
  %c = fusion.matmul %a, %b : tensor<8x0xf32, #fusion.dist<@tp, [serial, stream]>>, tensor<0x8xf32> -> tensor<8x8xf32, #fusion.dist<@tp, [serial, serial]>>
  return
}

// -----

// Inputs are computed already: no stream axis on a function argument.
fusion.mesh @tp = [0]
// expected-error @+1 {{function argument #0 has stream axis 0; stream schedules how an op computes its result}}
func.func @f(%x: tensor<4x8xf32, #fusion.dist<@tp, [stream, serial]>>) {
  return
}

// -----

// A stream axis slices one index per iteration: it cannot run over a didx
// axis split into several indices per device.
fusion.mesh @tp = [0, 1]
func.func @f(%a: tensor<8x4xf32, #fusion.dist<@tp, [didx, serial]>>) -> tensor<8x4xf32, #fusion.dist<@tp, [stream, serial]>> {
  // expected-error @+1 {{'fusion.set' streams result axis 0 over operand #0's didx axis 0, which is split (8 over 2 devices); a stream axis slices one index per iteration, so a didx axis it maps to must have the mesh's extent}}
  %b = fusion.set %a : tensor<8x4xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<8x4xf32, #fusion.dist<@tp, [stream, serial]>>
  return %b : tensor<8x4xf32, #fusion.dist<@tp, [stream, serial]>>
}

// -----

// didy splits over the rows of a 2-D mesh; a 1-D mesh has none.
fusion.mesh @tp = [0, 1]
// expected-error @+1 {{function argument #0: didy axis 0 needs a 2-D mesh, and mesh '@tp' has 1 axis}}
func.func @f(%a: tensor<2x8xf32, #fusion.dist<@tp, [didy, serial]>>) {
  return
}

// -----

// didz splits over the planes of a 3-D mesh; a 2-D mesh has none.
fusion.mesh @tp_dp = [[0, 1], [2, 3]]
// expected-error @+1 {{function argument #0: didz axis 0 needs a 3-D mesh, and mesh '@tp_dp' has 2 axes}}
func.func @f(%a: tensor<2x8xf32, #fusion.dist<@tp_dp, [didz, serial]>>) {
  return
}

// -----

// On a 2-D mesh, didx splits by the number of columns, didy by the rows.
fusion.mesh @m = [[0, 1, 2], [3, 4, 5]]
// expected-error @+1 {{function argument #0: didx axis 1 has extent 4, not a multiple of the 3 devices of mesh '@m' along its didx axis}}
func.func @f(%a: tensor<2x4xf32, #fusion.dist<@m, [didy, didx]>>) {
  return
}
