// One chunk per error of convert-shard-to-fusion: shard forms fusion cannot
// say, and ops it does not import.
// RUN: hir-opt %s -split-input-file -verify-diagnostics --convert-shard-to-fusion

// expected-error @+1 {{grid '@g' has rank 4 (shape 2x2x2x2); only grids of rank 1 to 3 import, as fusion meshes have one to three axes}}
shard.grid @g(shape = 2x2x2x2)

// -----

shard.grid @g(shape = 2x4)
func.func @two_grid_axes(%a: tensor<16xf32>) {
  // expected-error @+1 {{tensor axis 0 is split along grid axes [0, 1]: fusion splits an axis along one grid axis}}
  %s = shard.sharding @g split_axes = [[0, 1]] : !shard.sharding
  %a1 = shard.shard %a to %s : tensor<16xf32>
  return
}

// -----

// expected-error @+1 {{grid '@g' has a dynamic shape (?); fusion meshes have a fixed number of devices}}
shard.grid @g(shape = ?)

// -----

// expected-error @+1 {{grid '@g' of shape 0 is not imported: a fusion mesh lists between 1 and 65536 devices}}
shard.grid @g(shape = 0)

// -----

// expected-error @+1 {{grid '@g' of shape 4294967296 is not imported: a fusion mesh lists between 1 and 65536 devices}}
shard.grid @g(shape = 4294967296)

// -----

shard.grid @g(shape = 4)
func.func @halo(%a: tensor<16xf32>) {
  // expected-error @+1 {{a sharding with halos is not imported: fusion's shards do not overlap}}
  %s = shard.sharding @g split_axes = [[0]] halo_sizes = [1, 2] : !shard.sharding
  %a1 = shard.shard %a to %s : tensor<16xf32>
  return
}

// -----

shard.grid @g(shape = 4)
func.func @uneven_offsets(%a: tensor<4x16xf32>) {
  %s = shard.sharding @g split_axes = [[], [0]] sharded_dims_offsets = [0, 2, 5, 9, 16] : !shard.sharding
  // expected-error @+1 {{sharded_dims_offsets [0, 2, 5, 9, 16] split the tensor unevenly: fusion's shards have one size (the even split is [0, 4, 8, 12, 16])}}
  %a1 = shard.shard %a to %s : tensor<4x16xf32>
  return
}

// -----

shard.grid @g(shape = 4)
func.func @indivisible(%a: tensor<10x8xf32>) {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  // expected-error @+1 {{tensor axis 0 of extent 10 does not split evenly over the 4 devices of grid '@g': fusion's shards have one size}}
  %a1 = shard.shard %a to %s : tensor<10x8xf32>
  return
}

// -----

shard.grid @g(shape = 4)
func.func @dynamic(%a: tensor<?x8xf32>) {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  // expected-error @+1 {{a tensor of dynamic shape (tensor<?x8xf32>) is not imported: fusion tensors have static shapes}}
  %a1 = shard.shard %a to %s : tensor<?x8xf32>
  return
}

// -----

shard.grid @g(shape = 4)
func.func @sharding_argument(%a: tensor<8xf32>, %s: !shard.sharding) {
  // expected-error @+1 {{the sharding is not a shard.sharding op of the function, which is all that imports}}
  %a1 = shard.shard %a to %s : tensor<8xf32>
  return
}

// -----

shard.grid @g(shape = 4)
func.func @two_shardings(%a: tensor<8x8xf32>) {
  %rows = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %columns = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %a1 = shard.shard %a to %rows : tensor<8x8xf32>
  // expected-error @+1 {{the value is annotated with two shardings, #fusion.dist<@g, [didx, serial]> and #fusion.dist<@g, [serial, didx]>; shard leaves this undefined}}
  %a2 = shard.shard %a to %columns : tensor<8x8xf32>
  return
}

// -----

shard.grid @g(shape = 4)
func.func @users_disagree(%a: tensor<8x8xf32>) {
  %rows = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %columns = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  // expected-error @+1 {{the value has no sharding of its own and its users want two, #fusion.dist<@g, [didx, serial]> and #fusion.dist<@g, [serial, didx]>: annotate it (shard.shard without annotate_for_users), or run sharding-propagation first}}
  %a1 = shard.shard %a to %rows annotate_for_users : tensor<8x8xf32>
  %a2 = shard.shard %a to %columns annotate_for_users : tensor<8x8xf32>
  return
}

// -----

shard.grid @g(shape = 4)
func.func @partitioned(%a: tensor<2x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{'shard.all_gather' is an op of a partitioned program: import the program of global tensors, before shard-partition}}
  %g = shard.all_gather %a on @g grid_axes = [0] gather_axis = 0 : tensor<2x8xf32> -> tensor<8x8xf32>
  return %g : tensor<8x8xf32>
}

// -----

shard.grid @g(shape = 4)
func.func @unknown(%a: tensor<8x4xf32>) -> tensor<4x4xf32> {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %a1 = shard.shard %a to %s : tensor<8x4xf32>
  // expected-error @+1 {{'tensor.extract_slice' is not imported: convert-shard-to-fusion takes shard annotations, linalg.matmul, linalg.batch_matmul, linalg.generic, linalg.transpose, linalg.broadcast, linalg.reduce, linalg.softmax, the elementwise linalg and arith ops with a fusion counterpart, tensor.empty and linalg.fill as destinations}}
  %t = tensor.extract_slice %a1[0, 0] [4, 4] [1, 1] : tensor<8x4xf32> to tensor<4x4xf32>
  return %t : tensor<4x4xf32>
}

// -----

func.func @reads_empty(%a: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  // expected-error @+1 {{operand #1 of 'linalg.add' is the value of a tensor.empty or linalg.fill, which import only as destinations: fusion has no op that makes a tensor}}
  %s = linalg.add ins(%a, %e : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  return %s : tensor<8xf32>
}

// -----

func.func @returns_fill() -> tensor<8xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%one : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  // expected-error @+1 {{operand #0 of 'func.return' is the value of a tensor.empty or linalg.fill, which import only as destinations: fusion has no op that makes a tensor}}
  return %f : tensor<8xf32>
}

// -----

func.func @transposed_a(%a: tensor<32x8xf32>, %b: tensor<32x16xf32>) -> tensor<8x16xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  // expected-error @+1 {{'linalg.matmul' with indexing maps [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] is not imported: only A[M, K] @ B[K, N] and A[M, K] @ B[N, K]^T}}
  %c = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
         ins(%a, %b : tensor<32x8xf32>, tensor<32x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %c : tensor<8x16xf32>
}

// -----

func.func @nonzero_init(%a: tensor<8x32xf32>, %b: tensor<32x16xf32>) -> tensor<8x16xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %f = linalg.fill ins(%one : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  // expected-error @+1 {{'linalg.matmul' accumulates into a linalg.fill of a value other than 0.0, which is not imported}}
  %c = linalg.matmul ins(%a, %b : tensor<8x32xf32>, tensor<32x16xf32>) outs(%f : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %c : tensor<8x16xf32>
}

// -----

func.func @mixed_precision(%a: tensor<8x32xbf16>, %b: tensor<32x16xbf16>) -> tensor<8x16xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  // expected-error @+1 {{'linalg.matmul' mixes element types: fusion's matmul reads and writes one element type}}
  %c = linalg.matmul ins(%a, %b : tensor<8x32xbf16>, tensor<32x16xbf16>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %c : tensor<8x16xf32>
}

// -----

func.func @tensor_constant() -> tensor<4xf32> {
  // expected-error @+1 {{a tensor constant is not imported: fusion has no op that makes a tensor}}
  %c = arith.constant dense<1.0> : tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %n = linalg.negf ins(%c : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %n : tensor<4xf32>
}

// -----

func.func @scalars(%a: tensor<4xf32>, %x: f32) -> tensor<4xf32> {
  // expected-error @+1 {{'arith.addf' on scalars or buffers is not imported: fusion ops take and make tensors}}
  %y = arith.addf %x, %x : f32
  %e = tensor.empty() : tensor<4xf32>
  %n = linalg.negf ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %n : tensor<4xf32>
}

// -----

func.func @buffers(%a: memref<8x32xf32>, %b: memref<32x16xf32>, %c: memref<8x16xf32>) {
  // expected-error @+1 {{'linalg.matmul' on buffers is not imported: fusion ops take and make tensors}}
  linalg.matmul ins(%a, %b : memref<8x32xf32>, memref<32x16xf32>) outs(%c : memref<8x16xf32>)
  return
}

// -----

shard.grid @g(shape = 2)
func.func @nested(%a: tensor<8xf32>, %n: index) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'scf.for' is not imported: convert-shard-to-fusion takes shard annotations, linalg.matmul, linalg.batch_matmul, linalg.generic, linalg.transpose, linalg.broadcast, linalg.reduce, linalg.softmax, the elementwise linalg and arith ops with a fusion counterpart, tensor.empty and linalg.fill as destinations}}
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %a) -> (tensor<8xf32>) {
    %e = tensor.empty() : tensor<8xf32>
    %y = linalg.exp ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
    scf.yield %y : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// -----

func.func @elementwise_log(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{'linalg.elementwise' of kind #linalg.elementwise_kind<log> is not imported: fusion has no such op}}
  %l = linalg.elementwise kind=#linalg.elementwise_kind<log> ins(%a : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %l : tensor<4x8xf32>
}

// -----

func.func @elementwise_broadcast(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{a 'linalg.elementwise' that transposes or broadcasts (indexing maps other than identities) is not imported}}
  %s = linalg.elementwise kind=#linalg.elementwise_kind<add>
         indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>]
         ins(%a, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}

// -----

// linalg.generic, linalg.reduce: forms that are not imported.
#id = affine_map<(d0, d1) -> (d0, d1)>
#sum = affine_map<(d0, d1) -> (d0 + d1, d1)>
func.func @not_a_projection(%x: tensor<24x16xf32>, %y: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{indexing map #0 of a 'linalg.generic' is affine_map<(d0, d1) -> (d0 + d1, d1)>: only maps whose results are loop indices, each once, are imported}}
  %r = linalg.generic {indexing_maps = [#sum, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<24x16xf32>) outs(%y : tensor<8x16xf32>) {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  } -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
func.func @transposed_output(%x: tensor<8x16xf32>, %y: tensor<16x8xf32>) -> tensor<16x8xf32> {
  // expected-error @+1 {{a 'linalg.generic' is imported when its output's indexing map lists its parallel loops in order (no transposed or broadcast output)}}
  %r = linalg.generic {indexing_maps = [#id, #tr], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%y : tensor<16x8xf32>) {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  } -> tensor<16x8xf32>
  return %r : tensor<16x8xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>
func.func @unknown_body_op(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %out: f32):
    // expected-error @+1 {{'math.log' in a 'linalg.generic' body is not imported: the body may hold the ops of convert-shard-to-fusion's ARITH and MATH tables, float constants and linalg.yield}}
    %0 = math.log %a : f32
    linalg.yield %0 : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d0)>
func.func @product_reduction(%x: tensor<8x16xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %r = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x16xf32>) outs(%y : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    // expected-error @+1 {{a 'linalg.generic' with reduction loops is imported when its body ends with arith.addf (a sum) or arith.maximumf/maxnumf (a maximum) of the output's argument and one value, yielded}}
    %0 = arith.mulf %a, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

func.func @reduce_into_a_fill_of_one(%x: tensor<8x16xf32>) -> tensor<8xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%one : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  // expected-error @+1 {{'linalg.reduce' reduces into a linalg.fill of 1, which is not the identity of its reduction: not imported}}
  %r = linalg.reduce ins(%x : tensor<8x16xf32>) outs(%f : tensor<8xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %0 = arith.addf %in, %init : f32
      linalg.yield %0 : f32
    }
  return %r : tensor<8xf32>
}

// -----

func.func @reduce_by_product(%x: tensor<8x16xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{a 'linalg.reduce' is imported when its body is one arith.addf (a sum) or arith.maximumf/maxnumf (a maximum) of its two arguments}}
  %r = linalg.reduce ins(%x : tensor<8x16xf32>) outs(%y : tensor<8xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %0 = arith.mulf %in, %init : f32
      linalg.yield %0 : f32
    }
  return %r : tensor<8xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>
func.func @integer_constant(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %out: f32):
    // expected-error @+1 {{a constant in a 'linalg.generic' body is imported when it is a float}}
    %c = arith.constant 2 : i32
    linalg.yield %a : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>
func.func @reads_an_empty_output(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  // expected-error @+1 {{operand #1 of 'linalg.generic' is the value of a tensor.empty or linalg.fill, which import only as destinations: fusion has no op that makes a tensor}}
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %0 = arith.addf %a, %out : f32
    linalg.yield %0 : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// Unsigned conversions have no fusion counterpart (fusion's integers are
// signed).
shard.grid @g(shape = 4)
func.func @unsigned(%ids: tensor<8xi32>) -> tensor<8xf32> {
  %rows = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %ids1 = shard.shard %ids to %rows : tensor<8xi32>
  // expected-error @+1 {{'arith.uitofp' is not imported}}
  %f = arith.uitofp %ids1 : tensor<8xi32> to tensor<8xf32>
  return %f : tensor<8xf32>
}

// -----

// A softmax of integers has no fusion counterpart (exp and div take floats).
func.func @softmax_integers(%x: tensor<8x16xi32>) -> tensor<8x16xi32> {
  %e = tensor.empty() : tensor<8x16xi32>
  // expected-error @+1 {{'linalg.softmax' of i32 is not imported: fusion's exp and div take floats}}
  %p = linalg.softmax dimension(1) ins(%x : tensor<8x16xi32>) outs(%e : tensor<8x16xi32>) -> tensor<8x16xi32>
  return %p : tensor<8x16xi32>
}
