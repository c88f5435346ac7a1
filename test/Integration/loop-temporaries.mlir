// A host.alloc inside a stream loop (the fork, then iterations that run
// concurrently on the pool, each joined into the caller's stream) is a
// buffer of its own in every iteration that overlaps another (issue 25 item
// 5): each iteration computes
// -a_i into its temporary on its pool stream, then -a_i * a_i into its row of
// b, and frees the temporary stream-ordered. With one buffer per allocation
// site, iterations on different streams would write the same temporary
// concurrently: the race detector (fatal, the default) fails the run, as it
// does on Inputs/loop_temporary_shared.mlir, this program with the
// temporary allocated once before the loop.
// Eight iterations over two pool streams reuse each stream's block.
// RUN: hir-run -n 2 --num-streams 2 --output-dir %t %s | FileCheck %s
// RUN: %python %S/Inputs/check_npy.py %t "close(arg1_rank0, [-x * x for x in arg0_rank0]) and close(arg1_rank1, [-x * x for x in arg0_rank1])"
// RUN: hir-run -n 1 --num-streams 3 --poison --output-dir %t %s | FileCheck %s --check-prefix=POISON
// RUN: %python %S/Inputs/check_npy.py %t "close(arg1_rank0, [-x * x for x in arg0_rank0])"
// RUN: not hir-run -n 1 --num-streams 2 %S/Inputs/loop_temporary_shared.mlir 2>&1 | FileCheck %s --check-prefix=SHARED

// CHECK: ran @loop_temporaries on 2 ranks (2 streams each)
// POISON: ran @loop_temporaries on 1 rank (3 streams each)
// SHARED: data race
func.func @loop_temporaries(%a: memref<8x16xf32>, %b: memref<8x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %main = host.get_current_stream : !host.stream
  scf.for %i = %c0 to %c8 step %c1 {
    %s = host.stream_from_pool %i : !host.stream
    host.set_current_stream %s
    host.sync_stream %main
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %s = host.stream_from_pool %i : !host.stream
    host.set_current_stream %s
    %t = host.alloc : memref<16xf32>
    %ai = host.select %a[0][%i] : memref<8x16xf32> to memref<16xf32, strided<[1], offset: ?>>
    %bi = host.select %b[0][%i] : memref<8x16xf32> to memref<16xf32, strided<[1], offset: ?>>
    host.neg ins(%ai : memref<16xf32, strided<[1], offset: ?>>) outs(%t : memref<16xf32>)
    host.mul ins(%t, %ai : memref<16xf32>, memref<16xf32, strided<[1], offset: ?>>) outs(%bi : memref<16xf32, strided<[1], offset: ?>>)
    host.dealloc %t : memref<16xf32>
    host.set_current_stream %main
    host.sync_stream %s
  }
  return
}
