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
