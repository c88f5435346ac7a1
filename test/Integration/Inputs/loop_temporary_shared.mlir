// test/Integration/loop-temporaries.mlir's program with its temporary allocated
// once before the loop: iterations on different pool streams write it
// concurrently, a data race.
func.func @loop_temporaries(%a: memref<8x16xf32>, %b: memref<8x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %main = host.get_current_stream : !host.stream
  %t = host.alloc : memref<16xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    %s = host.stream_from_pool %i : !host.stream
    host.set_current_stream %s
    host.sync_stream %main
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %s = host.stream_from_pool %i : !host.stream
    host.set_current_stream %s
    %ai = host.select %a[0][%i] : memref<8x16xf32> to memref<16xf32, strided<[1], offset: ?>>
    %bi = host.select %b[0][%i] : memref<8x16xf32> to memref<16xf32, strided<[1], offset: ?>>
    host.neg ins(%ai : memref<16xf32, strided<[1], offset: ?>>) outs(%t : memref<16xf32>)
    host.mul ins(%t, %ai : memref<16xf32>, memref<16xf32, strided<[1], offset: ?>>) outs(%bi : memref<16xf32, strided<[1], offset: ?>>)
    host.set_current_stream %main
    host.sync_stream %s
  }
  return
}
