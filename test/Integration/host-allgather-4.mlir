// A hand-written allgather over 4 ranks, one slice per stream.
// RUN: hir-run -n 4 --num-streams 2 --output-dir %t %s | FileCheck %s
// RUN: %python %S/Inputs/check_npy.py %t "all(globals()['arg1_rank%%d' %% q] == [v for s in range(2) for r in range(4) for v in globals()['arg0_rank%%d' %% r][8 * s:8 * s + 8]] for q in range(4))"

// CHECK: ran @allgather on 4 ranks (2 streams each)
func.func @allgather(%a: memref<2x1x8xf16>, %out: memref<2x4x8xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %main = host.get_current_stream : !host.stream
  scf.for %i = %c0 to %c2 step %c1 {
    %s = host.stream_from_pool %i : !host.stream
    host.set_current_stream %s
    host.sync_stream %main
    %ai = host.select %a[0][%i] : memref<2x1x8xf16> to memref<1x8xf16, strided<[8, 1], offset: ?>>
    %oi = host.select %out[0][%i] : memref<2x4x8xf16> to memref<4x8xf16, strided<[8, 1], offset: ?>>
    %r = comm.allgather %ai into %oi team [0, 1, 2, 3] : memref<1x8xf16, strided<[8, 1], offset: ?>> into memref<4x8xf16, strided<[8, 1], offset: ?>>
    comm.wait %r
    host.set_current_stream %main
    host.sync_stream %s
  }
  return
}
