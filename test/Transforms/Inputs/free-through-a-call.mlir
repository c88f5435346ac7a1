// A block freed twice through calls: each function frees what it is given
// once, so only the run sees the second free (host-verify-deallocs.mlir).
func.func private @release(%m: memref<4xf32>) {
  memref.dealloc %m : memref<4xf32>
  return
}

func.func @free_through_a_call(%a: memref<4xf32>, %b: memref<4xf32>) {
  %m = memref.alloc() : memref<4xf32>
  func.call @release(%m) : (memref<4xf32>) -> ()
  func.call @release(%m) : (memref<4xf32>) -> ()
  host.neg ins(%a : memref<4xf32>) outs(%b : memref<4xf32>)
  return
}
