// A consistently distributed program passes unchanged, alone and in a
// textual pipeline mixed with upstream passes.
// RUN: hir-opt %s --fusion-verify-sharding | FileCheck %s
// RUN: hir-opt %s --pass-pipeline='builtin.module(fusion-verify-sharding,canonicalize,cse)' | FileCheck %s
// RUN: hir-opt %s --fusion-verify-sharding --mlir-print-ir-after-all -o /dev/null 2>&1 | FileCheck %s --check-prefix=AFTER
// RUN: hir-opt %s --fusion-verify-sharding --mlir-timing -o /dev/null 2>&1 | FileCheck %s --check-prefix=TIMING

// AFTER: IR Dump After fusion-verify-sharding (fusion-verify-sharding)
// TIMING: {{%\) +}}fusion-verify-sharding{{$}}

fusion.mesh @tp = [0, 1, 2, 3]
fusion.mesh @other = [4, 5]

// CHECK-LABEL: func.func @ag_matmul
// CHECK-NEXT: fusion.matmul
// CHECK-NEXT: return
func.func @ag_matmul(%a: tensor<4x4x256x64xbf16, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
                     %b: tensor<64x128xbf16, #fusion.dist<@tp, [serial, serial]>>)
    -> tensor<4x4x256x128xbf16, #fusion.dist<@tp, [stream, serial, serial, serial]>> {
  %c = fusion.matmul %a, %b : tensor<4x4x256x64xbf16, #fusion.dist<@tp, [serial, didx, serial, serial]>>, tensor<64x128xbf16, #fusion.dist<@tp, [serial, serial]>> -> tensor<4x4x256x128xbf16, #fusion.dist<@tp, [stream, serial, serial, serial]>>
  return %c : tensor<4x4x256x128xbf16, #fusion.dist<@tp, [stream, serial, serial, serial]>>
}

// A reduction over a didx axis (an allreduce to be) and a stream axis on a
// kept axis are fine.
// CHECK-LABEL: func.func @sum_didx
// CHECK-NEXT: fusion.sum
func.func @sum_didx(%a: tensor<4x8x16xf32, #fusion.dist<@tp, [didx, serial, serial]>>)
    -> tensor<8x16xf32, #fusion.dist<@tp, [stream, serial]>> {
  %s = fusion.sum %a [0] : tensor<4x8x16xf32, #fusion.dist<@tp, [didx, serial, serial]>> -> tensor<8x16xf32, #fusion.dist<@tp, [stream, serial]>>
  return %s : tensor<8x16xf32, #fusion.dist<@tp, [stream, serial]>>
}

// A contraction may contract a stream axis: FC1's output features in 4
// chunks, FC2 summing the chunks' products (the weight's K serial, read in
// the same chunks), into a result with no stream axis; so may a matmul's
// rhs, streamed along K one index per iteration.
// CHECK-LABEL: func.func @stream_contraction
// CHECK: fusion.linear
// CHECK: fusion.matmul
func.func @stream_contraction(%x: tensor<8x16xf32, #fusion.dist<@tp, [serial, serial]>>,
                              %w1: tensor<64x16xf32, #fusion.dist<@tp, [serial, serial]>>,
                              %w2: tensor<16x64xf32, #fusion.dist<@tp, [serial, serial]>>,
                              %k: tensor<64x8xf32, #fusion.dist<@tp, [serial, serial]>>)
    -> (tensor<8x16xf32, #fusion.dist<@tp, [serial, serial]>>, tensor<16x8xf32, #fusion.dist<@tp, [serial, serial]>>) {
  %h = fusion.linear %x, %w1 : tensor<8x16xf32, #fusion.dist<@tp, [serial, serial]>>, tensor<64x16xf32, #fusion.dist<@tp, [serial, serial]>> -> tensor<8x64xf32, #fusion.dist<@tp, [serial, stream<4>]>>
  %y = fusion.linear %h, %w2 : tensor<8x64xf32, #fusion.dist<@tp, [serial, stream<4>]>>, tensor<16x64xf32, #fusion.dist<@tp, [serial, serial]>> -> tensor<8x16xf32, #fusion.dist<@tp, [serial, serial]>>
  %r = fusion.neg %k : tensor<64x8xf32, #fusion.dist<@tp, [serial, serial]>> -> tensor<64x8xf32, #fusion.dist<@tp, [stream, serial]>>
  %z = fusion.matmul %w2, %r : tensor<16x64xf32, #fusion.dist<@tp, [serial, serial]>>, tensor<64x8xf32, #fusion.dist<@tp, [stream, serial]>> -> tensor<16x8xf32, #fusion.dist<@tp, [serial, serial]>>
  return %y, %z : tensor<8x16xf32, #fusion.dist<@tp, [serial, serial]>>, tensor<16x8xf32, #fusion.dist<@tp, [serial, serial]>>
}

// fusion.set may move a tensor to another mesh; unannotated tensors are left
// for fusion-propagate-sharding.
// CHECK-LABEL: func.func @mesh_change
// CHECK-NEXT: fusion.set
// CHECK-NEXT: fusion.neg
func.func @mesh_change(%a: tensor<8xf32, #fusion.dist<@tp, [serial]>>) -> tensor<8xf32> {
  %b = fusion.set %a : tensor<8xf32, #fusion.dist<@tp, [serial]>> -> tensor<8xf32, #fusion.dist<@other, [serial]>>
  %c = fusion.neg %b : tensor<8xf32, #fusion.dist<@other, [serial]>> -> tensor<8xf32>
  return %c : tensor<8xf32>
}

// A didx axis whose extent is a multiple of the mesh size is split into one
// contiguous slice per device, on arguments and results.
// CHECK-LABEL: func.func @split_axes
// CHECK-NEXT: fusion.linear
func.func @split_axes(%x: tensor<8x32xf32, #fusion.dist<@tp, [serial, didx]>>,
                      %w: tensor<16x32xf32, #fusion.dist<@tp, [serial, didx]>>)
    -> tensor<8x16xf32, #fusion.dist<@tp, [didx, serial]>> {
  %y = fusion.linear %x, %w : tensor<8x32xf32, #fusion.dist<@tp, [serial, didx]>>, tensor<16x32xf32, #fusion.dist<@tp, [serial, didx]>> -> tensor<8x16xf32, #fusion.dist<@tp, [didx, serial]>>
  return %y : tensor<8x16xf32, #fusion.dist<@tp, [didx, serial]>>
}
