// Attention with its 4 heads split over 4 ranks, one head each
// (test/Integration/attention.mlir, and its gradients in grad-ops.mlir): fewer queries than keys (Sq = 8,
// Sk = 24, causal top-left: query i sees keys 0..i), D = 16 and Dv = 4, in
// f32 with a mask and in bf16 causal with the default scale.
fusion.mesh @tp = [0, 1, 2, 3]
func.func @attention(
    %q: tensor<4x8x16xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
    %k: tensor<4x24x16xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
    %v: tensor<4x24x4xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
    %m: tensor<8x24xf32, #fusion.dist<@tp, [serial, serial]>>,
    %hq: tensor<4x8x16xbf16, #fusion.dist<@tp, [didx, serial, serial]>>,
    %hk: tensor<4x24x16xbf16, #fusion.dist<@tp, [didx, serial, serial]>>,
    %hv: tensor<4x24x4xbf16, #fusion.dist<@tp, [didx, serial, serial]>>)
    -> (tensor<4x8x4xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
        tensor<4x8x4xbf16, #fusion.dist<@tp, [didx, serial, serial]>>) {
  %o = fusion.attention %q, %k, %v, %m scale 0.5 causal
      : tensor<4x8x16xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
        tensor<4x24x16xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
        tensor<4x24x4xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
        tensor<8x24xf32, #fusion.dist<@tp, [serial, serial]>>
     -> tensor<4x8x4xf32, #fusion.dist<@tp, [didx, serial, serial]>>
  %h = fusion.attention %hq, %hk, %hv causal
      : tensor<4x8x16xbf16, #fusion.dist<@tp, [didx, serial, serial]>>,
        tensor<4x24x16xbf16, #fusion.dist<@tp, [didx, serial, serial]>>,
        tensor<4x24x4xbf16, #fusion.dist<@tp, [didx, serial, serial]>>
     -> tensor<4x8x4xbf16, #fusion.dist<@tp, [didx, serial, serial]>>
  return %o, %h : tensor<4x8x4xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
                  tensor<4x8x4xbf16, #fusion.dist<@tp, [didx, serial, serial]>>
}
