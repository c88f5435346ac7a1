// RUN: hir-opt --convert-fusion-to-host --split-input-file %s | FileCheck %s

// Each op with a stream axis gets its own host.stream_for over that axis of
// the buffer it writes, from the caller's stream read once at the entry.
// A reduction slices the input axis kept as the stream axis and renumbers
// the reduced axes.
// CHECK-LABEL: func.func @reductions(
// CHECK-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<4x6x8xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<6x8xf32>, [[ARG2:%[a-zA-Z0-9_]+]]: memref<4x6xf32>) {
// CHECK-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// CHECK-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: [[C6:%[a-zA-Z0-9_]+]] = arith.constant 6 : index
// CHECK-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// CHECK-NEXT: host.stream_for [[C0]] to [[C6]] step [[C1]] from [[MAIN]] {
// CHECK-NEXT: ^bb0([[I:%[a-zA-Z0-9_]+]]: index, [[S:%[a-zA-Z0-9_]+]]: !host.stream):
// CHECK-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][1]{{\[}}[[I]]{{\]}} : memref<4x6x8xf32> to memref<4x8xf32, strided<[48, 1], offset: ?>>
// CHECK-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[ARG1]][0]{{\[}}[[I]]{{\]}} : memref<6x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// CHECK-NEXT: host.sum [0] ins([[VIEW]] : memref<4x8xf32, strided<[48, 1], offset: ?>>) outs([[VIEW_1]] : memref<8xf32, strided<[1], offset: ?>>)
// CHECK-NEXT: }
// CHECK-NEXT: [[C0_1:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: [[C6_1:%[a-zA-Z0-9_]+]] = arith.constant 6 : index
// CHECK-NEXT: [[C1_1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// CHECK-NEXT: host.stream_for [[C0_1]] to [[C6_1]] step [[C1_1]] from [[MAIN]] {
// CHECK-NEXT: ^bb0([[I_1:%[a-zA-Z0-9_]+]]: index, [[S_1:%[a-zA-Z0-9_]+]]: !host.stream):
// CHECK-NEXT: [[VIEW_2:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][1]{{\[}}[[I_1]]{{\]}} : memref<4x6x8xf32> to memref<4x8xf32, strided<[48, 1], offset: ?>>
// CHECK-NEXT: [[VIEW_3:%[a-zA-Z0-9_]+]] = host.select [[ARG2]][1]{{\[}}[[I_1]]{{\]}} : memref<4x6xf32> to memref<4xf32, strided<[6], offset: ?>>
// CHECK-NEXT: host.amax [1] ins([[VIEW_2]] : memref<4x8xf32, strided<[48, 1], offset: ?>>) outs([[VIEW_3]] : memref<4xf32, strided<[6], offset: ?>>)
// CHECK-NEXT: }
// CHECK-NEXT: return
// CHECK-NEXT: }
fusion.mesh @dev = [0]
func.func @reductions(%a: tensor<4x6x8xf32, #fusion.dist<@dev, [serial, serial, serial]>>)
    -> (tensor<6x8xf32, #fusion.dist<@dev, [stream, serial]>>, tensor<4x6xf32, #fusion.dist<@dev, [serial, stream]>>) {
  %b = fusion.sum %a [0] : tensor<4x6x8xf32, #fusion.dist<@dev, [serial, serial, serial]>> -> tensor<6x8xf32, #fusion.dist<@dev, [stream, serial]>>
  %c = fusion.amax %a [2] : tensor<4x6x8xf32, #fusion.dist<@dev, [serial, serial, serial]>> -> tensor<4x6xf32, #fusion.dist<@dev, [serial, stream]>>
  return %b, %c : tensor<6x8xf32, #fusion.dist<@dev, [stream, serial]>>, tensor<4x6xf32, #fusion.dist<@dev, [serial, stream]>>
}

// -----

// A broadcast's new axes are not sliced: along its only new axis, every
// iteration copies the whole input into its slice.
// CHECK-LABEL: func.func @broadcasts(
// CHECK-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<8xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<4x8xf32>, [[ARG2:%[a-zA-Z0-9_]+]]: memref<8x4xf32>) {
// CHECK-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// CHECK-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// CHECK-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// CHECK-NEXT: host.stream_for [[C0]] to [[C4]] step [[C1]] from [[MAIN]] {
// CHECK-NEXT: ^bb0([[I:%[a-zA-Z0-9_]+]]: index, [[S:%[a-zA-Z0-9_]+]]: !host.stream):
// CHECK-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG1]][0]{{\[}}[[I]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// CHECK-NEXT: host.copy ins([[ARG0]] : memref<8xf32>) outs([[VIEW]] : memref<8xf32, strided<[1], offset: ?>>)
// CHECK-NEXT: }
// CHECK-NEXT: [[C0_1:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: [[C8:%[a-zA-Z0-9_]+]] = arith.constant 8 : index
// CHECK-NEXT: [[C1_1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// CHECK-NEXT: host.stream_for [[C0_1]] to [[C8]] step [[C1_1]] from [[MAIN]] {
// CHECK-NEXT: ^bb0([[I_1:%[a-zA-Z0-9_]+]]: index, [[S_1:%[a-zA-Z0-9_]+]]: !host.stream):
// CHECK-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[I_1]]{{\]}} : memref<8xf32> to memref<f32, strided<[], offset: ?>>
// CHECK-NEXT: [[VIEW_2:%[a-zA-Z0-9_]+]] = host.select [[ARG2]][0]{{\[}}[[I_1]]{{\]}} : memref<8x4xf32> to memref<4xf32, strided<[1], offset: ?>>
// CHECK-NEXT: host.broadcast [0] ins([[VIEW_1]] : memref<f32, strided<[], offset: ?>>) outs([[VIEW_2]] : memref<4xf32, strided<[1], offset: ?>>)
// CHECK-NEXT: }
// CHECK-NEXT: return
// CHECK-NEXT: }
fusion.mesh @dev = [0]
func.func @broadcasts(%a: tensor<8xf32, #fusion.dist<@dev, [serial]>>)
    -> (tensor<4x8xf32, #fusion.dist<@dev, [stream, serial]>>, tensor<8x4xf32, #fusion.dist<@dev, [stream, serial]>>) {
  %b = fusion.broadcast %a [0] : tensor<8xf32, #fusion.dist<@dev, [serial]>> -> tensor<4x8xf32, #fusion.dist<@dev, [stream, serial]>>
  %c = fusion.broadcast %a [1] : tensor<8xf32, #fusion.dist<@dev, [serial]>> -> tensor<8x4xf32, #fusion.dist<@dev, [stream, serial]>>
  return %b, %c : tensor<4x8xf32, #fusion.dist<@dev, [stream, serial]>>, tensor<8x4xf32, #fusion.dist<@dev, [stream, serial]>>
}

// -----

// A matmul operand's batch axis of extent 1 that the op broadcasts along the
// stream axis is taken at 0: a view the same in every iteration, which
// host-stream-parallelize hoists.
// CHECK-LABEL: func.func @broadcast_batch(
// CHECK-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<2x4x8x16xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<1x1x16x4xf32>, [[ARG2:%[a-zA-Z0-9_]+]]: memref<2x4x8x4xf32>) {
// CHECK-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// CHECK-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// CHECK-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// CHECK-NEXT: host.stream_for [[C0]] to [[C4]] step [[C1]] from [[MAIN]] {
// CHECK-NEXT: ^bb0([[I:%[a-zA-Z0-9_]+]]: index, [[S:%[a-zA-Z0-9_]+]]: !host.stream):
// CHECK-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][1]{{\[}}[[I]]{{\]}} : memref<2x4x8x16xf32> to memref<2x8x16xf32, strided<[512, 16, 1], offset: ?>>
// CHECK-NEXT: [[C0_1:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[ARG1]][1]{{\[}}[[C0_1]]{{\]}} : memref<1x1x16x4xf32> to memref<1x16x4xf32, strided<[64, 4, 1], offset: ?>>
// CHECK-NEXT: [[VIEW_2:%[a-zA-Z0-9_]+]] = host.select [[ARG2]][1]{{\[}}[[I]]{{\]}} : memref<2x4x8x4xf32> to memref<2x8x4xf32, strided<[128, 4, 1], offset: ?>>
// CHECK-NEXT: host.matmul ins([[VIEW]], [[VIEW_1]] : memref<2x8x16xf32, strided<[512, 16, 1], offset: ?>>, memref<1x16x4xf32, strided<[64, 4, 1], offset: ?>>) outs([[VIEW_2]] : memref<2x8x4xf32, strided<[128, 4, 1], offset: ?>>)
// CHECK-NEXT: }
// CHECK-NEXT: return
// CHECK-NEXT: }
fusion.mesh @dev = [0]
func.func @broadcast_batch(%a: tensor<2x4x8x16xf32, #fusion.dist<@dev, [serial, serial, serial, serial]>>,
                           %w: tensor<1x1x16x4xf32, #fusion.dist<@dev, [serial, serial, serial, serial]>>)
    -> tensor<2x4x8x4xf32, #fusion.dist<@dev, [serial, stream, serial, serial]>> {
  %c = fusion.matmul %a, %w : tensor<2x4x8x16xf32, #fusion.dist<@dev, [serial, serial, serial, serial]>>, tensor<1x1x16x4xf32, #fusion.dist<@dev, [serial, serial, serial, serial]>> -> tensor<2x4x8x4xf32, #fusion.dist<@dev, [serial, stream, serial, serial]>>
  return %c : tensor<2x4x8x4xf32, #fusion.dist<@dev, [serial, stream, serial, serial]>>
}

// -----

// A transpose slices the input axis it moves to the stream axis and
// renumbers its permutation.
// CHECK-LABEL: func.func @transpose(
// CHECK-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<2x4x8xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<8x2x4xf32>) {
// CHECK-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// CHECK-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// CHECK-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// CHECK-NEXT: host.stream_for [[C0]] to [[C4]] step [[C1]] from [[MAIN]] {
// CHECK-NEXT: ^bb0([[I:%[a-zA-Z0-9_]+]]: index, [[S:%[a-zA-Z0-9_]+]]: !host.stream):
// CHECK-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][1]{{\[}}[[I]]{{\]}} : memref<2x4x8xf32> to memref<2x8xf32, strided<[32, 1], offset: ?>>
// CHECK-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[ARG1]][2]{{\[}}[[I]]{{\]}} : memref<8x2x4xf32> to memref<8x2xf32, strided<[8, 4], offset: ?>>
// CHECK-NEXT: host.transpose [1, 0] ins([[VIEW]] : memref<2x8xf32, strided<[32, 1], offset: ?>>) outs([[VIEW_1]] : memref<8x2xf32, strided<[8, 4], offset: ?>>)
// CHECK-NEXT: }
// CHECK-NEXT: return
// CHECK-NEXT: }
fusion.mesh @dev = [0]
func.func @transpose(%a: tensor<2x4x8xf32, #fusion.dist<@dev, [serial, serial, serial]>>)
    -> tensor<8x2x4xf32, #fusion.dist<@dev, [serial, serial, stream]>> {
  %b = fusion.transpose %a [2, 0, 1] : tensor<2x4x8xf32, #fusion.dist<@dev, [serial, serial, serial]>> -> tensor<8x2x4xf32, #fusion.dist<@dev, [serial, serial, stream]>>
  return %b : tensor<8x2x4xf32, #fusion.dist<@dev, [serial, serial, stream]>>
}

// -----

// A DIDx -> Stream set on one axis is an allgather along the stream axis,
// which has no per-slice form: it runs whole, and a loop that only takes
// the slices of its output states the stream axis (host-p2p-pipeline makes
// a ring of it; otherwise host-lower-stream-for erases it).
// CHECK-LABEL: func.func @gathered(
// CHECK-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<1x8xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<2x8xf32>) {
// CHECK-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// CHECK-NEXT: [[REQ:%[a-zA-Z0-9_]+]] = comm.allgather [[ARG0]] into [[ARG1]] team [0, 1] : memref<1x8xf32> into memref<2x8xf32>
// CHECK-NEXT: comm.wait [[REQ]]
// CHECK-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: [[C2:%[a-zA-Z0-9_]+]] = arith.constant 2 : index
// CHECK-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// CHECK-NEXT: host.stream_for [[C0]] to [[C2]] step [[C1]] from [[MAIN]] {
// CHECK-NEXT: ^bb0([[I:%[a-zA-Z0-9_]+]]: index, [[S:%[a-zA-Z0-9_]+]]: !host.stream):
// CHECK-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG1]][0]{{\[}}[[I]]{{\]}} : memref<2x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// CHECK-NEXT: }
// CHECK-NEXT: return
// CHECK-NEXT: }
fusion.mesh @tp = [0, 1]
func.func @gathered(%a: tensor<2x8xf32, #fusion.dist<@tp, [didx, serial]>>)
    -> tensor<2x8xf32, #fusion.dist<@tp, [stream, serial]>> {
  %g = fusion.set %a : tensor<2x8xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<2x8xf32, #fusion.dist<@tp, [stream, serial]>>
  return %g : tensor<2x8xf32, #fusion.dist<@tp, [stream, serial]>>
}

// -----

// When a stream loop reads the gathered output, that loop states it.
// CHECK-LABEL: func.func @gathered_and_read(
// CHECK-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<1x8xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<2x8xf32>) {
// CHECK-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// CHECK-NEXT: [[BUF:%[a-zA-Z0-9_]+]] = host.alloc : memref<2x8xf32>
// CHECK-NEXT: [[REQ:%[a-zA-Z0-9_]+]] = comm.allgather [[ARG0]] into [[BUF]] team [0, 1] : memref<1x8xf32> into memref<2x8xf32>
// CHECK-NEXT: comm.wait [[REQ]]
// CHECK-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: [[C2:%[a-zA-Z0-9_]+]] = arith.constant 2 : index
// CHECK-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// CHECK-NEXT: host.stream_for [[C0]] to [[C2]] step [[C1]] from [[MAIN]] {
// CHECK-NEXT: ^bb0([[I:%[a-zA-Z0-9_]+]]: index, [[S:%[a-zA-Z0-9_]+]]: !host.stream):
// CHECK-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[BUF]][0]{{\[}}[[I]]{{\]}} : memref<2x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// CHECK-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[ARG1]][0]{{\[}}[[I]]{{\]}} : memref<2x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// CHECK-NEXT: host.neg ins([[VIEW]] : memref<8xf32, strided<[1], offset: ?>>) outs([[VIEW_1]] : memref<8xf32, strided<[1], offset: ?>>)
// CHECK-NEXT: }
// CHECK-NEXT: return
// CHECK-NEXT: }
fusion.mesh @tp = [0, 1]
func.func @gathered_and_read(%a: tensor<2x8xf32, #fusion.dist<@tp, [didx, serial]>>)
    -> tensor<2x8xf32, #fusion.dist<@tp, [stream, serial]>> {
  %g = fusion.set %a : tensor<2x8xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<2x8xf32, #fusion.dist<@tp, [stream, serial]>>
  %n = fusion.neg %g : tensor<2x8xf32, #fusion.dist<@tp, [stream, serial]>> -> tensor<2x8xf32, #fusion.dist<@tp, [stream, serial]>>
  return %n : tensor<2x8xf32, #fusion.dist<@tp, [stream, serial]>>
}

// -----

// A stream<k> axis runs k iterations, each on one chunk: every buffer the op
// maps to the stream axis is taken as a memref.subview part of the same rank
// at the chunk's first index, computed once. A matmul streams along its
// output columns N: the rhs's part along N, the lhs whole.
// CHECK-LABEL: func.func @matmul_columns(
// CHECK-SAME: [[A:%[a-zA-Z0-9_]+]]: memref<4x8xf32>, [[B:%[a-zA-Z0-9_]+]]: memref<8x16xf32>, [[C:%[a-zA-Z0-9_]+]]: memref<4x16xf32>) {
// CHECK-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// CHECK-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// CHECK-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// CHECK-NEXT: host.stream_for [[C0]] to [[C4]] step [[C1]] from [[MAIN]] {
// CHECK-NEXT: ^bb0([[I:%[a-zA-Z0-9_]+]]: index, [[S:%[a-zA-Z0-9_]+]]: !host.stream):
// CHECK-NEXT: [[SIZE:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// CHECK-NEXT: [[FIRST:%[a-zA-Z0-9_]+]] = arith.muli [[I]], [[SIZE]] : index
// CHECK-NEXT: [[BI:%[a-zA-Z0-9_]+]] = memref.subview [[B]][0, [[FIRST]]] [8, 4] [1, 1] : memref<8x16xf32> to memref<8x4xf32, strided<[16, 1], offset: ?>>
// CHECK-NEXT: [[CI:%[a-zA-Z0-9_]+]] = memref.subview [[C]][0, [[FIRST]]] [4, 4] [1, 1] : memref<4x16xf32> to memref<4x4xf32, strided<[16, 1], offset: ?>>
// CHECK-NEXT: host.matmul ins([[A]], [[BI]] : memref<4x8xf32>, memref<8x4xf32, strided<[16, 1], offset: ?>>) outs([[CI]] : memref<4x4xf32, strided<[16, 1], offset: ?>>)
// CHECK-NEXT: }
// CHECK-NEXT: return
fusion.mesh @dev = [0]
func.func @matmul_columns(%a: tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>,
                          %b: tensor<8x16xf32, #fusion.dist<@dev, [serial, serial]>>)
    -> tensor<4x16xf32, #fusion.dist<@dev, [serial, stream<4>]>> {
  %c = fusion.matmul %a, %b : tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>, tensor<8x16xf32, #fusion.dist<@dev, [serial, serial]>> -> tensor<4x16xf32, #fusion.dist<@dev, [serial, stream<4>]>>
  return %c : tensor<4x16xf32, #fusion.dist<@dev, [serial, stream<4>]>>
}

// -----

// A linear streams along its output features: the weight's and the bias's
// parts along N.
// CHECK-LABEL: func.func @linear_features(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: memref<4x8xf32>, [[W:%[a-zA-Z0-9_]+]]: memref<16x8xf32>, [[BIAS:%[a-zA-Z0-9_]+]]: memref<16xf32>, [[Y:%[a-zA-Z0-9_]+]]: memref<4x16xf32>) {
// CHECK: host.stream_for
// CHECK: [[FIRST:%[a-zA-Z0-9_]+]] = arith.muli
// CHECK-NEXT: [[WI:%[a-zA-Z0-9_]+]] = memref.subview [[W]]{{\[}}[[FIRST]], 0] [8, 8] [1, 1] : memref<16x8xf32> to memref<8x8xf32, strided<[8, 1], offset: ?>>
// CHECK-NEXT: [[BI:%[a-zA-Z0-9_]+]] = memref.subview [[BIAS]]{{\[}}[[FIRST]]] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1], offset: ?>>
// CHECK-NEXT: [[YI:%[a-zA-Z0-9_]+]] = memref.subview [[Y]][0, [[FIRST]]] [4, 8] [1, 1] : memref<4x16xf32> to memref<4x8xf32, strided<[16, 1], offset: ?>>
// CHECK-NEXT: host.linear ins([[X]], [[WI]], [[BI]] : {{.*}}) outs([[YI]] : {{.*}})
fusion.mesh @dev = [0]
func.func @linear_features(%x: tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>,
                           %w: tensor<16x8xf32, #fusion.dist<@dev, [serial, serial]>>,
                           %bias: tensor<16xf32, #fusion.dist<@dev, [serial]>>)
    -> tensor<4x16xf32, #fusion.dist<@dev, [serial, stream<2>]>> {
  %y = fusion.linear %x, %w, %bias : tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>, tensor<16x8xf32, #fusion.dist<@dev, [serial, serial]>>, tensor<16xf32, #fusion.dist<@dev, [serial]>> -> tensor<4x16xf32, #fusion.dist<@dev, [serial, stream<2>]>>
  return %y : tensor<4x16xf32, #fusion.dist<@dev, [serial, stream<2>]>>
}

// -----

// A reduction over chunks of a kept axis keeps its reduced axes: a part
// drops no axis.
// CHECK-LABEL: func.func @sum_rows(
// CHECK: host.stream_for
// CHECK: memref.subview {{.*}} : memref<8x6xf32> to memref<4x6xf32, strided<[6, 1], offset: ?>>
// CHECK-NEXT: memref.subview {{.*}} : memref<8xf32> to memref<4xf32, strided<[1], offset: ?>>
// CHECK-NEXT: host.sum [1] ins
fusion.mesh @dev = [0]
func.func @sum_rows(%x: tensor<8x6xf32, #fusion.dist<@dev, [serial, serial]>>)
    -> tensor<8xf32, #fusion.dist<@dev, [stream<2>]>> {
  %s = fusion.sum %x [1] : tensor<8x6xf32, #fusion.dist<@dev, [serial, serial]>> -> tensor<8xf32, #fusion.dist<@dev, [stream<2>]>>
  return %s : tensor<8xf32, #fusion.dist<@dev, [stream<2>]>>
}

// -----

// Natural-shape AG+GEMM: A's rows split over the devices, C's rows in 4
// chunks. The allgather runs whole before the loop, which takes chunks of
// the gathered rows.
// CHECK-LABEL: func.func @ag_matmul_rows(
// CHECK-SAME: [[A:%[a-zA-Z0-9_]+]]: memref<16x32xf32>, [[B:%[a-zA-Z0-9_]+]]: memref<32x48xf32>, [[C:%[a-zA-Z0-9_]+]]: memref<64x48xf32>) {
// CHECK: [[G:%[a-zA-Z0-9_]+]] = host.alloc : memref<64x32xf32>
// CHECK-NEXT: [[REQ:%[a-zA-Z0-9_]+]] = comm.allgather [[A]] into [[G]] team [0, 1, 2, 3] : memref<16x32xf32> into memref<64x32xf32>
// CHECK-NEXT: comm.wait [[REQ]]
// CHECK: host.stream_for
// CHECK: [[FIRST:%[a-zA-Z0-9_]+]] = arith.muli
// CHECK-NEXT: [[GI:%[a-zA-Z0-9_]+]] = memref.subview [[G]]{{\[}}[[FIRST]], 0] [16, 32] [1, 1]
// CHECK-NEXT: [[CI:%[a-zA-Z0-9_]+]] = memref.subview [[C]]{{\[}}[[FIRST]], 0] [16, 48] [1, 1]
// CHECK-NEXT: host.matmul ins([[GI]], [[B]] : {{.*}}) outs([[CI]] : {{.*}})
fusion.mesh @tp = [0, 1, 2, 3]
func.func @ag_matmul_rows(%a: tensor<64x32xf32, #fusion.dist<@tp, [didx, serial]>>,
                          %b: tensor<32x48xf32, #fusion.dist<@tp, [serial, serial]>>)
    -> tensor<64x48xf32, #fusion.dist<@tp, [stream<4>, serial]>> {
  %g = fusion.set %a : tensor<64x32xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<64x32xf32, #fusion.dist<@tp, [stream<4>, serial]>>
  %c = fusion.matmul %g, %b : tensor<64x32xf32, #fusion.dist<@tp, [stream<4>, serial]>>, tensor<32x48xf32, #fusion.dist<@tp, [serial, serial]>> -> tensor<64x48xf32, #fusion.dist<@tp, [stream<4>, serial]>>
  return %c : tensor<64x48xf32, #fusion.dist<@tp, [stream<4>, serial]>>
}

// -----

// Attention streamed over a batch axis beside heads split over the devices:
// each iteration takes its slice of q, k, v and the output, and the mask
// whole; in k chunks, parts of the same rank.
// CHECK-LABEL: func.func @attention_stream(
// CHECK-SAME: [[Q:%[a-zA-Z0-9_]+]]: memref<4x2x8x16xf32>, [[K:%[a-zA-Z0-9_]+]]: memref<4x2x12x16xf32>, [[V:%[a-zA-Z0-9_]+]]: memref<4x2x12x8xf32>, [[M:%[a-zA-Z0-9_]+]]: memref<8x12xf32>, [[O:%[a-zA-Z0-9_]+]]: memref<4x2x8x8xf32>, [[P:%[a-zA-Z0-9_]+]]: memref<4x2x8x8xf32>) {
// CHECK: host.stream_for
// CHECK: [[QI:%[a-zA-Z0-9_]+]] = host.select [[Q]][0]
// CHECK-NEXT: [[KI:%[a-zA-Z0-9_]+]] = host.select [[K]][0]
// CHECK-NEXT: [[VI:%[a-zA-Z0-9_]+]] = host.select [[V]][0]
// CHECK-NEXT: [[OI:%[a-zA-Z0-9_]+]] = host.select [[O]][0]
// CHECK-NEXT: host.attention scale 2.500000e-01 causal ins([[QI]], [[KI]], [[VI]], [[M]] : memref<2x8x16xf32, strided<[128, 16, 1], offset: ?>>, memref<2x12x16xf32, strided<[192, 16, 1], offset: ?>>, memref<2x12x8xf32, strided<[96, 8, 1], offset: ?>>, memref<8x12xf32>) outs([[OI]] : memref<2x8x8xf32, strided<[64, 8, 1], offset: ?>>)
// CHECK: host.stream_for
// CHECK: [[QC:%[a-zA-Z0-9_]+]] = memref.subview [[Q]]
// CHECK-NEXT: [[KC:%[a-zA-Z0-9_]+]] = memref.subview [[K]]
// CHECK-NEXT: [[VC:%[a-zA-Z0-9_]+]] = memref.subview [[V]]
// CHECK-NEXT: [[PC:%[a-zA-Z0-9_]+]] = memref.subview [[P]]
// CHECK-NEXT: host.attention scale 2.500000e-01 causal ins([[QC]], [[KC]], [[VC]], [[M]] : memref<2x2x8x16xf32, strided<[256, 128, 16, 1], offset: ?>>, memref<2x2x12x16xf32, strided<[384, 192, 16, 1], offset: ?>>, memref<2x2x12x8xf32, strided<[192, 96, 8, 1], offset: ?>>, memref<8x12xf32>) outs([[PC]] : memref<2x2x8x8xf32, strided<[128, 64, 8, 1], offset: ?>>)
fusion.mesh @tp = [0, 1]
func.func @attention_stream(
    %q: tensor<4x4x8x16xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
    %k: tensor<4x4x12x16xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
    %v: tensor<4x4x12x8xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
    %m: tensor<8x12xf32, #fusion.dist<@tp, [serial, serial]>>)
    -> (tensor<4x4x8x8xf32, #fusion.dist<@tp, [stream, didx, serial, serial]>>,
        tensor<4x4x8x8xf32, #fusion.dist<@tp, [stream<2>, didx, serial, serial]>>) {
  %o = fusion.attention %q, %k, %v, %m causal
      : tensor<4x4x8x16xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
        tensor<4x4x12x16xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
        tensor<4x4x12x8xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
        tensor<8x12xf32, #fusion.dist<@tp, [serial, serial]>>
     -> tensor<4x4x8x8xf32, #fusion.dist<@tp, [stream, didx, serial, serial]>>
  %p = fusion.attention %q, %k, %v, %m causal
      : tensor<4x4x8x16xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
        tensor<4x4x12x16xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
        tensor<4x4x12x8xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
        tensor<8x12xf32, #fusion.dist<@tp, [serial, serial]>>
     -> tensor<4x4x8x8xf32, #fusion.dist<@tp, [stream<2>, didx, serial, serial]>>
  return %o, %p : tensor<4x4x8x8xf32, #fusion.dist<@tp, [stream, didx, serial, serial]>>,
                  tensor<4x4x8x8xf32, #fusion.dist<@tp, [stream<2>, didx, serial, serial]>>
}

// -----

// A contraction over a stream axis (streaming through a contraction): a
// loop over K's chunks, each operand's K taken in chunk i (the weight's, K
// serial, too); after the sync on the caller's stream, which orders the
// iterations' accumulations, iteration 0 writes the result with the bias,
// the others accumulate without it.
// CHECK-LABEL: func.func @streamed_contraction(
// CHECK-SAME: [[A:%[a-zA-Z0-9_]+]]: memref<8x64xf32>, [[W:%[a-zA-Z0-9_]+]]: memref<16x64xf32>, [[B:%[a-zA-Z0-9_]+]]: memref<16xf32>, [[Y:%[a-zA-Z0-9_]+]]: memref<8x16xf32>) {
// CHECK-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// CHECK-NEXT: [[H:%[a-zA-Z0-9_]+]] = host.alloc : memref<8x64xf32>
// CHECK:      host.neg
// CHECK:      host.stream_for %{{.+}} to %{{.+}} step %{{.+}} from [[MAIN]] {
// CHECK-NEXT: ^bb0([[I:%[a-zA-Z0-9_]+]]: index, %{{.+}}: !host.stream):
// CHECK-NEXT: [[C16:%[a-zA-Z0-9_]+]] = arith.constant 16 : index
// CHECK-NEXT: [[K:%[a-zA-Z0-9_]+]] = arith.muli [[I]], [[C16]] : index
// CHECK-NEXT: [[HI:%[a-zA-Z0-9_]+]] = memref.subview [[H]][0, [[K]]] [8, 16] [1, 1] : memref<8x64xf32> to memref<8x16xf32, strided<[64, 1], offset: ?>>
// CHECK-NEXT: [[WI:%[a-zA-Z0-9_]+]] = memref.subview [[W]][0, [[K]]] [16, 16] [1, 1] : memref<16x64xf32> to memref<16x16xf32, strided<[64, 1], offset: ?>>
// CHECK-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: [[FIRST:%[a-zA-Z0-9_]+]] = arith.cmpi eq, [[I]], [[C0]] : index
// CHECK-NEXT: host.sync_stream [[MAIN]]
// CHECK-NEXT: scf.if [[FIRST]] {
// CHECK-NEXT: host.linear ins([[HI]], [[WI]], [[B]] : {{.*}}) outs([[Y]] : memref<8x16xf32>)
// CHECK-NEXT: } else {
// CHECK-NEXT: host.linear ins([[HI]], [[WI]] : {{.*}}) outs([[Y]] : memref<8x16xf32>) {accumulate}
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: return
fusion.mesh @dev = [0]
func.func @streamed_contraction(%a: tensor<8x64xf32, #fusion.dist<@dev, [serial, serial]>>,
                                %w: tensor<16x64xf32, #fusion.dist<@dev, [serial, serial]>>,
                                %b: tensor<16xf32, #fusion.dist<@dev, [serial]>>)
    -> tensor<8x16xf32, #fusion.dist<@dev, [serial, serial]>> {
  %h = fusion.neg %a : tensor<8x64xf32, #fusion.dist<@dev, [serial, serial]>> -> tensor<8x64xf32, #fusion.dist<@dev, [serial, stream<4>]>>
  %y = fusion.linear %h, %w, %b : tensor<8x64xf32, #fusion.dist<@dev, [serial, stream<4>]>>, tensor<16x64xf32, #fusion.dist<@dev, [serial, serial]>>, tensor<16xf32, #fusion.dist<@dev, [serial]>> -> tensor<8x16xf32, #fusion.dist<@dev, [serial, serial]>>
  return %y : tensor<8x16xf32, #fusion.dist<@dev, [serial, serial]>>
}
