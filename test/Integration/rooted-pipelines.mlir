// Collectives rooted at the loop index (comm.broadcast/comm.reduce with a
// root value, item 2 of issue 25), in hand-written stream pipelines from
// Inputs/pipelines.py: an allgather as iteration i broadcasting rank i's
// slice, and a reduce-scatter as iteration i summing every rank's slice i
// onto rank i. Every rank's output is checked against the collective's
// result at D = 1, 2, 3, 4 and 8.

// RUN: %python %S/Inputs/pipelines.py program ag-bcast 1 > %t.ag1.mlir
// RUN: hir-run -n 1 --timeout 10 --output-dir %t.ag1 %t.ag1.mlir | FileCheck %s --check-prefix=RAN
// RUN: %python %S/Inputs/pipelines.py check ag-bcast 1 %t.ag1 | FileCheck %s
// RUN: %python %S/Inputs/pipelines.py program ag-bcast 2 > %t.ag2.mlir
// RUN: hir-run -n 2 --timeout 10 --output-dir %t.ag2 %t.ag2.mlir | FileCheck %s --check-prefix=RAN
// RUN: %python %S/Inputs/pipelines.py check ag-bcast 2 %t.ag2 | FileCheck %s
// RUN: %python %S/Inputs/pipelines.py program ag-bcast 3 > %t.ag3.mlir
// RUN: hir-run -n 3 --num-streams 2 --timeout 10 --output-dir %t.ag3 %t.ag3.mlir | FileCheck %s --check-prefix=RAN
// RUN: %python %S/Inputs/pipelines.py check ag-bcast 3 %t.ag3 | FileCheck %s
// RUN: %python %S/Inputs/pipelines.py program ag-bcast 4 > %t.ag4.mlir
// RUN: hir-run -n 4 --timeout 10 --output-dir %t.ag4 %t.ag4.mlir | FileCheck %s --check-prefix=RAN
// RUN: %python %S/Inputs/pipelines.py check ag-bcast 4 %t.ag4 | FileCheck %s
// RUN: %python %S/Inputs/pipelines.py program ag-bcast 8 > %t.ag8.mlir
// RUN: hir-run -n 8 --num-streams 3 --timeout 10 --output-dir %t.ag8 %t.ag8.mlir | FileCheck %s --check-prefix=RAN
// RUN: %python %S/Inputs/pipelines.py check ag-bcast 8 %t.ag8 | FileCheck %s

// RUN: %python %S/Inputs/pipelines.py program rs-reduce 1 > %t.rs1.mlir
// RUN: hir-run -n 1 --timeout 10 --output-dir %t.rs1 %t.rs1.mlir | FileCheck %s --check-prefix=RAN
// RUN: %python %S/Inputs/pipelines.py check rs-reduce 1 %t.rs1 | FileCheck %s
// RUN: %python %S/Inputs/pipelines.py program rs-reduce 2 > %t.rs2.mlir
// RUN: hir-run -n 2 --timeout 10 --output-dir %t.rs2 %t.rs2.mlir | FileCheck %s --check-prefix=RAN
// RUN: %python %S/Inputs/pipelines.py check rs-reduce 2 %t.rs2 | FileCheck %s
// RUN: %python %S/Inputs/pipelines.py program rs-reduce 3 > %t.rs3.mlir
// RUN: hir-run -n 3 --num-streams 2 --timeout 10 --output-dir %t.rs3 %t.rs3.mlir | FileCheck %s --check-prefix=RAN
// RUN: %python %S/Inputs/pipelines.py check rs-reduce 3 %t.rs3 | FileCheck %s
// RUN: %python %S/Inputs/pipelines.py program rs-reduce 4 > %t.rs4.mlir
// RUN: hir-run -n 4 --timeout 10 --output-dir %t.rs4 %t.rs4.mlir | FileCheck %s --check-prefix=RAN
// RUN: %python %S/Inputs/pipelines.py check rs-reduce 4 %t.rs4 | FileCheck %s
// RUN: %python %S/Inputs/pipelines.py program rs-reduce 8 > %t.rs8.mlir
// RUN: hir-run -n 8 --num-streams 3 --timeout 10 --output-dir %t.rs8 %t.rs8.mlir | FileCheck %s --check-prefix=RAN
// RUN: %python %S/Inputs/pipelines.py check rs-reduce 8 %t.rs8 | FileCheck %s

// A root value outside the team fails the rank when the op runs, naming the
// rank, the op and the root; the other rank gives up.
// RUN: not hir-run -n 2 --timeout 10 %s 2>&1 | FileCheck %s --check-prefix=BAD

// RAN: ran @{{ag_bcast|rs_reduce}} on {{[1-8]}} rank
// CHECK: {{ag-bcast|rs-reduce}} on {{[1-8]}} ranks: every rank's output ok
// BAD: hir-run: error: the run failed: rank {{[01]}}: hir_rt_broadcast_f32: root 2 is not in the team [0, 1]
func.func @root_out_of_team(%a: memref<8xf32>, %b: memref<8xf32>) {
  %n = host.num_devices : index
  %r = comm.broadcast %a into %b root %n team [0, 1] : memref<8xf32> into memref<8xf32>
  comm.wait %r
  return
}
