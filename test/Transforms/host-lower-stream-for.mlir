// RUN: hir-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(host-lower-stream-for))' | FileCheck %s

// A stream_for becomes its fork loop (every pool stream waits for the
// caller's stream) and its work loop (the iteration's stream, the body, the
// join into the caller's stream); the block arguments become the loop index
// and the iteration's pool stream.
// CHECK-LABEL: func.func @lowered
// CHECK-SAME: ([[A:%.*]]: memref<4x8xf32>)
// CHECK: [[MAIN:%.*]] = host.get_current_stream : !host.stream
// CHECK-NEXT: scf.for [[I:%.*]] = [[C0:%.*]] to [[C4:%.*]] step [[C1:%.*]] {
// CHECK-NEXT: [[S:%.*]] = host.stream_from_pool [[I]] : !host.stream
// CHECK-NEXT: host.set_current_stream [[S]]
// CHECK-NEXT: host.sync_stream [[MAIN]]
// CHECK-NEXT: }
// CHECK-NEXT: scf.for [[J:%.*]] = [[C0]] to [[C4]] step [[C1]] {
// CHECK-NEXT: [[T:%.*]] = host.stream_from_pool [[J]] : !host.stream
// CHECK-NEXT: host.set_current_stream [[T]]
// CHECK-NEXT: [[AJ:%.*]] = host.select [[A]][0]{{\[}}[[J]]] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// CHECK-NEXT: host.neg ins([[AJ]] : {{.*}}) outs([[AJ]] : {{.*}})
// CHECK-NEXT: host.sync_stream [[T]]
// CHECK-NEXT: host.set_current_stream [[MAIN]]
// CHECK-NEXT: host.sync_stream [[T]]
// CHECK-NEXT: }
// CHECK-NEXT: host.copy
// CHECK-NEXT: return
// CHECK-NOT: host.stream_for
func.func @lowered(%a: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %main = host.get_current_stream : !host.stream
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %ai = host.select %a[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.neg ins(%ai : memref<8xf32, strided<[1], offset: ?>>)
             outs(%ai : memref<8xf32, strided<[1], offset: ?>>)
    host.sync_stream %s
  }
  host.copy ins(%a : memref<4x8xf32>) outs(%a : memref<4x8xf32>)
  return
}

// -----

// Rotated over `streams` pool streams: the pool index is `i mod streams` in
// both loops.
// CHECK-LABEL: func.func @rotated
// CHECK-SAME: ([[N:%.*]]: index)
// CHECK: [[MAIN:%.*]] = host.get_current_stream : !host.stream
// CHECK-NEXT: scf.for [[I:%.*]] = {{.*}} {
// CHECK-NEXT: [[R:%.*]] = arith.remui [[I]], [[N]] : index
// CHECK-NEXT: [[S:%.*]] = host.stream_from_pool [[R]] : !host.stream
// CHECK-NEXT: host.set_current_stream [[S]]
// CHECK-NEXT: host.sync_stream [[MAIN]]
// CHECK-NEXT: }
// CHECK-NEXT: scf.for [[J:%.*]] = {{.*}} {
// CHECK-NEXT: [[R:%.*]] = arith.remui [[J]], [[N]] : index
// CHECK-NEXT: [[T:%.*]] = host.stream_from_pool [[R]] : !host.stream
// CHECK-NEXT: host.set_current_stream [[T]]
// CHECK-NEXT: host.sync_stream [[T]]
// CHECK-NEXT: host.set_current_stream [[MAIN]]
// CHECK-NEXT: host.sync_stream [[T]]
// CHECK-NEXT: }
func.func @rotated(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %main = host.get_current_stream : !host.stream
  host.stream_for %c0 to %c4 step %c1 from %main streams %n {
  ^bb0(%i: index, %s: !host.stream):
    host.sync_stream %s
  }
  return
}

// -----

// Nested: the inner stream_for forks from and joins into the outer
// iteration's stream, and is expanded too.
// CHECK-LABEL: func.func @nested
// CHECK: scf.for
// CHECK: scf.for [[I:%.*]] = {{.*}} {
// CHECK-NEXT: [[S:%.*]] = host.stream_from_pool [[I]] : !host.stream
// CHECK-NEXT: host.set_current_stream [[S]]
// CHECK-NEXT: scf.for [[J:%.*]] = {{.*}} {
// CHECK-NEXT: [[T:%.*]] = host.stream_from_pool [[J]] : !host.stream
// CHECK-NEXT: host.set_current_stream [[T]]
// CHECK-NEXT: host.sync_stream [[S]]
// CHECK-NEXT: }
// CHECK-NEXT: scf.for [[K:%.*]] = {{.*}} {
// CHECK-NEXT: [[U:%.*]] = host.stream_from_pool [[K]] : !host.stream
// CHECK-NEXT: host.set_current_stream [[U]]
// CHECK-NEXT: host.sync_stream [[U]]
// CHECK-NEXT: host.set_current_stream [[S]]
// CHECK-NEXT: host.sync_stream [[U]]
// CHECK-NEXT: }
// CHECK-NEXT: host.set_current_stream
// CHECK-NEXT: host.sync_stream [[S]]
// CHECK-NEXT: }
// CHECK-NOT: host.stream_for
func.func @nested() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %main = host.get_current_stream : !host.stream
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    host.stream_for %c0 to %c4 step %c1 from %s {
    ^bb0(%j: index, %t: !host.stream):
      host.sync_stream %t
    }
  }
  return
}

// -----

// A loop whose iterations only take views does nothing (its memory effects
// are its body's): it goes, with the bounds and the caller stream only it
// used; the constant something else uses stays.
// CHECK-LABEL: func.func @views_only
// CHECK-NEXT: %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT: %[[KEPT:.*]] = host.select %{{.*}}[0]{{\[}}%[[C4]]]
// CHECK-NEXT: host.neg ins(%[[KEPT]]
// CHECK-NEXT: return
func.func @views_only(%a: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %main = host.get_current_stream : !host.stream
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %ai = host.select %a[0][%i] : memref<8x8xf32> to memref<8xf32, strided<[1], offset: ?>>
  }
  %kept = host.select %a[0][%c4] : memref<8x8xf32> to memref<8xf32, strided<[1], offset: ?>>
  host.neg ins(%kept : memref<8xf32, strided<[1], offset: ?>>)
           outs(%kept : memref<8xf32, strided<[1], offset: ?>>)
  return
}
