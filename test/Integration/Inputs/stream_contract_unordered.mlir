// test/Integration/stream-contraction.mlir's negative control: the host
// program hir-lower makes of Inputs/stream_contract_mlp_1.mlir with the
// host.sync_stream that orders the accumulating GEMMs removed. Iteration 1's
// accumulation on pool stream 1 then races with iteration 0's write on pool
// stream 0: the cpu backend's race detector fails the run.
module {
  func.func @mlp(%arg0: memref<48x16xf32>, %arg1: memref<1x16x16xf32>, %arg2: memref<1x16x16xf32>, %arg3: memref<48x16xf32>) {
    %0 = host.get_current_stream : !host.stream
    %1 = host.alloc : memref<48x16xf32>
    %2 = comm.allgather %arg0 into %1 team [0] : memref<48x16xf32> into memref<48x16xf32>
    comm.wait %2
    %3 = host.alloc : memref<1x48x16xf32>
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c1 = arith.constant 1 : index
    %c4_0 = arith.constant 4 : index
    %c4_1 = arith.constant 4 : index
    %c0_2 = arith.constant 0 : index
    scf.for %arg4 = %c0 to %c4 step %c1 {
      %6 = host.stream_from_pool %arg4 : !host.stream
      host.set_current_stream %6
      host.sync_stream %0
    }
    scf.for %arg4 = %c0 to %c4 step %c1 {
      %6 = host.stream_from_pool %arg4 : !host.stream
      host.set_current_stream %6
      %7 = host.alloc : memref<1x48x4xf32>
      %8 = arith.muli %arg4, %c4_0 : index
      %subview = memref.subview %arg1[0, 0, %8] [1, 16, 4] [1, 1, 1] : memref<1x16x16xf32> to memref<1x16x4xf32, strided<[256, 16, 1], offset: ?>>
      host.matmul activation gelu ins(%1, %subview : memref<48x16xf32>, memref<1x16x4xf32, strided<[256, 16, 1], offset: ?>>) outs(%7 : memref<1x48x4xf32>)
      %9 = arith.muli %arg4, %c4_1 : index
      %subview_4 = memref.subview %arg2[0, %9, 0] [1, 4, 16] [1, 1, 1] : memref<1x16x16xf32> to memref<1x4x16xf32, strided<[256, 16, 1], offset: ?>>
      %10 = arith.cmpi eq, %arg4, %c0_2 : index
      scf.if %10 {
        host.matmul ins(%7, %subview_4 : memref<1x48x4xf32>, memref<1x4x16xf32, strided<[256, 16, 1], offset: ?>>) outs(%3 : memref<1x48x16xf32>)
      } else {
        host.matmul ins(%7, %subview_4 : memref<1x48x4xf32>, memref<1x4x16xf32, strided<[256, 16, 1], offset: ?>>) outs(%3 : memref<1x48x16xf32>) {accumulate}
      }
      host.dealloc %7 : memref<1x48x4xf32>
      host.set_current_stream %0
      host.sync_stream %6
    }
    host.dealloc %1 : memref<48x16xf32>
    %c0_3 = arith.constant 0 : index
    %4 = host.select %3[0][%c0_3] : memref<1x48x16xf32> to memref<48x16xf32, strided<[16, 1], offset: ?>>
    %5 = comm.reduce_scatter %4 into %arg3 sum team [0] : memref<48x16xf32, strided<[16, 1], offset: ?>> into memref<48x16xf32>
    comm.wait %5
    host.dealloc %3 : memref<1x48x16xf32>
    return
  }
}

