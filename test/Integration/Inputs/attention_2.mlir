// Attention with its 4 heads split over 2 ranks (test/Integration/attention.mlir,
// and its gradients in grad-ops.mlir):
// causal with the default scale; an additive mask with an explicit scale;
// both; a batch axis streamed beside the split heads; and a mask that hides
// every key from query 0, which gets zeros.
fusion.mesh @tp = [0, 1]
func.func @attention(
    %q: tensor<4x16x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
    %k: tensor<4x16x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
    %v: tensor<4x16x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
    %m: tensor<16x16xf32, #fusion.dist<@tp, [serial, serial]>>,
    %bq: tensor<2x4x16x8xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
    %bk: tensor<2x4x16x8xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
    %bv: tensor<2x4x16x8xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>)
    -> (tensor<4x16x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
        tensor<4x16x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
        tensor<4x16x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
        tensor<2x4x16x8xf32, #fusion.dist<@tp, [stream, didx, serial, serial]>>,
        tensor<4x16x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>) {
  %causal = fusion.attention %q, %k, %v causal
      : tensor<4x16x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
        tensor<4x16x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
        tensor<4x16x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>
     -> tensor<4x16x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>
  %masked = fusion.attention %q, %k, %v, %m scale 0.3
      : tensor<4x16x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
        tensor<4x16x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
        tensor<4x16x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
        tensor<16x16xf32, #fusion.dist<@tp, [serial, serial]>>
     -> tensor<4x16x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>
  %both = fusion.attention %q, %k, %v, %m causal
      : tensor<4x16x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
        tensor<4x16x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
        tensor<4x16x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
        tensor<16x16xf32, #fusion.dist<@tp, [serial, serial]>>
     -> tensor<4x16x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>
  %streamed = fusion.attention %bq, %bk, %bv causal
      : tensor<2x4x16x8xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
        tensor<2x4x16x8xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
        tensor<2x4x16x8xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>
     -> tensor<2x4x16x8xf32, #fusion.dist<@tp, [stream, didx, serial, serial]>>
  // Row 0 of the mask is -inf, the others 0: where(row index, 0, -inf).
  %rows = fusion.iota 0 : tensor<16x16xf32, #fusion.dist<@tp, [serial, serial]>>
  %zero = fusion.fill 0.0 : tensor<16x16xf32, #fusion.dist<@tp, [serial, serial]>>
  %low = fusion.fill 0xFFF0000000000000 : tensor<16x16xf32, #fusion.dist<@tp, [serial, serial]>>
  %hide = fusion.where %rows, %zero, %low
      : tensor<16x16xf32, #fusion.dist<@tp, [serial, serial]>>,
        tensor<16x16xf32, #fusion.dist<@tp, [serial, serial]>>,
        tensor<16x16xf32, #fusion.dist<@tp, [serial, serial]>>
     -> tensor<16x16xf32, #fusion.dist<@tp, [serial, serial]>>
  %hidden = fusion.attention %q, %k, %v, %hide
      : tensor<4x16x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
        tensor<4x16x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
        tensor<4x16x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
        tensor<16x16xf32, #fusion.dist<@tp, [serial, serial]>>
     -> tensor<4x16x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>
  return %causal, %masked, %both, %streamed, %hidden
      : tensor<4x16x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
        tensor<4x16x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
        tensor<4x16x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
        tensor<2x4x16x8xf32, #fusion.dist<@tp, [stream, didx, serial, serial]>>,
        tensor<4x16x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>
}
