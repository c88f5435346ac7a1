//===- Verify.cpp - shape rules shared by the HIR dialects -----------------===//
#include "common/Verify.h"
#include "common/SizesFit.h"

#include "llvm/ADT/APInt.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;

/// A shape as `4x8x16`, for diagnostics.
static std::string shapeStr(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "scalar";
  std::string str;
  llvm::raw_string_ostream os(str);
  llvm::interleave(shape, os, "x");
  return str;
}

LogicalResult hir::verifySameShape(Operation *op, ShapedType a, StringRef aName, ShapedType b,
                                   StringRef bName, bool sameElementType) {
  if (a.getShape() != b.getShape())
    return op->emitOpError() << aName << " and " << bName << " differ in shape: "
                             << shapeStr(a.getShape()) << " vs " << shapeStr(b.getShape());
  if (sameElementType && a.getElementType() != b.getElementType())
    return op->emitOpError() << aName << " and " << bName << " differ in element type: "
                             << a.getElementType() << " vs " << b.getElementType();
  return success();
}

LogicalResult hir::verifyReduction(Operation *op, ShapedType input, ShapedType result,
                                   ArrayRef<int64_t> axes) {
  if (axes.empty())
    return op->emitOpError("reduces no axis");
  if (failed(verifyAxes(op, axes, input.getRank(), "reduced")))
    return failure();
  SmallVector<int64_t> expected;
  for (auto [axis, extent] : llvm::enumerate(input.getShape()))
    if (!llvm::is_contained(axes, static_cast<int64_t>(axis)))
      expected.push_back(extent);
  if (result.getShape() != ArrayRef<int64_t>(expected))
    return op->emitOpError() << "result shape " << shapeStr(result.getShape())
                             << " is not the input shape " << shapeStr(input.getShape())
                             << " without the reduced axes (" << shapeStr(expected) << ")";
  if (input.getElementType() != result.getElementType())
    return op->emitOpError() << "input and result differ in element type: "
                             << input.getElementType() << " vs " << result.getElementType();
  return success();
}

LogicalResult hir::verifyBroadcast(Operation *op, ShapedType input, ShapedType result,
                                   ArrayRef<int64_t> axes) {
  if (axes.empty())
    return op->emitOpError("broadcasts along no axis");
  if (failed(verifyAxes(op, axes, result.getRank(), "broadcast")))
    return failure();
  SmallVector<int64_t> kept;
  for (auto [axis, extent] : llvm::enumerate(result.getShape()))
    if (!llvm::is_contained(axes, static_cast<int64_t>(axis)))
      kept.push_back(extent);
  if (input.getShape() != ArrayRef<int64_t>(kept))
    return op->emitOpError() << "result shape " << shapeStr(result.getShape())
                             << " without the broadcast axes (" << shapeStr(kept)
                             << ") is not the input shape " << shapeStr(input.getShape());
  if (input.getElementType() != result.getElementType())
    return op->emitOpError() << "input and result differ in element type: "
                             << input.getElementType() << " vs " << result.getElementType();
  return success();
}

static LogicalResult verifySameElementTypes(Operation *op, ArrayRef<ShapedType> types) {
  for (ShapedType type : types)
    if (type && type.getElementType() != types.front().getElementType())
      return op->emitOpError() << "operands and result differ in element type: "
                               << types.front().getElementType() << " vs "
                               << type.getElementType();
  return success();
}

LogicalResult hir::verifyMatmul(Operation *op, ShapedType lhs, ShapedType rhs, ShapedType result,
                                bool allowVectorLhs) {
  bool vectorLhs = allowVectorLhs && lhs.getRank() == 1 && rhs.getRank() == 2;
  if ((lhs.getRank() < 2 && !vectorLhs) || rhs.getRank() < 2)
    return op->emitOpError() << "operands need rank 2 or more"
                             << (allowVectorLhs ? " (or a [K] lhs with a [K, N] rhs)" : "")
                             << ", got " << lhs.getRank() << " and " << rhs.getRank();
  if (failed(verifySameElementTypes(op, {lhs, rhs, result})))
    return failure();
  if (vectorLhs) {
    if (lhs.getDimSize(0) != rhs.getDimSize(0))
      return op->emitOpError() << "contraction extents differ: lhs has K = " << lhs.getDimSize(0)
                               << ", rhs has K = " << rhs.getDimSize(0);
    if (result.getShape() != rhs.getShape().drop_front())
      return op->emitOpError() << "result shape " << shapeStr(result.getShape()) << " is not "
                               << shapeStr(rhs.getShape().drop_front());
    return success();
  }
  ArrayRef<int64_t> a = lhs.getShape(), b = rhs.getShape();
  // Batch axes broadcast as torch.matmul's: aligned from the right, each pair
  // equal or one of them 1 or missing.
  ArrayRef<int64_t> aBatch = a.drop_back(2), bBatch = b.drop_back(2);
  size_t batchRank = std::max(aBatch.size(), bBatch.size());
  SmallVector<int64_t> batch(batchRank);
  for (size_t fromRight = 1; fromRight <= batchRank; ++fromRight) {
    int64_t x = fromRight <= aBatch.size() ? aBatch[aBatch.size() - fromRight] : 1;
    int64_t y = fromRight <= bBatch.size() ? bBatch[bBatch.size() - fromRight] : 1;
    if (x != y && x != 1 && y != 1)
      return op->emitOpError() << "batch axes do not broadcast: lhs " << shapeStr(a) << ", rhs "
                               << shapeStr(b) << " (lhs axis " << aBatch.size() - fromRight
                               << " has extent " << x << ", rhs axis "
                               << bBatch.size() - fromRight << " has extent " << y << ")";
    batch[batchRank - fromRight] = x == 1 ? y : x;
  }
  int64_t m = a[a.size() - 2], k = a.back(), rk = b[b.size() - 2], n = b.back();
  if (k != rk)
    return op->emitOpError() << "contraction extents differ: lhs has K = " << k
                             << ", rhs has K = " << rk;
  SmallVector<int64_t> expected(batch);
  expected.append({m, n});
  if (result.getShape() != ArrayRef<int64_t>(expected))
    return op->emitOpError() << "result shape " << shapeStr(result.getShape())
                             << " is not " << shapeStr(expected);
  return success();
}

LogicalResult hir::verifyLinear(Operation *op, ShapedType input, ShapedType weight,
                                ShapedType bias, ShapedType result) {
  if (input.getRank() < 1)
    return op->emitOpError("input needs rank 1 or more");
  if (weight.getRank() != 2)
    return op->emitOpError() << "weight must have rank 2 ([N, K]), got rank "
                             << weight.getRank();
  if (failed(verifySameElementTypes(op, {input, weight, bias, result})))
    return failure();
  int64_t n = weight.getDimSize(0), k = weight.getDimSize(1);
  if (input.getShape().back() != k)
    return op->emitOpError() << "contraction extents differ: input has K = "
                             << input.getShape().back() << ", weight [N, K] has K = " << k;
  if (bias && (bias.getRank() != 1 || bias.getDimSize(0) != n))
    return op->emitOpError() << "bias must be [" << n << "], got " << shapeStr(bias.getShape());
  SmallVector<int64_t> expected(input.getShape().drop_back());
  expected.push_back(n);
  if (result.getShape() != ArrayRef<int64_t>(expected))
    return op->emitOpError() << "result shape " << shapeStr(result.getShape())
                             << " is not " << shapeStr(expected);
  return success();
}

LogicalResult hir::verifyAttention(Operation *op, ShapedType q, ShapedType k, ShapedType v,
                                   ShapedType mask, ShapedType result,
                                   std::optional<double> scale) {
  int64_t rank = q.getRank();
  if (rank < 2)
    return op->emitOpError() << "q needs rank 2 or more ([B.., Sq, D]), got rank " << rank;
  for (auto [name, type] : {std::pair<StringRef, ShapedType>{"k", k}, {"v", v}, {"result", result}})
    if (type.getRank() != rank)
      return op->emitOpError() << name << " has rank " << type.getRank() << ", q has rank "
                               << rank << ": q, k, v and the result have the same batch axes";
  if (failed(verifySameElementTypes(op, {q, k, v, mask, result})))
    return failure();
  ArrayRef<int64_t> batch = q.getShape().drop_back(2);
  for (auto [name, type] : {std::pair<StringRef, ShapedType>{"k", k}, {"v", v}})
    if (type.getShape().drop_back(2) != batch)
      return op->emitOpError() << "batch axes differ: q has " << shapeStr(batch) << ", " << name
                               << " has " << shapeStr(type.getShape().drop_back(2))
                               << " (attention does not broadcast)";
  int64_t sq = q.getDimSize(rank - 2), d = q.getDimSize(rank - 1);
  int64_t sk = k.getDimSize(rank - 2), dv = v.getDimSize(rank - 1);
  if (k.getDimSize(rank - 1) != d)
    return op->emitOpError() << "head dims differ: q has D = " << d << ", k has D = "
                             << k.getDimSize(rank - 1);
  if (v.getDimSize(rank - 2) != sk)
    return op->emitOpError() << "key counts differ: k has Sk = " << sk << ", v has Sk = "
                             << v.getDimSize(rank - 2);
  SmallVector<int64_t> expected(batch);
  expected.append({sq, dv});
  if (result.getShape() != ArrayRef<int64_t>(expected))
    return op->emitOpError() << "result shape " << shapeStr(result.getShape()) << " is not "
                             << shapeStr(expected) << " ([B.., Sq, Dv])";
  if (mask && mask.getShape() != ArrayRef<int64_t>{sq, sk})
    return op->emitOpError() << "mask must be [Sq, Sk] = [" << sq << ", " << sk << "], got "
                             << shapeStr(mask.getShape());
  if (scale && !std::isfinite(*scale))
    return op->emitOpError() << "scale must be finite, got "
                             << (std::isnan(*scale) ? "nan" : *scale > 0 ? "inf" : "-inf");
  return success();
}

/// `value` as `2^k` when it is a power of two, in decimal otherwise.
static std::string countStr(const llvm::APInt &value) {
  if (value.isPowerOf2())
    return "2^" + std::to_string(value.logBase2());
  llvm::SmallString<40> str;
  value.toStringUnsigned(str, 10);
  return std::string(str);
}

/// The size in bytes of an element of `type`, or 0 when it has none.
static unsigned elementBytes(Type type) {
  if (type.isIndex())
    return 8;
  if (type.isIntOrFloat())
    return (type.getIntOrFloatBitWidth() + 7) / 8;
  return 0;
}

static LogicalResult verifyTypeSizeFits(Operation *op, Type type, StringRef role,
                                        unsigned index) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasRank())
    return success();
  // Wide enough for any product of rank extents below 2^63 and an element size.
  unsigned bits = 64 * (shaped.getRank() + 2);
  llvm::APInt count(bits, 1);
  for (int64_t extent : shaped.getShape())
    if (!ShapedType::isDynamic(extent) && extent >= 0)
      count *= llvm::APInt(bits, extent);
  llvm::APInt limit(bits, std::numeric_limits<int64_t>::max());
  StringRef what = isa<MemRefType>(type) ? "buffer" : "tensor";
  if (count.ugt(limit))
    return op->emitOpError() << role << " #" << index << ": " << what << " of "
                             << countStr(count) << " elements overflows 64-bit sizes";
  unsigned elementSize = elementBytes(shaped.getElementType());
  llvm::APInt bytes = count * llvm::APInt(bits, elementSize);
  if (bytes.ugt(limit))
    return op->emitOpError() << role << " #" << index << ": " << what << " of "
                             << countStr(count) << " elements of " << elementSize << " bytes ("
                             << countStr(bytes) << " bytes) overflows 64-bit sizes";
  return success();
}

LogicalResult hir::verifySizesFit(Operation *op) {
  for (auto [index, type] : llvm::enumerate(op->getOperandTypes()))
    if (failed(verifyTypeSizeFits(op, type, "operand", index)))
      return failure();
  for (auto [index, type] : llvm::enumerate(op->getResultTypes()))
    if (failed(verifyTypeSizeFits(op, type, "result", index)))
      return failure();
  return success();
}

LogicalResult hir::verifyPermutation(Operation *op, ShapedType input, ShapedType output,
                                     ArrayRef<int64_t> permutation) {
  if (static_cast<int64_t>(permutation.size()) != input.getRank())
    return op->emitOpError() << "permutation has " << permutation.size()
                             << " axes for an input of rank " << input.getRank();
  if (failed(verifyAxes(op, permutation, input.getRank(), "permuted")))
    return failure();
  SmallVector<int64_t> expected;
  for (int64_t axis : permutation)
    expected.push_back(input.getShape()[axis]);
  if (output.getShape() != ArrayRef<int64_t>(expected))
    return op->emitOpError() << "result shape " << shapeStr(output.getShape())
                             << " is not the input shape " << shapeStr(input.getShape())
                             << " permuted (" << shapeStr(expected) << ")";
  if (input.getElementType() != output.getElementType())
    return op->emitOpError() << "input and result differ in element type: "
                             << input.getElementType() << " vs " << output.getElementType();
  return success();
}

LogicalResult hir::verifyIotaAxis(Operation *op, ShapedType output, int64_t axis) {
  if (axis < 0 || axis >= output.getRank())
    return op->emitOpError() << "axis " << axis << " is out of range for rank "
                             << output.getRank();
  return success();
}

LogicalResult hir::verifyFillValue(Operation *op, ShapedType output, double value) {
  auto integer = dyn_cast<IntegerType>(output.getElementType());
  if (!integer)
    return success();
  // The type's range, as doubles: -2^(w-1) is exact, 2^(w-1) the first past it.
  double bound = std::ldexp(1.0, static_cast<int>(integer.getWidth()) - 1);
  if (std::trunc(value) != value || value < -bound || value >= bound)
    return op->emitOpError() << "value " << value << " is not an integer of " << integer;
  return success();
}

LogicalResult hir::verifyReshape(Operation *op, ShapedType input, ShapedType output) {
  if (!input.hasStaticShape() || !output.hasStaticShape())
    return op->emitOpError() << "reshapes static shapes only, got " << input << " to " << output;
  if (input.getNumElements() != output.getNumElements())
    return op->emitOpError() << "result shape " << shapeStr(output.getShape()) << " holds "
                             << output.getNumElements() << " elements, the input shape "
                             << shapeStr(input.getShape()) << " " << input.getNumElements();
  if (input.getElementType() != output.getElementType())
    return op->emitOpError() << "input and result differ in element type: "
                             << input.getElementType() << " vs " << output.getElementType();
  return success();
}

LogicalResult hir::verifySlice(Operation *op, ShapedType input, ShapedType output,
                               ArrayRef<int64_t> offsets, ArrayRef<int64_t> strides) {
  if (!input.hasStaticShape() || !output.hasStaticShape())
    return op->emitOpError() << "slices static shapes only, got " << input << " to " << output;
  if (input.getRank() != output.getRank())
    return op->emitOpError() << "result has rank " << output.getRank() << ", the input "
                             << input.getRank() << "; a slice keeps every axis";
  for (auto [name, list] : {std::pair<StringRef, ArrayRef<int64_t>>{"offsets", offsets},
                            std::pair<StringRef, ArrayRef<int64_t>>{"strides", strides}})
    if (static_cast<int64_t>(list.size()) != input.getRank())
      return op->emitOpError() << name << " has " << list.size() << " entries for an input of rank "
                               << input.getRank();
  for (int64_t axis = 0; axis < input.getRank(); ++axis) {
    int64_t offset = offsets[axis], stride = strides[axis], size = output.getDimSize(axis);
    int64_t extent = input.getDimSize(axis);
    if (offset < 0 || stride < 1)
      return op->emitOpError() << "axis " << axis << " has offset " << offset << " and stride "
                               << stride << "; an offset is at least 0 and a stride at least 1";
    // The last index taken, offset + (size - 1) * stride (none past the
    // offset for an empty slice), is within the input; int64 overflow is
    // past it too.
    std::optional<int64_t> last =
        size == 0 ? std::optional(offset - 1) : llvm::checkedMulAdd(size - 1, stride, offset);
    if (!last || *last >= extent)
      return op->emitOpError() << "axis " << axis << " takes " << size << " indices from "
                               << offset << " by " << stride << ", past the input's extent "
                               << extent;
  }
  if (input.getElementType() != output.getElementType())
    return op->emitOpError() << "input and result differ in element type: "
                             << input.getElementType() << " vs " << output.getElementType();
  return success();
}
