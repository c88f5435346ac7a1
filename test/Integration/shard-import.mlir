// A program written with upstream shard (examples/shard_mlp.mlir: Megatron's
// MLP, AG + linear + tanh + linear + RS on 4 devices; shard_tp_dp_mlp.mlir:
// an MLP on a 2x4 grid, TP=4 x DP=2) imports into the fusion program a fusion
// user writes for the same layer, lowers to the same host program, and runs
// checked against the f64 reference: hir-run imports it itself
// (convert-shard-to-fusion, then fusion-propagate-sharding).
// RUN: hir-opt --convert-shard-to-fusion --hir-lower %examples/shard_mlp.mlir -o %t.shard
// RUN: hir-opt --hir-lower %S/Inputs/shard_mlp_fusion.mlir -o %t.fusion
// RUN: %python -c "import filecmp, sys; sys.exit(not filecmp.cmp(sys.argv[1], sys.argv[2], shallow=False))" %t.shard %t.fusion
// RUN: FileCheck %s --check-prefix=OVERLAP < %t.shard
// RUN: hir-opt --pass-pipeline='builtin.module(convert-shard-to-fusion,hir-lower{overlap=none})' %examples/shard_mlp.mlir | FileCheck %s --check-prefix=HOST
// RUN: hir-run --check -n 4 %examples/shard_mlp.mlir | FileCheck %s
// RUN: hir-run --check -n 4 --num-streams 2 --seed 7 %examples/shard_mlp.mlir | FileCheck %s
// RUN: hir-opt --convert-shard-to-fusion --hir-lower %examples/shard_tp_dp_mlp.mlir -o %t.shard2d
// RUN: hir-opt --hir-lower %S/Inputs/shard_tp_dp_mlp_fusion.mlir -o %t.fusion2d
// RUN: %python -c "import filecmp, sys; sys.exit(not filecmp.cmp(sys.argv[1], sys.argv[2], shallow=False))" %t.shard2d %t.fusion2d
// RUN: FileCheck %s --check-prefix=HOST2D < %t.shard2d
// RUN: hir-run --check -n 8 %examples/shard_tp_dp_mlp.mlir | FileCheck %s --check-prefix=CHECK2D
// RUN: hir-run -n 4 --print-ir %examples/shard_mlp.mlir | FileCheck %s --check-prefix=IR
// A fusion program has nothing to import.
// RUN: hir-run -n 4 --print-ir %S/Inputs/shard_mlp_fusion.mlir | FileCheck %s --check-prefix=FUSION --implicit-check-not='IR after import'

// HOST:      comm.allgather
// HOST:      host.linear
// HOST:      host.tanh
// HOST:      host.linear
// HOST:      comm.reduce_scatter

// By default (overlap=auto, p2p=none) the imported program, which has no
// stream axes, overlaps both collectives: the allgather as one rooted
// broadcast per chunk of rows before its linear, the reduce-scatter as one
// rooted reduce per chunk after the other linear.
// OVERLAP-NOT: comm.allgather
// OVERLAP:     comm.broadcast {{.*}} root
// OVERLAP:     host.linear
// OVERLAP:     host.tanh
// OVERLAP:     host.linear
// OVERLAP:     comm.reduce {{.*}} root
// OVERLAP-NOT: comm.reduce_scatter

// CHECK: ran @shard_mlp on 4 ranks
// CHECK: result0: relative error {{.*}}: ok

// HOST2D:      host.matmul
// HOST2D:      host.tanh
// HOST2D:      host.matmul
// HOST2D:      comm.allreduce {{.*}} team {{\[}}[0, 1, 2, 3], [4, 5, 6, 7]]

// CHECK2D: ran @shard_tp_dp_mlp on 8 ranks
// CHECK2D: result0: relative error {{.*}}: ok

// IR:      // ----- IR after import
// IR:      fusion.mesh @tp = [0, 1, 2, 3]
// IR-NOT:  shard.
// IR:      // ----- input

// FUSION:  // ----- input
