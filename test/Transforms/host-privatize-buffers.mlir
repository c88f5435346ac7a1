// RUN: hir-opt --pass-pipeline='builtin.module(func.func(host-privatize-buffers))' %s | FileCheck %s

// A buffer one stream loop alone uses, each iteration its own chunk, becomes
// the iteration's own allocation of one chunk: the ops take it for the
// chunk; the views and the whole buffer go, the offset stays for the
// other view that uses it.
// CHECK-LABEL: func.func @chunks(
// CHECK-NOT: host.alloc
// CHECK: host.stream_for
// CHECK-NEXT: ^bb0([[I:%.+]]: index, %{{.+}}: !host.stream):
// CHECK-NEXT: [[T:%.+]] = host.alloc : memref<8x4xf32>
// CHECK-NEXT: [[K:%.+]] = arith.muli [[I]], %{{.+}} : index
// CHECK-NEXT: [[A:%.+]] = memref.subview %{{.+}}[0, [[K]]] [8, 4] [1, 1]
// CHECK-NEXT: host.neg ins([[A]] : memref<8x4xf32, strided<[16, 1], offset: ?>>) outs([[T]] : memref<8x4xf32>)
// CHECK-NEXT: [[K2:%.+]] = arith.muli [[I]], %{{.+}} : index
// CHECK-NEXT: [[B:%.+]] = memref.subview %{{.+}}[0, [[K2]]] [8, 4] [1, 1]
// CHECK-NEXT: host.exp ins([[T]] : memref<8x4xf32>) outs([[B]] : memref<8x4xf32, strided<[16, 1], offset: ?>>)
// CHECK-NEXT: }
func.func @chunks(%a: memref<8x16xf32>, %b: memref<8x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %main = host.get_current_stream : !host.stream
  %t = host.alloc : memref<8x16xf32>
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %k = arith.muli %i, %c4 : index
    %ai = memref.subview %a[0, %k] [8, 4] [1, 1] : memref<8x16xf32> to memref<8x4xf32, strided<[16, 1], offset: ?>>
    %ti = memref.subview %t[0, %k] [8, 4] [1, 1] : memref<8x16xf32> to memref<8x4xf32, strided<[16, 1], offset: ?>>
    host.neg ins(%ai : memref<8x4xf32, strided<[16, 1], offset: ?>>) outs(%ti : memref<8x4xf32, strided<[16, 1], offset: ?>>)
    %k2 = arith.muli %i, %c4 : index
    %tj = memref.subview %t[0, %k2] [8, 4] [1, 1] : memref<8x16xf32> to memref<8x4xf32, strided<[16, 1], offset: ?>>
    %bi = memref.subview %b[0, %k2] [8, 4] [1, 1] : memref<8x16xf32> to memref<8x4xf32, strided<[16, 1], offset: ?>>
    host.exp ins(%tj : memref<8x4xf32, strided<[16, 1], offset: ?>>) outs(%bi : memref<8x4xf32, strided<[16, 1], offset: ?>>)
  }
  return
}

// A slice at the index (a plain stream axis) likewise, one row, also when
// an op nested in the body uses it.
// CHECK-LABEL: func.func @rows(
// CHECK-NOT: host.alloc
// CHECK: ^bb0(
// CHECK-NEXT: [[T:%.+]] = host.alloc : memref<8xf32>
// CHECK: host.neg ins(%{{.+}} : memref<8xf32, strided<[1], offset: ?>>) outs([[T]] : memref<8xf32>)
// CHECK: scf.if
// CHECK-NEXT: host.exp ins([[T]] : memref<8xf32>)
func.func @rows(%a: memref<4x8xf32>, %b: memref<4x8xf32>, %flag: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %main = host.get_current_stream : !host.stream
  %t = host.alloc : memref<4x8xf32>
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %ai = host.select %a[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    %ti = host.select %t[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.neg ins(%ai : memref<8xf32, strided<[1], offset: ?>>) outs(%ti : memref<8xf32, strided<[1], offset: ?>>)
    %bi = host.select %b[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    scf.if %flag {
      host.exp ins(%ti : memref<8xf32, strided<[1], offset: ?>>) outs(%bi : memref<8xf32, strided<[1], offset: ?>>)
    }
  }
  return
}

// Left whole: a buffer read after the loop (%t), one whose views take
// chunks of two sizes (%u), one a view of whose slice is taken (%v) and one
// whose slice a host.fused reads (%w): iterations would not hold all they
// touch, or a view's or a fused body argument's type would change.
// CHECK-LABEL: func.func @shared(
// CHECK-NEXT: arith.constant
// CHECK-NEXT: arith.constant
// CHECK-NEXT: arith.constant
// CHECK-NEXT: arith.constant
// CHECK-NEXT: host.get_current_stream
// CHECK-NEXT: host.alloc : memref<8x16xf32>
// CHECK-NEXT: host.alloc : memref<8x16xf32>
// CHECK-NEXT: host.alloc : memref<8x16xf32>
// CHECK-NEXT: host.alloc : memref<8x16xf32>
// CHECK-NEXT: host.stream_for
// CHECK-NEXT: ^bb0(
// CHECK-NOT: host.alloc
// CHECK: return
func.func @shared(%a: memref<8x16xf32>, %b: memref<8x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %main = host.get_current_stream : !host.stream
  %t = host.alloc : memref<8x16xf32>
  %u = host.alloc : memref<8x16xf32>
  %v = host.alloc : memref<8x16xf32>
  %w = host.alloc : memref<8x16xf32>
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %k = arith.muli %i, %c4 : index
    %ai = memref.subview %a[0, %k] [8, 4] [1, 1] : memref<8x16xf32> to memref<8x4xf32, strided<[16, 1], offset: ?>>
    %ti = memref.subview %t[0, %k] [8, 4] [1, 1] : memref<8x16xf32> to memref<8x4xf32, strided<[16, 1], offset: ?>>
    host.neg ins(%ai : memref<8x4xf32, strided<[16, 1], offset: ?>>) outs(%ti : memref<8x4xf32, strided<[16, 1], offset: ?>>)
    %ui = memref.subview %u[0, %k] [8, 4] [1, 1] : memref<8x16xf32> to memref<8x4xf32, strided<[16, 1], offset: ?>>
    host.neg ins(%ai : memref<8x4xf32, strided<[16, 1], offset: ?>>) outs(%ui : memref<8x4xf32, strided<[16, 1], offset: ?>>)
    %h = arith.muli %i, %c2 : index
    %uh = memref.subview %u[0, %h] [8, 2] [1, 1] : memref<8x16xf32> to memref<8x2xf32, strided<[16, 1], offset: ?>>
    %bh = memref.subview %b[0, %h] [8, 2] [1, 1] : memref<8x16xf32> to memref<8x2xf32, strided<[16, 1], offset: ?>>
    host.exp ins(%uh : memref<8x2xf32, strided<[16, 1], offset: ?>>) outs(%bh : memref<8x2xf32, strided<[16, 1], offset: ?>>)
    %vi = memref.subview %v[0, %k] [8, 4] [1, 1] : memref<8x16xf32> to memref<8x4xf32, strided<[16, 1], offset: ?>>
    host.neg ins(%ai : memref<8x4xf32, strided<[16, 1], offset: ?>>) outs(%vi : memref<8x4xf32, strided<[16, 1], offset: ?>>)
    %row = host.select %vi[0][%c0] : memref<8x4xf32, strided<[16, 1], offset: ?>> to memref<4xf32, strided<[1], offset: ?>>
    host.exp ins(%row : memref<4xf32, strided<[1], offset: ?>>) outs(%row : memref<4xf32, strided<[1], offset: ?>>)
    %wi = memref.subview %w[0, %k] [8, 4] [1, 1] : memref<8x16xf32> to memref<8x4xf32, strided<[16, 1], offset: ?>>
    host.neg ins(%ai : memref<8x4xf32, strided<[16, 1], offset: ?>>) outs(%wi : memref<8x4xf32, strided<[16, 1], offset: ?>>)
    %bi = memref.subview %b[0, %k] [8, 4] [1, 1] : memref<8x16xf32> to memref<8x4xf32, strided<[16, 1], offset: ?>>
    host.fused ins(%wi : memref<8x4xf32, strided<[16, 1], offset: ?>>) outs(%bi : memref<8x4xf32, strided<[16, 1], offset: ?>>) {
    ^bb0(%x: memref<8x4xf32, strided<[16, 1], offset: ?>>, %y: memref<8x4xf32, strided<[16, 1], offset: ?>>):
      host.exp ins(%x : memref<8x4xf32, strided<[16, 1], offset: ?>>) outs(%y : memref<8x4xf32, strided<[16, 1], offset: ?>>)
    }
  }
  host.copy ins(%t : memref<8x16xf32>) outs(%b : memref<8x16xf32>)
  return
}
