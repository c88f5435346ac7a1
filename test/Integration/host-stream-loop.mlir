// A hand-written host program: a stream loop of pointwise ops on each rank.
// RUN: hir-run -n 1 --output-dir %t %s | FileCheck %s --check-prefix=ONE
// RUN: %python %S/Inputs/check_npy.py %t "close(arg1_rank0, [-x for x in arg0_rank0]) and close(arg2_rank0, [-x * x for x in arg0_rank0])"
// RUN: hir-run -n 2 --num-streams 2 --output-dir %t %s | FileCheck %s --check-prefix=TWO
// RUN: %python %S/Inputs/check_npy.py %t "arg0_rank0 != arg0_rank1 and close(arg2_rank1, [-x * x for x in arg0_rank1])"

// ONE: ran @pointwise on 1 rank (4 streams each)
// TWO: ran @pointwise on 2 ranks (2 streams each)
func.func @pointwise(%a: memref<4x8xf32>, %b: memref<4x8xf32>, %c: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %main = host.get_current_stream : !host.stream
  scf.for %i = %c0 to %c4 step %c1 {
    %s = host.stream_from_pool %i : !host.stream
    host.set_current_stream %s
    host.sync_stream %main
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %s = host.stream_from_pool %i : !host.stream
    host.set_current_stream %s
    %ai = host.select %a[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    %bi = host.select %b[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    %ci = host.select %c[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.neg ins(%ai : memref<8xf32, strided<[1], offset: ?>>) outs(%bi : memref<8xf32, strided<[1], offset: ?>>)
    host.mul ins(%ai, %bi : memref<8xf32, strided<[1], offset: ?>>, memref<8xf32, strided<[1], offset: ?>>) outs(%ci : memref<8xf32, strided<[1], offset: ?>>)
    host.set_current_stream %main
    host.sync_stream %s
  }
  return
}
