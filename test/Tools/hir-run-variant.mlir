// hir-run --variant (tools/src/hir_run/tune.rs, hir::tune): the overlap
// variant a run uses. `auto` (the default) times the candidates on cuda
// only: on cpu the options run as given and nothing is timed. `tune` times
// them on any backend: no overlap, then overlap=auto with each transport
// (CUDA-IPC rings too with --graph), each on the run's own inputs; the
// fastest runs, is checked, and is kept beside the compile cache, so that
// the next run of the same program on the same ranks reads it instead of
// timing. An option given on the command line is kept in every candidate.
// RUN: hir-run -n 4 --check %examples/tp_mlp.mlir | FileCheck %s --check-prefix=GIVEN --implicit-check-not=variant
// GIVEN: ran @tp_mlp on 4 ranks
// GIVEN: result0: relative error {{.*}}: ok

// RUN: %python %S/Inputs/cache_dir.py clean %t.cache
// RUN: HIR_CACHE=1 HIR_CACHE_DIR=%t.cache hir-run -n 4 --check --variant tune %examples/tp_mlp.mlir | FileCheck %s --check-prefix=TIMED
// TIMED: variant: overlap={{none|auto}} p2p={{none|nccl|cuda}} (timed: overlap=none p2p=none {{[0-9.]+}} ms, overlap=auto p2p=none {{[0-9.]+}} ms, overlap=auto p2p=nccl {{[0-9.]+}} ms, overlap=auto p2p=cuda {{[0-9.]+}} ms)
// TIMED-NEXT: ran @tp_mlp on 4 ranks
// TIMED-NEXT: result0: relative error {{.*}}: ok
// RUN: HIR_CACHE=1 HIR_CACHE_DIR=%t.cache HIR_LOG=debug hir-run -n 4 --check --variant tune %examples/tp_mlp.mlir 2> %t.kept.log | FileCheck %s --check-prefix=KEPT
// RUN: FileCheck %s --input-file=%t.kept.log --check-prefix=KEPT-LOG --implicit-check-not='timed a variant'
// KEPT: variant: overlap={{none|auto}} p2p={{none|nccl|cuda}} (kept from an earlier run)
// KEPT-NEXT: ran @tp_mlp on 4 ranks
// KEPT-NEXT: result0: relative error {{.*}}: ok
// KEPT-LOG: chose the variant variant={{.*}} why="kept from an earlier run"

// Another rank count is another machine: timed again.
// RUN: HIR_CACHE=1 HIR_CACHE_DIR=%t.cache hir-run -n 2 --check --variant tune %S/Inputs/tp_mlp_2.mlir | FileCheck %s --check-prefix=TWO
// TWO: variant: {{.*}} (timed: {{.*}})
// TWO-NEXT: ran @tp_mlp on 2 ranks
// TWO-NEXT: result0: relative error {{.*}}: ok

// A given --p2p is kept; --graph times every transport as a graph.
// RUN: hir-run -n 4 --check --variant tune --p2p nccl %examples/tp_mlp.mlir | FileCheck %s --check-prefix=NCCL
// NCCL: variant: overlap={{none|auto}} p2p=nccl (timed: overlap=none p2p=nccl {{[0-9.]+}} ms, overlap=auto p2p=nccl {{[0-9.]+}} ms)
// NCCL: result0: relative error {{.*}}: ok
// RUN: hir-run -n 4 --check --variant tune --graph %examples/tp_mlp.mlir | FileCheck %s --check-prefix=GRAPH
// GRAPH: variant: {{.*}} (timed: overlap=none p2p=none {{[0-9.]+}} ms, overlap=auto p2p=none {{[0-9.]+}} ms, overlap=auto p2p=nccl {{[0-9.]+}} ms, overlap=auto p2p=cuda {{[0-9.]+}} ms)
// GRAPH: result0: relative error {{.*}}: ok

// Both given: nothing to choose, nothing timed.
// RUN: hir-run -n 4 --check --variant tune --p2p cuda --overlap auto %examples/tp_mlp.mlir | FileCheck %s --check-prefix=GIVEN --implicit-check-not=variant

// The chosen variant's outputs are checked as any run's (the candidates
// ran on the same buffers before it; the outputs are put back to NaN
// before the checked run, as --check poisons them).
// RUN: HIR_TEST_HOOK=1:corrupt-outputs not hir-run -n 4 --check --variant tune %examples/tp_mlp.mlir 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: variant: {{.*}} (timed: {{.*}})
// BAD: MISMATCH

// RUN: not hir-run --variant fastest %examples/tp_mlp.mlir 2>&1 | FileCheck %s --check-prefix=USAGE
// USAGE: invalid value 'fastest' for '--variant <VARIANT>'
