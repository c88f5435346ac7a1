// Integer (i32) arithmetic on a split axis, reduced across devices exactly.
// The 16 rows of x and y are split over 4 devices (4 rows each):
//   d = max(|x| * y - x, -y)     elementwise, on each device's rows
//   s = sum of d over the rows   a partial sum per device, then an allreduce (sum)
//   m = amax of x over the rows  an allreduce (max)
// Integer arithmetic wraps (two's complement) and is checked exactly.
fusion.mesh @tp = [0, 1, 2, 3]
func.func @int_allreduce(%x: tensor<16x8xi32, #fusion.dist<@tp, [didx, serial]>>,
                         %y: tensor<16x8xi32, #fusion.dist<@tp, [didx, serial]>>)
    -> (tensor<8xi32, #fusion.dist<@tp, [serial]>>,
        tensor<8xi32, #fusion.dist<@tp, [serial]>>) {
  %a = fusion.abs %x : tensor<16x8xi32, #fusion.dist<@tp, [didx, serial]>>
                    -> tensor<16x8xi32, #fusion.dist<@tp, [didx, serial]>>
  %p = fusion.mul %a, %y : tensor<16x8xi32, #fusion.dist<@tp, [didx, serial]>>,
                           tensor<16x8xi32, #fusion.dist<@tp, [didx, serial]>>
                        -> tensor<16x8xi32, #fusion.dist<@tp, [didx, serial]>>
  %q = fusion.sub %p, %x : tensor<16x8xi32, #fusion.dist<@tp, [didx, serial]>>,
                           tensor<16x8xi32, #fusion.dist<@tp, [didx, serial]>>
                        -> tensor<16x8xi32, #fusion.dist<@tp, [didx, serial]>>
  %n = fusion.neg %y : tensor<16x8xi32, #fusion.dist<@tp, [didx, serial]>>
                    -> tensor<16x8xi32, #fusion.dist<@tp, [didx, serial]>>
  %d = fusion.max %q, %n : tensor<16x8xi32, #fusion.dist<@tp, [didx, serial]>>,
                           tensor<16x8xi32, #fusion.dist<@tp, [didx, serial]>>
                        -> tensor<16x8xi32, #fusion.dist<@tp, [didx, serial]>>
  %s = fusion.sum %d [0] : tensor<16x8xi32, #fusion.dist<@tp, [didx, serial]>>
                        -> tensor<8xi32, #fusion.dist<@tp, [serial]>>
  %m = fusion.amax %x [0] : tensor<16x8xi32, #fusion.dist<@tp, [didx, serial]>>
                         -> tensor<8xi32, #fusion.dist<@tp, [serial]>>
  return %s, %m : tensor<8xi32, #fusion.dist<@tp, [serial]>>,
                  tensor<8xi32, #fusion.dist<@tp, [serial]>>
}
