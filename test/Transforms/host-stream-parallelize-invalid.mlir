// RUN: hir-opt --host-stream-parallelize --split-input-file --verify-diagnostics %s
// RUN: not hir-opt --pass-pipeline='builtin.module(func.func(host-stream-parallelize{num-streams=two}))' %s 2>&1 | FileCheck %s --check-prefix=OPTION

// OPTION: host-stream-parallelize: option 'num-streams' must be a non-negative integer, not 'two'

func.func @matmul_columns(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  // expected-error @+1 {{the stream axis 1 of the matmul's [..., M, N] output is N}}
  host.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>) {host.stream_axis = 1 : i64}
  return
}

// -----

// Along M, each iteration's lhs row meets a different rhs: not a matmul.
func.func @matmul_rows_batched_rhs(%a: memref<2x4x8xf32>, %b: memref<2x8x16xf32>, %c: memref<2x4x16xf32>) {
  // expected-error @+1 {{the stream axis 1 of the matmul's [..., M, N] output is M, with a batched rhs}}
  host.matmul ins(%a, %b : memref<2x4x8xf32>, memref<2x8x16xf32>) outs(%c : memref<2x4x16xf32>) {host.stream_axis = 1 : i64}
  return
}

// -----

func.func @linear_features(%x: memref<4x8xf32>, %w: memref<16x8xf32>, %y: memref<4x16xf32>) {
  // expected-error @+1 {{the stream axis 1 is the output-feature axis of the linear}}
  host.linear ins(%x, %w : memref<4x8xf32>, memref<16x8xf32>) outs(%y : memref<4x16xf32>) {host.stream_axis = 1 : i64}
  return
}

// -----

func.func @point_to_point(%a: memref<4x8xf32>, %peer: index) {
  // expected-error @+1 {{'comm.send' cannot be stream-parallelized}}
  %0 = comm.send %a to %peer team [0, 1] {host.stream_axis = 0 : i64} : memref<4x8xf32>
  return
}

// -----

func.func @nested(%a: memref<4x8xf32>, %flag: i1) {
  scf.if %flag {
    // expected-error @+1 {{a stream-parallel op must be at the top level of its function}}
    host.neg ins(%a : memref<4x8xf32>) outs(%a : memref<4x8xf32>) {host.stream_axis = 0 : i64}
  }
  return
}
