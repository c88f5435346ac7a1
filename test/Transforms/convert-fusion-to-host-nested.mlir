// RUN: hir-opt --convert-fusion-to-host --verify-diagnostics %s

// The patterns lower the ops of the function's body in program order; a
// fusion op in another op's region is none of them, and the check after the
// patterns finds it left.
fusion.mesh @dev = [0]
func.func @nested(%x: tensor<8xf32, #fusion.dist<@dev, [serial]>>) -> tensor<8xf32, #fusion.dist<@dev, [serial]>> {
  scf.execute_region {
    // expected-error @+1 {{'fusion.fill' op has no lowering to host ops}}
    %z = fusion.fill 0.0 : tensor<8xf32, #fusion.dist<@dev, [serial]>>
    scf.yield
  }
  return %x : tensor<8xf32, #fusion.dist<@dev, [serial]>>
}
