// A second free of a 2 GiB block, the fuzz's mutant of
// Integration/Inputs/alloc_2gib.mlir: refused at the op
// (host-verify-deallocs.mlir).
func.func @freed_twice(%a: memref<4xf32>, %b: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %bytes = arith.constant 2147483648 : index
  %m = memref.alloc(%bytes) : memref<?xi8>
  memref.dealloc %m : memref<?xi8>
  host.neg ins(%a : memref<4xf32>) outs(%b : memref<4xf32>)
  memref.dealloc %m : memref<?xi8>
  return
}
