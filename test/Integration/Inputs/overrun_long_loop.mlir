// An out-of-range host.select in a loop of 2^63 - 1 iterations (found by
// scripts/fuzz.py): the rank fails at i = 4, and its later calls do nothing,
// but the loop itself would run on for ever.
func.func @overrun_long_loop(%a: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 9223372036854775807 : index
  %g = host.alloc : memref<4x8xf32>
  scf.for %i = %c0 to %n step %c1 {
    %ai = host.select %a[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    %gi = host.select %g[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.neg ins(%ai : memref<8xf32, strided<[1], offset: ?>>) outs(%gi : memref<8xf32, strided<[1], offset: ?>>)
  }
  return
}
