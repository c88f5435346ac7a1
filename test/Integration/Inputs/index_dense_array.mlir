// A dense array of `index` (found by scripts/fuzz.py, seed 31): MLIR 22's
// parser crashes on it (stock mlir-opt too), so HIR's tools refuse it first.
func.func @f() {
  "comm.share_mem_handles"() <{team = array<index: 0, 1>}> : () -> ()
  return
}
