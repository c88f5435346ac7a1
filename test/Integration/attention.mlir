// fusion.attention end to end on the cpu backend, checked against the f64
// reference of hir-run --check (attention from its definition): heads split
// over 2 and 4 ranks, with and without causal and a mask, a batch axis
// streamed beside the heads, fewer queries than keys, bf16, and a query the
// mask hides every key from (zeros).
// RUN: hir-run --check -n 2 %S/Inputs/attention_2.mlir | FileCheck %s --check-prefix=TWO
// RUN: hir-run --check -n 4 %S/Inputs/attention_4.mlir | FileCheck %s --check-prefix=FOUR
// RUN: hir-opt --hir-lower %S/Inputs/attention_2.mlir | FileCheck %s --check-prefix=HOST --implicit-check-not=comm.

// TWO: ran @attention on 2 ranks
// TWO-NEXT: result0: relative error {{.*}}: ok
// TWO-NEXT: result1: relative error {{.*}}: ok
// TWO-NEXT: result2: relative error {{.*}}: ok
// TWO-NEXT: result3: relative error {{.*}}: ok
// TWO-NEXT: result4: relative error {{.*}}: ok

// FOUR: ran @attention on 4 ranks
// FOUR-NEXT: result0: relative error {{.*}} for f32): ok
// FOUR-NEXT: result1: relative error {{.*}} for bf16): ok

// Each rank computes its own heads, with no communication: the default scale
// is 1 / sqrt(8); the streamed batch axis slices q, k, v and the output.
// HOST-LABEL: func.func @attention(
// HOST: host.attention scale 0.35355339059327373 causal ins(%arg0, %arg1, %arg2 : memref<2x16x8xf32>, memref<2x16x8xf32>, memref<2x16x8xf32>) outs(%arg7 : memref<2x16x8xf32>)
// HOST-NEXT: host.attention scale 3.000000e-01 ins(%arg0, %arg1, %arg2, %arg3 : {{.*}}, memref<16x16xf32>)
// HOST: host.select %arg4[0]
// HOST: host.attention scale 0.35355339059327373 causal ins({{.*}} : memref<2x16x8xf32, strided<[128, 8, 1], offset: ?>>, {{.*}}) outs({{.*}} : memref<2x16x8xf32, strided<[128, 8, 1], offset: ?>>)

// The same attention written with upstream shard and linalg (Q K^T, a
// softmax over the keys, times V) imports as one fusion.attention.
// RUN: hir-run --check -n 2 --print-ir %S/Inputs/shard_attention.mlir | FileCheck %s --check-prefix=SHARD
// SHARD: fusion.attention %arg0, %arg1, %arg2 scale 1.000000e+00
// SHARD: host.attention scale 1.000000e+00 ins(%arg0, %arg1, %arg2 : memref<2x16x8xf32>, memref<2x12x8xf32>, memref<2x12x4xf32>) outs(%arg3 : memref<2x16x4xf32>)
// SHARD: ran @shard_attention on 2 ranks
// SHARD-NEXT: result0: relative error {{.*}}: ok

// Keys split over the ranks are a located error of the op's verifier.
// RUN: not hir-run --check -n 2 %S/Inputs/attention_split_keys.mlir 2>&1 | FileCheck %s --check-prefix=SPLIT
// SPLIT: attention_split_keys.mlir:8:8: error: 'fusion.attention' op k axis 1 (Sk) is didx; the Sq, Sk, D and Dv axes of attention are serial (only batch axes may be split or streamed)
// SPLIT: hir-run: error: {{.*}}attention_split_keys.mlir does not parse or verify
