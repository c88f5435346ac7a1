// Megatron's attention with a fused QKV projection on 2 devices: the
// allgathered tokens times one column-parallel weight [3H, H] (H = 16, 4
// heads of dh = 4, its rows ordered head by head, q, k then v within each),
// the result [S, 3H] as [S, heads, 3 dh] with the heads split (an outer
// split), q, k and v sliced off its serial last axis, causal attention on
// the local heads, the heads merged back and the row-parallel out-projection
// reduce-scattered to the token shards.
fusion.mesh @tp = [0, 1]
func.func @qkv(%x: tensor<8x16xf32, #fusion.dist<@tp, [didx, serial]>>,
    %wqkv: tensor<48x16xf32, #fusion.dist<@tp, [didx, serial]>>,
    %wo: tensor<16x16xf32, #fusion.dist<@tp, [serial, didx]>>)
    -> tensor<8x16xf32, #fusion.dist<@tp, [didx, serial]>> {
  %xg = fusion.set %x : tensor<8x16xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<8x16xf32, #fusion.dist<@tp, [serial, serial]>>
  %y = fusion.linear %xg, %wqkv : tensor<8x16xf32, #fusion.dist<@tp, [serial, serial]>>, tensor<48x16xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<8x48xf32, #fusion.dist<@tp, [serial, didx]>>
  %heads = fusion.reshape %y : tensor<8x48xf32, #fusion.dist<@tp, [serial, didx]>> -> tensor<8x4x12xf32>
  %q = fusion.slice %heads offsets [0, 0, 0] strides [1, 1, 1] : tensor<8x4x12xf32> -> tensor<8x4x4xf32>
  %k = fusion.slice %heads offsets [0, 0, 4] strides [1, 1, 1] : tensor<8x4x12xf32> -> tensor<8x4x4xf32>
  %v = fusion.slice %heads offsets [0, 0, 8] strides [1, 1, 1] : tensor<8x4x12xf32> -> tensor<8x4x4xf32>
  %qt = fusion.transpose %q [1, 0, 2] : tensor<8x4x4xf32> -> tensor<4x8x4xf32>
  %kt = fusion.transpose %k [1, 0, 2] : tensor<8x4x4xf32> -> tensor<4x8x4xf32>
  %vt = fusion.transpose %v [1, 0, 2] : tensor<8x4x4xf32> -> tensor<4x8x4xf32>
  %o = fusion.attention %qt, %kt, %vt causal : tensor<4x8x4xf32>, tensor<4x8x4xf32>, tensor<4x8x4xf32> -> tensor<4x8x4xf32>
  %ot = fusion.transpose %o [1, 0, 2] : tensor<4x8x4xf32> -> tensor<8x4x4xf32>
  %om = fusion.reshape %ot : tensor<8x4x4xf32> -> tensor<8x16xf32, #fusion.dist<@tp, [serial, didx]>>
  %r = fusion.linear %om, %wo : tensor<8x16xf32, #fusion.dist<@tp, [serial, didx]>>, tensor<16x16xf32, #fusion.dist<@tp, [serial, didx]>> -> tensor<8x16xf32, #fusion.dist<@tp, [didx, serial]>>
  return %r : tensor<8x16xf32, #fusion.dist<@tp, [didx, serial]>>
}
