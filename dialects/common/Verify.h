//===- Verify.h - checks shared by the verifiers of all HIR dialects -*- C++ -*-===//
//
// Shape rules are the same whether an op works on tensors (fusion) or on
// buffers (host, comm); these helpers take shapes and report through the op.
//
//===----------------------------------------------------------------------===//
#ifndef HIR_COMMON_VERIFY_H
#define HIR_COMMON_VERIFY_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

#include <optional>

namespace hir {

/// `axes` are distinct and each in [0, rank); `what` names them in errors.
inline mlir::LogicalResult verifyAxes(mlir::Operation *op, llvm::ArrayRef<int64_t> axes,
                                      int64_t rank, llvm::StringRef what) {
  llvm::SmallVector<bool> seen(rank, false);
  for (int64_t axis : axes) {
    if (axis < 0 || axis >= rank)
      return op->emitOpError() << what << " axis " << axis << " is out of range for rank "
                               << rank;
    if (seen[axis])
      return op->emitOpError() << what << " axis " << axis << " is listed twice";
    seen[axis] = true;
  }
  return mlir::success();
}

/// Two shaped values agree in shape (and, if `sameElementType`, in element type).
mlir::LogicalResult verifySameShape(mlir::Operation *op, mlir::ShapedType a, llvm::StringRef aName,
                                    mlir::ShapedType b, llvm::StringRef bName,
                                    bool sameElementType = true);

/// `result` is `input` with `axes` removed (reductions).
mlir::LogicalResult verifyReduction(mlir::Operation *op, mlir::ShapedType input,
                                    mlir::ShapedType result, llvm::ArrayRef<int64_t> axes);

/// `result` is `input` with new axes inserted at `axes` (broadcast).
mlir::LogicalResult verifyBroadcast(mlir::Operation *op, mlir::ShapedType input,
                                    mlir::ShapedType result, llvm::ArrayRef<int64_t> axes);

/// lhs [B1..., M, K] x rhs [B2..., K, N] -> result [B..., M, N], where B is the
/// broadcast of B1 and B2 (torch.matmul: aligned from the right, each pair equal
/// or one of them 1 or missing; [K, N] has no batch axes); with
/// `allowVectorLhs`, also [K] x [K, N] -> [N] (one row of a stream-sliced matmul).
mlir::LogicalResult verifyMatmul(mlir::Operation *op, mlir::ShapedType lhs, mlir::ShapedType rhs,
                                 mlir::ShapedType result, bool allowVectorLhs = false);

/// input [B..., K], weight [N, K], bias [N] -> result [B..., N].
mlir::LogicalResult verifyLinear(mlir::Operation *op, mlir::ShapedType input,
                                 mlir::ShapedType weight, mlir::ShapedType bias,
                                 mlir::ShapedType result);

/// q [B..., Sq, D], k [B..., Sk, D], v [B..., Sk, Dv], mask [Sq, Sk] ->
/// result [B..., Sq, Dv] (attention): one rank of 2 or more, identical batch
/// axes, one element type; a `scale`, if given, is finite.
mlir::LogicalResult verifyAttention(mlir::Operation *op, mlir::ShapedType q, mlir::ShapedType k,
                                    mlir::ShapedType v, mlir::ShapedType mask,
                                    mlir::ShapedType result, std::optional<double> scale);

/// `permutation` lists each of input's axes once and output axis i is input
/// axis permutation[i] (transpose); element types agree.
mlir::LogicalResult verifyPermutation(mlir::Operation *op, mlir::ShapedType input,
                                      mlir::ShapedType output,
                                      llvm::ArrayRef<int64_t> permutation);

/// `input` and `output` hold as many elements, of one element type (reshape).
mlir::LogicalResult verifyReshape(mlir::Operation *op, mlir::ShapedType input,
                                  mlir::ShapedType output);

/// One offset (at least 0) and one stride (at least 1) per axis, and the
/// box of `output`'s extents from them inside `input`; element types agree
/// (slice).
mlir::LogicalResult verifySlice(mlir::Operation *op, mlir::ShapedType input,
                                mlir::ShapedType output, llvm::ArrayRef<int64_t> offsets,
                                llvm::ArrayRef<int64_t> strides);

/// `axis` is in range for a generated value of type `output` (iota).
mlir::LogicalResult verifyIotaAxis(mlir::Operation *op, mlir::ShapedType output, int64_t axis);

/// A fill `value` of an integer `output` is an integer of its element type
/// (a float output takes any value, rounded).
mlir::LogicalResult verifyFillValue(mlir::Operation *op, mlir::ShapedType output, double value);

} // namespace hir

#endif // HIR_COMMON_VERIFY_H
