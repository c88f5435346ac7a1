// RUN: hir-opt --convert-fusion-to-host --split-input-file %s | FileCheck %s

// Meshes become teams: no fusion op is left.
// CHECK-NOT: fusion.

// Pointwise and reduction on one device: destination-passing style into the
// out-param; the intermediate gets a host.alloc; an op with a stream axis
// runs in a host.stream_for over it, on slices.
// CHECK-LABEL: func.func @pointwise(
// CHECK-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<4x8xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<4x8xf32>, [[ARG2:%[a-zA-Z0-9_]+]]: memref<4xf32>) {
// CHECK-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// CHECK-NEXT: [[BUF:%[a-zA-Z0-9_]+]] = host.alloc : memref<4x8xf32>
// CHECK-NEXT: host.add ins([[ARG0]], [[ARG1]] : memref<4x8xf32>, memref<4x8xf32>) outs([[BUF]] : memref<4x8xf32>)
// CHECK-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// CHECK-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// CHECK-NEXT: host.stream_for [[C0]] to [[C4]] step [[C1]] from [[MAIN]] {
// CHECK-NEXT: ^bb0([[I:%[a-zA-Z0-9_]+]]: index, [[S:%[a-zA-Z0-9_]+]]: !host.stream):
// CHECK-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[BUF]][0]{{\[}}[[I]]{{\]}} : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
// CHECK-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[ARG2]][0]{{\[}}[[I]]{{\]}} : memref<4xf32> to memref<f32, strided<[], offset: ?>>
// CHECK-NEXT: host.sum [0] ins([[VIEW]] : memref<8xf32, strided<[1], offset: ?>>) outs([[VIEW_1]] : memref<f32, strided<[], offset: ?>>)
// CHECK-NEXT: }
// CHECK-NEXT: return
// CHECK-NEXT: }
fusion.mesh @dev = [0]
func.func @pointwise(%a: tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>,
                     %b: tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>)
    -> tensor<4xf32, #fusion.dist<@dev, [stream]>> {
  %c = fusion.add %a, %b : tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>, tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>> -> tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>
  %d = fusion.sum %c [1] : tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>> -> tensor<4xf32, #fusion.dist<@dev, [stream]>>
  return %d : tensor<4xf32, #fusion.dist<@dev, [stream]>>
}

// -----

// Returning an argument, and one value twice: copies into the out-params.
// CHECK-LABEL: func.func @returns(
// CHECK-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<8xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<8xf32>, [[ARG2:%[a-zA-Z0-9_]+]]: memref<8xf32>, [[ARG3:%[a-zA-Z0-9_]+]]: memref<8xf32>) {
// CHECK-NEXT: host.neg ins([[ARG0]] : memref<8xf32>) outs([[ARG2]] : memref<8xf32>)
// CHECK-NEXT: host.copy ins([[ARG0]] : memref<8xf32>) outs([[ARG1]] : memref<8xf32>)
// CHECK-NEXT: host.copy ins([[ARG2]] : memref<8xf32>) outs([[ARG3]] : memref<8xf32>)
// CHECK-NEXT: return
// CHECK-NEXT: }
fusion.mesh @dev = [0]
func.func @returns(%a: tensor<8xf32, #fusion.dist<@dev, [serial]>>)
    -> (tensor<8xf32, #fusion.dist<@dev, [serial]>>, tensor<8xf32, #fusion.dist<@dev, [serial]>>,
        tensor<8xf32, #fusion.dist<@dev, [serial]>>) {
  %n = fusion.neg %a : tensor<8xf32, #fusion.dist<@dev, [serial]>> -> tensor<8xf32, #fusion.dist<@dev, [serial]>>
  return %a, %n, %n : tensor<8xf32, #fusion.dist<@dev, [serial]>>, tensor<8xf32, #fusion.dist<@dev, [serial]>>, tensor<8xf32, #fusion.dist<@dev, [serial]>>
}

// -----

// didx -> not sharded: allgather along the didx axis, then a wait.
// CHECK-LABEL: func.func @allgather(
// CHECK-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<1x8xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<2x8xf32>) {
// CHECK-NEXT: [[REQ:%[a-zA-Z0-9_]+]] = comm.allgather [[ARG0]] into [[ARG1]] team [0, 1] : memref<1x8xf32> into memref<2x8xf32>
// CHECK-NEXT: comm.wait [[REQ]]
// CHECK-NEXT: return
// CHECK-NEXT: }
fusion.mesh @tp = [0, 1]
func.func @allgather(%a: tensor<2x8xf32, #fusion.dist<@tp, [didx, serial]>>)
    -> tensor<2x8xf32, #fusion.dist<@tp, [serial, serial]>> {
  %b = fusion.set %a : tensor<2x8xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<2x8xf32, #fusion.dist<@tp, [serial, serial]>>
  return %b : tensor<2x8xf32, #fusion.dist<@tp, [serial, serial]>>
}

// -----

// Not sharded -> didx: each rank copies its own slice, no communication. The
// team is not 0..D-1, so the rank's position in it is computed.
// CHECK-LABEL: func.func @local_slice(
// CHECK-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<4x2x8xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<4x1x8xf32>) {
// CHECK-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// CHECK-NEXT: [[RANK:%[a-zA-Z0-9_]+]] = host.rank : index
// CHECK-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: [[C3:%[a-zA-Z0-9_]+]] = arith.constant 3 : index
// CHECK-NEXT: [[V:%[a-zA-Z0-9_]+]] = arith.cmpi eq, [[RANK]], [[C3]] : index
// CHECK-NEXT: [[C0_1:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: [[V_1:%[a-zA-Z0-9_]+]] = arith.select [[V]], [[C0_1]], [[C0]] : index
// CHECK-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// CHECK-NEXT: [[V_2:%[a-zA-Z0-9_]+]] = arith.cmpi eq, [[RANK]], [[C1]] : index
// CHECK-NEXT: [[C1_1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// CHECK-NEXT: [[V_3:%[a-zA-Z0-9_]+]] = arith.select [[V_2]], [[C1_1]], [[V_1]] : index
// CHECK-NEXT: [[C0_2:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][1]{{\[}}[[V_3]]{{\]}} : memref<4x2x8xf32> to memref<4x8xf32, strided<[16, 1], offset: ?>>
// CHECK-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[ARG1]][1]{{\[}}[[C0_2]]{{\]}} : memref<4x1x8xf32> to memref<4x8xf32, strided<[8, 1], offset: ?>>
// CHECK-NEXT: [[C0_3:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// CHECK-NEXT: [[C1_2:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// CHECK-NEXT: host.stream_for [[C0_3]] to [[C4]] step [[C1_2]] from [[MAIN]] {
// CHECK-NEXT: ^bb0([[I:%[a-zA-Z0-9_]+]]: index, [[S:%[a-zA-Z0-9_]+]]: !host.stream):
// CHECK-NEXT: [[VIEW_2:%[a-zA-Z0-9_]+]] = host.select [[VIEW]][0]{{\[}}[[I]]{{\]}} : memref<4x8xf32, strided<[16, 1], offset: ?>> to memref<8xf32, strided<[1], offset: ?>>
// CHECK-NEXT: [[VIEW_3:%[a-zA-Z0-9_]+]] = host.select [[VIEW_1]][0]{{\[}}[[I]]{{\]}} : memref<4x8xf32, strided<[8, 1], offset: ?>> to memref<8xf32, strided<[1], offset: ?>>
// CHECK-NEXT: host.copy ins([[VIEW_2]] : memref<8xf32, strided<[1], offset: ?>>) outs([[VIEW_3]] : memref<8xf32, strided<[1], offset: ?>>)
// CHECK-NEXT: }
// CHECK-NEXT: return
// CHECK-NEXT: }
fusion.mesh @tp = [3, 1]
func.func @local_slice(%a: tensor<4x2x8xf32, #fusion.dist<@tp, [serial, serial, serial]>>)
    -> tensor<4x2x8xf32, #fusion.dist<@tp, [stream, didx, serial]>> {
  %b = fusion.set %a : tensor<4x2x8xf32, #fusion.dist<@tp, [serial, serial, serial]>> -> tensor<4x2x8xf32, #fusion.dist<@tp, [stream, didx, serial]>>
  return %b : tensor<4x2x8xf32, #fusion.dist<@tp, [stream, didx, serial]>>
}

// -----

// didx moves from axis 0 to axis 1: allgather into a temporary, then the local slice.
// CHECK-LABEL: func.func @move_didx(
// CHECK-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<1x2xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<2x1xf32>) {
// CHECK-NEXT: [[BUF:%[a-zA-Z0-9_]+]] = host.alloc : memref<2x2xf32>
// CHECK-NEXT: [[REQ:%[a-zA-Z0-9_]+]] = comm.allgather [[ARG0]] into [[BUF]] team [0, 1] : memref<1x2xf32> into memref<2x2xf32>
// CHECK-NEXT: comm.wait [[REQ]]
// CHECK-NEXT: [[RANK:%[a-zA-Z0-9_]+]] = host.rank : index
// CHECK-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[BUF]][1]{{\[}}[[RANK]]{{\]}} : memref<2x2xf32> to memref<2xf32, strided<[2], offset: ?>>
// CHECK-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[ARG1]][1]{{\[}}[[C0]]{{\]}} : memref<2x1xf32> to memref<2xf32, strided<[1], offset: ?>>
// CHECK-NEXT: host.copy ins([[VIEW]] : memref<2xf32, strided<[2], offset: ?>>) outs([[VIEW_1]] : memref<2xf32, strided<[1], offset: ?>>)
// CHECK-NEXT: return
// CHECK-NEXT: }
fusion.mesh @tp = [0, 1]
func.func @move_didx(%a: tensor<2x2xf32, #fusion.dist<@tp, [didx, serial]>>)
    -> tensor<2x2xf32, #fusion.dist<@tp, [serial, didx]>> {
  %b = fusion.set %a : tensor<2x2xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<2x2xf32, #fusion.dist<@tp, [serial, didx]>>
  return %b : tensor<2x2xf32, #fusion.dist<@tp, [serial, didx]>>
}

// -----

// Mesh change of unsharded data: a broadcast from the source mesh's device.
// CHECK-LABEL: func.func @mesh_change(
// CHECK-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<8xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<8xf32>) {
// CHECK-NEXT: [[REQ:%[a-zA-Z0-9_]+]] = comm.broadcast [[ARG0]] into [[ARG1]] root 0 team [0, 1, 2] : memref<8xf32> into memref<8xf32>
// CHECK-NEXT: comm.wait [[REQ]]
// CHECK-NEXT: return
// CHECK-NEXT: }
fusion.mesh @first = [0]
fusion.mesh @rest = [1, 2]
func.func @mesh_change(%a: tensor<8xf32, #fusion.dist<@first, [serial]>>)
    -> tensor<8xf32, #fusion.dist<@rest, [serial]>> {
  %b = fusion.set %a : tensor<8xf32, #fusion.dist<@first, [serial]>> -> tensor<8xf32, #fusion.dist<@rest, [serial]>>
  return %b : tensor<8xf32, #fusion.dist<@rest, [serial]>>
}

// -----

// A sum over the didx axis: the extent-1 local axis is viewed away, then an
// allreduce; amax into a didx-sharded result is a max reduce-scatter.
// CHECK-LABEL: func.func @reductions(
// CHECK-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<1x4x2xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<4x2xf32>, [[ARG2:%[a-zA-Z0-9_]+]]: memref<4x1xf32>) {
// CHECK-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// CHECK-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[C0]]{{\]}} : memref<1x4x2xf32> to memref<4x2xf32, strided<[2, 1], offset: ?>>
// CHECK-NEXT: [[C0_1:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// CHECK-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// CHECK-NEXT: host.stream_for [[C0_1]] to [[C4]] step [[C1]] from [[MAIN]] {
// CHECK-NEXT: ^bb0([[I:%[a-zA-Z0-9_]+]]: index, [[S:%[a-zA-Z0-9_]+]]: !host.stream):
// CHECK-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[VIEW]][0]{{\[}}[[I]]{{\]}} : memref<4x2xf32, strided<[2, 1], offset: ?>> to memref<2xf32, strided<[1], offset: ?>>
// CHECK-NEXT: [[VIEW_2:%[a-zA-Z0-9_]+]] = host.select [[ARG1]][0]{{\[}}[[I]]{{\]}} : memref<4x2xf32> to memref<2xf32, strided<[1], offset: ?>>
// CHECK-NEXT: [[REQ:%[a-zA-Z0-9_]+]] = comm.allreduce [[VIEW_1]] into [[VIEW_2]] sum team [0, 1] : memref<2xf32, strided<[1], offset: ?>> into memref<2xf32, strided<[1], offset: ?>>
// CHECK-NEXT: comm.wait [[REQ]]
// CHECK-NEXT: }
// CHECK-NEXT: [[C0_2:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: [[VIEW_3:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[C0_2]]{{\]}} : memref<1x4x2xf32> to memref<4x2xf32, strided<[2, 1], offset: ?>>
// CHECK-NEXT: [[REQ_1:%[a-zA-Z0-9_]+]] = comm.reduce_scatter [[VIEW_3]] into [[ARG2]] max axis 1 team [0, 1] : memref<4x2xf32, strided<[2, 1], offset: ?>> into memref<4x1xf32>
// CHECK-NEXT: comm.wait [[REQ_1]]
// CHECK-NEXT: return
// CHECK-NEXT: }
fusion.mesh @tp = [0, 1]
func.func @reductions(%a: tensor<2x4x2xf32, #fusion.dist<@tp, [didx, serial, serial]>>)
    -> (tensor<4x2xf32, #fusion.dist<@tp, [stream, serial]>>, tensor<4x2xf32, #fusion.dist<@tp, [serial, didx]>>) {
  %s = fusion.sum %a [0] : tensor<2x4x2xf32, #fusion.dist<@tp, [didx, serial, serial]>> -> tensor<4x2xf32, #fusion.dist<@tp, [stream, serial]>>
  %m = fusion.amax %a [0] : tensor<2x4x2xf32, #fusion.dist<@tp, [didx, serial, serial]>> -> tensor<4x2xf32, #fusion.dist<@tp, [serial, didx]>>
  return %s, %m : tensor<4x2xf32, #fusion.dist<@tp, [stream, serial]>>, tensor<4x2xf32, #fusion.dist<@tp, [serial, didx]>>
}

// -----

// A matmul whose contraction axis is sharded: the local product into a
// partial buffer, then an allreduce.
// CHECK-LABEL: func.func @contraction(
// CHECK-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<4x1xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<1x8xf32>, [[ARG2:%[a-zA-Z0-9_]+]]: memref<4x8xf32>) {
// CHECK-NEXT: [[BUF:%[a-zA-Z0-9_]+]] = host.alloc : memref<4x8xf32>
// CHECK-NEXT: host.matmul ins([[ARG0]], [[ARG1]] : memref<4x1xf32>, memref<1x8xf32>) outs([[BUF]] : memref<4x8xf32>)
// CHECK-NEXT: [[REQ:%[a-zA-Z0-9_]+]] = comm.allreduce [[BUF]] into [[ARG2]] sum team [0, 1] : memref<4x8xf32> into memref<4x8xf32>
// CHECK-NEXT: comm.wait [[REQ]]
// CHECK-NEXT: return
// CHECK-NEXT: }
fusion.mesh @tp = [0, 1]
func.func @contraction(%a: tensor<4x2xf32, #fusion.dist<@tp, [serial, didx]>>,
                       %b: tensor<2x8xf32, #fusion.dist<@tp, [didx, serial]>>)
    -> tensor<4x8xf32, #fusion.dist<@tp, [serial, serial]>> {
  %c = fusion.matmul %a, %b : tensor<4x2xf32, #fusion.dist<@tp, [serial, didx]>>, tensor<2x8xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<4x8xf32, #fusion.dist<@tp, [serial, serial]>>
  return %c : tensor<4x8xf32, #fusion.dist<@tp, [serial, serial]>>
}

// -----

// Attention with its heads split over the devices: each rank's host op on its
// local heads, with fusion's default scale resolved to 1 / sqrt(D) = 0.25;
// an explicit scale and the replicated mask go as they are.
// CHECK-LABEL: func.func @attention(
// CHECK-SAME: [[Q:%[a-zA-Z0-9_]+]]: memref<2x8x16xf32>, [[K:%[a-zA-Z0-9_]+]]: memref<2x12x16xf32>, [[V:%[a-zA-Z0-9_]+]]: memref<2x12x8xf32>, [[M:%[a-zA-Z0-9_]+]]: memref<8x12xf32>, [[O:%[a-zA-Z0-9_]+]]: memref<2x8x8xf32>, [[P:%[a-zA-Z0-9_]+]]: memref<2x8x8xf32>) {
// CHECK-NEXT: host.attention scale 2.500000e-01 causal ins([[Q]], [[K]], [[V]] : memref<2x8x16xf32>, memref<2x12x16xf32>, memref<2x12x8xf32>) outs([[O]] : memref<2x8x8xf32>)
// CHECK-NEXT: host.attention scale 1.000000e-01 ins([[Q]], [[K]], [[V]], [[M]] : memref<2x8x16xf32>, memref<2x12x16xf32>, memref<2x12x8xf32>, memref<8x12xf32>) outs([[P]] : memref<2x8x8xf32>)
// CHECK-NEXT: return
// CHECK-NEXT: }
fusion.mesh @tp = [0, 1]
func.func @attention(%q: tensor<4x8x16xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
                     %k: tensor<4x12x16xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
                     %v: tensor<4x12x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
                     %m: tensor<8x12xf32, #fusion.dist<@tp, [serial, serial]>>)
    -> (tensor<4x8x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
        tensor<4x8x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>) {
  %o = fusion.attention %q, %k, %v causal
      : tensor<4x8x16xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
        tensor<4x12x16xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
        tensor<4x12x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>
     -> tensor<4x8x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>
  %p = fusion.attention %q, %k, %v, %m scale 0.1
      : tensor<4x8x16xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
        tensor<4x12x16xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
        tensor<4x12x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
        tensor<8x12xf32, #fusion.dist<@tp, [serial, serial]>>
     -> tensor<4x8x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>
  return %o, %p : tensor<4x8x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
                  tensor<4x8x8xf32, #fusion.dist<@tp, [didx, serial, serial]>>
}

// -----

// Functions without tensors are left alone.
// CHECK-LABEL: func.func @untouched(
// CHECK-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<8xf32>) {
// CHECK-NEXT: return
// CHECK-NEXT: }
func.func @untouched(%a: memref<8xf32>) {
  return
}
// -----

// Split didx axes (extent a multiple of the mesh size): each device holds a
// contiguous slice of E/D. Gathering the slices is an allgather of E/D to E.
// CHECK-LABEL: func.func @split_allgather(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: memref<2x8xf32>, [[Y:%[a-zA-Z0-9_]+]]: memref<8x8xf32>) {
// CHECK-NEXT: [[R:%.+]] = comm.allgather [[X]] into [[Y]] team [0, 1, 2, 3] : memref<2x8xf32> into memref<8x8xf32>
// CHECK-NEXT: comm.wait [[R]]
fusion.mesh @tp = [0, 1, 2, 3]
func.func @split_allgather(%x: tensor<8x8xf32, #fusion.dist<@tp, [didx, serial]>>)
    -> tensor<8x8xf32, #fusion.dist<@tp, [serial, serial]>> {
  %y = fusion.set %x : tensor<8x8xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<8x8xf32, #fusion.dist<@tp, [serial, serial]>>
  return %y : tensor<8x8xf32, #fusion.dist<@tp, [serial, serial]>>
}

// -----

// Sharding a replicated value: each rank copies its part of the axis, a
// memref.subview at its team position times the part's extent.
// CHECK-LABEL: func.func @split_local_slice(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: memref<8x8xf32>, [[Y:%[a-zA-Z0-9_]+]]: memref<8x4xf32>) {
// CHECK-NEXT: [[RANK:%.+]] = host.rank : index
// CHECK-NEXT: [[FOUR:%.+]] = arith.constant 4 : index
// CHECK-NEXT: [[OFFSET:%.+]] = arith.muli [[RANK]], [[FOUR]] : index
// CHECK-NEXT: [[PART:%.+]] = memref.subview [[X]][0, [[OFFSET]]] [8, 4] [1, 1] : memref<8x8xf32> to memref<8x4xf32, strided<[8, 1], offset: ?>>
// CHECK-NEXT: host.copy ins([[PART]] : memref<8x4xf32, strided<[8, 1], offset: ?>>) outs([[Y]] : memref<8x4xf32>)
fusion.mesh @pair = [0, 1]
func.func @split_local_slice(%x: tensor<8x8xf32, #fusion.dist<@pair, [serial, serial]>>)
    -> tensor<8x8xf32, #fusion.dist<@pair, [serial, didx]>> {
  %y = fusion.set %x : tensor<8x8xf32, #fusion.dist<@pair, [serial, serial]>> -> tensor<8x8xf32, #fusion.dist<@pair, [serial, didx]>>
  return %y : tensor<8x8xf32, #fusion.dist<@pair, [serial, didx]>>
}

// -----

// Reducing a split axis: the local sum of the device's slice, then the
// allreduce of the partial results.
// CHECK-LABEL: func.func @split_sum(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: memref<2x8xf32>, [[Y:%[a-zA-Z0-9_]+]]: memref<8xf32>) {
// CHECK-NEXT: [[P:%.+]] = host.alloc : memref<8xf32>
// CHECK-NEXT: host.sum [0] ins([[X]] : memref<2x8xf32>) outs([[P]] : memref<8xf32>)
// CHECK-NEXT: [[R:%.+]] = comm.allreduce [[P]] into [[Y]] sum team [0, 1, 2, 3] : memref<8xf32> into memref<8xf32>
// CHECK-NEXT: comm.wait [[R]]
fusion.mesh @tp = [0, 1, 2, 3]
func.func @split_sum(%x: tensor<8x8xf32, #fusion.dist<@tp, [didx, serial]>>)
    -> tensor<8xf32, #fusion.dist<@tp, [serial]>> {
  %y = fusion.sum %x [0] : tensor<8x8xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<8xf32, #fusion.dist<@tp, [serial]>>
  return %y : tensor<8xf32, #fusion.dist<@tp, [serial]>>
}

// -----

// Megatron's tensor-parallel MLP on natural shapes: the column-parallel
// linear (weight and bias split along N) is local; the row-parallel one
// (input and weight split along K) is each rank's partial product, then a
// reduce-scatter along the sequence-parallel output rows.
// CHECK-LABEL: func.func @column_row_parallel(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: memref<16x8xf32>, [[W1:%[a-zA-Z0-9_]+]]: memref<8x8xf32>, [[B1:%[a-zA-Z0-9_]+]]: memref<8xf32>, [[W2:%[a-zA-Z0-9_]+]]: memref<8x8xf32>, [[Y:%[a-zA-Z0-9_]+]]: memref<4x8xf32>) {
// CHECK-NEXT: [[H:%.+]] = host.alloc : memref<16x8xf32>
// CHECK-NEXT: host.linear ins([[X]], [[W1]], [[B1]] : memref<16x8xf32>, memref<8x8xf32>, memref<8xf32>) outs([[H]] : memref<16x8xf32>)
// CHECK-NEXT: [[A:%.+]] = host.alloc : memref<16x8xf32>
// CHECK-NEXT: host.neg ins([[H]] : memref<16x8xf32>) outs([[A]] : memref<16x8xf32>)
// CHECK-NEXT: [[P:%.+]] = host.alloc : memref<16x8xf32>
// CHECK-NEXT: host.linear ins([[A]], [[W2]] : memref<16x8xf32>, memref<8x8xf32>) outs([[P]] : memref<16x8xf32>)
// CHECK-NEXT: [[R:%.+]] = comm.reduce_scatter [[P]] into [[Y]] sum team [0, 1, 2, 3] : memref<16x8xf32> into memref<4x8xf32>
fusion.mesh @tp = [0, 1, 2, 3]
func.func @column_row_parallel(%x: tensor<16x8xf32, #fusion.dist<@tp, [serial, serial]>>,
                               %w1: tensor<32x8xf32, #fusion.dist<@tp, [didx, serial]>>,
                               %b1: tensor<32xf32, #fusion.dist<@tp, [didx]>>,
                               %w2: tensor<8x32xf32, #fusion.dist<@tp, [serial, didx]>>)
    -> tensor<16x8xf32, #fusion.dist<@tp, [didx, serial]>> {
  %h = fusion.linear %x, %w1, %b1 : tensor<16x8xf32, #fusion.dist<@tp, [serial, serial]>>, tensor<32x8xf32, #fusion.dist<@tp, [didx, serial]>>, tensor<32xf32, #fusion.dist<@tp, [didx]>>
                                  -> tensor<16x32xf32, #fusion.dist<@tp, [serial, didx]>>
  %a = fusion.neg %h : tensor<16x32xf32, #fusion.dist<@tp, [serial, didx]>> -> tensor<16x32xf32, #fusion.dist<@tp, [serial, didx]>>
  %y = fusion.linear %a, %w2 : tensor<16x32xf32, #fusion.dist<@tp, [serial, didx]>>, tensor<8x32xf32, #fusion.dist<@tp, [serial, didx]>>
                             -> tensor<16x8xf32, #fusion.dist<@tp, [didx, serial]>>
  return %y : tensor<16x8xf32, #fusion.dist<@tp, [didx, serial]>>
}

// -----

// On a 2-D mesh, a didy collective runs within each column, a didx one
// within each row; a set gathers one mesh axis after the other.
// CHECK-LABEL: func.func @mesh_2d(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: memref<1x2x6xf32>, [[Y:%[a-zA-Z0-9_]+]]: memref<2x8x6xf32>, [[Z:%[a-zA-Z0-9_]+]]: memref<2x6xf32>) {
// CHECK-NEXT: [[G:%.+]] = host.alloc : memref<2x2x6xf32>
// CHECK-NEXT: [[R0:%.+]] = comm.allgather [[X]] into [[G]] team {{\[}}[0, 4], [1, 5], [2, 6], [3, 7]] : memref<1x2x6xf32> into memref<2x2x6xf32>
// CHECK-NEXT: comm.wait [[R0]]
// CHECK-NEXT: [[R1:%.+]] = comm.allgather [[G]] into [[Y]] axis 1 team {{\[}}[0, 1, 2, 3], [4, 5, 6, 7]] : memref<2x2x6xf32> into memref<2x8x6xf32>
// CHECK: comm.allreduce %{{.*}} into [[Z]] sum team {{\[}}[0, 4], [1, 5], [2, 6], [3, 7]]
fusion.mesh @m = [[0, 1, 2, 3], [4, 5, 6, 7]]
func.func @mesh_2d(%x: tensor<2x8x6xf32, #fusion.dist<@m, [didy, didx, serial]>>)
    -> (tensor<2x8x6xf32, #fusion.dist<@m, [serial, serial, serial]>>,
        tensor<8x6xf32, #fusion.dist<@m, [didx, serial]>>) {
  %y = fusion.set %x : tensor<2x8x6xf32, #fusion.dist<@m, [didy, didx, serial]>> -> tensor<2x8x6xf32, #fusion.dist<@m, [serial, serial, serial]>>
  %s = fusion.sum %x [0] : tensor<2x8x6xf32, #fusion.dist<@m, [didy, didx, serial]>> -> tensor<8x6xf32, #fusion.dist<@m, [didx, serial]>>
  return %y, %s : tensor<2x8x6xf32, #fusion.dist<@m, [serial, serial, serial]>>, tensor<8x6xf32, #fusion.dist<@m, [didx, serial]>>
}

// -----

// Transpose: the distribution moves with the axes, so each rank transposes
// its own part (rows of x are columns of t). Fill and iota write the rank's
// part, whole, unmarked even where the result is stream-parallel; an iota
// along a split axis starts at rank * (local extent), one along a whole
// axis at 0.
// CHECK-LABEL: func.func @layout_and_init(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: memref<2x8xf32>, [[T:%[a-zA-Z0-9_]+]]: memref<8x2xf32>, [[Z:%[a-zA-Z0-9_]+]]: memref<4x8xbf16>, [[I:%[a-zA-Z0-9_]+]]: memref<2x8xf32>, [[J:%[a-zA-Z0-9_]+]]: memref<2x8xf32>) {
// CHECK-NEXT: host.transpose [1, 0] ins([[X]] : memref<2x8xf32>) outs([[T]] : memref<8x2xf32>)
// CHECK-NEXT: host.fill 0.000000e+00 outs([[Z]] : memref<4x8xbf16>)
// CHECK-NEXT: [[RANK:%.+]] = host.rank
// CHECK-NEXT: [[TWO:%.+]] = arith.constant 2 : index
// CHECK-NEXT: [[OFFSET:%.+]] = arith.muli [[RANK]], [[TWO]] : index
// CHECK-NEXT: host.iota 0, [[OFFSET]] outs([[I]] : memref<2x8xf32>)
// CHECK-NEXT: [[ZERO:%.+]] = arith.constant 0 : index
// CHECK-NEXT: host.iota 1, [[ZERO]] outs([[J]] : memref<2x8xf32>)
// CHECK-NEXT: return
fusion.mesh @tp = [0, 1, 2, 3]
func.func @layout_and_init(%x: tensor<8x8xf32, #fusion.dist<@tp, [didx, serial]>>)
    -> (tensor<8x8xf32, #fusion.dist<@tp, [serial, didx]>>, tensor<4x8xbf16, #fusion.dist<@tp, [stream, serial]>>,
        tensor<8x8xf32, #fusion.dist<@tp, [didx, serial]>>, tensor<8x8xf32, #fusion.dist<@tp, [didx, serial]>>) {
  %t = fusion.transpose %x [1, 0] : tensor<8x8xf32, #fusion.dist<@tp, [didx, serial]>>
                                 -> tensor<8x8xf32, #fusion.dist<@tp, [serial, didx]>>
  %z = fusion.fill 0.0 : tensor<4x8xbf16, #fusion.dist<@tp, [stream, serial]>>
  %i = fusion.iota 0 : tensor<8x8xf32, #fusion.dist<@tp, [didx, serial]>>
  %j = fusion.iota 1 : tensor<8x8xf32, #fusion.dist<@tp, [didx, serial]>>
  return %t, %z, %i, %j : tensor<8x8xf32, #fusion.dist<@tp, [serial, didx]>>,
                          tensor<4x8xbf16, #fusion.dist<@tp, [stream, serial]>>,
                          tensor<8x8xf32, #fusion.dist<@tp, [didx, serial]>>,
                          tensor<8x8xf32, #fusion.dist<@tp, [didx, serial]>>
}

// -----

// An iota along a didy axis of a 2-D mesh: the offset is the rank's row of
// the mesh (its position in its column's team) times the local extent.
// CHECK-LABEL: func.func @iota_didy(
// CHECK-COUNT-4: arith.select
// CHECK-NEXT: [[ROWS:%.+]] = arith.constant 3 : index
// CHECK-NEXT: [[OFFSET:%.+]] = arith.muli %{{.+}}, [[ROWS]] : index
// CHECK-NEXT: host.iota 0, [[OFFSET]] outs(%{{.+}} : memref<3x4xf16>)
fusion.mesh @grid = [[0, 1], [2, 3]]
func.func @iota_didy() -> tensor<6x8xf16, #fusion.dist<@grid, [didy, didx]>> {
  %i = fusion.iota 0 : tensor<6x8xf16, #fusion.dist<@grid, [didy, didx]>>
  return %i : tensor<6x8xf16, #fusion.dist<@grid, [didy, didx]>>
}

// -----

// A reshape that keeps the didx axis and merges serial ones: local, on each
// rank's part.
// CHECK-LABEL: func.func @reshape(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: memref<2x4x4xf32>, [[Y:%[a-zA-Z0-9_]+]]: memref<2x16xf32>) {
// CHECK-NEXT: host.reshape ins([[X]] : memref<2x4x4xf32>) outs([[Y]] : memref<2x16xf32>)
// CHECK-NEXT: return
fusion.mesh @tp = [0, 1, 2, 3]
func.func @reshape(%x: tensor<8x4x4xf32, #fusion.dist<@tp, [didx, serial, serial]>>)
    -> tensor<8x16xf32, #fusion.dist<@tp, [didx, serial]>> {
  %y = fusion.reshape %x : tensor<8x4x4xf32, #fusion.dist<@tp, [didx, serial, serial]>>
                        -> tensor<8x16xf32, #fusion.dist<@tp, [didx, serial]>>
  return %y : tensor<8x16xf32, #fusion.dist<@tp, [didx, serial]>>
}

// -----

// Outer splits: [S, H] split on H as [S, heads, dh] split on the heads, and
// a didy split over a 2-D mesh's columns merged back; each rank reshapes its
// own contiguous shard, local shapes on both sides, with no collective.
// CHECK-LABEL: func.func @outer_split(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: memref<8x4xf32>, [[Y:%[a-zA-Z0-9_]+]]: memref<8x1x4xf32>) {
// CHECK-NEXT: host.reshape ins([[X]] : memref<8x4xf32>) outs([[Y]] : memref<8x1x4xf32>)
// CHECK-NEXT: return
fusion.mesh @tp = [0, 1, 2, 3]
func.func @outer_split(%x: tensor<8x16xf32, #fusion.dist<@tp, [serial, didx]>>)
    -> tensor<8x4x4xf32, #fusion.dist<@tp, [serial, didx, serial]>> {
  %y = fusion.reshape %x : tensor<8x16xf32, #fusion.dist<@tp, [serial, didx]>>
                        -> tensor<8x4x4xf32, #fusion.dist<@tp, [serial, didx, serial]>>
  return %y : tensor<8x4x4xf32, #fusion.dist<@tp, [serial, didx, serial]>>
}
// CHECK-LABEL: func.func @outer_merge(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: memref<2x2x8xf32>, [[Y:%[a-zA-Z0-9_]+]]: memref<2x16xf32>) {
// CHECK-NEXT: host.reshape ins([[X]] : memref<2x2x8xf32>) outs([[Y]] : memref<2x16xf32>)
// CHECK-NEXT: return
fusion.mesh @grid = [[0, 1], [2, 3]]
func.func @outer_merge(%x: tensor<2x4x8xf32, #fusion.dist<@grid, [serial, didy, serial]>>)
    -> tensor<2x32xf32, #fusion.dist<@grid, [serial, didy]>> {
  %y = fusion.reshape %x : tensor<2x4x8xf32, #fusion.dist<@grid, [serial, didy, serial]>>
                        -> tensor<2x32xf32, #fusion.dist<@grid, [serial, didy]>>
  return %y : tensor<2x32xf32, #fusion.dist<@grid, [serial, didy]>>
}

// -----

// A slice: a copy of its box (a static memref.subview) of the rank's part;
// the didx axis it takes whole is the rank's own (offset 0, local extent),
// the serial axis it cuts the same box on every rank.
// CHECK-LABEL: func.func @slice(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: memref<8x1x12xf32>, [[Y:%[a-zA-Z0-9_]+]]: memref<8x1x4xf32>) {
// CHECK-NEXT: [[BOX:%.+]] = memref.subview [[X]][0, 0, 4] [8, 1, 4] [1, 1, 1] : memref<8x1x12xf32> to memref<8x1x4xf32, strided<[12, 12, 1], offset: 4>>
// CHECK-NEXT: host.copy ins([[BOX]] : memref<8x1x4xf32, strided<[12, 12, 1], offset: 4>>) outs([[Y]] : memref<8x1x4xf32>)
// CHECK-NEXT: return
fusion.mesh @tp = [0, 1, 2, 3]
func.func @slice(%x: tensor<8x4x12xf32, #fusion.dist<@tp, [serial, didx, serial]>>)
    -> tensor<8x4x4xf32, #fusion.dist<@tp, [serial, didx, serial]>> {
  %y = fusion.slice %x offsets [0, 0, 4] strides [1, 1, 1]
      : tensor<8x4x12xf32, #fusion.dist<@tp, [serial, didx, serial]>>
     -> tensor<8x4x4xf32, #fusion.dist<@tp, [serial, didx, serial]>>
  return %y : tensor<8x4x4xf32, #fusion.dist<@tp, [serial, didx, serial]>>
}
