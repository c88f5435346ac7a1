// RUN: hir-opt --convert-fusion-to-host --split-input-file --verify-diagnostics %s

// A tensor without a distribution: propagation has not run.
fusion.mesh @dev = [0]
// expected-error @+1 {{tensor tensor<8xf32> has no #fusion.dist: run fusion-propagate-sharding first}}
func.func @no_dist(%a: tensor<8xf32>) -> tensor<8xf32> {
  return %a : tensor<8xf32>
}

// -----

// Sharded data cannot move between meshes (only unsharded data is broadcast).
fusion.mesh @a = [0, 1]
fusion.mesh @b = [2, 3]
func.func @sharded_mesh_change(%x: tensor<2x8xf32, #fusion.dist<@a, [didx, serial]>>)
    -> tensor<2x8xf32, #fusion.dist<@b, [didx, serial]>> {
  // expected-error @+1 {{resharding from @a to @b moves sharded data between meshes, which is not supported}}
  %y = fusion.set %x : tensor<2x8xf32, #fusion.dist<@a, [didx, serial]>> -> tensor<2x8xf32, #fusion.dist<@b, [didx, serial]>>
  return %y : tensor<2x8xf32, #fusion.dist<@b, [didx, serial]>>
}

// -----

// A cross-device sum that also reduces a local axis: insert-resharding splits it.
fusion.mesh @tp = [0, 1]
func.func @unsplit(%x: tensor<2x4x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>)
    -> tensor<4xf32, #fusion.dist<@tp, [serial]>> {
  // expected-error @+1 {{'fusion.sum' reduces didx axis 0 with other axes: run fusion-insert-resharding first}}
  %y = fusion.sum %x [0, 2] : tensor<2x4x8xf32, #fusion.dist<@tp, [didx, serial, serial]>> -> tensor<4xf32, #fusion.dist<@tp, [serial]>>
  return %y : tensor<4xf32, #fusion.dist<@tp, [serial]>>
}

// -----

// Only fusion ops are bufferized.
fusion.mesh @dev = [0]
func.func private @external(tensor<8xf32, #fusion.dist<@dev, [serial]>>) -> tensor<8xf32, #fusion.dist<@dev, [serial]>>
func.func @call(%x: tensor<8xf32, #fusion.dist<@dev, [serial]>>) -> tensor<8xf32, #fusion.dist<@dev, [serial]>> {
  // expected-error @+1 {{'func.call' on tensors cannot be bufferized: only fusion ops can}}
  %y = func.call @external(%x) : (tensor<8xf32, #fusion.dist<@dev, [serial]>>) -> tensor<8xf32, #fusion.dist<@dev, [serial]>>
  return %y : tensor<8xf32, #fusion.dist<@dev, [serial]>>
}

// -----

// A mesh the module does not define (fusion-verify-sharding also says so).
// expected-error @+1 {{mesh '@nowhere' is not defined}}
func.func @undefined_mesh(%x: tensor<2x8xf32, #fusion.dist<@nowhere, [didx, serial]>>)
    -> tensor<2x8xf32, #fusion.dist<@nowhere, [serial, serial]>> {
  %y = fusion.set %x : tensor<2x8xf32, #fusion.dist<@nowhere, [didx, serial]>> -> tensor<2x8xf32, #fusion.dist<@nowhere, [serial, serial]>>
  return %y : tensor<2x8xf32, #fusion.dist<@nowhere, [serial, serial]>>
}

// -----

// Several blocks are not bufferized.
fusion.mesh @dev = [0]
// expected-error @+1 {{functions with several blocks are not supported}}
func.func @blocks(%x: tensor<8xf32, #fusion.dist<@dev, [serial]>>) -> tensor<8xf32, #fusion.dist<@dev, [serial]>> {
  cf.br ^next
^next:
  return %x : tensor<8xf32, #fusion.dist<@dev, [serial]>>
}

// -----

// A matmul cannot be stream-parallel along its output columns: N is the
// weight's.
fusion.mesh @dev = [0]
func.func @matmul_columns(%a: tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>,
                          %b: tensor<8x16xf32, #fusion.dist<@dev, [serial, serial]>>)
    -> tensor<4x16xf32, #fusion.dist<@dev, [serial, stream]>> {
  // expected-error @+1 {{the stream axis 1 of the matmul's [..., M, N] output is N; only batch axes, and M with a [K, N] rhs, can be stream-parallel one index per iteration (stream<k> streams any output axis in k chunks)}}
  %c = fusion.matmul %a, %b : tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>, tensor<8x16xf32, #fusion.dist<@dev, [serial, serial]>> -> tensor<4x16xf32, #fusion.dist<@dev, [serial, stream]>>
  return %c : tensor<4x16xf32, #fusion.dist<@dev, [serial, stream]>>
}

// -----

// Along M, each iteration's lhs rows meet a different rhs: not a matmul.
fusion.mesh @dev = [0]
func.func @matmul_rows_batched_rhs(%a: tensor<2x4x8xf32, #fusion.dist<@dev, [serial, serial, serial]>>,
                                   %b: tensor<2x8x16xf32, #fusion.dist<@dev, [serial, serial, serial]>>)
    -> tensor<2x4x16xf32, #fusion.dist<@dev, [serial, stream, serial]>> {
  // expected-error @+1 {{the stream axis 1 of the matmul's [..., M, N] output is M, with a batched rhs}}
  %c = fusion.matmul %a, %b : tensor<2x4x8xf32, #fusion.dist<@dev, [serial, serial, serial]>>, tensor<2x8x16xf32, #fusion.dist<@dev, [serial, serial, serial]>> -> tensor<2x4x16xf32, #fusion.dist<@dev, [serial, stream, serial]>>
  return %c : tensor<2x4x16xf32, #fusion.dist<@dev, [serial, stream, serial]>>
}

// -----

fusion.mesh @dev = [0]
func.func @linear_features(%x: tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>,
                           %w: tensor<16x8xf32, #fusion.dist<@dev, [serial, serial]>>)
    -> tensor<4x16xf32, #fusion.dist<@dev, [serial, stream]>> {
  // expected-error @+1 {{the stream axis 1 is the output-feature axis of the linear; only batch axes can be stream-parallel one index per iteration (stream<k> streams it in k chunks)}}
  %y = fusion.linear %x, %w : tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>, tensor<16x8xf32, #fusion.dist<@dev, [serial, serial]>> -> tensor<4x16xf32, #fusion.dist<@dev, [serial, stream]>>
  return %y : tensor<4x16xf32, #fusion.dist<@dev, [serial, stream]>>
}

// -----

// A contraction over a stream axis whose other operand splits K over the
// devices has no loop form (fusion-verify-sharding refuses it first).
fusion.mesh @tp = [0, 1]
func.func @streamed_and_split(%a: tensor<8x4xf32, #fusion.dist<@tp, [serial, serial]>>, %b: tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>)
    -> tensor<8x8xf32, #fusion.dist<@tp, [serial, serial]>> {
  %s = fusion.neg %a : tensor<8x4xf32, #fusion.dist<@tp, [serial, serial]>> -> tensor<8x4xf32, #fusion.dist<@tp, [serial, stream<2>]>>
  // expected-error @+1 {{'fusion.matmul' contracts axis 1 of operand #0, a stream axis, with axis 0 of operand #1, which is didx}}
  %c = fusion.matmul %s, %b : tensor<8x4xf32, #fusion.dist<@tp, [serial, stream<2>]>>, tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<8x8xf32, #fusion.dist<@tp, [serial, serial]>>
  return %c : tensor<8x8xf32, #fusion.dist<@tp, [serial, serial]>>
}
