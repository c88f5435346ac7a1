// Rings whose steps send to and receive from the rank itself, as nvFuser's
// P2P pipelines do (item 1 of issue 25): the allgather ring of coalesced nccl
// exchanges, at D = 1 nothing but sends to itself; the same ring over cuda
// (CUDA-IPC) transfers; and a reduce-scatter ring whose last step sends the
// finished sum to the rank itself. Each program comes from Inputs/pipelines.py
// and its every rank's output is checked against the collective's result.

// RUN: %python %S/Inputs/pipelines.py program ag-ring 1 > %t.ag1.mlir
// RUN: hir-run -n 1 --timeout 10 --output-dir %t.ag1 %t.ag1.mlir | FileCheck %s --check-prefix=RAN
// RUN: %python %S/Inputs/pipelines.py check ag-ring 1 %t.ag1 | FileCheck %s
// RUN: %python %S/Inputs/pipelines.py program ag-ring 2 > %t.ag2.mlir
// RUN: hir-run -n 2 --timeout 10 --output-dir %t.ag2 %t.ag2.mlir | FileCheck %s --check-prefix=RAN
// RUN: %python %S/Inputs/pipelines.py check ag-ring 2 %t.ag2 | FileCheck %s
// RUN: %python %S/Inputs/pipelines.py program ag-ring 3 > %t.ag3.mlir
// RUN: hir-run -n 3 --num-streams 2 --timeout 10 --output-dir %t.ag3 %t.ag3.mlir | FileCheck %s --check-prefix=RAN
// RUN: %python %S/Inputs/pipelines.py check ag-ring 3 %t.ag3 | FileCheck %s
// RUN: %python %S/Inputs/pipelines.py program ag-ring 4 > %t.ag4.mlir
// RUN: hir-run -n 4 --timeout 10 --output-dir %t.ag4 %t.ag4.mlir | FileCheck %s --check-prefix=RAN
// RUN: %python %S/Inputs/pipelines.py check ag-ring 4 %t.ag4 | FileCheck %s
// RUN: %python %S/Inputs/pipelines.py program ag-ring 8 > %t.ag8.mlir
// RUN: hir-run -n 8 --num-streams 3 --timeout 10 --output-dir %t.ag8 %t.ag8.mlir | FileCheck %s --check-prefix=RAN
// RUN: %python %S/Inputs/pipelines.py check ag-ring 8 %t.ag8 | FileCheck %s

// RUN: %python %S/Inputs/pipelines.py program ag-ring-cuda 1 > %t.agc1.mlir
// RUN: hir-run -n 1 --timeout 10 --output-dir %t.agc1 %t.agc1.mlir | FileCheck %s --check-prefix=RAN
// RUN: %python %S/Inputs/pipelines.py check ag-ring-cuda 1 %t.agc1 | FileCheck %s
// RUN: %python %S/Inputs/pipelines.py program ag-ring-cuda 3 > %t.agc3.mlir
// RUN: hir-run -n 3 --timeout 10 --output-dir %t.agc3 %t.agc3.mlir | FileCheck %s --check-prefix=RAN
// RUN: %python %S/Inputs/pipelines.py check ag-ring-cuda 3 %t.agc3 | FileCheck %s

// RUN: %python %S/Inputs/pipelines.py program rs-ring 1 > %t.rs1.mlir
// RUN: hir-run -n 1 --timeout 10 --output-dir %t.rs1 %t.rs1.mlir | FileCheck %s --check-prefix=RAN
// RUN: %python %S/Inputs/pipelines.py check rs-ring 1 %t.rs1 | FileCheck %s
// RUN: %python %S/Inputs/pipelines.py program rs-ring 2 > %t.rs2.mlir
// RUN: hir-run -n 2 --timeout 10 --output-dir %t.rs2 %t.rs2.mlir | FileCheck %s --check-prefix=RAN
// RUN: %python %S/Inputs/pipelines.py check rs-ring 2 %t.rs2 | FileCheck %s
// RUN: %python %S/Inputs/pipelines.py program rs-ring 3 > %t.rs3.mlir
// RUN: hir-run -n 3 --timeout 10 --output-dir %t.rs3 %t.rs3.mlir | FileCheck %s --check-prefix=RAN
// RUN: %python %S/Inputs/pipelines.py check rs-ring 3 %t.rs3 | FileCheck %s
// RUN: %python %S/Inputs/pipelines.py program rs-ring 4 > %t.rs4.mlir
// RUN: hir-run -n 4 --timeout 10 --output-dir %t.rs4 %t.rs4.mlir | FileCheck %s --check-prefix=RAN
// RUN: %python %S/Inputs/pipelines.py check rs-ring 4 %t.rs4 | FileCheck %s
// RUN: %python %S/Inputs/pipelines.py program rs-ring 8 > %t.rs8.mlir
// RUN: hir-run -n 8 --timeout 10 --output-dir %t.rs8 %t.rs8.mlir | FileCheck %s --check-prefix=RAN
// RUN: %python %S/Inputs/pipelines.py check rs-ring 8 %t.rs8 | FileCheck %s

// RAN: ran @{{ag_ring|ag_ring_cuda|rs_ring}} on {{[1-8]}} rank
// CHECK: {{ag-ring|ag-ring-cuda|rs-ring}} on {{[1-8]}} ranks: every rank's output ok
