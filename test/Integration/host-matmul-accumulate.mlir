// A hand-written host program: host.matmul {accumulate} adds lhs x rhs to its
// output, whole and then into a strided slice (row 2 of every batch, again).
// %init is a copy of the output taken before, so the check recomputes
// init + a b (twice for row 2) in Python from what the run wrote.
// RUN: hir-run -n 1 --output-dir %t %s | FileCheck %s
// RUN: %python %S/Inputs/check_npy.py %t "close(arg2_rank0, [arg3_rank0[(x * 3 + i) * 5 + j] + (2 if i == 2 else 1) * sum(arg0_rank0[(x * 3 + i) * 4 + p] * arg1_rank0[p * 5 + j] for p in range(4)) for x in range(2) for i in range(3) for j in range(5)], 1e-5)"

// CHECK: ran @matmul_accumulate on 1 rank (4 streams each)
func.func @matmul_accumulate(%a: memref<2x3x4xf32>, %b: memref<4x5xf32>,
                             %c: memref<2x3x5xf32>, %init: memref<2x3x5xf32>) {
  host.copy ins(%c : memref<2x3x5xf32>) outs(%init : memref<2x3x5xf32>)
  host.matmul ins(%a, %b : memref<2x3x4xf32>, memref<4x5xf32>)
              outs(%c : memref<2x3x5xf32>) {accumulate}
  %c2 = arith.constant 2 : index
  %a2 = host.select %a[1][%c2] : memref<2x3x4xf32>
      to memref<2x4xf32, strided<[12, 1], offset: ?>>
  %r2 = host.select %c[1][%c2] : memref<2x3x5xf32>
      to memref<2x5xf32, strided<[15, 1], offset: ?>>
  host.matmul ins(%a2, %b : memref<2x4xf32, strided<[12, 1], offset: ?>>, memref<4x5xf32>)
              outs(%r2 : memref<2x5xf32, strided<[15, 1], offset: ?>>) {accumulate}
  return
}
