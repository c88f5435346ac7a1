// Ring steps in parts (hir-lower ring-chunks, host-p2p-pipeline chunks) run
// end to end on the cpu backend: hir-bench's AG+GEMM and GEMM+RS rings, each
// output compared by --check with the reference evaluation of the fusion
// program, for 2, 3, 4 and 8 ranks, both ring backends, 1 to 4 parts and the
// pass's own choice (0), with pool streams both rotated and not.
// RUN: hir-bench emit ag-ring -D 2 --m 32 --k 8 --n 4 > %t.ag2.mlir
// RUN: hir-bench emit ag-ring -D 3 --m 48 --k 8 --n 4 > %t.ag3.mlir
// RUN: hir-bench emit ag-ring -D 4 --m 64 --k 8 --n 4 > %t.ag4.mlir
// RUN: hir-bench emit ag-ring -D 8 --m 64 --k 8 --n 4 > %t.ag8.mlir
// RUN: hir-bench emit rs-ring -D 2 --m 16 --k 8 --n 4 > %t.rs2.mlir
// RUN: hir-bench emit rs-ring -D 3 --m 24 --k 12 --n 4 > %t.rs3.mlir
// RUN: hir-bench emit rs-ring -D 4 --m 32 --k 16 --n 4 > %t.rs4.mlir
// RUN: hir-bench emit rs-ring -D 8 --m 64 --k 16 --n 4 > %t.rs8.mlir
// RUN: hir-run -n 2 --p2p cuda --ring-chunks 2 --check %t.ag2.mlir | FileCheck %s
// RUN: hir-run -n 2 --p2p nccl --ring-chunks 4 --check %t.rs2.mlir | FileCheck %s
// RUN: hir-run -n 3 --p2p nccl --ring-chunks 2 --num-streams 2 --check %t.ag3.mlir | FileCheck %s
// RUN: hir-run -n 3 --p2p cuda --ring-chunks 2 --check %t.rs3.mlir | FileCheck %s
// RUN: hir-run -n 4 --p2p cuda --ring-chunks 4 --num-streams 3 --check %t.ag4.mlir | FileCheck %s
// RUN: hir-run -n 4 --p2p nccl --ring-chunks 0 --check %t.ag4.mlir | FileCheck %s
// RUN: hir-run -n 4 --p2p cuda --ring-chunks 2 --num-streams 2 --check %t.ag4.mlir | FileCheck %s
// RUN: hir-run -n 3 --p2p cuda --ring-chunks 4 --num-streams 1 --check %t.ag3.mlir | FileCheck %s
// RUN: hir-run -n 4 --p2p cuda --ring-chunks 2 --check %t.rs4.mlir | FileCheck %s
// RUN: hir-run -n 4 --p2p nccl --ring-chunks 1 --check %t.rs4.mlir | FileCheck %s
// RUN: hir-run -n 8 --p2p cuda --ring-chunks 2 --num-streams 3 --check %t.ag8.mlir | FileCheck %s
// RUN: hir-run -n 8 --p2p nccl --ring-chunks 2 --check %t.rs8.mlir | FileCheck %s
// A part count that does not divide the steps' rows is a located error.
// RUN: not hir-run -n 4 --p2p cuda --ring-chunks 3 --check %t.ag4.mlir 2>&1 | FileCheck %s --check-prefix=ROWS

// CHECK: ran @{{[a-z_]+}} on {{[0-9]}} rank
// CHECK-NEXT: result0: relative error {{.*}}: ok
// ROWS: error: chunks=3 splits each ring step along axis 0 of its slices, but this slice has 16 rows there
