// host-auto-stream on what convert-fusion-to-host makes of natural programs
// (no stream axis): each allgather into GEMMs and each GEMM into a
// reduce-scatter gets a loop over one chunk of rows per device, in the
// pre-split form; what it does not recognise stays whole.
// RUN: hir-opt %s --split-input-file --pass-pipeline='builtin.module(fusion-propagate-sharding,fusion-insert-resharding,convert-fusion-to-host,func.func(host-auto-stream))' | FileCheck %s
// RUN: hir-opt %s --split-input-file --pass-pipeline='builtin.module(fusion-propagate-sharding,fusion-insert-resharding,convert-fusion-to-host,func.func(host-auto-stream{collectives=rooted}))' | FileCheck %s --check-prefix=ROOTED
// RUN: not hir-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(host-auto-stream{collectives=ring}))' 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: option 'collectives' must be one of rings|rooted, not 'ring'

// AG+GEMM: the two GEMMs that read the gathered rows share one loop.
// CHECK-LABEL: func.func @ag_two_gemms
// CHECK:      [[G:%.+]] = memref.expand_shape %{{.+}} {{\[\[}}0, 1], [2]] output_shape [2, 8, 16] : memref<16x16xf32> into memref<2x8x16xf32>
// CHECK:      comm.allgather %{{.+}} into [[G]] team [0, 1] : memref<1x8x16xf32> into memref<2x8x16xf32>
// CHECK:      host.stream_for
// CHECK:        host.select [[G]][0][%{{.+}}]
// CHECK:        host.linear
// CHECK:        host.select [[G]][0][%{{.+}}]
// CHECK:        host.linear
// CHECK-NEXT: }
// CHECK-NOT:  host.stream_for
// ROOTED-LABEL: func.func @ag_two_gemms
// ROOTED-NOT:   comm.allgather
// ROOTED:       host.stream_for
// ROOTED:         comm.broadcast {{.*}} root
// ROOTED:         host.linear
// ROOTED:         host.linear
fusion.mesh @tp = [0, 1]
func.func @ag_two_gemms(%x: tensor<16x16xf32, #fusion.dist<@tp, [didx, serial]>>,
                        %wq: tensor<8x16xf32, #fusion.dist<@tp, [serial, serial]>>,
                        %wk: tensor<8x16xf32, #fusion.dist<@tp, [serial, serial]>>)
    -> (tensor<16x8xf32, #fusion.dist<@tp, [serial, serial]>>, tensor<16x8xf32, #fusion.dist<@tp, [serial, serial]>>) {
  %g = fusion.set %x : tensor<16x16xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<16x16xf32, #fusion.dist<@tp, [serial, serial]>>
  %q = fusion.linear %g, %wq : tensor<16x16xf32, #fusion.dist<@tp, [serial, serial]>>, tensor<8x16xf32, #fusion.dist<@tp, [serial, serial]>> -> tensor<16x8xf32, #fusion.dist<@tp, [serial, serial]>>
  %n = fusion.neg %q : tensor<16x8xf32, #fusion.dist<@tp, [serial, serial]>> -> tensor<16x8xf32, #fusion.dist<@tp, [serial, serial]>>
  %k = fusion.linear %g, %wk : tensor<16x16xf32, #fusion.dist<@tp, [serial, serial]>>, tensor<8x16xf32, #fusion.dist<@tp, [serial, serial]>> -> tensor<16x8xf32, #fusion.dist<@tp, [serial, serial]>>
  return %n, %k : tensor<16x8xf32, #fusion.dist<@tp, [serial, serial]>>, tensor<16x8xf32, #fusion.dist<@tp, [serial, serial]>>
}

// -----

// GEMM+RS on natural shapes: the partial sums' rows in one chunk per device,
// the reduce-scatter of split views after the loop (what host-p2p-pipeline
// makes a chain of, and host-reduce-pipeline rooted reduces).
// CHECK-LABEL: func.func @gemm_rs
// CHECK:      [[P:%.+]] = memref.expand_shape %{{.+}} {{\[\[}}0, 1], [2]] output_shape [2, 4, 6] : memref<8x6xf32> into memref<2x4x6xf32>
// CHECK:      [[C:%.+]] = memref.expand_shape %{{.+}} {{\[\[}}0, 1], [2]] output_shape [1, 4, 6] : memref<4x6xf32> into memref<1x4x6xf32>
// CHECK:      host.stream_for
// CHECK:        [[A:%.+]] = host.select %{{.+}}[0][%{{.+}}] : memref<2x4x8xf32>
// CHECK:        [[PI:%.+]] = host.select [[P]][0][%{{.+}}]
// CHECK:        host.matmul ins([[A]], %{{.+}} : {{.*}}) outs([[PI]] :
// CHECK:      comm.reduce_scatter [[P]] into [[C]] sum team [0, 1]
// ROOTED-LABEL: func.func @gemm_rs
// ROOTED:       host.stream_for
// ROOTED:         host.matmul
// ROOTED:         comm.reduce {{.*}} sum root
// ROOTED-NOT:   comm.reduce_scatter
fusion.mesh @tp = [0, 1]
func.func @gemm_rs(%a: tensor<8x16xf32, #fusion.dist<@tp, [serial, didx]>>,
                   %b: tensor<16x6xf32, #fusion.dist<@tp, [didx, serial]>>)
    -> tensor<8x6xf32, #fusion.dist<@tp, [didx, serial]>> {
  %c = fusion.matmul %a, %b : tensor<8x16xf32, #fusion.dist<@tp, [serial, didx]>>, tensor<16x6xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<8x6xf32, #fusion.dist<@tp, [didx, serial]>>
  return %c : tensor<8x6xf32, #fusion.dist<@tp, [didx, serial]>>
}

// -----

// Left alone: the gathered rows are read by an elementwise op before the
// GEMM, which the loop's chunks would not have filled yet.
// CHECK-LABEL: func.func @ag_other_reader
// ROOTED-LABEL: func.func @ag_other_reader
// CHECK-NOT:   host.stream_for
// CHECK:       comm.allgather %{{.+}} into %{{.+}} team [0, 1] : memref<8x16xf32> into memref<16x16xf32>
// CHECK-NOT:   host.stream_for
// CHECK:       return
fusion.mesh @tp = [0, 1]
func.func @ag_other_reader(%x: tensor<16x16xf32, #fusion.dist<@tp, [didx, serial]>>,
                           %w: tensor<8x16xf32, #fusion.dist<@tp, [serial, serial]>>)
    -> (tensor<16x8xf32, #fusion.dist<@tp, [serial, serial]>>, tensor<16x16xf32, #fusion.dist<@tp, [serial, serial]>>) {
  %g = fusion.set %x : tensor<16x16xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<16x16xf32, #fusion.dist<@tp, [serial, serial]>>
  %n = fusion.neg %g : tensor<16x16xf32, #fusion.dist<@tp, [serial, serial]>> -> tensor<16x16xf32, #fusion.dist<@tp, [serial, serial]>>
  %y = fusion.linear %g, %w : tensor<16x16xf32, #fusion.dist<@tp, [serial, serial]>>, tensor<8x16xf32, #fusion.dist<@tp, [serial, serial]>> -> tensor<16x8xf32, #fusion.dist<@tp, [serial, serial]>>
  return %y, %n : tensor<16x8xf32, #fusion.dist<@tp, [serial, serial]>>, tensor<16x16xf32, #fusion.dist<@tp, [serial, serial]>>
}

// -----

// The gathered rows read whole after the GEMM (as a backward's weight
// gradient reads the dy its input gradient gathered): the GEMM loops, and
// the reader follows the loop, on the whole gathered buffer.
// CHECK-LABEL: func.func @ag_later_reader
// CHECK:       [[G:%[0-9]+]] = host.alloc : memref<16x16xf32>
// CHECK:       comm.allgather %{{.+}} into %{{.+}} team [0, 1] : memref<1x8x16xf32> into memref<2x8x16xf32>
// CHECK:       host.stream_for
// CHECK:       host.linear
// CHECK:       }
// CHECK-NEXT:  host.neg ins([[G]] : memref<16x16xf32>)
// ROOTED-LABEL: func.func @ag_later_reader
// ROOTED:       [[G:%[0-9]+]] = host.alloc : memref<16x16xf32>
// ROOTED-NOT:   comm.allgather
// ROOTED:       host.stream_for
// ROOTED:       comm.broadcast
// ROOTED:       host.linear
// ROOTED:       }
// ROOTED-NEXT:  host.neg ins([[G]] : memref<16x16xf32>)
fusion.mesh @tp = [0, 1]
func.func @ag_later_reader(%x: tensor<16x16xf32, #fusion.dist<@tp, [didx, serial]>>,
                           %w: tensor<8x16xf32, #fusion.dist<@tp, [serial, serial]>>)
    -> (tensor<16x8xf32, #fusion.dist<@tp, [serial, serial]>>, tensor<16x16xf32, #fusion.dist<@tp, [serial, serial]>>) {
  %g = fusion.set %x : tensor<16x16xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<16x16xf32, #fusion.dist<@tp, [serial, serial]>>
  %y = fusion.linear %g, %w : tensor<16x16xf32, #fusion.dist<@tp, [serial, serial]>>, tensor<8x16xf32, #fusion.dist<@tp, [serial, serial]>> -> tensor<16x8xf32, #fusion.dist<@tp, [serial, serial]>>
  %n = fusion.neg %g : tensor<16x16xf32, #fusion.dist<@tp, [serial, serial]>> -> tensor<16x16xf32, #fusion.dist<@tp, [serial, serial]>>
  return %y, %n : tensor<16x8xf32, #fusion.dist<@tp, [serial, serial]>>, tensor<16x16xf32, #fusion.dist<@tp, [serial, serial]>>
}

// -----

// Left alone: the gathered axis is the GEMM's N (it gathers the weight).
// CHECK-LABEL: func.func @ag_weight
// CHECK-NOT:   host.stream_for
// CHECK:       comm.allgather
// CHECK-NOT:   host.stream_for
// CHECK:       return
fusion.mesh @tp = [0, 1]
func.func @ag_weight(%x: tensor<8x16xf32, #fusion.dist<@tp, [serial, serial]>>,
                     %w: tensor<16x8xf32, #fusion.dist<@tp, [serial, didx]>>)
    -> tensor<8x8xf32, #fusion.dist<@tp, [serial, serial]>> {
  %g = fusion.set %w : tensor<16x8xf32, #fusion.dist<@tp, [serial, didx]>> -> tensor<16x8xf32, #fusion.dist<@tp, [serial, serial]>>
  %y = fusion.matmul %x, %g : tensor<8x16xf32, #fusion.dist<@tp, [serial, serial]>>, tensor<16x8xf32, #fusion.dist<@tp, [serial, serial]>> -> tensor<8x8xf32, #fusion.dist<@tp, [serial, serial]>>
  return %y : tensor<8x8xf32, #fusion.dist<@tp, [serial, serial]>>
}

// -----

// Left alone: the program has a stream axis, the user's schedule.
// CHECK-LABEL: func.func @user_streams
// CHECK:       comm.reduce_scatter %{{.+}} into %{{.+}} sum team [0, 1] : memref<8x6xf32> into memref<4x6xf32>
fusion.mesh @tp = [0, 1]
func.func @user_streams(%a: tensor<8x16xf32, #fusion.dist<@tp, [serial, didx]>>,
                        %b: tensor<16x6xf32, #fusion.dist<@tp, [didx, serial]>>,
                        %x: tensor<8x6xf32, #fusion.dist<@tp, [serial, serial]>>)
    -> (tensor<8x6xf32, #fusion.dist<@tp, [didx, serial]>>, tensor<8x6xf32, #fusion.dist<@tp, [stream, serial]>>) {
  %c = fusion.matmul %a, %b : tensor<8x16xf32, #fusion.dist<@tp, [serial, didx]>>, tensor<16x6xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<8x6xf32, #fusion.dist<@tp, [didx, serial]>>
  %n = fusion.neg %x : tensor<8x6xf32, #fusion.dist<@tp, [serial, serial]>> -> tensor<8x6xf32, #fusion.dist<@tp, [stream, serial]>>
  return %c, %n : tensor<8x6xf32, #fusion.dist<@tp, [didx, serial]>>, tensor<8x6xf32, #fusion.dist<@tp, [stream, serial]>>
}
