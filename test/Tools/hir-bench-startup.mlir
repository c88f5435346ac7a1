// hir-bench startup at a tiny size: the compile stages of 1 and 2 stacked
// transformer blocks and of every example, as a table (its shape is checked,
// not its times), JSON and CSV.
// RUN: hir-bench startup --blocks 1,2 --s 16 --h 16 --heads 4 --f 32 -n 2 --repeat 1 --examples %examples --json %t.json --csv %t.csv | FileCheck %s
// RUN: %python -c "import json, sys; r = json.load(open(sys.argv[1])); rows = r['rows']; assert r['benchmark'] == 'startup' and [x['blocks'] for x in rows[:2]] == [1, 2], rows; assert all(x['total_ms'] > 0 and x['hir_lower_ms'] > 0 for x in rows), rows; assert rows[1]['ops'] > rows[0]['ops']; print('json ok')" %t.json | FileCheck %s --check-prefix=JSON
// RUN: FileCheck %s --input-file=%t.csv --check-prefix=CSV
// RUN: hir-bench startup --blocks 1 --s 16 --h 16 --heads 4 --f 32 -n 1 --repeat 1 --no-examples | FileCheck %s --check-prefix=ALONE
// RUN: not hir-bench startup --blocks 1 --s 16 --h 16 --heads 4 --f 32 -n 1 --examples %t.nowhere 2>&1 | FileCheck %s --check-prefix=NOWHERE

// CHECK: built from
// CHECK-NEXT: hir-bench startup: compile stages in ms, median of 1 compiles each in a fresh context
// CHECK-NEXT: | program | ops | parse | import | hir-lower | LLVM | JIT | total | hir-lower/block | total/block |
// CHECK-NEXT: |---|---|---|---|---|---|---|---|---|---|
// CHECK-NEXT: | block x1 | {{[0-9]+}} | {{[0-9.]+}} | {{[0-9.]+}} | {{[0-9.]+}} | {{[0-9.]+}} | {{[0-9.]+}} | {{[0-9.]+}} | {{[0-9.]+}} | {{[0-9.]+}} |
// CHECK-NEXT: | block x2 | {{[0-9]+}} | {{[0-9.]+}} | {{[0-9.]+}} | {{[0-9.]+}} | {{[0-9.]+}} | {{[0-9.]+}} | {{[0-9.]+}} | {{[0-9.]+}} | {{[0-9.]+}} |
// CHECK-NEXT: | ag_linear.mlir | {{[0-9]+}} | {{[0-9.]+}} | {{[0-9.]+}} | {{[0-9.]+}} | {{[0-9.]+}} | {{[0-9.]+}} | {{[0-9.]+}} | - | - |
// CHECK: | two_sets.mlir | {{.*}} | - | - |
// CHECK-NEXT: from 1 to 2 blocks, each added block costs {{[-0-9.]+}} ms in total, {{[-0-9.]+}} ms of it in hir-lower
// CHECK-NEXT: wrote {{.*}}.json
// CHECK-NEXT: wrote {{.*}}.csv
// JSON: json ok
// CSV: commit,date,backend,devices,dtype,gpu,driver_cuda,cuda,nccl,cublaslt,program,blocks,ops,parse_ms,import_ms,hir_lower_ms,llvm_ms,jit_ms,total_ms
// CSV-NEXT: {{.*}},block x1,1,{{[0-9]+}},
// ALONE: | block x1 |
// ALONE-NOT: .mlir |
// NOWHERE: hir-bench: error: cannot list the examples in {{.*}}nowhere
