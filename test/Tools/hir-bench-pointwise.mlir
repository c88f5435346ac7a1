// hir-bench pointwise on the cpu backend at a tiny size: the chain lowered
// one kernel per op and fused, both outputs checked against the f64
// reference and against each other (bit for bit on cpu), the table, and the
// JSON with its provenance.
// RUN: hir-bench pointwise --elements 4096 --iters 2 --seed 3 --json %t.json | FileCheck %s
// RUN: %python -c "import json, sys; r = json.load(open(sys.argv[1])); assert r['benchmark'] == 'pointwise' and r['provenance']['backend'] == 'cpu', r; assert [(x['fuse'], x['kernels'], len(x['times_ms'])) for x in r['rows']] == [('none', 8, 2), ('elementwise', 1, 2)], r['rows']; assert r['one_pass_bytes'] == 4 * 4096 * 4 and r['fused_vs_unfused']['differing_elements'] == 0; print('json ok')" %t.json | FileCheck %s --check-prefix=JSON
// RUN: not hir-bench pointwise --elements 0 2>&1 | FileCheck %s --check-prefix=ZERO

// CHECK: built from
// CHECK-NEXT: hir-bench pointwise: out = max(exp(-tanh(a * b + c)) * a - c, b), 8 ops on 4096 f32 (0.0 MiB a tensor), cpu backend, 2 timed calls (median)
// CHECK-NEXT: checked fuse=none (8 kernels) against the f64 reference: relative error {{.*}}: ok
// CHECK-NEXT: checked fuse=elementwise (1 kernel) against the f64 reference: relative error {{.*}}: ok
// CHECK-NEXT: checked fuse=elementwise against fuse=none: 0 of 4096 elements differ in their bits, relative error 0.000e0: ok
// CHECK-NEXT: | lowering | kernels | median ms | one-pass GB/s | speedup |
// CHECK-NEXT: |---|---|---|---|---|
// CHECK-NEXT: | fuse=none | 8 | {{[0-9.]+}} | {{[0-9.]+}} | 1.00x |
// CHECK-NEXT: | fuse=elementwise | 1 | {{[0-9.]+}} | {{[0-9.]+}} | {{[0-9.]+}}x |
// CHECK-NEXT: one memory pass: 65536 bytes (a, b, c read and out written once)
// CHECK-NEXT: wrote {{.*}}.json
// JSON: json ok
// ZERO: error: invalid value '0' for '--elements <N>'
