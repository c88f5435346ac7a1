// hir-lower{ring-sync=comm} (host-p2p-pipeline{stream-sync=comm}, nvFuser's
// inter_stream_synchronization): AG+GEMM rings whose transfers run on the
// steps' streams, each step's stream waiting only for the previous step's
// transfers (guarded at the wrap), run with --check on the cpu backend,
// whose race detector is fatal, at D = 1, 2, 3, 4, 8 for both transfer
// backends, with as many pool streams as steps and with fewer (the wrap).
// RUN: hir-opt --hir-lower='p2p=nccl ring-sync=comm num-streams=2' %S/Inputs/ag_matmul_p2p_3.mlir | FileCheck %s --check-prefix=LOWERED
// RUN: hir-run --check -n 1 --p2p nccl --ring-sync comm %S/Inputs/lone_allgather_1.mlir | FileCheck %s
// RUN: hir-run --check -n 1 --p2p cuda --ring-sync comm %S/Inputs/ag_linear_bias_ring_1.mlir | FileCheck %s
// RUN: hir-run --check -n 2 --p2p nccl --ring-sync comm %S/Inputs/ag_matmul_p2p_2.mlir | FileCheck %s
// RUN: hir-run --check -n 2 --p2p cuda --ring-sync comm %S/Inputs/ag_matmul_p2p_2.mlir | FileCheck %s
// RUN: hir-run --check -n 3 --p2p nccl --ring-sync comm --num-streams 2 %S/Inputs/ag_matmul_p2p_3.mlir | FileCheck %s
// RUN: hir-run --check -n 3 --p2p cuda --ring-sync comm %S/Inputs/ag_matmul_p2p_3.mlir | FileCheck %s
// RUN: hir-run --check -n 4 --p2p nccl --ring-sync comm %examples/ag_matmul_p2p.mlir | FileCheck %s
// RUN: hir-run --check -n 4 --p2p cuda --ring-sync comm --num-streams 2 %examples/ag_matmul_p2p.mlir | FileCheck %s
// RUN: hir-run --check -n 8 --p2p nccl --ring-sync comm --num-streams 3 %S/Inputs/ag_matmul_p2p_8.mlir | FileCheck %s
// RUN: hir-run --check -n 8 --p2p cuda --ring-sync comm %S/Inputs/ag_matmul_p2p_8.mlir | FileCheck %s
// The hir-bench option that times it against today's ring (checked here only).
// RUN: hir-bench run -n 4 --shapes 64x16x8 --families ag --variants gemm,p2p-nccl,p2p-cuda --ring-sync comm --lower-streams 3 --iters 1 --warmup 0 2>&1 | FileCheck %s --check-prefix=BENCH

// CHECK: result0: relative error {{.*}}: ok

// LOWERED: host.get_current_stream
// LOWERED: scf.for
// LOWERED: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %[[C1:.*]] {
// LOWERED: %[[S:.*]] = host.stream_from_pool
// LOWERED-NEXT: host.set_current_stream %[[S]]
// LOWERED-NOT: host.set_current_stream
// LOWERED: comm.start_coalescing
// LOWERED: comm.wait
// LOWERED: %[[NEXT:.*]] = arith.addi %[[I]], %[[C1]] : index
// LOWERED-NEXT: %[[NO_WRAP:.*]] = arith.cmpi ult, %[[NEXT]], %c2 : index
// LOWERED-NEXT: scf.if %[[NO_WRAP]] {
// LOWERED-NEXT: %[[T:.*]] = host.stream_from_pool %[[NEXT]] : !host.stream
// LOWERED-NEXT: host.set_current_stream %[[T]]
// LOWERED-NEXT: host.sync_stream %[[S]]

// BENCH: ring-sync=comm
// BENCH: ag {{.*}} gemm {{.*}} ok
// BENCH-NEXT: ag {{.*}} p2p-nccl ag-ring {{.*}} ok
// BENCH-NEXT: ag {{.*}} p2p-cuda ag-ring {{.*}} ok
