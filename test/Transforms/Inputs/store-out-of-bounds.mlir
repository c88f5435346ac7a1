// A store at index 2^63 - 1 of a 2 GiB block, the fuzz's mutant of
// Integration/Inputs/alloc_2gib.mlir (host-check-bounds.mlir).
func.func @store_out_of_bounds(%a: memref<4xf32>, %b: memref<4xf32>) {
  %far = arith.constant 9223372036854775807 : index
  %bytes = arith.constant 2147483648 : index
  %v = arith.constant 7 : i8
  %m = memref.alloc(%bytes) : memref<?xi8>
  memref.store %v, %m[%far] : memref<?xi8>
  memref.dealloc %m : memref<?xi8>
  host.neg ins(%a : memref<4xf32>) outs(%b : memref<4xf32>)
  return
}
