// hir-bench's transformer blocks (tools/src/blocks.rs: Megatron-LM's
// sequence-parallel block, forward), printed small and run with hir-run
// --check on the cpu backend at D = 1, 2, 4: LayerNorm on each device's
// tokens, the allgather into Q, K, V (one column-parallel GEMM each, its
// split columns reshaped into split heads; or with --qkv fused one GEMM
// with Megatron's fused weight [3H, H], its split columns reshaped into
// split heads of 3 dh and sliced into q, k and v), causal softmax attention on
// the local heads (one fusion.attention, or with --attention math the unfused
// chain of matmuls and softmax), the heads merged back, the row-parallel
// out-projection reduce-scattered back to
// the token shards, then the MLP (allgather, FC1 with bias, gelu, FC2
// reduce-scattered), each with its residual. S=16 H=16 heads=4 F=32 split over
// every D here.
// RUN: hir-bench program block --blocks 1 --s 16 --h 16 --heads 4 --f 32 -n 1 --dtype f32 > %t.1.mlir && hir-run -n 1 --check %t.1.mlir | FileCheck %s
// RUN: hir-bench program block --blocks 1 --s 16 --h 16 --heads 4 --f 32 -n 2 --dtype f32 > %t.2.mlir && hir-run -n 2 --check %t.2.mlir | FileCheck %s
// RUN: hir-bench program block --blocks 1 --s 16 --h 16 --heads 4 --f 32 -n 4 --dtype f32 > %t.4.mlir && hir-run -n 4 --check %t.4.mlir | FileCheck %s
// The unfused attention computes the same block.
// RUN: hir-bench program block --attention math --blocks 1 --s 16 --h 16 --heads 4 --f 32 -n 1 --dtype f32 > %t.m1.mlir && hir-run -n 1 --check %t.m1.mlir | FileCheck %s
// RUN: hir-bench program block --attention math --blocks 1 --s 16 --h 16 --heads 4 --f 32 -n 4 --dtype f32 > %t.m4.mlir && hir-run -n 4 --check %t.m4.mlir | FileCheck %s
// One GEMM for Q, K and V, sliced, computes the same block as Megatron's
// fused weight defines it (its own arguments, so its own reference).
// RUN: hir-bench program block --qkv fused --blocks 1 --s 16 --h 16 --heads 4 --f 32 -n 1 --dtype f32 > %t.q1.mlir && hir-run -n 1 --check %t.q1.mlir | FileCheck %s
// RUN: hir-bench program block --qkv fused --blocks 1 --s 16 --h 16 --heads 4 --f 32 -n 2 --dtype f32 > %t.q2.mlir && hir-run -n 2 --check %t.q2.mlir | FileCheck %s
// RUN: hir-bench program block --qkv fused --attention math --blocks 2 --s 16 --h 16 --heads 4 --f 32 -n 4 --dtype f32 > %t.q4.mlir && hir-run -n 4 --check %t.q4.mlir | FileCheck %s
// Two blocks stacked, and the default element type, bf16.
// RUN: hir-bench program block --blocks 2 --s 16 --h 16 --heads 4 --f 32 -n 2 --dtype f32 > %t.2x2.mlir && hir-run -n 2 --check %t.2x2.mlir | FileCheck %s
// RUN: hir-bench program block --blocks 2 --s 16 --h 16 --heads 4 --f 32 -n 4 > %t.bf16.mlir && hir-run -n 4 --check %t.bf16.mlir | FileCheck %s
// The same block on every D computes the same values: the random inputs are
// a function of each element's global index, whichever rank makes it.
// RUN: hir-run -n 1 --output-dir %t.out1 %t.1.mlir
// RUN: hir-run -n 4 --expect %t.out1 %t.4.mlir | FileCheck %s --check-prefix=SAME
// FC1's gelu is the GEMM's epilogue (host-fuse-epilogue, before
// host-auto-stream cuts FC1 into the chunks of its loop): no kernel of its
// own.
// RUN: hir-opt --hir-lower %t.2.mlir | FileCheck %s --check-prefix=FC1
// The fused and the unfused attention agree.
// RUN: hir-run -n 4 --expect %t.out1 %t.m4.mlir | FileCheck %s --check-prefix=SAME
// RUN: hir-run -n 1 --output-dir %t.outq1 %t.q1.mlir
// RUN: hir-run -n 2 --expect %t.outq1 %t.q2.mlir | FileCheck %s --check-prefix=SAME

// CHECK: ran @blocks on {{[0-9]}} rank
// CHECK-NEXT: result0: relative error {{.*}}: ok
// SAME: result0 against {{.*}}: relative error {{.*}}: ok
// FC1: host.linear activation gelu ins(%{{.*}}, %{{.*}}, %{{.*}} : memref<{{.*}}>, memref<16x16xf32>, memref<16xf32>) outs(%{{.*}} : memref<{{.*}}>)
// FC1-NOT: host.gelu

// Without overlap, hir-lower makes the sequence-parallel collectives of
// each block: two allgathers and two reduce-scatters, whole.
// RUN: hir-opt --pass-pipeline='builtin.module(hir-lower{overlap=none})' %t.2.mlir | FileCheck %s --check-prefix=LOWERED
// LOWERED: comm.allgather
// LOWERED: comm.reduce_scatter
// LOWERED: comm.allgather
// LOWERED: comm.reduce_scatter
// LOWERED-NOT: comm.allgather
// LOWERED-NOT: comm.reduce_scatter

// Each projection is one GEMM on each rank: Q, K and V of the local 8 of 16
// columns (or one of 24 of the fused 48, sliced), and the out-projection of
// the local columns, whose partial sums the reduce-scatter adds (no sum over
// the heads).
// RUN: hir-opt --pass-pipeline='builtin.module(hir-lower{overlap=none})' %t.2.mlir | FileCheck %s --check-prefix=GEMMS
// RUN: hir-opt --pass-pipeline='builtin.module(hir-lower{overlap=none})' %t.q2.mlir | FileCheck %s --check-prefix=FUSED
// GEMMS: comm.allgather
// GEMMS-COUNT-3: host.linear ins(%{{.+}}, %{{.+}} : memref<16x16xf32>, memref<8x16xf32>) outs(%{{.+}} : memref<16x8xf32>)
// GEMMS-NOT: host.linear
// GEMMS: host.attention
// GEMMS-NOT: host.sum
// GEMMS: host.linear ins(%{{.+}}, %{{.+}} : memref<16x8xf32>, memref<16x8xf32>) outs(%{{.+}} : memref<16x16xf32>)
// GEMMS: comm.reduce_scatter
// FUSED: comm.allgather
// FUSED: host.linear ins(%{{.+}}, %{{.+}} : memref<16x16xf32>, memref<24x16xf32>) outs(%{{.+}} : memref<16x24xf32>)
// FUSED-COUNT-3: memref.subview
// FUSED-NOT: host.linear
// FUSED: host.attention
// FUSED-NOT: host.sum
// FUSED: host.linear ins(%{{.+}}, %{{.+}} : memref<16x8xf32>, memref<16x8xf32>) outs(%{{.+}} : memref<16x16xf32>)
// FUSED: comm.reduce_scatter

// Sizes that do not split are errors naming them.
// RUN: not hir-bench program block --s 6 -n 4 2>&1 | FileCheck %s --check-prefix=SPLIT
// SPLIT: hir-bench: error: block: S=6 is not a multiple of D (tokens split over the devices)=4

// By default (overlap=auto) every collective of the natural block, which
// has no stream axis, is a pipeline over one chunk of tokens per device
// (host-auto-stream): with p2p=none each allgather is one rooted broadcast
// per chunk before the chunk's Q, K and V GEMMs (one loop) or FC1, and each
// reduce-scatter one rooted reduce per chunk after the out-projection's or
// FC2's chunk; with p2p=nccl|cuda they are rings (the AG ring, the GEMM+RS
// ring of partial blocks). No whole collective is left.
// RUN: hir-opt --hir-lower %t.2.mlir | FileCheck %s --check-prefix=OVERLAP --implicit-check-not=comm.allgather --implicit-check-not=comm.reduce_scatter
// RUN: hir-opt --hir-lower %t.q2.mlir | FileCheck %s --check-prefix=OVERLAP --implicit-check-not=comm.allgather --implicit-check-not=comm.reduce_scatter
// RUN: hir-opt --hir-lower %t.m4.mlir | FileCheck %s --check-prefix=OVERLAP --implicit-check-not=comm.allgather --implicit-check-not=comm.reduce_scatter
// OVERLAP:      scf.for
// OVERLAP:        comm.broadcast {{.*}} root
// OVERLAP-NEXT:   comm.wait
// OVERLAP:        host.linear
// OVERLAP:      scf.for
// OVERLAP:        host.linear
// OVERLAP:        comm.reduce {{.*}} sum root
// OVERLAP:      scf.for
// OVERLAP:        comm.broadcast {{.*}} root
// OVERLAP:        host.linear
// OVERLAP:      scf.for
// OVERLAP:        host.linear
// OVERLAP:        comm.reduce {{.*}} sum root
// RUN: hir-opt --pass-pipeline='builtin.module(hir-lower{p2p=nccl})' %t.2.mlir | FileCheck %s --check-prefix=RINGS --implicit-check-not=comm.allgather --implicit-check-not=comm.reduce_scatter --implicit-check-not=comm.broadcast
// RUN: hir-opt --pass-pipeline='builtin.module(hir-lower{p2p=cuda})' %t.q4.mlir | FileCheck %s --check-prefix=RINGS --implicit-check-not=comm.allgather --implicit-check-not=comm.reduce_scatter --implicit-check-not=comm.broadcast
// RINGS-COUNT-4: comm.send
// With rings, each reduce-scatter is the chain of accumulating GEMMs: the
// out-projection's and FC2's chunks (bias-free linears) accumulate onto the
// sum the next rank sent.
// RUN: hir-opt --pass-pipeline='builtin.module(hir-lower{p2p=nccl})' %t.2.mlir | FileCheck %s --check-prefix=CHAIN
// CHAIN:      host.attention
// CHAIN:      host.linear {{.*}} {accumulate}
// CHAIN:      comm.send
// CHAIN:      host.linear {{.*}} {accumulate}
// Each form checked against the reference, and the rings at D = 3.
// RUN: hir-run -n 4 --p2p nccl --check %t.4.mlir | FileCheck %s
// RUN: hir-run -n 2 --p2p cuda --check %t.q2.mlir | FileCheck %s
// RUN: hir-run -n 4 --p2p cuda --check %t.q4.mlir | FileCheck %s
// RUN: hir-bench program block --s 24 --h 24 --heads 6 --f 48 -n 3 --dtype f32 > %t.3.mlir
// RUN: hir-run -n 3 --check %t.3.mlir | FileCheck %s
// RUN: hir-run -n 3 --p2p nccl --check %t.3.mlir | FileCheck %s
// RUN: hir-run -n 4 --overlap none --check %t.4.mlir | FileCheck %s
