// Natural-shape AG+linear with bias whose output streams its rows in two
// chunks (stream<2>), then gelu: host-presplit-chunks views the chunks in
// the pre-split layout, host-p2p-pipeline (p2p=nccl|cuda) makes the
// allgather a ring whose steps compute each chunk's offset, and
// host-fuse-epilogue makes the gelu the linear's epilogue in every form.
fusion.mesh @tp = [0, 1]
func.func @ag_linear_gelu(%x: tensor<32x16xf32, #fusion.dist<@tp, [didx, serial]>>,
                          %w: tensor<32x16xf32, #fusion.dist<@tp, [didx, serial]>>,
                          %b: tensor<32xf32, #fusion.dist<@tp, [didx]>>)
    -> tensor<32x32xf32, #fusion.dist<@tp, [stream<2>, didx]>> {
  %xg = fusion.set %x : tensor<32x16xf32, #fusion.dist<@tp, [didx, serial]>>
                     -> tensor<32x16xf32, #fusion.dist<@tp, [stream<2>, serial]>>
  %h = fusion.linear %xg, %w, %b : tensor<32x16xf32, #fusion.dist<@tp, [stream<2>, serial]>>,
                                   tensor<32x16xf32, #fusion.dist<@tp, [didx, serial]>>,
                                   tensor<32xf32, #fusion.dist<@tp, [didx]>>
                                -> tensor<32x32xf32, #fusion.dist<@tp, [stream<2>, didx]>>
  %a = fusion.gelu %h : tensor<32x32xf32, #fusion.dist<@tp, [stream<2>, didx]>>
                     -> tensor<32x32xf32, #fusion.dist<@tp, [stream<2>, didx]>>
  return %a : tensor<32x32xf32, #fusion.dist<@tp, [stream<2>, didx]>>
}
