// Every road lowers a program the same way: hir-run (through hir::compile,
// as Python's hir.compile does) prints, after hir-lower, exactly what
// hir-opt's registered hir-lower pipeline prints for the same options
// (both are hir_passes::LowerOptions rendered to one pipeline), for a
// fusion program with rings, one with a broadcast pipeline and fusion, and
// a program imported from upstream shard.
// RUN: hir-opt --pass-pipeline='builtin.module(hir-lower{p2p=nccl ring-chunks=2})' %examples/ag_matmul_p2p.mlir > %t.rings
// RUN: hir-run -n 4 --print-ir --p2p nccl --ring-chunks 2 %examples/ag_matmul_p2p.mlir | %python %S/Inputs/ir_section.py hir-lower %t.rings
// RUN: FileCheck %s --input-file=%t.rings
// CHECK: comm.send
// RUN: hir-opt --pass-pipeline='builtin.module(hir-lower{fuse=elementwise allgather=broadcast})' %examples/ag_matmul_p2p.mlir > %t.broadcast
// RUN: hir-run -n 4 --print-ir --fuse elementwise --allgather broadcast %examples/ag_matmul_p2p.mlir | %python %S/Inputs/ir_section.py hir-lower %t.broadcast
// RUN: FileCheck %s --input-file=%t.broadcast --check-prefix=BROADCAST
// BROADCAST: comm.broadcast
// RUN: hir-opt --convert-shard-to-fusion --hir-lower %examples/shard_mlp.mlir > %t.shard
// RUN: hir-run -n 4 --print-ir %examples/shard_mlp.mlir | %python %S/Inputs/ir_section.py hir-lower %t.shard
// A different option is a different program, and the comparison says so.
// RUN: hir-run -n 4 --print-ir %examples/ag_matmul_p2p.mlir | not %python %S/Inputs/ir_section.py hir-lower %t.rings
