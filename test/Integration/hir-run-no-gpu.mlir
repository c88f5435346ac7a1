// On a machine without the CUDA driver, --backend cuda is a clear error that
// names what is missing, not a crash.
// UNSUPPORTED: cuda-driver
// RUN: not hir-run --backend cuda %examples/matmul.mlir 2>&1 | FileCheck %s
// CHECK: hir-run: error: cannot start the runtime: the cuda backend cannot start: no libcuda (the driver)
