// RUN: hir-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(host-p2p-pipeline{chunks=2}))'
// RUN: hir-opt %s --split-input-file --host-p2p-pipeline | FileCheck %s --check-prefix=CHOSEN
// RUN: not hir-opt %s --pass-pipeline='builtin.module(func.func(host-p2p-pipeline{chunks=two}))' 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: not hir-opt %s --pass-pipeline='builtin.module(func.func(host-p2p-pipeline{chunks=18446744073709551615}))' 2>&1 | FileCheck %s --check-prefix=WRAP

// OPTION: option 'chunks' must be an integer from 0 to 9223372036854775807, not 'two'
// WRAP: option 'chunks' must be an integer from 0 to 9223372036854775807, not '18446744073709551615'

// Rings whose steps do not split into parts: an error where chunks=2 asks
// for them; whole steps where the pass chooses (chunks=0, the default).

// Steps of 3 rows do not split in two.
// CHOSEN-LABEL: func.func @odd_rows
// CHOSEN: %[[C4:.*]] = arith.constant 4 : index
// CHOSEN: scf.for %{{.*}} = %{{.*}} to %[[C4]] step
// CHOSEN-NOT: memref.subview
// CHOSEN: comm.recv
func.func @odd_rows(%in: memref<1x3x8xf32>, %out: memref<4x3x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %main = host.get_current_stream : !host.stream
  %r = comm.allgather %in into %out team [0, 1, 2, 3] : memref<1x3x8xf32> into memref<4x3x8xf32>
  comm.wait %r
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    // expected-error @+1 {{chunks=2 splits each ring step along axis 0 of its slices, but this slice has 3 rows there}}
    %oi = host.select %out[0][%i] : memref<4x3x8xf32> to memref<3x8xf32, strided<[8, 1], offset: ?>>
    host.neg ins(%oi : memref<3x8xf32, strided<[8, 1], offset: ?>>) outs(%oi : memref<3x8xf32, strided<[8, 1], offset: ?>>)
  }
  return
}

// -----

// A sum over the rows of a slice needs all of them at once.
// CHOSEN-LABEL: func.func @sum_over_rows
// CHOSEN: %[[C4:.*]] = arith.constant 4 : index
// CHOSEN: scf.for %{{.*}} = %{{.*}} to %[[C4]] step
// CHOSEN-NOT: memref.subview
// CHOSEN: host.sum [0]
func.func @sum_over_rows(%in: memref<1x4x8xf32>, %out: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %g = host.alloc : memref<4x4x8xf32>
  %main = host.get_current_stream : !host.stream
  %r = comm.allgather %in into %g team [0, 1, 2, 3] : memref<1x4x8xf32> into memref<4x4x8xf32>
  comm.wait %r
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %gi = host.select %g[0][%i] : memref<4x4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: ?>>
    %oi = host.select %out[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    // expected-error @+1 {{'host.sum' cannot be split into the chunks=2 parts of a ring step: only elementwise ops over slices, and host.matmul or host.linear whose first operand and output are slices along the same rows, compute each row of a slice from the same rows}}
    host.sum [0] ins(%gi : memref<4x8xf32, strided<[8, 1], offset: ?>>) outs(%oi : memref<8xf32, strided<[1], offset: ?>>)
  }
  return
}

// -----

// A GEMM whose second operand is the slice reads all its rows for each output row.
func.func @slice_as_weights(%in: memref<1x16x32xbf16>, %x: memref<8x16xbf16>, %out: memref<4x8x32xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %g = host.alloc : memref<4x16x32xbf16>
  %main = host.get_current_stream : !host.stream
  %r = comm.allgather %in into %g team [0, 1, 2, 3] : memref<1x16x32xbf16> into memref<4x16x32xbf16>
  comm.wait %r
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %gi = host.select %g[0][%i] : memref<4x16x32xbf16> to memref<16x32xbf16, strided<[32, 1], offset: ?>>
    %oi = host.select %out[0][%i] : memref<4x8x32xbf16> to memref<8x32xbf16, strided<[32, 1], offset: ?>>
    // expected-error @+1 {{'host.matmul' cannot be split into the chunks=2 parts of a ring step}}
    host.matmul ins(%x, %gi : memref<8x16xbf16>, memref<16x32xbf16, strided<[32, 1], offset: ?>>)
                outs(%oi : memref<8x32xbf16, strided<[32, 1], offset: ?>>)
  }
  return
}
