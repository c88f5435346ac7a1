// hir-run --grad on a small program per op family (Inputs/grad_*.mlir):
// each argument's gradient from the lowered backward, run on the cpu
// backend, agrees with central differences of the f64 reference along
// random directions, from two seeds. The distributed program runs on 2
// ranks, with and without rings. Attention runs on one rank
// (Inputs/grad_attention.mlir) and on the --check inputs of attention.mlir,
// its heads split over 2 and 4 ranks: causal or not, with a mask, a
// streamed batch axis, fewer queries than keys, bf16, and a query the mask
// hides every key from (zeros, and a zero gradient, not NaN). The
// elementwise program runs with fuse=none: host-fuse-elementwise crashes on its forward (several chain
// values returned; a bug of that pass, not of the gradient).
// RUN: hir-run --grad --fuse none %S/Inputs/grad_pointwise.mlir | FileCheck %s --check-prefix=POINTWISE
// RUN: hir-run --grad --fuse none --seed 9 %S/Inputs/grad_pointwise.mlir | FileCheck %s --check-prefix=POINTWISE
// RUN: hir-run --grad %S/Inputs/grad_structural.mlir | FileCheck %s --check-prefix=STRUCTURAL
// RUN: hir-run --grad --seed 9 %S/Inputs/grad_structural.mlir | FileCheck %s --check-prefix=STRUCTURAL
// RUN: hir-run --grad %S/Inputs/grad_contraction.mlir | FileCheck %s --check-prefix=CONTRACTION
// RUN: hir-run --grad --seed 9 %S/Inputs/grad_contraction.mlir | FileCheck %s --check-prefix=CONTRACTION
// RUN: hir-run -n 2 --grad %S/Inputs/grad_dist_2.mlir | FileCheck %s --check-prefix=DIST
// RUN: hir-run -n 2 --grad --seed 9 --p2p nccl %S/Inputs/grad_dist_2.mlir | FileCheck %s --check-prefix=DIST
// RUN: hir-run --grad %S/Inputs/grad_attention.mlir | FileCheck %s --check-prefix=ATTENTION
// RUN: hir-run --grad --seed 9 %S/Inputs/grad_attention.mlir | FileCheck %s --check-prefix=ATTENTION
// RUN: hir-run -n 2 --grad %S/Inputs/attention_2.mlir | FileCheck %s --check-prefix=ATTENTION2
// RUN: hir-run -n 4 --grad %S/Inputs/attention_4.mlir | FileCheck %s --check-prefix=ATTENTION4

// POINTWISE: ran @pointwise's forward and backward on 1 rank
// POINTWISE-COUNT-6: d arg{{[0-2]}}, direction {{[01]}}: {{.*}} (tolerance 1e-4): ok
// POINTWISE-NOT: MISMATCH

// Only the float argument; the integer result gets no cotangent. A bf16
// cast in the forward bounds the gradient's accuracy by bf16's tolerance.
// STRUCTURAL: ran @structural's forward and backward on 1 rank
// STRUCTURAL-COUNT-2: d arg0, direction {{[01]}}: {{.*}} (tolerance 3e-2): ok
// STRUCTURAL-NOT: MISMATCH

// CONTRACTION: ran @contraction's forward and backward on 1 rank
// CONTRACTION-COUNT-12: d arg{{[0-5]}}, direction {{[01]}}: {{.*}} (tolerance 1e-4): ok
// CONTRACTION-NOT: MISMATCH

// DIST: ran @distributed's forward and backward on 2 ranks
// DIST-COUNT-6: d arg{{[0-2]}}, direction {{[01]}}: {{.*}}: ok
// DIST-NOT: MISMATCH

// ATTENTION: ran @attention's forward and backward on 1 rank
// ATTENTION-COUNT-10: d arg{{[0-4]}}, direction {{[01]}}: {{.*}} (tolerance 1e-4): ok
// ATTENTION-NOT: MISMATCH

// ATTENTION2: ran @attention's forward and backward on 2 ranks
// ATTENTION2-COUNT-14: d arg{{[0-6]}}, direction {{[01]}}: {{.*}} (tolerance 1e-4): ok
// ATTENTION2-NOT: MISMATCH

// With a bf16 result, the program's tolerance is bf16's.
// ATTENTION4: ran @attention's forward and backward on 4 ranks
// ATTENTION4-COUNT-14: d arg{{[0-6]}}, direction {{[01]}}: {{.*}} (tolerance 3e-2): ok
// ATTENTION4-NOT: MISMATCH
