// convert-shard-to-fusion imports upstream shard programs: grids become
// meshes, shardings distributions, linalg and arith ops on tensors fusion ops.
// RUN: hir-opt %s -split-input-file --convert-shard-to-fusion | FileCheck %s
// What it makes is a fusion program the sharding passes accept.
// RUN: hir-opt %s -split-input-file --convert-shard-to-fusion --fusion-propagate-sharding --fusion-verify-sharding -o /dev/null

// A row-parallel matmul: A split along M (an outer split, 16 rows a device),
// B left to fusion-propagate-sharding, C annotated as A. The grid is a mesh
// of its size; the annotations go and the signature follows.
// CHECK:       fusion.mesh @g = [0, 1, 2, 3]
// CHECK-NOT:   shard.
// CHECK-LABEL: func.func @matmul
// CHECK-SAME:  (%[[A:[^:]+]]: tensor<64x32xf32, #fusion.dist<@g, [didx, serial]>>, %[[B:[^:]+]]: tensor<32x16xf32>)
// CHECK-SAME:  -> tensor<64x16xf32, #fusion.dist<@g, [didx, serial]>>
// CHECK-NEXT:  %[[C:.*]] = fusion.matmul %[[A]], %[[B]] : tensor<64x32xf32, #fusion.dist<@g, [didx, serial]>>, tensor<32x16xf32> -> tensor<64x16xf32, #fusion.dist<@g, [didx, serial]>>
// CHECK-NEXT:  return %[[C]]
shard.grid @g(shape = 4)
func.func @matmul(%a: tensor<64x32xf32>, %b: tensor<32x16xf32>) -> tensor<64x16xf32> {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %a1 = shard.shard %a to %s : tensor<64x32xf32>
  %e = tensor.empty() : tensor<64x16xf32>
  %c = linalg.matmul ins(%a1, %b : tensor<64x32xf32>, tensor<32x16xf32>) outs(%e : tensor<64x16xf32>) -> tensor<64x16xf32>
  %c1 = shard.shard %c to %s : tensor<64x16xf32>
  return %c1 : tensor<64x16xf32>
}

// -----

// Replicated (no axis split) is serial on the grid's mesh; a value annotated
// for its users only takes the sharding they agree on. Elementwise linalg and
// arith ops become their fusion ops; a linalg op's destination goes.
// CHECK:       fusion.mesh @g = [0, 1]
// CHECK-LABEL: func.func @elementwise
// CHECK-SAME:  (%[[X:[^:]+]]: tensor<8x4xf32, #fusion.dist<@g, [serial, serial]>>, %[[Y:[^:]+]]: tensor<8x4xf32, #fusion.dist<@g, [serial, serial]>>)
// CHECK-NEXT:  %[[ADD:.*]] = fusion.add %[[X]], %[[Y]] : {{.*}} -> tensor<8x4xf32, #fusion.dist<@g, [serial, serial]>>
// CHECK-NEXT:  %[[SUB:.*]] = fusion.sub %[[ADD]], %[[Y]] : {{.*}} -> tensor<8x4xf32>
// CHECK-NEXT:  %[[MUL:.*]] = fusion.mul %[[SUB]], %[[X]] : {{.*}} -> tensor<8x4xf32>
// CHECK-NEXT:  %[[DIV:.*]] = fusion.div %[[MUL]], %[[X]]
// CHECK-NEXT:  %[[MAX:.*]] = fusion.max %[[DIV]], %[[X]]
// CHECK-NEXT:  %[[MIN:.*]] = fusion.min %[[MAX]], %[[X]]
// CHECK-NEXT:  %[[NEG:.*]] = fusion.neg %[[MIN]]
// CHECK-NEXT:  %[[EXP:.*]] = fusion.exp %[[NEG]]
// CHECK-NEXT:  %[[TANH:.*]] = fusion.tanh %[[EXP]]
// CHECK-NEXT:  %[[ABS:.*]] = fusion.abs %[[TANH]]
// CHECK-NEXT:  %[[RSQRT:.*]] = fusion.rsqrt %[[ABS]]
// CHECK-NEXT:  %[[AADD:.*]] = fusion.add %[[RSQRT]], %[[X]]
// CHECK-NEXT:  %[[ASUB:.*]] = fusion.sub %[[AADD]], %[[X]]
// CHECK-NEXT:  %[[AMUL:.*]] = fusion.mul %[[ASUB]], %[[X]]
// CHECK-NEXT:  %[[ADIV:.*]] = fusion.div %[[AMUL]], %[[X]]
// CHECK-NEXT:  %[[AMAX:.*]] = fusion.max %[[ADIV]], %[[X]]
// CHECK-NEXT:  %[[AMAXN:.*]] = fusion.max %[[AMAX]], %[[X]]
// CHECK-NEXT:  %[[AMIN:.*]] = fusion.min %[[AMAXN]], %[[X]]
// CHECK-NEXT:  %[[AMINN:.*]] = fusion.min %[[AMIN]], %[[X]]
// CHECK-NEXT:  %[[ANEG:.*]] = fusion.neg %[[AMINN]]
// CHECK-NEXT:  %[[HALF:.*]] = fusion.cast %[[ANEG]] : tensor<8x4xf32> -> tensor<8x4xbf16>
// CHECK-NEXT:  %[[FULL:.*]] = fusion.cast %[[HALF]] : tensor<8x4xbf16> -> tensor<8x4xf32>
// CHECK-NEXT:  return %[[FULL]] : tensor<8x4xf32>
shard.grid @g(shape = 2)
func.func @elementwise(%x: tensor<8x4xf32>, %y: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %r = shard.sharding @g split_axes = [[]] : !shard.sharding
  %x1 = shard.shard %x to %r : tensor<8x4xf32>
  %y1 = shard.shard %y to %r annotate_for_users : tensor<8x4xf32>
  %e = tensor.empty() : tensor<8x4xf32>
  %add = linalg.add ins(%x1, %y1 : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %add1 = shard.shard %add to %r : tensor<8x4xf32>
  %sub = linalg.sub ins(%add1, %y1 : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %mul = linalg.mul ins(%sub, %x1 : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %div = linalg.div ins(%mul, %x1 : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %max = linalg.max ins(%div, %x1 : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %min = linalg.min ins(%max, %x1 : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %neg = linalg.negf ins(%min : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %exp = linalg.exp ins(%neg : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %tanh = linalg.tanh ins(%exp : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %abs = linalg.abs ins(%tanh : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %rsqrt = linalg.rsqrt ins(%abs : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %aadd = arith.addf %rsqrt, %x1 : tensor<8x4xf32>
  %asub = arith.subf %aadd, %x1 : tensor<8x4xf32>
  %amul = arith.mulf %asub, %x1 : tensor<8x4xf32>
  %adiv = arith.divf %amul, %x1 : tensor<8x4xf32>
  %amax = arith.maximumf %adiv, %x1 : tensor<8x4xf32>
  %amaxn = arith.maxnumf %amax, %x1 : tensor<8x4xf32>
  %amin = arith.minimumf %amaxn, %x1 : tensor<8x4xf32>
  %aminn = arith.minnumf %amin, %x1 : tensor<8x4xf32>
  %aneg = arith.negf %aminn : tensor<8x4xf32>
  %half = arith.truncf %aneg : tensor<8x4xf32> to tensor<8x4xbf16>
  %full = arith.extf %half : tensor<8x4xbf16> to tensor<8x4xf32>
  return %full : tensor<8x4xf32>
}

// -----

// An annotation that changes the sharding is a resharding: a fusion.set.
// Here the user of %a wants it replicated (an allgather), and the result is
// split along its second axis.
// CHECK-LABEL: func.func @reshard
// CHECK-SAME:  (%[[A:[^:]+]]: tensor<8x16xf32, #fusion.dist<@g, [didx, serial]>>)
// CHECK-SAME:  -> tensor<8x16xf32, #fusion.dist<@g, [serial, didx]>>
// CHECK-NEXT:  %[[R:.*]] = fusion.set %[[A]] : tensor<8x16xf32, #fusion.dist<@g, [didx, serial]>> -> tensor<8x16xf32, #fusion.dist<@g, [serial, serial]>>
// CHECK-NEXT:  %[[E:.*]] = fusion.exp %[[R]] : tensor<8x16xf32, #fusion.dist<@g, [serial, serial]>> -> tensor<8x16xf32, #fusion.dist<@g, [serial, serial]>>
// CHECK-NEXT:  %[[C:.*]] = fusion.set %[[E]] : tensor<8x16xf32, #fusion.dist<@g, [serial, serial]>> -> tensor<8x16xf32, #fusion.dist<@g, [serial, didx]>>
// CHECK-NEXT:  return %[[C]]
shard.grid @g(shape = 4)
func.func @reshard(%a: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %rows = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %all = shard.sharding @g split_axes = [[]] : !shard.sharding
  %columns = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %a0 = shard.shard %a to %rows : tensor<8x16xf32>
  %a1 = shard.shard %a0 to %all annotate_for_users : tensor<8x16xf32>
  %e = tensor.empty() : tensor<8x16xf32>
  %x = linalg.exp ins(%a1 : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %x0 = shard.shard %x to %all : tensor<8x16xf32>
  %x1 = shard.shard %x0 to %columns annotate_for_users : tensor<8x16xf32>
  return %x1 : tensor<8x16xf32>
}

// -----

// linalg.elementwise of a kind fusion has, with identity maps (the default,
// or written out).
// CHECK-LABEL: func.func @elementwise_kinds
// CHECK-SAME:  (%[[A:[^:]+]]: tensor<4x8xf32, #fusion.dist<@g, [didx, serial]>>, %[[B:[^:]+]]: tensor<4x8xf32>)
// CHECK-NEXT:  %[[E:.*]] = fusion.exp %[[A]] : tensor<4x8xf32, #fusion.dist<@g, [didx, serial]>> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[M:.*]] = fusion.max %[[E]], %[[B]] : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[N:.*]] = fusion.neg %[[M]]
// CHECK-NEXT:  return %[[N]]
shard.grid @g(shape = 2)
func.func @elementwise_kinds(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %a1 = shard.shard %a to %s : tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %x = linalg.elementwise kind=#linalg.elementwise_kind<exp> ins(%a1 : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = linalg.elementwise kind=#linalg.elementwise_kind<max_signed>
         indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>]
         ins(%x, %b : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %n = linalg.elementwise kind=#linalg.elementwise_kind<negf> ins(%m : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %n : tensor<4x8xf32>
}

// -----

// A matmul with B transposed ([N, K]) is a linear; batch_matmul a batched
// matmul. A matmul into a zero fill is the product (fill and constant go);
// into a value, the product plus that value.
// CHECK-LABEL: func.func @contractions
// CHECK-SAME:  (%[[X:[^:]+]]: tensor<8x32xf32, #fusion.dist<@g, [didx, serial]>>, %[[W:[^:]+]]: tensor<16x32xf32>, %[[A:[^:]+]]: tensor<2x8x32xf32>, %[[B:[^:]+]]: tensor<2x32x16xf32>, %[[ACC:[^:]+]]: tensor<8x16xf32>, %[[W2:[^:]+]]: tensor<32x16xf32>)
// CHECK-NEXT:  %[[Y:.*]] = fusion.linear %[[X]], %[[W]] : tensor<8x32xf32, #fusion.dist<@g, [didx, serial]>>, tensor<16x32xf32> -> tensor<8x16xf32>
// CHECK-NEXT:  %[[Z:.*]] = fusion.matmul %[[A]], %[[B]] : tensor<2x8x32xf32>, tensor<2x32x16xf32> -> tensor<2x8x16xf32>
// CHECK-NEXT:  %[[P:.*]] = fusion.matmul %[[X]], %[[W2]] : tensor<8x32xf32, #fusion.dist<@g, [didx, serial]>>, tensor<32x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT:  %[[S:.*]] = fusion.add %[[ACC]], %[[P]] : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT:  return %[[Y]], %[[Z]], %[[S]]
// CHECK-NOT:   arith.constant
shard.grid @g(shape = 2)
func.func @contractions(%x: tensor<8x32xf32>, %w: tensor<16x32xf32>, %a: tensor<2x8x32xf32>, %b: tensor<2x32x16xf32>,
                        %acc: tensor<8x16xf32>, %w2: tensor<32x16xf32>) -> (tensor<8x16xf32>, tensor<2x8x16xf32>, tensor<8x16xf32>) {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %x1 = shard.shard %x to %s : tensor<8x32xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
         ins(%x1, %w : tensor<8x32xf32>, tensor<16x32xf32>) outs(%z0 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %eb = tensor.empty() : tensor<2x8x16xf32>
  %z = linalg.batch_matmul ins(%a, %b : tensor<2x8x32xf32>, tensor<2x32x16xf32>) outs(%eb : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %p = linalg.matmul ins(%x1, %w2 : tensor<8x32xf32>, tensor<32x16xf32>) outs(%acc : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %y, %z, %p : tensor<8x16xf32>, tensor<2x8x16xf32>, tensor<8x16xf32>
}

// -----

// sharded_dims_offsets that state the even split are that split; halos of
// size 0 are none.
// CHECK-LABEL: func.func @even_offsets
// CHECK-SAME:  (%{{[^:]+}}: tensor<4x12xf32, #fusion.dist<@g, [serial, didx]>>, %{{[^:]+}}: tensor<6xf32, #fusion.dist<@g, [didx]>>)
shard.grid @g(shape = 3)
func.func @even_offsets(%a: tensor<4x12xf32>, %b: tensor<6xf32>) {
  %s = shard.sharding @g split_axes = [[], [0]] sharded_dims_offsets = [0, 4, 8, 12] : !shard.sharding
  %a1 = shard.shard %a to %s : tensor<4x12xf32>
  %h = shard.sharding @g split_axes = [[0]] halo_sizes = [0, 0] : !shard.sharding
  %b1 = shard.shard %b to %h : tensor<6xf32>
  return
}

// -----

// A 2-D grid is a mesh of rows: its axis 0 (the rows) splits as didy, its
// axis 1 (the columns) as didx; shard's linear process index is row-major,
// as the mesh's rows are.
// CHECK:       fusion.mesh @g = {{\[}}[0, 1, 2, 3], [4, 5, 6, 7]]
// CHECK-LABEL: func.func @grid_2d
// CHECK-SAME:  (%{{[^:]+}}: tensor<4x8xf32, #fusion.dist<@g, [didy, didx]>>, %{{[^:]+}}: tensor<4x8xf32, #fusion.dist<@g, [didx, didy]>>, %{{[^:]+}}: tensor<8xf32, #fusion.dist<@g, [serial]>>)
shard.grid @g(shape = 2x4)
func.func @grid_2d(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %c: tensor<8xf32>) {
  %rows_columns = shard.sharding @g split_axes = [[0], [1]] : !shard.sharding
  %columns_rows = shard.sharding @g split_axes = [[1], [0]] : !shard.sharding
  %replicated = shard.sharding @g split_axes = [[]] : !shard.sharding
  %a1 = shard.shard %a to %rows_columns : tensor<4x8xf32>
  %b1 = shard.shard %b to %columns_rows : tensor<4x8xf32>
  %c1 = shard.shard %c to %replicated : tensor<8xf32>
  return
}

// -----

// A fusion program has nothing to import: it is left as it is.
// CHECK:       fusion.mesh @tp = [0, 1]
// CHECK-LABEL: func.func @fusion
// CHECK-NEXT:  fusion.neg %{{.*}} : tensor<2x4xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<2x4xf32, #fusion.dist<@tp, [didx, serial]>>
fusion.mesh @tp = [0, 1]
func.func @fusion(%a: tensor<2x4xf32, #fusion.dist<@tp, [didx, serial]>>) -> tensor<2x4xf32, #fusion.dist<@tp, [didx, serial]>> {
  %n = fusion.neg %a : tensor<2x4xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<2x4xf32, #fusion.dist<@tp, [didx, serial]>>
  return %n : tensor<2x4xf32, #fusion.dist<@tp, [didx, serial]>>
}

// -----

// arith's conversions between signed integer and float tensors are casts.
// CHECK-LABEL: func.func @int_casts
// CHECK-SAME:  (%[[IDS:[^:]+]]: tensor<8x4xi32, #fusion.dist<@g, [didx, serial]>>)
// CHECK-NEXT:  %[[F:.*]] = fusion.cast %[[IDS]] : tensor<8x4xi32, #fusion.dist<@g, [didx, serial]>> -> tensor<8x4xf32>
// CHECK-NEXT:  %[[I:.*]] = fusion.cast %[[F]] : tensor<8x4xf32> -> tensor<8x4xi64>
// CHECK-NEXT:  %[[T:.*]] = fusion.cast %[[I]] : tensor<8x4xi64> -> tensor<8x4xi32>
// CHECK-NEXT:  %[[W:.*]] = fusion.cast %[[T]] : tensor<8x4xi32> -> tensor<8x4xi64>
// CHECK-NEXT:  return %[[F]], %[[W]]
shard.grid @g(shape = 4)
func.func @int_casts(%ids: tensor<8x4xi32>) -> (tensor<8x4xf32>, tensor<8x4xi64>) {
  %rows = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %ids1 = shard.shard %ids to %rows : tensor<8x4xi32>
  %f = arith.sitofp %ids1 : tensor<8x4xi32> to tensor<8x4xf32>
  %i = arith.fptosi %f : tensor<8x4xf32> to tensor<8x4xi64>
  %t = arith.trunci %i : tensor<8x4xi64> to tensor<8x4xi32>
  %w = arith.extsi %t : tensor<8x4xi32> to tensor<8x4xi64>
  return %f, %w : tensor<8x4xf32>, tensor<8x4xi64>
}
