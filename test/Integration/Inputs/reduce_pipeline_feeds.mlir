// GEMM+RS (the pre-split form) whose output another op reads, with reduce-scatter=reduce: the output is allocated after the loop, where the reduces write it (test/Integration/stream-regressions.mlir).
fusion.mesh @tp = [0, 1]
func.func @rs_feed(%a: tensor<2x2x4x4xf32, #fusion.dist<@tp, [didx, serial, serial, serial]>>,
    %b: tensor<2x1x4x4xf32, #fusion.dist<@tp, [didx, serial, serial, serial]>>)
    -> tensor<2x4x4xf32, #fusion.dist<@tp, [didx, serial, serial]>> {
  %p = fusion.matmul %a, %b : tensor<2x2x4x4xf32, #fusion.dist<@tp, [didx, serial, serial, serial]>>,
      tensor<2x1x4x4xf32, #fusion.dist<@tp, [didx, serial, serial, serial]>>
      -> tensor<2x2x4x4xf32, #fusion.dist<@tp, [didx, stream, serial, serial]>>
  %c = fusion.sum %p [0] : tensor<2x2x4x4xf32, #fusion.dist<@tp, [didx, stream, serial, serial]>>
      -> tensor<2x4x4xf32, #fusion.dist<@tp, [didx, serial, serial]>>
  %d = fusion.neg %c : tensor<2x4x4xf32, #fusion.dist<@tp, [didx, serial, serial]>> -> tensor<2x4x4xf32, #fusion.dist<@tp, [didx, serial, serial]>>
  return %d : tensor<2x4x4xf32, #fusion.dist<@tp, [didx, serial, serial]>>
}
