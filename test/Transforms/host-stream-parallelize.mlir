// RUN: hir-opt --host-stream-parallelize --split-input-file %s | FileCheck %s --check-prefix=STREAM-FOR
// RUN: hir-opt --pass-pipeline='builtin.module(func.func(host-stream-parallelize{num-streams=3}))' --split-input-file %s | FileCheck %s --check-prefix=ROTATE
// The CHECK lines check the loops the stream_for stands for, as
// host-lower-stream-for expands it (what hir-lower prints).
// RUN: hir-opt --pass-pipeline='builtin.module(func.func(host-stream-parallelize,host-lower-stream-for))' --split-input-file %s | FileCheck %s

// The pass makes one host.stream_for per loop: forked from and joined into
// the caller's stream, read once at the function's entry; the body takes the
// iteration's slices at its index.
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

// Two stream-parallel ops over the same extent share one loop; the allocation
// between them is no work and stays in front of it. The caller's stream is
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
// CHECK-NEXT: host.set_current_stream [[MAIN]]
// CHECK-NEXT: host.sync_stream [[S_1]]
// CHECK-NEXT: }
// CHECK-NEXT: return
// CHECK-NEXT: }
func.func @merged(%a: memref<4x8xf32>, %out: memref<4x8xf32>) {
  %t = host.alloc : memref<4x8xf32>
  host.neg ins(%a : memref<4x8xf32>) outs(%t : memref<4x8xf32>) {host.stream_axis = 0 : i64}
  %u = host.alloc : memref<4x8xf32>
  host.add ins(%t, %a : memref<4x8xf32>, memref<4x8xf32>) outs(%out : memref<4x8xf32>) {host.stream_axis = 0 : i64}
  return
}

// -----

// Work that is not stream-parallel closes the loop; so does a different extent.
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
// CHECK-NEXT: host.set_current_stream [[MAIN]]
// CHECK-NEXT: host.sync_stream [[S_1]]
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
// CHECK-NEXT: host.set_current_stream [[MAIN]]
// CHECK-NEXT: host.sync_stream [[S_3]]
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
// CHECK-NEXT: host.set_current_stream [[MAIN]]
// CHECK-NEXT: host.sync_stream [[S_5]]
// CHECK-NEXT: }
// CHECK-NEXT: return
// CHECK-NEXT: }
func.func @split(%a: memref<4x8xf32>, %b: memref<4x8xf32>, %c: memref<8x4xf32>) {
  host.neg ins(%a : memref<4x8xf32>) outs(%b : memref<4x8xf32>) {host.stream_axis = 0 : i64}
  host.copy ins(%b : memref<4x8xf32>) outs(%a : memref<4x8xf32>)
  host.neg ins(%a : memref<4x8xf32>) outs(%b : memref<4x8xf32>) {host.stream_axis = 0 : i64}
  host.neg ins(%c : memref<8x4xf32>) outs(%c : memref<8x4xf32>) {host.stream_axis = 0 : i64}
  return
}

// -----

// Reductions slice the kept input axis and renumber the reduced axes.
// CHECK-LABEL: func.func @reductions(
// CHECK-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<4x6x8xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<6x8xf32>, [[ARG2:%[a-zA-Z0-9_]+]]: memref<4x6xf32>) {
// CHECK-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// CHECK-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: [[C6:%[a-zA-Z0-9_]+]] = arith.constant 6 : index
// CHECK-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// CHECK-NEXT: scf.for [[I:%[a-zA-Z0-9_]+]] = [[C0]] to [[C6]] step [[C1]] {
// CHECK-NEXT: [[S:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I]] : !host.stream
// CHECK-NEXT: host.set_current_stream [[S]]
// CHECK-NEXT: host.sync_stream [[MAIN]]
// CHECK-NEXT: }
// CHECK-NEXT: scf.for [[I_1:%[a-zA-Z0-9_]+]] = [[C0]] to [[C6]] step [[C1]] {
// CHECK-NEXT: [[S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I_1]] : !host.stream
// CHECK-NEXT: host.set_current_stream [[S_1]]
// CHECK-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][1]{{\[}}[[I_1]]{{\]}} : memref<4x6x8xf32> to memref<4x8xf32, strided<[48, 1], offset: ?>>
// CHECK-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[ARG1]][0]{{\[}}[[I_1]]{{\]}} : memref<6x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// CHECK-NEXT: host.sum [0] ins([[VIEW]] : memref<4x8xf32, strided<[48, 1], offset: ?>>) outs([[VIEW_1]] : memref<8xf32, strided<[1], offset: ?>>)
// CHECK-NEXT: [[VIEW_2:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][1]{{\[}}[[I_1]]{{\]}} : memref<4x6x8xf32> to memref<4x8xf32, strided<[48, 1], offset: ?>>
// CHECK-NEXT: [[VIEW_3:%[a-zA-Z0-9_]+]] = host.select [[ARG2]][1]{{\[}}[[I_1]]{{\]}} : memref<4x6xf32> to memref<4xf32, strided<[6], offset: ?>>
// CHECK-NEXT: host.amax [1] ins([[VIEW_2]] : memref<4x8xf32, strided<[48, 1], offset: ?>>) outs([[VIEW_3]] : memref<4xf32, strided<[6], offset: ?>>)
// CHECK-NEXT: host.set_current_stream [[MAIN]]
// CHECK-NEXT: host.sync_stream [[S_1]]
// CHECK-NEXT: }
// CHECK-NEXT: return
// CHECK-NEXT: }
func.func @reductions(%a: memref<4x6x8xf32>, %b: memref<6x8xf32>, %c: memref<4x6xf32>) {
  host.sum [0] ins(%a : memref<4x6x8xf32>) outs(%b : memref<6x8xf32>) {host.stream_axis = 0 : i64}
  host.amax [2] ins(%a : memref<4x6x8xf32>) outs(%c : memref<4x6xf32>) {host.stream_axis = 1 : i64}
  return
}

// -----

// A broadcast's new axes are not sliced: along one, every iteration reads the
// whole input.
// CHECK-LABEL: func.func @broadcasts(
// CHECK-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<8xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<4x8xf32>, [[ARG2:%[a-zA-Z0-9_]+]]: memref<8x4xf32>) {
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
// CHECK-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG1]][0]{{\[}}[[I_1]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// CHECK-NEXT: host.copy ins([[ARG0]] : memref<8xf32>) outs([[VIEW]] : memref<8xf32, strided<[1], offset: ?>>)
// CHECK-NEXT: host.set_current_stream [[MAIN]]
// CHECK-NEXT: host.sync_stream [[S_1]]
// CHECK-NEXT: }
// CHECK-NEXT: [[C00:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: [[C8:%[a-zA-Z0-9_]+]] = arith.constant 8 : index
// CHECK-NEXT: [[C11:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// CHECK-NEXT: scf.for [[I_2:%[a-zA-Z0-9_]+]] = [[C00]] to [[C8]] step [[C11]] {
// CHECK-NEXT: [[S_2:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I_2]] : !host.stream
// CHECK-NEXT: host.set_current_stream [[S_2]]
// CHECK-NEXT: host.sync_stream [[MAIN]]
// CHECK-NEXT: }
// CHECK-NEXT: scf.for [[I_3:%[a-zA-Z0-9_]+]] = [[C00]] to [[C8]] step [[C11]] {
// CHECK-NEXT: [[S_3:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I_3]] : !host.stream
// CHECK-NEXT: host.set_current_stream [[S_3]]
// CHECK-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[I_3]]{{\]}} : memref<8xf32> to memref<f32, strided<[], offset: ?>>
// CHECK-NEXT: [[VIEW_2:%[a-zA-Z0-9_]+]] = host.select [[ARG2]][0]{{\[}}[[I_3]]{{\]}} : memref<8x4xf32> to memref<4xf32, strided<[1], offset: ?>>
// CHECK-NEXT: host.broadcast [0] ins([[VIEW_1]] : memref<f32, strided<[], offset: ?>>) outs([[VIEW_2]] : memref<4xf32, strided<[1], offset: ?>>)
// CHECK-NEXT: host.set_current_stream [[MAIN]]
// CHECK-NEXT: host.sync_stream [[S_3]]
// CHECK-NEXT: }
// CHECK-NEXT: return
// CHECK-NEXT: }
func.func @broadcasts(%a: memref<8xf32>, %b: memref<4x8xf32>, %c: memref<8x4xf32>) {
  host.broadcast [0] ins(%a : memref<8xf32>) outs(%b : memref<4x8xf32>) {host.stream_axis = 0 : i64}
  host.broadcast [1] ins(%a : memref<8xf32>) outs(%c : memref<8x4xf32>) {host.stream_axis = 0 : i64}
  return
}

// -----

// Matmul and linear slice their batch axes; a [K, N] rhs, the weight and the
// bias are shared by every iteration.
// CHECK-LABEL: func.func @contractions(
// CHECK-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<2x4x8xbf16>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<8x16xbf16>, [[ARG2:%[a-zA-Z0-9_]+]]: memref<2x8x16xbf16>, [[ARG3:%[a-zA-Z0-9_]+]]: memref<2x4x16xbf16>, [[ARG4:%[a-zA-Z0-9_]+]]: memref<16x8xbf16>, [[ARG5:%[a-zA-Z0-9_]+]]: memref<16xbf16>) {
// CHECK-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// CHECK-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: [[C2:%[a-zA-Z0-9_]+]] = arith.constant 2 : index
// CHECK-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// CHECK-NEXT: scf.for [[I:%[a-zA-Z0-9_]+]] = [[C0]] to [[C2]] step [[C1]] {
// CHECK-NEXT: [[S:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I]] : !host.stream
// CHECK-NEXT: host.set_current_stream [[S]]
// CHECK-NEXT: host.sync_stream [[MAIN]]
// CHECK-NEXT: }
// CHECK-NEXT: scf.for [[I_1:%[a-zA-Z0-9_]+]] = [[C0]] to [[C2]] step [[C1]] {
// CHECK-NEXT: [[S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I_1]] : !host.stream
// CHECK-NEXT: host.set_current_stream [[S_1]]
// CHECK-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[I_1]]{{\]}} : memref<2x4x8xbf16> to memref<4x8xbf16, strided<[8, 1], offset: ?>>
// CHECK-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[ARG3]][0]{{\[}}[[I_1]]{{\]}} : memref<2x4x16xbf16> to memref<4x16xbf16, strided<[16, 1], offset: ?>>
// CHECK-NEXT: host.matmul ins([[VIEW]], [[ARG1]] : memref<4x8xbf16, strided<[8, 1], offset: ?>>, memref<8x16xbf16>) outs([[VIEW_1]] : memref<4x16xbf16, strided<[16, 1], offset: ?>>)
// CHECK-NEXT: [[VIEW_2:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[I_1]]{{\]}} : memref<2x4x8xbf16> to memref<4x8xbf16, strided<[8, 1], offset: ?>>
// CHECK-NEXT: [[VIEW_3:%[a-zA-Z0-9_]+]] = host.select [[ARG2]][0]{{\[}}[[I_1]]{{\]}} : memref<2x8x16xbf16> to memref<8x16xbf16, strided<[16, 1], offset: ?>>
// CHECK-NEXT: [[VIEW_4:%[a-zA-Z0-9_]+]] = host.select [[ARG3]][0]{{\[}}[[I_1]]{{\]}} : memref<2x4x16xbf16> to memref<4x16xbf16, strided<[16, 1], offset: ?>>
// CHECK-NEXT: host.matmul ins([[VIEW_2]], [[VIEW_3]] : memref<4x8xbf16, strided<[8, 1], offset: ?>>, memref<8x16xbf16, strided<[16, 1], offset: ?>>) outs([[VIEW_4]] : memref<4x16xbf16, strided<[16, 1], offset: ?>>)
// CHECK-NEXT: host.set_current_stream [[MAIN]]
// CHECK-NEXT: host.sync_stream [[S_1]]
// CHECK-NEXT: }
// CHECK-NEXT: [[C00:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// CHECK-NEXT: [[C11:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// CHECK-NEXT: scf.for [[I_2:%[a-zA-Z0-9_]+]] = [[C00]] to [[C4]] step [[C11]] {
// CHECK-NEXT: [[S_2:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I_2]] : !host.stream
// CHECK-NEXT: host.set_current_stream [[S_2]]
// CHECK-NEXT: host.sync_stream [[MAIN]]
// CHECK-NEXT: }
// CHECK-NEXT: scf.for [[I_3:%[a-zA-Z0-9_]+]] = [[C00]] to [[C4]] step [[C11]] {
// CHECK-NEXT: [[S_3:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I_3]] : !host.stream
// CHECK-NEXT: host.set_current_stream [[S_3]]
// CHECK-NEXT: [[VIEW_5:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][1]{{\[}}[[I_3]]{{\]}} : memref<2x4x8xbf16> to memref<2x8xbf16, strided<[32, 1], offset: ?>>
// CHECK-NEXT: [[VIEW_6:%[a-zA-Z0-9_]+]] = host.select [[ARG3]][1]{{\[}}[[I_3]]{{\]}} : memref<2x4x16xbf16> to memref<2x16xbf16, strided<[64, 1], offset: ?>>
// CHECK-NEXT: host.linear ins([[VIEW_5]], [[ARG4]], [[ARG5]] : memref<2x8xbf16, strided<[32, 1], offset: ?>>, memref<16x8xbf16>, memref<16xbf16>) outs([[VIEW_6]] : memref<2x16xbf16, strided<[64, 1], offset: ?>>)
// CHECK-NEXT: host.set_current_stream [[MAIN]]
// CHECK-NEXT: host.sync_stream [[S_3]]
// CHECK-NEXT: }
// CHECK-NEXT: return
// CHECK-NEXT: }
func.func @contractions(%a: memref<2x4x8xbf16>, %b: memref<8x16xbf16>, %bb: memref<2x8x16xbf16>,
                        %c: memref<2x4x16xbf16>, %w: memref<16x8xbf16>, %bias: memref<16xbf16>) {
  host.matmul ins(%a, %b : memref<2x4x8xbf16>, memref<8x16xbf16>) outs(%c : memref<2x4x16xbf16>) {host.stream_axis = 0 : i64}
  host.matmul ins(%a, %bb : memref<2x4x8xbf16>, memref<2x8x16xbf16>) outs(%c : memref<2x4x16xbf16>) {host.stream_axis = 0 : i64}
  host.linear ins(%a, %w, %bias : memref<2x4x8xbf16>, memref<16x8xbf16>, memref<16xbf16>) outs(%c : memref<2x4x16xbf16>) {host.stream_axis = 1 : i64}
  return
}

// -----

// A matmul operand's batch axis of extent 1 that the op broadcasts along the
// stream axis is not sliced: one view at index 0, taken before the loop,
// serves every iteration (the rhs's unit axis 1 of a per-device weight shard,
// then the lhs's unit axis 0).
// STREAM-FOR-LABEL: func.func @broadcast_batch(
// STREAM-FOR-SAME: [[A:%[a-zA-Z0-9_]+]]: memref<2x4x8x16xf32>, [[W:%[a-zA-Z0-9_]+]]: memref<1x1x16x4xf32>, [[X:%[a-zA-Z0-9_]+]]: memref<1x4x8x16xf32>, [[Y:%[a-zA-Z0-9_]+]]: memref<2x4x16x4xf32>, [[C:%[a-zA-Z0-9_]+]]: memref<2x4x8x4xf32>) {
// STREAM-FOR: [[W0:%[a-zA-Z0-9_]+]] = host.select [[W]][1]{{\[}}[[Z:%[a-zA-Z0-9_]+]]{{\]}} : memref<1x1x16x4xf32> to memref<1x16x4xf32, strided<[64, 4, 1], offset: ?>>
// STREAM-FOR-NEXT: host.stream_for
// STREAM-FOR-NEXT: ^bb0([[I:%[a-zA-Z0-9_]+]]: index
// STREAM-FOR-NEXT: [[AI:%[a-zA-Z0-9_]+]] = host.select [[A]][1]{{\[}}[[I]]{{\]}}
// STREAM-FOR-NEXT: [[CI:%[a-zA-Z0-9_]+]] = host.select [[C]][1]{{\[}}[[I]]{{\]}}
// STREAM-FOR-NEXT: host.matmul ins([[AI]], [[W0]] : memref<2x8x16xf32, strided<[512, 16, 1], offset: ?>>, memref<1x16x4xf32, strided<[64, 4, 1], offset: ?>>) outs([[CI]] : memref<2x8x4xf32, strided<[128, 4, 1], offset: ?>>)
// STREAM-FOR-NEXT: }
// STREAM-FOR: [[X0:%[a-zA-Z0-9_]+]] = host.select [[X]][0]{{\[}}[[Z1:%[a-zA-Z0-9_]+]]{{\]}} : memref<1x4x8x16xf32> to memref<4x8x16xf32, strided<[128, 16, 1], offset: ?>>
// STREAM-FOR-NEXT: host.stream_for
// STREAM-FOR-NEXT: ^bb0([[J:%[a-zA-Z0-9_]+]]: index
// STREAM-FOR-NEXT: [[YJ:%[a-zA-Z0-9_]+]] = host.select [[Y]][0]{{\[}}[[J]]{{\]}}
// STREAM-FOR-NEXT: [[CJ:%[a-zA-Z0-9_]+]] = host.select [[C]][0]{{\[}}[[J]]{{\]}}
// STREAM-FOR-NEXT: host.matmul ins([[X0]], [[YJ]] : {{.*}}) outs([[CJ]] : {{.*}})
// STREAM-FOR-NEXT: }
func.func @broadcast_batch(%a: memref<2x4x8x16xf32>, %w: memref<1x1x16x4xf32>, %x: memref<1x4x8x16xf32>,
                           %y: memref<2x4x16x4xf32>, %c: memref<2x4x8x4xf32>) {
  host.matmul ins(%a, %w : memref<2x4x8x16xf32>, memref<1x1x16x4xf32>) outs(%c : memref<2x4x8x4xf32>) {host.stream_axis = 1 : i64}
  host.matmul ins(%x, %y : memref<1x4x8x16xf32>, memref<2x4x16x4xf32>) outs(%c : memref<2x4x8x4xf32>) {host.stream_axis = 0 : i64}
  return
}

// -----

// Communications work on slices and keep their waits; the exchanged axis is
// renumbered once the stream axis is gone.
// CHECK-LABEL: func.func @collectives(
// CHECK-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<4x1x8xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<4x2x8xf32>, [[ARG2:%[a-zA-Z0-9_]+]]: memref<4x1x8xf32>) {
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
// CHECK-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[I_1]]{{\]}} : memref<4x1x8xf32> to memref<1x8xf32, strided<[8, 1], offset: ?>>
// CHECK-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[ARG1]][0]{{\[}}[[I_1]]{{\]}} : memref<4x2x8xf32> to memref<2x8xf32, strided<[8, 1], offset: ?>>
// CHECK-NEXT: [[REQ:%[a-zA-Z0-9_]+]] = comm.allgather [[VIEW]] into [[VIEW_1]] team [0, 1] : memref<1x8xf32, strided<[8, 1], offset: ?>> into memref<2x8xf32, strided<[8, 1], offset: ?>>
// CHECK-NEXT: comm.wait [[REQ]]
// CHECK-NEXT: [[VIEW_2:%[a-zA-Z0-9_]+]] = host.select [[ARG1]][0]{{\[}}[[I_1]]{{\]}} : memref<4x2x8xf32> to memref<2x8xf32, strided<[8, 1], offset: ?>>
// CHECK-NEXT: [[VIEW_3:%[a-zA-Z0-9_]+]] = host.select [[ARG2]][0]{{\[}}[[I_1]]{{\]}} : memref<4x1x8xf32> to memref<1x8xf32, strided<[8, 1], offset: ?>>
// CHECK-NEXT: [[REQ_1:%[a-zA-Z0-9_]+]] = comm.reduce_scatter [[VIEW_2]] into [[VIEW_3]] sum team [0, 1] : memref<2x8xf32, strided<[8, 1], offset: ?>> into memref<1x8xf32, strided<[8, 1], offset: ?>>
// CHECK-NEXT: comm.wait [[REQ_1]]
// CHECK-NEXT: host.set_current_stream [[MAIN]]
// CHECK-NEXT: host.sync_stream [[S_1]]
// CHECK-NEXT: }
// CHECK-NEXT: return
// CHECK-NEXT: }
func.func @collectives(%a: memref<4x1x8xf32>, %g: memref<4x2x8xf32>, %r: memref<4x1x8xf32>) {
  %0 = comm.allgather %a into %g axis 1 team [0, 1] {host.stream_axis = 0 : i64} : memref<4x1x8xf32> into memref<4x2x8xf32>
  comm.wait %0
  %1 = comm.reduce_scatter %g into %r sum axis 1 team [0, 1] {host.stream_axis = 0 : i64} : memref<4x2x8xf32> into memref<4x1x8xf32>
  comm.wait %1
  return
}

// -----

// An allgather along the stream axis has no per-slice form: it runs whole
// before the loop that reads its slices (host-p2p-pipeline makes a ring of it),
// and a reduce-scatter along it after the loop that writes them.
// CHECK-LABEL: func.func @whole_collectives(
// CHECK-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<1x8xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<2x8xf32>, [[ARG2:%[a-zA-Z0-9_]+]]: memref<2x8xf32>, [[ARG3:%[a-zA-Z0-9_]+]]: memref<1x8xf32>) {
// CHECK-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// CHECK-NEXT: [[REQ:%[a-zA-Z0-9_]+]] = comm.allgather [[ARG0]] into [[ARG1]] team [0, 1] : memref<1x8xf32> into memref<2x8xf32>
// CHECK-NEXT: comm.wait [[REQ]]
// CHECK-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: [[C2:%[a-zA-Z0-9_]+]] = arith.constant 2 : index
// CHECK-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// CHECK-NEXT: scf.for [[I:%[a-zA-Z0-9_]+]] = [[C0]] to [[C2]] step [[C1]] {
// CHECK-NEXT: [[S:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I]] : !host.stream
// CHECK-NEXT: host.set_current_stream [[S]]
// CHECK-NEXT: host.sync_stream [[MAIN]]
// CHECK-NEXT: }
// CHECK-NEXT: scf.for [[I_1:%[a-zA-Z0-9_]+]] = [[C0]] to [[C2]] step [[C1]] {
// CHECK-NEXT: [[S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I_1]] : !host.stream
// CHECK-NEXT: host.set_current_stream [[S_1]]
// CHECK-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG1]][0]{{\[}}[[I_1]]{{\]}} : memref<2x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// CHECK-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[ARG2]][0]{{\[}}[[I_1]]{{\]}} : memref<2x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// CHECK-NEXT: host.neg ins([[VIEW]] : memref<8xf32, strided<[1], offset: ?>>) outs([[VIEW_1]] : memref<8xf32, strided<[1], offset: ?>>)
// CHECK-NEXT: host.set_current_stream [[MAIN]]
// CHECK-NEXT: host.sync_stream [[S_1]]
// CHECK-NEXT: }
// CHECK-NEXT: [[REQ_1:%[a-zA-Z0-9_]+]] = comm.reduce_scatter [[ARG2]] into [[ARG3]] sum team [0, 1] : memref<2x8xf32> into memref<1x8xf32>
// CHECK-NEXT: comm.wait [[REQ_1]]
// CHECK-NEXT: return
// CHECK-NEXT: }
func.func @whole_collectives(%a: memref<1x8xf32>, %g: memref<2x8xf32>, %p: memref<2x8xf32>, %r: memref<1x8xf32>) {
  %0 = comm.allgather %a into %g team [0, 1] {host.stream_axis = 0 : i64} : memref<1x8xf32> into memref<2x8xf32>
  comm.wait %0
  host.neg ins(%g : memref<2x8xf32>) outs(%p : memref<2x8xf32>) {host.stream_axis = 0 : i64}
  %1 = comm.reduce_scatter %p into %r sum team [0, 1] {host.stream_axis = 0 : i64} : memref<2x8xf32> into memref<1x8xf32>
  comm.wait %1
  return
}

// -----

// A transpose whose output's stream axis is its input's axis 1: each
// iteration transposes its slices, the permutation renumbered without the
// sliced axes ([2, 0, 1] without output axis 2 and input axis 1: [1, 0]).
// STREAM-FOR-LABEL: func.func @transpose(
// STREAM-FOR-SAME: [[A:%[a-zA-Z0-9_]+]]: memref<2x4x8xf32>, [[B:%[a-zA-Z0-9_]+]]: memref<8x2x4xf32>) {
// STREAM-FOR: ^bb0([[I:%[a-zA-Z0-9_]+]]: index, {{%[a-zA-Z0-9_]+}}: !host.stream):
// STREAM-FOR-NEXT: [[AI:%.+]] = host.select [[A]][1]{{\[}}[[I]]{{\]}} : memref<2x4x8xf32> to memref<2x8xf32, strided<[32, 1], offset: ?>>
// STREAM-FOR-NEXT: [[BI:%.+]] = host.select [[B]][2]{{\[}}[[I]]{{\]}} : memref<8x2x4xf32> to memref<8x2xf32, strided<[8, 4], offset: ?>>
// STREAM-FOR-NEXT: host.transpose [1, 0] ins([[AI]] : memref<2x8xf32, strided<[32, 1], offset: ?>>) outs([[BI]] : memref<8x2xf32, strided<[8, 4], offset: ?>>)
// STREAM-FOR-NEXT: }
func.func @transpose(%a: memref<2x4x8xf32>, %b: memref<8x2x4xf32>) {
  host.transpose [2, 0, 1] ins(%a : memref<2x4x8xf32>) outs(%b : memref<8x2x4xf32>) {host.stream_axis = 2 : i64}
  return
}

// -----

// A reshape's kept axis is sliced on both sides.
// STREAM-FOR-LABEL: func.func @reshape(
// STREAM-FOR: host.reshape ins(%{{.+}} : memref<16xbf16, strided<[1], offset: ?>>) outs(%{{.+}} : memref<2x8xbf16, strided<[8, 1], offset: ?>>)
func.func @reshape(%a: memref<4x16xbf16>, %b: memref<4x2x8xbf16>) {
  host.reshape ins(%a : memref<4x16xbf16>) outs(%b : memref<4x2x8xbf16>) {host.stream_axis = 0 : i64}
  return
}
