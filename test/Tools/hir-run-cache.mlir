// hir-run's compile cache (hir::cache): the first run of a program misses,
// lowers it, compiles it and stores its object code; a run of the same
// program with the same options hits: it lowers and compiles nothing, and
// computes the same result. Other lowering options, or a corrupt entry, miss.
// lit turns the cache off (lit.cfg.py); these runs turn it on, each in a
// directory of their own.
// RUN: %python %S/Inputs/cache_dir.py clean %t.cache
// RUN: HIR_CACHE=1 HIR_CACHE_DIR=%t.cache HIR_LOG=debug hir-run -n 4 --check %examples/tp_mlp.mlir 2> %t.miss.log | FileCheck %s
// RUN: FileCheck %s --input-file=%t.miss.log --check-prefix=MISS
// RUN: HIR_CACHE=1 HIR_CACHE_DIR=%t.cache HIR_LOG=debug hir-run -n 4 --check %examples/tp_mlp.mlir 2> %t.hit.log | FileCheck %s
// RUN: FileCheck %s --input-file=%t.hit.log --check-prefix=HIT --implicit-check-not='stage="hir-lower"' --implicit-check-not=miss
// CHECK: ran @tp_mlp on 4 ranks
// CHECK: result0: relative error {{.*}}: ok
// MISS: hir-run: debug: compile cache miss key=[[KEY:[0-9a-f]+]]
// MISS-NEXT: hir-run: debug: compile stage="hir-lower"
// MISS-NEXT: hir-run: debug: compile stage="llvm"
// MISS-NEXT: hir-run: debug: compile cache stored key=[[KEY]] bytes={{[0-9]+}}
// MISS-NEXT: hir-run: debug: compile stage="jit"
// HIT: hir-run: debug: compile cache hit key={{[0-9a-f]+}} bytes={{[0-9]+}}
// HIT-NEXT: hir-run: debug: compile stage="jit"

// Other lowering options are another entry, beside the first; no writer's
// scratch file is left.
// RUN: HIR_CACHE=1 HIR_CACHE_DIR=%t.cache HIR_LOG=debug hir-run -n 4 --check --ring-chunks 2 %examples/tp_mlp.mlir 2> %t.options.log | FileCheck %s
// RUN: FileCheck %s --input-file=%t.options.log --check-prefix=MISS
// RUN: %python %S/Inputs/cache_dir.py list %t.cache | count 2
// RUN: %python %S/Inputs/cache_dir.py list %t.cache | FileCheck %s --check-prefix=ENTRIES
// ENTRIES-COUNT-2: {{^[0-9a-f]+}}.hirobj

// A truncated entry is a miss, and the compile after it replaces it.
// RUN: %python %S/Inputs/cache_dir.py truncate %t.cache 100
// RUN: HIR_CACHE=1 HIR_CACHE_DIR=%t.cache HIR_LOG=debug hir-run -n 4 --check %examples/tp_mlp.mlir 2> %t.corrupt.log | FileCheck %s
// RUN: FileCheck %s --input-file=%t.corrupt.log --check-prefix=CORRUPT
// CORRUPT: hir-run: debug: compile cache entry corrupt path={{.*}}.hirobj bytes=100
// CORRUPT-NEXT: hir-run: debug: compile cache miss
// CORRUPT: hir-run: debug: compile cache stored
// RUN: HIR_CACHE=1 HIR_CACHE_DIR=%t.cache HIR_LOG=debug hir-run -n 4 --check %examples/tp_mlp.mlir 2> %t.rehit.log | FileCheck %s
// RUN: FileCheck %s --input-file=%t.rehit.log --check-prefix=HIT

// Two processes compiling the same program at once into an empty cache (as
// the ranks of a job do) both run; the entry they leave is whole, and a
// third run hits it.
// RUN: %python %S/Inputs/cache_dir.py clean %t.race
// RUN: HIR_CACHE=1 HIR_CACHE_DIR=%t.race hir-run -n 4 --check %examples/tp_mlp.mlir > %t.a.out 2>&1 & HIR_CACHE=1 HIR_CACHE_DIR=%t.race hir-run -n 4 --check %examples/tp_mlp.mlir > %t.b.out 2>&1 & wait
// RUN: FileCheck %s --input-file=%t.a.out
// RUN: FileCheck %s --input-file=%t.b.out
// RUN: %python %S/Inputs/cache_dir.py list %t.race | count 1
// RUN: %python %S/Inputs/cache_dir.py list %t.race | FileCheck %s --check-prefix=ENTRIES-ONE
// ENTRIES-ONE: {{^[0-9a-f]+}}.hirobj
// RUN: HIR_CACHE=1 HIR_CACHE_DIR=%t.race HIR_LOG=debug hir-run -n 4 --check %examples/tp_mlp.mlir 2> %t.race.log | FileCheck %s
// RUN: FileCheck %s --input-file=%t.race.log --check-prefix=HIT

// HIR_CACHE=0: no cache, no directory.
// RUN: %python %S/Inputs/cache_dir.py clean %t.off
// RUN: HIR_CACHE=0 HIR_CACHE_DIR=%t.off HIR_LOG=debug hir-run -n 4 --check %examples/tp_mlp.mlir 2> %t.off.log | FileCheck %s
// RUN: FileCheck %s --input-file=%t.off.log --check-prefix=OFF --implicit-check-not='compile cache'
// RUN: not %python %S/Inputs/cache_dir.py list %t.off
// OFF: hir-run: debug: compile stage="hir-lower"
// OFF-NEXT: hir-run: debug: compile stage="llvm"
// OFF-NEXT: hir-run: debug: compile stage="jit"
