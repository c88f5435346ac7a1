// Streaming through a contraction (issue 39 item 2): FC1 with its output
// features streamed, gelu, and FC2 contracting those features in the same
// stream loop, each iteration adding its chunk's partial product to FC2's
// result, checked against the f64 reference (which evaluates the program
// op by op from the ops' definitions, the stream axes ignored) on the cpu
// backend: the tensor-parallel MLP (Inputs/stream_contract_mlp_D.mlir: x's
// rows gathered, the partial sums reduce-scattered after the loop) at
// D = 1, 2, 3, 4, 8, over 4 pool streams, 3 (iterations 0 and 3 on one
// stream) and 1, with p2p=nccl (nothing of the loop is a ring: the
// collectives stay whole) and without fusion; and on one device a linear
// with its bias (added once) and a matmul contracting a plain stream axis.
// RUN: hir-run -n 1 --check %S/Inputs/stream_contract_1.mlir | FileCheck %s --check-prefixes=CHECK,TWO
// RUN: hir-run -n 1 --check %S/Inputs/stream_contract_mlp_1.mlir | FileCheck %s
// RUN: hir-run -n 2 --check %S/Inputs/stream_contract_mlp_2.mlir | FileCheck %s
// RUN: hir-run -n 3 --check %S/Inputs/stream_contract_mlp_3.mlir | FileCheck %s
// RUN: hir-run -n 4 --check %S/Inputs/stream_contract_mlp_4.mlir | FileCheck %s
// RUN: hir-run -n 8 --check %S/Inputs/stream_contract_mlp_8.mlir | FileCheck %s
// RUN: hir-run -n 4 --num-streams 3 --check %S/Inputs/stream_contract_mlp_4.mlir | FileCheck %s
// RUN: hir-run -n 2 --num-streams 1 --check %S/Inputs/stream_contract_mlp_2.mlir | FileCheck %s
// RUN: hir-run -n 4 --p2p nccl --check %S/Inputs/stream_contract_mlp_4.mlir | FileCheck %s
// RUN: hir-run -n 3 --fuse none --check %S/Inputs/stream_contract_mlp_3.mlir | FileCheck %s
// With --poison every allocation starts as NaN: iteration 0 writes the
// result and each chunk before anything reads them.
// RUN: hir-run -n 1 --poison --check %S/Inputs/stream_contract_1.mlir | FileCheck %s --check-prefixes=CHECK,TWO
// RUN: hir-run -n 2 --poison --check %S/Inputs/stream_contract_mlp_2.mlir | FileCheck %s
// CHECK: ran @mlp on
// CHECK-NEXT: result0: relative error {{.*}}: ok
// TWO-NEXT: result1: relative error {{.*}}: ok
//
// The accumulations are ordered by the sync on the caller's stream, which
// has joined the earlier iterations: without it (the same host program, the
// sync removed) the race detector fails the run.
// RUN: not hir-run -n 1 %S/Inputs/stream_contract_unordered.mlir 2>&1 | FileCheck %s --check-prefix=RACE
// RACE: data race: hir_rt_matmul_acc_f32 on stream {{[0-9]+}} writes
//
// The one loop hir-lower makes of the MLP: the fork; then, per iteration,
// chunk i of FC1 with gelu as its epilogue into the iteration's own buffer
// (one chunk, host-privatize-buffers), the sync on the caller's stream, FC2
// written by iteration 0 and accumulated by the others, the chunk freed in
// its iteration, and the join; the reduce-scatter after the loop
// (host-auto-stream leaves a program with stream loops as it is).
// RUN: hir-opt --hir-lower %S/Inputs/stream_contract_mlp_4.mlir | FileCheck %s --check-prefix=LOOP
// LOOP:      [[MAIN:%.+]] = host.get_current_stream
// LOOP:      comm.allgather
// LOOP-NEXT: comm.wait
// LOOP-NEXT: [[PARTIAL:%.+]] = host.alloc : memref<1x48x16xf32>
// LOOP:      scf.for
// LOOP:        host.sync_stream [[MAIN]]
// LOOP:      scf.for [[I:%.+]] = %{{.+}} to %{{.+}} step
// LOOP-NEXT:   [[S:%.+]] = host.stream_from_pool [[I]]
// LOOP-NEXT:   host.set_current_stream [[S]]
// LOOP-NEXT:   [[CHUNK:%.+]] = host.alloc : memref<1x48x4xf32>
// LOOP:        host.matmul activation gelu ins({{.*}}) outs([[CHUNK]] : memref<1x48x4xf32>)
// LOOP:        [[FIRST:%.+]] = arith.cmpi eq, [[I]], %{{.+}} : index
// LOOP-NEXT:   host.sync_stream [[MAIN]]
// LOOP-NEXT:   scf.if [[FIRST]] {
// LOOP-NEXT:     host.matmul ins([[CHUNK]], %{{.+}} : memref<1x48x4xf32>, memref<1x4x16xf32, strided<[256, 16, 1], offset: ?>>) outs([[PARTIAL]] : memref<1x48x16xf32>)
// LOOP-NEXT:   } else {
// LOOP-NEXT:     host.matmul ins([[CHUNK]], %{{.+}} : memref<1x48x4xf32>, memref<1x4x16xf32, strided<[256, 16, 1], offset: ?>>) outs([[PARTIAL]] : memref<1x48x16xf32>) {accumulate}
// LOOP-NEXT:   }
// LOOP-NEXT:   host.dealloc [[CHUNK]]
// LOOP-NEXT:   host.set_current_stream [[MAIN]]
// LOOP-NEXT:   host.sync_stream [[S]]
// LOOP-NEXT: }
// LOOP-NOT:  scf.for
// LOOP:      comm.reduce_scatter
// LOOP-NOT:  scf.for
//
// fusion-differentiate: the forward keeps its streamed contraction (and
// returns the intermediates the backward reads, whole), the backward has
// no stream axis; the gradients match the reference's finite differences.
// RUN: hir-opt --fusion-differentiate %S/Inputs/stream_contract_1.mlir | FileCheck %s --check-prefix=GRAD
// GRAD-LABEL: func.func @mlp_forward(
// GRAD:       fusion.linear %{{.+}} : tensor<8x64xf32, #fusion.dist<@dev, [serial, stream<4>]>>, {{.*}} -> tensor<8x16xf32, #fusion.dist<@dev, [serial, serial]>>
// GRAD-LABEL: func.func @mlp_backward(
// GRAD-NOT:   stream
// GRAD:       return
// RUN: hir-run -n 1 --grad %S/Inputs/stream_contract_1.mlir | FileCheck %s --check-prefix=GRADS
// RUN: hir-run -n 2 --grad %S/Inputs/stream_contract_mlp_2.mlir | FileCheck %s --check-prefix=GRADS
// GRADS: ran @mlp's forward and backward on
// GRADS-NOT: MISMATCH
// GRADS: d arg2, direction 1: {{.*}}: ok
