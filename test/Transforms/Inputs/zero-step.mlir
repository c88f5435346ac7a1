// A host program whose loop never ends (step 0): hir-run refuses it at the
// loop, before any rank starts (host-verify-loops.mlir). Without the check,
// MLIR 22 verifies it, and every rank would run it forever.
func.func @zero(%a: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  // The step is %c0.
  scf.for %i = %c0 to %c4 step %c0 {
    host.neg ins(%a : memref<8xf32>) outs(%a : memref<8xf32>)
  }
  return
}
