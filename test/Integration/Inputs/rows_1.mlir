// LayerNorm (f32 between a cast in and a cast out, as torch computes it)
// and a softmax of the same rows, on D = 1: each one host.fused row
// kernel. Run by test/Integration/fused-rows.mlir.
fusion.mesh @tp = [0]
func.func @rows(%x: tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>, %g: tensor<48xbf16, #fusion.dist<@tp, [serial]>>, %b: tensor<48xbf16, #fusion.dist<@tp, [serial]>>) -> (tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>, tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>>) {
  %inv = fusion.fill 2.083333333e-02 : tensor<16xf32, #fusion.dist<@tp, [didx]>>
  %eps = fusion.fill 1.0e-5 : tensor<16xf32, #fusion.dist<@tp, [didx]>>
  %x32 = fusion.cast %x : tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>> -> tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>>
  %s = fusion.sum %x32 [1] : tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<16xf32, #fusion.dist<@tp, [didx]>>
  %m = fusion.mul %s, %inv : tensor<16xf32, #fusion.dist<@tp, [didx]>>, tensor<16xf32, #fusion.dist<@tp, [didx]>> -> tensor<16xf32, #fusion.dist<@tp, [didx]>>
  %mb = fusion.broadcast %m [1] : tensor<16xf32, #fusion.dist<@tp, [didx]>> -> tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>>
  %c = fusion.sub %x32, %mb : tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>>, tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>>
  %q = fusion.mul %c, %c : tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>>, tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>>
  %v = fusion.sum %q [1] : tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<16xf32, #fusion.dist<@tp, [didx]>>
  %v2 = fusion.mul %v, %inv : tensor<16xf32, #fusion.dist<@tp, [didx]>>, tensor<16xf32, #fusion.dist<@tp, [didx]>> -> tensor<16xf32, #fusion.dist<@tp, [didx]>>
  %v3 = fusion.add %v2, %eps : tensor<16xf32, #fusion.dist<@tp, [didx]>>, tensor<16xf32, #fusion.dist<@tp, [didx]>> -> tensor<16xf32, #fusion.dist<@tp, [didx]>>
  %r = fusion.rsqrt %v3 : tensor<16xf32, #fusion.dist<@tp, [didx]>> -> tensor<16xf32, #fusion.dist<@tp, [didx]>>
  %rb = fusion.broadcast %r [1] : tensor<16xf32, #fusion.dist<@tp, [didx]>> -> tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>>
  %n = fusion.mul %c, %rb : tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>>, tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>>
  %gb = fusion.broadcast %g [0] : tensor<48xbf16, #fusion.dist<@tp, [serial]>> -> tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>
  %g32 = fusion.cast %gb : tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>> -> tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>>
  %bb = fusion.broadcast %b [0] : tensor<48xbf16, #fusion.dist<@tp, [serial]>> -> tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>
  %b32 = fusion.cast %bb : tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>> -> tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>>
  %gn = fusion.mul %n, %g32 : tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>>, tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>>
  %y32 = fusion.add %gn, %b32 : tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>>, tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>>
  %y = fusion.cast %y32 : tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>
  %mx = fusion.amax %x32 [1] : tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<16xf32, #fusion.dist<@tp, [didx]>>
  %mxb = fusion.broadcast %mx [1] : tensor<16xf32, #fusion.dist<@tp, [didx]>> -> tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>>
  %d = fusion.sub %x32, %mxb : tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>>, tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>>
  %e = fusion.exp %d : tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>>
  %z = fusion.sum %e [1] : tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<16xf32, #fusion.dist<@tp, [didx]>>
  %zb = fusion.broadcast %z [1] : tensor<16xf32, #fusion.dist<@tp, [didx]>> -> tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>>
  %p = fusion.div %e, %zb : tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>>, tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>>
  return %y, %p : tensor<16x48xbf16, #fusion.dist<@tp, [didx, serial]>>, tensor<16x48xf32, #fusion.dist<@tp, [didx, serial]>>
}
