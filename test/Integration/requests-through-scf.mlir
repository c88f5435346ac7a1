// Requests as values through scf (issue 25 item 4): iteration i posts the
// allreduce of row i and waits for row i-1's, one iteration later (the
// request carried in an scf.for iter_arg; the last one waited after the
// loop), and a send or receive chosen by an scf.if is waited after it. Run on
// 2 ranks; comm-verify-requests (first in the pipeline to LLVM) accepts it.
// RUN: hir-run -n 2 --output-dir %t %s | FileCheck %s
// RUN: %python %S/Inputs/check_npy.py %t "close(arg1_rank0, [x + y for x, y in zip(arg0_rank0, arg0_rank1)]) and arg1_rank1 == arg1_rank0 and arg2_rank1 == arg0_rank0[:8]"

// CHECK: ran @requests on 2 ranks
func.func @requests(%a: memref<4x8xf32>, %b: memref<4x8xf32>, %c: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %a0 = host.select %a[0][%c0] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
  %b0 = host.select %b[0][%c0] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
  %r0 = comm.allreduce %a0 into %b0 sum team [0, 1] : memref<8xf32, strided<[1], offset: ?>> into memref<8xf32, strided<[1], offset: ?>>
  %last = scf.for %i = %c1 to %c4 step %c1 iter_args(%prev = %r0) -> (!comm.request) {
    %ai = host.select %a[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    %bi = host.select %b[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    %r = comm.allreduce %ai into %bi sum team [0, 1] : memref<8xf32, strided<[1], offset: ?>> into memref<8xf32, strided<[1], offset: ?>>
    comm.wait %prev
    scf.yield %r : !comm.request
  }
  comm.wait %last
  %rank = host.rank : index
  %first = arith.cmpi eq, %rank, %c0 : index
  %q = scf.if %first -> !comm.request {
    %s = comm.send %a0 to %c1 team [0, 1] : memref<8xf32, strided<[1], offset: ?>>
    scf.yield %s : !comm.request
  } else {
    %t = comm.recv %c from %c0 team [0, 1] : memref<8xf32>
    scf.yield %t : !comm.request
  }
  comm.wait %q
  return
}
