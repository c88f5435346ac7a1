// hir-bench's ranks in processes on localhost, with no GPU work: --dry-run
// goes through the launcher hir-run uses, the same-benchmark check and a
// barrier, then builds, lowers and JIT-compiles every variant on every rank
// and compares the lowered programs through the store; nothing is timed.

// hir-bench as the launcher: 2 child processes, their output prefixed; only
// rank 0 reports.
// RUN: hir-bench run -n 2 --dry-run --timeout 20 --shapes 16x8x4 --chunks 2 | FileCheck %s --check-prefix=DRY --implicit-check-not='[rank 1] ag'
// DRY-DAG: [rank 0] rank 0 of 2: joined; program hash [[HASH:[0-9a-f]+]]; inputs seed 0
// DRY-DAG: [rank 1] rank 1 of 2: joined; program hash [[HASH]]; inputs seed 0
// DRY-DAG: [rank 0] ag 16x8x4 gemm (ag-gemm, p2p=none): lowered hash {{[0-9a-f]+}}
// DRY-DAG: [rank 0] rs 16x8x4 p2p-cuda (rs-ring, p2p=cuda): lowered hash {{[0-9a-f]+}}
// DRY-DAG: [rank 0] ar 16x8x4 pipeline (ar-pipeline, p2p=none): lowered hash {{[0-9a-f]+}}
// DRY-DAG: [rank 0] ar 16x8x4 p2p-cuda (ar-ring, p2p=cuda): lowered hash {{[0-9a-f]+}}
// DRY-DAG: [rank 0] dry run: 2 ranks built, lowered and JIT-compiled the same 18 programs (0 skipped); nothing was timed

// HIR_LOG=debug: every line a rank logs names it (rank=R), beside the
// launcher's [rank R] prefix (which torchrun does not add).
// RUN: HIR_LOG=debug hir-bench run -n 2 --dry-run --timeout 20 --shapes 16x8x4 --families ag --variants gemm 2>&1 | FileCheck %s --check-prefix=LOG
// LOG-DAG: hir-bench: debug: started the rank rank=1 pid={{[0-9]+}}
// LOG-DAG: [rank 0] hir-bench: debug: rank=0: joined the store world=2
// LOG-DAG: [rank 1] hir-bench: debug: rank=1: joined the store world=2

// The cuda backend's dry run needs no GPU either.
// RUN: hir-bench run -n 3 --backend cuda --dry-run --timeout 20 --shapes 24x6x6 --families ag --variants gemm,p2p-nccl --chunks 2 | FileCheck %s --check-prefix=CUDA
// CUDA: [rank 0] dry run: 3 ranks built, lowered and JIT-compiled the same 2 programs (0 skipped); nothing was timed

// Ranks started by hand, torchrun style: rank 0 hosts the store.
// RUN: %python %S/../Integration/Inputs/ranks.py 2 'hir-bench run --dry-run --timeout 20 --shapes 16x8x4 --families ag --variants gemm' | FileCheck %s --check-prefix=TORCHRUN
// TORCHRUN-DAG: [rank 0] dry run: 2 ranks built, lowered and JIT-compiled the same 1 programs (0 skipped); nothing was timed
// TORCHRUN-DAG: rank 0: exit 0
// TORCHRUN-DAG: rank 1: exit 0

// Without -n, a rank torchrun started benchmarks D = WORLD_SIZE (these shapes
// fit D = 1, not 2); an -n other than WORLD_SIZE, 1 included, is an error.
// RUN: RANK=0 WORLD_SIZE=2 MASTER_PORT=1 not hir-bench run --dry-run --shapes 16x5x4 --chunks 2 --families rs --variants gemm 2>&1 | FileCheck %s --check-prefix=WORLDSIZE
// WORLDSIZE: hir-bench: error: these shapes do not fit the programs (D=2, S=2):
// WORLDSIZE-NEXT: rs gemm: rs-gemm: K=5 is not divisible by D (K is sharded)=2
// RUN: RANK=0 WORLD_SIZE=2 MASTER_PORT=1 not hir-bench run -n 1 --dry-run --shapes 16x8x4 --families ag --variants gemm 2>&1 | FileCheck %s --check-prefix=WORLD1
// WORLD1: hir-bench: error: rank 0: -n 1 does not match WORLD_SIZE 2

// Ranks that would time a different benchmark, or use other inputs: every
// rank fails, naming the first that differs.
// RUN: %python %S/../Integration/Inputs/ranks.py 2 'hir-bench run --dry-run --timeout 20 --shapes 16x8x4 --iters 3' 'hir-bench run --dry-run --timeout 20 --shapes 16x8x4' | FileCheck %s --check-prefix=DIFFERENT
// DIFFERENT-DAG: [rank 0] hir-bench: error: rank 0: same-program check: rank 1 runs a different program (hash [[H1:[0-9a-f]+]]) than rank 0 (hash [[H0:[0-9a-f]+]])
// DIFFERENT-DAG: [rank 1] hir-bench: error: rank 1: same-program check: rank 1 runs a different program (hash [[H1]]) than rank 0 (hash [[H0]])
// DIFFERENT-DAG: rank 0: exit 1
// DIFFERENT-DAG: rank 1: exit 1
// RUN: %python %S/../Integration/Inputs/ranks.py 2 'hir-bench run --dry-run --timeout 20 --shapes 16x8x4' 'hir-bench run --dry-run --timeout 20 --shapes 16x8x4 --seed 1' | FileCheck %s --check-prefix=SEED
// SEED-DAG: [rank 0] hir-bench: error: rank 0: same-program check: rank 1 has other inputs (seed 1) than rank 0 (seed 0)
// SEED-DAG: rank 1: exit 1

// A rank that exits early (test hook): the others give up naming it, the
// launcher too.
// RUN: HIR_TEST_HOOK=1:exit-after-bootstrap not hir-bench run -n 2 --dry-run --timeout 20 --shapes 16x8x4 > %t.exit 2>&1
// RUN: FileCheck %s --check-prefix=EXIT < %t.exit
// EXIT-DAG: [rank 0] hir-bench: error: rank 0: {{.*}}gave up: rank 1 exited (connection closed)
// EXIT-DAG: {{^}}hir-bench: error: rank 1 exited (connection closed)

// The cpu backend's ranks in processes (collectives and transfers through
// the store): every variant of the family runs and matches its reference.
// RUN: hir-bench run -n 2 --launch processes --shapes 16x8x4 --families ag 2>&1 | FileCheck %s --check-prefix=CPU --implicit-check-not='error:'
// CPU: [rank 0] ag {{.*}} p2p-cuda {{.*}} ok

// Usage errors: a dry run is ranks in processes; shapes are checked before
// any rank starts.
// RUN: not hir-bench run --dry-run --launch threads 2>&1 | FileCheck %s --check-prefix=THREADS
// THREADS: hir-bench: error: --dry-run checks ranks in processes: it does not go with --launch threads
// RUN: not hir-bench run -n 4 --dry-run --shapes 16x6x4 --families rs --variants gemm 2>&1 | FileCheck %s --check-prefix=SHAPES --implicit-check-not='[rank'
// SHAPES: hir-bench: error: these shapes do not fit the programs (D=4, S=4):
