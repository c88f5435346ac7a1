// Pointwise chains around an allreduce on 2 ranks, fused with
// hir-lower{fuse=elementwise}: relu(x * w) on each device's slice, the sum
// over the devices, then tanh(s) - s cast to bf16 (test/Integration/fused.mlir).
fusion.mesh @tp = [0, 1]
func.func @fused(%x: tensor<2x4x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>, %w: tensor<2x4x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>) -> tensor<4x8xbf16, #fusion.dist<@tp, [serial, serial]>> {
  %0 = fusion.mul %x, %w : tensor<2x4x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>, tensor<2x4x8xf32, #fusion.dist<@tp, [didx, serial, serial]>> -> tensor<2x4x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>
  %1 = fusion.relu %0 : tensor<2x4x8xf32, #fusion.dist<@tp, [didx, serial, serial]>> -> tensor<2x4x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>
  %s = fusion.sum %1 [0] : tensor<2x4x8xf32, #fusion.dist<@tp, [didx, serial, serial]>> -> tensor<4x8xf32, #fusion.dist<@tp, [serial, serial]>>
  %2 = fusion.tanh %s : tensor<4x8xf32, #fusion.dist<@tp, [serial, serial]>> -> tensor<4x8xf32, #fusion.dist<@tp, [serial, serial]>>
  %3 = fusion.sub %2, %s : tensor<4x8xf32, #fusion.dist<@tp, [serial, serial]>>, tensor<4x8xf32, #fusion.dist<@tp, [serial, serial]>> -> tensor<4x8xf32, #fusion.dist<@tp, [serial, serial]>>
  %4 = fusion.cast %3 : tensor<4x8xf32, #fusion.dist<@tp, [serial, serial]>> -> tensor<4x8xbf16, #fusion.dist<@tp, [serial, serial]>>
  return %4 : tensor<4x8xbf16, #fusion.dist<@tp, [serial, serial]>>
}
