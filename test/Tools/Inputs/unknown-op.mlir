// An op no dialect defines.
func.func @f(%a: tensor<8xf32>) {
  %b = fusion.frobnicate %a : tensor<8xf32>
  return
}
