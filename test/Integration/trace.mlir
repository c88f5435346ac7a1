// --trace on AG+matmul: valid Chrome/Perfetto JSON with a process per rank,
// host, stream and comm tracks, and allgather and matmul slices on every rank.
// RUN: hir-run -n 4 --trace %t.json %examples/ag_matmul.mlir
// RUN: %python %S/Inputs/check_trace.py %t.json 4 | FileCheck %s

// CHECK: trace ok: 4 ranks, {{[0-9]+}} tracks, {{[0-9]+}} slices
