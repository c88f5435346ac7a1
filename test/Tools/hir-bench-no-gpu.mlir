// On a machine without the CUDA driver, `hir-bench run --backend cuda` is a
// clear error that names what is missing and the rank, not a crash or a
// hang: in each rank's process (the default for cuda), which the launcher
// reports, and with the ranks as threads.
// UNSUPPORTED: cuda-driver
// RUN: not hir-bench run --backend cuda -n 2 --shapes 16x8x4 --families ag --variants gemm 2>&1 | FileCheck %s --check-prefix=PROCESSES
// PROCESSES-DAG: [rank 0] hir-bench: error: rank 0: run: cannot start the runtime: the cuda backend cannot start: no libcuda (the driver)
// PROCESSES-DAG: [rank 1] hir-bench: error: rank 1: run: cannot start the runtime: the cuda backend cannot start: no libcuda (the driver)
// PROCESSES-DAG: {{^}}hir-bench: error: rank {{[01]}} failed in run: cannot start the runtime
// RUN: not hir-bench run --backend cuda --launch threads --shapes 16x8x4 --families ag --variants gemm 2>&1 | FileCheck %s --check-prefix=THREADS
// THREADS: hir-bench: error: cannot start the runtime: the cuda backend cannot start: no libcuda (the driver)
