// The plugin's verifiers run in stock mlir-opt too.
// RUN: %mlir_opt --load-dialect-plugin=%hir_plugin %s -verify-diagnostics

func.func @bad(%a: memref<1x8xf32>, %b: memref<3x8xf32>) {
  // expected-error @+1 {{team size 2 times input extent 1 along axis 0 is not the output extent 3}}
  %r = comm.allgather %a into %b team [0, 1] : memref<1x8xf32> into memref<3x8xf32>
  return
}
