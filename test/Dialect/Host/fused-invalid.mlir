// RUN: hir-opt %s --split-input-file --verify-diagnostics

func.func @no_output(%a: memref<8xf32>) {
  // expected-error @+1 {{'host.fused' op needs at least one output}}
  "host.fused"(%a) <{operandSegmentSizes = array<i32: 1, 0>}> ({
  ^bb0(%x: memref<8xf32>):
  }) : (memref<8xf32>) -> ()
  return
}

// -----

func.func @outputs_of_two_shapes(%a: memref<8xf32>, %y: memref<8xf32>, %z: memref<4xf32>) {
  // expected-error @+1 {{output #1 of type 'memref<4xf32>' has neither the iteration shape [8] (its largest outputs') nor that shape without its last axis}}
  host.fused ins(%a : memref<8xf32>) outs(%y, %z : memref<8xf32>, memref<4xf32>) {
  ^bb0(%x: memref<8xf32>, %o: memref<8xf32>, %p: memref<4xf32>):
    host.neg ins(%x : memref<8xf32>) outs(%o : memref<8xf32>)
  }
  return
}

// -----

func.func @argument_type(%a: memref<8xf32>, %y: memref<8xf32>) {
  // expected-error @+1 {{body argument #0 has type 'memref<8xbf16>', not the type of operand #0}}
  host.fused ins(%a : memref<8xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%x: memref<8xbf16>, %o: memref<8xf32>):
  }
  return
}

// -----

func.func @temporary_shape(%a: memref<8xf32>, %y: memref<8xf32>) {
  // expected-error @+1 {{temporary #0 must be a buffer of the iteration shape, or of it without its last axis, with the identity layout, got 'memref<4xf32>'}}
  host.fused ins(%a : memref<8xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%x: memref<8xf32>, %o: memref<8xf32>, %t: memref<4xf32>):
    host.neg ins(%x : memref<8xf32>) outs(%o : memref<8xf32>)
  }
  return
}

// -----

func.func @not_elementwise(%a: memref<8x8xf32>, %y: memref<8x8xf32>) {
  host.fused ins(%a : memref<8x8xf32>) outs(%y : memref<8x8xf32>) {
  ^bb0(%x: memref<8x8xf32>, %o: memref<8x8xf32>):
    // expected-error @+1 {{'host.matmul' op cannot be in a host.fused body, which holds only elementwise host ops, fills, broadcasts and reductions}}
    host.matmul ins(%x, %x : memref<8x8xf32>, memref<8x8xf32>) outs(%o : memref<8x8xf32>)
  }
  return
}

// -----

func.func @reads_outside(%a: memref<8xf32>, %b: memref<8xf32>, %y: memref<8xf32>) {
  host.fused ins(%a : memref<8xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%x: memref<8xf32>, %o: memref<8xf32>):
    // expected-error @+1 {{'host.add' op reads operand #1, which is not an argument of the host.fused body}}
    host.add ins(%x, %b : memref<8xf32>, memref<8xf32>) outs(%o : memref<8xf32>)
  }
  return
}

// -----

func.func @read_before_written(%a: memref<8xf32>, %y: memref<8xf32>) {
  host.fused ins(%a : memref<8xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%x: memref<8xf32>, %o: memref<8xf32>, %t: memref<8xf32>):
    // expected-error @+1 {{'host.add' op reads body argument #2 before any op of the host.fused body writes it}}
    host.add ins(%x, %t : memref<8xf32>, memref<8xf32>) outs(%o : memref<8xf32>)
  }
  return
}

// -----

func.func @writes_an_input(%a: memref<8xf32>, %y: memref<8xf32>) {
  host.fused ins(%a : memref<8xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%x: memref<8xf32>, %o: memref<8xf32>):
    // expected-error @+1 {{'host.neg' op writes input #0 of the host.fused body}}
    host.neg ins(%x : memref<8xf32>) outs(%x : memref<8xf32>)
  }
  return
}

// -----

func.func @written_twice(%a: memref<8xf32>, %y: memref<8xf32>) {
  host.fused ins(%a : memref<8xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%x: memref<8xf32>, %o: memref<8xf32>):
    host.neg ins(%x : memref<8xf32>) outs(%o : memref<8xf32>)
    // expected-error @+1 {{'host.exp' op writes body argument #1, which an earlier op of the host.fused body writes}}
    host.exp ins(%o : memref<8xf32>) outs(%o : memref<8xf32>)
  }
  return
}

// -----

func.func @never_written(%a: memref<8xf32>, %y: memref<8xf32>, %z: memref<8xf32>) {
  // expected-error @+1 {{'host.fused' op body argument #2 (an output) is never written}}
  host.fused ins(%a : memref<8xf32>) outs(%y, %z : memref<8xf32>, memref<8xf32>) {
  ^bb0(%x: memref<8xf32>, %o: memref<8xf32>, %p: memref<8xf32>):
    host.neg ins(%x : memref<8xf32>) outs(%o : memref<8xf32>)
  }
  return
}

// -----

func.func @reduces_another_axis(%a: memref<8x8xf32>, %y: memref<8x8xf32>, %m: memref<8xf32>) {
  host.fused ins(%a : memref<8x8xf32>) outs(%y, %m : memref<8x8xf32>, memref<8xf32>) {
  ^bb0(%x: memref<8x8xf32>, %o: memref<8x8xf32>, %r: memref<8xf32>):
    // expected-error @+1 {{'host.sum' op in a host.fused body must reduce the last axis of a buffer of the iteration shape [8, 8]}}
    host.sum [0] ins(%x : memref<8x8xf32>) outs(%r : memref<8xf32>)
    host.neg ins(%x : memref<8x8xf32>) outs(%o : memref<8x8xf32>)
  }
  return
}

// -----

func.func @only_rows(%a: memref<4x8xf32>, %m: memref<4xf32>) {
  host.fused ins(%a : memref<4x8xf32>) outs(%m : memref<4xf32>) {
  ^bb0(%x: memref<4x8xf32>, %r: memref<4xf32>):
    // expected-error @+1 {{'host.sum' op in a host.fused body must reduce the last axis of a buffer of the iteration shape [4]}}
    host.sum [1] ins(%x : memref<4x8xf32>) outs(%r : memref<4xf32>)
  }
  return
}
