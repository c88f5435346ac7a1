// Regressions of issue 39's small defects, each checked against the f64
// reference on the cpu backend and by the structure it lowers to.
//
// stream<k> with k equal to the axis's extent was taken for plain `stream`
// (one index per iteration) and refused on a matmul's N, the error itself
// recommending stream<k>: it is k chunks of one column.
// RUN: hir-run -n 2 --check %S/Inputs/stream_chunks_extent.mlir | FileCheck %s
// RUN: hir-opt --pass-pipeline='builtin.module(hir-lower{fuse=none})' %S/Inputs/stream_chunks_extent.mlir | FileCheck %s --check-prefix=EXTENT
// EXTENT: scf.for
// EXTENT: memref.subview %{{.+}}[0, %{{.+}}] [16, 1] [1, 1] : memref<16x4xf32> to memref<16x1xf32, strided<[4, 1], offset: ?>>
// EXTENT: host.matmul ins(%{{.+}}, %{{.+}} : memref<8x16xf32>, memref<16x1xf32, strided<[4, 1], offset: ?>>) outs(%{{.+}} : memref<8x1xf32, strided<[4, 1], offset: ?>>)
//
// Two stream<1> loops were not fused (one chunk is the whole buffer, so no
// slice proved the dependence within an iteration): a loop of one iteration
// runs both bodies in order, and fuses.
// RUN: hir-run -n 2 --check %S/Inputs/stream_one_chunk.mlir | FileCheck %s
// RUN: hir-opt --pass-pipeline='builtin.module(hir-lower{fuse=none})' %S/Inputs/stream_one_chunk.mlir | FileCheck %s --check-prefix=ONE
// ONE:     scf.for
// ONE:     scf.for
// ONE:       host.neg
// ONE-NOT:   scf.for
// ONE:       host.exp
// ONE:     }
// ONE-NEXT: host.set_current_stream
//
// reduce-scatter=reduce on a GEMM+RS whose output another op reads failed to
// verify ("operand #0 does not dominate this use": the loop's reduces wrote
// an output allocated after the loop); the allocation moves before it.
// RUN: hir-run -n 2 --reduce-scatter reduce --check %S/Inputs/reduce_pipeline_feeds.mlir | FileCheck %s
// RUN: hir-opt --pass-pipeline='builtin.module(hir-lower{reduce-scatter=reduce})' %S/Inputs/reduce_pipeline_feeds.mlir | FileCheck %s --check-prefix=FEEDS --implicit-check-not=comm.reduce_scatter
// FEEDS:      [[OUT:%.+]] = host.alloc : memref<1x4x4xf32>
// FEEDS:      [[VIEW:%.+]] = host.select [[OUT]][0][%{{.+}}]
// FEEDS:      scf.for
// FEEDS:      scf.for
// FEEDS:        comm.reduce %{{.+}} into [[VIEW]] sum root
// FEEDS:      host.neg ins([[OUT]]

// CHECK: ran @{{[a-z_]+}} on 2 ranks
// CHECK-NEXT: result0: relative error {{.*}}: ok
