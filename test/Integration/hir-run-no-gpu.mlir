// On a machine without the CUDA driver, --backend cuda is a clear error that
// names what is missing, not a crash: in each rank's process (the default for
// cuda), which the launcher reports, and with the ranks as threads.
// UNSUPPORTED: cuda-driver
// RUN: not hir-run --backend cuda %examples/matmul.mlir 2>&1 | FileCheck %s --check-prefix=PROCESSES
// PROCESSES: [rank 0] hir-run: error: rank 0: run: cannot start the runtime: the cuda backend cannot start: no libcuda (the driver)
// PROCESSES: hir-run: error: rank 0 failed in run
// RUN: not hir-run --backend cuda --launch threads %examples/matmul.mlir 2>&1 | FileCheck %s --check-prefix=THREADS
// THREADS: hir-run: error: cannot start the runtime: the cuda backend cannot start: no libcuda (the driver)
