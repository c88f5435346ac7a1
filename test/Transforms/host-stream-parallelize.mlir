// RUN: hir-opt --host-stream-parallelize --split-input-file %s | FileCheck %s --check-prefix=STREAM-FOR
// RUN: hir-opt --pass-pipeline='builtin.module(func.func(host-stream-parallelize{num-streams=3}))' --split-input-file %s | FileCheck %s --check-prefix=ROTATE
// The CHECK lines check the loops the stream_for stands for, as
// host-lower-stream-for expands it (what hir-lower prints).
// RUN: hir-opt --pass-pipeline='builtin.module(func.func(host-stream-parallelize,host-lower-stream-for))' --split-input-file %s | FileCheck %s

// convert-fusion-to-host makes one host.stream_for per stream-parallel op;
// the pass fuses the two loops over the same range into the later one, whose
// body is the first loop's work, then its own.
// STREAM-FOR-LABEL: func.func @merged(
// STREAM-FOR-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<4x8xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<4x8xf32>) {
// STREAM-FOR-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// STREAM-FOR: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// STREAM-FOR-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// STREAM-FOR-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// STREAM-FOR-NEXT: host.stream_for [[C0]] to [[C4]] step [[C1]] from [[MAIN]] {
// STREAM-FOR-NEXT: ^bb0([[I:%[a-zA-Z0-9_]+]]: index, {{%[a-zA-Z0-9_]+}}: !host.stream):
// STREAM-FOR-NEXT: host.select [[ARG0]][0]{{\[}}[[I]]{{\]}}
// STREAM-FOR: host.neg
// STREAM-FOR: host.add
// STREAM-FOR-NEXT: }
// STREAM-FOR-NEXT: return
// STREAM-FOR-NOT: scf.for
// STREAM-FOR-LABEL: func.func @split(
// STREAM-FOR-COUNT-2: host.stream_for

// num-streams=3: iteration i runs on pool stream i mod 3 (the op's streams).
// ROTATE-LABEL: func.func @merged(
// ROTATE: [[MAIN:%.+]] = host.get_current_stream
// ROTATE: [[C3:%.+]] = arith.constant 3 : index
// ROTATE-NEXT: host.stream_for {{.*}} from [[MAIN]] streams [[C3]] {

// Two loops over the same range fuse into one; the allocation between them
// is no work and stays in front of it. The caller's stream is
// read once, and every pool stream waits for it in a loop of its own.
// CHECK-LABEL: func.func @merged(
// CHECK-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<4x8xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<4x8xf32>) {
// CHECK-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// CHECK-NEXT: [[BUF:%[a-zA-Z0-9_]+]] = host.alloc : memref<4x8xf32>
// CHECK-NEXT: [[BUF_1:%[a-zA-Z0-9_]+]] = host.alloc : memref<4x8xf32>
// CHECK-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// CHECK-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// CHECK-NEXT: scf.for [[I:%[a-zA-Z0-9_]+]] = [[C0]] to [[C4]] step [[C1]] {
// CHECK-NEXT: [[S:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I]] : !host.stream
// CHECK-NEXT: host.set_current_stream [[S]]
// CHECK-NEXT: host.sync_stream [[MAIN]]
// CHECK-NEXT: }
// CHECK-NEXT: scf.for [[I_1:%[a-zA-Z0-9_]+]] = [[C0]] to [[C4]] step [[C1]] {
// CHECK-NEXT: [[S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I_1]] : !host.stream
// CHECK-NEXT: host.set_current_stream [[S_1]]
// CHECK-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[I_1]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// CHECK-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[BUF]][0]{{\[}}[[I_1]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// CHECK-NEXT: host.neg ins([[VIEW]] : memref<8xf32, strided<[1], offset: ?>>) outs([[VIEW_1]] : memref<8xf32, strided<[1], offset: ?>>)
// CHECK-NEXT: [[VIEW_2:%[a-zA-Z0-9_]+]] = host.select [[BUF]][0]{{\[}}[[I_1]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// CHECK-NEXT: [[VIEW_3:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[I_1]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// CHECK-NEXT: [[VIEW_4:%[a-zA-Z0-9_]+]] = host.select [[ARG1]][0]{{\[}}[[I_1]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// CHECK-NEXT: host.add ins([[VIEW_2]], [[VIEW_3]] : memref<8xf32, strided<[1], offset: ?>>, memref<8xf32, strided<[1], offset: ?>>) outs([[VIEW_4]] : memref<8xf32, strided<[1], offset: ?>>)
// CHECK-NEXT: }
// CHECK-NEXT: host.set_current_stream [[MAIN]]
// CHECK-NEXT: scf.for [[JOIN_I_1:%[a-zA-Z0-9_]+]] = [[C0]] to [[C4]] step [[C1]] {
// CHECK-NEXT: [[JOIN_S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[JOIN_I_1]] : !host.stream
// CHECK-NEXT: host.sync_stream [[JOIN_S_1]]
// CHECK-NEXT: }
// CHECK-NEXT: return
// CHECK-NEXT: }
func.func @merged(%a: memref<4x8xf32>, %out: memref<4x8xf32>) {
  %main = host.get_current_stream : !host.stream
  %t = host.alloc : memref<4x8xf32>
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %ai = host.select %a[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    %ti = host.select %t[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.neg ins(%ai : memref<8xf32, strided<[1], offset: ?>>) outs(%ti : memref<8xf32, strided<[1], offset: ?>>)
  }
  %u = host.alloc : memref<4x8xf32>
  %c0_0 = arith.constant 0 : index
  %c4_1 = arith.constant 4 : index
  %c1_2 = arith.constant 1 : index
  host.stream_for %c0_0 to %c4_1 step %c1_2 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %ti = host.select %t[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    %ai = host.select %a[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    %oi = host.select %out[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.add ins(%ti, %ai : memref<8xf32, strided<[1], offset: ?>>, memref<8xf32, strided<[1], offset: ?>>) outs(%oi : memref<8xf32, strided<[1], offset: ?>>)
  }
  return
}

// -----

// Work between two loops keeps them apart; so does a different range.
// CHECK-LABEL: func.func @split(
// CHECK-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<4x8xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<4x8xf32>, [[ARG2:%[a-zA-Z0-9_]+]]: memref<8x4xf32>) {
// CHECK-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// CHECK-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// CHECK-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// CHECK-NEXT: scf.for [[I:%[a-zA-Z0-9_]+]] = [[C0]] to [[C4]] step [[C1]] {
// CHECK-NEXT: [[S:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I]] : !host.stream
// CHECK-NEXT: host.set_current_stream [[S]]
// CHECK-NEXT: host.sync_stream [[MAIN]]
// CHECK-NEXT: }
// CHECK-NEXT: scf.for [[I_1:%[a-zA-Z0-9_]+]] = [[C0]] to [[C4]] step [[C1]] {
// CHECK-NEXT: [[S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I_1]] : !host.stream
// CHECK-NEXT: host.set_current_stream [[S_1]]
// CHECK-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[I_1]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// CHECK-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[ARG1]][0]{{\[}}[[I_1]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// CHECK-NEXT: host.neg ins([[VIEW]] : memref<8xf32, strided<[1], offset: ?>>) outs([[VIEW_1]] : memref<8xf32, strided<[1], offset: ?>>)
// CHECK-NEXT: }
// CHECK-NEXT: host.set_current_stream [[MAIN]]
// CHECK-NEXT: scf.for [[JOIN_I_1:%[a-zA-Z0-9_]+]] = [[C0]] to [[C4]] step [[C1]] {
// CHECK-NEXT: [[JOIN_S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[JOIN_I_1]] : !host.stream
// CHECK-NEXT: host.sync_stream [[JOIN_S_1]]
// CHECK-NEXT: }
// CHECK-NEXT: host.copy ins([[ARG1]] : memref<4x8xf32>) outs([[ARG0]] : memref<4x8xf32>)
// CHECK-NEXT: [[C00:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: [[C41:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// CHECK-NEXT: [[C12:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// CHECK-NEXT: scf.for [[I_2:%[a-zA-Z0-9_]+]] = [[C00]] to [[C41]] step [[C12]] {
// CHECK-NEXT: [[S_2:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I_2]] : !host.stream
// CHECK-NEXT: host.set_current_stream [[S_2]]
// CHECK-NEXT: host.sync_stream [[MAIN]]
// CHECK-NEXT: }
// CHECK-NEXT: scf.for [[I_3:%[a-zA-Z0-9_]+]] = [[C00]] to [[C41]] step [[C12]] {
// CHECK-NEXT: [[S_3:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I_3]] : !host.stream
// CHECK-NEXT: host.set_current_stream [[S_3]]
// CHECK-NEXT: [[VIEW_2:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[I_3]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// CHECK-NEXT: [[VIEW_3:%[a-zA-Z0-9_]+]] = host.select [[ARG1]][0]{{\[}}[[I_3]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// CHECK-NEXT: host.neg ins([[VIEW_2]] : memref<8xf32, strided<[1], offset: ?>>) outs([[VIEW_3]] : memref<8xf32, strided<[1], offset: ?>>)
// CHECK-NEXT: }
// CHECK-NEXT: host.set_current_stream [[MAIN]]
// CHECK-NEXT: scf.for [[JOIN_I_3:%[a-zA-Z0-9_]+]] = [[C00]] to [[C41]] step [[C12]] {
// CHECK-NEXT: [[JOIN_S_3:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[JOIN_I_3]] : !host.stream
// CHECK-NEXT: host.sync_stream [[JOIN_S_3]]
// CHECK-NEXT: }
// CHECK-NEXT: [[C03:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: [[C8:%[a-zA-Z0-9_]+]] = arith.constant 8 : index
// CHECK-NEXT: [[C14:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// CHECK-NEXT: scf.for [[I_4:%[a-zA-Z0-9_]+]] = [[C03]] to [[C8]] step [[C14]] {
// CHECK-NEXT: [[S_4:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I_4]] : !host.stream
// CHECK-NEXT: host.set_current_stream [[S_4]]
// CHECK-NEXT: host.sync_stream [[MAIN]]
// CHECK-NEXT: }
// CHECK-NEXT: scf.for [[I_5:%[a-zA-Z0-9_]+]] = [[C03]] to [[C8]] step [[C14]] {
// CHECK-NEXT: [[S_5:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I_5]] : !host.stream
// CHECK-NEXT: host.set_current_stream [[S_5]]
// CHECK-NEXT: [[VIEW_4:%[a-zA-Z0-9_]+]] = host.select [[ARG2]][0]{{\[}}[[I_5]]{{\]}} : memref<8x4xf32> to memref<4xf32, strided<[1], offset: ?>>
// CHECK-NEXT: [[VIEW_5:%[a-zA-Z0-9_]+]] = host.select [[ARG2]][0]{{\[}}[[I_5]]{{\]}} : memref<8x4xf32> to memref<4xf32, strided<[1], offset: ?>>
// CHECK-NEXT: host.neg ins([[VIEW_4]] : memref<4xf32, strided<[1], offset: ?>>) outs([[VIEW_5]] : memref<4xf32, strided<[1], offset: ?>>)
// CHECK-NEXT: }
// CHECK-NEXT: host.set_current_stream [[MAIN]]
// CHECK-NEXT: scf.for [[JOIN_I_5:%[a-zA-Z0-9_]+]] = [[C03]] to [[C8]] step [[C14]] {
// CHECK-NEXT: [[JOIN_S_5:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[JOIN_I_5]] : !host.stream
// CHECK-NEXT: host.sync_stream [[JOIN_S_5]]
// CHECK-NEXT: }
// CHECK-NEXT: return
// CHECK-NEXT: }
func.func @split(%a: memref<4x8xf32>, %b: memref<4x8xf32>, %c: memref<8x4xf32>) {
  %main = host.get_current_stream : !host.stream
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %ai = host.select %a[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    %bi = host.select %b[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.neg ins(%ai : memref<8xf32, strided<[1], offset: ?>>) outs(%bi : memref<8xf32, strided<[1], offset: ?>>)
  }
  host.copy ins(%b : memref<4x8xf32>) outs(%a : memref<4x8xf32>)
  %c0_0 = arith.constant 0 : index
  %c4_1 = arith.constant 4 : index
  %c1_2 = arith.constant 1 : index
  host.stream_for %c0_0 to %c4_1 step %c1_2 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %ai = host.select %a[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    %bi = host.select %b[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.neg ins(%ai : memref<8xf32, strided<[1], offset: ?>>) outs(%bi : memref<8xf32, strided<[1], offset: ?>>)
  }
  %c0_3 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c1_4 = arith.constant 1 : index
  host.stream_for %c0_3 to %c8 step %c1_4 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %ci = host.select %c[0][%i] : memref<8x4xf32> to memref<4xf32, strided<[1], offset: ?>>
    %ci2 = host.select %c[0][%i] : memref<8x4xf32> to memref<4xf32, strided<[1], offset: ?>>
    host.neg ins(%ci : memref<4xf32, strided<[1], offset: ?>>) outs(%ci2 : memref<4xf32, strided<[1], offset: ?>>)
  }
  return
}

// -----

// Iteration i of the second loop reads all of what the first loop writes
// (host.sum over the whole buffer): fusing would break that dependence, so
// the loops stay apart.
// STREAM-FOR-LABEL: func.func @dependent(
// STREAM-FOR-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<4x8xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<4x8xf32>) {
// STREAM-FOR-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// STREAM-FOR-NEXT: [[BUF:%[a-zA-Z0-9_]+]] = host.alloc : memref<4x8xf32>
// STREAM-FOR-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// STREAM-FOR-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// STREAM-FOR-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// STREAM-FOR-NEXT: host.stream_for [[C0]] to [[C4]] step [[C1]] from [[MAIN]] {
// STREAM-FOR-NEXT: ^bb0([[I:%[a-zA-Z0-9_]+]]: index, [[S:%[a-zA-Z0-9_]+]]: !host.stream):
// STREAM-FOR-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[I]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// STREAM-FOR-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[BUF]][0]{{\[}}[[I]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// STREAM-FOR-NEXT: host.neg ins([[VIEW]] : memref<8xf32, strided<[1], offset: ?>>) outs([[VIEW_1]] : memref<8xf32, strided<[1], offset: ?>>)
// STREAM-FOR-NEXT: }
// STREAM-FOR-NEXT: host.stream_for [[C0]] to [[C4]] step [[C1]] from [[MAIN]] {
// STREAM-FOR-NEXT: ^bb0([[I_1:%[a-zA-Z0-9_]+]]: index, [[S_1:%[a-zA-Z0-9_]+]]: !host.stream):
// STREAM-FOR-NEXT: [[VIEW_2:%[a-zA-Z0-9_]+]] = host.select [[ARG1]][0]{{\[}}[[I_1]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// STREAM-FOR-NEXT: host.sum [0] ins([[BUF]] : memref<4x8xf32>) outs([[VIEW_2]] : memref<8xf32, strided<[1], offset: ?>>)
// STREAM-FOR-NEXT: }
// STREAM-FOR-NEXT: return
// STREAM-FOR-NEXT: }
func.func @dependent(%a: memref<4x8xf32>, %out: memref<4x8xf32>) {
  %main = host.get_current_stream : !host.stream
  %t = host.alloc : memref<4x8xf32>
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %ai = host.select %a[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    %ti = host.select %t[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.neg ins(%ai : memref<8xf32, strided<[1], offset: ?>>) outs(%ti : memref<8xf32, strided<[1], offset: ?>>)
  }
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %oi = host.select %out[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.sum [0] ins(%t : memref<4x8xf32>) outs(%oi : memref<8xf32, strided<[1], offset: ?>>)
  }
  return
}

// -----

// Dependences are followed through views made before the loops: slice i
// of a view of %t along axis 1 at 0 is within slice i of %t along axis 0,
// as the second loop reads it, so the loops fuse.
// STREAM-FOR-LABEL: func.func @through_views(
// STREAM-FOR-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<4x8xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<4x8xf32>) {
// STREAM-FOR-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// STREAM-FOR-NEXT: [[BUF:%[a-zA-Z0-9_]+]] = host.alloc : memref<4x1x8xf32>
// STREAM-FOR-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// STREAM-FOR-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[BUF]][1]{{\[}}[[C0]]{{\]}} : memref<4x1x8xf32> to memref<4x8xf32, strided<[8, 1], offset: ?>>
// STREAM-FOR-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// STREAM-FOR-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// STREAM-FOR-NEXT: host.stream_for [[C0]] to [[C4]] step [[C1]] from [[MAIN]] {
// STREAM-FOR-NEXT: ^bb0([[I:%[a-zA-Z0-9_]+]]: index, [[S:%[a-zA-Z0-9_]+]]: !host.stream):
// STREAM-FOR-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[I]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// STREAM-FOR-NEXT: [[VIEW_2:%[a-zA-Z0-9_]+]] = host.select [[VIEW]][0]{{\[}}[[I]]{{\]}} : memref<4x8xf32, strided<[8, 1], offset: ?>> to memref<8xf32, strided<[1], offset: ?>>
// STREAM-FOR-NEXT: host.neg ins([[VIEW_1]] : memref<8xf32, strided<[1], offset: ?>>) outs([[VIEW_2]] : memref<8xf32, strided<[1], offset: ?>>)
// STREAM-FOR-NEXT: [[VIEW_3:%[a-zA-Z0-9_]+]] = host.select [[BUF]][0]{{\[}}[[I]]{{\]}} : memref<4x1x8xf32> to memref<1x8xf32, strided<[8, 1], offset: ?>>
// STREAM-FOR-NEXT: [[VIEW_4:%[a-zA-Z0-9_]+]] = host.select [[VIEW_3]][0]{{\[}}[[C0]]{{\]}} : memref<1x8xf32, strided<[8, 1], offset: ?>> to memref<8xf32, strided<[1], offset: ?>>
// STREAM-FOR-NEXT: [[VIEW_5:%[a-zA-Z0-9_]+]] = host.select [[ARG1]][0]{{\[}}[[I]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// STREAM-FOR-NEXT: host.exp ins([[VIEW_4]] : memref<8xf32, strided<[1], offset: ?>>) outs([[VIEW_5]] : memref<8xf32, strided<[1], offset: ?>>)
// STREAM-FOR-NEXT: }
// STREAM-FOR-NEXT: return
// STREAM-FOR-NEXT: }
func.func @through_views(%a: memref<4x8xf32>, %out: memref<4x8xf32>) {
  %main = host.get_current_stream : !host.stream
  %t = host.alloc : memref<4x1x8xf32>
  %c0 = arith.constant 0 : index
  %v = host.select %t[1][%c0] : memref<4x1x8xf32> to memref<4x8xf32, strided<[8, 1], offset: ?>>
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %ai = host.select %a[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    %vi = host.select %v[0][%i] : memref<4x8xf32, strided<[8, 1], offset: ?>> to memref<8xf32, strided<[1], offset: ?>>
    host.neg ins(%ai : memref<8xf32, strided<[1], offset: ?>>) outs(%vi : memref<8xf32, strided<[1], offset: ?>>)
  }
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %ti = host.select %t[0][%i] : memref<4x1x8xf32> to memref<1x8xf32, strided<[8, 1], offset: ?>>
    %tv = host.select %ti[0][%c0] : memref<1x8xf32, strided<[8, 1], offset: ?>> to memref<8xf32, strided<[1], offset: ?>>
    %oi = host.select %out[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.exp ins(%tv : memref<8xf32, strided<[1], offset: ?>>) outs(%oi : memref<8xf32, strided<[1], offset: ?>>)
  }
  return
}

// -----

// A loop that only takes views (the slices of a collective that stays
// whole, for host-p2p-pipeline) is not fused.
// STREAM-FOR-LABEL: func.func @views_only(
// STREAM-FOR-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<2x8xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<2x8xf32>) {
// STREAM-FOR-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// STREAM-FOR-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// STREAM-FOR-NEXT: [[C2:%[a-zA-Z0-9_]+]] = arith.constant 2 : index
// STREAM-FOR-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// STREAM-FOR-NEXT: host.stream_for [[C0]] to [[C2]] step [[C1]] from [[MAIN]] {
// STREAM-FOR-NEXT: ^bb0([[I:%[a-zA-Z0-9_]+]]: index, [[S:%[a-zA-Z0-9_]+]]: !host.stream):
// STREAM-FOR-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[I]]{{\]}} : memref<2x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// STREAM-FOR-NEXT: }
// STREAM-FOR-NEXT: host.stream_for [[C0]] to [[C2]] step [[C1]] from [[MAIN]] {
// STREAM-FOR-NEXT: ^bb0([[I_1:%[a-zA-Z0-9_]+]]: index, [[S_1:%[a-zA-Z0-9_]+]]: !host.stream):
// STREAM-FOR-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[ARG1]][0]{{\[}}[[I_1]]{{\]}} : memref<2x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// STREAM-FOR-NEXT: host.neg ins([[VIEW_1]] : memref<8xf32, strided<[1], offset: ?>>) outs([[VIEW_1]] : memref<8xf32, strided<[1], offset: ?>>)
// STREAM-FOR-NEXT: }
// STREAM-FOR-NEXT: return
// STREAM-FOR-NEXT: }
func.func @views_only(%g: memref<2x8xf32>, %a: memref<2x8xf32>) {
  %main = host.get_current_stream : !host.stream
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  host.stream_for %c0 to %c2 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %gi = host.select %g[0][%i] : memref<2x8xf32> to memref<8xf32, strided<[1], offset: ?>>
  }
  host.stream_for %c0 to %c2 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %ai = host.select %a[0][%i] : memref<2x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.neg ins(%ai : memref<8xf32, strided<[1], offset: ?>>) outs(%ai : memref<8xf32, strided<[1], offset: ?>>)
  }
  return
}

// -----

// A view the same in every iteration (a matmul operand's batch axis of
// extent 1 taken at 0) is hoisted in front of the loop.
// STREAM-FOR-LABEL: func.func @hoisted(
// STREAM-FOR-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<2x4x8x16xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<1x1x16x4xf32>, [[ARG2:%[a-zA-Z0-9_]+]]: memref<2x4x8x4xf32>) {
// STREAM-FOR-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// STREAM-FOR-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// STREAM-FOR-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// STREAM-FOR-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// STREAM-FOR-NEXT: [[C0_1:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// STREAM-FOR-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG1]][1]{{\[}}[[C0_1]]{{\]}} : memref<1x1x16x4xf32> to memref<1x16x4xf32, strided<[64, 4, 1], offset: ?>>
// STREAM-FOR-NEXT: host.stream_for [[C0]] to [[C4]] step [[C1]] from [[MAIN]] {
// STREAM-FOR-NEXT: ^bb0([[I:%[a-zA-Z0-9_]+]]: index, [[S:%[a-zA-Z0-9_]+]]: !host.stream):
// STREAM-FOR-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][1]{{\[}}[[I]]{{\]}} : memref<2x4x8x16xf32> to memref<2x8x16xf32, strided<[512, 16, 1], offset: ?>>
// STREAM-FOR-NEXT: [[VIEW_2:%[a-zA-Z0-9_]+]] = host.select [[ARG2]][1]{{\[}}[[I]]{{\]}} : memref<2x4x8x4xf32> to memref<2x8x4xf32, strided<[128, 4, 1], offset: ?>>
// STREAM-FOR-NEXT: host.matmul ins([[VIEW_1]], [[VIEW]] : memref<2x8x16xf32, strided<[512, 16, 1], offset: ?>>, memref<1x16x4xf32, strided<[64, 4, 1], offset: ?>>) outs([[VIEW_2]] : memref<2x8x4xf32, strided<[128, 4, 1], offset: ?>>)
// STREAM-FOR-NEXT: }
// STREAM-FOR-NEXT: return
// STREAM-FOR-NEXT: }
func.func @hoisted(%a: memref<2x4x8x16xf32>, %w: memref<1x1x16x4xf32>, %c: memref<2x4x8x4xf32>) {
  %main = host.get_current_stream : !host.stream
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %ai = host.select %a[1][%i] : memref<2x4x8x16xf32> to memref<2x8x16xf32, strided<[512, 16, 1], offset: ?>>
    %z = arith.constant 0 : index
    %w0 = host.select %w[1][%z] : memref<1x1x16x4xf32> to memref<1x16x4xf32, strided<[64, 4, 1], offset: ?>>
    %ci = host.select %c[1][%i] : memref<2x4x8x4xf32> to memref<2x8x4xf32, strided<[128, 4, 1], offset: ?>>
    host.matmul ins(%ai, %w0 : memref<2x8x16xf32, strided<[512, 16, 1], offset: ?>>, memref<1x16x4xf32, strided<[64, 4, 1], offset: ?>>) outs(%ci : memref<2x8x4xf32, strided<[128, 4, 1], offset: ?>>)
  }
  return
}

// -----

// A loop nested in another op is left as it is.
// STREAM-FOR-LABEL: func.func @nested(
// STREAM-FOR-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<4x8xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: i1) {
// STREAM-FOR-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// STREAM-FOR-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// STREAM-FOR-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// STREAM-FOR-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// STREAM-FOR-NEXT: scf.if [[ARG1]] {
// STREAM-FOR-NEXT: host.stream_for [[C0]] to [[C4]] step [[C1]] from [[MAIN]] {
// STREAM-FOR-NEXT: ^bb0([[I:%[a-zA-Z0-9_]+]]: index, [[S:%[a-zA-Z0-9_]+]]: !host.stream):
// STREAM-FOR-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[I]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// STREAM-FOR-NEXT: host.neg ins([[VIEW]] : memref<8xf32, strided<[1], offset: ?>>) outs([[VIEW]] : memref<8xf32, strided<[1], offset: ?>>)
// STREAM-FOR-NEXT: }
// STREAM-FOR-NEXT: }
// STREAM-FOR-NEXT: return
// STREAM-FOR-NEXT: }
func.func @nested(%a: memref<4x8xf32>, %flag: i1) {
  %main = host.get_current_stream : !host.stream
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  scf.if %flag {
    host.stream_for %c0 to %c4 step %c1 from %main {
    ^bb0(%i: index, %s: !host.stream):
      %ai = host.select %a[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
      host.neg ins(%ai : memref<8xf32, strided<[1], offset: ?>>) outs(%ai : memref<8xf32, strided<[1], offset: ?>>)
    }
  }
  return
}

// -----

// stream<k> loops take chunks (memref.subview at index * size): loops that
// take the same chunks of a buffer one writes and the other reads fuse; the
// chunks along another axis read what other iterations write, so that loop
// stays apart.
// STREAM-FOR-LABEL: func.func @chunks(
// STREAM-FOR: host.stream_for
// STREAM-FOR: host.neg
// STREAM-FOR-NEXT: arith.muli
// STREAM-FOR: host.exp
// STREAM-FOR-NEXT: }
// STREAM-FOR-NOT: host.
// STREAM-FOR: host.stream_for
// STREAM-FOR: host.abs
// STREAM-FOR-NEXT: }
// STREAM-FOR-NEXT: host.dealloc
func.func @chunks(%a: memref<8x4xf32>, %out: memref<8x4xf32>, %other: memref<8x4xf32>) {
  %main = host.get_current_stream : !host.stream
  %t = host.alloc : memref<8x4xf32>
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  host.stream_for %c0 to %c2 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %c4 = arith.constant 4 : index
    %o = arith.muli %i, %c4 : index
    %ai = memref.subview %a[%o, 0] [4, 4] [1, 1] : memref<8x4xf32> to memref<4x4xf32, strided<[4, 1], offset: ?>>
    %ti = memref.subview %t[%o, 0] [4, 4] [1, 1] : memref<8x4xf32> to memref<4x4xf32, strided<[4, 1], offset: ?>>
    host.neg ins(%ai : memref<4x4xf32, strided<[4, 1], offset: ?>>) outs(%ti : memref<4x4xf32, strided<[4, 1], offset: ?>>)
  }
  %c0_0 = arith.constant 0 : index
  %c2_0 = arith.constant 2 : index
  %c1_0 = arith.constant 1 : index
  host.stream_for %c0_0 to %c2_0 step %c1_0 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %c4 = arith.constant 4 : index
    %o = arith.muli %i, %c4 : index
    %ti = memref.subview %t[%o, 0] [4, 4] [1, 1] : memref<8x4xf32> to memref<4x4xf32, strided<[4, 1], offset: ?>>
    %oi = memref.subview %out[%o, 0] [4, 4] [1, 1] : memref<8x4xf32> to memref<4x4xf32, strided<[4, 1], offset: ?>>
    host.exp ins(%ti : memref<4x4xf32, strided<[4, 1], offset: ?>>) outs(%oi : memref<4x4xf32, strided<[4, 1], offset: ?>>)
  }
  %c0_1 = arith.constant 0 : index
  %c2_1 = arith.constant 2 : index
  %c1_1 = arith.constant 1 : index
  host.stream_for %c0_1 to %c2_1 step %c1_1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %c2_2 = arith.constant 2 : index
    %o = arith.muli %i, %c2_2 : index
    %ti = memref.subview %t[0, %o] [8, 2] [1, 1] : memref<8x4xf32> to memref<8x2xf32, strided<[4, 1], offset: ?>>
    %oi = memref.subview %other[0, %o] [8, 2] [1, 1] : memref<8x4xf32> to memref<8x2xf32, strided<[4, 1], offset: ?>>
    host.abs ins(%ti : memref<8x2xf32, strided<[4, 1], offset: ?>>) outs(%oi : memref<8x2xf32, strided<[4, 1], offset: ?>>)
  }
  host.dealloc %t : memref<8x4xf32>
  return
}
