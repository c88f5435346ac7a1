// A rank that fails (an out-of-range host.select, i = 4 of a [4, 8]
// buffer), then runs a loop of 2^63 - 1 iterations that calls no runtime
// entry: nothing brings it back to the launcher, whatever exit::call does.
func.func @overrun_then_spin(%a: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %n = arith.constant 9223372036854775807 : index
  %g = host.alloc : memref<4x8xf32>
  scf.for %i = %c4 to %c5 step %c1 {
    %ai = host.select %a[0][%c0] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    %gi = host.select %g[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.neg ins(%ai : memref<8xf32, strided<[1], offset: ?>>) outs(%gi : memref<8xf32, strided<[1], offset: ?>>)
  }
  %count = memref.alloca() : memref<index>
  scf.for %i = %c0 to %n step %c1 {
    memref.store %i, %count[] : memref<index>
  }
  return
}
