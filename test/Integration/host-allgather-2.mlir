// A hand-written allgather over 2 ranks, into a buffer from host.alloc that
// is copied out and freed.
// RUN: hir-run -n 2 --output-dir %t %s | FileCheck %s
// RUN: %python %S/Inputs/check_npy.py %t "arg1_rank0 == arg0_rank0 + arg0_rank1 and arg1_rank1 == arg1_rank0"

// CHECK: ran @allgather on 2 ranks
func.func @allgather(%a: memref<1x8xf32>, %out: memref<2x8xf32>) {
  %g = host.alloc : memref<2x8xf32>
  %r = comm.allgather %a into %g team [0, 1] : memref<1x8xf32> into memref<2x8xf32>
  comm.wait %r
  host.copy ins(%g : memref<2x8xf32>) outs(%out : memref<2x8xf32>)
  host.dealloc %g : memref<2x8xf32>
  return
}
