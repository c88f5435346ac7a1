// hir-lower{reduce-scatter=reduce} (hir-run --reduce-scatter reduce): with
// p2p=none, the reduce-scatter after GEMM+RS's stream loop becomes one NCCL
// reduce per iteration, rooted at the iteration's index, of the block that
// iteration's GEMM wrote. The programs are hir-bench's rs-ring (f32), checked
// against the f64 reference at D = 1, 2, 3, 4 and 8. With p2p it is an error.
// RUN: hir-bench emit rs-ring -D 1 --m 8 --k 4 --n 6 --dtype f32 > %t.1.mlir
// RUN: hir-bench emit rs-ring -D 2 --m 16 --k 8 --n 6 --dtype f32 > %t.2.mlir
// RUN: hir-bench emit rs-ring -D 3 --m 24 --k 12 --n 6 --dtype f32 > %t.3.mlir
// RUN: hir-bench emit rs-ring -D 4 --m 32 --k 16 --n 6 --dtype f32 > %t.4.mlir
// RUN: hir-bench emit rs-ring -D 8 --m 64 --k 32 --n 6 --dtype f32 > %t.8.mlir
// RUN: hir-opt --hir-lower='reduce-scatter=reduce' %t.2.mlir | FileCheck %s --check-prefix=IR
// RUN: not hir-opt --hir-lower='reduce-scatter=reduce p2p=nccl' %t.2.mlir 2>&1 | FileCheck %s --check-prefix=WITH-P2P
// RUN: hir-run --check -n 1 --reduce-scatter reduce %t.1.mlir | FileCheck %s
// RUN: hir-run --check -n 2 --reduce-scatter reduce %t.2.mlir | FileCheck %s
// RUN: hir-run --check -n 3 --reduce-scatter reduce --num-streams 2 %t.3.mlir | FileCheck %s
// RUN: hir-run --check -n 4 --reduce-scatter reduce %t.4.mlir | FileCheck %s
// RUN: hir-run --check -n 8 --reduce-scatter reduce --num-streams 3 %t.8.mlir | FileCheck %s

// Each iteration's GEMM writes its block, which the iteration then reduces
// onto the rank that owns it.
// IR-LABEL: func.func @rs_ring(
// IR-NOT: comm.reduce_scatter
// IR: scf.for [[I:%.*]] = {{.*}} {
// IR: host.stream_from_pool [[I]]
// IR: host.matmul
// IR-NEXT: [[BLOCK:%.*]] = host.select %{{.*}}[0]{{\[}}[[I]]]
// IR-NEXT: [[R:%.*]] = comm.reduce [[BLOCK]] into %{{.*}} sum root [[I]] team [0, 1]
// IR-NEXT: comm.wait [[R]]
// IR-NOT: comm.reduce_scatter

// WITH-P2P: reduce-scatter=reduce is a pipeline without rings; it needs p2p=none, not p2p=nccl

// CHECK: ran @rs_ring on {{[12348]}} rank
// CHECK: result0: relative error {{.*}}: ok
