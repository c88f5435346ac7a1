// out = in, stream-parallel along axis 1 (not the outermost one).
// Seed: single-device stream lowering, InputsAreNotStreamParallelized and
// SingleSetOpNonOutermost (002). `stream` schedules how a result is produced, so
// function arguments stay all-`serial`; the lowering slices them along axis 1.
fusion.mesh @dev = [0]
func.func @inputs_not_stream(%in: tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>)
    -> tensor<4x8xf32, #fusion.dist<@dev, [serial, stream]>> {
  %out = fusion.set %in : tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>
                       -> tensor<4x8xf32, #fusion.dist<@dev, [serial, stream]>>
  return %out : tensor<4x8xf32, #fusion.dist<@dev, [serial, stream]>>
}
