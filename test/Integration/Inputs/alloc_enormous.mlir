// A host program whose memref.alloc of 1152921504606846976 B is written at both ends
// (test/Integration/memref-alloc.mlir).
func.func @alloc_enormous(%a: memref<4xf32>, %b: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %bytes = arith.constant 1152921504606846976 : index
  %last = arith.constant 1152921504606846975 : index
  %v = arith.constant 7 : i8
  %m = memref.alloc(%bytes) : memref<?xi8>
  memref.store %v, %m[%c0] : memref<?xi8>
  memref.store %v, %m[%last] : memref<?xi8>
  memref.dealloc %m : memref<?xi8>
  host.neg ins(%a : memref<4xf32>) outs(%b : memref<4xf32>)
  return
}
