// C = A @ B with A row-sharded (DIDx on its outer axis) and C stream-parallel
// along that axis: step i multiplies the rows of rank (r + i) mod D while the
// next rows travel. Seeds: AG_matmul_P2p (001) and the CUDA-IPC ring (000).
// Lower with hir-lower{p2p=nccl} or hir-lower{p2p=cuda}.
fusion.mesh @tp = [0, 1, 2, 3]
func.func @ag_matmul_p2p(%a: tensor<4x256x1024xbf16, #fusion.dist<@tp, [didx, serial, serial]>>,
                         %b: tensor<1024x2048xbf16, #fusion.dist<@tp, [serial, serial]>>)
    -> tensor<4x256x2048xbf16, #fusion.dist<@tp, [stream, serial, serial]>> {
  %c = fusion.matmul %a, %b : tensor<4x256x1024xbf16, #fusion.dist<@tp, [didx, serial, serial]>>,
                              tensor<1024x2048xbf16, #fusion.dist<@tp, [serial, serial]>>
                           -> tensor<4x256x2048xbf16, #fusion.dist<@tp, [stream, serial, serial]>>
  return %c : tensor<4x256x2048xbf16, #fusion.dist<@tp, [stream, serial, serial]>>
}
