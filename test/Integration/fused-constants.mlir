// Fills as constants of fused kernels, through hir-run on the cpu backend:
// a tanh gelu's backward written with fills (as fusion-differentiate
// writes it) and a row mean scaled by a fill lower to one host.fused op
// whose fills are constants of its body, and the fill that is also
// returned stays a kernel. The run is checked against the f64 reference on
// D = 2, and gives the unfused ops' (--fuse none) outputs bit for bit.
// RUN: hir-opt %S/Inputs/constants_2.mlir --hir-lower | FileCheck %s --check-prefix=HOST
// RUN: hir-run --check -n 2 %S/Inputs/constants_2.mlir | FileCheck %s --check-prefix=CHECKED
// RUN: hir-run -n 2 --output-dir %t/fused %S/Inputs/constants_2.mlir
// RUN: hir-run -n 2 --fuse none --output-dir %t/unfused %S/Inputs/constants_2.mlir
// RUN: %python -c "import sys, filecmp, os; a, b = sys.argv[1:]; names = sorted(os.listdir(a)); assert names and names == sorted(os.listdir(b)), names; assert all(filecmp.cmp(os.path.join(a, n), os.path.join(b, n), shallow=False) for n in names); print('same bits', len(names))" %t/fused %t/unfused | FileCheck %s --check-prefix=BITS

// The returned fill is a kernel writing the output; the fused op reads it
// and takes no other buffer of a constant: x, one, dy, z in, dx, c out.
// HOST-NOT: host.alloc
// HOST: host.fill 1.000000e+00 outs(%arg4 : memref<8x48xbf16>)
// HOST-NEXT: host.fused ins(%arg0, %arg4, %arg1, %arg2 : {{.*}}) outs(%arg3, %arg5 : memref<8x48xbf16>, memref<8x48xf32>) {
// HOST: host.fill 5.000000e-01
// HOST-NEXT: host.fill 0.79788456080286541
// HOST-NEXT: host.fill 4.471500e-02
// HOST-NEXT: host.fill 1.341450e-01
// HOST: host.fill 0.020833333329999999 outs(%{{.*}} : memref<8xf32>)
// HOST-NEXT: host.sum [1]
// HOST: }
// HOST-NEXT: return

// CHECKED: result0: relative error {{.*}}: ok
// CHECKED: result1: relative error {{.*}}: ok
// CHECKED: result2: relative error {{.*}}: ok
// BITS: same bits 3
