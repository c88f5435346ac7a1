fusion.mesh @tp = [0, 1]
func.func @f(%a: tensor<2x8xf32, #fusion.dist<@tp, [didx, ser