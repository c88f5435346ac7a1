// RUN: hir-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(host-p2p-pipeline{allreduce=ring}))'
// RUN: not hir-opt %s --pass-pipeline='builtin.module(hir-lower{allreduce=ring})' 2>&1 | FileCheck %s --check-prefix=PIPELINE

// What prevents GEMM+AR's rings once a stream loop writes an allreduce's
// input block by block: one located error per rule, nothing changed.
// PIPELINE: allreduce=ring makes rings of point-to-point transfers; it needs p2p=nccl or p2p=cuda, not p2p=none

func.func @prod(%a: memref<1x4x4x2xf32>, %b: memref<1x1x2x8xf32>, %c: memref<4x4x8xf32>) {
  %main = host.get_current_stream : !host.stream
  %p = host.alloc : memref<1x4x4x8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %b0 = host.select %b[1][%c0] : memref<1x1x2x8xf32> to memref<1x2x8xf32, strided<[16, 8, 1], offset: ?>>
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %ai = host.select %a[1][%i] : memref<1x4x4x2xf32> to memref<1x4x2xf32, strided<[32, 2, 1], offset: ?>>
    %pi = host.select %p[1][%i] : memref<1x4x4x8xf32> to memref<1x4x8xf32, strided<[128, 8, 1], offset: ?>>
    host.matmul ins(%ai, %b0 : memref<1x4x2xf32, strided<[32, 2, 1], offset: ?>>, memref<1x2x8xf32, strided<[16, 8, 1], offset: ?>>) outs(%pi : memref<1x4x8xf32, strided<[128, 8, 1], offset: ?>>)
  }
  %v = host.select %p[0][%c0] : memref<1x4x4x8xf32> to memref<4x4x8xf32, strided<[32, 8, 1], offset: ?>>
  // expected-error @+1 {{'comm.allreduce' has no ring for its reduce kind}}
  %r = comm.allreduce %v into %c prod team [0, 1, 2, 3] : memref<4x4x8xf32, strided<[32, 8, 1], offset: ?>> into memref<4x4x8xf32>
  comm.wait %r
  return
}

// -----

func.func @team(%a: memref<1x4x4x2xf32>, %b: memref<1x1x2x8xf32>, %c: memref<4x4x8xf32>) {
  %main = host.get_current_stream : !host.stream
  %p = host.alloc : memref<1x4x4x8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %b0 = host.select %b[1][%c0] : memref<1x1x2x8xf32> to memref<1x2x8xf32, strided<[16, 8, 1], offset: ?>>
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %ai = host.select %a[1][%i] : memref<1x4x4x2xf32> to memref<1x4x2xf32, strided<[32, 2, 1], offset: ?>>
    %pi = host.select %p[1][%i] : memref<1x4x4x8xf32> to memref<1x4x8xf32, strided<[128, 8, 1], offset: ?>>
    host.matmul ins(%ai, %b0 : memref<1x4x2xf32, strided<[32, 2, 1], offset: ?>>, memref<1x2x8xf32, strided<[16, 8, 1], offset: ?>>) outs(%pi : memref<1x4x8xf32, strided<[128, 8, 1], offset: ?>>)
  }
  %v = host.select %p[0][%c0] : memref<1x4x4x8xf32> to memref<4x4x8xf32, strided<[32, 8, 1], offset: ?>>
  // expected-error @+1 {{team [1, 0, 2, 3] is not the whole mesh in order}}
  %r = comm.allreduce %v into %c sum team [1, 0, 2, 3] : memref<4x4x8xf32, strided<[32, 8, 1], offset: ?>> into memref<4x4x8xf32>
  comm.wait %r
  return
}

// -----

func.func @extent(%a: memref<1x4x4x2xf32>, %b: memref<1x1x2x8xf32>, %c: memref<4x4x8xf32>) {
  %main = host.get_current_stream : !host.stream
  %p = host.alloc : memref<1x4x4x8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %b0 = host.select %b[1][%c0] : memref<1x1x2x8xf32> to memref<1x2x8xf32, strided<[16, 8, 1], offset: ?>>
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %ai = host.select %a[1][%i] : memref<1x4x4x2xf32> to memref<1x4x2xf32, strided<[32, 2, 1], offset: ?>>
    %pi = host.select %p[1][%i] : memref<1x4x4x8xf32> to memref<1x4x8xf32, strided<[128, 8, 1], offset: ?>>
    host.matmul ins(%ai, %b0 : memref<1x4x2xf32, strided<[32, 2, 1], offset: ?>>, memref<1x2x8xf32, strided<[16, 8, 1], offset: ?>>) outs(%pi : memref<1x4x8xf32, strided<[128, 8, 1], offset: ?>>)
  }
  %v = host.select %p[0][%c0] : memref<1x4x4x8xf32> to memref<4x4x8xf32, strided<[32, 8, 1], offset: ?>>
  // expected-error @+1 {{axis 0 of the input of 'comm.allreduce', along which a stream loop writes it, must have extent 2}}
  %r = comm.allreduce %v into %c sum team [0, 1] : memref<4x4x8xf32, strided<[32, 8, 1], offset: ?>> into memref<4x4x8xf32>
  comm.wait %r
  return
}

// -----

func.func @output_after(%a: memref<1x4x4x2xf32>, %b: memref<1x1x2x8xf32>) {
  %main = host.get_current_stream : !host.stream
  %p = host.alloc : memref<1x4x4x8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %b0 = host.select %b[1][%c0] : memref<1x1x2x8xf32> to memref<1x2x8xf32, strided<[16, 8, 1], offset: ?>>
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %ai = host.select %a[1][%i] : memref<1x4x4x2xf32> to memref<1x4x2xf32, strided<[32, 2, 1], offset: ?>>
    %pi = host.select %p[1][%i] : memref<1x4x4x8xf32> to memref<1x4x8xf32, strided<[128, 8, 1], offset: ?>>
    host.matmul ins(%ai, %b0 : memref<1x4x2xf32, strided<[32, 2, 1], offset: ?>>, memref<1x2x8xf32, strided<[16, 8, 1], offset: ?>>) outs(%pi : memref<1x4x8xf32, strided<[128, 8, 1], offset: ?>>)
  }
  %c = host.alloc : memref<4x4x8xf32>
  %v = host.select %p[0][%c0] : memref<1x4x4x8xf32> to memref<4x4x8xf32, strided<[32, 8, 1], offset: ?>>
  // expected-error @+1 {{the output of 'comm.allreduce' must be a strided buffer defined before the stream loop that writes its input}}
  %r = comm.allreduce %v into %c sum team [0, 1, 2, 3] : memref<4x4x8xf32, strided<[32, 8, 1], offset: ?>> into memref<4x4x8xf32>
  comm.wait %r
  host.dealloc %c : memref<4x4x8xf32>
  return
}

// -----

func.func @two_waits(%a: memref<1x4x4x2xf32>, %b: memref<1x1x2x8xf32>, %c: memref<4x4x8xf32>) {
  %main = host.get_current_stream : !host.stream
  %p = host.alloc : memref<1x4x4x8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %b0 = host.select %b[1][%c0] : memref<1x1x2x8xf32> to memref<1x2x8xf32, strided<[16, 8, 1], offset: ?>>
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %ai = host.select %a[1][%i] : memref<1x4x4x2xf32> to memref<1x4x2xf32, strided<[32, 2, 1], offset: ?>>
    %pi = host.select %p[1][%i] : memref<1x4x4x8xf32> to memref<1x4x8xf32, strided<[128, 8, 1], offset: ?>>
    host.matmul ins(%ai, %b0 : memref<1x4x2xf32, strided<[32, 2, 1], offset: ?>>, memref<1x2x8xf32, strided<[16, 8, 1], offset: ?>>) outs(%pi : memref<1x4x8xf32, strided<[128, 8, 1], offset: ?>>)
  }
  %v = host.select %p[0][%c0] : memref<1x4x4x8xf32> to memref<4x4x8xf32, strided<[32, 8, 1], offset: ?>>
  // expected-error @+1 {{the request of 'comm.allreduce' must be waited for by one comm.wait in its block and used nowhere else}}
  %r = comm.allreduce %v into %c sum team [0, 1, 2, 3] : memref<4x4x8xf32, strided<[32, 8, 1], offset: ?>> into memref<4x4x8xf32>
  comm.wait %r
  comm.wait %r
  return
}

// -----

func.func @two_loops(%a: memref<1x4x4x2xf32>, %b: memref<1x1x2x8xf32>, %c: memref<4x4x8xf32>) {
  %main = host.get_current_stream : !host.stream
  %p = host.alloc : memref<1x4x4x8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %b0 = host.select %b[1][%c0] : memref<1x1x2x8xf32> to memref<1x2x8xf32, strided<[16, 8, 1], offset: ?>>
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %ai = host.select %a[1][%i] : memref<1x4x4x2xf32> to memref<1x4x2xf32, strided<[32, 2, 1], offset: ?>>
    %pi = host.select %p[1][%i] : memref<1x4x4x8xf32> to memref<1x4x8xf32, strided<[128, 8, 1], offset: ?>>
    host.matmul ins(%ai, %b0 : memref<1x4x2xf32, strided<[32, 2, 1], offset: ?>>, memref<1x2x8xf32, strided<[16, 8, 1], offset: ?>>) outs(%pi : memref<1x4x8xf32, strided<[128, 8, 1], offset: ?>>)
  }
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %ai = host.select %a[1][%i] : memref<1x4x4x2xf32> to memref<1x4x2xf32, strided<[32, 2, 1], offset: ?>>
    %pi = host.select %p[1][%i] : memref<1x4x4x8xf32> to memref<1x4x8xf32, strided<[128, 8, 1], offset: ?>>
    host.matmul ins(%ai, %b0 : memref<1x4x2xf32, strided<[32, 2, 1], offset: ?>>, memref<1x2x8xf32, strided<[16, 8, 1], offset: ?>>) outs(%pi : memref<1x4x8xf32, strided<[128, 8, 1], offset: ?>>)
  }
  %v = host.select %p[0][%c0] : memref<1x4x4x8xf32> to memref<4x4x8xf32, strided<[32, 8, 1], offset: ?>>
  // expected-error @+1 {{'comm.allreduce' has its input written by 2 stream loops; its rings run in one}}
  %r = comm.allreduce %v into %c sum team [0, 1, 2, 3] : memref<4x4x8xf32, strided<[32, 8, 1], offset: ?>> into memref<4x4x8xf32>
  comm.wait %r
  return
}

// -----

func.func @before_loop(%a: memref<1x4x4x2xf32>, %b: memref<1x1x2x8xf32>, %c: memref<4x4x8xf32>) {
  %main = host.get_current_stream : !host.stream
  %p = host.alloc : memref<1x4x4x8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %b0 = host.select %b[1][%c0] : memref<1x1x2x8xf32> to memref<1x2x8xf32, strided<[16, 8, 1], offset: ?>>
  %v = host.select %p[0][%c0] : memref<1x4x4x8xf32> to memref<4x4x8xf32, strided<[32, 8, 1], offset: ?>>
  // expected-error @+1 {{'comm.allreduce' must come after the stream loop that writes its input along axis 0, in the same block}}
  %r = comm.allreduce %v into %c sum team [0, 1, 2, 3] : memref<4x4x8xf32, strided<[32, 8, 1], offset: ?>> into memref<4x4x8xf32>
  comm.wait %r
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %ai = host.select %a[1][%i] : memref<1x4x4x2xf32> to memref<1x4x2xf32, strided<[32, 2, 1], offset: ?>>
    %pi = host.select %p[1][%i] : memref<1x4x4x8xf32> to memref<1x4x8xf32, strided<[128, 8, 1], offset: ?>>
    host.matmul ins(%ai, %b0 : memref<1x4x2xf32, strided<[32, 2, 1], offset: ?>>, memref<1x2x8xf32, strided<[16, 8, 1], offset: ?>>) outs(%pi : memref<1x4x8xf32, strided<[128, 8, 1], offset: ?>>)
  }
  return
}
