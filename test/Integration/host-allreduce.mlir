// A hand-written allreduce over 2 ranks.
// RUN: hir-run -n 2 --output-dir %t %s | FileCheck %s
// RUN: %python %S/Inputs/check_npy.py %t "close(arg1_rank0, [x + y for x, y in zip(arg0_rank0, arg0_rank1)]) and arg1_rank1 == arg1_rank0"

// CHECK: ran @allreduce on 2 ranks
func.func @allreduce(%a: memref<16xf32>, %out: memref<16xf32>) {
  %r = comm.allreduce %a into %out sum team [0, 1] : memref<16xf32> into memref<16xf32>
  comm.wait %r
  return
}
