// Stock mlir-opt, built against libMLIR.so, loads HIR's dialects as a plugin
// and parses, verifies and prints all three.
// RUN: %mlir_opt --load-dialect-plugin=%hir_plugin %s | %mlir_opt --load-dialect-plugin=%hir_plugin | FileCheck %s

// CHECK: fusion.mesh @tp = [0, 1]
fusion.mesh @tp = [0, 1]

// CHECK-LABEL: func.func @all_dialects
func.func @all_dialects(%a: tensor<2x8xf32, #fusion.dist<@tp, [didx, serial]>>,
                        %buf: memref<2x8xf32>, %i: index) {
  // CHECK: fusion.set %{{.*}} : tensor<2x8xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<2x8xf32, #fusion.dist<@tp, [serial, serial]>>
  %g = fusion.set %a : tensor<2x8xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<2x8xf32, #fusion.dist<@tp, [serial, serial]>>
  // CHECK: host.stream_from_pool %{{.*}} : !host.stream
  %s = host.stream_from_pool %i : !host.stream
  // CHECK: host.select %{{.*}}[0][%{{.*}}] : memref<2x8xf32> to memref<8xf32, strided<[1], offset: ?>>
  %row = host.select %buf[0][%i] : memref<2x8xf32> to memref<8xf32, strided<[1], offset: ?>>
  // CHECK: comm.allreduce %{{.*}} into %{{.*}} sum team [0, 1]
  %r = comm.allreduce %row into %row sum team [0, 1] : memref<8xf32, strided<[1], offset: ?>> into memref<8xf32, strided<[1], offset: ?>>
  // CHECK: comm.wait
  comm.wait %r
  return
}
