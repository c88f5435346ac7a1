// Not valid IR: hir-run reports the parser's located error.
func.func @f(%a: memref<8xf32>) {
  host.neg ins(%a : memref<8xf32>)
  return
}
