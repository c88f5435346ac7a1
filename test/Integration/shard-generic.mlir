// linalg.generic, imported: examples/shard_generic_mlp.mlir (Megatron's MLP
// with its bias and tanh-gelu written as one linalg.generic) runs checked
// against the f64 reference of the program it imports to, on 4 ranks,
// and computes what its hand-written fusion twin examples/tp_mlp.mlir
// (fusion.linear's bias, fusion.gelu) computes on the same inputs: a check of
// the import itself that does not go through it.
// RUN: hir-run --check -n 4 --seed 3 %examples/shard_generic_mlp.mlir | FileCheck %s
// RUN: hir-run -n 4 --seed 3 --output-dir %t.twin %examples/tp_mlp.mlir
// RUN: hir-run -n 4 --seed 3 --expect %t.twin %examples/shard_generic_mlp.mlir | FileCheck %s --check-prefix=TWIN
// RUN: hir-run --check -n 4 --num-streams 2 --fuse elementwise %examples/shard_generic_mlp.mlir | FileCheck %s
// The generic becomes a broadcast of the bias and the pointwise ops of its
// body between the two linears (the collectives whole: overlap=none).
// RUN: hir-opt --pass-pipeline='builtin.module(convert-shard-to-fusion,hir-lower{overlap=none})' %examples/shard_generic_mlp.mlir | FileCheck %s --check-prefix=HOST

// CHECK: ran @shard_generic_mlp on 4 ranks
// CHECK: result0: relative error {{.*}}: ok
// TWIN: result0 against {{.*}}: relative error {{.*}}: ok

// HOST:     comm.allgather
// HOST:     host.linear
// HOST:     host.broadcast [0]
// HOST:     host.add
// HOST:     host.tanh
// HOST:     host.mul
// HOST:     host.linear
// HOST:     comm.reduce_scatter
