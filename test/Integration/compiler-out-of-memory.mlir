// Under an address-space limit that leaves the tools too little to compile
// or start their threads, every run ends with status 1 and an error line,
// never a signal (tools/src/memory.rs, dialects/capi/OutOfMemory.cpp).
// Before: `std::bad_alloc` in MLIR's or LLVM's C++ (before `main` too),
// Rust's `memory allocation of N bytes failed` and LLVM's
// `pthread_create failed` aborted the process (SIGABRT, status 134). Below
// about 75 MiB the system's loader cannot map the tools (about 100 MB)
// before any of their code runs.
// RUN: for limit in 80000 84000 88000 92000 96000 100000 104000 108000 112000 120000 140000 160000; do \
// RUN:   (ulimit -v $limit; MALLOC_ARENA_MAX=2 hir-run -n 2 %s > /dev/null 2> %t.err; \
// RUN:    status=$?; first=; read -r first < %t.err; echo "status $status: ${first:0:15}"); \
// RUN:   (ulimit -v $limit; MALLOC_ARENA_MAX=2 hir-opt --hir-lower %s > /dev/null 2> %t.err; \
// RUN:    status=$?; first=; read -r first < %t.err; echo "status $status: ${first:0:15}"); \
// RUN: done | FileCheck %s
// Each run: status 0 and nothing on stderr, or 1 and an error line first.
// CHECK-COUNT-24: {{^status (0: $|1: hir-(run|opt): error:$)}}
// CHECK-NOT: status

func.func @negate(%a: memref<4xf32>, %b: memref<4xf32>) {
  host.neg ins(%a : memref<4xf32>) outs(%b : memref<4xf32>)
  return
}
