// The backward of a tanh gelu written with fills, as fusion-differentiate
// writes it, and a row mean scaled by a fill, on D = 2 (rows split): the
// fills of the chains are constants of their fused kernels. One fill is
// also returned, so it stays a kernel. Run by
// test/Integration/fused-constants.mlir.
fusion.mesh @tp = [0, 1]
func.func @constants(%x: tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>, %dy: tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>, %z: tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>>) -> (tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>, tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>, tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>>) {
  %half = fusion.fill 0.5 : tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>
  %one = fusion.fill 1.0 : tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>
  %k = fusion.fill 0.7978845608028654 : tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>
  %a = fusion.fill 0.044715 : tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>
  %b = fusion.fill 0.134145 : tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>
  %x2 = fusion.mul %x, %x : tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>, tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>> -> tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>
  %x3 = fusion.mul %x2, %x : tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>, tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>> -> tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>
  %ax3 = fusion.mul %a, %x3 : tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>, tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>> -> tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>
  %in = fusion.add %ax3, %x : tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>, tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>> -> tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>
  %u = fusion.mul %k, %in : tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>, tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>> -> tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>
  %t = fusion.tanh %u : tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>> -> tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>
  %onet = fusion.add %one, %t : tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>, tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>> -> tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>
  %left = fusion.mul %half, %onet : tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>, tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>> -> tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>
  %t2 = fusion.mul %t, %t : tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>, tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>> -> tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>
  %sech = fusion.sub %one, %t2 : tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>, tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>> -> tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>
  %bx2 = fusion.mul %b, %x2 : tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>, tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>> -> tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>
  %dp = fusion.add %one, %bx2 : tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>, tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>> -> tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>
  %du = fusion.mul %k, %dp : tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>, tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>> -> tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>
  %hx = fusion.mul %half, %x : tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>, tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>> -> tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>
  %r1 = fusion.mul %hx, %sech : tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>, tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>> -> tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>
  %r2 = fusion.mul %r1, %du : tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>, tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>> -> tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>
  %g = fusion.add %left, %r2 : tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>, tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>> -> tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>
  %dx = fusion.mul %dy, %g : tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>, tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>> -> tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>
  %inv = fusion.fill 2.083333333e-02 : tensor<16xf32, #fusion.dist<@tp, [didx]>>
  %s = fusion.sum %z [1] : tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<16xf32, #fusion.dist<@tp, [didx]>>
  %m = fusion.mul %s, %inv : tensor<16xf32, #fusion.dist<@tp, [didx]>>, tensor<16xf32, #fusion.dist<@tp, [didx]>> -> tensor<16xf32, #fusion.dist<@tp, [didx]>>
  %mb = fusion.broadcast %m [1] : tensor<16xf32, #fusion.dist<@tp, [didx]>> -> tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>>
  %c = fusion.sub %z, %mb : tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>>, tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>>
  return %dx, %one, %c : tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>, tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>, tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>>
}
