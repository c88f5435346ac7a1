// hir-lower on the multi-device examples (seed 001).
// For each example: the host program convert-fusion-to-host makes (after the
// fusion passes), then what hir-lower makes of it (stream loops, deallocs;
// the gathered slice an iteration alone reads is its own allocation, by
// host-privatize-buffers).
//
// RUN: hir-opt --pass-pipeline='builtin.module(fusion-propagate-sharding,fusion-verify-sharding,fusion-insert-resharding,convert-fusion-to-host)' %examples/allgather.mlir | FileCheck %s --check-prefix=ALLGATHER-HOST
// RUN: hir-opt --pass-pipeline='builtin.module(hir-lower)' %examples/allgather.mlir | FileCheck %s --check-prefix=ALLGATHER
// RUN: hir-opt --pass-pipeline='builtin.module(fusion-propagate-sharding,fusion-verify-sharding,fusion-insert-resharding,convert-fusion-to-host)' %examples/allreduce.mlir | FileCheck %s --check-prefix=ALLREDUCE-HOST
// RUN: hir-opt --pass-pipeline='builtin.module(hir-lower)' %examples/allreduce.mlir | FileCheck %s --check-prefix=ALLREDUCE
// RUN: hir-opt --pass-pipeline='builtin.module(fusion-propagate-sharding,fusion-verify-sharding,fusion-insert-resharding,convert-fusion-to-host)' %examples/reduce_scatter.mlir | FileCheck %s --check-prefix=REDUCE-SCATTER-HOST
// RUN: hir-opt --pass-pipeline='builtin.module(hir-lower)' %examples/reduce_scatter.mlir | FileCheck %s --check-prefix=REDUCE-SCATTER
// RUN: hir-opt --pass-pipeline='builtin.module(fusion-propagate-sharding,fusion-verify-sharding,fusion-insert-resharding,convert-fusion-to-host)' %examples/ag_matmul.mlir | FileCheck %s --check-prefix=AG-MATMUL-HOST
// RUN: hir-opt --pass-pipeline='builtin.module(hir-lower)' %examples/ag_matmul.mlir | FileCheck %s --check-prefix=AG-MATMUL
// RUN: hir-opt --pass-pipeline='builtin.module(fusion-propagate-sharding,fusion-verify-sharding,fusion-insert-resharding,convert-fusion-to-host)' %examples/ag_linear.mlir | FileCheck %s --check-prefix=AG-LINEAR-HOST
// RUN: hir-opt --pass-pipeline='builtin.module(hir-lower)' %examples/ag_linear.mlir | FileCheck %s --check-prefix=AG-LINEAR
// RUN: hir-opt --pass-pipeline='builtin.module(fusion-propagate-sharding,fusion-verify-sharding,fusion-insert-resharding,convert-fusion-to-host)' %examples/matmul_allreduce.mlir | FileCheck %s --check-prefix=MATMUL-ALLREDUCE-HOST
// RUN: hir-opt --pass-pipeline='builtin.module(hir-lower)' %examples/matmul_allreduce.mlir | FileCheck %s --check-prefix=MATMUL-ALLREDUCE
// RUN: hir-opt --pass-pipeline='builtin.module(fusion-propagate-sharding,fusion-verify-sharding,fusion-insert-resharding,convert-fusion-to-host)' %examples/matmul_reduce_scatter.mlir | FileCheck %s --check-prefix=MATMUL-REDUCE-SCATTER-HOST
// RUN: hir-opt --pass-pipeline='builtin.module(hir-lower)' %examples/matmul_reduce_scatter.mlir | FileCheck %s --check-prefix=MATMUL-REDUCE-SCATTER
// RUN: hir-opt --pass-pipeline='builtin.module(fusion-propagate-sharding,fusion-verify-sharding,fusion-insert-resharding,convert-fusion-to-host)' %examples/reshard_no_stream.mlir | FileCheck %s --check-prefix=RESHARD-NO-STREAM-HOST
// RUN: hir-opt --pass-pipeline='builtin.module(hir-lower)' %examples/reshard_no_stream.mlir | FileCheck %s --check-prefix=RESHARD-NO-STREAM

// ----- allgather.mlir: out = in, gathered along axis 1 and produced slice by slice along axis 0.

// ALLGATHER-HOST-LABEL: func.func @allgather(
// ALLGATHER-HOST-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<8x1xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<8x4xf32>) {
// ALLGATHER-HOST-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// ALLGATHER-HOST-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// ALLGATHER-HOST-NEXT: [[C8:%[a-zA-Z0-9_]+]] = arith.constant 8 : index
// ALLGATHER-HOST-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// ALLGATHER-HOST-NEXT: host.stream_for [[C0]] to [[C8]] step [[C1]] from [[MAIN]] {
// ALLGATHER-HOST-NEXT: ^bb0([[I:%[a-zA-Z0-9_]+]]: index, [[S:%[a-zA-Z0-9_]+]]: !host.stream):
// ALLGATHER-HOST-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[I]]{{\]}} : memref<8x1xf32> to memref<1xf32, strided<[1], offset: ?>>
// ALLGATHER-HOST-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[ARG1]][0]{{\[}}[[I]]{{\]}} : memref<8x4xf32> to memref<4xf32, strided<[1], offset: ?>>
// ALLGATHER-HOST-NEXT: [[REQ:%[a-zA-Z0-9_]+]] = comm.allgather [[VIEW]] into [[VIEW_1]] team [0, 1, 2, 3] : memref<1xf32, strided<[1], offset: ?>> into memref<4xf32, strided<[1], offset: ?>>
// ALLGATHER-HOST-NEXT: comm.wait [[REQ]]
// ALLGATHER-HOST-NEXT: }
// ALLGATHER-HOST-NEXT: return
// ALLGATHER-HOST-NEXT: }

// ALLGATHER-LABEL: func.func @allgather(
// ALLGATHER-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<8x1xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<8x4xf32>) {
// ALLGATHER-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// ALLGATHER-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// ALLGATHER-NEXT: [[C8:%[a-zA-Z0-9_]+]] = arith.constant 8 : index
// ALLGATHER-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// ALLGATHER-NEXT: scf.for [[I:%[a-zA-Z0-9_]+]] = [[C0]] to [[C8]] step [[C1]] {
// ALLGATHER-NEXT: [[S:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I]] : !host.stream
// ALLGATHER-NEXT: host.set_current_stream [[S]]
// ALLGATHER-NEXT: host.sync_stream [[MAIN]]
// ALLGATHER-NEXT: }
// ALLGATHER-NEXT: scf.for [[I_1:%[a-zA-Z0-9_]+]] = [[C0]] to [[C8]] step [[C1]] {
// ALLGATHER-NEXT: [[S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I_1]] : !host.stream
// ALLGATHER-NEXT: host.set_current_stream [[S_1]]
// ALLGATHER-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[I_1]]{{\]}} : memref<8x1xf32> to memref<1xf32, strided<[1], offset: ?>>
// ALLGATHER-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[ARG1]][0]{{\[}}[[I_1]]{{\]}} : memref<8x4xf32> to memref<4xf32, strided<[1], offset: ?>>
// ALLGATHER-NEXT: [[REQ:%[a-zA-Z0-9_]+]] = comm.allgather [[VIEW]] into [[VIEW_1]] team [0, 1, 2, 3] : memref<1xf32, strided<[1], offset: ?>> into memref<4xf32, strided<[1], offset: ?>>
// ALLGATHER-NEXT: comm.wait [[REQ]]
// ALLGATHER-NEXT: }
// ALLGATHER-NEXT: host.set_current_stream [[MAIN]]
// ALLGATHER-NEXT: scf.for [[JOIN_I_1:%[a-zA-Z0-9_]+]] = [[C0]] to [[C8]] step [[C1]] {
// ALLGATHER-NEXT: [[JOIN_S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[JOIN_I_1]] : !host.stream
// ALLGATHER-NEXT: host.sync_stream [[JOIN_S_1]]
// ALLGATHER-NEXT: }
// ALLGATHER-NEXT: return
// ALLGATHER-NEXT: }

// ----- allreduce.mlir: out[s, n] = sum_d in[s, d, n], where axis d is sharded over the mesh.

// ALLREDUCE-HOST-LABEL: func.func @allreduce(
// ALLREDUCE-HOST-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<4x1x16xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<4x16xf32>) {
// ALLREDUCE-HOST-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// ALLREDUCE-HOST-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// ALLREDUCE-HOST-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][1]{{\[}}[[C0]]{{\]}} : memref<4x1x16xf32> to memref<4x16xf32, strided<[16, 1], offset: ?>>
// ALLREDUCE-HOST-NEXT: [[C0_1:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// ALLREDUCE-HOST-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// ALLREDUCE-HOST-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// ALLREDUCE-HOST-NEXT: host.stream_for [[C0_1]] to [[C4]] step [[C1]] from [[MAIN]] {
// ALLREDUCE-HOST-NEXT: ^bb0([[I:%[a-zA-Z0-9_]+]]: index, [[S:%[a-zA-Z0-9_]+]]: !host.stream):
// ALLREDUCE-HOST-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[VIEW]][0]{{\[}}[[I]]{{\]}} : memref<4x16xf32, strided<[16, 1], offset: ?>> to memref<16xf32, strided<[1], offset: ?>>
// ALLREDUCE-HOST-NEXT: [[VIEW_2:%[a-zA-Z0-9_]+]] = host.select [[ARG1]][0]{{\[}}[[I]]{{\]}} : memref<4x16xf32> to memref<16xf32, strided<[1], offset: ?>>
// ALLREDUCE-HOST-NEXT: [[REQ:%[a-zA-Z0-9_]+]] = comm.allreduce [[VIEW_1]] into [[VIEW_2]] sum team [0, 1, 2, 3] : memref<16xf32, strided<[1], offset: ?>> into memref<16xf32, strided<[1], offset: ?>>
// ALLREDUCE-HOST-NEXT: comm.wait [[REQ]]
// ALLREDUCE-HOST-NEXT: }
// ALLREDUCE-HOST-NEXT: return
// ALLREDUCE-HOST-NEXT: }

// ALLREDUCE-LABEL: func.func @allreduce(
// ALLREDUCE-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<4x1x16xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<4x16xf32>) {
// ALLREDUCE-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// ALLREDUCE-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// ALLREDUCE-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][1]{{\[}}[[C0]]{{\]}} : memref<4x1x16xf32> to memref<4x16xf32, strided<[16, 1], offset: ?>>
// ALLREDUCE-NEXT: [[C00:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// ALLREDUCE-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// ALLREDUCE-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// ALLREDUCE-NEXT: scf.for [[I:%[a-zA-Z0-9_]+]] = [[C00]] to [[C4]] step [[C1]] {
// ALLREDUCE-NEXT: [[S:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I]] : !host.stream
// ALLREDUCE-NEXT: host.set_current_stream [[S]]
// ALLREDUCE-NEXT: host.sync_stream [[MAIN]]
// ALLREDUCE-NEXT: }
// ALLREDUCE-NEXT: scf.for [[I_1:%[a-zA-Z0-9_]+]] = [[C00]] to [[C4]] step [[C1]] {
// ALLREDUCE-NEXT: [[S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I_1]] : !host.stream
// ALLREDUCE-NEXT: host.set_current_stream [[S_1]]
// ALLREDUCE-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[VIEW]][0]{{\[}}[[I_1]]{{\]}} : memref<4x16xf32, strided<[16, 1], offset: ?>> to memref<16xf32, strided<[1], offset: ?>>
// ALLREDUCE-NEXT: [[VIEW_2:%[a-zA-Z0-9_]+]] = host.select [[ARG1]][0]{{\[}}[[I_1]]{{\]}} : memref<4x16xf32> to memref<16xf32, strided<[1], offset: ?>>
// ALLREDUCE-NEXT: [[REQ:%[a-zA-Z0-9_]+]] = comm.allreduce [[VIEW_1]] into [[VIEW_2]] sum team [0, 1, 2, 3] : memref<16xf32, strided<[1], offset: ?>> into memref<16xf32, strided<[1], offset: ?>>
// ALLREDUCE-NEXT: comm.wait [[REQ]]
// ALLREDUCE-NEXT: }
// ALLREDUCE-NEXT: host.set_current_stream [[MAIN]]
// ALLREDUCE-NEXT: scf.for [[JOIN_I_1:%[a-zA-Z0-9_]+]] = [[C00]] to [[C4]] step [[C1]] {
// ALLREDUCE-NEXT: [[JOIN_S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[JOIN_I_1]] : !host.stream
// ALLREDUCE-NEXT: host.sync_stream [[JOIN_S_1]]
// ALLREDUCE-NEXT: }
// ALLREDUCE-NEXT: return
// ALLREDUCE-NEXT: }

// ----- reduce_scatter.mlir: out[s, e, n] = sum_d in[s, d, e, n]; device d keeps out[:, d, :].

// REDUCE-SCATTER-HOST-LABEL: func.func @reduce_scatter(
// REDUCE-SCATTER-HOST-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<4x1x4x16xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<4x1x16xf32>) {
// REDUCE-SCATTER-HOST-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// REDUCE-SCATTER-HOST-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// REDUCE-SCATTER-HOST-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][1]{{\[}}[[C0]]{{\]}} : memref<4x1x4x16xf32> to memref<4x4x16xf32, strided<[64, 16, 1], offset: ?>>
// REDUCE-SCATTER-HOST-NEXT: [[C0_1:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// REDUCE-SCATTER-HOST-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// REDUCE-SCATTER-HOST-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// REDUCE-SCATTER-HOST-NEXT: host.stream_for [[C0_1]] to [[C4]] step [[C1]] from [[MAIN]] {
// REDUCE-SCATTER-HOST-NEXT: ^bb0([[I:%[a-zA-Z0-9_]+]]: index, [[S:%[a-zA-Z0-9_]+]]: !host.stream):
// REDUCE-SCATTER-HOST-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[VIEW]][0]{{\[}}[[I]]{{\]}} : memref<4x4x16xf32, strided<[64, 16, 1], offset: ?>> to memref<4x16xf32, strided<[16, 1], offset: ?>>
// REDUCE-SCATTER-HOST-NEXT: [[VIEW_2:%[a-zA-Z0-9_]+]] = host.select [[ARG1]][0]{{\[}}[[I]]{{\]}} : memref<4x1x16xf32> to memref<1x16xf32, strided<[16, 1], offset: ?>>
// REDUCE-SCATTER-HOST-NEXT: [[REQ:%[a-zA-Z0-9_]+]] = comm.reduce_scatter [[VIEW_1]] into [[VIEW_2]] sum team [0, 1, 2, 3] : memref<4x16xf32, strided<[16, 1], offset: ?>> into memref<1x16xf32, strided<[16, 1], offset: ?>>
// REDUCE-SCATTER-HOST-NEXT: comm.wait [[REQ]]
// REDUCE-SCATTER-HOST-NEXT: }
// REDUCE-SCATTER-HOST-NEXT: return
// REDUCE-SCATTER-HOST-NEXT: }

// REDUCE-SCATTER-LABEL: func.func @reduce_scatter(
// REDUCE-SCATTER-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<4x1x4x16xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<4x1x16xf32>) {
// REDUCE-SCATTER-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// REDUCE-SCATTER-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// REDUCE-SCATTER-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][1]{{\[}}[[C0]]{{\]}} : memref<4x1x4x16xf32> to memref<4x4x16xf32, strided<[64, 16, 1], offset: ?>>
// REDUCE-SCATTER-NEXT: [[C00:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// REDUCE-SCATTER-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// REDUCE-SCATTER-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// REDUCE-SCATTER-NEXT: scf.for [[I:%[a-zA-Z0-9_]+]] = [[C00]] to [[C4]] step [[C1]] {
// REDUCE-SCATTER-NEXT: [[S:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I]] : !host.stream
// REDUCE-SCATTER-NEXT: host.set_current_stream [[S]]
// REDUCE-SCATTER-NEXT: host.sync_stream [[MAIN]]
// REDUCE-SCATTER-NEXT: }
// REDUCE-SCATTER-NEXT: scf.for [[I_1:%[a-zA-Z0-9_]+]] = [[C00]] to [[C4]] step [[C1]] {
// REDUCE-SCATTER-NEXT: [[S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I_1]] : !host.stream
// REDUCE-SCATTER-NEXT: host.set_current_stream [[S_1]]
// REDUCE-SCATTER-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[VIEW]][0]{{\[}}[[I_1]]{{\]}} : memref<4x4x16xf32, strided<[64, 16, 1], offset: ?>> to memref<4x16xf32, strided<[16, 1], offset: ?>>
// REDUCE-SCATTER-NEXT: [[VIEW_2:%[a-zA-Z0-9_]+]] = host.select [[ARG1]][0]{{\[}}[[I_1]]{{\]}} : memref<4x1x16xf32> to memref<1x16xf32, strided<[16, 1], offset: ?>>
// REDUCE-SCATTER-NEXT: [[REQ:%[a-zA-Z0-9_]+]] = comm.reduce_scatter [[VIEW_1]] into [[VIEW_2]] sum team [0, 1, 2, 3] : memref<4x16xf32, strided<[16, 1], offset: ?>> into memref<1x16xf32, strided<[16, 1], offset: ?>>
// REDUCE-SCATTER-NEXT: comm.wait [[REQ]]
// REDUCE-SCATTER-NEXT: }
// REDUCE-SCATTER-NEXT: host.set_current_stream [[MAIN]]
// REDUCE-SCATTER-NEXT: scf.for [[JOIN_I_1:%[a-zA-Z0-9_]+]] = [[C00]] to [[C4]] step [[C1]] {
// REDUCE-SCATTER-NEXT: [[JOIN_S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[JOIN_I_1]] : !host.stream
// REDUCE-SCATTER-NEXT: host.sync_stream [[JOIN_S_1]]
// REDUCE-SCATTER-NEXT: }
// REDUCE-SCATTER-NEXT: return
// REDUCE-SCATTER-NEXT: }

// ----- ag_matmul.mlir: C = A @ B; A: [S, DIDx(D), M/(S*D), K], B: [K, N] -> C: [Stream(S), D, M/(S*D), N]

// AG-MATMUL-HOST-LABEL: func.func @ag_matmul(
// AG-MATMUL-HOST-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<4x1x256x1024xbf16>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<1024x2048xbf16>, [[ARG2:%[a-zA-Z0-9_]+]]: memref<4x4x256x2048xbf16>) {
// AG-MATMUL-HOST-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// AG-MATMUL-HOST-NEXT: [[BUF:%[a-zA-Z0-9_]+]] = host.alloc : memref<4x4x256x1024xbf16>
// AG-MATMUL-HOST-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// AG-MATMUL-HOST-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// AG-MATMUL-HOST-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// AG-MATMUL-HOST-NEXT: host.stream_for [[C0]] to [[C4]] step [[C1]] from [[MAIN]] {
// AG-MATMUL-HOST-NEXT: ^bb0([[I:%[a-zA-Z0-9_]+]]: index, [[S:%[a-zA-Z0-9_]+]]: !host.stream):
// AG-MATMUL-HOST-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[I]]{{\]}} : memref<4x1x256x1024xbf16> to memref<1x256x1024xbf16, strided<[262144, 1024, 1], offset: ?>>
// AG-MATMUL-HOST-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[BUF]][0]{{\[}}[[I]]{{\]}} : memref<4x4x256x1024xbf16> to memref<4x256x1024xbf16, strided<[262144, 1024, 1], offset: ?>>
// AG-MATMUL-HOST-NEXT: [[REQ:%[a-zA-Z0-9_]+]] = comm.allgather [[VIEW]] into [[VIEW_1]] team [0, 1, 2, 3] : memref<1x256x1024xbf16, strided<[262144, 1024, 1], offset: ?>> into memref<4x256x1024xbf16, strided<[262144, 1024, 1], offset: ?>>
// AG-MATMUL-HOST-NEXT: comm.wait [[REQ]]
// AG-MATMUL-HOST-NEXT: }
// AG-MATMUL-HOST-NEXT: [[C0_1:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// AG-MATMUL-HOST-NEXT: [[C4_1:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// AG-MATMUL-HOST-NEXT: [[C1_1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// AG-MATMUL-HOST-NEXT: host.stream_for [[C0_1]] to [[C4_1]] step [[C1_1]] from [[MAIN]] {
// AG-MATMUL-HOST-NEXT: ^bb0([[I_1:%[a-zA-Z0-9_]+]]: index, [[S_1:%[a-zA-Z0-9_]+]]: !host.stream):
// AG-MATMUL-HOST-NEXT: [[VIEW_2:%[a-zA-Z0-9_]+]] = host.select [[BUF]][0]{{\[}}[[I_1]]{{\]}} : memref<4x4x256x1024xbf16> to memref<4x256x1024xbf16, strided<[262144, 1024, 1], offset: ?>>
// AG-MATMUL-HOST-NEXT: [[VIEW_3:%[a-zA-Z0-9_]+]] = host.select [[ARG2]][0]{{\[}}[[I_1]]{{\]}} : memref<4x4x256x2048xbf16> to memref<4x256x2048xbf16, strided<[524288, 2048, 1], offset: ?>>
// AG-MATMUL-HOST-NEXT: host.matmul ins([[VIEW_2]], [[ARG1]] : memref<4x256x1024xbf16, strided<[262144, 1024, 1], offset: ?>>, memref<1024x2048xbf16>) outs([[VIEW_3]] : memref<4x256x2048xbf16, strided<[524288, 2048, 1], offset: ?>>)
// AG-MATMUL-HOST-NEXT: }
// AG-MATMUL-HOST-NEXT: return
// AG-MATMUL-HOST-NEXT: }

// AG-MATMUL-LABEL: func.func @ag_matmul(
// AG-MATMUL-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<4x1x256x1024xbf16>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<1024x2048xbf16>, [[ARG2:%[a-zA-Z0-9_]+]]: memref<4x4x256x2048xbf16>) {
// AG-MATMUL-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// AG-MATMUL-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// AG-MATMUL-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// AG-MATMUL-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// AG-MATMUL-NEXT: scf.for [[I:%[a-zA-Z0-9_]+]] = [[C0]] to [[C4]] step [[C1]] {
// AG-MATMUL-NEXT: [[S:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I]] : !host.stream
// AG-MATMUL-NEXT: host.set_current_stream [[S]]
// AG-MATMUL-NEXT: host.sync_stream [[MAIN]]
// AG-MATMUL-NEXT: }
// AG-MATMUL-NEXT: scf.for [[I_1:%[a-zA-Z0-9_]+]] = [[C0]] to [[C4]] step [[C1]] {
// AG-MATMUL-NEXT: [[S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I_1]] : !host.stream
// AG-MATMUL-NEXT: host.set_current_stream [[S_1]]
// AG-MATMUL-NEXT: [[BUF:%[a-zA-Z0-9_]+]] = host.alloc : memref<4x256x1024xbf16>
// AG-MATMUL-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[I_1]]{{\]}} : memref<4x1x256x1024xbf16> to memref<1x256x1024xbf16, strided<[262144, 1024, 1], offset: ?>>
// AG-MATMUL-NEXT: [[REQ:%[a-zA-Z0-9_]+]] = comm.allgather [[VIEW]] into [[BUF]] team [0, 1, 2, 3] : memref<1x256x1024xbf16, strided<[262144, 1024, 1], offset: ?>> into memref<4x256x1024xbf16>
// AG-MATMUL-NEXT: comm.wait [[REQ]]
// AG-MATMUL-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[ARG2]][0]{{\[}}[[I_1]]{{\]}} : memref<4x4x256x2048xbf16> to memref<4x256x2048xbf16, strided<[524288, 2048, 1], offset: ?>>
// AG-MATMUL-NEXT: host.matmul ins([[BUF]], [[ARG1]] : memref<4x256x1024xbf16>, memref<1024x2048xbf16>) outs([[VIEW_1]] : memref<4x256x2048xbf16, strided<[524288, 2048, 1], offset: ?>>)
// AG-MATMUL-NEXT: host.dealloc [[BUF]] : memref<4x256x1024xbf16>
// AG-MATMUL-NEXT: }
// AG-MATMUL-NEXT: host.set_current_stream [[MAIN]]
// AG-MATMUL-NEXT: scf.for [[JOIN_I_1:%[a-zA-Z0-9_]+]] = [[C0]] to [[C4]] step [[C1]] {
// AG-MATMUL-NEXT: [[JOIN_S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[JOIN_I_1]] : !host.stream
// AG-MATMUL-NEXT: host.sync_stream [[JOIN_S_1]]
// AG-MATMUL-NEXT: }
// AG-MATMUL-NEXT: return
// AG-MATMUL-NEXT: }

// ----- ag_linear.mlir: Y = X @ W^T + bias; X: [S, DIDx(D), M/(S*D), K], W: [N, K], bias: [N] -> Y: [Stream(S), D, M/(S*D), N]

// AG-LINEAR-HOST-LABEL: func.func @ag_linear(
// AG-LINEAR-HOST-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<4x1x8x32xbf16>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<16x32xbf16>, [[ARG2:%[a-zA-Z0-9_]+]]: memref<16xbf16>, [[ARG3:%[a-zA-Z0-9_]+]]: memref<4x4x8x16xbf16>) {
// AG-LINEAR-HOST-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// AG-LINEAR-HOST-NEXT: [[BUF:%[a-zA-Z0-9_]+]] = host.alloc : memref<4x4x8x32xbf16>
// AG-LINEAR-HOST-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// AG-LINEAR-HOST-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// AG-LINEAR-HOST-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// AG-LINEAR-HOST-NEXT: host.stream_for [[C0]] to [[C4]] step [[C1]] from [[MAIN]] {
// AG-LINEAR-HOST-NEXT: ^bb0([[I:%[a-zA-Z0-9_]+]]: index, [[S:%[a-zA-Z0-9_]+]]: !host.stream):
// AG-LINEAR-HOST-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[I]]{{\]}} : memref<4x1x8x32xbf16> to memref<1x8x32xbf16, strided<[256, 32, 1], offset: ?>>
// AG-LINEAR-HOST-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[BUF]][0]{{\[}}[[I]]{{\]}} : memref<4x4x8x32xbf16> to memref<4x8x32xbf16, strided<[256, 32, 1], offset: ?>>
// AG-LINEAR-HOST-NEXT: [[REQ:%[a-zA-Z0-9_]+]] = comm.allgather [[VIEW]] into [[VIEW_1]] team [0, 1, 2, 3] : memref<1x8x32xbf16, strided<[256, 32, 1], offset: ?>> into memref<4x8x32xbf16, strided<[256, 32, 1], offset: ?>>
// AG-LINEAR-HOST-NEXT: comm.wait [[REQ]]
// AG-LINEAR-HOST-NEXT: }
// AG-LINEAR-HOST-NEXT: [[C0_1:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// AG-LINEAR-HOST-NEXT: [[C4_1:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// AG-LINEAR-HOST-NEXT: [[C1_1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// AG-LINEAR-HOST-NEXT: host.stream_for [[C0_1]] to [[C4_1]] step [[C1_1]] from [[MAIN]] {
// AG-LINEAR-HOST-NEXT: ^bb0([[I_1:%[a-zA-Z0-9_]+]]: index, [[S_1:%[a-zA-Z0-9_]+]]: !host.stream):
// AG-LINEAR-HOST-NEXT: [[VIEW_2:%[a-zA-Z0-9_]+]] = host.select [[BUF]][0]{{\[}}[[I_1]]{{\]}} : memref<4x4x8x32xbf16> to memref<4x8x32xbf16, strided<[256, 32, 1], offset: ?>>
// AG-LINEAR-HOST-NEXT: [[VIEW_3:%[a-zA-Z0-9_]+]] = host.select [[ARG3]][0]{{\[}}[[I_1]]{{\]}} : memref<4x4x8x16xbf16> to memref<4x8x16xbf16, strided<[128, 16, 1], offset: ?>>
// AG-LINEAR-HOST-NEXT: host.linear ins([[VIEW_2]], [[ARG1]], [[ARG2]] : memref<4x8x32xbf16, strided<[256, 32, 1], offset: ?>>, memref<16x32xbf16>, memref<16xbf16>) outs([[VIEW_3]] : memref<4x8x16xbf16, strided<[128, 16, 1], offset: ?>>)
// AG-LINEAR-HOST-NEXT: }
// AG-LINEAR-HOST-NEXT: return
// AG-LINEAR-HOST-NEXT: }

// AG-LINEAR-LABEL: func.func @ag_linear(
// AG-LINEAR-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<4x1x8x32xbf16>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<16x32xbf16>, [[ARG2:%[a-zA-Z0-9_]+]]: memref<16xbf16>, [[ARG3:%[a-zA-Z0-9_]+]]: memref<4x4x8x16xbf16>) {
// AG-LINEAR-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// AG-LINEAR-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// AG-LINEAR-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// AG-LINEAR-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// AG-LINEAR-NEXT: scf.for [[I:%[a-zA-Z0-9_]+]] = [[C0]] to [[C4]] step [[C1]] {
// AG-LINEAR-NEXT: [[S:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I]] : !host.stream
// AG-LINEAR-NEXT: host.set_current_stream [[S]]
// AG-LINEAR-NEXT: host.sync_stream [[MAIN]]
// AG-LINEAR-NEXT: }
// AG-LINEAR-NEXT: scf.for [[I_1:%[a-zA-Z0-9_]+]] = [[C0]] to [[C4]] step [[C1]] {
// AG-LINEAR-NEXT: [[S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I_1]] : !host.stream
// AG-LINEAR-NEXT: host.set_current_stream [[S_1]]
// AG-LINEAR-NEXT: [[BUF:%[a-zA-Z0-9_]+]] = host.alloc : memref<4x8x32xbf16>
// AG-LINEAR-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[I_1]]{{\]}} : memref<4x1x8x32xbf16> to memref<1x8x32xbf16, strided<[256, 32, 1], offset: ?>>
// AG-LINEAR-NEXT: [[REQ:%[a-zA-Z0-9_]+]] = comm.allgather [[VIEW]] into [[BUF]] team [0, 1, 2, 3] : memref<1x8x32xbf16, strided<[256, 32, 1], offset: ?>> into memref<4x8x32xbf16>
// AG-LINEAR-NEXT: comm.wait [[REQ]]
// AG-LINEAR-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[ARG3]][0]{{\[}}[[I_1]]{{\]}} : memref<4x4x8x16xbf16> to memref<4x8x16xbf16, strided<[128, 16, 1], offset: ?>>
// AG-LINEAR-NEXT: host.linear ins([[BUF]], [[ARG1]], [[ARG2]] : memref<4x8x32xbf16>, memref<16x32xbf16>, memref<16xbf16>) outs([[VIEW_1]] : memref<4x8x16xbf16, strided<[128, 16, 1], offset: ?>>)
// AG-LINEAR-NEXT: host.dealloc [[BUF]] : memref<4x8x32xbf16>
// AG-LINEAR-NEXT: }
// AG-LINEAR-NEXT: host.set_current_stream [[MAIN]]
// AG-LINEAR-NEXT: scf.for [[JOIN_I_1:%[a-zA-Z0-9_]+]] = [[C0]] to [[C4]] step [[C1]] {
// AG-LINEAR-NEXT: [[JOIN_S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[JOIN_I_1]] : !host.stream
// AG-LINEAR-NEXT: host.sync_stream [[JOIN_S_1]]
// AG-LINEAR-NEXT: }
// AG-LINEAR-NEXT: return
// AG-LINEAR-NEXT: }

// ----- matmul_allreduce.mlir: C = sum_d A[:, d] @ B[d]; A: [S, DIDx(D), M/S, K/D], B: [DIDx(D), K/D, N] -> C: [Stream(S), M/S, N]

// MATMUL-ALLREDUCE-HOST-LABEL: func.func @matmul_allreduce(
// MATMUL-ALLREDUCE-HOST-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<4x1x8x8xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<1x8x16xf32>, [[ARG2:%[a-zA-Z0-9_]+]]: memref<4x8x16xf32>) {
// MATMUL-ALLREDUCE-HOST-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// MATMUL-ALLREDUCE-HOST-NEXT: [[BUF:%[a-zA-Z0-9_]+]] = host.alloc : memref<4x1x8x16xf32>
// MATMUL-ALLREDUCE-HOST-NEXT: host.broadcast [0] ins([[ARG1]] : memref<1x8x16xf32>) outs([[BUF]] : memref<4x1x8x16xf32>)
// MATMUL-ALLREDUCE-HOST-NEXT: [[BUF_1:%[a-zA-Z0-9_]+]] = host.alloc : memref<4x1x8x16xf32>
// MATMUL-ALLREDUCE-HOST-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// MATMUL-ALLREDUCE-HOST-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// MATMUL-ALLREDUCE-HOST-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// MATMUL-ALLREDUCE-HOST-NEXT: host.stream_for [[C0]] to [[C4]] step [[C1]] from [[MAIN]] {
// MATMUL-ALLREDUCE-HOST-NEXT: ^bb0([[I:%[a-zA-Z0-9_]+]]: index, [[S:%[a-zA-Z0-9_]+]]: !host.stream):
// MATMUL-ALLREDUCE-HOST-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[I]]{{\]}} : memref<4x1x8x8xf32> to memref<1x8x8xf32, strided<[64, 8, 1], offset: ?>>
// MATMUL-ALLREDUCE-HOST-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[BUF]][0]{{\[}}[[I]]{{\]}} : memref<4x1x8x16xf32> to memref<1x8x16xf32, strided<[128, 16, 1], offset: ?>>
// MATMUL-ALLREDUCE-HOST-NEXT: [[VIEW_2:%[a-zA-Z0-9_]+]] = host.select [[BUF_1]][0]{{\[}}[[I]]{{\]}} : memref<4x1x8x16xf32> to memref<1x8x16xf32, strided<[128, 16, 1], offset: ?>>
// MATMUL-ALLREDUCE-HOST-NEXT: host.matmul ins([[VIEW]], [[VIEW_1]] : memref<1x8x8xf32, strided<[64, 8, 1], offset: ?>>, memref<1x8x16xf32, strided<[128, 16, 1], offset: ?>>) outs([[VIEW_2]] : memref<1x8x16xf32, strided<[128, 16, 1], offset: ?>>)
// MATMUL-ALLREDUCE-HOST-NEXT: }
// MATMUL-ALLREDUCE-HOST-NEXT: [[C0_1:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// MATMUL-ALLREDUCE-HOST-NEXT: [[VIEW_3:%[a-zA-Z0-9_]+]] = host.select [[BUF_1]][1]{{\[}}[[C0_1]]{{\]}} : memref<4x1x8x16xf32> to memref<4x8x16xf32, strided<[128, 16, 1], offset: ?>>
// MATMUL-ALLREDUCE-HOST-NEXT: [[C0_2:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// MATMUL-ALLREDUCE-HOST-NEXT: [[C4_1:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// MATMUL-ALLREDUCE-HOST-NEXT: [[C1_1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// MATMUL-ALLREDUCE-HOST-NEXT: host.stream_for [[C0_2]] to [[C4_1]] step [[C1_1]] from [[MAIN]] {
// MATMUL-ALLREDUCE-HOST-NEXT: ^bb0([[I_1:%[a-zA-Z0-9_]+]]: index, [[S_1:%[a-zA-Z0-9_]+]]: !host.stream):
// MATMUL-ALLREDUCE-HOST-NEXT: [[VIEW_4:%[a-zA-Z0-9_]+]] = host.select [[VIEW_3]][0]{{\[}}[[I_1]]{{\]}} : memref<4x8x16xf32, strided<[128, 16, 1], offset: ?>> to memref<8x16xf32, strided<[16, 1], offset: ?>>
// MATMUL-ALLREDUCE-HOST-NEXT: [[VIEW_5:%[a-zA-Z0-9_]+]] = host.select [[ARG2]][0]{{\[}}[[I_1]]{{\]}} : memref<4x8x16xf32> to memref<8x16xf32, strided<[16, 1], offset: ?>>
// MATMUL-ALLREDUCE-HOST-NEXT: [[REQ:%[a-zA-Z0-9_]+]] = comm.allreduce [[VIEW_4]] into [[VIEW_5]] sum team [0, 1, 2, 3] : memref<8x16xf32, strided<[16, 1], offset: ?>> into memref<8x16xf32, strided<[16, 1], offset: ?>>
// MATMUL-ALLREDUCE-HOST-NEXT: comm.wait [[REQ]]
// MATMUL-ALLREDUCE-HOST-NEXT: }
// MATMUL-ALLREDUCE-HOST-NEXT: return
// MATMUL-ALLREDUCE-HOST-NEXT: }

// MATMUL-ALLREDUCE-LABEL: func.func @matmul_allreduce(
// MATMUL-ALLREDUCE-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<4x1x8x8xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<1x8x16xf32>, [[ARG2:%[a-zA-Z0-9_]+]]: memref<4x8x16xf32>) {
// MATMUL-ALLREDUCE-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// MATMUL-ALLREDUCE-NEXT: [[BUF:%[a-zA-Z0-9_]+]] = host.alloc : memref<4x1x8x16xf32>
// MATMUL-ALLREDUCE-NEXT: host.broadcast [0] ins([[ARG1]] : memref<1x8x16xf32>) outs([[BUF]] : memref<4x1x8x16xf32>)
// MATMUL-ALLREDUCE-NEXT: [[BUF_1:%[a-zA-Z0-9_]+]] = host.alloc : memref<4x1x8x16xf32>
// MATMUL-ALLREDUCE-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// MATMUL-ALLREDUCE-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[BUF_1]][1]{{\[}}[[C0]]{{\]}} : memref<4x1x8x16xf32> to memref<4x8x16xf32, strided<[128, 16, 1], offset: ?>>
// MATMUL-ALLREDUCE-NEXT: [[C00:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// MATMUL-ALLREDUCE-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// MATMUL-ALLREDUCE-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// MATMUL-ALLREDUCE-NEXT: scf.for [[I:%[a-zA-Z0-9_]+]] = [[C00]] to [[C4]] step [[C1]] {
// MATMUL-ALLREDUCE-NEXT: [[S:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I]] : !host.stream
// MATMUL-ALLREDUCE-NEXT: host.set_current_stream [[S]]
// MATMUL-ALLREDUCE-NEXT: host.sync_stream [[MAIN]]
// MATMUL-ALLREDUCE-NEXT: }
// MATMUL-ALLREDUCE-NEXT: scf.for [[I_1:%[a-zA-Z0-9_]+]] = [[C00]] to [[C4]] step [[C1]] {
// MATMUL-ALLREDUCE-NEXT: [[S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I_1]] : !host.stream
// MATMUL-ALLREDUCE-NEXT: host.set_current_stream [[S_1]]
// MATMUL-ALLREDUCE-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[I_1]]{{\]}} : memref<4x1x8x8xf32> to memref<1x8x8xf32, strided<[64, 8, 1], offset: ?>>
// MATMUL-ALLREDUCE-NEXT: [[VIEW_2:%[a-zA-Z0-9_]+]] = host.select [[BUF]][0]{{\[}}[[I_1]]{{\]}} : memref<4x1x8x16xf32> to memref<1x8x16xf32, strided<[128, 16, 1], offset: ?>>
// MATMUL-ALLREDUCE-NEXT: [[VIEW_3:%[a-zA-Z0-9_]+]] = host.select [[BUF_1]][0]{{\[}}[[I_1]]{{\]}} : memref<4x1x8x16xf32> to memref<1x8x16xf32, strided<[128, 16, 1], offset: ?>>
// MATMUL-ALLREDUCE-NEXT: host.matmul ins([[VIEW_1]], [[VIEW_2]] : memref<1x8x8xf32, strided<[64, 8, 1], offset: ?>>, memref<1x8x16xf32, strided<[128, 16, 1], offset: ?>>) outs([[VIEW_3]] : memref<1x8x16xf32, strided<[128, 16, 1], offset: ?>>)
// MATMUL-ALLREDUCE-NEXT: [[VIEW_4:%[a-zA-Z0-9_]+]] = host.select [[VIEW]][0]{{\[}}[[I_1]]{{\]}} : memref<4x8x16xf32, strided<[128, 16, 1], offset: ?>> to memref<8x16xf32, strided<[16, 1], offset: ?>>
// MATMUL-ALLREDUCE-NEXT: [[VIEW_5:%[a-zA-Z0-9_]+]] = host.select [[ARG2]][0]{{\[}}[[I_1]]{{\]}} : memref<4x8x16xf32> to memref<8x16xf32, strided<[16, 1], offset: ?>>
// MATMUL-ALLREDUCE-NEXT: [[REQ:%[a-zA-Z0-9_]+]] = comm.allreduce [[VIEW_4]] into [[VIEW_5]] sum team [0, 1, 2, 3] : memref<8x16xf32, strided<[16, 1], offset: ?>> into memref<8x16xf32, strided<[16, 1], offset: ?>>
// MATMUL-ALLREDUCE-NEXT: comm.wait [[REQ]]
// MATMUL-ALLREDUCE-NEXT: }
// MATMUL-ALLREDUCE-NEXT: host.set_current_stream [[MAIN]]
// MATMUL-ALLREDUCE-NEXT: scf.for [[JOIN_I_1:%[a-zA-Z0-9_]+]] = [[C00]] to [[C4]] step [[C1]] {
// MATMUL-ALLREDUCE-NEXT: [[JOIN_S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[JOIN_I_1]] : !host.stream
// MATMUL-ALLREDUCE-NEXT: host.sync_stream [[JOIN_S_1]]
// MATMUL-ALLREDUCE-NEXT: }
// MATMUL-ALLREDUCE-NEXT: host.dealloc [[BUF_1]] : memref<4x1x8x16xf32>
// MATMUL-ALLREDUCE-NEXT: host.dealloc [[BUF]] : memref<4x1x8x16xf32>
// MATMUL-ALLREDUCE-NEXT: return
// MATMUL-ALLREDUCE-NEXT: }

// ----- matmul_reduce_scatter.mlir: C = sum_d A[:, d] @ B[d]; A: [S, DIDx(D), D, M/(S*D), K/D], B: [DIDx(D), K/D, N]

// MATMUL-REDUCE-SCATTER-HOST-LABEL: func.func @matmul_reduce_scatter(
// MATMUL-REDUCE-SCATTER-HOST-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<4x1x4x4x8xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<1x8x16xf32>, [[ARG2:%[a-zA-Z0-9_]+]]: memref<4x1x4x16xf32>) {
// MATMUL-REDUCE-SCATTER-HOST-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// MATMUL-REDUCE-SCATTER-HOST-NEXT: [[BUF:%[a-zA-Z0-9_]+]] = host.alloc : memref<4x1x4x8x16xf32>
// MATMUL-REDUCE-SCATTER-HOST-NEXT: host.broadcast [0, 2] ins([[ARG1]] : memref<1x8x16xf32>) outs([[BUF]] : memref<4x1x4x8x16xf32>)
// MATMUL-REDUCE-SCATTER-HOST-NEXT: [[BUF_1:%[a-zA-Z0-9_]+]] = host.alloc : memref<4x1x4x4x16xf32>
// MATMUL-REDUCE-SCATTER-HOST-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// MATMUL-REDUCE-SCATTER-HOST-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// MATMUL-REDUCE-SCATTER-HOST-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// MATMUL-REDUCE-SCATTER-HOST-NEXT: host.stream_for [[C0]] to [[C4]] step [[C1]] from [[MAIN]] {
// MATMUL-REDUCE-SCATTER-HOST-NEXT: ^bb0([[I:%[a-zA-Z0-9_]+]]: index, [[S:%[a-zA-Z0-9_]+]]: !host.stream):
// MATMUL-REDUCE-SCATTER-HOST-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[I]]{{\]}} : memref<4x1x4x4x8xf32> to memref<1x4x4x8xf32, strided<[128, 32, 8, 1], offset: ?>>
// MATMUL-REDUCE-SCATTER-HOST-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[BUF]][0]{{\[}}[[I]]{{\]}} : memref<4x1x4x8x16xf32> to memref<1x4x8x16xf32, strided<[512, 128, 16, 1], offset: ?>>
// MATMUL-REDUCE-SCATTER-HOST-NEXT: [[VIEW_2:%[a-zA-Z0-9_]+]] = host.select [[BUF_1]][0]{{\[}}[[I]]{{\]}} : memref<4x1x4x4x16xf32> to memref<1x4x4x16xf32, strided<[256, 64, 16, 1], offset: ?>>
// MATMUL-REDUCE-SCATTER-HOST-NEXT: host.matmul ins([[VIEW]], [[VIEW_1]] : memref<1x4x4x8xf32, strided<[128, 32, 8, 1], offset: ?>>, memref<1x4x8x16xf32, strided<[512, 128, 16, 1], offset: ?>>) outs([[VIEW_2]] : memref<1x4x4x16xf32, strided<[256, 64, 16, 1], offset: ?>>)
// MATMUL-REDUCE-SCATTER-HOST-NEXT: }
// MATMUL-REDUCE-SCATTER-HOST-NEXT: [[C0_1:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// MATMUL-REDUCE-SCATTER-HOST-NEXT: [[VIEW_3:%[a-zA-Z0-9_]+]] = host.select [[BUF_1]][1]{{\[}}[[C0_1]]{{\]}} : memref<4x1x4x4x16xf32> to memref<4x4x4x16xf32, strided<[256, 64, 16, 1], offset: ?>>
// MATMUL-REDUCE-SCATTER-HOST-NEXT: [[C0_2:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// MATMUL-REDUCE-SCATTER-HOST-NEXT: [[C4_1:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// MATMUL-REDUCE-SCATTER-HOST-NEXT: [[C1_1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// MATMUL-REDUCE-SCATTER-HOST-NEXT: host.stream_for [[C0_2]] to [[C4_1]] step [[C1_1]] from [[MAIN]] {
// MATMUL-REDUCE-SCATTER-HOST-NEXT: ^bb0([[I_1:%[a-zA-Z0-9_]+]]: index, [[S_1:%[a-zA-Z0-9_]+]]: !host.stream):
// MATMUL-REDUCE-SCATTER-HOST-NEXT: [[VIEW_4:%[a-zA-Z0-9_]+]] = host.select [[VIEW_3]][0]{{\[}}[[I_1]]{{\]}} : memref<4x4x4x16xf32, strided<[256, 64, 16, 1], offset: ?>> to memref<4x4x16xf32, strided<[64, 16, 1], offset: ?>>
// MATMUL-REDUCE-SCATTER-HOST-NEXT: [[VIEW_5:%[a-zA-Z0-9_]+]] = host.select [[ARG2]][0]{{\[}}[[I_1]]{{\]}} : memref<4x1x4x16xf32> to memref<1x4x16xf32, strided<[64, 16, 1], offset: ?>>
// MATMUL-REDUCE-SCATTER-HOST-NEXT: [[REQ:%[a-zA-Z0-9_]+]] = comm.reduce_scatter [[VIEW_4]] into [[VIEW_5]] sum team [0, 1, 2, 3] : memref<4x4x16xf32, strided<[64, 16, 1], offset: ?>> into memref<1x4x16xf32, strided<[64, 16, 1], offset: ?>>
// MATMUL-REDUCE-SCATTER-HOST-NEXT: comm.wait [[REQ]]
// MATMUL-REDUCE-SCATTER-HOST-NEXT: }
// MATMUL-REDUCE-SCATTER-HOST-NEXT: return
// MATMUL-REDUCE-SCATTER-HOST-NEXT: }

// MATMUL-REDUCE-SCATTER-LABEL: func.func @matmul_reduce_scatter(
// MATMUL-REDUCE-SCATTER-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<4x1x4x4x8xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<1x8x16xf32>, [[ARG2:%[a-zA-Z0-9_]+]]: memref<4x1x4x16xf32>) {
// MATMUL-REDUCE-SCATTER-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// MATMUL-REDUCE-SCATTER-NEXT: [[BUF:%[a-zA-Z0-9_]+]] = host.alloc : memref<4x1x4x8x16xf32>
// MATMUL-REDUCE-SCATTER-NEXT: host.broadcast [0, 2] ins([[ARG1]] : memref<1x8x16xf32>) outs([[BUF]] : memref<4x1x4x8x16xf32>)
// MATMUL-REDUCE-SCATTER-NEXT: [[BUF_1:%[a-zA-Z0-9_]+]] = host.alloc : memref<4x1x4x4x16xf32>
// MATMUL-REDUCE-SCATTER-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// MATMUL-REDUCE-SCATTER-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[BUF_1]][1]{{\[}}[[C0]]{{\]}} : memref<4x1x4x4x16xf32> to memref<4x4x4x16xf32, strided<[256, 64, 16, 1], offset: ?>>
// MATMUL-REDUCE-SCATTER-NEXT: [[C00:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// MATMUL-REDUCE-SCATTER-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// MATMUL-REDUCE-SCATTER-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// MATMUL-REDUCE-SCATTER-NEXT: scf.for [[I:%[a-zA-Z0-9_]+]] = [[C00]] to [[C4]] step [[C1]] {
// MATMUL-REDUCE-SCATTER-NEXT: [[S:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I]] : !host.stream
// MATMUL-REDUCE-SCATTER-NEXT: host.set_current_stream [[S]]
// MATMUL-REDUCE-SCATTER-NEXT: host.sync_stream [[MAIN]]
// MATMUL-REDUCE-SCATTER-NEXT: }
// MATMUL-REDUCE-SCATTER-NEXT: scf.for [[I_1:%[a-zA-Z0-9_]+]] = [[C00]] to [[C4]] step [[C1]] {
// MATMUL-REDUCE-SCATTER-NEXT: [[S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I_1]] : !host.stream
// MATMUL-REDUCE-SCATTER-NEXT: host.set_current_stream [[S_1]]
// MATMUL-REDUCE-SCATTER-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[I_1]]{{\]}} : memref<4x1x4x4x8xf32> to memref<1x4x4x8xf32, strided<[128, 32, 8, 1], offset: ?>>
// MATMUL-REDUCE-SCATTER-NEXT: [[VIEW_2:%[a-zA-Z0-9_]+]] = host.select [[BUF]][0]{{\[}}[[I_1]]{{\]}} : memref<4x1x4x8x16xf32> to memref<1x4x8x16xf32, strided<[512, 128, 16, 1], offset: ?>>
// MATMUL-REDUCE-SCATTER-NEXT: [[VIEW_3:%[a-zA-Z0-9_]+]] = host.select [[BUF_1]][0]{{\[}}[[I_1]]{{\]}} : memref<4x1x4x4x16xf32> to memref<1x4x4x16xf32, strided<[256, 64, 16, 1], offset: ?>>
// MATMUL-REDUCE-SCATTER-NEXT: host.matmul ins([[VIEW_1]], [[VIEW_2]] : memref<1x4x4x8xf32, strided<[128, 32, 8, 1], offset: ?>>, memref<1x4x8x16xf32, strided<[512, 128, 16, 1], offset: ?>>) outs([[VIEW_3]] : memref<1x4x4x16xf32, strided<[256, 64, 16, 1], offset: ?>>)
// MATMUL-REDUCE-SCATTER-NEXT: [[VIEW_4:%[a-zA-Z0-9_]+]] = host.select [[VIEW]][0]{{\[}}[[I_1]]{{\]}} : memref<4x4x4x16xf32, strided<[256, 64, 16, 1], offset: ?>> to memref<4x4x16xf32, strided<[64, 16, 1], offset: ?>>
// MATMUL-REDUCE-SCATTER-NEXT: [[VIEW_5:%[a-zA-Z0-9_]+]] = host.select [[ARG2]][0]{{\[}}[[I_1]]{{\]}} : memref<4x1x4x16xf32> to memref<1x4x16xf32, strided<[64, 16, 1], offset: ?>>
// MATMUL-REDUCE-SCATTER-NEXT: [[REQ:%[a-zA-Z0-9_]+]] = comm.reduce_scatter [[VIEW_4]] into [[VIEW_5]] sum team [0, 1, 2, 3] : memref<4x4x16xf32, strided<[64, 16, 1], offset: ?>> into memref<1x4x16xf32, strided<[64, 16, 1], offset: ?>>
// MATMUL-REDUCE-SCATTER-NEXT: comm.wait [[REQ]]
// MATMUL-REDUCE-SCATTER-NEXT: }
// MATMUL-REDUCE-SCATTER-NEXT: host.set_current_stream [[MAIN]]
// MATMUL-REDUCE-SCATTER-NEXT: scf.for [[JOIN_I_1:%[a-zA-Z0-9_]+]] = [[C00]] to [[C4]] step [[C1]] {
// MATMUL-REDUCE-SCATTER-NEXT: [[JOIN_S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[JOIN_I_1]] : !host.stream
// MATMUL-REDUCE-SCATTER-NEXT: host.sync_stream [[JOIN_S_1]]
// MATMUL-REDUCE-SCATTER-NEXT: }
// MATMUL-REDUCE-SCATTER-NEXT: host.dealloc [[BUF_1]] : memref<4x1x4x4x16xf32>
// MATMUL-REDUCE-SCATTER-NEXT: host.dealloc [[BUF]] : memref<4x1x4x8x16xf32>
// MATMUL-REDUCE-SCATTER-NEXT: return
// MATMUL-REDUCE-SCATTER-NEXT: }

// ----- reshard_no_stream.mlir: out = in, gathered along axis 0 in one piece: a resharding with no stream axis.

// RESHARD-NO-STREAM-HOST-LABEL: func.func @reshard_no_stream(
// RESHARD-NO-STREAM-HOST-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<1x8xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<4x8xf32>) {
// RESHARD-NO-STREAM-HOST-NEXT: [[REQ:%[a-zA-Z0-9_]+]] = comm.allgather [[ARG0]] into [[ARG1]] team [0, 1, 2, 3] : memref<1x8xf32> into memref<4x8xf32>
// RESHARD-NO-STREAM-HOST-NEXT: comm.wait [[REQ]]
// RESHARD-NO-STREAM-HOST-NEXT: return
// RESHARD-NO-STREAM-HOST-NEXT: }

// RESHARD-NO-STREAM-LABEL: func.func @reshard_no_stream(
// RESHARD-NO-STREAM-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<1x8xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<4x8xf32>) {
// RESHARD-NO-STREAM-NEXT: [[REQ:%[a-zA-Z0-9_]+]] = comm.allgather [[ARG0]] into [[ARG1]] team [0, 1, 2, 3] : memref<1x8xf32> into memref<4x8xf32>
// RESHARD-NO-STREAM-NEXT: comm.wait [[REQ]]
// RESHARD-NO-STREAM-NEXT: return
// RESHARD-NO-STREAM-NEXT: }
