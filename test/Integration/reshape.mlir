// fusion.reshape through every stage: a local host.reshape (whole and on
// stream slices), its runtime call hir_rt_reshape_T(in, out), the example
// run checked on 4 cpu ranks (Integration/examples.mlir), and the located
// error where fusion-propagate-sharding would carry a distributed axis into
// a merge whose result the user annotated otherwise.
// RUN: hir-opt %examples/reshape.mlir --hir-lower | FileCheck %s --check-prefix=HOST
// RUN: hir-opt %examples/reshape.mlir --hir-lower --convert-host-to-llvm | FileCheck %s --check-prefix=LLVM
// RUN: not hir-opt %s --fusion-propagate-sharding 2>&1 | FileCheck %s --check-prefix=MERGED

// HOST: host.reshape ins(%{{.+}} : memref<2x4x4xf32>) outs(%{{.+}} : memref<2x16xf32>)
// HOST: scf.for
// HOST: host.reshape ins(%{{.+}} : memref<16xbf16, strided<[1], offset: ?>>) outs(%{{.+}} : memref<2x8xbf16, strided<[8, 1], offset: ?>>)

// LLVM-DAG: func.func private @hir_rt_reshape_f32(memref<*xf32>, memref<*xf32>) attributes {llvm.emit_c_interface}
// LLVM-DAG: func.func private @hir_rt_reshape_bf16(memref<*xbf16>, memref<*xbf16>) attributes {llvm.emit_c_interface}
// LLVM: call @hir_rt_reshape_f32(

// The negation's result takes x's didx axis, which the reshape would carry
// to its result's outer axis (an outer split), annotated serial.
// MERGED: reshape.mlir:[[@LINE+5]]:8: error: conflicting distributions inferred for operand #0 of 'fusion.reshape': #fusion.dist<@tp, [didx, serial]> vs #fusion.dist<@tp, [serial, serial]>; annotate it
fusion.mesh @tp = [0, 1, 2, 3]
func.func @merged(%x: tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>)
    -> tensor<32xf32, #fusion.dist<@tp, [serial]>> {
  %n = fusion.neg %x : tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<4x8xf32>
  %r = fusion.reshape %n : tensor<4x8xf32> -> tensor<32xf32, #fusion.dist<@tp, [serial]>>
  return %r : tensor<32xf32, #fusion.dist<@tp, [serial]>>
}
