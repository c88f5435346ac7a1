// t1 = in; t2 = t1; out = t2, where t1 and out are stream-parallel and t2 is not.
// Seed: single-device stream lowering, ThreeSetOpsWithDisjointsForLoops (002).
// The middle set runs outside any loop, so the lowering emits two stream loops.
fusion.mesh @dev = [0]
func.func @three_sets(%in: tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>)
    -> tensor<4x8xf32, #fusion.dist<@dev, [stream, serial]>> {
  %t1 = fusion.set %in : tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>
                      -> tensor<4x8xf32, #fusion.dist<@dev, [stream, serial]>>
  %t2 = fusion.set %t1 : tensor<4x8xf32, #fusion.dist<@dev, [stream, serial]>>
                      -> tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>
  %out = fusion.set %t2 : tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>
                       -> tensor<4x8xf32, #fusion.dist<@dev, [stream, serial]>>
  return %out : tensor<4x8xf32, #fusion.dist<@dev, [stream, serial]>>
}
