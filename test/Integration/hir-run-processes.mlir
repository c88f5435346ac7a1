// Ranks in processes on localhost, with no GPU work: --dry-run bootstraps
// through the store, checks that every rank runs the same program with the
// same input shapes, meets at a barrier and runs nothing.

// hir-run as the launcher: 4 child processes, their output prefixed.
// RUN: hir-run -n 4 --dry-run --timeout 20 %examples/allgather.mlir | FileCheck %s --check-prefix=AGREE
// AGREE-DAG: [rank 0] rank 0 of 4: joined; program hash [[HASH:[0-9a-f]+]]; inputs random
// AGREE-DAG: [rank 1] rank 1 of 4: joined; program hash [[HASH]]; inputs random
// AGREE-DAG: [rank 2] rank 2 of 4: joined; program hash [[HASH]]; inputs random
// AGREE-DAG: [rank 3] rank 3 of 4: joined; program hash [[HASH]]; inputs random
// AGREE-DAG: [rank 0] dry run: the program verifies and lowers for 4 ranks, which run the same program (hash [[HASH]]) with the same inputs and passed a barrier; nothing was executed

// Ranks started by hand, torchrun style (RANK, WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT): rank 0 hosts the store.
// RUN: %python %S/Inputs/ranks.py 2 'hir-run --dry-run --timeout 20 %S/Inputs/ag_matmul_p2p_2.mlir' | FileCheck %s --check-prefix=TORCHRUN
// TORCHRUN-DAG: [rank 0] rank 0 of 2: joined
// TORCHRUN-DAG: [rank 1] rank 1 of 2: joined
// TORCHRUN-DAG: rank 0: exit 0
// TORCHRUN-DAG: rank 1: exit 0

// A rank that runs a different program: both fail, naming the ranks.
// RUN: %python %S/Inputs/ranks.py 2 'hir-run --dry-run --timeout 20 %S/Inputs/allgather_2.mlir' 'hir-run --dry-run --timeout 20 %S/Inputs/ag_matmul_p2p_2.mlir' | FileCheck %s --check-prefix=DIFFERENT
// DIFFERENT-DAG: [rank 0] hir-run: error: rank 0: same-program check: rank 1 runs a different program (hash [[H1:[0-9a-f]+]]) than rank 0 (hash [[H0:[0-9a-f]+]])
// DIFFERENT-DAG: [rank 1] hir-run: error: rank 1: same-program check: rank 1 runs a different program (hash [[H1]]) than rank 0 (hash [[H0]])
// DIFFERENT-DAG: rank 0: exit 1
// DIFFERENT-DAG: rank 1: exit 1

// The same program with other input shapes.
// RUN: %python %S/Inputs/fill_npy.py %t.in.npy 1 4 2
// RUN: %python %S/Inputs/ranks.py 2 'hir-run --dry-run --timeout 20 --input arg0=%t.in.npy %S/Inputs/allgather_2.mlir' 'hir-run --dry-run --timeout 20 %S/Inputs/allgather_2.mlir' | FileCheck %s --check-prefix=INPUTS
// INPUTS-DAG: [rank 0] hir-run: error: rank 0: same-program check: rank 1 has other inputs (random inputs) than rank 0 (arg0 [4, 2] f32 (file hash {{[0-9a-f]+}}))
// INPUTS-DAG: [rank 1] hir-run: error: rank 1: same-program check: rank 1 has other inputs (random inputs) than rank 0 (arg0 [4, 2] f32 (file hash {{[0-9a-f]+}}))
// INPUTS-DAG: rank 0: exit 1
// INPUTS-DAG: rank 1: exit 1

// Options that change what the run computes or does are part of the hash:
// --check, --iters, and the contents of an --input file of the same shape.
// RUN: %python %S/Inputs/ranks.py 2 'hir-run --dry-run --timeout 20 --check %S/Inputs/ag_matmul_p2p_2.mlir' 'hir-run --dry-run --timeout 20 %S/Inputs/ag_matmul_p2p_2.mlir' | FileCheck %s --check-prefix=HASHED
// RUN: %python %S/Inputs/ranks.py 2 'hir-run --dry-run --timeout 20 --iters 3 %S/Inputs/ag_matmul_p2p_2.mlir' 'hir-run --dry-run --timeout 20 %S/Inputs/ag_matmul_p2p_2.mlir' | FileCheck %s --check-prefix=HASHED
// RUN: %python %S/Inputs/fill_npy.py %t.ones.npy 1 2 32 64
// RUN: %python %S/Inputs/fill_npy.py %t.twos.npy 2 2 32 64
// RUN: %python %S/Inputs/ranks.py 2 'hir-run --dry-run --timeout 20 --input arg0=%t.ones.npy %S/Inputs/ag_matmul_p2p_2.mlir' 'hir-run --dry-run --timeout 20 --input arg0=%t.twos.npy %S/Inputs/ag_matmul_p2p_2.mlir' | FileCheck %s --check-prefix=CONTENTS
// CONTENTS-DAG: [rank 0] hir-run: error: rank 0: same-program check: rank 1 has other inputs (arg0 [2, 32, 64] f32 (file hash [[H1:[0-9a-f]+]])) than rank 0 (arg0 [2, 32, 64] f32 (file hash [[H0:[0-9a-f]+]]))
// CONTENTS-DAG: rank 1: exit 1
// HASHED-DAG: [rank 0] hir-run: error: rank 0: same-program check: rank 1 runs a different program
// HASHED-DAG: rank 0: exit 1
// HASHED-DAG: rank 1: exit 1

// A program whose mesh is not WORLD_SIZE, started torchrun style: each rank
// joins, fails its dry run's check and posts it, so none waits out --timeout.
// RUN: %python %S/Inputs/ranks.py 2 'hir-run --dry-run --timeout 60 %examples/allgather.mlir' > %t.mesh 2>&1
// RUN: FileCheck %s --check-prefix=WORLD-MESH < %t.mesh
// WORLD-MESH-DAG: [rank 0] hir-run: error: rank 0: {{.*}}@allgather uses mesh @tp of devices [0, 1, 2, 3], but -n 2 runs ranks 0..1
// WORLD-MESH-DAG: [rank 1] hir-run: error: rank 1: {{.*}}@allgather uses mesh @tp of devices [0, 1, 2, 3], but -n 2 runs ranks 0..1
// WORLD-MESH-DAG: rank 0: exit 1
// WORLD-MESH-DAG: rank 1: exit 1

// A rank that exits early (test hook: rank 1 exits with status 0 right after
// joining, without a word): the others give up naming it, the launcher too.
// RUN: HIR_TEST_HOOK=1:exit-after-bootstrap not hir-run -n 3 --dry-run --timeout 20 %S/Inputs/ag_matmul_p2p_3.mlir > %t.exit 2>&1
// RUN: FileCheck %s --check-prefix=EXIT < %t.exit
// EXIT-DAG: [rank 0] hir-run: error: rank 0: {{.*}}gave up: rank 1 exited (connection closed)
// EXIT-DAG: [rank 2] hir-run: error: rank 2: {{.*}}gave up: rank 1 exited (connection closed)
// EXIT-DAG: {{^}}hir-run: error: rank 1 exited (connection closed)

// A rank that fails once its run is done (test hook: rank 1, after its dry
// run passed): rank 0, whose part was done, exits non-zero too, naming the
// failure, instead of exiting 0 from a failed job.
// RUN: HIR_TEST_HOOK=1:fail-after-run %python %S/Inputs/ranks.py 2 'hir-run --dry-run --timeout 20 %S/Inputs/allgather_2.mlir' > %t.late 2>&1
// RUN: FileCheck %s --check-prefix=LATE < %t.late
// LATE-DAG: [rank 0] hir-run: error: rank 0: the job failed: rank 1 failed in run: the test hook failed it after its run
// LATE-DAG: [rank 1] hir-run: error: rank 1: run: the test hook failed it after its run
// LATE-DAG: rank 0: exit 1
// LATE-DAG: rank 1: exit 1

// A stuck rank (test hook: rank 1 hangs before the barrier, where no abort
// reaches it): rank 0's watchdog fails its barrier after --timeout and tells
// rank 1, whose watchdog ends its process after its grace period.
// RUN: HIR_TEST_HOOK=1:stall not hir-run -n 2 --dry-run --timeout 2 %S/Inputs/allgather_2.mlir > %t.stall 2>&1
// RUN: FileCheck %s --check-prefix=STALL < %t.stall
// STALL-DAG: [rank 0] hir-run: error: rank 0: barrier: timed out after 2s waiting for it to complete: the watchdog found it still pending
// STALL-DAG: [rank 1] rank 1: watchdog: gave up: rank 0 failed in barrier: timed out after 2s
// STALL-DAG: [rank 1] (the watchdog ends the process: rank 1 did not return within 2s of the failure)
// STALL-DAG: {{^}}hir-run: error: rank 0 failed in barrier: timed out after 2s

// A stopped rank (test hook: rank 1 sends itself SIGSTOP before the barrier):
// its silent heartbeat names it within --timeout / 2, not rank 0 after the
// timeout, and the launcher kills it at once.
// RUN: HIR_TEST_HOOK=1:stop not hir-run -n 4 --dry-run --timeout 4 %examples/allgather.mlir > %t.stop 2>&1
// RUN: FileCheck %s --check-prefix=STOP < %t.stop
// STOP-DAG: hir-run: error: rank 1 stopped responding: its watchdog was silent for
// STOP-DAG: hir-run: killed rank [1]: stopped when the job failed

// The cpu backend's ranks in processes: their collectives go through the
// store, and rank 0 checks every rank's result against the reference.
// RUN: hir-run -n 4 --launch processes --timeout 60 --check %examples/allgather.mlir | FileCheck %s --check-prefix=CPU
// CPU: [rank 0] ran @allgather on 4 ranks
// CPU: [rank 0] result0: {{.*}}: ok

// Ranks started by Slurm (srun) and Open MPI (mpirun), named by their
// variables: the world size is theirs (no -n), and the run is checked.
// RUN: %python %S/Inputs/ranks.py --vars slurm 2 'hir-run --timeout 60 --check %S/Inputs/allgather_2.mlir' | FileCheck %s --check-prefix=SLURM
// RUN: %python %S/Inputs/ranks.py --vars ompi 2 'hir-run --timeout 60 --check %S/Inputs/allgather_2.mlir' | FileCheck %s --check-prefix=SLURM
// SLURM-DAG: [rank 0] result0: {{.*}}: ok
// SLURM-DAG: rank 0: exit 0
// SLURM-DAG: rank 1: exit 0
// RUN: SLURM_NTASKS=2 not hir-run --dry-run %examples/binary.mlir 2>&1 | FileCheck %s --check-prefix=SLURM-ENV
// SLURM-ENV: hir-run: error: SLURM_NTASKS is set but SLURM_PROCID is not: a rank needs both

// Usage errors.
// RUN: RANK=0 not hir-run --dry-run %examples/binary.mlir 2>&1 | FileCheck %s --check-prefix=ENV
// ENV: hir-run: error: RANK is set but WORLD_SIZE is not: a rank needs both
// RUN: RANK=0 WORLD_SIZE=2 MASTER_PORT=1 not hir-run -n 3 --dry-run %S/Inputs/ag_matmul_p2p_3.mlir 2>&1 | FileCheck %s --check-prefix=WORLD
// WORLD: hir-run: error: rank 0: -n 3 does not match WORLD_SIZE 2
// -n 1 is no exception: a rank torchrun started runs in a world of WORLD_SIZE.
// RUN: RANK=0 WORLD_SIZE=2 MASTER_PORT=1 not hir-run -n 1 --dry-run %examples/binary.mlir 2>&1 | FileCheck %s --check-prefix=WORLD1
// WORLD1: hir-run: error: rank 0: -n 1 does not match WORLD_SIZE 2
// RUN: not hir-run --dry-run --launch threads %examples/allgather.mlir 2>&1 | FileCheck %s --check-prefix=THREADS
// THREADS: hir-run: error: --dry-run checks ranks in processes: it does not go with --launch threads
