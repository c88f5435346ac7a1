// RUN: hir-opt %s --split-input-file --host-insert-dealloc | FileCheck %s
// RUN: hir-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(host-insert-dealloc,canonicalize))' | FileCheck %s

// Freed right after its last use.
// CHECK-LABEL: func.func @straight_line
// CHECK-NEXT: %[[G:.*]] = host.alloc : memref<8xf32>
// CHECK-NEXT: host.neg ins(%{{.*}} : memref<8xf32>) outs(%[[G]] : memref<8xf32>)
// CHECK-NEXT: host.copy ins(%[[G]] : memref<8xf32>) outs(%{{.*}} : memref<8xf32>)
// CHECK-NEXT: host.dealloc %[[G]] : memref<8xf32>
// CHECK-NEXT: host.neg
// CHECK-NEXT: return
func.func @straight_line(%a: memref<8xf32>, %b: memref<8xf32>) {
  %g = host.alloc : memref<8xf32>
  host.neg ins(%a : memref<8xf32>) outs(%g : memref<8xf32>)
  host.copy ins(%g : memref<8xf32>) outs(%b : memref<8xf32>)
  host.neg ins(%a : memref<8xf32>) outs(%b : memref<8xf32>)
  return
}

// -----

// A use through a view inside a stream loop counts as the loop: the buffer is
// freed after it, once the caller's stream has synced with every stream.
// CHECK-LABEL: func.func @view_in_loop
// CHECK: %[[G:.*]] = host.alloc : memref<4x8xf32>
// CHECK: scf.for
// CHECK: host.select %[[G]][0][%{{.*}}]
// CHECK: host.sync_stream
// CHECK-NEXT: }
// CHECK-NEXT: host.dealloc %[[G]] : memref<4x8xf32>
// CHECK-NEXT: return
func.func @view_in_loop(%a: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %g = host.alloc : memref<4x8xf32>
  %main = host.get_current_stream : !host.stream
  scf.for %i = %c0 to %c4 step %c1 {
    %s = host.stream_from_pool %i : !host.stream
    host.set_current_stream %s
    %ai = host.select %a[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    %gi = host.select %g[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.neg ins(%ai : memref<8xf32, strided<[1], offset: ?>>) outs(%gi : memref<8xf32, strided<[1], offset: ?>>)
    host.set_current_stream %main
    host.sync_stream %s
  }
  return
}

// -----

// A loop whose joins come after it (a ring's, from host-p2p-pipeline): the
// buffer is freed after the loop of joins, and after a lone join, not between
// the last use and the joins that order it before the caller's stream.
// CHECK-LABEL: func.func @joins_after_loop
// CHECK: %[[G:.*]] = host.alloc : memref<4x8xf32>
// CHECK: scf.for
// CHECK: host.select %[[G]][0][%{{.*}}]
// CHECK: scf.for
// CHECK-NEXT: arith.remui
// CHECK-NEXT: host.stream_from_pool
// CHECK-NEXT: host.sync_stream
// CHECK-NEXT: }
// CHECK-NEXT: host.sync_stream
// CHECK-NEXT: host.dealloc %[[G]] : memref<4x8xf32>
// CHECK-NEXT: host.neg
// CHECK-NEXT: return
func.func @joins_after_loop(%a: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %g = host.alloc : memref<4x8xf32>
  %main = host.get_current_stream : !host.stream
  %side = host.stream_from_pool %c0 : !host.stream
  scf.for %i = %c0 to %c4 step %c1 {
    %p = arith.remui %i, %c2 : index
    %s = host.stream_from_pool %p : !host.stream
    host.set_current_stream %s
    %ai = host.select %a[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    %gi = host.select %g[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.neg ins(%ai : memref<8xf32, strided<[1], offset: ?>>) outs(%gi : memref<8xf32, strided<[1], offset: ?>>)
    host.set_current_stream %main
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %p = arith.remui %i, %c2 : index
    %s = host.stream_from_pool %p : !host.stream
    host.sync_stream %s
  }
  host.sync_stream %side
  host.neg ins(%a : memref<4x8xf32>) outs(%a : memref<4x8xf32>)
  return
}

// -----

// A communication buffer is freed after the wait that completes it.
// CHECK-LABEL: func.func @after_wait
// CHECK: %[[G:.*]] = host.alloc : memref<2x8xf32>
// CHECK-NEXT: %[[R:.*]] = comm.allgather
// CHECK-NEXT: comm.wait %[[R]]
// CHECK-NEXT: host.sum [0] ins(%[[G]]
// CHECK-NEXT: host.dealloc %[[G]]
func.func @after_wait(%a: memref<1x8xf32>, %b: memref<8xf32>) {
  %g = host.alloc : memref<2x8xf32>
  %r = comm.allgather %a into %g team [0, 1] : memref<1x8xf32> into memref<2x8xf32>
  comm.wait %r
  host.sum [0] ins(%g : memref<2x8xf32>) outs(%b : memref<8xf32>)
  return
}

// -----

// A collective posted on a view of the buffer still reads it until its wait,
// even when other work comes between (hir-bench's rs-ring and ar-nooverlap):
// the buffer is freed after the wait, not after the collective.
// CHECK-LABEL: func.func @view_until_wait
// CHECK: %[[P:.*]] = host.alloc : memref<1x4x8xf32>
// CHECK: %[[V:.*]] = host.select %[[P]][0][%{{.*}}]
// CHECK-NEXT: %[[R:.*]] = comm.reduce_scatter %[[V]]
// CHECK-NEXT: host.neg
// CHECK-NEXT: comm.wait %[[R]]
// CHECK-NEXT: host.dealloc %[[P]] : memref<1x4x8xf32>
// CHECK-NEXT: return
func.func @view_until_wait(%a: memref<1x4x8xf32>, %b: memref<8xf32>, %c: memref<1x8xf32>) {
  %c0 = arith.constant 0 : index
  %p = host.alloc : memref<1x4x8xf32>
  host.neg ins(%a : memref<1x4x8xf32>) outs(%p : memref<1x4x8xf32>)
  %v = host.select %p[0][%c0] : memref<1x4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: ?>>
  %r = comm.reduce_scatter %v into %c sum team [0, 1, 2, 3] : memref<4x8xf32, strided<[8, 1], offset: ?>> into memref<1x8xf32>
  host.neg ins(%b : memref<8xf32>) outs(%b : memref<8xf32>)
  comm.wait %r
  return
}

// -----

// A send inside a coalescing group completes with the group's request: the
// buffer is freed after the wait for the comm.end_coalescing.
// CHECK-LABEL: func.func @coalesced_send
// CHECK: %[[G:.*]] = host.alloc : memref<8xf32>
// CHECK: comm.send %[[G]]
// CHECK-NEXT: comm.recv
// CHECK-NEXT: %[[R:.*]] = comm.end_coalescing
// CHECK-NEXT: host.neg
// CHECK-NEXT: comm.wait %[[R]]
// CHECK-NEXT: host.dealloc %[[G]] : memref<8xf32>
// CHECK-NEXT: return
func.func @coalesced_send(%a: memref<8xf32>, %b: memref<8xf32>, %peer: index) {
  %g = host.alloc : memref<8xf32>
  host.neg ins(%a : memref<8xf32>) outs(%g : memref<8xf32>)
  comm.start_coalescing
  %s = comm.send %g to %peer team [0, 1] : memref<8xf32>
  %q = comm.recv %b from %peer team [0, 1] : memref<8xf32>
  %r = comm.end_coalescing
  host.neg ins(%a : memref<8xf32>) outs(%a : memref<8xf32>)
  comm.wait %r
  return
}

// -----

// A wait nested in a region counts as the op that holds it in the buffer's
// block.
// CHECK-LABEL: func.func @wait_in_loop
// CHECK: %[[G:.*]] = host.alloc : memref<8xf32>
// CHECK: comm.allreduce %[[G]]
// CHECK: scf.for
// CHECK: comm.wait
// CHECK-NEXT: }
// CHECK-NEXT: host.dealloc %[[G]] : memref<8xf32>
// CHECK-NEXT: return
func.func @wait_in_loop(%a: memref<8xf32>, %b: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %g = host.alloc : memref<8xf32>
  host.neg ins(%a : memref<8xf32>) outs(%g : memref<8xf32>)
  %r = comm.allreduce %g into %b sum team [0, 1] : memref<8xf32> into memref<8xf32>
  scf.for %i = %c0 to %c2 step %c1 {
    host.neg ins(%a : memref<8xf32>) outs(%a : memref<8xf32>)
    comm.wait %r
  }
  return
}

// -----

// A request that leaves the comm ops (here returned) completes out of sight:
// the buffer it reads is left alone.
// CHECK-LABEL: func.func @request_escapes
// CHECK-NOT: host.dealloc
// CHECK: return
func.func @request_escapes(%b: memref<8xf32>) -> !comm.request {
  %g = host.alloc : memref<8xf32>
  %r = comm.allreduce %g into %b sum team [0, 1] : memref<8xf32> into memref<8xf32>
  return %r : !comm.request
}

// -----

// A returned buffer escapes to the caller, and one already freed is left alone.
// CHECK-LABEL: func.func @escapes
// CHECK-NOT: host.dealloc
// CHECK: return
func.func @escapes() -> memref<8xf32> {
  %g = host.alloc : memref<8xf32>
  return %g : memref<8xf32>
}

// CHECK-LABEL: func.func @already_freed
// CHECK: host.dealloc
// CHECK-NOT: host.dealloc
// CHECK: return
func.func @already_freed(%a: memref<8xf32>) {
  %g = host.alloc : memref<8xf32>
  host.copy ins(%a : memref<8xf32>) outs(%g : memref<8xf32>)
  host.dealloc %g : memref<8xf32>
  return
}

// -----

// A view an scf.if may yield is the buffer too: freed after the last use of
// the if's result (the ring's step computing on its own shard or the slice).
// CHECK-LABEL: func.func @yielded_by_if
// CHECK: %[[G:.*]] = host.alloc
// CHECK: %[[X:.*]] = {{scf.if|arith.select}}
// CHECK: host.neg ins(%[[X]] : memref<8xf32>)
// CHECK-NEXT: host.dealloc %[[G]]
// CHECK-NEXT: return
func.func @yielded_by_if(%a: memref<8xf32>, %b: memref<8xf32>, %local: i1) {
  %g = host.alloc : memref<8xf32>
  %x = scf.if %local -> (memref<8xf32>) {
    scf.yield %a : memref<8xf32>
  } else {
    host.copy ins(%a : memref<8xf32>) outs(%g : memref<8xf32>)
    scf.yield %g : memref<8xf32>
  }
  host.neg ins(%x : memref<8xf32>) outs(%b : memref<8xf32>)
  return
}

// -----

// A part of a view (memref.subview, as host-p2p-pipeline takes a ring step's
// part) is a use of the buffer: freed after the loop that uses it.
// CHECK-LABEL: func.func @part_of_a_view
// CHECK: scf.for
// CHECK: memref.subview
// CHECK: host.neg
// CHECK: }
// CHECK-NEXT: host.dealloc %{{.*}} : memref<4x8xf32>
// CHECK-NEXT: return
func.func @part_of_a_view() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %g = host.alloc : memref<4x8xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %gi = host.select %g[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    %half = memref.subview %gi[%c0] [4] [1] : memref<8xf32, strided<[1], offset: ?>> to memref<4xf32, strided<[1], offset: ?>>
    host.neg ins(%half : memref<4xf32, strided<[1], offset: ?>>) outs(%half : memref<4xf32, strided<[1], offset: ?>>)
  }
  return
}

// -----

// A use inside a host.stream_for counts as the op, whose iterations end by
// joining into the caller's stream: the buffer is freed right after it.
// CHECK-LABEL: func.func @in_stream_for
// CHECK: %[[G:.*]] = host.alloc : memref<4x8xf32>
// CHECK: host.stream_for
// CHECK: host.select %[[G]][0][%{{.*}}]
// CHECK: host.neg
// CHECK-NEXT: }
// CHECK-NEXT: host.dealloc %[[G]] : memref<4x8xf32>
// CHECK-NEXT: return
func.func @in_stream_for(%a: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %g = host.alloc : memref<4x8xf32>
  %main = host.get_current_stream : !host.stream
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %ai = host.select %a[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    %gi = host.select %g[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.neg ins(%ai : memref<8xf32, strided<[1], offset: ?>>) outs(%gi : memref<8xf32, strided<[1], offset: ?>>)
  }
  return
}

// -----

// The GEMM+RS ring (host-p2p-pipeline, one part a step) reads a broadcast
// operand %b on every step's pool stream and moves its joins out of the loop;
// the slots are summed on the caller's stream before the joins. The loop
// leaves its pool streams unjoined (set current, no sync_stream of them after
// in the body), so %b is freed after the join loop, not right after the ring
// loop while the last step may still read it.
// CHECK-LABEL: func.func @ring_operand_after_joins
// CHECK: %[[B:.*]] = host.alloc : memref<16x32xf32>
// CHECK: scf.for
// CHECK: host.matmul
// CHECK-NOT: host.dealloc
// CHECK: host.sum
// CHECK-NEXT: scf.for
// CHECK-NEXT: host.stream_from_pool
// CHECK-NEXT: host.sync_stream
// CHECK-NEXT: }
// CHECK-NEXT: host.dealloc %[[B]] : memref<16x32xf32>
func.func @ring_operand_after_joins(%a: memref<4x8x16xf32>, %b0: memref<16x32xf32>, %slots: memref<3x8x32xf32>, %c: memref<8x32xf32>, %p: memref<4x8x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %main = host.get_current_stream : !host.stream
  %b = host.alloc : memref<16x32xf32>
  host.copy ins(%b0 : memref<16x32xf32>) outs(%b : memref<16x32xf32>)
  %rank = host.rank : index
  scf.for %i = %c0 to %c4 step %c1 {
    %s = host.stream_from_pool %i : !host.stream
    host.set_current_stream %s
    %ai = host.select %a[0][%i] : memref<4x8x16xf32> to memref<8x16xf32, strided<[16, 1], offset: ?>>
    %pi = host.select %p[0][%i] : memref<4x8x32xf32> to memref<8x32xf32, strided<[32, 1], offset: ?>>
    host.matmul ins(%ai, %b : memref<8x16xf32, strided<[16, 1], offset: ?>>, memref<16x32xf32>)
                outs(%pi : memref<8x32xf32, strided<[32, 1], offset: ?>>)
    %local = arith.cmpi eq, %i, %rank : index
    scf.if %local {
    } else {
      host.set_current_stream %main
      host.sync_stream %s
      host.set_current_stream %s
    }
    host.set_current_stream %main
  }
  host.sum [0] ins(%slots : memref<3x8x32xf32>) outs(%c : memref<8x32xf32>)
  scf.for %i = %c0 to %c4 step %c1 {
    %s = host.stream_from_pool %i : !host.stream
    host.sync_stream %s
  }
  return
}

// -----

// Without a join after it, a buffer a loop leaves on unjoined pool streams is
// not freed (no dealloc rather than a wrong one).
// CHECK-LABEL: func.func @unjoined_without_joins
// CHECK-NOT: host.dealloc
// CHECK: return
func.func @unjoined_without_joins(%a: memref<16x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %main = host.get_current_stream : !host.stream
  %b = host.alloc : memref<16x32xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %s = host.stream_from_pool %i : !host.stream
    host.set_current_stream %s
    host.copy ins(%a : memref<16x32xf32>) outs(%b : memref<16x32xf32>)
    host.set_current_stream %main
  }
  return
}
