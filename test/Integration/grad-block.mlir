// hir-run --grad on Megatron's sequence-parallel transformer block (f32),
// with attention as its math (hir-bench program block --attention math:
// LayerNorms, the causal softmax, the head reshapes and both GEMM pairs
// differentiate op by op) and as the fused fusion.attention op (its rule
// computes the probabilities again from the saved q, k and v): every
// parameter's gradient agrees with central differences of the reference,
// the heads split over 1, 2 and 4 ranks (one block, and two on 4 ranks).
// RUN: hir-bench program block --blocks 1 --s 16 --h 16 --heads 2 --f 32 -n 2 --dtype f32 --attention math > %t.2.mlir && hir-run -n 2 --grad %t.2.mlir | FileCheck %s --check-prefix=ONE
// RUN: hir-bench program block --blocks 2 --s 16 --h 16 --heads 4 --f 32 -n 4 --dtype f32 --attention math > %t.4.mlir && hir-run -n 4 --grad %t.4.mlir | FileCheck %s --check-prefix=TWO
// RUN: hir-bench program block --blocks 1 --s 16 --h 16 --heads 2 --f 32 -n 1 --dtype f32 > %t.fused.1.mlir && hir-run -n 1 --grad %t.fused.1.mlir | FileCheck %s --check-prefix=FUSED1
// RUN: hir-bench program block --blocks 1 --s 16 --h 16 --heads 2 --f 32 -n 2 --dtype f32 > %t.fused.2.mlir && hir-run -n 2 --grad %t.fused.2.mlir | FileCheck %s --check-prefix=ONE
// RUN: hir-run -n 2 --grad --saved recompute %t.fused.2.mlir | FileCheck %s --check-prefix=ONE
// RUN: hir-bench program block --blocks 2 --s 16 --h 16 --heads 4 --f 32 -n 4 --dtype f32 > %t.fused.4.mlir && hir-run -n 4 --grad %t.fused.4.mlir | FileCheck %s --check-prefix=TWO

// ONE: ran @blocks's forward and backward on 2 ranks
// ONE-COUNT-24: d arg{{[0-9]+}}, direction {{[01]}}: {{.*}} (tolerance 1e-4): ok
// ONE-NOT: MISMATCH

// TWO: ran @blocks's forward and backward on 4 ranks
// TWO-COUNT-46: d arg{{[0-9]+}}, direction {{[01]}}: {{.*}} (tolerance 1e-4): ok
// TWO-NOT: MISMATCH

// FUSED1: ran @blocks's forward and backward on 1 rank
// FUSED1-COUNT-24: d arg{{[0-9]+}}, direction {{[01]}}: {{.*}} (tolerance 1e-4): ok
// FUSED1-NOT: MISMATCH
