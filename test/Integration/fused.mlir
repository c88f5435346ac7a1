// host-fuse-elementwise through hir-run on the cpu backend: each chain of
// elementwise ops is one host.fused op, lowered to one hir_rt_fused_<n>
// call, and runs checked against the f64 reference at D = 1, 2, 4; the
// fused kernel's outputs are the unfused ops' bit for bit.
// RUN: hir-opt %S/Inputs/fused_1.mlir --hir-lower=fuse=elementwise | FileCheck %s --check-prefix=HOST
// RUN: hir-opt %S/Inputs/fused_1.mlir --hir-lower=fuse=elementwise --convert-host-to-llvm | FileCheck %s --check-prefix=LLVM
// RUN: hir-opt %S/Inputs/fused_4.mlir --hir-lower=fuse=elementwise | FileCheck %s --check-prefix=AROUND
// RUN: hir-run --fuse elementwise --check %S/Inputs/fused_1.mlir | FileCheck %s --check-prefix=RUN2
// RUN: hir-run --fuse elementwise --check -n 2 %S/Inputs/fused_2.mlir | FileCheck %s --check-prefix=RUN1
// RUN: hir-run --fuse elementwise --check -n 4 %S/Inputs/fused_4.mlir | FileCheck %s --check-prefix=RUN1
// RUN: hir-run --fuse elementwise --output-dir %t/fused %S/Inputs/fused_1.mlir
// RUN: hir-run --output-dir %t/unfused %S/Inputs/fused_1.mlir
// RUN: %python -c "import sys, filecmp, os; a, b = sys.argv[1:]; names = sorted(os.listdir(a)); assert names and names == sorted(os.listdir(b)), names; assert all(filecmp.cmp(os.path.join(a, n), os.path.join(b, n), shallow=False) for n in names); print('same bits', len(names))" %t/fused %t/unfused | FileCheck %s --check-prefix=BITS

// HOST: host.fused ins(%arg1, %arg0 : memref<8xf32>, memref<4x8xf32>) outs(%arg2, %[[T:.*]] : memref<4x8xbf16>, memref<4x8xf32>) {
// HOST: host.broadcast
// HOST: host.where
// HOST-NEXT: }
// HOST: host.exp ins(

// LLVM: memref.global "private" constant @__hir_fused_
// LLVM: func.func private @hir_rt_fused_4(memref<*xi64>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>) attributes {llvm.emit_c_interface}
// LLVM: %[[C:.*]] = builtin.unrealized_conversion_cast %{{.*}} : memref<*xbf16> to memref<*xf32>
// LLVM: call @hir_rt_fused_4(%{{.*}}, %{{.*}}, %{{.*}}, %[[C]], %{{.*}})

// Fused on each side of the allreduce, never across it.
// AROUND: host.fused
// AROUND: host.relu
// AROUND: comm.allreduce
// AROUND-NEXT: comm.wait
// AROUND-NEXT: host.dealloc
// AROUND-NEXT: host.fused
// AROUND: host.tanh
// AROUND: host.sub
// AROUND: host.cast

// RUN2: result0: relative error {{.*}}: ok
// RUN2: result1: relative error {{.*}}: ok
// RUN1: result0: relative error {{.*}}: ok
// BITS: same bits 2
