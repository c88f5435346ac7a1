// hir-lower on the single-device examples (seed 002).
// For each example: the host program convert-fusion-to-host makes (after the
// fusion passes), then what hir-lower makes of it (stream loops, deallocs;
// an intermediate only one loop uses is allocated in each iteration, one
// slice, by host-privatize-buffers).
//
// RUN: hir-opt --pass-pipeline='builtin.module(fusion-propagate-sharding,fusion-verify-sharding,fusion-insert-resharding,convert-fusion-to-host)' %examples/set.mlir | FileCheck %s --check-prefix=SET-HOST
// RUN: hir-opt --pass-pipeline='builtin.module(hir-lower)' %examples/set.mlir | FileCheck %s --check-prefix=SET
// RUN: hir-opt --pass-pipeline='builtin.module(fusion-propagate-sharding,fusion-verify-sharding,fusion-insert-resharding,convert-fusion-to-host)' %examples/two_sets.mlir | FileCheck %s --check-prefix=TWO-SETS-HOST
// RUN: hir-opt --pass-pipeline='builtin.module(hir-lower)' %examples/two_sets.mlir | FileCheck %s --check-prefix=TWO-SETS
// RUN: hir-opt --pass-pipeline='builtin.module(fusion-propagate-sharding,fusion-verify-sharding,fusion-insert-resharding,convert-fusion-to-host)' %examples/three_sets.mlir | FileCheck %s --check-prefix=THREE-SETS-HOST
// RUN: hir-opt --pass-pipeline='builtin.module(hir-lower)' %examples/three_sets.mlir | FileCheck %s --check-prefix=THREE-SETS
// RUN: hir-opt --pass-pipeline='builtin.module(fusion-propagate-sharding,fusion-verify-sharding,fusion-insert-resharding,convert-fusion-to-host)' %examples/inputs_not_stream.mlir | FileCheck %s --check-prefix=INPUTS-NOT-STREAM-HOST
// RUN: hir-opt --pass-pipeline='builtin.module(hir-lower)' %examples/inputs_not_stream.mlir | FileCheck %s --check-prefix=INPUTS-NOT-STREAM
// RUN: hir-opt --pass-pipeline='builtin.module(fusion-propagate-sharding,fusion-verify-sharding,fusion-insert-resharding,convert-fusion-to-host)' %examples/reduction.mlir | FileCheck %s --check-prefix=REDUCTION-HOST
// RUN: hir-opt --pass-pipeline='builtin.module(hir-lower)' %examples/reduction.mlir | FileCheck %s --check-prefix=REDUCTION
// RUN: hir-opt --pass-pipeline='builtin.module(fusion-propagate-sharding,fusion-verify-sharding,fusion-insert-resharding,convert-fusion-to-host)' %examples/binary.mlir | FileCheck %s --check-prefix=BINARY-HOST
// RUN: hir-opt --pass-pipeline='builtin.module(hir-lower)' %examples/binary.mlir | FileCheck %s --check-prefix=BINARY
// RUN: hir-opt --pass-pipeline='builtin.module(fusion-propagate-sharding,fusion-verify-sharding,fusion-insert-resharding,convert-fusion-to-host)' %examples/matmul.mlir | FileCheck %s --check-prefix=MATMUL-HOST
// RUN: hir-opt --pass-pipeline='builtin.module(hir-lower)' %examples/matmul.mlir | FileCheck %s --check-prefix=MATMUL
// RUN: hir-opt --pass-pipeline='builtin.module(fusion-propagate-sharding,fusion-verify-sharding,fusion-insert-resharding,convert-fusion-to-host)' %examples/linear.mlir | FileCheck %s --check-prefix=LINEAR-HOST
// RUN: hir-opt --pass-pipeline='builtin.module(hir-lower)' %examples/linear.mlir | FileCheck %s --check-prefix=LINEAR

// ----- set.mlir: out = in, computed slice by slice along axis 0 on the stream pool.

// SET-HOST-LABEL: func.func @set(
// SET-HOST-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<4x8xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<4x8xf32>) {
// SET-HOST-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// SET-HOST-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// SET-HOST-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// SET-HOST-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// SET-HOST-NEXT: host.stream_for [[C0]] to [[C4]] step [[C1]] from [[MAIN]] {
// SET-HOST-NEXT: ^bb0([[I:%[a-zA-Z0-9_]+]]: index, [[S:%[a-zA-Z0-9_]+]]: !host.stream):
// SET-HOST-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[I]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// SET-HOST-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[ARG1]][0]{{\[}}[[I]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// SET-HOST-NEXT: host.copy ins([[VIEW]] : memref<8xf32, strided<[1], offset: ?>>) outs([[VIEW_1]] : memref<8xf32, strided<[1], offset: ?>>)
// SET-HOST-NEXT: }
// SET-HOST-NEXT: return
// SET-HOST-NEXT: }

// SET-LABEL: func.func @set(
// SET-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<4x8xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<4x8xf32>) {
// SET-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// SET-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// SET-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// SET-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// SET-NEXT: scf.for [[I:%[a-zA-Z0-9_]+]] = [[C0]] to [[C4]] step [[C1]] {
// SET-NEXT: [[S:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I]] : !host.stream
// SET-NEXT: host.set_current_stream [[S]]
// SET-NEXT: host.sync_stream [[MAIN]]
// SET-NEXT: }
// SET-NEXT: scf.for [[I_1:%[a-zA-Z0-9_]+]] = [[C0]] to [[C4]] step [[C1]] {
// SET-NEXT: [[S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I_1]] : !host.stream
// SET-NEXT: host.set_current_stream [[S_1]]
// SET-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[I_1]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// SET-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[ARG1]][0]{{\[}}[[I_1]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// SET-NEXT: host.copy ins([[VIEW]] : memref<8xf32, strided<[1], offset: ?>>) outs([[VIEW_1]] : memref<8xf32, strided<[1], offset: ?>>)
// SET-NEXT: }
// SET-NEXT: host.set_current_stream [[MAIN]]
// SET-NEXT: scf.for [[JOIN_I_1:%[a-zA-Z0-9_]+]] = [[C0]] to [[C4]] step [[C1]] {
// SET-NEXT: [[JOIN_S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[JOIN_I_1]] : !host.stream
// SET-NEXT: host.sync_stream [[JOIN_S_1]]
// SET-NEXT: }
// SET-NEXT: return
// SET-NEXT: }

// ----- two_sets.mlir: t = in; out = t, both stream-parallel along axis 0.

// TWO-SETS-HOST-LABEL: func.func @two_sets(
// TWO-SETS-HOST-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<4x8xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<4x8xf32>) {
// TWO-SETS-HOST-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// TWO-SETS-HOST-NEXT: [[BUF:%[a-zA-Z0-9_]+]] = host.alloc : memref<4x8xf32>
// TWO-SETS-HOST-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// TWO-SETS-HOST-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// TWO-SETS-HOST-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// TWO-SETS-HOST-NEXT: host.stream_for [[C0]] to [[C4]] step [[C1]] from [[MAIN]] {
// TWO-SETS-HOST-NEXT: ^bb0([[I:%[a-zA-Z0-9_]+]]: index, [[S:%[a-zA-Z0-9_]+]]: !host.stream):
// TWO-SETS-HOST-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[I]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// TWO-SETS-HOST-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[BUF]][0]{{\[}}[[I]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// TWO-SETS-HOST-NEXT: host.copy ins([[VIEW]] : memref<8xf32, strided<[1], offset: ?>>) outs([[VIEW_1]] : memref<8xf32, strided<[1], offset: ?>>)
// TWO-SETS-HOST-NEXT: }
// TWO-SETS-HOST-NEXT: [[C0_1:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// TWO-SETS-HOST-NEXT: [[C4_1:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// TWO-SETS-HOST-NEXT: [[C1_1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// TWO-SETS-HOST-NEXT: host.stream_for [[C0_1]] to [[C4_1]] step [[C1_1]] from [[MAIN]] {
// TWO-SETS-HOST-NEXT: ^bb0([[I_1:%[a-zA-Z0-9_]+]]: index, [[S_1:%[a-zA-Z0-9_]+]]: !host.stream):
// TWO-SETS-HOST-NEXT: [[VIEW_2:%[a-zA-Z0-9_]+]] = host.select [[BUF]][0]{{\[}}[[I_1]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// TWO-SETS-HOST-NEXT: [[VIEW_3:%[a-zA-Z0-9_]+]] = host.select [[ARG1]][0]{{\[}}[[I_1]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// TWO-SETS-HOST-NEXT: host.copy ins([[VIEW_2]] : memref<8xf32, strided<[1], offset: ?>>) outs([[VIEW_3]] : memref<8xf32, strided<[1], offset: ?>>)
// TWO-SETS-HOST-NEXT: }
// TWO-SETS-HOST-NEXT: return
// TWO-SETS-HOST-NEXT: }

// TWO-SETS-LABEL: func.func @two_sets(
// TWO-SETS-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<4x8xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<4x8xf32>) {
// TWO-SETS-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// TWO-SETS-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// TWO-SETS-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// TWO-SETS-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// TWO-SETS-NEXT: scf.for [[I:%[a-zA-Z0-9_]+]] = [[C0]] to [[C4]] step [[C1]] {
// TWO-SETS-NEXT: [[S:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I]] : !host.stream
// TWO-SETS-NEXT: host.set_current_stream [[S]]
// TWO-SETS-NEXT: host.sync_stream [[MAIN]]
// TWO-SETS-NEXT: }
// TWO-SETS-NEXT: scf.for [[I_1:%[a-zA-Z0-9_]+]] = [[C0]] to [[C4]] step [[C1]] {
// TWO-SETS-NEXT: [[S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I_1]] : !host.stream
// TWO-SETS-NEXT: host.set_current_stream [[S_1]]
// TWO-SETS-NEXT: [[BUF:%[a-zA-Z0-9_]+]] = host.alloc : memref<8xf32>
// TWO-SETS-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[I_1]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// TWO-SETS-NEXT: host.copy ins([[VIEW]] : memref<8xf32, strided<[1], offset: ?>>) outs([[BUF]] : memref<8xf32>)
// TWO-SETS-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[ARG1]][0]{{\[}}[[I_1]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// TWO-SETS-NEXT: host.copy ins([[BUF]] : memref<8xf32>) outs([[VIEW_1]] : memref<8xf32, strided<[1], offset: ?>>)
// TWO-SETS-NEXT: host.dealloc [[BUF]] : memref<8xf32>
// TWO-SETS-NEXT: }
// TWO-SETS-NEXT: host.set_current_stream [[MAIN]]
// TWO-SETS-NEXT: scf.for [[JOIN_I_1:%[a-zA-Z0-9_]+]] = [[C0]] to [[C4]] step [[C1]] {
// TWO-SETS-NEXT: [[JOIN_S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[JOIN_I_1]] : !host.stream
// TWO-SETS-NEXT: host.sync_stream [[JOIN_S_1]]
// TWO-SETS-NEXT: }
// TWO-SETS-NEXT: return
// TWO-SETS-NEXT: }

// ----- three_sets.mlir: t1 = in; t2 = t1; out = t2, where t1 and out are stream-parallel and t2 is not.

// THREE-SETS-HOST-LABEL: func.func @three_sets(
// THREE-SETS-HOST-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<4x8xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<4x8xf32>) {
// THREE-SETS-HOST-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// THREE-SETS-HOST-NEXT: [[BUF:%[a-zA-Z0-9_]+]] = host.alloc : memref<4x8xf32>
// THREE-SETS-HOST-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// THREE-SETS-HOST-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// THREE-SETS-HOST-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// THREE-SETS-HOST-NEXT: host.stream_for [[C0]] to [[C4]] step [[C1]] from [[MAIN]] {
// THREE-SETS-HOST-NEXT: ^bb0([[I:%[a-zA-Z0-9_]+]]: index, [[S:%[a-zA-Z0-9_]+]]: !host.stream):
// THREE-SETS-HOST-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[I]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// THREE-SETS-HOST-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[BUF]][0]{{\[}}[[I]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// THREE-SETS-HOST-NEXT: host.copy ins([[VIEW]] : memref<8xf32, strided<[1], offset: ?>>) outs([[VIEW_1]] : memref<8xf32, strided<[1], offset: ?>>)
// THREE-SETS-HOST-NEXT: }
// THREE-SETS-HOST-NEXT: [[BUF_1:%[a-zA-Z0-9_]+]] = host.alloc : memref<4x8xf32>
// THREE-SETS-HOST-NEXT: host.copy ins([[BUF]] : memref<4x8xf32>) outs([[BUF_1]] : memref<4x8xf32>)
// THREE-SETS-HOST-NEXT: [[C0_1:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// THREE-SETS-HOST-NEXT: [[C4_1:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// THREE-SETS-HOST-NEXT: [[C1_1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// THREE-SETS-HOST-NEXT: host.stream_for [[C0_1]] to [[C4_1]] step [[C1_1]] from [[MAIN]] {
// THREE-SETS-HOST-NEXT: ^bb0([[I_1:%[a-zA-Z0-9_]+]]: index, [[S_1:%[a-zA-Z0-9_]+]]: !host.stream):
// THREE-SETS-HOST-NEXT: [[VIEW_2:%[a-zA-Z0-9_]+]] = host.select [[BUF_1]][0]{{\[}}[[I_1]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// THREE-SETS-HOST-NEXT: [[VIEW_3:%[a-zA-Z0-9_]+]] = host.select [[ARG1]][0]{{\[}}[[I_1]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// THREE-SETS-HOST-NEXT: host.copy ins([[VIEW_2]] : memref<8xf32, strided<[1], offset: ?>>) outs([[VIEW_3]] : memref<8xf32, strided<[1], offset: ?>>)
// THREE-SETS-HOST-NEXT: }
// THREE-SETS-HOST-NEXT: return
// THREE-SETS-HOST-NEXT: }

// THREE-SETS-LABEL: func.func @three_sets(
// THREE-SETS-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<4x8xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<4x8xf32>) {
// THREE-SETS-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// THREE-SETS-NEXT: [[BUF:%[a-zA-Z0-9_]+]] = host.alloc : memref<4x8xf32>
// THREE-SETS-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// THREE-SETS-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// THREE-SETS-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// THREE-SETS-NEXT: scf.for [[I:%[a-zA-Z0-9_]+]] = [[C0]] to [[C4]] step [[C1]] {
// THREE-SETS-NEXT: [[S:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I]] : !host.stream
// THREE-SETS-NEXT: host.set_current_stream [[S]]
// THREE-SETS-NEXT: host.sync_stream [[MAIN]]
// THREE-SETS-NEXT: }
// THREE-SETS-NEXT: scf.for [[I_1:%[a-zA-Z0-9_]+]] = [[C0]] to [[C4]] step [[C1]] {
// THREE-SETS-NEXT: [[S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I_1]] : !host.stream
// THREE-SETS-NEXT: host.set_current_stream [[S_1]]
// THREE-SETS-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[I_1]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// THREE-SETS-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[BUF]][0]{{\[}}[[I_1]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// THREE-SETS-NEXT: host.copy ins([[VIEW]] : memref<8xf32, strided<[1], offset: ?>>) outs([[VIEW_1]] : memref<8xf32, strided<[1], offset: ?>>)
// THREE-SETS-NEXT: }
// THREE-SETS-NEXT: host.set_current_stream [[MAIN]]
// THREE-SETS-NEXT: scf.for [[JOIN_I_1:%[a-zA-Z0-9_]+]] = [[C0]] to [[C4]] step [[C1]] {
// THREE-SETS-NEXT: [[JOIN_S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[JOIN_I_1]] : !host.stream
// THREE-SETS-NEXT: host.sync_stream [[JOIN_S_1]]
// THREE-SETS-NEXT: }
// THREE-SETS-NEXT: [[BUF_1:%[a-zA-Z0-9_]+]] = host.alloc : memref<4x8xf32>
// THREE-SETS-NEXT: host.copy ins([[BUF]] : memref<4x8xf32>) outs([[BUF_1]] : memref<4x8xf32>)
// THREE-SETS-NEXT: host.dealloc [[BUF]] : memref<4x8xf32>
// THREE-SETS-NEXT: [[C00:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// THREE-SETS-NEXT: [[C41:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// THREE-SETS-NEXT: [[C12:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// THREE-SETS-NEXT: scf.for [[I_2:%[a-zA-Z0-9_]+]] = [[C00]] to [[C41]] step [[C12]] {
// THREE-SETS-NEXT: [[S_2:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I_2]] : !host.stream
// THREE-SETS-NEXT: host.set_current_stream [[S_2]]
// THREE-SETS-NEXT: host.sync_stream [[MAIN]]
// THREE-SETS-NEXT: }
// THREE-SETS-NEXT: scf.for [[I_3:%[a-zA-Z0-9_]+]] = [[C00]] to [[C41]] step [[C12]] {
// THREE-SETS-NEXT: [[S_3:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I_3]] : !host.stream
// THREE-SETS-NEXT: host.set_current_stream [[S_3]]
// THREE-SETS-NEXT: [[VIEW_2:%[a-zA-Z0-9_]+]] = host.select [[BUF_1]][0]{{\[}}[[I_3]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// THREE-SETS-NEXT: [[VIEW_3:%[a-zA-Z0-9_]+]] = host.select [[ARG1]][0]{{\[}}[[I_3]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// THREE-SETS-NEXT: host.copy ins([[VIEW_2]] : memref<8xf32, strided<[1], offset: ?>>) outs([[VIEW_3]] : memref<8xf32, strided<[1], offset: ?>>)
// THREE-SETS-NEXT: }
// THREE-SETS-NEXT: host.set_current_stream [[MAIN]]
// THREE-SETS-NEXT: scf.for [[JOIN_I_3:%[a-zA-Z0-9_]+]] = [[C00]] to [[C41]] step [[C12]] {
// THREE-SETS-NEXT: [[JOIN_S_3:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[JOIN_I_3]] : !host.stream
// THREE-SETS-NEXT: host.sync_stream [[JOIN_S_3]]
// THREE-SETS-NEXT: }
// THREE-SETS-NEXT: host.dealloc [[BUF_1]] : memref<4x8xf32>
// THREE-SETS-NEXT: return
// THREE-SETS-NEXT: }

// ----- inputs_not_stream.mlir: out = in, stream-parallel along axis 1 (not the outermost one).

// INPUTS-NOT-STREAM-HOST-LABEL: func.func @inputs_not_stream(
// INPUTS-NOT-STREAM-HOST-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<4x8xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<4x8xf32>) {
// INPUTS-NOT-STREAM-HOST-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// INPUTS-NOT-STREAM-HOST-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// INPUTS-NOT-STREAM-HOST-NEXT: [[C8:%[a-zA-Z0-9_]+]] = arith.constant 8 : index
// INPUTS-NOT-STREAM-HOST-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// INPUTS-NOT-STREAM-HOST-NEXT: host.stream_for [[C0]] to [[C8]] step [[C1]] from [[MAIN]] {
// INPUTS-NOT-STREAM-HOST-NEXT: ^bb0([[I:%[a-zA-Z0-9_]+]]: index, [[S:%[a-zA-Z0-9_]+]]: !host.stream):
// INPUTS-NOT-STREAM-HOST-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][1]{{\[}}[[I]]{{\]}} : memref<4x8xf32> to memref<4xf32, strided<[8], offset: ?>>
// INPUTS-NOT-STREAM-HOST-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[ARG1]][1]{{\[}}[[I]]{{\]}} : memref<4x8xf32> to memref<4xf32, strided<[8], offset: ?>>
// INPUTS-NOT-STREAM-HOST-NEXT: host.copy ins([[VIEW]] : memref<4xf32, strided<[8], offset: ?>>) outs([[VIEW_1]] : memref<4xf32, strided<[8], offset: ?>>)
// INPUTS-NOT-STREAM-HOST-NEXT: }
// INPUTS-NOT-STREAM-HOST-NEXT: return
// INPUTS-NOT-STREAM-HOST-NEXT: }

// INPUTS-NOT-STREAM-LABEL: func.func @inputs_not_stream(
// INPUTS-NOT-STREAM-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<4x8xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<4x8xf32>) {
// INPUTS-NOT-STREAM-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// INPUTS-NOT-STREAM-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// INPUTS-NOT-STREAM-NEXT: [[C8:%[a-zA-Z0-9_]+]] = arith.constant 8 : index
// INPUTS-NOT-STREAM-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// INPUTS-NOT-STREAM-NEXT: scf.for [[I:%[a-zA-Z0-9_]+]] = [[C0]] to [[C8]] step [[C1]] {
// INPUTS-NOT-STREAM-NEXT: [[S:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I]] : !host.stream
// INPUTS-NOT-STREAM-NEXT: host.set_current_stream [[S]]
// INPUTS-NOT-STREAM-NEXT: host.sync_stream [[MAIN]]
// INPUTS-NOT-STREAM-NEXT: }
// INPUTS-NOT-STREAM-NEXT: scf.for [[I_1:%[a-zA-Z0-9_]+]] = [[C0]] to [[C8]] step [[C1]] {
// INPUTS-NOT-STREAM-NEXT: [[S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I_1]] : !host.stream
// INPUTS-NOT-STREAM-NEXT: host.set_current_stream [[S_1]]
// INPUTS-NOT-STREAM-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][1]{{\[}}[[I_1]]{{\]}} : memref<4x8xf32> to memref<4xf32, strided<[8], offset: ?>>
// INPUTS-NOT-STREAM-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[ARG1]][1]{{\[}}[[I_1]]{{\]}} : memref<4x8xf32> to memref<4xf32, strided<[8], offset: ?>>
// INPUTS-NOT-STREAM-NEXT: host.copy ins([[VIEW]] : memref<4xf32, strided<[8], offset: ?>>) outs([[VIEW_1]] : memref<4xf32, strided<[8], offset: ?>>)
// INPUTS-NOT-STREAM-NEXT: }
// INPUTS-NOT-STREAM-NEXT: host.set_current_stream [[MAIN]]
// INPUTS-NOT-STREAM-NEXT: scf.for [[JOIN_I_1:%[a-zA-Z0-9_]+]] = [[C0]] to [[C8]] step [[C1]] {
// INPUTS-NOT-STREAM-NEXT: [[JOIN_S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[JOIN_I_1]] : !host.stream
// INPUTS-NOT-STREAM-NEXT: host.sync_stream [[JOIN_S_1]]
// INPUTS-NOT-STREAM-NEXT: }
// INPUTS-NOT-STREAM-NEXT: return
// INPUTS-NOT-STREAM-NEXT: }

// ----- reduction.mlir: out[i, j] = sum_k in[i, j, k], stream-parallel along i.

// REDUCTION-HOST-LABEL: func.func @reduction(
// REDUCTION-HOST-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<4x8x16xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<4x8xf32>) {
// REDUCTION-HOST-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// REDUCTION-HOST-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// REDUCTION-HOST-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// REDUCTION-HOST-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// REDUCTION-HOST-NEXT: host.stream_for [[C0]] to [[C4]] step [[C1]] from [[MAIN]] {
// REDUCTION-HOST-NEXT: ^bb0([[I:%[a-zA-Z0-9_]+]]: index, [[S:%[a-zA-Z0-9_]+]]: !host.stream):
// REDUCTION-HOST-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[I]]{{\]}} : memref<4x8x16xf32> to memref<8x16xf32, strided<[16, 1], offset: ?>>
// REDUCTION-HOST-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[ARG1]][0]{{\[}}[[I]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// REDUCTION-HOST-NEXT: host.sum [1] ins([[VIEW]] : memref<8x16xf32, strided<[16, 1], offset: ?>>) outs([[VIEW_1]] : memref<8xf32, strided<[1], offset: ?>>)
// REDUCTION-HOST-NEXT: }
// REDUCTION-HOST-NEXT: return
// REDUCTION-HOST-NEXT: }

// REDUCTION-LABEL: func.func @reduction(
// REDUCTION-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<4x8x16xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<4x8xf32>) {
// REDUCTION-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// REDUCTION-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// REDUCTION-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// REDUCTION-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// REDUCTION-NEXT: scf.for [[I:%[a-zA-Z0-9_]+]] = [[C0]] to [[C4]] step [[C1]] {
// REDUCTION-NEXT: [[S:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I]] : !host.stream
// REDUCTION-NEXT: host.set_current_stream [[S]]
// REDUCTION-NEXT: host.sync_stream [[MAIN]]
// REDUCTION-NEXT: }
// REDUCTION-NEXT: scf.for [[I_1:%[a-zA-Z0-9_]+]] = [[C0]] to [[C4]] step [[C1]] {
// REDUCTION-NEXT: [[S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I_1]] : !host.stream
// REDUCTION-NEXT: host.set_current_stream [[S_1]]
// REDUCTION-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[I_1]]{{\]}} : memref<4x8x16xf32> to memref<8x16xf32, strided<[16, 1], offset: ?>>
// REDUCTION-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[ARG1]][0]{{\[}}[[I_1]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// REDUCTION-NEXT: host.sum [1] ins([[VIEW]] : memref<8x16xf32, strided<[16, 1], offset: ?>>) outs([[VIEW_1]] : memref<8xf32, strided<[1], offset: ?>>)
// REDUCTION-NEXT: }
// REDUCTION-NEXT: host.set_current_stream [[MAIN]]
// REDUCTION-NEXT: scf.for [[JOIN_I_1:%[a-zA-Z0-9_]+]] = [[C0]] to [[C4]] step [[C1]] {
// REDUCTION-NEXT: [[JOIN_S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[JOIN_I_1]] : !host.stream
// REDUCTION-NEXT: host.sync_stream [[JOIN_S_1]]
// REDUCTION-NEXT: }
// REDUCTION-NEXT: return
// REDUCTION-NEXT: }

// ----- binary.mlir: out = a + b, stream-parallel along axis 0.

// BINARY-HOST-LABEL: func.func @binary(
// BINARY-HOST-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<4x8xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<4x8xf32>, [[ARG2:%[a-zA-Z0-9_]+]]: memref<4x8xf32>) {
// BINARY-HOST-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// BINARY-HOST-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// BINARY-HOST-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// BINARY-HOST-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// BINARY-HOST-NEXT: host.stream_for [[C0]] to [[C4]] step [[C1]] from [[MAIN]] {
// BINARY-HOST-NEXT: ^bb0([[I:%[a-zA-Z0-9_]+]]: index, [[S:%[a-zA-Z0-9_]+]]: !host.stream):
// BINARY-HOST-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[I]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// BINARY-HOST-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[ARG1]][0]{{\[}}[[I]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// BINARY-HOST-NEXT: [[VIEW_2:%[a-zA-Z0-9_]+]] = host.select [[ARG2]][0]{{\[}}[[I]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// BINARY-HOST-NEXT: host.add ins([[VIEW]], [[VIEW_1]] : memref<8xf32, strided<[1], offset: ?>>, memref<8xf32, strided<[1], offset: ?>>) outs([[VIEW_2]] : memref<8xf32, strided<[1], offset: ?>>)
// BINARY-HOST-NEXT: }
// BINARY-HOST-NEXT: return
// BINARY-HOST-NEXT: }

// BINARY-LABEL: func.func @binary(
// BINARY-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<4x8xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<4x8xf32>, [[ARG2:%[a-zA-Z0-9_]+]]: memref<4x8xf32>) {
// BINARY-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// BINARY-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// BINARY-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// BINARY-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// BINARY-NEXT: scf.for [[I:%[a-zA-Z0-9_]+]] = [[C0]] to [[C4]] step [[C1]] {
// BINARY-NEXT: [[S:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I]] : !host.stream
// BINARY-NEXT: host.set_current_stream [[S]]
// BINARY-NEXT: host.sync_stream [[MAIN]]
// BINARY-NEXT: }
// BINARY-NEXT: scf.for [[I_1:%[a-zA-Z0-9_]+]] = [[C0]] to [[C4]] step [[C1]] {
// BINARY-NEXT: [[S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I_1]] : !host.stream
// BINARY-NEXT: host.set_current_stream [[S_1]]
// BINARY-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[I_1]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// BINARY-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[ARG1]][0]{{\[}}[[I_1]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// BINARY-NEXT: [[VIEW_2:%[a-zA-Z0-9_]+]] = host.select [[ARG2]][0]{{\[}}[[I_1]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// BINARY-NEXT: host.add ins([[VIEW]], [[VIEW_1]] : memref<8xf32, strided<[1], offset: ?>>, memref<8xf32, strided<[1], offset: ?>>) outs([[VIEW_2]] : memref<8xf32, strided<[1], offset: ?>>)
// BINARY-NEXT: }
// BINARY-NEXT: host.set_current_stream [[MAIN]]
// BINARY-NEXT: scf.for [[JOIN_I_1:%[a-zA-Z0-9_]+]] = [[C0]] to [[C4]] step [[C1]] {
// BINARY-NEXT: [[JOIN_S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[JOIN_I_1]] : !host.stream
// BINARY-NEXT: host.sync_stream [[JOIN_S_1]]
// BINARY-NEXT: }
// BINARY-NEXT: return
// BINARY-NEXT: }

// ----- matmul.mlir: c = a @ b with a: [M, K], b: [K, N], stream-parallel along M.

// MATMUL-HOST-LABEL: func.func @matmul(
// MATMUL-HOST-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<8x16xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<16x32xf32>, [[ARG2:%[a-zA-Z0-9_]+]]: memref<8x32xf32>) {
// MATMUL-HOST-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// MATMUL-HOST-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// MATMUL-HOST-NEXT: [[C8:%[a-zA-Z0-9_]+]] = arith.constant 8 : index
// MATMUL-HOST-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// MATMUL-HOST-NEXT: host.stream_for [[C0]] to [[C8]] step [[C1]] from [[MAIN]] {
// MATMUL-HOST-NEXT: ^bb0([[I:%[a-zA-Z0-9_]+]]: index, [[S:%[a-zA-Z0-9_]+]]: !host.stream):
// MATMUL-HOST-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[I]]{{\]}} : memref<8x16xf32> to memref<16xf32, strided<[1], offset: ?>>
// MATMUL-HOST-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[ARG2]][0]{{\[}}[[I]]{{\]}} : memref<8x32xf32> to memref<32xf32, strided<[1], offset: ?>>
// MATMUL-HOST-NEXT: host.matmul ins([[VIEW]], [[ARG1]] : memref<16xf32, strided<[1], offset: ?>>, memref<16x32xf32>) outs([[VIEW_1]] : memref<32xf32, strided<[1], offset: ?>>)
// MATMUL-HOST-NEXT: }
// MATMUL-HOST-NEXT: return
// MATMUL-HOST-NEXT: }

// MATMUL-LABEL: func.func @matmul(
// MATMUL-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<8x16xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<16x32xf32>, [[ARG2:%[a-zA-Z0-9_]+]]: memref<8x32xf32>) {
// MATMUL-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// MATMUL-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// MATMUL-NEXT: [[C8:%[a-zA-Z0-9_]+]] = arith.constant 8 : index
// MATMUL-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// MATMUL-NEXT: scf.for [[I:%[a-zA-Z0-9_]+]] = [[C0]] to [[C8]] step [[C1]] {
// MATMUL-NEXT: [[S:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I]] : !host.stream
// MATMUL-NEXT: host.set_current_stream [[S]]
// MATMUL-NEXT: host.sync_stream [[MAIN]]
// MATMUL-NEXT: }
// MATMUL-NEXT: scf.for [[I_1:%[a-zA-Z0-9_]+]] = [[C0]] to [[C8]] step [[C1]] {
// MATMUL-NEXT: [[S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I_1]] : !host.stream
// MATMUL-NEXT: host.set_current_stream [[S_1]]
// MATMUL-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[I_1]]{{\]}} : memref<8x16xf32> to memref<16xf32, strided<[1], offset: ?>>
// MATMUL-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[ARG2]][0]{{\[}}[[I_1]]{{\]}} : memref<8x32xf32> to memref<32xf32, strided<[1], offset: ?>>
// MATMUL-NEXT: host.matmul ins([[VIEW]], [[ARG1]] : memref<16xf32, strided<[1], offset: ?>>, memref<16x32xf32>) outs([[VIEW_1]] : memref<32xf32, strided<[1], offset: ?>>)
// MATMUL-NEXT: }
// MATMUL-NEXT: host.set_current_stream [[MAIN]]
// MATMUL-NEXT: scf.for [[JOIN_I_1:%[a-zA-Z0-9_]+]] = [[C0]] to [[C8]] step [[C1]] {
// MATMUL-NEXT: [[JOIN_S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[JOIN_I_1]] : !host.stream
// MATMUL-NEXT: host.sync_stream [[JOIN_S_1]]
// MATMUL-NEXT: }
// MATMUL-NEXT: return
// MATMUL-NEXT: }

// ----- linear.mlir: y = x @ w^T + bias with x: [S, M, K], w: [N, K], bias: [N], stream-parallel along S.

// LINEAR-HOST-LABEL: func.func @linear(
// LINEAR-HOST-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<4x8x32xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<16x32xf32>, [[ARG2:%[a-zA-Z0-9_]+]]: memref<16xf32>, [[ARG3:%[a-zA-Z0-9_]+]]: memref<4x8x16xf32>) {
// LINEAR-HOST-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// LINEAR-HOST-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// LINEAR-HOST-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// LINEAR-HOST-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// LINEAR-HOST-NEXT: host.stream_for [[C0]] to [[C4]] step [[C1]] from [[MAIN]] {
// LINEAR-HOST-NEXT: ^bb0([[I:%[a-zA-Z0-9_]+]]: index, [[S:%[a-zA-Z0-9_]+]]: !host.stream):
// LINEAR-HOST-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[I]]{{\]}} : memref<4x8x32xf32> to memref<8x32xf32, strided<[32, 1], offset: ?>>
// LINEAR-HOST-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[ARG3]][0]{{\[}}[[I]]{{\]}} : memref<4x8x16xf32> to memref<8x16xf32, strided<[16, 1], offset: ?>>
// LINEAR-HOST-NEXT: host.linear ins([[VIEW]], [[ARG1]], [[ARG2]] : memref<8x32xf32, strided<[32, 1], offset: ?>>, memref<16x32xf32>, memref<16xf32>) outs([[VIEW_1]] : memref<8x16xf32, strided<[16, 1], offset: ?>>)
// LINEAR-HOST-NEXT: }
// LINEAR-HOST-NEXT: return
// LINEAR-HOST-NEXT: }

// LINEAR-LABEL: func.func @linear(
// LINEAR-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<4x8x32xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<16x32xf32>, [[ARG2:%[a-zA-Z0-9_]+]]: memref<16xf32>, [[ARG3:%[a-zA-Z0-9_]+]]: memref<4x8x16xf32>) {
// LINEAR-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// LINEAR-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// LINEAR-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// LINEAR-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// LINEAR-NEXT: scf.for [[I:%[a-zA-Z0-9_]+]] = [[C0]] to [[C4]] step [[C1]] {
// LINEAR-NEXT: [[S:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I]] : !host.stream
// LINEAR-NEXT: host.set_current_stream [[S]]
// LINEAR-NEXT: host.sync_stream [[MAIN]]
// LINEAR-NEXT: }
// LINEAR-NEXT: scf.for [[I_1:%[a-zA-Z0-9_]+]] = [[C0]] to [[C4]] step [[C1]] {
// LINEAR-NEXT: [[S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I_1]] : !host.stream
// LINEAR-NEXT: host.set_current_stream [[S_1]]
// LINEAR-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[I_1]]{{\]}} : memref<4x8x32xf32> to memref<8x32xf32, strided<[32, 1], offset: ?>>
// LINEAR-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[ARG3]][0]{{\[}}[[I_1]]{{\]}} : memref<4x8x16xf32> to memref<8x16xf32, strided<[16, 1], offset: ?>>
// LINEAR-NEXT: host.linear ins([[VIEW]], [[ARG1]], [[ARG2]] : memref<8x32xf32, strided<[32, 1], offset: ?>>, memref<16x32xf32>, memref<16xf32>) outs([[VIEW_1]] : memref<8x16xf32, strided<[16, 1], offset: ?>>)
// LINEAR-NEXT: }
// LINEAR-NEXT: host.set_current_stream [[MAIN]]
// LINEAR-NEXT: scf.for [[JOIN_I_1:%[a-zA-Z0-9_]+]] = [[C0]] to [[C4]] step [[C1]] {
// LINEAR-NEXT: [[JOIN_S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[JOIN_I_1]] : !host.stream
// LINEAR-NEXT: host.sync_stream [[JOIN_S_1]]
// LINEAR-NEXT: }
// LINEAR-NEXT: return
// LINEAR-NEXT: }
