// hir-run --grad on Megatron's sequence-parallel transformer block with
// attention as its math (hir-bench program block --attention math, f32):
// LayerNorms, the causal softmax, the head reshapes and both GEMM pairs
// differentiate, and every parameter's gradient agrees with central
// differences of the reference on 2 ranks (one block) and 4 (two blocks).
// With the fused attention op, the pass refuses it, at the op.
// RUN: hir-bench program block --blocks 1 --s 16 --h 16 --heads 2 --f 32 -n 2 --dtype f32 --attention math > %t.2.mlir && hir-run -n 2 --grad %t.2.mlir | FileCheck %s --check-prefix=ONE
// RUN: hir-bench program block --blocks 2 --s 16 --h 16 --heads 4 --f 32 -n 4 --dtype f32 --attention math > %t.4.mlir && hir-run -n 4 --grad %t.4.mlir | FileCheck %s --check-prefix=TWO
// RUN: hir-bench program block --blocks 1 --s 16 --h 16 --heads 2 --f 32 -n 2 --dtype f32 > %t.fused.mlir && not hir-run -n 2 --grad %t.fused.mlir 2>&1 | FileCheck %s --check-prefix=FUSED

// ONE: ran @blocks's forward and backward on 2 ranks
// ONE-COUNT-24: d arg{{[0-9]+}}, direction {{[01]}}: {{.*}} (tolerance 1e-4): ok
// ONE-NOT: MISMATCH

// TWO: ran @blocks's forward and backward on 4 ranks
// TWO-COUNT-46: d arg{{[0-9]+}}, direction {{[01]}}: {{.*}} (tolerance 1e-4): ok
// TWO-NOT: MISMATCH

// FUSED: error: fusion-differentiate: 'fusion.attention' has no differentiation rule: its backward is not built yet
// FUSED: hir-run: error: fusion-differentiate failed on @blocks
