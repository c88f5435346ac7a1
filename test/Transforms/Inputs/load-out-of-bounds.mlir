// A load at index -1 of axis 1 (computed, so only the run sees it): every
// rank fails naming it (host-check-bounds.mlir).
func.func @load_out_of_bounds(%a: memref<4x8xf32>, %b: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %before = arith.subi %c0, %c1 : index
  %x = memref.load %a[%c0, %before] : memref<4x8xf32>
  memref.store %x, %b[%c0, %c0] : memref<4x8xf32>
  return
}
