// RUN: hir-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(host-broadcast-pipeline))' | FileCheck %s

// An allgather before a stream loop that takes slice %i of its output along
// the gathered axis: each iteration broadcasts rank i's shard into its slice,
// on the iteration's stream, before the slice's first use; the allgather and
// its wait go.
// CHECK-LABEL: func.func @ag_then_loop
// CHECK-SAME: ([[A:%.*]]: memref<1x8xf32>, [[G:%.*]]: memref<2x8xf32>, [[Y:%.*]]: memref<2x8xf32>)
// CHECK-NOT: comm.allgather
// CHECK: [[SHARD:%.*]] = host.select [[A]][0]{{\[}}%{{.*}}] : memref<1x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// CHECK: host.stream_for
// CHECK-NEXT: ^bb0([[I:%.*]]: index, {{.*}}):
// CHECK-NEXT: [[GI:%.*]] = host.select [[G]][0]{{\[}}[[I]]]
// CHECK-NEXT: [[R:%.*]] = comm.broadcast [[SHARD]] into [[GI]] root [[I]] team [0, 1]
// CHECK-NEXT: comm.wait [[R]]
// CHECK-NEXT: host.select [[Y]]
// CHECK-NEXT: host.neg ins([[GI]]
// CHECK-NOT: comm.allgather
func.func @ag_then_loop(%a: memref<1x8xf32>, %g: memref<2x8xf32>, %y: memref<2x8xf32>) {
  %main = host.get_current_stream : !host.stream
  %r = comm.allgather %a into %g team [0, 1] : memref<1x8xf32> into memref<2x8xf32>
  comm.wait %r
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  host.stream_for %c0 to %c2 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %gi = host.select %g[0][%i] : memref<2x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    %yi = host.select %y[0][%i] : memref<2x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.neg ins(%gi : memref<8xf32, strided<[1], offset: ?>>) outs(%yi : memref<8xf32, strided<[1], offset: ?>>)
  }
  return
}

// -----

// Left whole: a team out of mesh order, where the iteration index is not the
// rank of slice i's owner.
// CHECK-LABEL: func.func @team_out_of_order
// CHECK: comm.allgather
// CHECK-NOT: comm.broadcast
func.func @team_out_of_order(%a: memref<1x8xf32>, %g: memref<2x8xf32>) {
  %main = host.get_current_stream : !host.stream
  %r = comm.allgather %a into %g team [1, 0] : memref<1x8xf32> into memref<2x8xf32>
  comm.wait %r
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  host.stream_for %c0 to %c2 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %gi = host.select %g[0][%i] : memref<2x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.neg ins(%gi : memref<8xf32, strided<[1], offset: ?>>) outs(%gi : memref<8xf32, strided<[1], offset: ?>>)
  }
  return
}

// -----

// Left whole: the loop slices the output along another axis than the
// gathered one, so iteration i needs a piece of every rank's shard.
// CHECK-LABEL: func.func @other_axis
// CHECK: comm.allgather
// CHECK-NOT: comm.broadcast
func.func @other_axis(%a: memref<1x2xf32>, %g: memref<2x2xf32>) {
  %main = host.get_current_stream : !host.stream
  %r = comm.allgather %a into %g team [0, 1] : memref<1x2xf32> into memref<2x2xf32>
  comm.wait %r
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  host.stream_for %c0 to %c2 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %gi = host.select %g[1][%i] : memref<2x2xf32> to memref<2xf32, strided<[2], offset: ?>>
    host.neg ins(%gi : memref<2xf32, strided<[2], offset: ?>>) outs(%gi : memref<2xf32, strided<[2], offset: ?>>)
  }
  return
}

// -----

// Left whole: something between the allgather and the loop reads its output.
// CHECK-LABEL: func.func @read_before_loop
// CHECK: comm.allgather
// CHECK-NOT: comm.broadcast
func.func @read_before_loop(%a: memref<1x8xf32>, %g: memref<2x8xf32>, %z: memref<2x8xf32>) {
  %main = host.get_current_stream : !host.stream
  %r = comm.allgather %a into %g team [0, 1] : memref<1x8xf32> into memref<2x8xf32>
  comm.wait %r
  host.copy ins(%g : memref<2x8xf32>) outs(%z : memref<2x8xf32>)
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  host.stream_for %c0 to %c2 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %gi = host.select %g[0][%i] : memref<2x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.neg ins(%gi : memref<8xf32, strided<[1], offset: ?>>) outs(%gi : memref<8xf32, strided<[1], offset: ?>>)
  }
  return
}
