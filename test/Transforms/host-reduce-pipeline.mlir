// RUN: hir-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(host-reduce-pipeline))' | FileCheck %s

// A reduce-scatter after a stream loop that writes its input slice by slice:
// each iteration reduces the block it wrote onto its owner, the iteration's
// index, at the end of the iteration; the reduce-scatter and its wait go.
// CHECK-LABEL: func.func @loop_then_rs
// CHECK-SAME: ([[A:%.*]]: memref<2x8xf32>, [[P:%.*]]: memref<2x8xf32>, [[O:%.*]]: memref<1x8xf32>)
// CHECK: [[OUT:%.*]] = host.select [[O]][0]{{\[}}%{{.*}}] : memref<1x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// CHECK: host.stream_for
// CHECK-NEXT: ^bb0([[I:%.*]]: index, {{.*}}):
// CHECK: host.neg
// CHECK-NEXT: [[BLOCK:%.*]] = host.select [[P]][0]{{\[}}[[I]]]
// CHECK-NEXT: [[R:%.*]] = comm.reduce [[BLOCK]] into [[OUT]] sum root [[I]] team [0, 1]
// CHECK-NEXT: comm.wait [[R]]
// CHECK-NEXT: }
// CHECK-NOT: comm.reduce_scatter
func.func @loop_then_rs(%a: memref<2x8xf32>, %p: memref<2x8xf32>, %o: memref<1x8xf32>) {
  %main = host.get_current_stream : !host.stream
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  host.stream_for %c0 to %c2 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %ai = host.select %a[0][%i] : memref<2x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    %pi = host.select %p[0][%i] : memref<2x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.neg ins(%ai : memref<8xf32, strided<[1], offset: ?>>) outs(%pi : memref<8xf32, strided<[1], offset: ?>>)
  }
  %r = comm.reduce_scatter %p into %o sum team [0, 1] : memref<2x8xf32> into memref<1x8xf32>
  comm.wait %r
  return
}

// -----

// The scattered input a whole view of the loop's buffer without its axis of
// extent 1 (GEMM+RS as convert-fusion-to-host writes it): the view is taken
// before the loop, and the old one goes.
// CHECK-LABEL: func.func @whole_view
// CHECK-SAME: ([[A:%.*]]: memref<1x2x8xf32>, [[P:%.*]]: memref<1x2x8xf32>, [[O:%.*]]: memref<1x8xf32>)
// CHECK: [[VIEW:%.*]] = host.select [[P]][0]{{\[}}%{{.*}}] : memref<1x2x8xf32> to memref<2x8xf32
// CHECK: host.stream_for
// CHECK: [[BLOCK:%.*]] = host.select [[VIEW]][0]
// CHECK-NEXT: comm.reduce [[BLOCK]] into {{.*}} max root
// CHECK-NOT: comm.reduce_scatter
// CHECK: return
func.func @whole_view(%a: memref<1x2x8xf32>, %p: memref<1x2x8xf32>, %o: memref<1x8xf32>) {
  %main = host.get_current_stream : !host.stream
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  host.stream_for %c0 to %c2 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %ai = host.select %a[1][%i] : memref<1x2x8xf32> to memref<1x8xf32, strided<[16, 1], offset: ?>>
    %pi = host.select %p[1][%i] : memref<1x2x8xf32> to memref<1x8xf32, strided<[16, 1], offset: ?>>
    host.neg ins(%ai : memref<1x8xf32, strided<[16, 1], offset: ?>>) outs(%pi : memref<1x8xf32, strided<[16, 1], offset: ?>>)
  }
  %z = arith.constant 0 : index
  %whole = host.select %p[0][%z] : memref<1x2x8xf32> to memref<2x8xf32, strided<[8, 1], offset: ?>>
  %r = comm.reduce_scatter %whole into %o max team [0, 1] : memref<2x8xf32, strided<[8, 1], offset: ?>> into memref<1x8xf32>
  comm.wait %r
  return
}

// -----

// Left whole: a team out of mesh order.
// CHECK-LABEL: func.func @team_out_of_order
// CHECK: comm.reduce_scatter
// CHECK-NOT: comm.reduce {{.*}} root
func.func @team_out_of_order(%a: memref<2x8xf32>, %p: memref<2x8xf32>, %o: memref<1x8xf32>) {
  %main = host.get_current_stream : !host.stream
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  host.stream_for %c0 to %c2 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %ai = host.select %a[0][%i] : memref<2x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    %pi = host.select %p[0][%i] : memref<2x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.neg ins(%ai : memref<8xf32, strided<[1], offset: ?>>) outs(%pi : memref<8xf32, strided<[1], offset: ?>>)
  }
  %r = comm.reduce_scatter %p into %o sum team [1, 0] : memref<2x8xf32> into memref<1x8xf32>
  comm.wait %r
  return
}

// -----

// Left whole: the loop only reads the scattered buffer; nothing writes block
// i in iteration i.
// CHECK-LABEL: func.func @loop_reads_it
// CHECK: comm.reduce_scatter
// CHECK-NOT: comm.reduce {{.*}} root
func.func @loop_reads_it(%a: memref<2x8xf32>, %p: memref<2x8xf32>, %o: memref<1x8xf32>) {
  %main = host.get_current_stream : !host.stream
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  host.stream_for %c0 to %c2 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %ai = host.select %a[0][%i] : memref<2x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    %pi = host.select %p[0][%i] : memref<2x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.neg ins(%pi : memref<8xf32, strided<[1], offset: ?>>) outs(%ai : memref<8xf32, strided<[1], offset: ?>>)
  }
  %r = comm.reduce_scatter %p into %o sum team [0, 1] : memref<2x8xf32> into memref<1x8xf32>
  comm.wait %r
  return
}
