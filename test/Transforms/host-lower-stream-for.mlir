// RUN: hir-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(host-lower-stream-for))' | FileCheck %s

// A stream_for becomes its fork loop (every pool stream waits for the
// caller's stream), its work loop (the iteration's stream, the body) and,
// since the body does not use the caller's stream, one join after it: the
// caller's stream current again, waiting for every pool stream. Without
// `streams` each iteration has a pool stream of its own, so the fork and the
// join run over the whole range. The block arguments become the loop index
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
// CHECK-NEXT: }
// CHECK-NEXT: host.set_current_stream [[MAIN]]
// CHECK-NEXT: scf.for [[K:%.*]] = [[C0]] to [[C4]] step [[C1]] {
// CHECK-NEXT: [[U:%.*]] = host.stream_from_pool [[K]] : !host.stream
// CHECK-NEXT: host.sync_stream [[U]]
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
// every loop, and the fork and the join stop after `streams` iterations
// (`min(upper, lower + streams * step)`), which use every pool stream the
// loop uses.
// CHECK-LABEL: func.func @rotated
// CHECK-SAME: ([[N:%.*]]: index)
// CHECK: [[C0:%.*]] = arith.constant 0 : index
// CHECK-NEXT: [[C1:%.*]] = arith.constant 1 : index
// CHECK-NEXT: [[C4:%.*]] = arith.constant 4 : index
// CHECK-NEXT: [[MAIN:%.*]] = host.get_current_stream : !host.stream
// CHECK-NEXT: [[SPAN:%.*]] = arith.muli [[N]], [[C1]] : index
// CHECK-NEXT: [[END:%.*]] = arith.addi [[C0]], [[SPAN]] : index
// CHECK-NEXT: [[FORKED:%.*]] = arith.minsi [[C4]], [[END]] : index
// CHECK-NEXT: scf.for [[I:%.*]] = [[C0]] to [[FORKED]] step [[C1]] {
// CHECK-NEXT: [[R:%.*]] = arith.remui [[I]], [[N]] : index
// CHECK-NEXT: [[S:%.*]] = host.stream_from_pool [[R]] : !host.stream
// CHECK-NEXT: host.set_current_stream [[S]]
// CHECK-NEXT: host.sync_stream [[MAIN]]
// CHECK-NEXT: }
// CHECK-NEXT: scf.for [[J:%.*]] = [[C0]] to [[C4]] step [[C1]] {
// CHECK-NEXT: [[R:%.*]] = arith.remui [[J]], [[N]] : index
// CHECK-NEXT: [[T:%.*]] = host.stream_from_pool [[R]] : !host.stream
// CHECK-NEXT: host.set_current_stream [[T]]
// CHECK-NEXT: host.sync_stream [[T]]
// CHECK-NEXT: }
// CHECK-NEXT: host.set_current_stream [[MAIN]]
// CHECK-NEXT: scf.for [[K:%.*]] = [[C0]] to [[FORKED]] step [[C1]] {
// CHECK-NEXT: [[R:%.*]] = arith.remui [[K]], [[N]] : index
// CHECK-NEXT: [[U:%.*]] = host.stream_from_pool [[R]] : !host.stream
// CHECK-NEXT: host.sync_stream [[U]]
// CHECK-NEXT: }
// CHECK-NEXT: return
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
// iteration's stream, and is expanded too; neither body uses its caller's
// stream, so each joins once, after its work loop.
// CHECK-LABEL: func.func @nested
// CHECK: [[MAIN:%.*]] = host.get_current_stream : !host.stream
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
// CHECK-NEXT: }
// CHECK-NEXT: host.set_current_stream [[S]]
// CHECK-NEXT: scf.for [[L:%.*]] = {{.*}} {
// CHECK-NEXT: [[V:%.*]] = host.stream_from_pool [[L]] : !host.stream
// CHECK-NEXT: host.sync_stream [[V]]
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: host.set_current_stream [[MAIN]]
// CHECK-NEXT: scf.for [[M:%.*]] = {{.*}} {
// CHECK-NEXT: [[W:%.*]] = host.stream_from_pool [[M]] : !host.stream
// CHECK-NEXT: host.sync_stream [[W]]
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

// -----

// A body that uses the caller's stream (here it puts work on it, as
// host-p2p-pipeline's rings do) keeps a join at the end of each iteration,
// so that the caller's stream has joined the earlier iterations; the fork
// still stops after `streams` iterations.
// CHECK-LABEL: func.func @uses_caller
// CHECK-SAME: ([[A:%.*]]: memref<8x8xf32>)
// CHECK: [[C0:%.*]] = arith.constant 0 : index
// CHECK-NEXT: [[C1:%.*]] = arith.constant 1 : index
// CHECK-NEXT: [[C2:%.*]] = arith.constant 2 : index
// CHECK-NEXT: [[C8:%.*]] = arith.constant 8 : index
// CHECK-NEXT: [[MAIN:%.*]] = host.get_current_stream : !host.stream
// CHECK-NEXT: [[SPAN:%.*]] = arith.muli [[C2]], [[C1]] : index
// CHECK-NEXT: [[END:%.*]] = arith.addi [[C0]], [[SPAN]] : index
// CHECK-NEXT: [[FORKED:%.*]] = arith.minsi [[C8]], [[END]] : index
// CHECK-NEXT: scf.for [[I:%.*]] = [[C0]] to [[FORKED]] step [[C1]] {
// CHECK-NEXT: [[R:%.*]] = arith.remui [[I]], [[C2]] : index
// CHECK-NEXT: [[S:%.*]] = host.stream_from_pool [[R]] : !host.stream
// CHECK-NEXT: host.set_current_stream [[S]]
// CHECK-NEXT: host.sync_stream [[MAIN]]
// CHECK-NEXT: }
// CHECK-NEXT: scf.for [[J:%.*]] = [[C0]] to [[C8]] step [[C1]] {
// CHECK-NEXT: [[R:%.*]] = arith.remui [[J]], [[C2]] : index
// CHECK-NEXT: [[T:%.*]] = host.stream_from_pool [[R]] : !host.stream
// CHECK-NEXT: host.set_current_stream [[T]]
// CHECK-NEXT: [[AJ:%.*]] = host.select [[A]][0]{{\[}}[[J]]]
// CHECK-NEXT: host.set_current_stream [[MAIN]]
// CHECK-NEXT: host.neg ins([[AJ]] : {{.*}}) outs([[AJ]] : {{.*}})
// CHECK-NEXT: host.set_current_stream [[T]]
// CHECK-NEXT: host.set_current_stream [[MAIN]]
// CHECK-NEXT: host.sync_stream [[T]]
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @uses_caller(%a: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %main = host.get_current_stream : !host.stream
  host.stream_for %c0 to %c8 step %c1 from %main streams %c2 {
  ^bb0(%i: index, %s: !host.stream):
    %ai = host.select %a[0][%i] : memref<8x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.set_current_stream %main
    host.neg ins(%ai : memref<8xf32, strided<[1], offset: ?>>)
             outs(%ai : memref<8xf32, strided<[1], offset: ?>>)
    host.set_current_stream %s
  }
  return
}

// -----

// A caller's stream used only in a nested region of the body counts too.
// CHECK-LABEL: func.func @uses_caller_nested
// CHECK: [[MAIN:%.*]] = host.get_current_stream : !host.stream
// CHECK-NEXT: scf.for [[I:%.*]] = {{.*}} {
// CHECK-NEXT: [[S:%.*]] = host.stream_from_pool [[I]] : !host.stream
// CHECK-NEXT: host.set_current_stream [[S]]
// CHECK-NEXT: host.sync_stream [[MAIN]]
// CHECK-NEXT: }
// CHECK-NEXT: scf.for [[J:%.*]] = {{.*}} {
// CHECK-NEXT: [[T:%.*]] = host.stream_from_pool [[J]] : !host.stream
// CHECK-NEXT: host.set_current_stream [[T]]
// CHECK-NEXT: scf.if
// CHECK-NEXT: host.sync_stream [[MAIN]]
// CHECK-NEXT: }
// CHECK-NEXT: host.set_current_stream [[MAIN]]
// CHECK-NEXT: host.sync_stream [[T]]
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @uses_caller_nested(%p: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %main = host.get_current_stream : !host.stream
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    scf.if %p {
      host.sync_stream %main
    }
  }
  return
}
