// A free of the launcher's buffer: the IR cannot tell where an argument's
// memory comes from, so the runtime's heap refuses it at run time
// (host-verify-deallocs.mlir).
func.func @free_argument(%a: memref<4xf32>, %b: memref<4xf32>) {
  host.neg ins(%a : memref<4xf32>) outs(%b : memref<4xf32>)
  memref.dealloc %a : memref<4xf32>
  return
}
