// Casts between integer and float tensors (torch's `tensor.to(dtype)`), on
// a split axis: the 16 rows of ids (i32 token ids) and w (f32 weights) are
// split over 4 devices (4 rows each):
//   scaled = f32(ids) * w               i32 -> f32, then bf16 (result0)
//   t      = i32(scaled)                truncated toward zero
//   counts = sum of t over the rows     a partial sum per device, then an
//                                       allreduce (sum; result1)
//   diff   = i32(i64(t) - i64(bf16(scaled)))
//                                       where bf16's rounding crossed an
//                                       integer, nonzero (result2)
//   half   = f16(ids) * f16(w)          i32 -> f16 (result3)
// Integer results are checked exactly, float ones within their type's
// rounding.
fusion.mesh @tp = [0, 1, 2, 3]
func.func @int_casts(%ids: tensor<16x8xi32, #fusion.dist<@tp, [didx, serial]>>,
                     %w: tensor<16x8xf32, #fusion.dist<@tp, [didx, serial]>>)
    -> (tensor<16x8xbf16, #fusion.dist<@tp, [didx, serial]>>,
        tensor<8xi32, #fusion.dist<@tp, [serial]>>,
        tensor<16x8xi32, #fusion.dist<@tp, [didx, serial]>>,
        tensor<16x8xf16, #fusion.dist<@tp, [didx, serial]>>) {
  %f = fusion.cast %ids : tensor<16x8xi32, #fusion.dist<@tp, [didx, serial]>>
                       -> tensor<16x8xf32, #fusion.dist<@tp, [didx, serial]>>
  %s = fusion.mul %f, %w : tensor<16x8xf32, #fusion.dist<@tp, [didx, serial]>>,
                           tensor<16x8xf32, #fusion.dist<@tp, [didx, serial]>>
                        -> tensor<16x8xf32, #fusion.dist<@tp, [didx, serial]>>
  %b = fusion.cast %s : tensor<16x8xf32, #fusion.dist<@tp, [didx, serial]>>
                     -> tensor<16x8xbf16, #fusion.dist<@tp, [didx, serial]>>
  %t = fusion.cast %s : tensor<16x8xf32, #fusion.dist<@tp, [didx, serial]>>
                     -> tensor<16x8xi32, #fusion.dist<@tp, [didx, serial]>>
  %n = fusion.sum %t [0] : tensor<16x8xi32, #fusion.dist<@tp, [didx, serial]>>
                        -> tensor<8xi32, #fusion.dist<@tp, [serial]>>
  %l = fusion.cast %t : tensor<16x8xi32, #fusion.dist<@tp, [didx, serial]>>
                     -> tensor<16x8xi64, #fusion.dist<@tp, [didx, serial]>>
  %m = fusion.cast %b : tensor<16x8xbf16, #fusion.dist<@tp, [didx, serial]>>
                     -> tensor<16x8xi64, #fusion.dist<@tp, [didx, serial]>>
  %d = fusion.sub %l, %m : tensor<16x8xi64, #fusion.dist<@tp, [didx, serial]>>,
                           tensor<16x8xi64, #fusion.dist<@tp, [didx, serial]>>
                        -> tensor<16x8xi64, #fusion.dist<@tp, [didx, serial]>>
  %r = fusion.cast %d : tensor<16x8xi64, #fusion.dist<@tp, [didx, serial]>>
                     -> tensor<16x8xi32, #fusion.dist<@tp, [didx, serial]>>
  %h = fusion.cast %ids : tensor<16x8xi32, #fusion.dist<@tp, [didx, serial]>>
                       -> tensor<16x8xf16, #fusion.dist<@tp, [didx, serial]>>
  %g = fusion.cast %w : tensor<16x8xf32, #fusion.dist<@tp, [didx, serial]>>
                     -> tensor<16x8xf16, #fusion.dist<@tp, [didx, serial]>>
  %p = fusion.mul %h, %g : tensor<16x8xf16, #fusion.dist<@tp, [didx, serial]>>,
                           tensor<16x8xf16, #fusion.dist<@tp, [didx, serial]>>
                        -> tensor<16x8xf16, #fusion.dist<@tp, [didx, serial]>>
  return %b, %n, %r, %p : tensor<16x8xbf16, #fusion.dist<@tp, [didx, serial]>>,
                          tensor<8xi32, #fusion.dist<@tp, [serial]>>,
                          tensor<16x8xi32, #fusion.dist<@tp, [didx, serial]>>,
                          tensor<16x8xf16, #fusion.dist<@tp, [didx, serial]>>
}
