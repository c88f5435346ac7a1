// A program's own memref.alloc goes through the runtime's checked heap
// (finalize-memref-to-llvm{use-generic-functions=true},
// runtime/src/ffi/heap.rs): an allocation that fails fails its rank with an
// error naming the size, and hir-run exits 1; before, malloc's null result
// was stored through and hir-run died of SIGSEGV. `not` fails on a signal.
// The address space is limited to 1 GiB (with glibc's per-thread arenas
// capped, so that the limit leaves hir-run the same room on any machine).

// 64 allocations of 512 MiB, each freed before the next: memref.dealloc
// returns the memory, or the second would not fit under the limit.
// RUN: (ulimit -v 1048576 && MALLOC_ARENA_MAX=2 hir-run -n 1 %s) | FileCheck %s --check-prefix=LOOP
// LOOP: ran @alloc_in_a_loop on 1 rank

// 2 GiB: allocated without the limit; under it, each rank fails cleanly.
// RUN: hir-run -n 2 %S/Inputs/alloc_2gib.mlir | FileCheck %s --check-prefix=FITS
// FITS: ran @alloc_2gib on 2 ranks
// RUN: (ulimit -v 1048576 && MALLOC_ARENA_MAX=2 not hir-run -n 2 %S/Inputs/alloc_2gib.mlir) 2>&1 \
// RUN:   | FileCheck %s --check-prefix=LIMIT
// LIMIT: hir-run: error: the run failed: rank {{[01]}}: memref.alloc: out of memory: the program's memref.alloc of 2147483648 B
// LIMIT-NEXT: then rank {{[01]}}: memref.alloc: out of memory: the program's memref.alloc of 2147483648 B

// 2^60 B fits in no address space.
// RUN: not hir-run -n 1 %S/Inputs/alloc_enormous.mlir 2>&1 | FileCheck %s --check-prefix=ENORMOUS
// ENORMOUS: hir-run: error: the run failed: rank 0: memref.alloc: out of memory: the program's memref.alloc of 1152921504606846976 B

func.func @alloc_in_a_loop(%a: memref<4xf32>, %b: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %bytes = arith.constant 536870912 : index
  %last = arith.constant 536870911 : index
  %v = arith.constant 7 : i8
  scf.for %i = %c0 to %c64 step %c1 {
    %m = memref.alloc(%bytes) : memref<?xi8>
    memref.store %v, %m[%c0] : memref<?xi8>
    memref.store %v, %m[%last] : memref<?xi8>
    memref.dealloc %m : memref<?xi8>
  }
  host.neg ins(%a : memref<4xf32>) outs(%b : memref<4xf32>)
  return
}
