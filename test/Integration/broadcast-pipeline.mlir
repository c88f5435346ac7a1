// hir-lower{allgather=broadcast} (hir-run --allgather broadcast): with
// p2p=none, an allgather along the stream axis becomes one NCCL broadcast per
// stream-loop iteration, rooted at the iteration's index, into the slice the
// iteration reads: AG+matmul and a lone DIDx -> Stream set, checked against
// the f64 reference at D = 1, 2, 3, 4 and 8. With p2p it is an error.
// RUN: hir-opt --hir-lower='allgather=broadcast' %examples/ag_matmul_p2p.mlir | FileCheck %s --check-prefix=IR
// RUN: not hir-opt --hir-lower='allgather=broadcast p2p=cuda' %examples/ag_matmul_p2p.mlir 2>&1 | FileCheck %s --check-prefix=WITH-P2P
// RUN: hir-run --check -n 1 --allgather broadcast %S/Inputs/lone_allgather_1.mlir | FileCheck %s
// RUN: hir-run --check -n 2 --allgather broadcast %S/Inputs/ag_matmul_p2p_2.mlir | FileCheck %s
// RUN: hir-run --check -n 2 --allgather broadcast %S/Inputs/lone_allgather_2.mlir | FileCheck %s
// RUN: hir-run --check -n 3 --allgather broadcast --num-streams 2 %S/Inputs/ag_matmul_p2p_3.mlir | FileCheck %s
// RUN: hir-run --check -n 4 --allgather broadcast %examples/ag_matmul_p2p.mlir | FileCheck %s
// RUN: hir-run --check -n 4 --allgather broadcast %examples/allgather_p2p.mlir | FileCheck %s
// RUN: hir-run --check -n 8 --allgather broadcast --num-streams 3 %S/Inputs/ag_matmul_p2p_8.mlir | FileCheck %s
// RUN: hir-run --check -n 8 --allgather broadcast %S/Inputs/lone_allgather_8.mlir | FileCheck %s

// Rank r's shard, broadcast by rank i in iteration i into slice i, which the
// iteration's matmul then reads: the iteration's own buffer
// (host-privatize-buffers), freed in the iteration, so that the gathered
// rows are never held whole.
// IR-LABEL: func.func @ag_matmul_p2p(
// IR-SAME: [[A:%[a-zA-Z0-9_]+]]: memref<1x256x1024xbf16>
// IR-NOT: comm.allgather
// IR: [[SHARD:%.*]] = host.select [[A]][0]
// IR: scf.for [[I:%.*]] = {{.*}} {
// IR: host.stream_from_pool [[I]]
// IR: [[SLICE:%.*]] = host.alloc : memref<256x1024xbf16>
// IR-NEXT: [[R:%.*]] = comm.broadcast [[SHARD]] into [[SLICE]] root [[I]] team [0, 1, 2, 3]
// IR-NEXT: comm.wait [[R]]
// IR: host.matmul ins([[SLICE]],
// IR-NEXT: host.dealloc [[SLICE]]
// IR-NOT: comm.allgather

// WITH-P2P: allgather=broadcast is a pipeline without rings; it needs p2p=none, not p2p=cuda

// CHECK: ran @{{.*}} on {{[12348]}} rank
// CHECK: result0: relative error {{.*}}: ok
