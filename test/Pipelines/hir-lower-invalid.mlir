// Programs hir-lower cannot turn into a correct host program end with a
// located error and a non-zero exit.
// RUN: hir-opt --hir-lower --split-input-file --verify-diagnostics %s
// RUN: not hir-opt --pass-pipeline='builtin.module(hir-lower{num-streams=-1})' %s 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: not hir-opt --pass-pipeline='builtin.module(hir-lower{p2p=cuda ring-chunks=9223372036854775808})' %s 2>&1 | FileCheck %s --check-prefix=WRAP

// OPTION: hir-lower: option 'num-streams' must be an integer from 0 to 9223372036854775807, not '-1'
// A count past what the IR holds (2^63) is an error, not a wrap.
// WRAP: hir-lower: option 'ring-chunks' must be an integer from 0 to 9223372036854775807, not '9223372036854775808'

// A matmul cannot be stream-parallel along its output columns.
fusion.mesh @dev = [0]
func.func @matmul_columns(%a: tensor<8x16xf32, #fusion.dist<@dev, [serial, serial]>>,
                          %b: tensor<16x32xf32, #fusion.dist<@dev, [serial, serial]>>)
    -> tensor<8x32xf32, #fusion.dist<@dev, [serial, stream]>> {
  // expected-error @+1 {{the stream axis 1 of the matmul's [..., M, N] output is N}}
  %c = fusion.matmul %a, %b : tensor<8x16xf32, #fusion.dist<@dev, [serial, serial]>>,
                              tensor<16x32xf32, #fusion.dist<@dev, [serial, serial]>>
                           -> tensor<8x32xf32, #fusion.dist<@dev, [serial, stream]>>
  return %c : tensor<8x32xf32, #fusion.dist<@dev, [serial, stream]>>
}

// -----

// Sharded data cannot move between meshes.
fusion.mesh @a = [0, 1]
fusion.mesh @b = [2, 3]
func.func @sharded_mesh_change(%x: tensor<2x8xf32, #fusion.dist<@a, [didx, serial]>>)
    -> tensor<2x8xf32, #fusion.dist<@b, [didx, serial]>> {
  // expected-error @+1 {{moves sharded data between meshes}}
  %y = fusion.set %x : tensor<2x8xf32, #fusion.dist<@a, [didx, serial]>> -> tensor<2x8xf32, #fusion.dist<@b, [didx, serial]>>
  return %y : tensor<2x8xf32, #fusion.dist<@b, [didx, serial]>>
}
