// convert-shard-to-fusion imports linalg's structured ops beyond the matmuls
// and the named elementwise ops: linalg.transpose, linalg.broadcast,
// linalg.reduce, and linalg.generic as the tensor program its body describes.
// RUN: hir-opt %s -split-input-file --convert-shard-to-fusion | FileCheck %s
// What it makes is a fusion program the sharding passes accept.
// RUN: hir-opt %s -split-input-file --convert-shard-to-fusion --fusion-propagate-sharding --fusion-verify-sharding -o /dev/null

// The named ones map one to one; a reduction into a fill of its identity
// (0.0 for a sum, -inf for a maximum) is the reduction alone, into a value
// it is added; the fills and their constants go.
// CHECK-LABEL: func.func @named
// CHECK-SAME:  (%[[X:[^:]+]]: tensor<8x16xf32, #fusion.dist<@g, [didx, serial]>>, %[[V:[^:]+]]: tensor<16xf32>, %[[ACC:[^:]+]]: tensor<8xf32>)
// CHECK-NOT:   arith.constant
// CHECK-NEXT:  %[[T:.*]] = fusion.transpose %[[X]] [1, 0] : tensor<8x16xf32, #fusion.dist<@g, [didx, serial]>> -> tensor<16x8xf32>
// CHECK-NEXT:  %[[B:.*]] = fusion.broadcast %[[V]] [0] : tensor<16xf32> -> tensor<8x16xf32>
// CHECK-NEXT:  %[[SUM:.*]] = fusion.sum %[[X]] [1] : {{.*}} -> tensor<8xf32>
// CHECK-NEXT:  %[[MAX:.*]] = fusion.amax %[[X]] [1] : {{.*}} -> tensor<8xf32>
// CHECK-NEXT:  %[[PART:.*]] = fusion.sum %[[X]] [1] : {{.*}} -> tensor<8xf32>
// CHECK-NEXT:  %[[INTO:.*]] = fusion.add %[[ACC]], %[[PART]] : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
// CHECK-NEXT:  return %[[T]], %[[B]], %[[SUM]], %[[MAX]], %[[INTO]]
shard.grid @g(shape = 4)
func.func @named(%x: tensor<8x16xf32>, %v: tensor<16xf32>, %acc: tensor<8xf32>) -> (tensor<16x8xf32>, tensor<8x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %x1 = shard.shard %x to %s : tensor<8x16xf32>
  %et = tensor.empty() : tensor<16x8xf32>
  %t = linalg.transpose ins(%x1 : tensor<8x16xf32>) outs(%et : tensor<16x8xf32>) permutation = [1, 0]
  %eb = tensor.empty() : tensor<8x16xf32>
  %b = linalg.broadcast ins(%v : tensor<16xf32>) outs(%eb : tensor<8x16xf32>) dimensions = [0]
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.reduce ins(%x1 : tensor<8x16xf32>) outs(%z : tensor<8xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %0 = arith.addf %in, %init : f32
      linalg.yield %0 : f32
    }
  %m = linalg.fill ins(%ninf : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %max = linalg.reduce ins(%x1 : tensor<8x16xf32>) outs(%m : tensor<8xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %0 = arith.maximumf %in, %init : f32
      linalg.yield %0 : f32
    }
  %into = linalg.reduce ins(%x1 : tensor<8x16xf32>) outs(%acc : tensor<8xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %0 = arith.addf %init, %in : f32
      linalg.yield %0 : f32
    }
  return %t, %b, %sum, %max, %into : tensor<16x8xf32>, tensor<8x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// A generic's inputs are brought to its iteration space (a transpose puts
// a permuted input's axes in loop order, a broadcast adds the loops it does
// not index), each body op becomes its fusion op, a float constant a fill;
// the last op takes the result's type and distribution.
// CHECK-LABEL: func.func @bias_tanh
// CHECK-SAME:  (%[[X:[^:]+]]: tensor<64x32xf32, #fusion.dist<@g, [didx, serial]>>, %[[BIAS:[^:]+]]: tensor<32xf32>, %[[W:[^:]+]]: tensor<32x64xf32>)
// CHECK-NOT:   arith.constant
// CHECK-NEXT:  %[[BB:.*]] = fusion.broadcast %[[BIAS]] [0] : tensor<32xf32> -> tensor<64x32xf32>
// CHECK-NEXT:  %[[WT:.*]] = fusion.transpose %[[W]] [1, 0] : tensor<32x64xf32> -> tensor<64x32xf32>
// CHECK-NEXT:  %[[S:.*]] = fusion.add %[[X]], %[[BB]] : tensor<64x32xf32, #fusion.dist<@g, [didx, serial]>>, tensor<64x32xf32> -> tensor<64x32xf32>
// CHECK-NEXT:  %[[TH:.*]] = fusion.tanh %[[S]] : tensor<64x32xf32> -> tensor<64x32xf32>
// CHECK-NEXT:  %[[P:.*]] = fusion.mul %[[TH]], %[[WT]] : tensor<64x32xf32>, tensor<64x32xf32> -> tensor<64x32xf32>
// CHECK-NEXT:  %[[HALF:.*]] = fusion.fill 5.000000e-01 : tensor<64x32xf32>
// CHECK-NEXT:  %[[Y:.*]] = fusion.mul %[[P]], %[[HALF]] : tensor<64x32xf32>, tensor<64x32xf32> -> tensor<64x32xf32, #fusion.dist<@g, [didx, serial]>>
// CHECK-NEXT:  return %[[Y]]
shard.grid @g(shape = 4)
#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @bias_tanh(%x: tensor<64x32xf32>, %bias: tensor<32xf32>, %w: tensor<32x64xf32>) -> tensor<64x32xf32> {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %x1 = shard.shard %x to %s : tensor<64x32xf32>
  %e = tensor.empty() : tensor<64x32xf32>
  %half = arith.constant 0.5 : f32
  %y = linalg.generic {indexing_maps = [#id, #row, #tr, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x1, %bias, %w : tensor<64x32xf32>, tensor<32xf32>, tensor<32x64xf32>) outs(%e : tensor<64x32xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %out: f32):
    %0 = arith.addf %a, %b : f32
    %1 = math.tanh %0 : f32
    %2 = arith.mulf %1, %c : f32
    %3 = arith.mulf %2, %half : f32
    linalg.yield %3 : f32
  } -> tensor<64x32xf32>
  %y1 = shard.shard %y to %s : tensor<64x32xf32>
  return %y1 : tensor<64x32xf32>
}

// -----

// Reading the output's argument reads the init's value; a generic that
// yields an input as is (here transposed) is that input.
// CHECK-LABEL: func.func @reads_output
// CHECK-SAME:  (%[[X:[^:]+]]: tensor<8x16xf32>, %[[Y:[^:]+]]: tensor<8x16xf32>)
// CHECK-NEXT:  %[[D:.*]] = fusion.sub %[[Y]], %[[X]] : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT:  %[[E:.*]] = fusion.exp %[[D]] : tensor<8x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT:  return %[[E]]
// CHECK-LABEL: func.func @copy
// CHECK-NEXT:  %[[T:.*]] = fusion.transpose %{{.*}} [1, 0] : tensor<16x8xf32> -> tensor<8x16xf32, #fusion.dist<@g, [didx, serial]>>
// CHECK-NEXT:  return %[[T]]
// With a reduction loop the body ends with addf (or maximumf) of the output's
// argument: the expression before it is summed over that loop; a tensor.empty
// init adds nothing.
// CHECK-LABEL: func.func @mean_of_squares
// CHECK-SAME:  (%[[X:[^:]+]]: tensor<8x16xf32>)
// CHECK-NEXT:  %[[C:.*]] = fusion.fill 6.250000e-02 : tensor<8x16xf32>
// CHECK-NEXT:  %[[SQ:.*]] = fusion.mul %[[X]], %[[X]]
// CHECK-NEXT:  %[[SC:.*]] = fusion.mul %[[SQ]], %[[C]]
// CHECK-NEXT:  %[[M:.*]] = fusion.sum %[[SC]] [1] : tensor<8x16xf32> -> tensor<8xf32>
// CHECK-NEXT:  return %[[M]]
shard.grid @g(shape = 4)
#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
#col = affine_map<(d0, d1) -> (d0)>
func.func @reads_output(%x: tensor<8x16xf32>, %y: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%y : tensor<8x16xf32>) {
  ^bb0(%a: f32, %out: f32):
    %0 = arith.subf %out, %a : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  } -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}
func.func @copy(%x: tensor<16x8xf32>) -> tensor<8x16xf32> {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %e = tensor.empty() : tensor<8x16xf32>
  %r = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<16x8xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  } -> tensor<8x16xf32>
  %r1 = shard.shard %r to %s : tensor<8x16xf32>
  return %r1 : tensor<8x16xf32>
}
func.func @mean_of_squares(%x: tensor<8x16xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x16xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %c = arith.constant 0.0625 : f32
    %0 = arith.mulf %a, %a : f32
    %1 = arith.mulf %0, %c : f32
    %2 = arith.addf %1, %acc : f32
    linalg.yield %2 : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// A conversion in a generic body is a cast of the whole tensor: token ids
// (i32) scaled by weights, then truncated to i64.
// CHECK-LABEL: func.func @scaled_ids
// CHECK-SAME:  (%[[IDS:[^:]+]]: tensor<8x4xi32, #fusion.dist<@g, [didx, serial]>>, %[[W:[^:]+]]: tensor<8x4xf32>)
// CHECK-NEXT:  %[[F:.*]] = fusion.cast %[[IDS]] : tensor<8x4xi32, #fusion.dist<@g, [didx, serial]>> -> tensor<8x4xf32>
// CHECK-NEXT:  %[[M:.*]] = fusion.mul %[[F]], %[[W]] : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<8x4xf32>
// CHECK-NEXT:  %[[I:.*]] = fusion.cast %[[M]] : tensor<8x4xf32> -> tensor<8x4xi64>
// CHECK-NEXT:  return %[[I]]
#map = affine_map<(d0, d1) -> (d0, d1)>
shard.grid @g(shape = 4)
func.func @scaled_ids(%ids: tensor<8x4xi32>, %w: tensor<8x4xf32>) -> tensor<8x4xi64> {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %ids1 = shard.shard %ids to %s : tensor<8x4xi32>
  %e = tensor.empty() : tensor<8x4xi64>
  %r = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%ids1, %w : tensor<8x4xi32>, tensor<8x4xf32>) outs(%e : tensor<8x4xi64>) {
  ^bb0(%a: i32, %b: f32, %o: i64):
    %x = arith.sitofp %a : i32 to f32
    %y = arith.mulf %x, %b : f32
    %z = arith.fptosi %y : f32 to i64
    linalg.yield %z : i64
  } -> tensor<8x4xi64>
  return %r : tensor<8x4xi64>
}

// -----

// A softmax over an axis is its stable definition: amax, broadcast, sub,
// exp, sum, broadcast, div; the last takes the result's distribution.
// CHECK-LABEL: func.func @softmax
// CHECK-SAME:  (%[[X:[^:]+]]: tensor<8x16xf32, #fusion.dist<@g, [didx, serial]>>)
// CHECK-NEXT:  %[[M:.*]] = fusion.amax %[[X]] [1] : tensor<8x16xf32, #fusion.dist<@g, [didx, serial]>> -> tensor<8xf32>
// CHECK-NEXT:  %[[MB:.*]] = fusion.broadcast %[[M]] [1] : tensor<8xf32> -> tensor<8x16xf32>
// CHECK-NEXT:  %[[D:.*]] = fusion.sub %[[X]], %[[MB]] : {{.*}} -> tensor<8x16xf32>
// CHECK-NEXT:  %[[E:.*]] = fusion.exp %[[D]] : tensor<8x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT:  %[[S:.*]] = fusion.sum %[[E]] [1] : tensor<8x16xf32> -> tensor<8xf32>
// CHECK-NEXT:  %[[SB:.*]] = fusion.broadcast %[[S]] [1] : tensor<8xf32> -> tensor<8x16xf32>
// CHECK-NEXT:  %[[P:.*]] = fusion.div %[[E]], %[[SB]] : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32, #fusion.dist<@g, [didx, serial]>>
// CHECK-NEXT:  return %[[P]]
shard.grid @g(shape = 4)
func.func @softmax(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %x1 = shard.shard %x to %s : tensor<8x16xf32>
  %e = tensor.empty() : tensor<8x16xf32>
  %p = linalg.softmax dimension(1) ins(%x1 : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %p1 = shard.shard %p to %s : tensor<8x16xf32>
  return %p1 : tensor<8x16xf32>
}

// -----

// softmax(Q K^T) V is one fusion.attention of scale 1 (the scores are not
// scaled): batched with K^T a transpose, its heads split over the grid, and
// 2-D with K^T in the transposed-B maps of linalg.matmul. The transposes,
// the score matmuls, the softmaxes and their destinations go.
// CHECK-LABEL: func.func @attention
// CHECK-SAME:  (%[[Q:[^:]+]]: tensor<4x16x8xf32, #fusion.dist<@g, [didx, serial, serial]>>, %[[K:[^:]+]]: tensor<4x12x8xf32, #fusion.dist<@g, [didx, serial, serial]>>, %[[V:[^:]+]]: tensor<4x12x2xf32, #fusion.dist<@g, [didx, serial, serial]>>, %[[Q2:[^:]+]]: tensor<16x8xf32>, %[[K2:[^:]+]]: tensor<12x8xf32>, %[[V2:[^:]+]]: tensor<12x2xf32>)
// CHECK-NEXT:  %[[O:.*]] = fusion.attention %[[Q]], %[[K]], %[[V]] scale 1.000000e+00 : tensor<4x16x8xf32, #fusion.dist<@g, [didx, serial, serial]>>, tensor<4x12x8xf32, #fusion.dist<@g, [didx, serial, serial]>>, tensor<4x12x2xf32, #fusion.dist<@g, [didx, serial, serial]>> -> tensor<4x16x2xf32, #fusion.dist<@g, [didx, serial, serial]>>
// CHECK-NEXT:  %[[O2:.*]] = fusion.attention %[[Q2]], %[[K2]], %[[V2]] scale 1.000000e+00 : tensor<16x8xf32>, tensor<12x8xf32>, tensor<12x2xf32> -> tensor<16x2xf32>
// CHECK-NEXT:  return %[[O]], %[[O2]]
#qk = affine_map<(d0, d1, d2) -> (d0, d2)>
#kt = affine_map<(d0, d1, d2) -> (d1, d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
shard.grid @g(shape = 4)
func.func @attention(%q: tensor<4x16x8xf32>, %k: tensor<4x12x8xf32>, %v: tensor<4x12x2xf32>,
                     %q2: tensor<16x8xf32>, %k2: tensor<12x8xf32>, %v2: tensor<12x2xf32>)
    -> (tensor<4x16x2xf32>, tensor<16x2xf32>) {
  %heads = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %q1 = shard.shard %q to %heads : tensor<4x16x8xf32>
  %k1 = shard.shard %k to %heads : tensor<4x12x8xf32>
  %v1 = shard.shard %v to %heads : tensor<4x12x2xf32>
  %zero = arith.constant 0.0 : f32
  %et = tensor.empty() : tensor<4x8x12xf32>
  %kt = linalg.transpose ins(%k1 : tensor<4x12x8xf32>) outs(%et : tensor<4x8x12xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<4x16x12xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x16x12xf32>) -> tensor<4x16x12xf32>
  %s = linalg.batch_matmul ins(%q1, %kt : tensor<4x16x8xf32>, tensor<4x8x12xf32>) outs(%zs : tensor<4x16x12xf32>) -> tensor<4x16x12xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<4x16x12xf32>) outs(%es : tensor<4x16x12xf32>) -> tensor<4x16x12xf32>
  %eo = tensor.empty() : tensor<4x16x2xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x16x2xf32>) -> tensor<4x16x2xf32>
  %o = linalg.batch_matmul ins(%p, %v1 : tensor<4x16x12xf32>, tensor<4x12x2xf32>) outs(%zo : tensor<4x16x2xf32>) -> tensor<4x16x2xf32>
  %o1 = shard.shard %o to %heads : tensor<4x16x2xf32>
  %e2 = tensor.empty() : tensor<16x12xf32>
  %s2 = linalg.matmul indexing_maps = [#qk, #kt, #out] ins(%q2, %k2 : tensor<16x8xf32>, tensor<12x8xf32>) outs(%e2 : tensor<16x12xf32>) -> tensor<16x12xf32>
  %p2 = linalg.softmax dimension(1) ins(%s2 : tensor<16x12xf32>) outs(%e2 : tensor<16x12xf32>) -> tensor<16x12xf32>
  %eo2 = tensor.empty() : tensor<16x2xf32>
  %o2 = linalg.matmul ins(%p2, %v2 : tensor<16x12xf32>, tensor<12x2xf32>) outs(%eo2 : tensor<16x2xf32>) -> tensor<16x2xf32>
  return %o1, %o2 : tensor<4x16x2xf32>, tensor<16x2xf32>
}

// -----

// Not the pattern, imported op by op: scaled scores (a mul between the
// matmul and the softmax), scores used twice, and a query split along its
// sequence (Sq), which fusion.attention keeps whole.
// CHECK-LABEL: func.func @not_attention
// CHECK-NOT:   fusion.attention
// CHECK:       fusion.linear
// CHECK-NEXT:  fusion.mul
// CHECK:       fusion.exp
// CHECK:       fusion.linear %[[Q:[^,]+]],
// CHECK:       fusion.exp
// CHECK:       fusion.linear %{{.*}} : tensor<16x8xf32, #fusion.dist<@g, [didx, serial]>>
// CHECK:       fusion.exp
// CHECK:       return
#qk = affine_map<(d0, d1, d2) -> (d0, d2)>
#kt = affine_map<(d0, d1, d2) -> (d1, d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
shard.grid @g(shape = 4)
func.func @not_attention(%q: tensor<16x8xf32>, %k: tensor<12x8xf32>, %v: tensor<12x2xf32>,
                         %c: tensor<16x12xf32>, %qs: tensor<16x8xf32>)
    -> (tensor<16x2xf32>, tensor<16x2xf32>, tensor<16x12xf32>, tensor<16x2xf32>) {
  %e = tensor.empty() : tensor<16x12xf32>
  %eo = tensor.empty() : tensor<16x2xf32>
  %s = linalg.matmul indexing_maps = [#qk, #kt, #out] ins(%q, %k : tensor<16x8xf32>, tensor<12x8xf32>) outs(%e : tensor<16x12xf32>) -> tensor<16x12xf32>
  %scaled = linalg.mul ins(%s, %c : tensor<16x12xf32>, tensor<16x12xf32>) outs(%e : tensor<16x12xf32>) -> tensor<16x12xf32>
  %p = linalg.softmax dimension(1) ins(%scaled : tensor<16x12xf32>) outs(%e : tensor<16x12xf32>) -> tensor<16x12xf32>
  %o = linalg.matmul ins(%p, %v : tensor<16x12xf32>, tensor<12x2xf32>) outs(%eo : tensor<16x2xf32>) -> tensor<16x2xf32>
  %s2 = linalg.matmul indexing_maps = [#qk, #kt, #out] ins(%q, %k : tensor<16x8xf32>, tensor<12x8xf32>) outs(%e : tensor<16x12xf32>) -> tensor<16x12xf32>
  %p2 = linalg.softmax dimension(1) ins(%s2 : tensor<16x12xf32>) outs(%e : tensor<16x12xf32>) -> tensor<16x12xf32>
  %o2 = linalg.matmul ins(%p2, %v : tensor<16x12xf32>, tensor<12x2xf32>) outs(%eo : tensor<16x2xf32>) -> tensor<16x2xf32>
  %rows = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %qs1 = shard.shard %qs to %rows : tensor<16x8xf32>
  %s3 = linalg.matmul indexing_maps = [#qk, #kt, #out] ins(%qs1, %k : tensor<16x8xf32>, tensor<12x8xf32>) outs(%e : tensor<16x12xf32>) -> tensor<16x12xf32>
  %p3 = linalg.softmax dimension(1) ins(%s3 : tensor<16x12xf32>) outs(%e : tensor<16x12xf32>) -> tensor<16x12xf32>
  %o3 = linalg.matmul ins(%p3, %v : tensor<16x12xf32>, tensor<12x2xf32>) outs(%eo : tensor<16x2xf32>) -> tensor<16x2xf32>
  return %o, %o2, %s2, %o3 : tensor<16x2xf32>, tensor<16x2xf32>, tensor<16x12xf32>, tensor<16x2xf32>
}
